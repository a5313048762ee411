"""Ingest sanity: impossible or implausible rows are bad rows, counted per reason with line
numbers; swapped columns refuse the file; bad flags and outputs fail cleanly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from site_exports import FIELDS, records, slurmdbd_jobs

from cluster_decide.cli import main
from cluster_decide.inventory import InventoryError, read_jobs
from cluster_decide.inventory.ingest import ingest
from cluster_decide.inventory.sacct import read_sacct

COL = {name: i for i, name in enumerate(FIELDS)}


def _export(rows: list[list[str]]) -> bytes:
    return ("|".join(FIELDS) + "\n" + "".join("|".join(r) + "\n" for r in rows)).encode()


def _set(rows: list[list[str]], job: str, **values: str) -> int:
    """Change fields of job `job`'s allocation row; returns its line number (header = 1)."""
    for n, row in enumerate(rows):
        if row[0] == job:
            for key, value in values.items():
                row[COL[key]] = value
            return n + 2
    raise KeyError(job)


def test_bad_rows_are_counted_per_reason_with_line_numbers() -> None:
    rows = records(days=14)
    lines = {
        "impossible times (End before Start)": _set(rows, "5000", End="2024-03-04T07:00:00"),
        "impossible times (Start before Submit)": _set(rows, "5001", Start="2024-03-04T08:00:00"),
        "implausible date": _set(
            rows,
            "5002",
            Submit="1900-01-01T00:00:00",
            Start="1900-01-01T00:10:00",
            End="1900-01-01T02:00:00",
        ),
        "implausible GPU count": _set(rows, "5003", AllocTRES="cpu=8,gres/gpu=100000000"),
        "unknown State": _set(rows, "5004", State="EXPLODED"),
        "bad GPU count": _set(rows, "5005", AllocTRES="cpu=8,gres/gpu=lots"),
        "bad NNodes": _set(rows, "5006", NNodes="100000000000000000000"),
    }
    lines["implausible date 2099"] = _set(
        rows,
        "5007",
        Submit="2099-01-01T00:00:00",
        Start="2099-01-01T00:10:00",
        End="2099-01-01T02:00:00",
    )
    huge = _set(rows, "5008", AllocTRES="cpu=8,gres/gpu=100000000000000000000")
    result = read_sacct(_export(rows))  # 9 of 224 rows malformed: 4%, under the 5% limit
    report = result.report
    assert report.skipped == {
        "bad GPU count": 1,
        "bad NNodes": 1,
        "implausible GPU count": 2,
        "implausible date": 2,
        "impossible times (End before Start)": 1,
        "impossible times (Start before Submit)": 1,
        "unknown State": 1,
        "step row of a rejected job row": 9,
    }
    quoted = {b.line: b.reason for b in report.bad_lines}
    assert quoted[lines["impossible times (End before Start)"]] == (
        "impossible times (End before Start): End 2024-03-04T07:00:00 < Start 2024-03-04T08:20:00"
    )
    assert quoted[lines["implausible date 2099"]].startswith(
        "implausible date: expected Submit from 1980 to today, got 2099-01-01"
    )
    assert quoted[huge] == (
        "implausible GPU count: expected fewer than 100,000 GPUs in one job (TRES/GRES), got 1e+20"
    )
    assert quoted[lines["unknown State"]] == (
        "unknown State: expected a Slurm job state such as COMPLETED, got 'EXPLODED'"
    )
    assert quoted[lines["bad GPU count"]] == (
        "bad GPU count: cannot read the GPUs in AllocTRES 'cpu=8,gres/gpu=lots'"
    )
    assert set(quoted) == {*lines.values(), huge}
    # None of the nine is in the job table, and every other job is, as written.
    kept = set(result.jobs["job_id"])
    assert len(kept) == 112 - 9 and not {str(j) for j in range(5000, 5009)} & kept
    assert report.rows_read == report.rows_used + sum(report.skipped.values())
    assert result.jobs["gpus"].max() == 16


def test_swapped_submit_and_end_columns_are_refused() -> None:
    swapped = [
        f if f not in ("Submit", "End") else {"Submit": "End", "End": "Submit"}[f] for f in FIELDS
    ]
    data = ("|".join(swapped) + "\n" + "".join("|".join(r) + "\n" for r in records(3))).encode()
    with pytest.raises(InventoryError) as err:
        read_sacct(data)
    message = str(err.value)
    assert message.startswith(
        "<bytes>: the time columns look swapped or mislabelled: 24 of 48 rows (50%) have End "
        "before Start; first at line 2: impossible times (End before Start): End "
        "2024-03-04T08:00:00 < Start 2024-03-04T08:20:00"
    )
    assert "check the header, or the --fields order" in message


def test_a_mislabelled_elapsed_column_is_refused() -> None:
    rows = records(days=3)
    for row in rows:
        row[COL["Elapsed"]] = "1-00:00:00"  # a Timelimit where Elapsed should be
    with pytest.raises(InventoryError) as err:
        read_sacct(_export(rows))
    assert str(err.value) == (
        "<bytes>: Elapsed looks mislabelled: it differs from End - Start by more than 5% in 24 "
        "of the 24 jobs that ran (expected Elapsed as the job's wall-clock duration; check the "
        "header or the --fields order)"
    )
    rows[0][COL["Elapsed"]] = "10:00:00"  # jobs 5000 and 5001 right: still most are wrong
    rows[2][COL["Elapsed"]] = "20:00:00"
    with pytest.raises(InventoryError, match="in 22 of the 24 jobs"):
        read_sacct(_export(rows))


def test_times_in_a_dst_fold_are_not_out_of_order() -> None:
    rows = records(days=1)
    # 2024-11-03 01:50 CDT, then 01:10 CST: twenty minutes later, an earlier wall clock.
    _set(
        rows,
        "5000",
        Submit="2024-11-03T01:20:00",
        Start="2024-11-03T01:50:00",
        End="2024-11-03T01:10:00",
        Elapsed="00:20:00",
    )
    result = read_sacct(_export(rows), tz="America/Chicago")
    assert result.report.malformed_rows == 0 and result.jobs.height == 8
    # In UTC the same times are simply out of order.
    assert read_sacct(_export(rows), max_bad_fraction=0.5).report.malformed_rows == 1


def test_slurmdbd_json_bad_jobs_by_reason() -> None:
    doc = json.loads(slurmdbd_jobs(days=7))
    jobs = doc["jobs"]
    jobs[0]["time"]["end"] = jobs[0]["time"]["start"] - 60
    jobs[1]["tres"]["allocated"][1]["count"] = 10**20
    jobs[2]["state"]["current"] = ["EXPLODED"]
    jobs[3]["time"]["submission"] = 4102444800  # 2100-01-01
    result = read_jobs(json.dumps(doc).encode(), max_bad_fraction=0.1)
    assert result.report.skipped == {
        "impossible times (end before start)": 1,
        "implausible GPU count": 1,
        "unknown state": 1,
        "implausible date": 1,
    }
    assert [b.line for b in result.report.bad_lines] == [1, 2, 3, 4]
    assert result.jobs.height == len(jobs) - 4


def test_swf_implausible_gpus_and_dates() -> None:
    header = "; UnixStartTime: 4102444800\n; TimeZoneString: Not/AZone\n"
    line = "1 0 10 3600 4 -1 -1 4 7200 -1 1 1 1 -1 1 1 -1 -1\n"
    with pytest.raises(InventoryError, match="implausible date: expected submit from 1980"):
        read_jobs((header + line).encode(), gpus_per_proc=1)
    body = line + "2 60 10 3600 100000 -1 -1 100000 7200 -1 1 1 1 -1 1 1 -1 -1\n"
    result = read_jobs(
        ("; UnixStartTime: 1704067200\n" + body).encode(), max_bad_fraction=0.5, gpus_per_proc=2
    )
    assert result.report.skipped == {"implausible GPU count": 1}
    assert result.report.bad_lines[0].line == 3
    # An unknown header zone is said, and UTC used.
    notes = read_jobs(
        ("; UnixStartTime: 1704067200\n; TimeZoneString: Not/AZone\n" + line).encode()
    ).report.notes
    assert any("'Not/AZone' is no zone the reader knows" in n for n in notes)


def test_csv_counts_too_large_are_bad_rows() -> None:
    text = "id,g,secs\n1,8,3600\n2,100000000000000000000,3600\n3,200000,60\n" + "".join(
        f"{i},1,60\n" for i in range(4, 40)
    )
    cmap = {"job_id": "id", "gpus": "g", "elapsed_s": "secs"}
    result = read_jobs(text.encode(), format="csv", column_map=cmap, max_bad_fraction=0.1)
    assert result.report.skipped == {"bad gpus": 1, "implausible GPU count": 1}
    assert sorted(b.line for b in result.report.bad_lines) == [3, 4]
    assert result.jobs["gpus"].max() == 8


def test_bad_zone_and_output_that_is_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "jobs.txt"
    export.write_bytes(_export(records(3)))
    before = export.read_bytes()
    assert (
        main(["ingest", str(export), "--tz", "Mars/Olympus", "--out", str(tmp_path / "s.toml")])
        == 2
    )
    err = capsys.readouterr().err
    assert "unknown time zone 'Mars/Olympus'" in err and "Traceback" not in err
    with pytest.raises(InventoryError, match="unknown time zone"):
        ingest([export], tz="Mars/Olympus")
    assert main(["ingest", str(export), "--out", str(export)]) == 2
    assert "is both an input and an output" in capsys.readouterr().err
    assert export.read_bytes() == before
    link = tmp_path / "link.txt"
    link.symlink_to(export)
    assert main(["ingest", str(export), "--out", str(link)]) == 2
    assert export.read_bytes() == before


def test_scenario_write_is_atomic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "jobs.txt"
    export.write_bytes(_export(records(3)))
    out = tmp_path / "s.toml"
    out.write_text("# the analyst's edited scenario\n")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    assert main(["ingest", str(export), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"error: cannot write {out}: No space left on device; nothing was written" in err
    assert out.read_text() == "# the analyst's edited scenario\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.txt", "s.toml"]
    monkeypatch.undo()
    assert main(["ingest", str(export), "--out", str(out)]) == 0
    assert out.read_text().startswith("schema_version") or "[[workloads]]" in out.read_text()


def test_every_row_is_counted_once_when_a_rejected_job_has_a_bad_step() -> None:
    rows = records(days=2)
    _set(rows, "5000", End="2024-03-04T07:00:00")
    rows[1][COL["AllocTRES"]] = "cpu=8,gres/gpu=100000000000000000000"  # its .batch step
    _set(rows, "5001", State="EXPLODED")  # and a rejected job whose step is fine
    report = read_sacct(_export(rows), max_bad_fraction=0.2).report
    assert report.skipped == {
        "impossible times (End before Start)": 1,
        "implausible GPU count": 1,
        "unknown State": 1,
        "step row of a rejected job row": 1,
    }
    assert report.rows_read == 32 == report.rows_used + sum(report.skipped.values())
