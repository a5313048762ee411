"""Shared fixtures for the inventory tests: the real-trace excerpts committed beside the tests."""

from __future__ import annotations

from pathlib import Path

import pytest

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


@pytest.fixture
def traces() -> Path:
    """The folder of real job records (tests/data/traces; provenance in its README)."""
    return TRACES
