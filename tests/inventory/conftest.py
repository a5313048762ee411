"""Shared fixtures for the inventory tests: where the real traces are, and a skip if absent."""

from __future__ import annotations

from pathlib import Path

import pytest

TRACES = Path(__file__).resolve().parents[3] / "shared" / "traces"


@pytest.fixture
def traces() -> Path:
    """The shared real-trace folder; the test is skipped when it is not there."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces not available: {TRACES} is absent (see PROVENANCE.md)")
    return TRACES
