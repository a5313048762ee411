"""sacct --json reader: the slurmdbd files checked against plain json parsing, shape drift."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cluster_decide.inventory import InventoryError
from cluster_decide.inventory.sacct_json import read_sacct_json


def _files(traces: Path) -> list[Path]:
    return sorted((traces / "sacct/slurm-web-slurmdb-json").glob("*/*.json"))


def test_every_slurmdb_file_reads_with_independent_counts(traces: Path) -> None:
    files = _files(traces)
    assert len(files) == 17
    for path in files:
        doc = json.loads(path.read_text())
        if not doc["jobs"]:
            with pytest.raises(InventoryError) as err:
                read_sacct_json(path)
            assert str(err.value) == (
                f"{path}: the response lists no jobs (slurm said: "
                f"{doc['warnings'][0]['description']}) (expected at least one job in jobs[])"
            )
            continue
        result = read_sacct_json(path, tz="UTC")
        assert result.jobs.height == len(doc["jobs"])
        assert result.jobs["state"].to_list() == [j["state"]["current"][0] for j in doc["jobs"]]
        assert result.jobs["job_id"].to_list() == [str(j["job_id"]) for j in doc["jobs"]]
        assert result.jobs["user"].to_list() == [j["user"] for j in doc["jobs"]]


def test_gpus_come_from_submit_line_when_tres_lacks_them(traces: Path) -> None:
    folder = traces / "sacct/slurm-web-slurmdb-json/24.05_0.0.41"
    done = read_sacct_json(folder / "slurmdb-job-gpus-completed.json").jobs
    doc = json.loads((folder / "slurmdb-job-gpus-completed.json").read_text())
    assert "--gpus 4" in doc["jobs"][0]["submit_line"]
    assert done["gpus"].to_list() == [4]
    assert done["elapsed_s"].to_list() == [float(doc["jobs"][0]["time"]["elapsed"])]
    socket = read_sacct_json(folder / "slurmdb-job-gpus-per-socket.json").jobs
    assert socket["gpus"].to_list() == [2]
    timeout = read_sacct_json(folder / "slurmdb-job-timeout.json").jobs
    assert timeout["state"].to_list() == ["TIMEOUT"]
    pending = read_sacct_json(folder / "slurmdb-job-pending.json").jobs
    assert pending["start"].to_list() == [None]
    assert pending["cpus"].to_list() == [64]


def _job(**over: object) -> dict:
    job: dict = {
        "job_id": 7,
        "name": "train",
        "user": "ana",
        "account": "research",
        "partition": "gpu",
        "state": {"current": "COMPLETED"},
        "time": {"submission": 1700000000, "start": 1700000060, "end": 1700003660, "elapsed": 3600},
        "allocation_nodes": 2,
        "tres": {
            "allocated": [
                {"type": "gres", "name": "gpu:h100", "count": 8},
                {"type": "gres", "name": "gpu", "count": 8},
                {"type": "cpu", "name": "", "count": 64},
                {"type": "energy", "name": "", "count": -2},
            ],
            "requested": [],
        },
        "array": {"job_id": 0, "task_id": 4294967294},
        "exit_code": {"return_code": 0},
        "submit_line": "",
        "steps": [{"step": {"id": "7.interactive"}}],
    }
    job.update(over)
    return job


def test_v0037_and_v0044_shapes() -> None:
    old = {"meta": {"plugin": {"data_parser": "v0.0.37"}}, "jobs": [_job()]}
    new_job = _job(
        job_id=8,
        state={"current": ["FAILED"], "reason": "None"},
        array={"job_id": 100, "task_id": {"set": True, "infinite": False, "number": 3}},
        exit_code={"return_code": {"set": True, "infinite": False, "number": 2}},
        time={"submission": 1700000000, "start": 0, "end": 0, "elapsed": 0},
        tres={"allocated": [], "requested": []},
        submit_line="sbatch --gpus-per-node h100:4 -N 2 run.sh",
        steps=[],
    )
    new = {"meta": {"plugin": {"data_parser": "data_parser/v0.0.44"}}, "jobs": [new_job]}
    a = read_sacct_json(json.dumps(old).encode()).jobs.row(0, named=True)
    assert (a["gpus"], a["gpu_type"], a["nodes"], a["cpus"], a["state"]) == (
        8,
        "H100",
        2,
        64,
        "COMPLETED",
    )
    assert a["interactive"] is True
    b = read_sacct_json(json.dumps(new).encode()).jobs.row(0, named=True)
    assert (b["job_id"], b["array_parent"], b["state"], b["exit_code"]) == (
        "100_3",
        "100",
        "FAILED",
        2,
    )
    assert (b["gpus"], b["gpu_type"], b["start"], b["elapsed_s"]) == (8, "H100", None, 0.0)


def test_json_errors() -> None:
    with pytest.raises(InventoryError) as err:
        read_sacct_json(b'{"jobs": [')
    assert str(err.value).startswith("<bytes>, line 1: not valid JSON")
    with pytest.raises(InventoryError) as err:
        read_sacct_json(b'{"items": []}')
    assert str(err.value) == ("<bytes>: no 'jobs' list at the top level (expected sacct --json)")
    with pytest.raises(InventoryError) as err:
        read_sacct_json(b"")
    assert str(err.value) == "<bytes>: file is empty (expected sacct --json output)"
    doc = {"jobs": [_job(), _job(job_id="x"), 5]}
    with pytest.raises(InventoryError, match="2 of 3 rows are malformed"):
        read_sacct_json(json.dumps(doc).encode())
    result = read_sacct_json(json.dumps(doc).encode(), max_bad_fraction=1.0)
    assert [b.line for b in result.report.bad_lines] == [2, 3]
    assert result.report.rows_read == result.report.rows_used + 2


def test_gpu_hours_and_states_over_all_files(traces: Path) -> None:
    import re
    from collections import Counter

    import polars as pl

    from cluster_decide.inventory.jobs import gpu_hours

    expected_hours = 0.0
    expected_states: Counter[str] = Counter()
    frames = []
    for path in _files(traces):
        jobs = json.loads(path.read_text())["jobs"]
        if not jobs:
            continue
        for job in jobs:
            found = re.search(r"--gpus(?:-per-socket)? (\d+)", job["submit_line"])
            gpus = int(found.group(1)) if found else 0
            ran = job["time"]["start"] > 0
            expected_hours += gpus * (job["time"]["elapsed"] if ran else 0) / 3600
            expected_states[job["state"]["current"][0]] += 1
        frames.append(read_sacct_json(path).jobs)
    table = pl.concat(frames)
    assert gpu_hours(table) == pytest.approx(expected_hours)
    assert dict(table["state"].value_counts().iter_rows()) == dict(expected_states)
