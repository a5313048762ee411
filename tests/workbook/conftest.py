"""Shared fixtures for the widget, notebook and browser tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_decide.widgets import Dashboard, PlanCache

ROOT = Path(__file__).resolve().parents[2]
WORKBOOK = ROOT / "workbook"
SHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture(scope="session")
def plan_cache() -> PlanCache:
    """One cache for the session: tests that revisit a scenario do not solve it again."""
    return PlanCache()


@pytest.fixture
def dash(plan_cache: PlanCache) -> Dashboard:
    """A dashboard that solves synchronously (no debounce), sharing the session's cache."""
    return Dashboard(debounce_s=0.0, cache=plan_cache)
