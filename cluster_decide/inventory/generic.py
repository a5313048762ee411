"""Any CSV or Parquet job list, mapped onto the job table by a column map.

The map says which source column feeds which job-table column (`{"gpus": "num_gpus"}`), so an
export from any scheduler or data warehouse can be read without code. Times may be strings
(ISO 8601 or `time_format`) or epoch seconds.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from datetime import timezone

import polars as pl

from cluster_decide.inventory.detect import Source, read_bytes, read_head, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import (
    JOB_COLUMNS,
    ReadReport,
    ReadResult,
    conform,
    enforce_threshold,
    localize,
    normalize_gpu_type,
    normalize_state,
    record_bad,
    split_bad,
)
from cluster_decide.inventory.sanity import EARLIEST, gpu_check, state_check, time_checks

__all__ = ["REQUIRED_MAPPED", "read_table"]

REQUIRED_MAPPED = ("job_id",)
"""Job-table columns a column map must name; duration comes from elapsed_s or start/end."""

_TIMES = ("submit", "start", "end")
_INTS = ("gpus", "nodes", "cpus", "exit_code")


def _load(source: Source, fmt: str) -> pl.DataFrame:
    name = source_name(source)
    raw = read_bytes(source)
    if not raw.strip():
        raise InventoryError(name, "file is empty", expected=f"a {fmt} job list")
    try:
        if fmt == "parquet":
            df = pl.read_parquet(io.BytesIO(raw))
            return df.with_columns(pl.col(c).cast(pl.String) for c in df.columns)
        return pl.read_csv(io.BytesIO(raw), infer_schema=False, encoding="utf8-lossy")
    except pl.exceptions.PolarsError as exc:
        raise InventoryError(
            name, f"not a readable {fmt}: {str(exc).splitlines()[0]}", expected=fmt
        ) from None


def _is_epoch(values: pl.Series) -> bool:
    """True when the column's first non-empty values are all numbers (epoch seconds)."""
    sample = values.drop_nulls().str.strip_chars().filter(values.drop_nulls() != "").head(100)
    return sample.len() > 0 and sample.cast(pl.Float64, strict=False).null_count() == 0


def _sanity_checks(
    column_map: Mapping[str, str], naive: list[str], aware: list[str], tz: str, *, dates: bool
) -> list[tuple[pl.Expr, pl.Expr]]:
    """The `sanity` checks on the parsed columns: time order and dates, GPUs, state.

    Times are compared as read: naive ones in zone `tz` (a DST fold allowed), epoch ones
    in UTC; a file that mixes the two gets the date checks only. `dates=False` skips the
    date checks of epoch times (relative seconds).
    """
    checks: list[tuple[pl.Expr, pl.Expr]] = []
    if naive and aware:
        for c in naive:
            checks += time_checks({c: column_map[c]})
        for c in aware:
            checks += time_checks({c: column_map[c]}, aware=True, dates=dates)
    elif naive:
        checks += time_checks({c: column_map[c] for c in naive}, fold_zone=tz)
    elif aware:
        checks += time_checks({c: column_map[c] for c in aware}, aware=True, dates=dates)
    if "gpus" in column_map:
        checks.append(gpu_check(pl.col("gpus"), column_map["gpus"]))
    if "state" in column_map:
        state = pl.col("state")
        checks.append(state_check(normalize_state(state), state, column_map["state"]))
    return checks


def read_table(
    source: Source,
    column_map: Mapping[str, str],
    *,
    format: str | None = None,
    tz: str = "UTC",
    time_format: str | None = None,
    max_bad_fraction: float = 0.05,
) -> ReadResult:
    """Read a CSV or Parquet file whose columns `column_map` maps onto the job table.

    Keys are job-table columns (JOB_COLUMNS), values are source column names. Unmapped
    job-table columns are null, except `elapsed_s`, computed from start and end when those
    are mapped. Naive string times are read in zone `tz`; numeric times are epoch seconds.
    Raises InventoryError naming any mapped column the file lacks.
    """
    name = source_name(source)
    fmt = format or ("parquet" if read_head(source, 4) == b"PAR1" else "csv")
    report = ReadReport(source=name, format=fmt)
    unknown = [k for k in column_map if k not in JOB_COLUMNS]
    if unknown:
        raise InventoryError(
            name,
            f"column map names unknown job-table columns {unknown}",
            expected=f"keys among {list(JOB_COLUMNS)}",
        )
    missing_keys = [k for k in REQUIRED_MAPPED if k not in column_map]
    if missing_keys:
        raise InventoryError(name, f"column map lacks {missing_keys}", expected="job_id")
    if "elapsed_s" not in column_map and not {"start", "end"} <= set(column_map):
        raise InventoryError(
            name, "column map gives no duration", expected="elapsed_s, or start and end"
        )
    df = _load(source, fmt)
    absent = [src for src in column_map.values() if src not in df.columns]
    if absent:
        raise InventoryError(
            name,
            f"column map names columns absent from the file: {absent}",
            expected=f"columns among {df.columns[:20]}",
        )
    report.rows_read = df.height
    offset = 2 if fmt == "csv" else 1
    df = df.with_row_index("line_no", offset=offset).with_columns(pl.col("line_no").cast(pl.Int64))
    mapped = df.select(
        "line_no",
        *[pl.col(src).alias(dst) for dst, src in column_map.items()],
        pl.concat_str(
            [pl.col(c).fill_null("") for c in df.columns if c != "line_no"], separator=","
        ).alias("text"),
    )
    parsed: dict[str, pl.Expr] = {}
    checks = []
    for col in column_map:
        raw = pl.col(col).str.strip_chars()
        if col in _TIMES:
            if _is_epoch(mapped[col]):
                epoch = raw.cast(pl.Float64, strict=False).round(0).cast(pl.Int64)
                parsed[col] = pl.from_epoch(epoch, time_unit="s").dt.replace_time_zone("UTC")
            else:
                parsed[col] = raw.str.to_datetime(time_format, strict=False, time_unit="us")
        elif col == "elapsed_s":
            parsed[col] = raw.cast(pl.Float64, strict=False)
        elif col in _INTS:  # a float until checked, so 1e20 is refused, not an overflow
            parsed[col] = raw.cast(pl.Float64, strict=False).round(0)
        elif col == "interactive":
            parsed[col] = raw.str.to_lowercase().is_in(["true", "1", "yes", "y"])
        else:
            parsed[col] = pl.when(raw != "").then(raw)
        if col in _TIMES or col == "elapsed_s" or col in _INTS:
            unread = (raw.fill_null("") != "") & parsed[col].is_null()
            if col in _INTS:
                unread = unread | (parsed[col].abs() >= 2.0**53)
            checks.append(
                pl.when(unread).then(
                    pl.format(f"bad {col}: cannot read '{{}}' from column {column_map[col]!r}", raw)
                )
            )
    mapped = mapped.with_columns(
        (pl.coalesce(checks) if checks else pl.lit(None, dtype=pl.String)).alias("reason")
    )
    record_bad(report, mapped.filter(pl.col("reason").is_not_null()))
    good = mapped.filter(pl.col("reason").is_null())
    report.rows_used = good.height
    jobs = good.select("line_no", "text", *[v.alias(k) for k, v in parsed.items()])
    times = [c for c in _TIMES if c in jobs.columns]
    naive = [c for c in times if getattr(jobs.schema[c], "time_zone", None) is None]
    aware = [c for c in times if c not in naive]
    # Epoch times before 1980 count from a trace's start (relative seconds): not dates.
    low = EARLIEST.replace(tzinfo=timezone.utc)
    relative = any((first := jobs[c].min()) is not None and first < low for c in aware)  # type: ignore[operator]
    sane = _sanity_checks(column_map, naive, aware, tz, dates=not relative)
    jobs, bad = split_bad(jobs, sane)
    record_bad(report, bad)
    report.rows_used -= bad.height
    jobs = jobs.drop("line_no", "text")
    jobs = localize(jobs, naive, tz, report)
    jobs = jobs.with_columns(pl.col(c).dt.convert_time_zone(tz) for c in aware)
    if "elapsed_s" not in jobs.columns:
        jobs = jobs.with_columns(
            (pl.col("end") - pl.col("start"))
            .dt.total_seconds()
            .cast(pl.Float64)
            .fill_null(0.0)
            .alias("elapsed_s")
        )
    extra = []
    if "state" in jobs.columns:
        extra.append(normalize_state(pl.col("state")).alias("state"))
    if "gpu_type" in jobs.columns:
        extra.append(normalize_gpu_type(pl.col("gpu_type")).alias("gpu_type"))
    if "gpus" in jobs.columns:
        extra.append(pl.col("gpus").fill_null(0))
    jobs = conform(jobs.with_columns(extra), tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)
