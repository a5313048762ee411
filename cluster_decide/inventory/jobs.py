"""The tidy job table every reader produces, and the report that comes with every read.

One row per job allocation (steps are folded into it). Column names carry their unit
(`elapsed_s`); times are timezone-aware in the zone the reader was given, so hour-of-week
profiles come out in the estate's local time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import polars as pl

from cluster_decide.inventory.errors import InventoryError

__all__ = [
    "IMPOSSIBLE",
    "JOB_COLUMNS",
    "JOB_SCHEMA",
    "KNOWN_STATES",
    "MAX_BAD_LINES",
    "BadLine",
    "ReadReport",
    "ReadResult",
    "SkippedFile",
    "check_zone",
    "conform",
    "empty_jobs",
    "enforce_threshold",
    "gpu_hours",
    "job_schema",
    "localize",
    "normalize_gpu_type",
    "normalize_state",
    "record_bad",
    "split_bad",
    "time_zone_of",
]

MAX_BAD_LINES = 20
"""How many malformed lines a report quotes in full (all are counted)."""

JOB_COLUMNS: dict[str, str] = {
    "job_id": "str; scheduler job id as printed (`123`, array task `123_4`, het `123+0`)",
    "array_parent": "str | null; the array's job id for an array task, else null",
    "user": "str | null; user name or id",
    "account": "str | null; account, used as the team unless a user map says otherwise",
    "partition": "str | null; partition (Slurm), queue (SWF) or QoS class (traces)",
    "submit": "datetime[tz]; submission time",
    "start": "datetime[tz] | null; start, null when the job never started",
    "end": "datetime[tz] | null; end, null while running or never started",
    "elapsed_s": "float; wall-clock seconds the allocation ran (0 when it never started)",
    "gpus": "int; GPUs allocated (requested when never allocated), 0 for CPU jobs",
    "gpu_type": "str | null; GPU model (upper case catalog key such as H100) where known",
    "nodes": "int; nodes allocated (requested when never allocated)",
    "cpus": "int; CPUs allocated (requested when never allocated)",
    "state": "str; normalized state, one of KNOWN_STATES or the scheduler's own upper-case word",
    "exit_code": "int | null; exit code of the job script",
    "name": "str | null; job name",
    "interactive": (
        "bool | null; true for interactive allocations, null when the format cannot tell"
    ),
}
"""Column name -> type and meaning: the documented contract of the job table."""


def job_schema(tz: str = "UTC") -> dict[str, pl.DataType]:
    """Polars schema of the job table with times in zone `tz`."""
    when = pl.Datetime("us", tz)
    return {
        "job_id": pl.String(),
        "array_parent": pl.String(),
        "user": pl.String(),
        "account": pl.String(),
        "partition": pl.String(),
        "submit": when,
        "start": when,
        "end": when,
        "elapsed_s": pl.Float64(),
        "gpus": pl.Int64(),
        "gpu_type": pl.String(),
        "nodes": pl.Int64(),
        "cpus": pl.Int64(),
        "state": pl.String(),
        "exit_code": pl.Int64(),
        "name": pl.String(),
        "interactive": pl.Boolean(),
    }


JOB_SCHEMA = job_schema("UTC")
"""The job table schema with UTC times; readers use `job_schema(tz)` for their zone."""

KNOWN_STATES = (
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "OUT_OF_MEMORY",
    "NODE_FAIL",
    "PREEMPTED",
    "REQUEUED",
    "BOOT_FAIL",
    "DEADLINE",
    "RUNNING",
    "PENDING",
    "SUSPENDED",
)
"""Slurm's job states; every reader maps its own vocabulary onto these."""

_GPU_MODELS = (
    "GH200",
    "H200",
    "H100",
    "H800",
    "H20",
    "B200",
    "B100",
    "GB200",
    "A100",
    "A800",
    "A40",
    "A30",
    "A10G",
    "A10",
    "L40S",
    "L40",
    "L4",
    "V100M32",
    "V100",
    "T4",
    "P100",
    "K80",
    "MI300X",
    "MI250X",
    "MI250",
)


@dataclass(frozen=True)
class BadLine:
    """One malformed input line: where it is, why it was rejected, and its text."""

    line: int
    reason: str
    text: str


@dataclass(frozen=True)
class SkippedFile:
    """One input file of several that gave no jobs: which, and why (the reader's message)."""

    file: str
    reason: str


@dataclass
class ReadReport:
    """What a read did with every input row, so no row is lost without a trace.

    Invariant: `rows_read == rows_used + sum(skipped.values())`. Rows used include step rows
    folded into their allocation (`steps_collapsed`).
    """

    source: str
    format: str
    rows_read: int = 0
    rows_used: int = 0
    jobs_kept: int = 0
    steps_collapsed: int = 0
    malformed_rows: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    bad_lines: list[BadLine] = field(default_factory=list)
    ambiguous_times: int = 0
    nonexistent_times: int = 0
    notes: list[str] = field(default_factory=list)
    skipped_files: list[SkippedFile] = field(default_factory=list)
    span_days: float | None = None
    """Days the input says it covers (an SWF header's StartTime to EndTime), if it says."""

    def skip(self, reason: str, count: int = 1) -> None:
        """Count `count` rows skipped for `reason`."""
        if count:
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    def add_bad(self, line: int, reason: str, text: str) -> None:
        """Count one malformed row and quote it while fewer than MAX_BAD_LINES are quoted."""
        self.malformed_rows += 1
        self.skip(reason.split(":")[0])
        if len(self.bad_lines) < MAX_BAD_LINES:
            self.bad_lines.append(BadLine(line, reason, text[:300]))

    def summary(self) -> str:
        """A few plain lines for a terminal or a log."""
        parts = [
            f"{self.source} ({self.format}): {self.rows_read} rows read, {self.jobs_kept} jobs "
            f"kept, {self.steps_collapsed} step rows folded into their jobs"
        ]
        parts += [f"  skipped {n}: {reason}" for reason, n in sorted(self.skipped.items())]
        parts += [f"  line {b.line}: {b.reason}" for b in self.bad_lines]
        if self.ambiguous_times or self.nonexistent_times:
            parts.append(
                f"  {self.ambiguous_times} DST-ambiguous times read as the first occurrence, "
                f"{self.nonexistent_times} times in a DST gap moved forward one hour"
            )
        parts += [f"  note: {n}" for n in self.notes]
        if self.skipped_files:
            n = len(self.skipped_files)
            parts.append(f"  {n} file{'s' if n > 1 else ''} skipped, no jobs read from:")
            parts += [f"    {s.file}: {s.reason}" for s in self.skipped_files]
        return "\n".join(parts)


@dataclass(frozen=True)
class ReadResult:
    """A read's job table (schema `job_schema(tz)`) and its report."""

    jobs: pl.DataFrame
    report: ReadReport


def empty_jobs(tz: str = "UTC") -> pl.DataFrame:
    """An empty job table with the documented schema."""
    return pl.DataFrame(schema=job_schema(tz))


def conform(df: pl.DataFrame, tz: str = "UTC") -> pl.DataFrame:
    """Select, order and cast the job table columns; absent columns become null.

    GPU type names are normalized here (normalize_gpu_type), once for every reader.
    """
    schema = job_schema(tz)
    cols = []
    for name, dtype in schema.items():
        if name in df.columns:
            cols.append(pl.col(name).cast(dtype))
        else:
            cols.append(pl.lit(None, dtype=dtype).alias(name))
    out = df.select(cols)
    types = out["gpu_type"].drop_nulls().unique()
    if types.len():
        # Few distinct names: normalize those, then map, instead of a regex per row.
        mapping = pl.DataFrame({"raw": types}).with_columns(
            normalize_gpu_type(pl.col("raw")).alias("norm")
        )
        out = out.with_columns(
            pl.col("gpu_type").replace_strict(
                mapping["raw"], mapping["norm"], default=None, return_dtype=pl.String
            )
        )
    return out


def normalize_state(expr: pl.Expr) -> pl.Expr:
    """Upper-case first word of a state (`CANCELLED by 123` -> CANCELLED); empty -> UNKNOWN."""
    word = expr.str.strip_chars().str.to_uppercase().str.extract(r"^([A-Z_]+)", 1)
    return word.fill_null("UNKNOWN")


def normalize_gpu_type(expr: pl.Expr) -> pl.Expr:
    """Map a GPU name (`h100`, `nvidia_a100-sxm4-80gb`, `V100M32`) to a catalog-style key.

    The first known model token wins; an unknown name is kept upper-cased; empty -> null.
    """
    upper = expr.str.strip_chars().str.to_uppercase()
    pattern = "(" + "|".join(_GPU_MODELS) + ")"
    known = upper.str.extract(pattern, 1)
    out = pl.coalesce(known, upper)
    return pl.when(out.str.len_chars() > 0).then(out).otherwise(None)


def gpu_hours(df: pl.DataFrame) -> float:
    """Total GPU-hours of a job table: sum of gpus x elapsed_s / 3600."""
    if df.is_empty():
        return 0.0
    total = df.select((pl.col("gpus") * pl.col("elapsed_s")).sum() / 3600.0).item()
    return float(total or 0.0)


def localize(df: pl.DataFrame, columns: list[str], tz: str, report: ReadReport) -> pl.DataFrame:
    """Attach zone `tz` to naive datetime columns, resolving DST deterministically.

    sacct and trace times carry no offset. A wall time that occurs twice (autumn) is read as
    its first occurrence; one that never occurs (spring gap) is moved forward one hour, as the
    clock was. Both are counted in the report so the analyst can see how many there were.
    """
    if tz == "UTC":
        return df.with_columns(pl.col(c).dt.replace_time_zone("UTC") for c in columns)
    out = df.with_columns(
        pl.col(c).dt.replace_time_zone(tz, ambiguous="null", non_existent="null") for c in columns
    )
    for c in columns:
        # Only the rare rows in a DST fold or gap are resolved one by one (by index).
        lost = (out[c].is_null() & df[c].is_not_null()).arg_true()
        if lost.len() == 0:
            continue
        naive = df[c].gather(lost)
        first = naive.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
        moved = (naive + timedelta(hours=1)).dt.replace_time_zone(
            tz, ambiguous="earliest", non_existent="null"
        )
        fixed = pl.select(pl.coalesce(first, moved)).to_series()
        report.ambiguous_times += int(first.is_not_null().sum())
        report.nonexistent_times += int(first.is_null().sum())
        out = out.with_columns(out[c].scatter(lost, fixed))
    return out


IMPOSSIBLE = "impossible times"
"""The reason prefix of a row whose times are out of order (end before start, ...)."""


def enforce_threshold(report: ReadReport, max_bad_fraction: float) -> None:
    """Fail the read when malformed rows exceed `max_bad_fraction` of the rows read.

    Also fails when nothing usable was found, so an empty file is never a silent success.
    When most malformed rows fail the same time-order check, the message says the columns
    look swapped or mislabelled (Submit and End exchanged puts every end before its start).
    """
    if report.rows_read == 0:
        raise InventoryError(
            report.source, "no job rows found", expected=f"a non-empty {report.format} file"
        )
    frac = report.malformed_rows / report.rows_read
    order = [(n, r) for r, n in report.skipped.items() if r.startswith(IMPOSSIBLE)]
    if frac > max_bad_fraction and order and max(order)[0] * 2 > report.malformed_rows:
        n, reason = max(order)
        first = next((b for b in report.bad_lines if b.reason.startswith(reason)), None)
        where = f"; first at line {first.line}: {first.reason}" if first else ""
        raise InventoryError(
            report.source,
            f"the time columns look swapped or mislabelled: {n} of {report.rows_read} rows "
            f"({n / report.rows_read:.0%}) have {reason[len(IMPOSSIBLE) :].strip(' ()')}{where}",
            expected="Submit <= Start <= End; check the header, or the --fields order",
        )
    if frac > max_bad_fraction:
        first = report.bad_lines[0] if report.bad_lines else None
        detail = f"; first at line {first.line}: {first.reason}" if first else ""
        raise InventoryError(
            report.source,
            f"{report.malformed_rows} of {report.rows_read} rows are malformed "
            f"({frac:.1%} > max_bad_fraction {max_bad_fraction:.1%}){detail}",
        )
    if report.jobs_kept == 0 and report.rows_used == 0:
        raise InventoryError(report.source, "no usable job rows", expected=report.format)


def record_bad(report: ReadReport, bad: pl.DataFrame) -> None:
    """Count malformed rows (`line_no`, `reason`, `text`) and quote the first MAX_BAD_LINES.

    Rows are counted under the part of their reason before the first colon, so the report
    groups "bad Submit: got 'x'" and "bad Submit: got 'y'" together.
    """
    if bad.is_empty():
        return
    bad = bad.sort("line_no")
    report.malformed_rows += bad.height
    keys = bad.group_by(pl.col("reason").str.split(":").list.first().alias("key")).len()
    for key, n in keys.sort("key").iter_rows():
        report.skip(key, n)
    room = MAX_BAD_LINES - len(report.bad_lines)
    for line_no, reason, text in (
        bad.head(max(room, 0)).select("line_no", "reason", "text").iter_rows()
    ):
        report.bad_lines.append(BadLine(int(line_no), reason, (text or "")[:300]))


def split_bad(
    frame: pl.DataFrame, checks: list[tuple[pl.Expr, pl.Expr]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(good rows, bad rows with a `reason`) for checks of (is-bad condition, message).

    Conditions are evaluated on every row, messages only on the bad ones: formatting a
    message for millions of good rows would cost more than the whole parse.
    """
    none = frame.clear().with_columns(pl.lit(None, dtype=pl.String).alias("reason"))
    if not checks:
        return frame, none
    is_bad = frame.select(pl.any_horizontal([c.fill_null(False) for c, _ in checks])).to_series()
    if not is_bad.any():  # the usual case: no copy of the frame
        return frame, none
    # One chunk: polars 2.1 panics formatting messages over a many-chunk filter result.
    bad = (
        frame.filter(is_bad)
        .rechunk()
        .with_columns(
            pl.coalesce([pl.when(c.fill_null(False)).then(m) for c, m in checks]).alias("reason")
        )
    )
    return frame.filter(~is_bad), bad


def check_zone(tz: str, source: str = "tz") -> None:
    """Raise InventoryError unless `tz` is a time zone the readers can convert to."""
    try:
        pl.select(pl.lit(0).cast(pl.Datetime("us")).dt.replace_time_zone(tz))
    except (pl.exceptions.PolarsError, ValueError, OverflowError):
        raise InventoryError(
            source,
            f"unknown time zone {tz!r}",
            expected="an IANA zone name such as UTC, Europe/Berlin or America/Chicago",
        ) from None


def time_zone_of(jobs: pl.DataFrame, column: str = "submit") -> str:
    """The time zone of a job table's datetime column (UTC when it has none)."""
    return getattr(jobs.schema[column], "time_zone", None) or "UTC"
