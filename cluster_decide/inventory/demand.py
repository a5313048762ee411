"""Demand per workload class, derived from a classified job table, as `[[workloads]]` dicts.

A class is one (kind, team) pair. For each, this module measures what a scenario's workload needs
(GPU-hours per month, gang size, mean job length, an hour-of-week profile) and proposes SLOs
from the observed waits; the observations themselves (wait and duration percentiles, failure
and cancellation rates, busy GPUs) go into a separate evidence frame, so the analyst can set
the SLOs knowingly rather than inherit whatever the old cluster delivered.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import tomli_w

from cluster_decide.base.constants import DEADLINE_KINDS, HOURS_PER_MONTH, HOURS_PER_WEEK
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import time_zone_of
from cluster_decide.inventory.rules import EXCLUDED

__all__ = [
    "CATALOG_GPU_TYPES",
    "GPU_EQUIVALENTS",
    "KIND_REQUIRES",
    "SLO_LADDER_HOURS",
    "Demand",
    "busy_gpus",
    "derive_workloads",
    "hour_of_week_profile",
    "round_up_hours",
    "scenario_document",
    "scv",
    "write_scenario",
]

CATALOG_GPU_TYPES = ("A100", "H100", "H200", "B200", "L40S", "L4")
"""GPU types the catalog prices; derived classes name only these."""

GPU_EQUIVALENTS = {
    "V100": "A100",
    "V100M32": "A100",
    "A800": "A100",
    "A40": "L40S",
    "L40": "L40S",
    "A10": "L4",
    "A10G": "L4",
    "T4": "L4",
    "P100": "L4",
    "K80": "L4",
    "A30": "L4",
    "H800": "H100",
    "H20": "H100",
    "GH200": "H200",
    "GB200": "B200",
    "B100": "B200",
}
"""Observed GPU model -> the catalog type that would replace it today (editable argument)."""

KIND_REQUIRES = {"realtime_inference": ("autoscaling", "self_healing", "rolling_updates")}
"""Capabilities a kind needs whatever a job log shows (services must heal and roll out)."""

_ARRIVAL_SCV_KINDS = ("distributed_training", "fine_tuning")

SLO_LADDER_HOURS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0, 24.0, 48.0, 72.0, 168.0)
"""Round numbers a proposed SLO is rounded up to, so it reads like a human target."""

_EVIDENCE_SCHEMA = {
    "workload": pl.String,
    "kind": pl.String,
    "team": pl.String,
    "jobs": pl.Int64,
    "jobs_ran": pl.Int64,
    "users": pl.Int64,
    "gpu_hours": pl.Float64,
    "gpu_hours_per_month": pl.Float64,
    "gpus_p50": pl.Float64,
    "gpus_p95": pl.Float64,
    "gpus_max": pl.Int64,
    "nodes_max": pl.Int64,
    "duration_hours_p50": pl.Float64,
    "duration_hours_p90": pl.Float64,
    "duration_hours_p99": pl.Float64,
    "duration_scv": pl.Float64,
    "arrivals_per_day": pl.Float64,
    "arrival_scv": pl.Float64,
    "wait_hours_p50": pl.Float64,
    "wait_hours_p90": pl.Float64,
    "wait_hours_p99": pl.Float64,
    "completion_hours_p90": pl.Float64,
    "completed_frac": pl.Float64,
    "failed_frac": pl.Float64,
    "cancelled_frac": pl.Float64,
    "timeout_frac": pl.Float64,
    "mean_busy_gpus": pl.Float64,
    "peak_busy_gpus": pl.Float64,
    "interactive_frac": pl.Float64,
}


WEEK_DAYS = HOURS_PER_WEEK // 24
"""Days of records below which ``Demand.window_note`` cautions (a week holds every hour)."""


@dataclass(frozen=True)
class Demand:
    """Derived `[[workloads]]` entries, the evidence behind them, and the estate's busy GPUs.

    `evidence` has one row per workload (columns in _EVIDENCE_SCHEMA, units in the names);
    `busy` has one row per hour of the window: `hour` (local), `busy_gpus`, and
    `utilization` when a capacity was given. `window_days` is the observed span.
    """

    workloads: list[dict[str, Any]]
    evidence: pl.DataFrame
    busy: pl.DataFrame
    window_days: float

    @property
    def window_note(self) -> str:
        """A caution when the records span less than a week ("" otherwise).

        Monthly GPU-hours are the window's scaled to a month, and each class's hour-of-week
        profile is read from it: under a week, some hours of the week were never seen.
        """
        if self.window_days >= WEEK_DAYS:
            return ""
        span = (
            f"{self.window_days:.1f} days"
            if self.window_days >= 1
            else f"{self.window_days * 24:.1f} hours"
        )
        return (
            f"the records span {span}: the monthly GPU-hours are extrapolated "
            f"from them, and an hour-of-week profile needs {WEEK_DAYS} days or more (90 are "
            "recommended); if the export covers a longer span than its jobs, give it with "
            "--window-days"
        )


def round_up_hours(hours: float, ladder: Sequence[float] = SLO_LADDER_HOURS) -> float:
    """The smallest ladder value >= hours (the largest one when hours exceed it)."""
    for step in ladder:
        if hours <= step + 1e-9:
            return float(step)
    return float(ladder[-1])


def _ran(jobs: pl.DataFrame) -> pl.DataFrame:
    """Jobs that ran and held GPUs, with `end` = start + elapsed.

    The elapsed time is the scheduler's own count; a wall-clock end can be off by an hour
    when it falls in a DST-ambiguous hour, so busy GPUs and GPU-hours agree only this way.
    A job that ran for a known time but whose start is unknown (an SWF log's wait of -1) is
    placed at its submit time, flagged `start_unknown`: its GPU-hours count, its wait and
    completion time do not.
    """
    unknown = pl.col("start").is_null() & (pl.col("elapsed_s") > 0) & pl.col("submit").is_not_null()
    return (
        jobs.filter((pl.col("start").is_not_null() | unknown) & (pl.col("gpus") > 0))
        .with_columns(unknown.alias("start_unknown"), pl.coalesce("start", "submit").alias("start"))
        .with_columns(
            (
                pl.col("start") + pl.duration(milliseconds=(pl.col("elapsed_s") * 1000).round(0))
            ).alias("end")
        )
    )


def busy_gpus(
    jobs: pl.DataFrame, start: Any = None, end: Any = None, capacity_gpus: float | None = None
) -> pl.DataFrame:
    """GPUs busy in each hour of the window (time-weighted, local hours of the table's zone).

    Built with a difference array over hour indexes, so cost is linear in jobs and hours
    whatever the job lengths. Columns: hour, busy_gpus (and utilization with a capacity).
    """
    tz = time_zone_of(jobs)
    ran = _ran(jobs)
    if ran.is_empty():
        return pl.DataFrame(schema={"hour": pl.Datetime("us", tz), "busy_gpus": pl.Float64})
    lo = start if start is not None else ran["start"].min()
    hi = end if end is not None else ran["end"].max()
    t0 = pl.Series([lo]).dt.convert_time_zone("UTC").dt.truncate("1h")[0]
    t1 = pl.Series([hi]).dt.convert_time_zone("UTC")[0]
    n_hours = max(1, math.ceil((t1 - t0).total_seconds() / 3600.0))
    secs = ran.select(
        ((pl.col("start").dt.convert_time_zone("UTC") - t0).dt.total_seconds() / 3600.0)
        .clip(0.0, float(n_hours))
        .alias("a"),
        ((pl.col("end").dt.convert_time_zone("UTC") - t0).dt.total_seconds() / 3600.0)
        .clip(0.0, float(n_hours))
        .alias("b"),
        pl.col("gpus").cast(pl.Float64).alias("g"),
    )
    a, b, g = (secs[c].to_numpy() for c in ("a", "b", "g"))
    keep = b > a
    a, b, g = a[keep], b[keep], g[keep]
    # Each job adds g over [a, b): whole hours via a difference array, partial edge hours
    # as fractions, so the hourly totals equal the job's GPU-hours exactly.
    ia, ib = np.floor(a).astype(np.int64), np.floor(b).astype(np.int64)
    diff = np.zeros(n_hours + 2)
    np.add.at(diff, ia, g)
    np.add.at(diff, ib, -g)
    level = np.cumsum(diff)[: n_hours + 1]
    frac = np.zeros(n_hours + 1)
    np.add.at(frac, ia, -g * (a - ia))
    np.add.at(frac, ib, g * (b - ib))
    busy = (level + frac)[:n_hours]
    hours = pl.datetime_range(
        t0, t0 + timedelta(hours=n_hours - 1), "1h", time_zone="UTC", eager=True
    ).dt.convert_time_zone(tz)
    out = pl.DataFrame({"hour": hours, "busy_gpus": busy})
    if capacity_gpus:
        out = out.with_columns((pl.col("busy_gpus") / capacity_gpus).alias("utilization"))
    return out


def hour_of_week_profile(busy: pl.DataFrame) -> list[float]:
    """168 weights (0 = Monday 00:00 local) of mean busy GPUs, normalized to max 1.0.

    Returns all ones when nothing was busy (the flat profile).
    """
    if busy.is_empty():
        return [1.0] * HOURS_PER_WEEK
    # Weekday and hour are Int8: widen before the arithmetic, or Saturday 08:00 on overflows.
    day, hour = (pl.col("hour").dt.weekday().cast(pl.Int32), pl.col("hour").dt.hour())
    how = busy.group_by(((day - 1) * 24 + hour).alias("h")).agg(pl.col("busy_gpus").mean())
    arr = np.zeros(HOURS_PER_WEEK)
    arr[how["h"].to_numpy()] = how["busy_gpus"].to_numpy()
    top = arr.max()
    if top <= 0:
        return [1.0] * HOURS_PER_WEEK
    return [round(float(v / top), 4) for v in arr]


def _quantile(values: np.ndarray, q: float) -> float:
    if values.size == 0:
        return float("nan")
    return float(np.quantile(values, q, method="higher"))


def scv(values: np.ndarray) -> float:
    """Squared coefficient of variation (variance / mean²); NaN for fewer than 2 values."""
    if values.size < 2 or float(values.mean()) <= 0:
        return float("nan")
    return float(values.var() / values.mean() ** 2)


def _gaps_hours(submits: pl.Series) -> np.ndarray:
    """Hours between consecutive submissions, in time order (ties give zero gaps)."""
    stamps = submits.drop_nulls().sort().dt.epoch("s").to_numpy().astype(float)
    return np.diff(stamps) / 3600.0


def _gang_size(gpus: np.ndarray) -> int:
    """p95 gang size (an observed value), or the largest size at least 5% of jobs use."""
    if gpus.size == 0:
        return 1
    p95 = int(_quantile(gpus, 0.95))
    values, counts = np.unique(gpus, return_counts=True)
    common = values[counts >= 0.05 * gpus.size]
    largest_common = int(common.max()) if common.size else p95
    return max(1, max(p95, largest_common) if p95 in values else largest_common)


def _catalog_types(
    observed: pl.DataFrame, equivalents: Mapping[str, str], default: Sequence[str]
) -> list[str]:
    out: list[str] = []
    for gtype in observed.sort("gpu_hours", descending=True)["gpu_type"].to_list():
        mapped = gtype if gtype in CATALOG_GPU_TYPES else equivalents.get(gtype or "")
        if mapped in CATALOG_GPU_TYPES and mapped not in out:
            out.append(mapped)
    return out or list(default)


def _slug(text: str, taken: set[str]) -> str:
    """A workload name for `text` the scenario accepts, unlike any name in `taken`.

    Names are ASCII (``équipe`` becomes ``equipe``; letters with no ASCII form, such as
    ``研究``, are dropped), so a site's account names never make the derived scenario invalid;
    the team keeps its own spelling. Two classes whose names would meet get ``-2``, ``-3``.
    """
    ascii_text = unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()
    slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in ascii_text)
    slug = slug.strip("-_.")[:80].strip("-_.") or "class"
    name, n = slug, 1
    while name in taken:
        n += 1
        name = f"{slug[: 80 - len(str(n)) - 1]}-{n}"
    taken.add(name)
    return name


def derive_workloads(
    classified: pl.DataFrame,
    *,
    interfaces: Mapping[str, str] | None = None,
    prefers: Mapping[str, Sequence[str]] | None = None,
    window_days: float | None = None,
    capacity_gpus: float | None = None,
    gpu_equivalents: Mapping[str, str] = GPU_EQUIVALENTS,
    default_gpu_types: Sequence[str] = ("H100",),
    gpu_seconds_per_request: float = 0.25,
    target_utilization: float = 0.7,
    p99_latency_ms: float = 2000.0,
    min_gpu_hours_per_month: float = 1.0,
    kind_requires: Mapping[str, Sequence[str]] = KIND_REQUIRES,
    flat_profile_min_hours: float = 12.0,
) -> Demand:
    """Derive one `[[workloads]]` dict per (kind, team) class of a classified job table.

    `interfaces` maps "team:kind", a team or a kind to "slurm" or "containers" (in that
    order of precedence; default "slurm", and "containers" for realtime inference).
    `prefers` adds preferences the same way (keys "team:kind", team or kind; all that match
    are merged): a job log cannot show that a team wants fair share, so the analyst says it.
    `window_days` defaults to the span from the first submit to the last end. Services
    (realtime inference) have no requests in a job log: their peak busy GPUs become
    `peak_requests_per_second` at `gpu_seconds_per_request` and `target_utilization`, a
    proxy to replace with measured traffic. Classes under `min_gpu_hours_per_month` are
    left out of the workloads (they stay in the evidence).
    `kind_requires` adds capabilities by kind; multi-node classes always require
    gang_scheduling and topology_aware; interactive evidence adds a preference for
    interactive_shell. Classes whose mean job runs `flat_profile_min_hours` or longer get the
    "flat" profile: such jobs smear over any daily pattern, and a few of them make a measured
    hour-of-week shape mostly noise (the busy GPUs stay in the evidence).
    """
    needed = {"kind", "team", "gpus", "elapsed_s", "submit", "start", "end", "state"}
    missing = sorted(needed - set(classified.columns))
    if missing:
        raise InventoryError(
            "<job table>", f"missing columns {missing}", expected="classify(jobs).jobs"
        )
    jobs = classified.filter(pl.col("kind").is_not_null() & (pl.col("kind") != EXCLUDED))
    if jobs.is_empty():
        gpu_jobs = classified.filter(pl.col("gpus") > 0)
        unclassified = gpu_jobs.filter(pl.col("kind").is_null()).height
        raise InventoryError(
            "<job table>",
            f"no GPU jobs to derive workloads from: {classified.height} jobs read, "
            f"{gpu_jobs.height} with GPUs, {unclassified} of them matched by no rule",
            expected="jobs that hold GPUs, classified by the rules (rules for the unmatched "
            "jobs: rules= or --rules FILE)",
        )
    first: Any = jobs["submit"].drop_nulls().min() or jobs["start"].drop_nulls().min()
    ran_all = _ran(jobs)
    last: Any = ran_all["end"].max() if not ran_all.is_empty() else None
    if window_days is None:
        if first is None or last is None:
            raise InventoryError(
                "<job table>",
                "no submit or start times, so the days the log covers are unknown",
                expected="window_days= (--window-days DAYS) to turn GPU-hours into a monthly rate",
            )
        window_days = max((last - first).total_seconds() / 86400.0, 1.0 / 24.0)
    months = window_days * 24.0 / HOURS_PER_MONTH
    interfaces = dict(interfaces or {})
    busy_all = busy_gpus(jobs, first, last, capacity_gpus)

    workloads: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    classes = jobs.select("kind", "team").unique().sort("kind", "team").rows()
    names: set[str] = set()
    for kind, team in classes:
        cls = jobs.filter((pl.col("kind") == kind) & (pl.col("team") == team))
        ran = _ran(cls)
        name = _slug(f"{team}-{kind.replace('_', '-')}", names)
        ev, wl = _measure(
            cls,
            ran,
            name,
            kind,
            team,
            months,
            window_days,
            first,
            last,
            flat_profile_min_hours,
        )
        evidence.append(ev)
        if ev["gpu_hours_per_month"] < min_gpu_hours_per_month:
            continue
        fallback = "containers" if kind == "realtime_inference" else "slurm"
        wl["interface"] = interfaces.get(
            f"{team}:{kind}", interfaces.get(team, interfaces.get(kind, fallback))
        )
        types = ran.group_by("gpu_type").agg(
            (pl.col("gpus") * pl.col("elapsed_s")).sum().alias("gpu_hours")
        )
        wl["gpu_types"] = _catalog_types(types, gpu_equivalents, default_gpu_types)
        extra = [c for c in kind_requires.get(kind, ()) if c not in wl.get("requires", [])]
        if extra:
            wl["requires"] = [*wl.get("requires", []), *extra]
        wanted = [c for key in (f"{team}:{kind}", team, kind) for c in (prefers or {}).get(key, ())]
        merged = list(dict.fromkeys([*wl.get("prefers", []), *wanted]))
        if merged:
            wl["prefers"] = merged
        if kind == "realtime_inference":
            peak = max(ev["peak_busy_gpus"], 1.0)
            wl["peak_requests_per_second"] = round(
                peak * target_utilization / gpu_seconds_per_request, 2
            )
            wl["gpu_seconds_per_request"] = float(gpu_seconds_per_request)
            wl["p99_latency_ms"] = float(p99_latency_ms)
        workloads.append(_ordered(wl))
    return Demand(
        workloads=workloads,
        evidence=pl.DataFrame(evidence, schema=_EVIDENCE_SCHEMA, orient="row"),
        busy=busy_all,
        window_days=float(window_days),
    )


def _measure(
    cls: pl.DataFrame,
    ran: pl.DataFrame,
    name: str,
    kind: str,
    team: str,
    months: float,
    window_days: float,
    first: Any,
    last: Any,
    flat_profile_min_hours: float,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Evidence row and workload dict (without interface and GPU types) of one class."""
    gpus = ran["gpus"].to_numpy()
    hours = (ran["elapsed_s"] / 3600.0).to_numpy()
    gpu_hours = float((gpus * hours).sum())
    waits = (
        cls.filter(pl.col("start").is_not_null() & pl.col("submit").is_not_null())
        .select(
            ((pl.col("start") - pl.col("submit")).dt.total_seconds() / 3600.0).clip(lower_bound=0)
        )
        .to_series()
        .to_numpy()
    )
    turnaround = (
        ran.filter(pl.col("submit").is_not_null() & ~pl.col("start_unknown"))
        .select(
            ((pl.col("end") - pl.col("submit")).dt.total_seconds() / 3600.0).clip(lower_bound=0)
        )
        .to_series()
        .to_numpy()
    )
    states = cls["state"].value_counts()
    state_n = dict(zip(states["state"].to_list(), states["count"].to_list(), strict=True))
    n = cls.height
    busy = (
        busy_gpus(ran, first, last)
        if not ran.is_empty()
        else pl.DataFrame({"hour": [], "busy_gpus": []})
    )
    busy_v = busy["busy_gpus"].to_numpy() if busy.height else np.zeros(1)
    nodes = ran["nodes"].drop_nulls()
    users = cls["user"].drop_nulls().n_unique() if "user" in cls.columns else 0
    interactive = cls["interactive"].drop_nulls() if "interactive" in cls.columns else None
    ev = {
        "workload": name,
        "kind": kind,
        "team": team,
        "jobs": n,
        "jobs_ran": ran.height,
        "users": users,
        "gpu_hours": gpu_hours,
        "gpu_hours_per_month": gpu_hours / months,
        "gpus_p50": _quantile(gpus, 0.5),
        "gpus_p95": _quantile(gpus, 0.95),
        "gpus_max": int(gpus.max()) if gpus.size else 0,
        "nodes_max": int(nodes.to_numpy().max()) if nodes.len() else None,
        "duration_hours_p50": _quantile(hours, 0.5),
        "duration_hours_p90": _quantile(hours, 0.9),
        "duration_hours_p99": _quantile(hours, 0.99),
        "duration_scv": scv(hours),
        "arrivals_per_day": n / window_days,
        "arrival_scv": scv(_gaps_hours(cls["submit"])),
        "wait_hours_p50": _quantile(waits, 0.5),
        "wait_hours_p90": _quantile(waits, 0.9),
        "wait_hours_p99": _quantile(waits, 0.99),
        "completion_hours_p90": _quantile(turnaround, 0.9),
        "completed_frac": state_n.get("COMPLETED", 0) / n,
        "failed_frac": (
            state_n.get("FAILED", 0) + state_n.get("NODE_FAIL", 0) + state_n.get("OUT_OF_MEMORY", 0)
        )
        / n,
        "cancelled_frac": state_n.get("CANCELLED", 0) / n,
        "timeout_frac": state_n.get("TIMEOUT", 0) / n,
        "mean_busy_gpus": float(busy_v.mean()),
        "peak_busy_gpus": float(busy_v.max()),
        "interactive_frac": (
            float(interactive.cast(pl.Float64).to_numpy().mean())
            if interactive is not None and interactive.len()
            else None
        ),
    }
    multi_node = bool(nodes.len() and _quantile(nodes.to_numpy(), 0.95) > 1)
    gang = _gang_size(gpus)
    wait_p90 = ev["wait_hours_p90"] if not math.isnan(ev["wait_hours_p90"]) else 1.0
    wl: dict[str, Any] = {"name": name, "kind": kind, "team": team}
    if kind == "experimentation":
        wl["concurrent_users"] = max(1, _concurrent_users(ran))
        wl["gpus_per_user"] = max(1, int(_quantile(gpus, 0.5)) if gpus.size else 1)
        wl["max_queue_wait_hours"] = round_up_hours(wait_p90)
    elif kind != "realtime_inference":
        wl["gpus_per_job"] = gang
        wl["gpu_hours_per_month"] = round(max(ev["gpu_hours_per_month"], 0.01), 1)
        wl["mean_job_hours"] = round(max(float(hours.mean()) if hours.size else 1.0, 0.01), 2)
        if not math.isnan(ev["duration_scv"]):
            wl["duration_scv"] = round(ev["duration_scv"], 3)
        if kind in DEADLINE_KINDS:
            comp = ev["completion_hours_p90"]
            wl["max_completion_hours"] = round_up_hours(comp if not math.isnan(comp) else 8.0)
        else:
            wl["max_queue_wait_hours"] = round_up_hours(wait_p90)
    long_jobs = hours.size > 0 and float(hours.mean()) >= flat_profile_min_hours
    wl["profile"] = "flat" if long_jobs else hour_of_week_profile(busy)
    # Only a flat class gets its measured arrival SCV: a measured hour-of-week profile already
    # carries the daily rhythm, which the night-long gaps would count a second time.
    if long_jobs and kind in _ARRIVAL_SCV_KINDS and not math.isnan(ev["arrival_scv"]):
        wl["arrival_scv"] = round(ev["arrival_scv"], 3)
    if multi_node:
        wl["requires"] = ["gang_scheduling", "topology_aware"]
    if kind == "experimentation" and ev["interactive_frac"]:
        wl["prefers"] = ["interactive_shell"]
    wl["divisible"] = kind != "distributed_training" and not multi_node
    return ev, wl


def _concurrent_users(ran: pl.DataFrame) -> int:
    """p95 over active hours of distinct users holding GPUs in the same hour."""
    if ran.is_empty() or "user" not in ran.columns:
        return 1
    tz = time_zone_of(ran, "start")
    spans = ran.select(
        pl.col("user").fill_null("?"),
        pl.datetime_ranges(
            pl.col("start").dt.truncate("1h"), pl.col("end"), "1h", time_zone=tz
        ).alias("hour"),
    ).explode("hour")
    per_hour = spans.group_by("hour").agg(pl.col("user").n_unique().alias("n"))
    if per_hour.is_empty():
        return 1
    return int(_quantile(per_hour["n"].to_numpy(), 0.95))


_KEY_ORDER = (
    "name",
    "kind",
    "team",
    "interface",
    "gpu_types",
    "gpus_per_job",
    "gpu_hours_per_month",
    "mean_job_hours",
    "duration_scv",
    "arrival_scv",
    "max_queue_wait_hours",
    "max_completion_hours",
    "concurrent_users",
    "gpus_per_user",
    "peak_requests_per_second",
    "gpu_seconds_per_request",
    "p99_latency_ms",
    "profile",
    "requires",
    "prefers",
    "divisible",
)


def _ordered(wl: dict[str, Any]) -> dict[str, Any]:
    return {k: wl[k] for k in _KEY_ORDER if k in wl}


def scenario_document(
    workloads: Sequence[Mapping[str, Any]],
    *,
    name: str = "Inventory-derived scenario",
    description: str = "",
    team: Mapping[str, Mapping[str, float]] | None = None,
    hiring: Mapping[str, Any] | None = None,
    procurement: Mapping[str, Any] | None = None,
    policy: Mapping[str, Any] | None = None,
    today: str = "slurm",
    users: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A whole scenario (docs/scenario.md, schema_version 1) around derived workloads.

    Team, hiring, procurement and policy are not in a job log: the defaults are starting values
    for the analyst to edit (zero staff is deliberate, so nobody mistakes them for evidence).
    ``[current]`` records what the log does show: these jobs run on ``today`` (a scheduler's
    accounting, so Slurm unless told otherwise), with each workload's ``users`` when known.
    """
    return {
        "schema_version": 1,
        "scenario": {
            "name": name,
            "description": description
            or (
                "Derived from a job inventory by cluster_decide.inventory; team, procurement and "
                "policy are defaults to edit."
            ),
        },
        "team": dict(
            team
            or {
                "hpc": {"fte": 0.0, "loaded_cost_usd_per_year": 200000.0},
                "kubernetes": {"fte": 0.0, "loaded_cost_usd_per_year": 220000.0},
            }
        ),
        "hiring": dict(hiring or {"allowed": True, "max_fte": 4, "one_time_cost_usd": 40000.0}),
        "procurement": dict(
            procurement
            or {
                "mode": "cloud",
                "on_demand_burst": True,
                "horizon_months": 36,
            }
        ),
        "policy": dict(
            policy
            or {
                "platforms": ["slurm", "kubernetes", "kubernetes_batch", "shared"],
                "archetype": "any",
            }
        ),
        "workloads": [dict(w) for w in workloads],
        "current": {
            "workloads": {
                str(w["name"]): {"platform": today}
                | ({"users": int(users[w["name"]])} if users and users.get(w["name"]) else {})
                for w in workloads
            }
        },
    }


def write_scenario(path: str | Path, workloads: Sequence[Mapping[str, Any]], **kwargs: Any) -> Path:
    """Write `scenario_document(workloads, **kwargs)` as TOML to `path`; returns the path.

    The write is atomic: a failure (a full disk) leaves the old file as it was.
    """
    from cluster_decide.base.atomic import write_atomic

    return write_atomic(path, tomli_w.dumps(scenario_document(workloads, **kwargs)))
