"""Hour-by-hour sharing: preemptible training in the GPUs a pool's services leave idle.

In a pool that shares by the hour (Slurm on Kubernetes, or Kubernetes with a batch add-on),
services hold what their hourly profile needs and checkpointed, preemptible training queues
for the rest. This module replays that as a fluid queue over the repeating week, from the
decisions alone, for :func:`cluster_decide.evaluate` and for the plan's hourly split; the
CP-SAT model states the same rows as constraints (``add_sharing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from cluster_decide.base.constants import HOURS_PER_WEEK
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT
from cluster_decide.demand.queueing import BatchClass, gang_slots, periodic_waits
from cluster_decide.model.data import STEPS, ModelData

__all__ = [
    "HOURLY_SPLIT_SCHEMA",
    "Sharing",
    "TroughWait",
    "borrowed_gpus",
    "hourly_split",
    "replay_sharing",
    "trough_waits",
]

UNITS = DEMAND_UNITS_PER_GPU_PERCENT
"""Capacity units per GPU: percent × tenths of a GPU."""
MAX_WEEKS = 52
"""Weeks replayed to reach the repeating state (the backlog stops changing long before)."""


@dataclass(frozen=True)
class Sharing:
    """The replayed week of one sharing pool and GPU type (capacity units: percent × tenths of a GPU)."""

    services_units: np.ndarray
    """What the other work placed here holds in each hour (capacity units)."""
    training_units: np.ndarray
    """What the trough-filling training runs in each hour, restarts included (capacity units)."""
    backlog_steps: np.ndarray
    """Training queued at the end of each hour (capacity units × ``STEPS``)."""
    arriving_units: int
    """The trough-filling training's weekly need (capacity units × hours)."""
    supply_units: int
    """The pool's baseline capacity (capacity units)."""
    steady: bool
    """False when the troughs cannot hold the training's work: the backlog grows every week."""
    lost_units: int = 0
    """Work lost to preemption each week (capacity units × hours): restarts and redone work."""
    busy_units: np.ndarray | None = None
    """What the other work keeps busy in each hour (capacity units): services' replicas
    without the utilization factor, which stands for packing whole nodes (the waits count
    whole nodes themselves); the rest as held."""

    @property
    def has_troughs(self) -> bool:
        """Whether the other work's need changes by the hour, leaving troughs to fill.

        A Slurm cluster whose preemptible training sits beside flat training alone replays its
        week like any sharing pool (the leftover must hold the training), but shares nothing.
        """
        return bool(self.services_units.min() != self.services_units.max())

    @property
    def wait_centi_hours(self) -> float:
        """Mean fluid wait of the training (hundredths of an hour), by Little's law."""
        if not self.arriving_units:
            return 0.0
        return 100.0 * float(self.backlog_steps.sum()) / STEPS / self.arriving_units


def replay_sharing(
    data: ModelData, shares: dict[tuple[str, str, str], int], nodes: dict[tuple[str, str], int]
) -> dict[tuple[str, str], Sharing]:
    """Replay every sharing pool and GPU type that hosts trough-filling training.

    ``shares`` are the percent of each placement on the pool's own capacity (spot excluded).
    The backlog starts empty and the week is replayed until it repeats; the least repeating
    backlog is what the model's rows allow at best, so the two agree exactly.
    """
    out: dict[tuple[str, str], Sharing] = {}
    keys = sorted(
        {(p, g) for (_w, p, g), s in shares.items() if s > 0 and (_w, p, g) in data.flexible}
    )
    for p, g in keys:
        held = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        busy = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        pushed = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        arrive = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        for k, s in shares.items():
            if s <= 0 or k[1] != p or k[2] != g or k not in data.combos:
                continue
            combo = data.combos[k]
            if k in data.flexible:
                arrive += combo.load(s)
            else:
                held += combo.load(s)
                busy += _busy(data, k, combo.load(s))
                pushed += combo.pushed(s)
        supply = UNITS * data.gpus_per_node[g] * nodes.get((p, g), 0)
        net = STEPS * arrive + data.preempt_loss_steps * pushed - STEPS * (supply - held)
        backlog = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        last = 0
        steady = False
        for _ in range(MAX_WEEKS):
            start = last
            for t in range(HOURS_PER_WEEK):
                last = max(0, last + int(net[t]))
                backlog[t] = last
            if last == start:
                steady = True
                break
        prev = np.roll(backlog, 1)
        served = (prev + STEPS * arrive + data.preempt_loss_steps * pushed - backlog) / STEPS
        out[(p, g)] = Sharing(
            services_units=held,
            training_units=np.asarray(np.maximum(served, 0.0)),
            backlog_steps=backlog,
            arriving_units=int(arrive.sum()),
            supply_units=int(supply),
            steady=steady,
            lost_units=int(data.preempt_loss_steps * pushed.sum()) // STEPS,
            busy_units=busy,
        )
    return out


def _busy(data: ModelData, key: tuple[str, str, str], load: np.ndarray) -> np.ndarray:
    """Whole replicas a service's load keeps busy (as the simulator runs them); other work's load."""
    w = next(x for x in data.workloads if x.name == key[0])
    if w.kind != "realtime_inference":
        return load
    util = data.platform(key[1]).utilization[w.kind]
    return np.floor(load * util / UNITS + 1e-6).astype(np.int64) * UNITS


HOURLY_SPLIT_SCHEMA = {
    "hour": pl.Int64,
    "pool": pl.String,
    "gpu_type": pl.String,
    "services_gpus": pl.Float64,
    "training_gpus": pl.Float64,
    "idle_gpus": pl.Float64,
}
"""Columns of :func:`hourly_split`: hour of the week (0 = Monday 00:00), the pool and GPU type,
and its baseline GPUs split into what other work holds, what trough-filling training runs
(restarts included) and what stays idle; the three add up to the pool's GPUs."""


def hourly_split(sharing: Mapping[tuple[str, str], Sharing]) -> pl.DataFrame:
    """One row per hour of the week and pool with troughs to fill: services, training, idle GPUs."""
    rows = []
    for (p, g), sh in sorted(sharing.items()):
        if not sh.has_troughs:
            continue
        total = sh.supply_units / UNITS
        for t in range(HOURS_PER_WEEK):
            services = float(sh.services_units[t]) / UNITS
            training = min(float(sh.training_units[t]) / UNITS, max(0.0, total - services))
            rows.append(
                {
                    "hour": t,
                    "pool": p,
                    "gpu_type": g,
                    "services_gpus": round(services, 2),
                    "training_gpus": round(training, 2),
                    "idle_gpus": round(max(0.0, total - services - training), 2),
                }
            )
    return pl.DataFrame(rows, schema=HOURLY_SPLIT_SCHEMA)


def borrowed_gpus(sh: Sharing) -> np.ndarray:
    """GPUs the training runs each hour that the services hold at their peak (whole GPUs)."""
    spare = sh.services_units.max() - sh.services_units
    return np.floor(np.minimum(sh.training_units, spare) / UNITS + 1e-9)


@dataclass(frozen=True)
class TroughWait:
    """What a trough-filling class can expect, in hours (``docs/queueing.md`` checks both)."""

    wait_hours: float
    """Mean wait from submission to first start (what its queue-wait target bounds)."""
    completion_hours: float
    """Mean time from submission to completion: the run, the work lost to preemption, the
    first wait and the waits to resume after each preemption."""


def trough_waits(
    sh: Sharing, classes: Mapping[str, BatchClass], gpus_per_node: int
) -> dict[str, TroughWait]:
    """Waits of each trough-filling class on the GPUs the other work leaves, hour by hour.

    Class ``k`` sees the pool as the slots of its own gang size in the GPUs left each hour
    (:func:`~cluster_decide.demand.queueing.gang_slots`; the services' replicas as they run, whole
    nodes counted by the slots), and the pooled work of every class in those slots (as
    :func:`~cluster_decide.demand.queueing.batch_waits` pools classes). The work lost to preemption
    (``preempt_loss_steps`` per GPU pushed out, in the replay) lengthens every job alike. See
    :func:`~cluster_decide.demand.queueing.periodic_waits`.
    """
    held = sh.busy_units if sh.busy_units is not None else sh.services_units
    left = np.maximum(sh.supply_units - held, 0) // UNITS
    work = sum(c.arrival_rate * c.gpus * c.mean_duration for c in classes.values())
    stretch = 1.0 + (sh.lost_units / sh.arriving_units if sh.arriving_units else 0.0)
    rate = sum(c.arrival_rate for c in classes.values())
    out = {}
    for name, cls in classes.items():
        slots = tuple(gang_slots(int(g), cls.gpus, gpus_per_node) for g in left)
        mean = work / cls.gpus / rate * stretch if rate > 0 else 0.0
        w = periodic_waits(round(rate, 9), round(mean, 9), slots)
        out[name] = TroughWait(w.first_start, cls.mean_duration * stretch + w.delay)
    return out
