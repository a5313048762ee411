"""The whole inventory pipeline in one call: read files, classify jobs, derive demand.

`cluster-decide ingest` is a thin shell over `ingest()`; notebooks can call it too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cluster_decide.base import ranges
from cluster_decide.base.tomlread import tomllib
from cluster_decide.inventory.classification import Classification, classify
from cluster_decide.inventory.demand import Demand, derive_workloads
from cluster_decide.inventory.detect import Source, detect_format, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import JOB_COLUMNS, ReadResult
from cluster_decide.inventory.read import read_jobs, read_many
from cluster_decide.inventory.rules import load_rules

__all__ = ["Ingest", "RowProgress", "ingest", "load_column_map"]


@dataclass(frozen=True)
class Ingest:
    """What one ingest produced: the read (jobs + report), the classes and the demand."""

    read: ReadResult
    classification: Classification
    demand: Demand


def load_column_map(path: str | Path) -> dict[str, str]:
    """Read a column map (job-table column -> source column) from a TOML or JSON file.

    A TOML file may hold the pairs at top level or under `[columns]`. Raises InventoryError
    naming the file and the problem.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InventoryError(str(file), "no such column map file") from None
    except OSError as exc:
        raise InventoryError(str(file), f"cannot read column map: {exc.strerror}") from None
    try:
        doc: Any = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InventoryError(str(file), f"invalid column map: {exc}") from None
    if isinstance(doc, dict) and isinstance(doc.get("columns"), dict):
        doc = doc["columns"]
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise InventoryError(
            str(file),
            "a column map is a table of job-table column = source column strings",
            expected=f'job_id = "id", gpus = "num_gpus", ... with keys among {list(JOB_COLUMNS)}',
        )
    return {str(k): v for k, v in doc.items()}


class RowProgress:
    """Adapts the readers' `progress(done, total)` calls, file after file, to one tqdm bar.

    A reader reports cumulative rows of its own file; a new file starts when the count goes
    back down or the previous file was complete, and its total is added to the bar's.
    """

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self._done = 0
        self._total = 0

    def __call__(self, done: int, total: int) -> None:
        """Advance the bar to `done` of `total` rows of the current file."""
        if done < self._done or (self._total and self._done >= self._total):
            self._done, self._total = 0, 0
        if total != self._total:
            self.bar.total = (self.bar.total or 0) + total - self._total
            self._total = total
            self.bar.refresh()
        self.bar.update(done - self._done)
        self._done = done


EXCERPT_FRACTION = 0.5
"""Jobs covering less than this share of a header's stated span make the file an excerpt."""


def _header_window(result: ReadResult) -> float | None:
    """The window an SWF header's StartTime-EndTime gives, unless the file is an excerpt.

    A log cut to its first thousand jobs keeps the whole log's header: 92 days stated where
    the jobs cover 7, which would divide their GPU-hours by thirteen times too many months.
    When the jobs (first submit to last end) cover less than `EXCERPT_FRACTION` of the
    stated span, the window is theirs (None: derivation's default), and a note says so.
    """
    stated = result.report.span_days
    assert stated is not None
    jobs = result.jobs
    ends = pl.coalesce(pl.col("end"), pl.col("submit") + pl.duration(seconds=pl.col("elapsed_s")))
    first, last = jobs.select(pl.coalesce(pl.col("submit"), pl.col("start")).min(), ends.max()).row(
        0
    )
    covered = (last - first).total_seconds() / 86400.0 if first and last else None
    if covered is not None and covered < EXCERPT_FRACTION * stated:
        result.report.notes.append(
            f"window: the jobs' own {covered:.1f} days, not the {stated:.1f} days the header "
            "states: the file holds only part of the log (an excerpt); --window-days DAYS sets it"
        )
        return None
    result.report.notes.append(f"window: {stated:.1f} days, the span the log's header states")
    return stated


def ingest(
    files: Sequence[Source],
    *,
    format: str | None = None,
    tz: str | None = None,
    rules: str | Path | None = None,
    column_map: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    interfaces: Mapping[str, str] | None = None,
    prefers: Mapping[str, Sequence[str]] | None = None,
    window_days: float | None = None,
    gpus_per_proc: float | None = None,
    fields: Sequence[str] | str | None = None,
    delimiter: str | None = None,
    swf_extended: bool = False,
) -> Ingest:
    """Read `files` (several are merged), classify them by `rules`, derive the workloads.

    `window_days` is the span the logs cover, for traces without timestamps (default: first
    submit to last end); `gpus_per_proc` counts an SWF log's processors as GPUs; `fields`
    and `delimiter` are sacct's `-o` list and `--delimiter` for exports without a header;
    `swf_extended` reads an SWF with extra fields (see `swf.read_swf`). Without `window_days`,
    an SWF header's StartTime-EndTime span is the window when it gives one. Raises
    InventoryError (only) for input that cannot be used, with a message to print that
    names the files.
    """
    for key, value, rng in (
        ("window_days", window_days, ranges.WINDOW_DAYS),
        ("gpus_per_proc", gpus_per_proc, ranges.GPUS_PER_PROC),
    ):
        if value is not None and not (math.isfinite(value) and rng.contains(value)):
            raise InventoryError(
                f"{key} (--{key.replace('_', '-')})",
                f"expected {rng.expected()} {rng.unit}, got {value:g}",
            )
    options: dict[str, Any] = {"format": format, "tz": tz, "column_map": column_map}
    if fields is not None or delimiter is not None:
        options.update(fields=fields, delimiter=delimiter)
    if swf_extended:
        options["extended"] = True
    if gpus_per_proc is not None:
        for file in files:
            try:
                fmt = format or detect_format(file)
            except InventoryError:
                continue  # unreadable or unknown: the read reports it, or skips it among several
            if fmt != "swf":
                raise InventoryError(
                    source_name(file),
                    "gpus_per_proc applies to SWF logs only",
                    expected="SWF input, or no gpus_per_proc",
                )
        options["gpus_per_proc"] = gpus_per_proc
    if len(files) == 1:
        result = read_jobs(files[0], progress=progress, **options)
    else:
        result = read_many(files, progress=progress, **options)
    classification = classify(result.jobs, load_rules(rules))
    if window_days is None and result.report.span_days is not None:
        window_days = _header_window(result)
    try:
        demand = derive_workloads(
            classification.jobs, interfaces=interfaces, prefers=prefers, window_days=window_days
        )
    except InventoryError as exc:  # name the files, not the job table
        expected = exc.expected
        if "swf" in result.report.format and gpus_per_proc is None:
            expected = (
                f"{expected}; an SWF log records processors: gpus_per_proc= counts them as GPUs"
            )
        raise InventoryError(result.report.source, exc.message, expected=expected) from None
    return Ingest(result, classification, demand)
