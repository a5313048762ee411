"""Shared fixtures: the default scenario and its solved plan."""

from __future__ import annotations

import pytest

import cluster_decide as cd


@pytest.fixture(scope="session")
def default_scenario() -> cd.Scenario:
    return cd.load_scenario()


@pytest.fixture(scope="session")
def default_plan(default_scenario: cd.Scenario) -> cd.Plan:
    return cd.solve(default_scenario, time_limit_s=30)
