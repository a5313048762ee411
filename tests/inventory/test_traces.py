"""Public GPU traces: Philly checked against plain csv parsing; openb and PAI on fixtures.

The openb tables (alibaba/clusterdata, for research and study use) are not redistributed with the
project, so their tests use rows written in the trace's documented schema, real quirks included.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from pathlib import Path

import pytest

from cluster_decide.inventory import InventoryError
from cluster_decide.inventory.detect import detect_format
from cluster_decide.inventory.jobs import gpu_hours
from cluster_decide.inventory.traces import (
    OPENB_PHASES,
    read_openb,
    read_openb_nodes,
    read_pai,
    read_philly_runtime,
)

OPENB_PODS = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
openb-pod-0002,12000,24576,8,1000,,LS,Succeeded,1558381,1650000,1558400
openb-pod-0003,8000,8192,0,0,,BE,Succeeded,20000,30000,20010
openb-pod-0004,8000,8192,2,1000,V100M32|V100M16,Burstable,Failed,40000,41000,40100
openb-pod-0005,11908,47104,1,1000,,BE,Pending,10001278,10001403,
openb-pod-0006,4000,4096,1,250,,Guaranteed,Succeeded,50000,53600,50000
"""

OPENB_NODES = """sn,cpu_milli,memory_mib,gpu,model
openb-node-0000,64000,262144,2,P100
openb-node-0001,64000,262144,2,P100
openb-node-0002,96000,786432,8,V100M32
openb-node-0003,96000,393216,8,T4
"""


def test_openb_pods_match_independent_figures(tmp_path: Path) -> None:
    path = tmp_path / "openb_pod_list_default.csv"
    path.write_text(OPENB_PODS)
    with path.open(newline="") as fh:
        pods = list(csv.DictReader(fh))
    assert detect_format(path) == "openb"
    result = read_openb(path)
    jobs = result.jobs
    assert jobs.height == len(pods) == 7
    phases = Counter(OPENB_PHASES[p["pod_phase"]] for p in pods)
    assert dict(jobs["state"].value_counts().iter_rows()) == dict(phases)
    expected = (
        sum(
            int(p["num_gpu"]) * max(float(p["deletion_time"]) - float(p["scheduled_time"]), 0)
            for p in pods
            if p["scheduled_time"] and p["deletion_time"]
        )
        / 3600
    )
    assert gpu_hours(jobs) == pytest.approx(expected)
    assert jobs.filter(jobs["gpus"] == 0).height == sum(p["num_gpu"] == "0" for p in pods)
    assert jobs.filter(jobs["gpus"] > 1).height == sum(int(p["num_gpu"]) > 1 for p in pods)
    running = jobs.filter(jobs["state"] == "RUNNING")
    assert running["end"].null_count() == running.height
    shared = sum(p["num_gpu"] == "1" and int(p["gpu_milli"]) < 1000 for p in pods)
    assert f"{shared} pods share a GPU (gpu_milli < 1000); each counts one whole GPU" in (
        result.report.notes
    )


def test_openb_nodes_capacity(tmp_path: Path) -> None:
    path = tmp_path / "openb_node_list_gpu_node.csv"
    path.write_text(OPENB_NODES)
    with path.open(newline="") as fh:
        nodes = list(csv.DictReader(fh))
    table = read_openb_nodes(path)
    assert table["nodes"].sum() == len(nodes) == 4
    assert table["gpus"].sum() == sum(int(n["gpu"]) for n in nodes)


def test_philly_runtime_is_a_distribution_only(traces: Path) -> None:
    path = traces / "philly/alibaba-analysis_philly_runtime.first2000.csv"
    with path.open(newline="") as fh:
        runtimes = [float(r["runtime"]) for r in csv.DictReader(fh)]
    result = read_philly_runtime(path)
    assert result.jobs.height == len(runtimes) == 2000
    assert result.jobs["elapsed_s"].sum() == pytest.approx(math.fsum(runtimes))
    assert result.jobs["submit"].null_count() == result.jobs.height
    assert result.report.notes[0].startswith("runtime distribution only")


def _pai(tmp_path: Path, header: bool) -> tuple[Path, Path]:
    jobs = [
        ["j1", "i1", "alice", "Terminated", "1000", "4600"],
        ["j2", "i2", "bob", "Failed", "2000", "2600"],
        ["j3", "i3", "alice", "Running", "3000", ""],
        ["j4", "i4", "carol", "Waiting", "3500", ""],
    ]
    tasks = [
        ["j1", "worker", "4", "Terminated", "1100", "4600", "600", "29", "100", "V100"],
        ["j1", "ps", "1", "Terminated", "1100", "4600", "400", "10", "0", "MISC"],
        ["j2", "worker", "1", "Failed", "2000", "2600", "600", "29", "50", "T4"],
        ["j3", "PyTorchWorker", "2", "Running", "3100", "", "800", "60", "800", "V100M32"],
    ]
    jp, tp = tmp_path / "pai_job_table.csv", tmp_path / "pai_task_table.csv"
    with jp.open("w", newline="") as fh:
        w = csv.writer(fh)
        if header:
            w.writerow(["job_name", "inst_id", "user", "status", "start_time", "end_time"])
        w.writerows(jobs)
    with tp.open("w", newline="") as fh:
        w = csv.writer(fh)
        if header:
            w.writerow(
                [
                    "job_name",
                    "task_name",
                    "inst_num",
                    "status",
                    "start_time",
                    "end_time",
                    "plan_cpu",
                    "plan_mem",
                    "plan_gpu",
                    "gpu_type",
                ]
            )
        w.writerows(tasks)
    return jp, tp


@pytest.mark.parametrize("header", [False, True])
def test_pai_tables_from_documented_schema(tmp_path: Path, header: bool) -> None:
    jp, tp = _pai(tmp_path, header)
    result = read_pai(jp, tp)
    jobs = result.jobs
    assert jobs["job_id"].to_list() == ["j1", "j2", "j3", "j4"]
    assert jobs["gpus"].to_list() == [4, 1, 16, 0]
    assert jobs["gpu_type"].to_list() == ["V100", "T4", "V100M32", None]
    assert jobs["state"].to_list() == ["COMPLETED", "FAILED", "RUNNING", "PENDING"]
    assert jobs["elapsed_s"].to_list() == [3500.0, 600.0, 0.0, 0.0]
    assert jobs["cpus"].to_list() == [28, 6, 16, None]
    first = jobs.row(0, named=True)
    assert first["submit"].utcoffset().total_seconds() == 8 * 3600
    assert "1 jobs have no task rows: 0 GPUs" in result.report.notes


def test_pai_bad_status_and_missing_columns(tmp_path: Path) -> None:
    jp, tp = _pai(tmp_path, True)
    jp.write_text(jp.read_text().replace("Waiting", "Sleeping"))
    with pytest.raises(InventoryError) as err:
        read_pai(jp, tp)
    assert str(err.value).endswith(
        "first at line 5: bad status: expected Terminated, Failed, Running or Waiting, "
        "got 'Sleeping'"
    )
    bad = tmp_path / "pai_task_table_short.csv"
    bad.write_text("job_name,task_name\nj1,worker\n")
    with pytest.raises(InventoryError, match=r"missing columns \['inst_num'"):
        read_pai(jp, bad)


def _philly_log() -> list[dict]:
    """Jobs written to the schema of msr-fiddle/philly-traces' README."""

    def attempt(start: str | None, end: str | None, hosts: dict[str, int]) -> dict:
        detail = [{"ip": ip, "gpus": [f"gpu{i}" for i in range(n)]} for ip, n in hosts.items()]
        return {"start_time": start, "end_time": end, "detail": detail}

    return [
        {
            "status": "Pass",
            "vc": "6214e9",
            "jobid": "application_1_1",
            "user": "u1",
            "submitted_time": "2017-10-03 10:00:00",
            "attempts": [attempt("2017-10-03 10:05:00", "2017-10-03 12:05:00", {"m1": 8, "m2": 8})],
        },
        {
            "status": "Failed",
            "vc": "6214e9",
            "jobid": "application_1_2",
            "user": "u2",
            "submitted_time": "2017-10-03 11:00:00",
            "attempts": [
                attempt("2017-10-03 11:00:10", "2017-10-03 11:30:10", {"m3": 2}),
                attempt("2017-10-03 11:40:00", "2017-10-03 12:10:00", {"m4": 2}),
            ],
        },
        {
            "status": "Killed",
            "vc": "b436b2",
            "jobid": "application_1_3",
            "user": "u3",
            "submitted_time": "2017-11-05 01:30:00",
            "attempts": [],
        },
        {
            "status": "Pass",
            "vc": "b436b2",
            "jobid": "application_1_4",
            "user": "u3",
            "submitted_time": "2017-12-01 09:00:00",
            "attempts": [attempt("2017-12-01 09:00:30", None, {"m5": 1})],
        },
    ]


def test_philly_job_log_from_documented_schema(tmp_path: Path) -> None:
    import json

    from cluster_decide.inventory.read import read_jobs

    path = tmp_path / "cluster_job_log"
    path.write_text(json.dumps(_philly_log()))
    result = read_jobs(path)
    jobs = result.jobs
    assert result.report.format == "philly_jobs"
    assert jobs["gpus"].to_list() == [16, 2, 0, 1]
    assert jobs["nodes"].to_list() == [2, 1, None, 1]
    assert jobs["state"].to_list() == ["COMPLETED", "FAILED", "CANCELLED", "RUNNING"]
    assert jobs["elapsed_s"].to_list() == [7200.0, 3600.0, 0.0, 0.0]
    assert gpu_hours(jobs) == 16 * 2 + 2 * 1
    assert jobs["account"].to_list() == ["6214e9", "6214e9", "b436b2", "b436b2"]
    assert result.report.ambiguous_times == 1
    assert "1 jobs ran more than one attempt; elapsed sums them" in result.report.notes
    assert str(jobs.schema["submit"].time_zone) == "America/Los_Angeles"
