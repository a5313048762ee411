"""Predicted service levels of a plan beside each workload's SLO.

Real-time inference: the p99 latency (Erlang-C queue wait + service time) at the busiest hour
with the replicas the plan provides for it. Training and batch: the mean queue wait of each
class in its pool from the effective-slot M/G/c approximation of
:func:`cluster_decide.queueing.batch_waits`, over the pool's baseline GPUs plus its average burst,
less what its non-batch work holds on average. Deadline classes report their completion time:
the window in which fluid earliest-deadline-first scheduling finishes each hour's work on the
capacity the rest of the pool leaves free, plus one job's run time. Experimentation is sized for its concurrent users directly and has no row.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Literal

import numpy as np
import polars as pl

from cluster_decide.evaluate import Decisions, Evaluation
from cluster_decide.model.data import (
    DEMAND_UNITS_PER_GPU,
    ModelData,
    batch_class,
    busy_gpus,
    job_stretch,
)
from cluster_decide.plan import SERVICE_LEVEL_SCHEMA
from cluster_decide.queueing import BatchClass, batch_waits, deadline_window, latency_quantile
from cluster_decide.scenario import DeadlineWorkload, RealtimeWorkload, TrainingWorkload
from cluster_decide.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT

__all__ = ["batch_waits_by_pool", "realtime_replicas", "service_levels"]


def realtime_replicas(data: ModelData, key: tuple[str, str, str], share_pct: int) -> list[int]:
    """Replicas serving a real-time workload's share in each hour of the week."""
    _w, p, _g = key
    util = data.platform(p).utilization["realtime_inference"]
    demand = data.combos[key].demand / DEMAND_UNITS_PER_GPU * util * share_pct / 100.0
    return [max(1, math.floor(v + 1e-6)) if v > 0 else 0 for v in demand.tolist()]


def _speed(data: ModelData, name: str, g: str) -> float:
    cat = data.scenario.catalog
    w = next(x for x in data.workloads if x.name == name)
    ref, gpu = cat.gpus[w.gpu_types[0]], cat.gpus[g]
    return ref.inference_speed / gpu.inference_speed


def batch_waits_by_pool(
    data: ModelData, dec: Decisions, ev: Evaluation
) -> dict[tuple[str, str, str], float]:
    """Predicted mean queue wait (hours) of every placed batch share, pooled per (pool, GPU type).

    The pool's GPUs are its baseline nodes plus its burst and less what its non-batch work
    holds, each averaged over the hours the batch classes submit work (their combined profile),
    so a nightly class is not charged for capacity that daytime notebooks hold.
    """
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    groups: dict[tuple[str, str], list[tuple[str, BatchClass]]] = defaultdict(list)
    shares = _own_capacity_shares(dec)
    out: dict[tuple[str, str, str], float] = _spot_waits(data, dec)
    for (name, p, g), s in sorted(shares.items()):
        w = workloads[name]
        if s > 0 and isinstance(w, TrainingWorkload | DeadlineWorkload):
            stretch = job_stretch(w, data.platform(p), cat.gpus[g], cat)
            groups[(p, g)].append((name, batch_class(w, stretch, s)))
    units = DEMAND_UNITS_PER_GPU_PERCENT
    for (p, g), classes in groups.items():
        gpn = data.gpus_per_node[g]
        names = {n for n, _ in classes}
        batch_load = sum(
            s * data.combos[k].demand
            for k, s in shares.items()
            if k[1] == p and k[2] == g and k[0] in names
        )
        weights = np.asarray(batch_load, dtype=float)
        weights = (
            weights / weights.sum()
            if weights.sum() > 0
            else np.full(weights.shape, 1.0 / weights.size)
        )
        held = sum(
            float((data.combos[k].demand * weights).sum()) * s / units
            for k, s in shares.items()
            if k[1] == p and k[2] == g and s > 0 and k[0] not in names
        )
        burst = ev.burst.get((p, g))
        rented = float((burst * weights).sum()) / DEMAND_UNITS_PER_GPU if burst is not None else 0.0
        capacity = dec.nodes.get((p, g), 0) * gpn + rented
        usable = max(0, math.floor((capacity - held) / gpn)) * gpn
        # Slurm (also inside a shared pool) backfills; gang admission and the default scheduler queue in order.
        order: Literal["backfill", "fifo"] = (
            "backfill" if data.pool(p).platform in ("slurm", "shared") else "fifo"
        )
        estimates = batch_waits(usable, [c for _, c in classes], gpn, order=order)
        sharing = ev.sharing.get((p, g))
        for (name, _cls), est in zip(classes, estimates, strict=True):
            key = (name, p, g)
            # Training in the troughs waits as in a pool of the capacity the services leave on
            # average, plus the fluid wait through their peaks (the backlog they build).
            fluid = sharing.wait_centi_hours / 100 if sharing and key in data.flexible else 0.0
            out[key] = max(est.mean + fluid, out.get(key, 0.0))
    return out


def _own_capacity_shares(dec: Decisions) -> dict[tuple[str, str, str], int]:
    """Percent of each placement on the pool's own capacity (nodes and burst), spot excluded."""
    return {k: s - dec.spot.get(k, 0) for k, s in dec.shares.items() if s - dec.spot.get(k, 0) > 0}


def _spot_waits(data: ModelData, dec: Decisions) -> dict[tuple[str, str, str], float]:
    """Mean queue wait of each batch share run on spot.

    The share runs alone on spot nodes that follow its own hourly need (sized, like any pool,
    for its SLO), counted in whole nodes as the pools are.
    """
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    out = {}
    for (name, p, g), pct in sorted(dec.spot.items()):
        w = workloads[name]
        if pct <= 0 or not isinstance(w, TrainingWorkload | DeadlineWorkload):
            continue
        gpn = data.gpus_per_node[g]
        gpus = float(data.combos[(name, p, g)].demand.max()) / DEMAND_UNITS_PER_GPU * pct / 100
        usable = max(gpn, math.floor(gpus / gpn) * gpn)
        cls = batch_class(w, job_stretch(w, data.platform(p), cat.gpus[g], cat), pct)
        order: Literal["backfill", "fifo"] = "fifo"
        out[(name, p, g)] = batch_waits(usable, [cls], gpn, order=order)[0].mean
    return out


def _deadline_window(
    data: ModelData, dec: Decisions, ev: Evaluation, key: tuple[str, str, str]
) -> float:
    """Hours a deadline class's work waits for capacity in its pool (fluid EDF over the week).

    Free capacity per hour is the pool's baseline plus burst less everything else placed there.
    """
    name, p, g = key
    units = DEMAND_UNITS_PER_GPU_PERCENT
    s = dec.shares[key] - dec.spot.get(key, 0)
    if s <= 0:  # all on spot: capacity that follows its own need, sized for its deadline
        return 0.0
    own = s * data.combos[key].demand / units
    total = ev.placed_units.get((p, g), np.zeros_like(own)) / units
    burst = ev.burst.get((p, g))
    capacity = dec.nodes.get((p, g), 0) * data.gpus_per_node[g] + (
        burst / DEMAND_UNITS_PER_GPU if burst is not None else 0.0
    )
    w = next(x for x in data.workloads if x.name == name)
    cat = data.scenario.catalog
    work = busy_gpus(w, job_stretch(w, data.platform(p), cat.gpus[g], cat), cat) * s / 100.0  # type: ignore[arg-type]
    return deadline_window(capacity - (total - own), work)


def service_levels(data: ModelData, dec: Decisions, ev: Evaluation) -> pl.DataFrame:
    """One row per placed workload share: workload, metric, predicted, target, met."""
    workloads = {w.name: w for w in data.workloads}
    rows: list[dict[str, object]] = []
    for key, s in sorted(dec.shares.items()):
        name, p, g = key
        w = workloads[name]
        if s > 0 and isinstance(w, RealtimeWorkload):
            replicas = max(realtime_replicas(data, key, s))
            service_s = w.gpu_seconds_per_request * _speed(data, name, g)
            rate = w.peak_requests_per_second * s / 100.0
            p99 = 1000.0 * latency_quantile(replicas, rate, service_s, 0.99, w.concurrency_per_gpu)
            rows.append(_row(name, "p99_latency_ms", p99, w.p99_latency_ms))
    cat = data.scenario.catalog
    for (name, p, g), wait in sorted(batch_waits_by_pool(data, dec, ev).items()):
        w = workloads[name]
        if isinstance(w, DeadlineWorkload):
            hours = w.mean_job_hours * job_stretch(w, data.platform(p), cat.gpus[g], cat)
            window = _deadline_window(data, dec, ev, (name, p, g))
            rows.append(_row(name, "completion_hours", window + hours, w.max_completion_hours))
        else:
            rows.append(_row(name, "queue_wait_hours", wait, w.slo))
    rows.sort(key=lambda r: (str(r["workload"]), str(r["metric"])))
    return pl.DataFrame(rows, schema=SERVICE_LEVEL_SCHEMA)


def _row(workload: str, metric: str, predicted: float, target: float) -> dict[str, object]:
    return {
        "workload": workload,
        "metric": metric,
        "predicted": predicted,
        "target": float(target),
        "met": bool(predicted <= target * (1 + 1e-9)),
    }
