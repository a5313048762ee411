"""Standard Workload Format (Parallel Workloads Archive, v2.2) logs into the job table.

SWF carries no GPUs: `gpus_per_proc` converts processors to GPUs (default 0, so an HPC log
reads as CPU-only and shows the cluster's shape without inventing GPU demand). Times are
seconds after the header's `UnixStartTime`, shown in its `TimeZoneString` unless `tz` is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import polars as pl

from cluster_decide.inventory.detect import Source, lines_frame, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import (
    ReadReport,
    ReadResult,
    check_zone,
    conform,
    enforce_threshold,
    record_bad,
)
from cluster_decide.inventory.sanity import EARLIEST, MAX_JOB_GPUS, latest

__all__ = ["SWF_FIELDS", "SWF_STATUS", "SwfHeader", "parse_swf_header", "read_swf"]

SWF_FIELDS = (
    "job",
    "submit",
    "wait",
    "run",
    "procs",
    "cpu_time",
    "memory",
    "req_procs",
    "req_time",
    "req_memory",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
"""The 18 SWF fields in file order (units: seconds, processors, KB per processor)."""

SWF_STATUS = {
    1: "COMPLETED",
    0: "FAILED",
    5: "CANCELLED",
    2: "COMPLETED",
    3: "FAILED",
    4: "PREEMPTED",
}
"""SWF status code -> job state. 2 and 3 end a checkpointed job (completed, failed); 4 is a
partial execution that continues later, closest to Slurm's PREEMPTED. -1 -> UNKNOWN."""


@dataclass(frozen=True)
class SwfHeader:
    """What the `;` header comments say: start time, zone, machine size, queue names."""

    unix_start_time: int | None = None
    time_zone: str | None = None
    span_days: float | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    computer: str | None = None
    queues: dict[int, str] = field(default_factory=dict)
    partitions: dict[int, str] = field(default_factory=dict)


def _int(text: str) -> int | None:
    try:
        return int(float(text.split()[0]))
    except (ValueError, IndexError):
        return None


_HEADER_TIME = re.compile(r"^\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d\d:\d\d:\d\d)\s+(?:\S+\s+)?(\d{4})$")
"""`Tue Jan  1 00:00:00 CET 2002`: the header's StartTime and EndTime (the zone is dropped)."""


def _header_time(text: str) -> datetime | None:
    """A header StartTime/EndTime as a naive datetime, or None when absent or unreadable.

    Only the span between the two is used, so the zone abbreviation (which may change with
    daylight saving between them: an hour in a log of months) is dropped.
    """
    match = _HEADER_TIME.match(text.strip())
    if not match:
        return None
    month, day, clock, year = match.groups()
    try:
        return datetime.strptime(f"{year} {month} {day} {clock}", "%Y %b %d %H:%M:%S")
    except ValueError:
        return None


def parse_swf_header(lines: list[str]) -> SwfHeader:
    """Parse `; Key: value` comment lines (others, such as continuation notes, are ignored)."""
    values: dict[str, str] = {}
    queues: dict[int, str] = {}
    partitions: dict[int, str] = {}
    for raw in lines:
        body = raw.lstrip().lstrip(";").strip()
        key, sep, value = body.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key in ("Queue", "Partition"):
            num, _, label = value.partition(" ")
            number = _int(num)
            if number is not None:
                (queues if key == "Queue" else partitions)[number] = label.strip()
        elif key not in values:
            values[key] = value
    start, end = (_header_time(values.get(k, "")) for k in ("StartTime", "EndTime"))
    span = (end - start).total_seconds() / 86400.0 if start and end else None
    return SwfHeader(
        unix_start_time=_int(values.get("UnixStartTime", "")),
        time_zone=values.get("TimeZoneString") or None,
        span_days=span if span is not None and span > 0 else None,
        max_nodes=_int(values.get("MaxNodes", "")),
        max_procs=_int(values.get("MaxProcs", "")),
        computer=values.get("Computer") or None,
        queues=queues,
        partitions=partitions,
    )


def _plausible(base: int, first_submit: float, gpus_per_proc: float) -> list[pl.Expr]:
    """Reasons for implausible dates (when the times are dates) and GPU counts, per row.

    Times are dates when the header gives UnixStartTime or the submit times are absolute
    epoch seconds; relative times without a start are not (they count from 1970).
    """
    checks: list[pl.Expr] = []
    low = EARLIEST.replace(tzinfo=timezone.utc).timestamp()
    if base or first_submit >= low:
        high = latest().replace(tzinfo=timezone.utc).timestamp()
        when = pl.col("submit") + base
        checks.append(
            pl.when((when < low) | (when > high)).then(
                pl.format(
                    "implausible date: expected submit from 1980 to today, got {}",
                    pl.from_epoch(
                        when.fill_nan(0.0).clip(-6e10, 2e11).cast(pl.Int64), time_unit="s"
                    ).dt.date(),
                )
            )
        )
    if gpus_per_proc > 0:
        procs = pl.when(pl.col("procs") > 0).then(pl.col("procs")).otherwise(pl.col("req_procs"))
        gpus = procs * gpus_per_proc  # as the job table counts them
        checks.append(
            pl.when(gpus.round(0) >= MAX_JOB_GPUS).then(
                pl.format(
                    f"implausible GPU count: expected fewer than {MAX_JOB_GPUS:,} GPUs in one "
                    "job, got {} (processors x gpus_per_proc)",
                    gpus.round(0),
                )
            )
        )
    return checks


def _extended_error(
    name: str, frame: pl.DataFrame, width: int, header: SwfHeader
) -> InventoryError:
    """The refusal of an extended SWF: the variant seen, and the option that reads it."""
    submit = frame["_p"].list.get(1, null_on_oob=True).cast(pl.Float64, strict=False)
    epoch = submit.min()
    absolute = (
        "; its submit times look like absolute epoch seconds"
        if isinstance(epoch, float) and epoch > 1e9 and header.unix_start_time is None
        else ""
    )
    return InventoryError(
        name,
        f"an extended SWF: {width} fields per line where SWF v2.2 has 18{absolute}",
        expected="extended=True (ingest --swf-extended) to read the first 18 fields as SWF "
        "v2.2 and ignore the rest, once you have checked that they are in SWF order",
    )


def read_swf(
    source: Source,
    *,
    tz: str | None = None,
    gpus_per_proc: float = 0.0,
    procs_per_node: int | None = None,
    extended: bool = False,
    max_bad_fraction: float = 0.05,
) -> ReadResult:
    """Read an SWF log into the job table.

    `gpus_per_proc` turns processors into GPUs (gpus = round(procs x gpus_per_proc)); use it
    to replay an HPC log as if each processor, or each node's share, were a GPU. Nodes are
    `ceil(procs / procs_per_node)`; without it, processors count as nodes only when the
    header says MaxNodes == MaxProcs, else nodes are null. A wait of -1 leaves `start` and
    `end` null (no invented waits: the waits are unknown, not zero); a runtime of -1 gives
    elapsed 0, counted in the notes. The header's StartTime and EndTime, when present, give
    the report's `span_days`, the window the log covers.
    An extended SWF (more than 18 fields per line, as scheduling simulators write, often with
    absolute epoch submit times and memory in bytes) is refused unless `extended=True`,
    which reads its first 18 fields as SWF v2.2 and ignores the rest; submit times past the
    header's UnixStartTime are then taken as absolute epoch seconds. Memory is never read.
    """
    name = source_name(source)
    report = ReadReport(source=name, format="swf")
    lines = lines_frame(source).with_columns(pl.col("text").str.strip_chars().alias("_t"))
    header = parse_swf_header(lines.filter(pl.col("_t").str.starts_with(";"))["_t"].to_list())
    content = lines.filter((pl.col("_t") != "") & ~pl.col("_t").str.starts_with(";"))
    if content.is_empty():
        raise InventoryError(name, "no job lines", expected="SWF: 18 numbers per line")
    first_no, first = content.select("line_no", "_t").row(0)
    if not (first[:1].isdigit() or first[:1] == "-"):
        raise InventoryError(
            name,
            f"does not look like SWF: {first[:60]!r}",
            line=first_no,
            expected="18 whitespace-separated numbers per line",
        )
    report.rows_read = content.height
    parts = pl.col("_t").str.extract_all(r"\S+")
    frame = content.with_columns(parts.alias("_p")).with_columns(
        pl.col("_p").list.len().alias("_n")
    )
    width = int(frame["_n"].mode().sort()[-1])
    if width > len(SWF_FIELDS) and not extended:
        raise _extended_error(name, frame, width, header)
    expected = max(width, len(SWF_FIELDS)) if extended else len(SWF_FIELDS)
    frame = frame.with_columns(
        pl.col("_p").list.get(i, null_on_oob=True).cast(pl.Float64, strict=False).alias(f)
        for i, f in enumerate(SWF_FIELDS)
    )
    checks: list[pl.Expr] = [
        pl.when(pl.col("_n") != expected).then(
            pl.format(f"wrong number of fields: expected {expected}, got {{}}", pl.col("_n"))
        )
    ]
    checks += [
        pl.when(pl.col(f).is_null() | ~pl.col(f).is_finite() | (pl.col(f).abs() > 1e15)).then(
            pl.format(
                f"bad {f}: expected a number, got '{{}}'",
                pl.col("_p").list.get(i, null_on_oob=True),
            )
        )
        for i, f in enumerate(SWF_FIELDS)
    ]
    checks.append(
        pl.when(pl.col("submit") < 0).then(
            pl.format("bad submit: expected seconds >= 0, got {}", pl.col("submit"))
        )
    )
    base = header.unix_start_time or 0
    finite = frame.filter(pl.col("submit").is_finite())["submit"]
    first_submit = float(finite.min()) if finite.len() else 0.0  # type: ignore[arg-type]
    absolute = extended and bool(base) and first_submit >= base
    if absolute:
        base = 0
    checks += _plausible(base, first_submit, gpus_per_proc)
    frame = frame.with_columns(pl.coalesce(checks).alias("reason"))
    record_bad(report, frame.filter(pl.col("reason").is_not_null()))
    good = frame.filter(pl.col("reason").is_null())
    report.rows_used = good.height

    zone = tz or header.time_zone or "UTC"
    if tz is None and header.time_zone is not None:
        try:
            check_zone(header.time_zone)
        except InventoryError:
            zone = "UTC"
            report.notes.append(
                f"TimeZoneString {header.time_zone!r} is no zone the reader knows: times shown "
                "in UTC (tz= / --tz to choose one)"
            )
    if header.unix_start_time is None:
        report.notes.append("no UnixStartTime in the header: times count from 1970-01-01")
    if tz is None and header.time_zone is None:
        report.notes.append("no TimeZoneString in the header: times shown in UTC")
    if extended:
        report.format = "swf_extended"
        report.notes.append(
            f"extended SWF, {width} fields per line: the first 18 read as SWF v2.2, the "
            f"other {width - 18} ignored (memory is never read)"
        )
    if absolute:
        report.notes.append("submit times are absolute epoch seconds, not from UnixStartTime")
    if header.span_days is not None:
        report.span_days = header.span_days
        report.notes.append(f"the header's StartTime to EndTime spans {header.span_days:.1f} days")
    procs = pl.when(pl.col("procs") > 0).then(pl.col("procs")).otherwise(pl.col("req_procs"))
    procs = pl.when(procs > 0).then(procs).otherwise(None).cast(pl.Int64)
    if procs_per_node:
        nodes = (procs.cast(pl.Float64) / procs_per_node).ceil().cast(pl.Int64)
    elif header.max_nodes and header.max_nodes == header.max_procs:
        nodes = procs
    else:
        nodes = pl.lit(None, dtype=pl.Int64)
    submit_s = (pl.col("submit") + base).round(0).cast(pl.Int64)
    start_s = pl.when(pl.col("wait") >= 0).then(submit_s + pl.col("wait").round(0).cast(pl.Int64))
    end_s = pl.when(pl.col("run") >= 0).then(start_s + pl.col("run").round(0).cast(pl.Int64))
    to_time = {
        k: pl.from_epoch(e, time_unit="s").dt.replace_time_zone("UTC").dt.convert_time_zone(zone)
        for k, e in (("submit", submit_s), ("start", start_s), ("end", end_s))
    }
    queue_names = (
        pl.col("queue")
        .cast(pl.Int64)
        .replace_strict(header.queues, default=None, return_dtype=pl.String)
    )
    queue = pl.when(pl.col("queue") >= 0).then(
        pl.coalesce(queue_names, pl.col("queue").cast(pl.Int64).cast(pl.String))
    )
    status = (
        pl.col("status")
        .cast(pl.Int64)
        .replace_strict(SWF_STATUS, default="UNKNOWN", return_dtype=pl.String)
    )
    interactive = (
        queue.str.contains("(?i)interactive") if header.queues else pl.lit(None, dtype=pl.Boolean)
    )
    jobs = good.select(
        pl.col("job").cast(pl.Int64).cast(pl.String).alias("job_id"),
        pl.when(pl.col("user") >= 0)
        .then(pl.col("user").cast(pl.Int64).cast(pl.String))
        .alias("user"),
        pl.when(pl.col("group") >= 0)
        .then(pl.col("group").cast(pl.Int64).cast(pl.String))
        .alias("account"),
        queue.alias("partition"),
        *[v.alias(k) for k, v in to_time.items()],
        pl.when(pl.col("run") >= 0).then(pl.col("run")).otherwise(0.0).alias("elapsed_s"),
        (procs.cast(pl.Float64) * gpus_per_proc).round(0).cast(pl.Int64).fill_null(0).alias("gpus"),
        nodes.alias("nodes"),
        procs.alias("cpus"),
        status.alias("state"),
        pl.when(pl.col("executable") >= 0)
        .then(pl.format("app {}", pl.col("executable").cast(pl.Int64)))
        .alias("name"),
        interactive.alias("interactive"),
    )
    unknown_run = good.filter(pl.col("run") < 0).height
    if unknown_run:
        report.notes.append(f"{unknown_run} jobs with unknown runtime (-1) count 0 seconds")
    unknown_wait = good.filter(pl.col("wait") < 0).height
    if unknown_wait:
        report.notes.append(
            f"{unknown_wait} jobs with unknown wait (-1): start and end null; their waits are "
            "unknown, not zero, and their GPU time is placed at submit for the busy hours"
        )
    if gpus_per_proc == 0:
        report.notes.append("SWF has no GPUs; gpus_per_proc=0, so every job reads as CPU-only")
    if header.max_procs:
        report.notes.append(f"MaxProcs {header.max_procs}, MaxNodes {header.max_nodes}")
    jobs = conform(jobs, zone)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)
