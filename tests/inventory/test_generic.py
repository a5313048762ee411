"""Generic CSV/Parquet with a column map, format detection and the read_jobs entry point."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from cluster_decide.inventory import InventoryError
from cluster_decide.inventory.detect import detect_format
from cluster_decide.inventory.generic import read_table
from cluster_decide.inventory.read import read_jobs, read_many

CSV = (
    "id,team,gpu_count,began,finished,status\n"
    "a,vision,8,2024-03-01 10:00:00,2024-03-01 12:00:00,completed\n"
    "b,nlp,2,2024-03-01 11:00:00,2024-03-01 11:30:00,FAILED\n"
)
MAP = {
    "job_id": "id",
    "account": "team",
    "gpus": "gpu_count",
    "start": "began",
    "end": "finished",
    "state": "status",
}


def test_csv_with_column_map(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(CSV)
    result = read_table(path, MAP, tz="Europe/Berlin")
    jobs = result.jobs
    assert jobs["elapsed_s"].to_list() == [7200.0, 1800.0]
    assert jobs["state"].to_list() == ["COMPLETED", "FAILED"]
    assert str(jobs.schema["start"].time_zone) == "Europe/Berlin"
    assert jobs["gpus"].to_list() == [8, 2]


def test_parquet_with_epoch_times(tmp_path: Path) -> None:
    path = tmp_path / "jobs.parquet"
    pl.DataFrame({"id": ["x"], "g": [4], "t0": [1_700_000_000], "secs": [60.0]}).write_parquet(path)
    result = read_jobs(
        path, column_map={"job_id": "id", "gpus": "g", "submit": "t0", "elapsed_s": "secs"}
    )
    row = result.jobs.row(0, named=True)
    assert (row["gpus"], row["elapsed_s"], row["submit"].timestamp()) == (4, 60.0, 1.7e9)


def test_column_map_naming_absent_columns(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(CSV)
    with pytest.raises(InventoryError) as err:
        read_table(path, {**MAP, "gpus": "num_gpus"})
    assert str(err.value) == (
        f"{path}: column map names columns absent from the file: ['num_gpus'] (expected "
        "columns among ['id', 'team', 'gpu_count', 'began', 'finished', 'status'])"
    )
    with pytest.raises(InventoryError, match=r"unknown job-table columns \['gpu'\]"):
        read_table(path, {"job_id": "id", "gpu": "gpu_count", "elapsed_s": "id"})
    with pytest.raises(InventoryError, match="column map gives no duration"):
        read_table(path, {"job_id": "id"})


def test_detection_and_override(tmp_path: Path, traces: Path) -> None:
    cases = {
        "sacct/aws-hpc-cost-simulator/sacct-output-v1.txt": "sacct",
        "sacct/slurm2sql_triton_test-data1.psv": "sacct",
        "sacct/slurm-web-slurmdb-json/24.05_0.0.41/slurmdb-job-failed.json": "sacct_json",
        "swf/NASA-iPSC-1993-3.1-cln.first1000.swf.gz": "swf",
        "swf/accasim_workload_headerless.swf": "swf",
        "philly/alibaba-analysis_philly_runtime.first2000.csv": "philly_runtime",
    }
    for rel, fmt in cases.items():
        assert detect_format(traces / rel) == fmt, rel
    gz = tmp_path / "v1.txt.gz"
    gz.write_bytes(
        gzip.compress((traces / "sacct/aws-hpc-cost-simulator/sacct-output-v1.txt").read_bytes())
    )
    assert read_jobs(gz).jobs.height == 483
    with pytest.raises(InventoryError, match="does not look like SWF"):
        read_jobs(traces / "sacct/slurm2sql_triton_test-data1.psv", format="swf")


def test_detection_errors(tmp_path: Path) -> None:
    empty = tmp_path / "e.txt"
    empty.write_text("  \n\n")
    with pytest.raises(InventoryError) as err:
        read_jobs(empty)
    assert str(err.value) == f"{empty}: file is empty (expected job records)"
    prose = tmp_path / "notes.txt"
    prose.write_text("hello world\n")
    with pytest.raises(InventoryError, match="unrecognized format"):
        read_jobs(prose)
    with pytest.raises(InventoryError, match="unknown format 'xls'"):
        read_jobs(prose, format="xls")
    with pytest.raises(InventoryError, match="csv input needs a column map"):
        read_jobs(CSV.encode())
    with pytest.raises(InventoryError, match="no such file"):
        read_jobs(tmp_path / "missing.txt")


def test_read_many_merges_reports(traces: Path) -> None:
    base = traces / "sacct/aws-hpc-cost-simulator"
    result = read_many([base / "issue-17_sacct-output.txt", base / "issue-63_sacct-output.txt"])
    assert result.jobs.height == 3
    rep = result.report
    assert rep.skipped == {"duplicate job record across files (the last one is kept)": 1}
    assert rep.rows_read == rep.rows_used + sum(rep.skipped.values())


def test_detection_reads_only_the_head_and_spots_truncated_gzip(tmp_path: Path) -> None:
    body = ("JobID|State|Elapsed\n" + "1|COMPLETED|00:00:01\n" * 20000).encode()
    packed = gzip.compress(body)
    whole = tmp_path / "whole.txt.gz"
    whole.write_bytes(packed)
    assert detect_format(whole) == "sacct"
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(packed[:40])
    with pytest.raises(InventoryError, match=r"cut\.txt\.gz: truncated or corrupt gzip stream"):
        read_jobs(cut)


def test_read_jobs_progress_for_every_format(traces: Path) -> None:
    seen: list[tuple[int, int]] = []
    read_jobs(
        traces / "swf/accasim_workload_headerless.swf", progress=lambda d, t: seen.append((d, t))
    )
    read_jobs(
        traces / "sacct/slurm2sql_triton_test-data1.psv", progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(25, 25), (5, 5)]
