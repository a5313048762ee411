"""Small exports in the shapes sites produce, written here by hand for the tests.

A fortnight of jobs from two teams: multi-node training, a model server, notebooks and
batch inference, each with a batch step, in the field order of a typical accounting script
(`sacct -o JobID,User,Account,Partition,JobName,Submit,Start,End,Elapsed,NNodes,AllocTRES,
State,ExitCode`).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

FIELDS = (
    "JobID",
    "User",
    "Account",
    "Partition",
    "JobName",
    "Submit",
    "Start",
    "End",
    "Elapsed",
    "NNodes",
    "AllocTRES",
    "State",
    "ExitCode",
)
"""The `-o` list of the accounting script the exports below come from."""

KINDS = {
    "train-llm": ("distributed_training", 2, 16, 10.0),
    "vllm-serve": ("realtime_inference", 1, 2, 20.0),
    "jupyter": ("experimentation", 1, 1, 3.0),
    "infer-batch": ("batch_inference", 1, 4, 2.0),
}
"""Job name -> (kind the default rules give it, nodes, GPUs, hours)."""

START = datetime(2024, 3, 4, 8, 0, 0)


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def _hms(hours: float) -> str:
    secs = round(hours * 3600)
    return f"{secs // 3600:02d}:{secs % 3600 // 60:02d}:{secs % 60:02d}"


def records(days: int = 14, first_id: int = 5000) -> list[list[str]]:
    """Allocation and `.batch` step rows, one job of each kind per team and day."""
    rows: list[list[str]] = []
    job = first_id
    for day in range(days):
        for t, team in enumerate(("vision", "nlp")):
            for k, (name, (_, nodes, gpus, hours)) in enumerate(KINDS.items()):
                submit = START + timedelta(days=day, hours=t * 3 + k)
                start = submit + timedelta(minutes=20 + 5 * k)
                end = start + timedelta(hours=hours)
                tres = f"billing={gpus * 8},cpu={gpus * 8},gres/gpu={gpus},mem={gpus * 64}G"
                tres += f",node={nodes}"
                common = [_stamp(submit), _stamp(start), _stamp(end), _hms(hours), str(nodes)]
                rows.append(
                    [str(job), f"u{t}{k}", team, "gpu", name, *common, tres, "COMPLETED", "0:0"]
                )
                rows.append(
                    [f"{job}.batch", "", team, "", "batch", *common, tres, "COMPLETED", "0:0"]
                )
                job += 1
    return rows


def sacct_text(
    delimiter: str = "|", *, header: bool = False, trailing: bool = True, days: int = 14
) -> bytes:
    """`sacct [--noheader] --parsable[2] --delimiter=X -o FIELDS` output."""
    end = delimiter if trailing else ""
    lines = [delimiter.join(FIELDS) + end] if header else []
    lines += [delimiter.join(r) + end for r in records(days)]
    return ("\n".join(lines) + "\n").encode()


def slurmdbd_jobs(days: int = 7, first_id: int = 9000) -> bytes:
    """A slurmdbd `/slurmdb/v0.0.40/jobs` response holding the same kind of jobs."""
    jobs = []
    for r in records(days, first_id):
        if "." in r[0]:
            continue
        submit, start, end = (
            int(datetime.strptime(v, "%Y-%m-%dT%H:%M:%S").timestamp()) for v in r[5:8]
        )
        gpus = int(r[10].split("gres/gpu=")[1].split(",")[0])
        jobs.append(
            {
                "job_id": int(r[0]),
                "user": r[1],
                "account": r[2],
                "partition": r[3],
                "name": r[4],
                "time": {"submission": submit, "start": start, "end": end},
                "allocation_nodes": int(r[9]),
                "tres": {
                    "allocated": [
                        {"type": "cpu", "name": "", "count": gpus * 8},
                        {"type": "gres", "name": "gpu", "count": gpus},
                    ]
                },
                "state": {"current": ["COMPLETED"]},
                "exit_code": {"return_code": {"set": True, "infinite": False, "number": 0}},
            }
        )
    return json.dumps(
        {"meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}}, "jobs": jobs}
    ).encode()


NOTHING_FOUND = json.dumps(
    {
        "meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}},
        "errors": [
            {
                "description": "slurmdb_jobs_get() found nothing",
                "error_number": 9003,
                "error": "Nothing found",
                "source": "slurmdb_jobs_get",
            }
        ],
        "warnings": [],
        "jobs": [],
    }
).encode()
"""slurmdbd's answer for a time range with no jobs."""


def grid_swf(days: int = 10) -> bytes:
    """A grid log converted to SWF (as the Grid Workloads Archive does): relative submit times
    after the header's UnixStartTime, waits unknown (-1), one processor per job, and a
    header whose StartTime-EndTime spans `days` days (the last submit comes earlier).
    """
    header = [
        "; Version: 2.2",
        "; Computer: Example grid site",
        "; Installation: a university grid, converted from its accounting logs",
        "; MaxJobs: 0",
        "; UnixStartTime: 1704067200",
        "; TimeZoneString: Europe/Amsterdam",
        "; StartTime: Mon Jan  1 01:00:00 CET 2024",
        f"; EndTime: Thu Jan {1 + days:2d} 01:00:00 CET 2024",
        "; MaxNodes: 64",
        "; MaxProcs: 64",
        "; Note: wait times were not recorded; -1 throughout",
        ";",
    ]
    rows = []
    job = 1
    for day in range(days - 2):
        for k in range(6):
            submit = day * 86400 + k * 3600
            run = 7200 if k % 2 else 3600
            procs = 1 + (k % 3)
            fields = [job, submit, -1, run, procs, -1, -1, procs, 14400, -1, 1, 3 + k % 2, 1]
            fields += [-1, 1, 1, -1, -1]
            rows.append(" ".join(str(f) for f in fields))
            job += 1
    return ("\n".join(header + rows) + "\n").encode()


def extended_swf() -> bytes:
    """A scheduling simulator's extended SWF: 21 fields, absolute epoch submit times, memory in
    bytes, and three extra fields (here GPUs per job, a project id and a flag) after the 18."""
    rows = []
    for job in range(1, 41):
        submit = 1709539200 + job * 1800
        fields = [job, submit, 300, 3600, 8, -1, 64 * 2**30, 8, 7200, 64 * 2**30, 1, job % 4]
        fields += [1, -1, 1, 1, -1, -1, 8, 17, 0]
        rows.append("\t".join(str(f) for f in fields))
    return ("\n".join(rows) + "\n").encode()
