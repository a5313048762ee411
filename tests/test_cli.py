"""The command line: readable summary, stable JSON, files with --out, clean errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cluster_decide.cli import main


def test_solve_prints_a_readable_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve"]) == 0
    out = capsys.readouterr().out
    for heading in (
        "Architecture:",
        "Monthly cost:",
        "Pools",
        "Placements",
        "Staffing",
        "Costs",
        "Why",
    ):
        assert heading in out
    assert "Traceback" not in out


def test_readme_sample_matches_what_make_run_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """Every full line of the README's `make run` sample is a line the command prints."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    sample = readme.split("$ make run\n", 1)[1].split("```", 1)[0].splitlines()
    assert main(["solve"]) == 0
    printed = capsys.readouterr().out.splitlines()
    # Lines wrapped for the page (the next one is indented) or cut with "..." are left out.
    wrapped = {i for i, ln in enumerate(sample) if ln.startswith("  ")}
    whole = [
        ln
        for i, ln in enumerate(sample)
        if i not in wrapped and i + 1 not in wrapped and not ln.endswith("...")
    ]
    assert len(whole) >= 6
    assert [ln for ln in whole if ln not in printed] == []


def test_solve_json_is_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "research-lab", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["archetype"] == "slurm_only"
    assert data["status"] == "optimal"


def test_solve_out_writes_json_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["solve", "inference-platform", "--out", str(tmp_path / "o"), "--time-limit", "20"])
        == 0
    )
    names = {p.name for p in (tmp_path / "o").iterdir()}
    assert {
        "plan.json",
        "placements.csv",
        "pools.csv",
        "staffing.csv",
        "costs.csv",
        "explanations.txt",
    } <= names
    assert "Wrote plan.json" in capsys.readouterr().out


def test_bad_scenario_exits_2_with_the_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        "schema_version = 1\n[scenario]\nname = 'x'\n[[workloads]]\nname = 'a'\nkind = 'trainig'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "cluster_decide.cli", "solve", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: bad.toml: workloads[0].kind: expected one of")
    assert "Traceback" not in proc.stderr


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "no-such-file.toml"]) == 2
    assert "no such scenario file" in capsys.readouterr().err


def test_infeasible_exits_1_with_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tight.toml"
    text = (
        Path("data/scenarios/research-lab.toml")
        .read_text()
        .replace("allowed = true", "allowed = false")
    )
    path.write_text(text.replace("fte = 3.0", "fte = 0.5"))
    assert main(["solve", str(path)]) == 1
    out = capsys.readouterr().out
    assert "infeasible" in out
    assert "Add 1 HPC (Slurm) engineer to the team" in out


def test_compare_lists_archetypes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "research-lab"]) == 0
    out = capsys.readouterr().out
    assert "slurm_only" in out and "hybrid_shared" in out
