"""The parts behind the reliability promises: ranges, the reference, atomic writes, escaping."""

from __future__ import annotations

import copy
import errno
import os
from pathlib import Path
from typing import Any

import pytest

import cluster_decide as cd
from cluster_decide import guard
from cluster_decide.base import atomic, ranges
from cluster_decide.base.atomic import OutputError, all_or_nothing, write_atomic
from cluster_decide.base.ranges import CLI_FLAGS, Range, markdown_table
from cluster_decide.inputs.scenario import parse_scenario, scenario_ranges

ROOT = Path(__file__).resolve().parents[2]

START_UP: dict[str, Any] = {
    "schema_version": 1,
    "scenario": {"name": "One-GPU start-up"},
    "team": {"hpc": {"fte": 1.0}, "kubernetes": {"fte": 1.0}},
    "hiring": {"allowed": True, "max_fte": 2},
    "workloads": [
        {
            "name": "tune",
            "kind": "fine_tuning",
            "gpu_types": ["L4"],
            "gpus_per_job": 1,
            "gpu_hours_per_month": 20.0,
            "mean_job_hours": 1.0,
            "max_queue_wait_hours": 48.0,
        }
    ],
}


# -- ranges and the reference --------------------------------------------------------------


def test_the_reference_states_every_range_as_the_code_checks_it() -> None:
    doc = (ROOT / "docs" / "scenario.md").read_text(encoding="utf-8")
    assert markdown_table(scenario_ranges()) in doc
    assert markdown_table(list(CLI_FLAGS.items()), head="flag") in doc
    keys = {k for k, _ in scenario_ranges()}
    for key in ("workloads[].gpus_per_job", "hiring.max_fte", "procurement.horizon_months"):
        assert key in keys
    assert {"procurement.gpu_price_scale", "gpus.<type>.gpus_per_node"} <= keys


@pytest.mark.parametrize("key, rng", scenario_ranges() + list(CLI_FLAGS.items()))
def test_each_range_admits_its_bounds_and_refuses_beyond(key: str, rng: Range) -> None:
    inside = [rng.hi] + ([] if rng.lo_open else [rng.lo])
    if rng.lo_open:
        inside.append(rng.lo + (1 if rng.integer else 1e-9 * max(1.0, rng.hi)))
    for value in inside:
        value = int(value) if rng.integer else float(value)
        assert rng.check(value) == value
    below = rng.lo if rng.lo_open else rng.lo - (1 if rng.integer else 1e-6 * max(1, rng.lo))
    for value in (below, rng.hi * 2 + 1, float("nan"), True):
        with pytest.raises(Exception, match=r"expected (an integer|a number)") as info:
            rng.check(
                int(value) if rng.integer and isinstance(value, float) and value == value else value
            )
        assert rng.text() in str(info.value)


def test_a_hyperscale_estate_and_a_one_gpu_start_up_are_both_accepted() -> None:
    """The ranges admit 100,000 GPUs of demand with 16,384-GPU gangs, and a single L4."""
    hyper = cd.load_scenario("enterprise-mixed").to_dict()
    hyper["workloads"][0]["gpus_per_job"] = 16_384
    hyper["workloads"][0]["gpu_hours_per_month"] = 73_000_000.0  # 100,000 GPUs all month
    hyper["team"]["hpc"]["fte"] = 120.0
    hyper["hiring"]["max_fte"] = 200
    hyper["policy"]["budget_usd_per_month"] = 900_000_000.0
    assert parse_scenario(hyper).workloads[0].gpus_per_job == 16_384
    plan = cd.solve(parse_scenario(copy.deepcopy(START_UP)), time_limit_s=10)
    assert plan.feasible and plan.pools["gpus"].sum() >= 1


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("hiring.max_fte", 2**63 - 1, "hiring.max_fte: expected an integer 0–1,000 FTE"),
        ("procurement.gpu_price_scale", 1e9, "expected a number 0.01–100"),
        ("procurement.horizon_months", 2**63 - 1, "expected an integer 1–240 months"),
        ("gpus.H100.gpus_per_node", 10**9, "expected an integer 1–1,024 GPUs per node"),
        ("workloads.0.gpus_per_job", 10**20, "got 100000000000000000000"),
    ],
)
def test_values_the_model_once_called_infeasible_are_refused(
    key: str, value: Any, message: str
) -> None:
    data = cd.load_scenario("research-lab").to_dict()
    node: Any = data
    parts = key.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[parts[-1]] = value
    with pytest.raises(cd.ScenarioError, match=message):
        parse_scenario(data, "x.toml")


def test_long_integers_are_shown_by_their_length() -> None:
    assert ranges.show_number(10**20) == "100000000000000000000"
    assert ranges.show_number(10**40) == "an integer of 41 digits"
    assert ranges.show_number(10**5000).startswith("an integer of about 5,000")


# -- atomic writes -------------------------------------------------------------------------


def test_a_failed_batch_writes_nothing_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old a")
    with pytest.raises(RuntimeError), all_or_nothing():
        write_atomic(tmp_path / "a.txt", "new a")
        write_atomic(tmp_path / "b.txt", "new b")
        raise RuntimeError("half-way")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "old a"
    with all_or_nothing():
        write_atomic(tmp_path / "a.txt", "new a")
        write_atomic(tmp_path / "sub" / "b.txt", "new b")
    assert (tmp_path / "a.txt").read_text() == "new a"
    assert (tmp_path / "sub" / "b.txt").read_text() == "new b"
    assert oct((tmp_path / "a.txt").stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_write_error_names_the_file_and_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    """Both ways of staging (unnamed O_TMPFILE, hidden named file) clean up after a failure."""
    target = tmp_path / "plan.json"
    target.write_text("old")
    if not unnamed:
        monkeypatch.setattr(atomic, "_O_TMPFILE", 0)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match=r"cannot write .*plan\.json: No space left on device"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_a_folder_in_the_way_is_named(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(OutputError, match="taken"):
        write_atomic(tmp_path / "taken" / "plan.json", "x")
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(OutputError, match=r"dir\.csv: it is a folder"):
        write_atomic(tmp_path / "dir.csv", "x")


def test_inputs_are_never_outputs(tmp_path: Path) -> None:
    log = tmp_path / "jobs.txt"
    log.write_text("x")
    with pytest.raises(ValueError, match="both an input and an output"):
        atomic.refuse_inputs_as_outputs([log], [tmp_path / "." / "jobs.txt"])
    atomic.refuse_inputs_as_outputs([log], [tmp_path / "scenario.toml"])


def test_save_scenario_goes_through_the_atomic_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.toml"
    path.write_text("# old\n")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "EIO")))
    with pytest.raises(OutputError, match=r"s\.toml"):
        cd.save_scenario(cd.load_scenario("research-lab"), path)
    assert path.read_text() == "# old\n"


# -- terminal and report text --------------------------------------------------------------


def test_control_characters_are_shown_not_obeyed() -> None:
    assert guard.clean("a\x1b[2Jb\tc\nd\x9b") == "a\\x1b[2Jb\tc\nd\\x9b"


def test_reports_escape_a_scenario_named_like_markup(tmp_path: Path) -> None:
    from cluster_decide.export import gather
    from cluster_decide.export.reports import markdown_report

    data = copy.deepcopy(START_UP)
    data["scenario"]["name"] = "<script>alert(1)</script> [click](javascript:x)"
    data["workloads"][0]["team"] = "<b>ops</b>"
    scn = parse_scenario(data)
    bundle = gather(cd.solve(scn, time_limit_s=10), scn, None, run_compare=False)
    text = markdown_report(bundle)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "[click](javascript" not in text
    assert "<b>ops</b>" not in text


def test_a_replay_too_large_is_refused_before_drawing_jobs() -> None:
    from cluster_decide.simulation.replay import MAX_JOBS, _check_size

    _check_size(MAX_JOBS, 28)
    with pytest.raises(ValueError, match=r"limit of 5,000,000 .* at most 14.0 days"):
        _check_size(MAX_JOBS * 2, 28)


def test_the_deadline_stops_python_work_and_restores_the_alarm() -> None:
    import signal
    import time

    before = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    with pytest.raises(guard.TimeLimitExceeded, match=r"--max-time 0\.2 s"), guard.deadline(0.2):
        while time.monotonic() - start < 10:
            sum(range(1000))
    assert time.monotonic() - start < 2
    assert signal.getsignal(signal.SIGALRM) == before
    with guard.deadline(None):
        pass


def test_an_ingested_demand_out_of_range_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log whose counts derive 4 billion GPU-hours a month is not saved as a scenario."""
    from cluster_decide import cli
    from cluster_decide.inventory import ingest

    real = ingest.derive_workloads

    def inflated(*args: Any, **kwargs: Any) -> Any:
        demand = real(*args, **kwargs)
        demand.workloads[0]["gpu_hours_per_month"] = 4.2e9
        return demand

    monkeypatch.setattr(ingest, "derive_workloads", inflated)
    sample = ROOT / "data" / "samples" / "research-lab-14d.sacct.txt"
    out = tmp_path / "derived.toml"
    assert cli.main(["ingest", str(sample), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "derived.toml: workloads[0].gpu_hours_per_month: expected a number" in err
    assert "derived from" in err and "research-lab-14d.sacct.txt" in err
    assert not out.exists()
