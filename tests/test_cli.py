"""The command line: readable summary, stable JSON, files with --out, clean errors."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cluster_decide.cli import main


@pytest.fixture(scope="module")
def make_run_output() -> list[str]:
    """What `make run` prints (`cluster-decide solve`, verdict included), run once for the module.

    The verdict re-solves the default scenario a few dozen times, so the two tests that read
    this output share one run.
    """
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve"]) == 0
    return out.getvalue().splitlines()


def test_solve_prints_a_readable_summary(make_run_output: list[str]) -> None:
    out = "\n".join(make_run_output)
    for heading in (
        "Architecture:",
        "Verdict:",
        "Monthly cost:",
        "Pools",
        "Placements",
        "Staffing",
        "Costs",
        "Why",
    ):
        assert heading in out
    assert "Traceback" not in out


def test_readme_sample_matches_what_make_run_prints(make_run_output: list[str]) -> None:
    """Every full line of the README's `make run` sample is a line the command prints."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    sample = readme.split("$ make run\n", 1)[1].split("```", 1)[0].splitlines()
    # Lines wrapped for the page (the next one is indented) or cut with "..." are left out.
    wrapped = {i for i, ln in enumerate(sample) if ln.startswith("  ")}
    whole = [
        ln
        for i, ln in enumerate(sample)
        if i not in wrapped and i + 1 not in wrapped and not ln.endswith("...")
    ]
    assert len(whole) >= 6
    assert [ln for ln in whole if ln not in make_run_output] == []


def test_solve_json_is_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "research-lab", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["archetype"] == "slurm_only"
    assert data["status"] == "optimal"


def test_solve_out_writes_json_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "solve",
                "inference-platform",
                "--out",
                str(tmp_path / "o"),
                "--time-limit",
                "20",
                "--no-verdict",
            ]
        )
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


_BANK = """
schema_version = 1

[scenario]
name = "bank"

[team]
hpc = { fte = 2.0 }
kubernetes = { fte = 3.0 }

[procurement]
mode = "cloud"

[[workloads]]
name = "finetune"
kind = "fine_tuning"
interface = "slurm"
gpu_types = ["H100"]
gpus_per_job = 8
gpu_hours_per_month = 20000.0
mean_job_hours = 8.0
max_queue_wait_hours = 6.0

[[workloads]]
name = "notebooks"
kind = "experimentation"
interface = "slurm"
gpu_types = ["H100"]
concurrent_users = 2
gpus_per_user = 1
max_queue_wait_hours = 0.25

[[workloads]]
name = "chat"
kind = "realtime_inference"
interface = "containers"
gpu_types = ["H100"]
peak_requests_per_second = 30.0
gpu_seconds_per_request = 0.2
p99_latency_ms = 2000.0
profile = "business_hours"
requires = ["autoscaling", "self_healing", "rolling_updates"]

[current]
as_of = "2026-12"

[current.workloads.finetune]
platform = "slurm"
users = 2

[current.workloads.notebooks]
platform = "slurm"
users = 2

[current.workloads.chat]
platform = "kubernetes"
users = 4

[[current.clusters]]
name = "hpc-a"
platform = "slurm"
gpu_type = "H100"
nodes = 8
ownership = "leased"
leased_until = "2027-06"
"""


def test_solve_prints_today_against_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a [current] estate the summary prints today beside the plan, from the plans' frames."""
    import polars as pl

    import cluster_decide as cd
    from cluster_decide.analysis.today import status_quo
    from cluster_decide.planning.explain import money

    path = tmp_path / "bank.toml"
    path.write_text(_BANK)
    assert main(["solve", str(path), "--no-verdict"]) == 0
    out = capsys.readouterr().out
    assert "Today -> plan" in out
    block = out.split("Today -> plan", 1)[1].split("\nPools", 1)[0]
    rows = {
        cells[0]: cells[1:]
        for line in block.splitlines()
        if line.startswith("| ") and not line.startswith("| item")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    assert set(rows) == {
        "platforms",
        "baseline GPUs",
        "engineers",
        "monthly cost",
        "one-time cost",
        "moves",
        "hires",
        "retraining",
    }
    scn = cd.load_scenario(path)
    plan = cd.solve(scn)
    today = cd.solve(status_quo(scn))
    assert rows["monthly cost"] == [money(today.total_monthly_usd), money(plan.total_monthly_usd)]
    assert rows["one-time cost"][1] == money(plan.one_time_usd)
    moved = plan.transition.filter(pl.col("action") == "move")
    assert rows["moves"][1].startswith(str(moved.height) if moved.height else "none")
    assert today.transition.filter(pl.col("action") == "move").height == 0
    gpus = int(plan.pools["gpus"].sum())
    assert rows["baseline GPUs"][1].startswith(str(gpus))
    assert rows["hires"][1] == (
        str(int(plan.staffing["hires"].sum())) if plan.staffing["hires"].sum() else "none"
    )
    assert rows["platforms"][0] == "kubernetes, slurm"
    # Without [current] there is no today to print.
    bare = tmp_path / "bare.toml"
    bare.write_text(_BANK.split("[current]", 1)[0])
    assert main(["solve", str(bare), "--no-verdict"]) == 0
    assert "Today -> plan" not in capsys.readouterr().out


def test_solve_json_and_out_carry_today_against_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json`` carries the "Today -> plan" table as ``today_vs_plan``; ``--out`` writes it."""
    import polars as pl

    path = tmp_path / "bank.toml"
    path.write_text(_BANK)
    assert main(["solve", str(path), "--no-verdict"]) == 0
    text = capsys.readouterr().out
    out = tmp_path / "o"
    assert main(["solve", str(path), "--no-verdict", "--json", "--out", str(out)]) == 0
    rows = json.loads(capsys.readouterr().out)["today_vs_plan"]
    assert [r["item"] for r in rows][:4] == [
        "platforms",
        "baseline GPUs",
        "engineers",
        "monthly cost",
    ]
    assert set(rows[0]) == {"item", "today", "plan"}
    # The same cells as the printed table, row for row.
    for r in rows:
        assert f"| {r['item']}" in text and r["plan"] in text and r["today"] in text
    written = pl.read_csv(out / "today_vs_plan.csv", infer_schema_length=0)
    assert written.to_dicts() == rows
    # Without [current] there is no today: no key, no file.
    bare = tmp_path / "bare.toml"
    bare.write_text(_BANK.split("[current]", 1)[0])
    assert main(["solve", str(bare), "--no-verdict", "--json", "--out", str(tmp_path / "b")]) == 0
    assert "today_vs_plan" not in json.loads(capsys.readouterr().out)
    assert not (tmp_path / "b" / "today_vs_plan.csv").exists()
