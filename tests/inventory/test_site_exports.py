"""Exports as sites produce them: header-less sacct text, error responses among good files.

The files come from `site_exports`, written to match what accounting scripts and slurmdbd
produce; each test checks the classes derived and the read report, not only that it ran.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from site_exports import (
    FIELDS,
    KINDS,
    NOTHING_FOUND,
    extended_swf,
    grid_swf,
    sacct_text,
    slurmdbd_jobs,
)

from cluster_decide.cli import INGEST_SKIPPED_FILES, main
from cluster_decide.inventory import InventoryError, detect_format, read_jobs
from cluster_decide.inventory.ingest import ingest
from cluster_decide.inventory.sniff import guess_fields, sniff_delimiter

WORKLOADS = sorted(
    f"{team}-{kind.replace('_', '-')}" for team in ("nlp", "vision") for kind, *_ in KINDS.values()
)
"""The (team, kind) classes every export below must give: 2 teams x 4 kinds."""


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("delimiter", "trailing"), [("☃", True), ("|", True), ("|", False), ("^", True), ("\t", False)]
)
def test_headerless_export_reads_with_fields(delimiter: str, trailing: bool) -> None:
    data = sacct_text(delimiter, trailing=trailing)
    assert detect_format(data) == "sacct"
    with pytest.raises(InventoryError) as err:
        read_jobs(data)
    message = str(err.value)
    assert "no header line and no field list (13 fields per line" in message
    assert ("trailing delimiter (--parsable)" in message) is trailing
    guess = "JobID,X2,X3,X4,X5,Submit,Start,End,Elapsed,X10,AllocTRES,State,ExitCode"
    assert f"--fields {guess} --delimiter {shlex.quote(delimiter)}" in message
    # The delimiter is detected; the fields are named by the user, as sacct -o listed them.
    done = ingest([data], fields=",".join(FIELDS))
    report = done.read.report
    assert (report.rows_read, report.jobs_kept, report.steps_collapsed) == (224, 112, 112)
    assert report.malformed_rows == 0 and not report.skipped
    assert sorted(done.demand.evidence["workload"]) == WORKLOADS
    jobs = done.read.jobs
    assert jobs.filter(jobs["name"] == "train-llm")["gpus"].unique().to_list() == [16]
    # Given explicitly, the delimiter gives the same table.
    again = ingest([data], fields=list(FIELDS), delimiter=delimiter)
    assert again.read.jobs.equals(jobs)


def test_guess_names_what_the_values_show() -> None:
    lines = sacct_text("☃").decode().splitlines()[:30]
    assert sniff_delimiter(lines) == "☃"
    assert guess_fields(lines, "☃") == [
        "JobID",
        *["X2", "X3", "X4", "X5"],
        *["Submit", "Start", "End", "Elapsed"],
        "X10",
        *["AllocTRES", "State", "ExitCode"],
    ]
    # A comma inside TRES never wins over the real delimiter, even when it is regular.
    assert sniff_delimiter(["1;cpu=1,mem=2;x", "2;cpu=4,mem=8;y"]) == ";"
    # Job names holding the candidate make it irregular: no delimiter is claimed.
    assert sniff_delimiter(["1^a^b", "2^a^b^c"]) is None
    # One truncated line among many does not hide the delimiter (it is reported as bad).
    cut = lines[:]
    cut[5] = cut[5][:40]
    assert sniff_delimiter(cut) == "☃"


def test_cli_fields_and_delimiter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = _write(tmp_path, "usage.txt", sacct_text("☃"))
    out = tmp_path / "derived.toml"
    assert main(["ingest", str(export), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"cluster-decide ingest {export} --fields JobID,X2," in err and not out.exists()
    argv = ["ingest", str(export), "--fields", ",".join(FIELDS), "--delimiter", "☃"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "224 rows read, 112 jobs kept" in printed
    assert "Wrote 8 workloads" in printed and out.exists()


def test_fields_refused_for_other_formats(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="fields apply to sacct text exports, and this is"):
        read_jobs(slurmdbd_jobs(), fields="JobID,State")


def test_error_response_among_good_files_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path, "2024-03.json", slurmdbd_jobs(days=7))
    later = _write(tmp_path, "2024-04.json", slurmdbd_jobs(days=7, first_id=20000))
    nothing = _write(tmp_path, "2024-05.json", NOTHING_FOUND)
    empty = _write(tmp_path, "2024-06.json", b"")
    missing = tmp_path / "2024-07.json"
    done = ingest([good, nothing, later, empty, missing])
    report = done.read.report
    assert [(s.file, s.reason.split(" (")[0]) for s in report.skipped_files] == [
        (str(nothing), "an error response with no jobs"),
        (str(empty), "file is empty"),
        (str(missing), "no such file"),
    ]
    assert "slurmdb_jobs_get() found nothing" in report.skipped_files[0].reason
    assert report.jobs_kept == 56 * 2
    assert sorted(done.demand.evidence["workload"]) == WORKLOADS
    assert "3 files skipped, no jobs read from:" in report.summary()
    out = tmp_path / "s.toml"
    status = main(["ingest", str(good), str(nothing), str(later), "--out", str(out)])
    printed = capsys.readouterr()
    assert status == INGEST_SKIPPED_FILES == 5 and out.exists()
    assert "1 of 3 files skipped" in printed.err
    assert f"{nothing}: an error response with no jobs" in printed.out


def test_run_fails_only_when_no_file_has_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nothing = _write(tmp_path, "a.json", NOTHING_FOUND)
    empty = _write(tmp_path, "b.txt", b"\n")
    with pytest.raises(InventoryError) as err:
        ingest([nothing, empty])
    assert "no file gave jobs (2 skipped)" in str(err.value)
    assert f"{nothing}: an error response" in str(err.value)
    assert f"{empty}: file is empty" in str(err.value)
    out = tmp_path / "s.toml"
    assert main(["ingest", str(nothing), "--out", str(out)]) == 2
    assert "slurmdb_jobs_get() found nothing" in capsys.readouterr().err
    assert not out.exists()
    # Some slurmrestd versions leave the jobs list out of an error response altogether.
    bare = json.loads(NOTHING_FOUND)
    del bare["jobs"]
    with pytest.raises(
        InventoryError, match=r"an error response with no jobs \(slurm said: slurmdb"
    ):
        read_jobs(json.dumps(bare).encode())


def test_grid_swf_with_relative_times_and_unknown_waits() -> None:
    data = grid_swf(days=10)
    done = ingest([data], gpus_per_proc=1)
    report = done.read.report
    assert (report.format, report.rows_read, report.jobs_kept) == ("swf", 48, 48)
    assert report.span_days == pytest.approx(10.0)
    # The window is the header's span (10 days), not the 7.3 days from first to last submit.
    assert done.demand.window_days == pytest.approx(10.0)
    jobs = done.read.jobs
    # Submit times count from the header's UnixStartTime (2024-01-01T00:00Z), shown in its zone.
    first = jobs["submit"].min()
    assert str(first) == "2024-01-01 01:00:00+01:00"
    # Unknown waits stay unknown: no start, no end, and no wait statistic.
    assert jobs["start"].null_count() == jobs.height == 48
    evidence = done.demand.evidence
    assert evidence["wait_hours_p90"].is_nan().all()
    assert evidence["completion_hours_p90"].is_nan().all()
    # GPU-hours still count: 8 days x (3 one-hour and 3 two-hour jobs) of 1-3 processors.
    per_day = sum((7200 if k % 2 else 3600) * (1 + k % 3) for k in range(6)) / 3600
    assert evidence["gpu_hours"].sum() == pytest.approx(8 * per_day)
    assert set(evidence["kind"]) == {"distributed_training", "experimentation", "fine_tuning"}
    assert any("unknown, not zero" in n for n in report.notes)


def test_cli_says_waits_are_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _write(tmp_path, "grid.swf", grid_swf(days=10))
    out = tmp_path / "s.toml"
    assert main(["ingest", str(log), "--gpus-per-proc", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = [ln for ln in printed.splitlines() if ln.startswith("| 1-")]
    assert len(rows) == 3 and all(ln.rstrip(" |").endswith("unknown") for ln in rows)
    assert "No waits observed for 1-distributed-training, 1-experimentation, 1-fine-tuning" in (
        printed
    )
    assert "Workloads (10.0 days observed)" in printed


def test_grid_swf_without_span_uses_submit_times() -> None:
    text = grid_swf(days=10).decode().splitlines()
    data = "\n".join(ln for ln in text if "Time:" not in ln or "Unix" in ln).encode()
    done = ingest([data], gpus_per_proc=1)
    assert done.read.report.span_days is None
    last_submit_h = 7 * 24 + 5
    assert done.demand.window_days == pytest.approx((last_submit_h + 2) / 24)


def test_extended_swf_is_named_and_read_with_the_option(tmp_path: Path) -> None:
    data = extended_swf()
    assert detect_format(data) == "swf"
    with pytest.raises(InventoryError) as err:
        ingest([data], gpus_per_proc=2)
    assert str(err.value) == (
        "<bytes>: an extended SWF: 21 fields per line where SWF v2.2 has 18; its submit times "
        "look like absolute epoch seconds (expected extended=True (ingest --swf-extended) to "
        "read the first 18 fields as SWF v2.2 and ignore the rest, once you have checked that "
        "they are in SWF order)"
    )
    done = ingest([data], gpus_per_proc=2, swf_extended=True)
    report = done.read.report
    assert (report.format, report.jobs_kept, report.malformed_rows) == ("swf_extended", 40, 0)
    assert any("the other 3 ignored" in n for n in report.notes)
    jobs = done.read.jobs
    assert str(jobs["submit"].min()) == "2024-03-04 08:30:00+00:00"  # absolute epoch
    assert jobs["gpus"].unique().to_list() == [16]
    assert (jobs["start"] - jobs["submit"]).dt.total_seconds().unique().to_list() == [300]
    assert done.demand.evidence["kind"].unique().to_list() == ["distributed_training"]
    export = _write(tmp_path, "sim.swf", data)
    out = tmp_path / "s.toml"
    argv = ["ingest", str(export), "--gpus-per-proc", "2", "--out", str(out)]
    assert main(argv) == 2 and not out.exists()
    assert main([*argv, "--swf-extended"]) == 0 and out.exists()


def test_a_truncated_line_in_a_headerless_export_is_a_bad_line() -> None:
    lines = sacct_text("☃").decode().splitlines()
    lines[6] = lines[6][:50]  # a copy cut short: line 7
    done = ingest(["\n".join(lines).encode()], fields=",".join(FIELDS))
    report = done.read.report
    assert report.skipped["wrong number of fields"] == 1
    assert report.bad_lines[0].line == 7
    assert report.bad_lines[0].reason == "wrong number of fields: expected 13, got 6"
    assert sorted(done.demand.evidence["workload"]) == WORKLOADS


def test_exit_status_5_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--help"]) == 0
    out = capsys.readouterr().out
    assert "  5  (ingest) the scenario was written, but some files gave no jobs" in out
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "| 5 | (`ingest` only) the scenario was written, but some input files" in readme
