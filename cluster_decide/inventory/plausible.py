"""Derived workloads checked against the scenario's plausible ranges, without the scenario model.

`ingest` refuses a log whose counts derive an implausible demand before it writes anything (4
billion GPU-hours a month is a unit mistake, not an estate). The ranges are the scenario's own
(:mod:`cluster_decide.base.ranges`: the same bounds and the same words as `solve`'s check). The check
runs here, on the plain workload dicts, so that `ingest` never loads the scenario model:
importing pydantic and building the model takes longer than reading a small log. A test keeps
`WORKLOAD_RANGES` and `NAME_PATTERN` equal to the scenario model's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cluster_decide.base import ranges
from cluster_decide.base.ranges import Range, show_number
from cluster_decide.inputs.catalog import Catalog, load_catalog
from cluster_decide.inputs.estate_size import size_problem
from cluster_decide.inventory.errors import InventoryError

__all__ = ["NAME_PATTERN", "WORKLOAD_RANGES", "check_workloads"]

WORKLOAD_RANGES: dict[str, Range] = {
    "gpus_per_job": ranges.GPUS_PER_JOB,
    "gpu_hours_per_month": ranges.GPU_HOURS_MONTH,
    "mean_job_hours": ranges.JOB_HOURS,
    "duration_scv": ranges.SCV,
    "arrival_scv": ranges.SCV,
    "max_queue_wait_hours": ranges.WAIT_HOURS,
    "max_completion_hours": ranges.WAIT_HOURS,
    "concurrent_users": ranges.USERS,
    "gpus_per_user": ranges.GPUS_PER_USER,
    "peak_requests_per_second": ranges.REQUESTS_PER_SECOND,
    "gpu_seconds_per_request": ranges.GPU_SECONDS,
    "p99_latency_ms": ranges.LATENCY_MS,
}
"""The ranged number keys a derived workload can hold (scenario key -> its range)."""

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"
NAME_PATTERN = f"^{_NAME}$"
"""A workload name as the scenario accepts it: ASCII letters, digits, ``_ . -``; 1-80 long."""
NAME_MAX = 80
TEXT_MAX = 200
"""The longest team name the scenario accepts."""


def _problem(workload: Mapping[str, Any], key: str) -> str | None:
    """What is wrong with one key of one derived workload, or None."""
    value: Any = workload.get(key)
    if key == "name":
        ok = isinstance(value, str) and len(value) <= NAME_MAX
        return (
            None
            if ok and re.fullmatch(_NAME, value)
            else f"expected a name matching {NAME_PATTERN}, got {show_number(value)}"
        )
    if key == "team":
        bad = [c for c in str(value) if (ord(c) < 32 and c not in "\n\t") or 127 <= ord(c) < 160]
        if bad:
            return f"expected text without control characters, got one (U+{ord(bad[0]):04X})"
        return None if len(str(value)) <= TEXT_MAX else f"expected at most {TEXT_MAX} characters"
    rng = WORKLOAD_RANGES[key]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    right_type = number and (isinstance(value, int) or (not rng.integer and math.isfinite(value)))
    if right_type and rng.contains(value):
        return None
    unit = f" {rng.unit}" if rng.unit else ""
    return f"expected {rng.expected()}{unit}, got {show_number(value)}"


def check_workloads(
    workloads: Sequence[Mapping[str, Any]],
    *,
    target: str,
    logs: str,
    catalog: Catalog | None = None,
) -> None:
    """Raise InventoryError for the first derived value the scenario would refuse.

    Each value against its range, then the estate as a whole against the size the model can
    count (:func:`cluster_decide.inputs.estate_size.size_problem`, at the derived scenario's default
    prices and horizon). `target` is the scenario file about to be written (the message names
    its key, as `solve` would); `logs` names the job logs the values were derived from.
    """
    for i, workload in enumerate(workloads):
        for key in ("name", "team", *WORKLOAD_RANGES):
            if key not in workload:
                continue
            problem = _problem(workload, key)
            if problem:
                raise InventoryError(
                    target,
                    f"workloads[{i}].{key}: {problem}; derived from {logs} (class "
                    f"{show_number(workload.get('name'))}), so nothing was written",
                )
    too_large = size_problem(workloads, catalog or load_catalog())
    if too_large:
        key, problem, fix = too_large
        raise InventoryError(
            target,
            f"{key + ': ' if key else ''}{problem}; derived from {logs}, so nothing was written",
            expected=fix,
        )
