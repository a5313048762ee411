"""One entry point for every format: detect (or take) the format and call its reader."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from cluster_decide.inventory.detect import FORMATS, Source, detect_format, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.generic import read_table
from cluster_decide.inventory.jobs import (
    ReadReport,
    ReadResult,
    SkippedFile,
    check_zone,
    time_zone_of,
)
from cluster_decide.inventory.sacct import read_sacct
from cluster_decide.inventory.sacct_json import read_sacct_json
from cluster_decide.inventory.swf import read_swf
from cluster_decide.inventory.traces import read_openb, read_philly_jobs, read_philly_runtime

__all__ = ["read_jobs", "read_many"]


def read_jobs(
    source: Source,
    *,
    format: str | None = None,
    tz: str | None = None,
    column_map: Mapping[str, str] | None = None,
    max_bad_fraction: float = 0.05,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> ReadResult:
    """Read any supported file into the job table; `format` overrides detection.

    `tz` is the zone of naive times (sacct, CSV; default UTC) or of the display (SWF default:
    its header's zone). `column_map` is required for CSV/Parquet. Other keyword `options`
    go to the format's reader (`fields=`, `delimiter=`, `expand_arrays=` for sacct,
    `gpus_per_proc=` for SWF, ...). PAI needs two tables: call `traces.read_pai` directly.
    `progress(done, total)` is called per chunk for sacct text, once at the end otherwise.
    """
    name = str(source) if not isinstance(source, bytes) else "<bytes>"
    if tz is not None:
        check_zone(tz)
    if format is not None and format not in FORMATS:
        raise InventoryError(name, f"unknown format {format!r}", expected=f"one of {FORMATS}")
    fmt = format or detect_format(source)
    text_options = sorted(k for k in ("fields", "delimiter") if options.get(k) is not None)
    if text_options and fmt != "sacct":
        if format is None and fmt == "csv":
            fmt = "sacct"  # a header-less sacct export whose fields hold commas
        else:
            raise InventoryError(
                name,
                f"{' and '.join(text_options)} apply to sacct text exports, and this is {fmt}",
                expected="a sacct --parsable(2) export, or neither option",
            )
    if options.get("extended") and fmt != "swf":
        raise InventoryError(
            name, f"the extended SWF option applies to SWF logs, and this is {fmt}"
        )
    if fmt == "sacct":
        return read_sacct(
            source,
            tz=tz or "UTC",
            max_bad_fraction=max_bad_fraction,
            progress=progress,
            **options,
        )
    result = _read_other(source, fmt, name, tz, column_map, max_bad_fraction, options)
    if progress is not None:
        progress(result.report.rows_read, result.report.rows_read)
    return result


def _read_other(
    source: Source,
    fmt: str,
    name: str,
    tz: str | None,
    column_map: Mapping[str, str] | None,
    bad: float,
    options: dict[str, Any],
) -> ReadResult:
    """Dispatch to the reader of every format but sacct text."""
    if fmt == "sacct_json":
        return read_sacct_json(source, tz=tz or "UTC", max_bad_fraction=bad, **options)
    if fmt == "swf":
        return read_swf(source, tz=tz, max_bad_fraction=bad, **options)
    if fmt == "openb":
        return read_openb(source, tz=tz or "UTC", max_bad_fraction=bad, **options)
    if fmt == "philly_jobs":
        return read_philly_jobs(
            source, tz=tz or "America/Los_Angeles", max_bad_fraction=bad, **options
        )
    if fmt == "philly_runtime":
        return read_philly_runtime(source, max_bad_fraction=bad, **options)
    if fmt in ("csv", "parquet"):
        if column_map is None:
            raise InventoryError(
                name,
                f"{fmt} input needs a column map",
                expected="column_map={'job_id': ..., 'gpus': ..., 'elapsed_s': ...}",
            )
        return read_table(
            source, column_map, format=fmt, tz=tz or "UTC", max_bad_fraction=bad, **options
        )
    raise InventoryError(
        name, "PAI tables come in pairs", expected="traces.read_pai(jobs_table, tasks_table)"
    )


def read_many(sources: Sequence[Source], **kwargs: Any) -> ReadResult:
    """Read several files (for example one sacct export per month) into one job table.

    Job ids repeated across files keep the last record; the reports are merged, with each
    file's notes prefixed by its name. A file that gives no jobs (empty, an error response
    such as slurmdbd's "slurmdb_jobs_get() found nothing", unreadable, or refused by its
    reader) is skipped and listed in the report's `skipped_files` with the reason; the read
    fails only when no file gives jobs.
    """
    if not sources:
        raise InventoryError("<none>", "no input files", expected="at least one file")
    results: list[ReadResult] = []
    skipped: list[SkippedFile] = []
    for source in sources:
        try:
            results.append(read_jobs(source, **kwargs))
        except InventoryError as exc:
            reason = str(exc)
            name = source_name(source)
            if reason.startswith(f"{name}: "):
                reason = reason[len(name) + 2 :]
            skipped.append(SkippedFile(name, reason))
    if not results:
        raise InventoryError(
            ", ".join(source_name(s) for s in sources),
            f"no file gave jobs ({len(skipped)} skipped): "
            + "; ".join(f"{s.file}: {s.reason}" for s in skipped),
        )
    tz = time_zone_of(results[0].jobs)
    frames = [
        r.jobs.with_columns(pl.col(c).dt.convert_time_zone(tz) for c in ("submit", "start", "end"))
        for r in results
    ]
    jobs = pl.concat(frames)
    merged = ReadReport(
        source=", ".join(r.report.source for r in results),
        format="+".join(sorted({r.report.format for r in results})),
    )
    for r in results:
        rep = r.report
        merged.rows_read += rep.rows_read
        merged.rows_used += rep.rows_used
        merged.steps_collapsed += rep.steps_collapsed
        merged.malformed_rows += rep.malformed_rows
        merged.ambiguous_times += rep.ambiguous_times
        merged.nonexistent_times += rep.nonexistent_times
        for reason, n in rep.skipped.items():
            merged.skip(reason, n)
        merged.bad_lines += rep.bad_lines[: 20 - len(merged.bad_lines)]
        merged.notes += [f"{rep.source}: {n}" for n in rep.notes]
    before = jobs.height
    jobs = jobs.unique("job_id", keep="last", maintain_order=True)
    dups = before - jobs.height
    if dups:
        merged.skip("duplicate job record across files (the last one is kept)", dups)
        merged.rows_used -= dups
    merged.jobs_kept = jobs.height
    merged.skipped_files = skipped
    return ReadResult(jobs, merged)
