"""``cluster-decide export``: every file asked for, clean errors, and the deck's speed."""

from __future__ import annotations

import time
from pathlib import Path

import polars as pl
import pytest

import cluster_decide as cd
from cluster_decide.cli import main
from cluster_decide.export import deck


def test_export_writes_every_file_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["export", "research-lab", "--no-compare", "--pptx", str(tmp_path / "d.pptx")]
    args += ["--html", str(tmp_path / "r.html"), "--data", str(tmp_path / "data")]
    assert main(args) == 0
    out = capsys.readouterr().out
    for name in ("d.pptx", "r.html", "data/plan.json", "data/pilot_plan.csv"):
        assert (tmp_path / name).is_file(), name
        assert f"Wrote {tmp_path / name}" in out


def test_export_without_a_target_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--no-compare"]) == 2
    assert "--pptx" in capsys.readouterr().err


@pytest.mark.slow
def test_default_deck_exports_in_under_10_seconds(
    default_scenario: cd.Scenario,
    default_plan: cd.Plan,
    alternatives: pl.DataFrame,
    tmp_path: Path,
) -> None:
    start = time.perf_counter()
    deck(default_plan, tmp_path / "d.pptx", scenario=default_scenario, alternatives=alternatives)
    assert time.perf_counter() - start < 10.0
