"""Hour-by-hour sharing: preemptible training in the GPUs a pool's services leave idle.

In a pool that shares by the hour (Slurm on Kubernetes, or Kubernetes with a batch add-on),
services hold what their hourly profile needs and checkpointed, preemptible training queues
for the rest. This module replays that as a fluid queue over the repeating week, from the
decisions alone, for :func:`cluster_decide.evaluate` and for the plan's hourly split; the
CP-SAT model states the same rows as constraints (``add_sharing``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cluster_decide.constants import HOURS_PER_WEEK
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, STEPS, ModelData, pushed_out

__all__ = ["Sharing", "replay_sharing"]

UNITS = DEMAND_UNITS_PER_GPU * 100
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
        pushed = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        arrive = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        for k, s in shares.items():
            if s <= 0 or k[1] != p or k[2] != g or k not in data.combos:
                continue
            demand = data.combos[k].demand
            if k in data.flexible:
                arrive += s * demand
            else:
                held += s * demand
                pushed += s * pushed_out(demand)
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
        )
    return out
