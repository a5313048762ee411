"""Predicted service levels of a plan beside each workload's target: one row per placed share.

Real-time inference: the worst hour's p99 latency (M/G/c queue wait + service time, see
:func:`cluster_decide.demand.queueing.latency_quantile`) of each piece with the replicas the plan
provides for that piece's own traffic; with ``headroom = "n+1"`` one node's worth of replicas is
left out, so the p99 holds with a node down. Interactive (experimentation) classes: the worst
hour's mean wait for a seat, M/M/c over sessions (:func:`cluster_decide.demand.queueing.mean_wait_mmc`).
Training and batch: the mean queue wait of each class in its pool from the effective-slot M/G/c
approximation of :func:`cluster_decide.demand.queueing.batch_waits`, over the pool's baseline GPUs plus
its average burst, less what its non-batch work holds on average, and in a pool that bursts
never fewer than the nodes its largest job needs (rented for a job that finds none free); a
class whose jobs span nodes waits on the pool's own nodes alone, less what the other work holds
there beyond the burst (rented GPUs carry single-node work only); preemptible training that
fills a sharing pool's troughs waits on the GPUs the services leave hour by hour instead
(:func:`cluster_decide.planning.sharing.trough_waits`). Deadline classes report their
completion time: the window in which fluid earliest-deadline-first scheduling finishes each
hour's work on the capacity the rest of the pool leaves free, plus one job's run time.

Columns of the frame: workload, pool, gpu_type, metric, predicted, target, met.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from typing import Literal, Protocol

import numpy as np
import polars as pl

from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT
from cluster_decide.demand.queueing import (
    batch_waits,
    deadline_window,
    latency_quantile,
    mean_wait_mmc,
    service_time_exceedance,
)
from cluster_decide.inputs.scenario import (
    DeadlineWorkload,
    ExperimentationWorkload,
    RealtimeWorkload,
    TrainingWorkload,
    Workload,
)
from cluster_decide.model.data import (
    DEMAND_UNITS_PER_GPU,
    ModelData,
    batch_class,
    busy_gpus,
    job_stretch,
    queued_class,
    realtime_rates,
    spot_wait_hours,
)
from cluster_decide.model.decisions import Decisions
from cluster_decide.planning.sharing import Sharing, trough_waits

__all__ = [
    "SERVICE_LEVEL_SCHEMA",
    "PoolLoads",
    "batch_waits_by_pool",
    "busy_gpus_by_placement",
    "busy_gpus_by_pool",
    "realtime_replicas",
    "service_levels",
    "slow_requests",
]


class PoolLoads(Protocol):
    """What the service levels read of an evaluation: the load and burst of every pool.

    :class:`cluster_decide.planning.evaluation.Evaluation` has these fields; naming only them here keeps
    this module below the evaluator, which calls it (no import cycle, not even for types).
    """

    @property
    def placed_units(self) -> Mapping[tuple[str, str], np.ndarray]:
        """Work placed on each (pool, GPU type) per hour of the week, in demand units."""
        ...

    @property
    def burst(self) -> Mapping[tuple[str, str], np.ndarray]:
        """On-demand GPUs per hour of the week, in tenths of a GPU."""
        ...

    @property
    def sharing(self) -> Mapping[tuple[str, str], Sharing]:
        """The replayed week of each pool where training fills the troughs."""
        ...


SERVICE_LEVEL_SCHEMA = {
    "workload": pl.String,
    "pool": pl.String,
    "gpu_type": pl.String,
    "metric": pl.String,
    "predicted": pl.Float64,
    "target": pl.Float64,
    "met": pl.Boolean,
}
"""Columns of ``Plan.service_levels``."""

Pools = set[tuple[str, str]] | None


def _gpus_of_share(data: ModelData, key: tuple[str, str, str], share_pct: int) -> np.ndarray:
    """GPUs the plan gives a share in each hour, before the platform's utilization factor."""
    kind = next(w.kind for w in data.workloads if w.name == key[0])
    util = data.platform(key[1]).utilization[kind]
    return data.combos[key].load(share_pct) / DEMAND_UNITS_PER_GPU_PERCENT * util


def realtime_replicas(data: ModelData, key: tuple[str, str, str], share_pct: int) -> list[int]:
    """Replicas serving a real-time workload's share in each hour of the week (spares included)."""
    gpus = _gpus_of_share(data, key, share_pct)
    return [max(1, math.floor(v + 1e-6)) if v > 0 else 0 for v in gpus.tolist()]


def _speed(data: ModelData, name: str, g: str) -> float:
    cat = data.scenario.catalog
    w = next(x for x in data.workloads if x.name == name)
    ref, gpu = cat.gpus[w.gpu_types[0]], cat.gpus[g]
    return ref.inference_speed / gpu.inference_speed


def _realtime_p99_ms(
    data: ModelData, w: RealtimeWorkload, key: tuple[str, str, str], s: int
) -> float:
    """The worst hour's p99 latency of a service's share, spare replicas left out."""
    _name, p, g = key
    cat = data.scenario.catalog
    replicas = realtime_replicas(data, key, s)
    spare = cat.gpus[g].gpus_per_node if w.headroom == "n+1" else 0
    rates = realtime_rates(w, data.platform(p), cat) * s / 100.0
    service_s = w.gpu_seconds_per_request * _speed(data, w.name, g)
    worst = 0.0
    for n, rate in sorted(set(zip(replicas, rates.tolist(), strict=True))):
        if rate > 0:
            latency = (
                latency_quantile(
                    n - spare, rate, service_s, 0.99, w.concurrency_per_gpu, w.service_time_cv
                )
                if n - spare > 0
                else math.inf
            )
            worst = max(worst, latency)
    return 1000.0 * worst


def slow_requests(data: ModelData, key: tuple[str, str, str]) -> tuple[float, float]:
    """A service placement's mean request time (s) and the share of requests slower than its target.

    The p99 this module predicts is the 99th-percentile wait plus the *mean* request time
    (``docs/queueing.md``); the second figure is the share of requests whose own GPU time, on
    this GPU type and with the stated ``service_time_cv``, already exceeds the target.
    """
    w = next(x for x in data.workloads if x.name == key[0])
    if not isinstance(w, RealtimeWorkload):
        raise TypeError(f"{key[0]} is not a real-time service")
    service_s = w.gpu_seconds_per_request * _speed(data, w.name, key[2])
    return service_s, service_time_exceedance(
        service_s, w.service_time_cv, w.p99_latency_ms / 1000.0
    )


def _session_wait_hours(
    data: ModelData, w: ExperimentationWorkload, key: tuple[str, str, str], s: int
) -> float:
    """The worst hour's mean wait for a seat of an interactive share (M/M/c over sessions)."""
    gpus = _gpus_of_share(data, key, s)
    seats = np.floor(gpus / w.gpus_per_user + 1e-6).astype(int)
    sessions = w.concurrent_users * s / 100.0 * _shape(data, w)
    worst = 0.0
    for c, a in sorted(set(zip(seats.tolist(), sessions.tolist(), strict=True))):
        worst = max(worst, mean_wait_mmc(int(c), a, w.mean_session_hours))
    return worst


def _shape(data: ModelData, w: Workload) -> np.ndarray:
    if isinstance(w.profile, str):
        return data.scenario.catalog.profile(w.profile)
    arr = np.asarray(w.profile, dtype=float)
    return arr / arr.max()


def busy_gpus_by_pool(data: ModelData, dec: Decisions) -> dict[tuple[str, str], np.ndarray]:
    """GPUs kept busy in each hour of the week, per (pool, GPU type): work, not sizing.

    Training and batch: their GPU-hours spread by their profile, at this GPU's speed (the
    stretch of slower GPUs and of lost topology or preemption time is busy time too).
    Services: requests per second × GPU-seconds each / requests a GPU runs at once.
    Notebooks: GPUs held by the sessions in progress. This is what an operator's dashboard
    calls utilization once divided by the GPUs paid for (``Plan.pools.utilization``). The part
    of a share run on spot keeps spot nodes busy, not the pool's own: it is left out.
    """
    out: dict[tuple[str, str], np.ndarray] = {}
    for key, busy in busy_gpus_by_placement(data, dec).items():
        out[key[1:]] = out.get(key[1:], np.zeros(len(busy))) + busy
    return out


def busy_gpus_by_placement(
    data: ModelData, dec: Decisions
) -> dict[tuple[str, str, str], np.ndarray]:
    """:func:`busy_gpus_by_pool` per placement (workload, pool, GPU type), on the pool's own nodes."""
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    out: dict[tuple[str, str, str], np.ndarray] = {}
    for (name, p, g), s in sorted(dec.shares.items()):
        if s <= 0 or (name, p, g) not in data.combos or name not in workloads:
            continue
        w = workloads[name]
        part = (s - dec.spot.get((name, p, g), 0)) / 100.0
        if part <= 0:
            continue
        if isinstance(w, RealtimeWorkload):
            service_s = w.gpu_seconds_per_request * _speed(data, name, g)
            busy = w.peak_requests_per_second * _shape(data, w) * service_s / w.concurrency_per_gpu
        elif isinstance(w, ExperimentationWorkload):
            busy = w.concurrent_users * w.gpus_per_user * _shape(data, w)
        else:
            busy = busy_gpus(w, job_stretch(w, data.platform(p), cat.gpus[g], cat), cat)
        out[(name, p, g)] = part * np.asarray(busy, dtype=float)
    return out


def batch_waits_by_pool(
    data: ModelData, dec: Decisions, ev: PoolLoads, pools: Pools = None
) -> dict[tuple[str, str, str], float]:
    """Predicted mean queue wait (hours) of every placed batch share, pooled per (pool, GPU type).

    The pool's GPUs are its baseline nodes plus its burst and less what its non-batch work
    holds, each averaged over the hours the batch classes submit work (their combined profile),
    so a nightly class is not charged for capacity that daytime notebooks hold. A class whose
    jobs span nodes sees the baseline nodes alone, less what the non-batch work holds beyond
    the burst: a rented node arrives alone, not on the pool's fabric beside the others.
    """
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    groups: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    shares = _own_capacity_shares(dec)
    out: dict[tuple[str, str, str], float] = _spot_waits(data, dec, pools)
    for (name, p, g), s in sorted(shares.items()):
        w = workloads[name]
        if pools is not None and (p, g) not in pools:
            continue
        if s > 0 and isinstance(w, TrainingWorkload | DeadlineWorkload):
            groups[(p, g)].append((name, s))
    units = DEMAND_UNITS_PER_GPU_PERCENT
    for (p, g), classes in groups.items():
        gpn = data.gpus_per_node[g]
        names = {n for n, _ in classes}
        here = [(k, s) for k, s in shares.items() if k[1] == p and k[2] == g]
        batch_load = sum(data.combos[k].load(s) for k, s in here if k[0] in names)
        weights = np.asarray(batch_load, dtype=float)
        weights = (
            weights / weights.sum()
            if weights.sum() > 0
            else np.full(weights.shape, 1.0 / weights.size)
        )
        held = sum(
            float((data.combos[k].load(s) * weights).sum()) / units
            for k, s in here
            if k[0] not in names
        )
        burst = ev.burst.get((p, g))
        rented = float((burst * weights).sum()) / DEMAND_UNITS_PER_GPU if burst is not None else 0.0
        own = dec.nodes.get((p, g), 0) * gpn
        usable = max(0, math.floor((own + rented - held) / gpn)) * gpn
        # A job the burst GPUs cannot hold (one that spans nodes or outgrows the on-demand
        # instance) runs on the pool's own nodes only (``build.add_gang_fit``). It waits on them,
        # less what the non-batch work holds beyond the rented GPUs, beside the jobs the rest of
        # the rented GPUs do not carry.
        own_only = {n for n in names if data.off_burst(p, g, data.combos[(n, p, g)].gang_gpus)}
        usable_own = max(0, math.floor((own - max(0.0, held - rented)) / gpn)) * gpn
        single = sum(
            float((data.combos[k].load(s) * weights).sum()) / units
            for k, s in here
            if k[0] in names - own_only
        )
        on_own = 1.0 - min(1.0, max(0.0, rented - held) / single) if single > 0 else 1.0
        if data.bursts(p, g):
            # A job never waits for ever in a pool that rents: its queue has at least the nodes
            # its largest job needs, rented when no node is free (their GPU-hours are the jobs'
            # own, which the hourly need already rents).
            usable = max(usable, _rented_slot(data, g, [(n, p, g) for n, _s in classes]))
        # Slurm (also inside a shared pool) backfills; gang admission and the default scheduler queue in order.
        order: Literal["backfill", "fifo"] = (
            "backfill" if data.pool(p).platform in ("slurm", "shared") else "fifo"
        )
        sharing = ev.sharing.get((p, g))
        # Training in the troughs waits on the GPUs the other work leaves hour by hour.
        troughs = (
            trough_waits(
                sharing,
                {
                    n: batch_class(
                        workloads[n],  # type: ignore[arg-type]
                        job_stretch(workloads[n], data.platform(p), cat.gpus[g], cat),
                        pct,
                    )
                    for n, pct in classes
                    if (n, p, g) in data.flexible
                },
                gpn,
            )
            if sharing is not None
            else {}
        )
        for i, (name, _s) in enumerate(classes):
            key = (name, p, g)
            if name in troughs:
                out[key] = max(troughs[name].wait_hours, out.get(key, 0.0))
                continue
            # Each class meets the pool's work as it stands when its own jobs arrive.
            seen_by = _shape(data, workloads[name])
            stream = [
                queued_class(
                    workloads[n],  # type: ignore[arg-type]
                    job_stretch(workloads[n], data.platform(p), cat.gpus[g], cat),
                    cat,
                    pct,
                    seen_by,
                )
                for n, pct in classes
            ]
            if name in own_only:
                stream = [
                    c if n in own_only else replace(c, arrival_rate=c.arrival_rate * on_own)
                    for c, (n, _pct) in zip(stream, classes, strict=True)
                ]
            est = batch_waits(usable_own if name in own_only else usable, stream, gpn, order=order)[
                i
            ]
            out[key] = max(est.mean, out.get(key, 0.0))
    return out


def _rented_slot(data: ModelData, g: str, keys: list[tuple[str, str, str]]) -> int:
    """GPUs of the whole on-demand node the largest of these jobs needs, if the cap allows it.

    A bursting pool rents a node for a job that finds none free, so its queue never has fewer
    than these; 0 when the GPU type's burst cap (GPUs per hour, over all pools) is below them,
    or when the burst GPUs cannot hold the largest job (it spans nodes or outgrows the on-demand
    instance): those run on the pool's own nodes alone (``build.add_gang_fit``).
    """
    gpn = data.gpus_per_node[g]
    slot = max(data.combos[k].gang_gpus for k in keys)
    if data.off_burst(keys[0][1], g, slot):
        return 0
    cap = data.burst_cap_units.get(g)
    return gpn if cap is None or cap >= gpn * DEMAND_UNITS_PER_GPU else 0


def _own_capacity_shares(dec: Decisions) -> dict[tuple[str, str, str], int]:
    """Percent of each placement on the pool's own capacity (nodes and burst), spot excluded."""
    return {k: s - dec.spot.get(k, 0) for k, s in dec.shares.items() if s - dec.spot.get(k, 0) > 0}


def _spot_waits(
    data: ModelData, dec: Decisions, pools: Pools = None
) -> dict[tuple[str, str, str], float]:
    """Mean queue wait of each training share run on spot, on its own spot nodes.

    See :func:`cluster_decide.model.data.spot_wait_hours`.
    """
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    out = {}
    for (name, p, g), pct in sorted(dec.spot.items()):
        w = workloads[name]
        if pools is not None and (p, g) not in pools:
            continue
        if pct <= 0 or not isinstance(w, TrainingWorkload | DeadlineWorkload):
            continue
        combo = data.combos[(name, p, g)]
        out[(name, p, g)] = spot_wait_hours(w, combo, data.platform(p), cat.gpus[g], cat, pct)
    return out


def _deadline_window(
    data: ModelData, dec: Decisions, ev: PoolLoads, key: tuple[str, str, str]
) -> float:
    """Hours a deadline class's work waits for capacity in its pool (fluid EDF over the week).

    Free capacity per hour is the pool's baseline plus burst less everything else placed there.
    """
    name, p, g = key
    units = DEMAND_UNITS_PER_GPU_PERCENT
    s = dec.shares[key] - dec.spot.get(key, 0)
    if s <= 0:  # all on spot: capacity that follows its own need, sized for its deadline
        return 0.0
    own = data.combos[key].load(s) / units
    total = ev.placed_units.get((p, g), np.zeros_like(own)) / units
    burst = ev.burst.get((p, g))
    capacity = dec.nodes.get((p, g), 0) * data.gpus_per_node[g] + (
        burst / DEMAND_UNITS_PER_GPU if burst is not None else 0.0
    )
    w = next(x for x in data.workloads if x.name == name)
    cat = data.scenario.catalog
    work = busy_gpus(w, job_stretch(w, data.platform(p), cat.gpus[g], cat), cat) * s / 100.0  # type: ignore[arg-type]
    return deadline_window(capacity - (total - own), work)


def service_levels(
    data: ModelData, dec: Decisions, ev: PoolLoads, pools: Pools = None
) -> pl.DataFrame:
    """One row per placed workload share (in ``pools``, or all): the prediction beside the target.

    Shares that are not allowed candidates (unknown or blocked placements) get no row: the
    evaluator reports them under their own family.
    """
    workloads = {w.name: w for w in data.workloads}
    rows: list[dict[str, object]] = []
    valid = {
        k: s
        for k, s in dec.shares.items()
        if s > 0 and k in data.combos and not data.combos[k].blocked and k[0] in workloads
    }
    for key, s in sorted(valid.items()):
        name, p, g = key
        if pools is not None and (p, g) not in pools:
            continue
        w = workloads[name]
        if isinstance(w, RealtimeWorkload):
            p99 = _realtime_p99_ms(data, w, key, s)
            rows.append(_row(key, "p99_latency_ms", p99, w.p99_latency_ms))
        elif isinstance(w, ExperimentationWorkload):
            wait = _session_wait_hours(data, w, key, s)
            rows.append(_row(key, "queue_wait_hours", wait, w.max_queue_wait_hours))
    cat = data.scenario.catalog
    batch = replace(dec, shares=valid)
    for key, wait in sorted(batch_waits_by_pool(data, batch, ev, pools).items()):
        name, p, g = key
        w = workloads[name]
        if isinstance(w, DeadlineWorkload):
            hours = w.mean_job_hours * job_stretch(w, data.platform(p), cat.gpus[g], cat)
            window = _deadline_window(data, batch, ev, key)
            rows.append(_row(key, "completion_hours", window + hours, w.max_completion_hours))
        else:
            rows.append(_row(key, "queue_wait_hours", wait, w.slo))
    rows.sort(
        key=lambda r: (str(r["workload"]), str(r["pool"]), str(r["gpu_type"]), str(r["metric"]))
    )
    return pl.DataFrame(rows, schema=SERVICE_LEVEL_SCHEMA)


def _row(
    key: tuple[str, str, str], metric: str, predicted: float, target: float
) -> dict[str, object]:
    return {
        "workload": key[0],
        "pool": key[1],
        "gpu_type": key[2],
        "metric": metric,
        "predicted": predicted,
        "target": float(target),
        "met": bool(predicted <= target * (1 + 1e-9)),
    }
