"""Shared fixtures: presets, a small scenario builder, and the shared traces folder."""

from __future__ import annotations

from pathlib import Path

import pytest

import cluster_decide as cd

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def default_scenario() -> cd.Scenario:
    return cd.load_scenario()


@pytest.fixture(scope="session")
def default_plan(default_scenario: cd.Scenario) -> cd.Plan:
    return cd.solve(default_scenario, time_limit_s=30)
