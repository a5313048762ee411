"""Checks every reader applies to each job: times in order, plausible dates, counts and states.

A row that fails is a bad row (counted under its reason, quoted with its line number), never
silently reinterpreted: an end before its start would inflate waits, a GPU count of 10^8 would
write billions of GPU-hours into a scenario, and a count too large for an integer would
otherwise read as a CPU-only job. When most rows fail the same time check, the columns
themselves are swapped or mislabelled, and `jobs.enforce_threshold` refuses the whole file.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import polars as pl

from cluster_decide.inventory.jobs import IMPOSSIBLE, KNOWN_STATES

__all__ = [
    "EARLIEST",
    "MAX_JOB_GPUS",
    "SLURM_STATES",
    "gpu_check",
    "job_problem",
    "latest",
    "state_check",
    "time_checks",
]

MAX_JOB_GPUS = 100_000
"""One job holding this many GPUs or more is implausible (the largest clusters hold ~100k)."""

EARLIEST = datetime(1980, 1, 1)
"""The earliest plausible job time: the oldest public scheduler logs are from the early 1990s."""

SLURM_STATES = (
    *KNOWN_STATES,
    "COMPLETING",
    "CONFIGURING",
    "REVOKED",
    "SPECIAL_EXIT",
    "RESIZING",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESV_DEL_HOLD",
    "STOPPED",
    "SIGNALING",
    "STAGE_OUT",
    "LAUNCH_FAILED",
    "UNKNOWN",
)
"""Job states Slurm (and the other readers' mappings) can write; UNKNOWN is an empty state."""


def latest() -> datetime:
    """The latest plausible job time (naive UTC): now and a day (clocks and zones differ)."""
    return datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=1)


def _naive_utc(expr: pl.Expr, aware: bool) -> pl.Expr:
    return expr.dt.convert_time_zone("UTC").dt.replace_time_zone(None) if aware else expr


def _in_fold(expr: pl.Expr, zone: str) -> pl.Expr:
    """Naive wall-clock times that occur twice (or never) in `zone`: a DST change."""
    local = expr.dt.replace_time_zone(zone, ambiguous="null", non_existent="null")
    return expr.is_not_null() & local.is_null()


def time_checks(
    labels: dict[str, str],
    *,
    aware: bool = False,
    dates: bool = True,
    fold_zone: str | None = None,
) -> list[tuple[pl.Expr, pl.Expr]]:
    """(is-bad, message) checks on datetime columns `submit`, `start`, `end` where present.

    `labels` maps each present column to its name in the source (`Submit`, `submit_time`),
    for the messages. `aware` says the columns carry a zone; `dates=False` skips the
    plausible-date check (for logs whose times are relative, such as SWF without a start).
    `fold_zone` is the zone of naive wall-clock times: two of them up to an hour out of order
    are accepted when one falls in its DST fold (01:50 CDT, then 01:10 CST is 20 minutes on).
    """
    checks: list[tuple[pl.Expr, pl.Expr]] = []
    if dates:
        low, high = pl.lit(EARLIEST), pl.lit(latest())
        for key, label in labels.items():
            value = _naive_utc(pl.col(key), aware)
            checks.append(
                (
                    (value < low) | (value > high),
                    pl.format(
                        f"implausible date: expected {label} from 1980 to today, got {{}}",
                        value.dt.to_string("%Y-%m-%dT%H:%M:%S"),
                    ),
                )
            )
    for early, late in (("start", "end"), ("submit", "start")):
        if early in labels and late in labels:
            a, b = pl.col(early), pl.col(late)
            wrong = b < a
            if fold_zone is not None and not aware:
                folded = _in_fold(a, fold_zone) | _in_fold(b, fold_zone)
                wrong = wrong & ~((a - b <= timedelta(hours=1)) & folded)
            checks.append(
                (
                    wrong,
                    pl.format(
                        f"{IMPOSSIBLE} ({labels[late]} before {labels[early]}): "
                        f"{labels[late]} {{}} < {labels[early]} {{}}",
                        _naive_utc(b, aware).dt.to_string("%Y-%m-%dT%H:%M:%S"),
                        _naive_utc(a, aware).dt.to_string("%Y-%m-%dT%H:%M:%S"),
                    ),
                )
            )
    return checks


def gpu_check(expr: pl.Expr, label: str) -> tuple[pl.Expr, pl.Expr]:
    """(is-bad, message): a GPU count of MAX_JOB_GPUS or more (a float, so 1e20 is seen)."""
    return (
        expr >= MAX_JOB_GPUS,
        pl.format(
            f"implausible GPU count: expected fewer than {MAX_JOB_GPUS:,} GPUs in one job "
            f"({label}), got {{}}",
            expr.cast(pl.Float64).round(0).cast(pl.String),
        ),
    )


def state_check(state: pl.Expr, raw: pl.Expr, label: str = "State") -> tuple[pl.Expr, pl.Expr]:
    """(is-bad, message): a normalized `state` that is no job state Slurm writes."""
    return (
        ~state.is_in(SLURM_STATES),
        pl.format(
            f"unknown {label}: expected a Slurm job state such as COMPLETED, got '{{}}'", raw
        ),
    )


def job_problem(
    submit_s: int | None,
    start_s: int | None,
    end_s: int | None,
    gpus: float | None,
    state: str | None,
) -> str | None:
    """The first problem of one job given as epoch seconds (a JSON record), or None.

    The same reasons, in the same words, as the frame checks above; for readers that build
    jobs one by one.
    """
    low = EARLIEST.replace(tzinfo=timezone.utc).timestamp()
    high = latest().replace(tzinfo=timezone.utc).timestamp()
    for label, value in (("submit", submit_s), ("start", start_s), ("end", end_s)):
        if value is not None and not low <= value <= high:
            when = datetime.fromtimestamp(min(max(value, -6e10), 2e11), timezone.utc)
            return f"implausible date: expected {label} from 1980 to today, got {when:%Y-%m-%d}"
    for early, late, a, b in (
        ("start", "end", start_s, end_s),
        ("submit", "start", submit_s, start_s),
    ):
        if a is not None and b is not None and b < a:
            return f"{IMPOSSIBLE} ({late} before {early}): {late} is {a - b} s before {early}"
    if gpus is not None and gpus >= MAX_JOB_GPUS:
        return (
            f"implausible GPU count: expected fewer than {MAX_JOB_GPUS:,} GPUs in one job, "
            f"got {gpus:.0f}"
        )
    if state is not None and state.split(" ")[0].upper() not in SLURM_STATES:
        return f"unknown state: expected a Slurm job state such as COMPLETED, got '{state}'"
    return None
