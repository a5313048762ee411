"""Shared fixtures for the export tests: one solve, one comparison and one deck per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

import cluster_decide as cd
from cluster_decide.export import Bundle, deck, gather


@pytest.fixture(scope="session")
def alternatives(default_scenario: cd.Scenario) -> pl.DataFrame:
    return cd.compare(default_scenario)


@pytest.fixture(scope="session")
def bundle(
    default_scenario: cd.Scenario, default_plan: cd.Plan, alternatives: pl.DataFrame
) -> Bundle:
    return gather(default_plan, default_scenario, alternatives)


@pytest.fixture(scope="session")
def deck_path(bundle: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return deck(bundle, tmp_path_factory.mktemp("deck") / "plan.pptx")


@pytest.fixture(scope="session")
def render_tools() -> None:
    """Skip, saying why, when LibreOffice or poppler (which the rendering tests drive) is absent."""
    missing = [b for b in ("libreoffice", "pdftoppm", "pdftotext") if shutil.which(b) is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed (run .ci/system-deps.sh to install LibreOffice "
            "and poppler)"
        )
