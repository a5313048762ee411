"""Public GPU traces into the job table: Alibaba GPU v2023 (openb), Philly runtimes, PAI v2020.

Each trace gives less than a Slurm export, and each reader says what it leaves out in the
report's notes instead of filling gaps with guesses:

* openb pods: GPUs, CPUs, QoS and lifetimes of Kubernetes pods, in seconds from the trace
  start; no users or teams; shared-GPU pods (`gpu_milli` < 1000) still count a whole GPU.
* Philly runtime CSV: a runtime distribution only (no GPUs, users, times or states).
* Philly `cluster_job_log` (JSON, from its README's schema): GPUs per attempt, retries.
* PAI v2020 job and task tables: per-job GPUs as the sum of `inst_num x plan_gpu / 100`.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from typing import Any

import polars as pl

from cluster_decide.inventory.detect import Source, read_bytes, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import (
    ReadReport,
    ReadResult,
    conform,
    enforce_threshold,
    localize,
    normalize_gpu_type,
    record_bad,
)

__all__ = [
    "OPENB_PHASES",
    "PAI_JOB_COLUMNS",
    "PAI_STATUS",
    "PAI_TASK_COLUMNS",
    "PHILLY_STATUS",
    "read_openb",
    "read_openb_nodes",
    "read_pai",
    "read_philly_jobs",
    "read_philly_runtime",
]

OPENB_PHASES = {
    "Running": "RUNNING",
    "Succeeded": "COMPLETED",
    "Failed": "FAILED",
    "Pending": "PENDING",
}
"""openb `pod_phase` -> job state."""

PAI_STATUS = {
    "Terminated": "COMPLETED",
    "Failed": "FAILED",
    "Running": "RUNNING",
    "Waiting": "PENDING",
}
"""PAI v2020 status -> job state (only Terminated means success)."""

PHILLY_STATUS = {"Pass": "COMPLETED", "Killed": "CANCELLED", "Failed": "FAILED"}
"""Philly job status -> job state (a job whose last attempt has no end is RUNNING)."""

PAI_JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
PAI_TASK_COLUMNS = (
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
)
_OPENB_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
_DEFAULT_START = datetime(2023, 1, 2, tzinfo=timezone.utc)


def _csv(source: Source, columns: tuple[str, ...] | None, what: str) -> pl.DataFrame:
    """All-string CSV with a `line_no` column; headerless when `columns` are given and absent."""
    name = source_name(source)
    raw = read_bytes(source)
    if not raw.strip():
        raise InventoryError(name, "file is empty", expected=what)
    first = raw.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
    has_header = columns is None or first.split(",")[0] == columns[0]
    try:
        df = pl.read_csv(
            io.BytesIO(raw),
            has_header=has_header,
            new_columns=None if has_header else list(columns or ()),
            infer_schema=False,
            truncate_ragged_lines=False,
            encoding="utf8-lossy",
        )
    except pl.exceptions.PolarsError as exc:
        raise InventoryError(
            name, f"not a readable CSV: {str(exc).splitlines()[0]}", expected=what
        ) from None
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise InventoryError(
                name, f"missing columns {missing}; found {df.columns[:12]}", expected=what
            )
    return df.with_row_index("line_no", offset=2 if has_header else 1).with_columns(
        pl.col("line_no").cast(pl.Int64)
    )


def _text(df: pl.DataFrame) -> pl.Expr:
    return pl.concat_str(
        [pl.col(c).fill_null("") for c in df.columns if c != "line_no"], separator=","
    )


def read_openb(
    pods: Source,
    *,
    start: datetime = _DEFAULT_START,
    tz: str = "UTC",
    max_bad_fraction: float = 0.05,
) -> ReadResult:
    """Read an Alibaba GPU v2023 (openb) pod list into the job table.

    Times are seconds from the trace start, placed after `start` (the real dates are not
    published, so the hour-of-week profile is only as true as `start`). A running pod's
    `deletion_time` is the end of the trace, so its end is left null (censored) and its
    elapsed time is a lower bound.
    """
    name = source_name(pods)
    report = ReadReport(source=name, format="openb")
    df = _csv(pods, _OPENB_COLUMNS, "the openb pod list columns " + ",".join(_OPENB_COLUMNS))
    report.rows_read = df.height
    nums = ("cpu_milli", "num_gpu", "creation_time")
    checks = [
        pl.when(pl.col(c).cast(pl.Float64, strict=False).is_null()).then(
            pl.format(f"bad {c}: expected a number, got '{{}}'", pl.col(c).fill_null(""))
        )
        for c in nums
    ]
    checks.append(
        pl.when(~pl.col("pod_phase").is_in(list(OPENB_PHASES))).then(
            pl.format(
                "bad pod_phase: expected Running, Succeeded, Failed or Pending, got '{}'",
                pl.col("pod_phase").fill_null(""),
            )
        )
    )
    df = df.with_columns(pl.coalesce(checks).alias("reason"), _text(df).alias("text"))
    record_bad(report, df.filter(pl.col("reason").is_not_null()))
    good = df.filter(pl.col("reason").is_null())
    report.rows_used = good.height
    base = int(start.timestamp())

    def at(col: str) -> pl.Expr:
        secs = pl.col(col).cast(pl.Float64, strict=False).round(0).cast(pl.Int64)
        return (
            pl.from_epoch(secs + base, time_unit="s")
            .dt.replace_time_zone("UTC")
            .dt.convert_time_zone(tz)
        )

    running = pl.col("pod_phase") == "Running"
    sched = pl.col("scheduled_time").cast(pl.Float64, strict=False)
    deleted = pl.col("deletion_time").cast(pl.Float64, strict=False)
    jobs = good.select(
        pl.col("name").alias("job_id"),
        pl.col("qos").alias("partition"),
        at("creation_time").alias("submit"),
        at("scheduled_time").alias("start"),
        pl.when(~running).then(at("deletion_time")).alias("end"),
        pl.when(sched.is_not_null() & deleted.is_not_null())
        .then((deleted - sched).clip(lower_bound=0.0))
        .otherwise(0.0)
        .alias("elapsed_s"),
        pl.col("num_gpu").cast(pl.Float64, strict=False).cast(pl.Int64).alias("gpus"),
        normalize_gpu_type(pl.col("gpu_spec").str.split("|").list.first()).alias("gpu_type"),
        pl.lit(1, dtype=pl.Int64).alias("nodes"),
        (pl.col("cpu_milli").cast(pl.Float64, strict=False) / 1000.0)
        .ceil()
        .cast(pl.Int64)
        .alias("cpus"),
        pl.col("pod_phase").replace_strict(OPENB_PHASES, default="UNKNOWN").alias("state"),
    )
    shared = good.filter(
        (pl.col("num_gpu") == "1") & (pl.col("gpu_milli").cast(pl.Float64, strict=False) < 1000)
    ).height
    n_running = good.filter(running).height
    report.notes += [
        f"times are seconds after {start.isoformat()} (the trace's real dates are unknown)",
        f"{shared} pods share a GPU (gpu_milli < 1000); each counts one whole GPU",
        f"{n_running} running pods are censored at the trace end: end null, elapsed a lower bound",
        "no users or teams in this trace; account is null",
    ]
    jobs = conform(jobs, tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)


def read_openb_nodes(nodes: Source) -> pl.DataFrame:
    """The openb GPU node list as capacity: columns `gpu_type`, `nodes`, `gpus`, `cpus`.

    Pods are not mapped to nodes in the trace, so this gives the estate's GPU model mix and
    capacity (for utilization evidence), not each pod's GPU type.
    """
    df = _csv(nodes, ("sn", "cpu_milli", "memory_mib", "gpu", "model"), "the openb node list")
    return (
        df.group_by(normalize_gpu_type(pl.col("model")).alias("gpu_type"))
        .agg(
            pl.len().cast(pl.Int64).alias("nodes"),
            pl.col("gpu").cast(pl.Int64, strict=False).sum().alias("gpus"),
            (pl.col("cpu_milli").cast(pl.Float64, strict=False).sum() / 1000.0)
            .cast(pl.Int64)
            .alias("cpus"),
        )
        .sort("gpu_type")
    )


def read_philly_runtime(
    source: Source, *, gpus_per_job: int = 1, max_bad_fraction: float = 0.05
) -> ReadResult:
    """Read the Philly runtime CSV (one `runtime` column, seconds): a runtime distribution.

    The file has no GPUs, users, submit times or states. Jobs get `gpus_per_job` GPUs and
    state UNKNOWN, and null times, so only duration statistics are meaningful; the notes say so.
    """
    name = source_name(source)
    report = ReadReport(source=name, format="philly_runtime")
    df = _csv(source, ("runtime",), "a 'runtime' column in seconds")
    report.rows_read = df.height
    secs = pl.col("runtime").cast(pl.Float64, strict=False)
    df = df.with_columns(
        pl.when(secs.is_null() | (secs < 0))
        .then(
            pl.format(
                "bad runtime: expected seconds >= 0, got '{}'", pl.col("runtime").fill_null("")
            )
        )
        .alias("reason"),
        pl.col("runtime").fill_null("").alias("text"),
    )
    record_bad(report, df.filter(pl.col("reason").is_not_null()))
    good = df.filter(pl.col("reason").is_null())
    report.rows_used = good.height
    jobs = good.select(
        pl.format("philly-{}", pl.col("line_no") - 1).alias("job_id"),
        secs.alias("elapsed_s"),
        pl.lit(gpus_per_job, dtype=pl.Int64).alias("gpus"),
        pl.lit("UNKNOWN").alias("state"),
    )
    report.notes.append(
        f"runtime distribution only: GPUs set to gpus_per_job={gpus_per_job}; no users, "
        "times, states or queue waits"
    )
    jobs = conform(jobs, "UTC")
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)


def read_pai(
    jobs_table: Source,
    tasks_table: Source,
    *,
    tz: str = "Asia/Shanghai",
    max_bad_fraction: float = 0.05,
) -> ReadResult:
    """Read the Alibaba PAI v2020 job and task tables (headerless or with a header).

    GPUs per job = ceil(sum over tasks of inst_num x plan_gpu / 100) (plan_gpu is percent of
    a GPU); CPUs likewise from plan_cpu; nodes = instances (containers), an upper bound on
    machines. Job `start_time` is the submission; start is the earliest task start. Times are
    shifted epoch seconds that keep the true time of day in UTC+8, hence `tz`.
    """
    name = source_name(jobs_table)
    report = ReadReport(source=name, format="pai")
    jobs_df = _csv(jobs_table, PAI_JOB_COLUMNS, "pai_job_table columns")
    tasks_df = _csv(tasks_table, PAI_TASK_COLUMNS, "pai_task_table columns")
    report.rows_read = jobs_df.height
    checks = [
        pl.when(pl.col("job_name").is_null() | (pl.col("job_name") == "")).then(
            pl.lit("bad job_name: expected a name, got ''")
        ),
        pl.when(pl.col("start_time").cast(pl.Float64, strict=False).is_null()).then(
            pl.format(
                "bad start_time: expected epoch seconds, got '{}'",
                pl.col("start_time").fill_null(""),
            )
        ),
        pl.when(~pl.col("status").is_in(list(PAI_STATUS))).then(
            pl.format(
                "bad status: expected Terminated, Failed, Running or Waiting, got '{}'",
                pl.col("status").fill_null(""),
            )
        ),
    ]
    jobs_df = jobs_df.with_columns(
        pl.coalesce(checks).alias("reason"), _text(jobs_df).alias("text")
    )
    record_bad(report, jobs_df.filter(pl.col("reason").is_not_null()))
    good = jobs_df.filter(pl.col("reason").is_null())
    report.rows_used = good.height

    def num(c: str) -> pl.Expr:
        return pl.col(c).cast(pl.Float64, strict=False)

    per_job = tasks_df.group_by("job_name").agg(
        (num("inst_num").fill_null(1) * num("plan_gpu").fill_null(0) / 100.0).sum().alias("_gpu"),
        (num("inst_num").fill_null(1) * num("plan_cpu").fill_null(0) / 100.0).sum().alias("_cpu"),
        num("inst_num").fill_null(1).sum().alias("_inst"),
        num("start_time").min().alias("_start"),
        pl.col("gpu_type")
        .filter(pl.col("gpu_type") != "MISC")
        .drop_nulls()
        .first()
        .alias("_gtype"),
    )
    merged = good.join(per_job, on="job_name", how="left")
    no_tasks = merged.filter(pl.col("_inst").is_null()).height
    if no_tasks:
        report.notes.append(f"{no_tasks} jobs have no task rows: 0 GPUs")

    def at(expr: pl.Expr) -> pl.Expr:
        return (
            pl.from_epoch(expr.round(0).cast(pl.Int64), time_unit="s")
            .dt.replace_time_zone("UTC")
            .dt.convert_time_zone(tz)
        )

    end = num("end_time")
    started = pl.col("_start")
    jobs = merged.select(
        pl.col("job_name").alias("job_id"),
        pl.col("user"),
        at(num("start_time")).alias("submit"),
        at(started).alias("start"),
        pl.when(end > 0).then(at(end)).alias("end"),
        pl.when((end > 0) & started.is_not_null())
        .then((end - started).clip(lower_bound=0.0))
        .otherwise(0.0)
        .alias("elapsed_s"),
        pl.col("_gpu").fill_null(0.0).ceil().cast(pl.Int64).alias("gpus"),
        normalize_gpu_type(pl.col("_gtype")).alias("gpu_type"),
        pl.col("_inst").cast(pl.Int64).alias("nodes"),
        pl.col("_cpu").ceil().cast(pl.Int64).alias("cpus"),
        pl.col("status").replace_strict(PAI_STATUS, default="UNKNOWN").alias("state"),
    )
    report.notes.append("times shifted by a secret constant: true time of day, fake dates")
    jobs = conform(jobs, tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)


def _philly_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or value in ("", "None"):
        return None
    return datetime.strptime(value.strip(), "%Y-%m-%d %H:%M:%S")


def _philly_row(job: dict[str, Any]) -> dict[str, Any]:
    """One Philly job: the last attempt gives GPUs and nodes, all attempts give the time."""
    attempts = [a for a in job.get("attempts") or [] if isinstance(a, dict)]
    spans = []
    for attempt in attempts:
        start, end = _philly_time(attempt.get("start_time")), _philly_time(attempt.get("end_time"))
        spans.append((start, end))
    last = attempts[-1] if attempts else {}
    detail = [d for d in last.get("detail") or [] if isinstance(d, dict)]
    gpus = sum(len(d.get("gpus") or []) for d in detail)
    starts = [a for a, _ in spans if a is not None]
    running = bool(spans) and spans[-1][0] is not None and spans[-1][1] is None
    elapsed = sum((b - a).total_seconds() for a, b in spans if a is not None and b is not None)
    status = str(job.get("status") or "")
    if status not in PHILLY_STATUS and not running:
        raise ValueError(f"status: expected Pass, Killed or Failed, got {status!r}")
    return {
        "job_id": str(job["jobid"]),
        "user": job.get("user"),
        "account": job.get("vc"),
        "submit": _philly_time(job.get("submitted_time")),
        "start": min(starts) if starts else None,
        "end": None if running or not spans else spans[-1][1],
        "elapsed_s": max(elapsed, 0.0),
        "gpus": gpus,
        "nodes": len(detail) or None,
        "state": "RUNNING" if running else PHILLY_STATUS[status],
        "attempts": len(attempts),
    }


def read_philly_jobs(
    source: Source, *, tz: str = "America/Los_Angeles", max_bad_fraction: float = 0.05
) -> ReadResult:
    """Read Philly's `cluster_job_log` (a JSON list) into the job table.

    Written from the schema in msr-fiddle/philly-traces' README (tested on
    fixtures written to it). GPUs and nodes are those of the last attempt; elapsed sums every
    attempt's run time, so retried jobs count all the GPU time they used. Times carry no zone;
    the cluster's utilisation files say PDT/PST, hence the default `tz`.
    """
    name = source_name(source)
    report = ReadReport(source=name, format="philly_jobs")
    raw = read_bytes(source)
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise InventoryError(
            name, "not valid JSON", line=line, expected="Philly cluster_job_log (a JSON list)"
        ) from None
    if not isinstance(doc, list) or not doc:
        raise InventoryError(name, "no job list", expected="a non-empty JSON list of jobs")
    report.rows_read = len(doc)
    rows = []
    for i, job in enumerate(doc, start=1):
        try:
            if not isinstance(job, dict) or "jobid" not in job:
                raise ValueError("expected an object with a jobid")
            rows.append(_philly_row(job))
        except (ValueError, TypeError, KeyError) as exc:
            report.add_bad(i, f"bad job entry: [{i - 1}]: {exc}", json.dumps(job)[:300])
    report.rows_used = len(rows)
    when = pl.Datetime("us")
    schema = pl.Schema(
        {
            "job_id": pl.String(),
            "user": pl.String(),
            "account": pl.String(),
            "submit": when,
            "start": when,
            "end": when,
            "elapsed_s": pl.Float64(),
            "gpus": pl.Int64(),
            "nodes": pl.Int64(),
            "state": pl.String(),
            "attempts": pl.Int64(),
        }
    )
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    retried = frame.filter(pl.col("attempts") > 1).height
    if retried:
        report.notes.append(f"{retried} jobs ran more than one attempt; elapsed sums them")
    jobs = localize(frame, ["submit", "start", "end"], tz, report)
    jobs = conform(jobs, tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)
