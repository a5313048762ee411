"""Idle GPUs of a plan's own nodes that checkpointed training could use, where the model does not count it.

The model lets preemptible training fill the hours services and notebooks leave idle in a pool
that does not rent its peaks (``add_sharing`` in :mod:`cluster_decide.model.build`). Two kinds
of idle own GPUs it never offers to training, though a scheduler with preemption (Slurm's
preemptible QOS, Kueue's or Volcano's preemption, the shared pool's) can run checkpointed jobs
there and take the GPUs back when their owner needs them:

- **standby**: batch work's queueing headroom, the GPUs a pool holds so that the next run or
  job starts within its wait target (two 128-GPU slots for one run at a time, say): counted as
  held in every hour, idle between runs;
- **quiet hours of a pool that rents its peaks**: where a pool bursts, training there holds an
  even block of its own nodes in every hour, and the nodes the services leave at night stay idle.

So a plan that leaves many such GPUs idle while a checkpointed training class pays for GPUs
(elsewhere, or as that even block) may cost more than a plan that uses them: this module
measures those hours (:func:`idle_rooms`) and says so (:func:`idle_caveat`), a caveat on the
plan's cost beside the verdict. It does not price the saving: the training's own wait target,
preemption losses and whole nodes decide it, which is what the model would have to count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from cluster_decide.base.constants import HOURS_PER_MONTH, HOURS_PER_WEEK
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT as UNITS
from cluster_decide.inputs.scenario import DeadlineWorkload, TrainingWorkload
from cluster_decide.model.data import ModelData
from cluster_decide.model.decisions import Decisions
from cluster_decide.planning.explain_people import and_list
from cluster_decide.planning.service import busy_gpus_by_placement

__all__ = ["IdleRoom", "idle_caveat", "idle_rooms"]

MIN_NODE_MONTHS = 0.5
"""A room is worth a caveat when the training could fill at least this many node-months of it
(half a node, all month): less is within what whole nodes and headroom leave idle anyway."""


@dataclass(frozen=True)
class IdleRoom:
    """Idle GPU-hours of one pool and GPU type that checkpointed training could use."""

    pool: str
    gpu_type: str
    why: Literal["standby", "quiet_hours"]
    idle_gpu_hours: float
    """A month's GPU-hours of the pool's own nodes idle for that reason (never more than idle)."""
    owners: tuple[str, ...]
    """The batch classes whose headroom stands by (standby), or the services and notebooks
    whose quiet hours leave the GPUs idle (quiet hours)."""
    trainers: tuple[tuple[str, float], ...]
    """Checkpointed training that could run there, with the GPU-hours a month it runs now."""

    @property
    def fillable_gpu_hours(self) -> float:
        """The idle hours the training could fill at most: the smaller of the two."""
        return min(self.idle_gpu_hours, sum(h for _n, h in self.trainers))


def idle_rooms(data: ModelData, dec: Decisions) -> list[IdleRoom]:
    """Every pool and GPU type whose idle own GPUs checkpointed training could use, largest first.

    Idle is the pool's own GPUs less what its work keeps busy, hour by hour (the work, not its
    sizing: :func:`~cluster_decide.planning.service.busy_gpus_by_placement`). In a pool that
    rents its peaks all of it counts (quiet hours); elsewhere only what batch work holds beyond
    its busy GPUs (standby), since the model already offers the rest to trough-filling
    training. The training is each class that may be preempted (``interruptible``, so
    checkpointed or re-runnable), may run on that pool and GPU type, has a wait target at least
    one mean job long (work pushed out waits for the GPUs to come back, as for troughs) and
    does not already fill that pool's troughs. Rooms the training could fill less than
    :data:`MIN_NODE_MONTHS` of are left out.
    """
    scn = data.scenario
    busy = busy_gpus_by_placement(data, dec)
    hours = {
        w.name: sum(
            float(data.combos[k].load(s).mean()) / UNITS * HOURS_PER_MONTH
            for k, s in dec.shares.items()
            if k[0] == w.name and s > 0 and k in data.combos
        )
        for w in scn.workloads
    }
    rooms = []
    for (p, g), n in sorted(dec.nodes.items()):
        gpn = data.gpus_per_node[g]
        here = {k: b for k, b in busy.items() if k[1:] == (p, g)}
        idle = np.maximum(0.0, n * gpn - sum(here.values(), np.zeros(HOURS_PER_WEEK)))
        trainers = tuple(
            (w.name, hours[w.name])
            for w in scn.workloads
            if isinstance(w, TrainingWorkload)
            and w.is_interruptible
            and w.max_queue_wait_hours >= w.mean_job_hours
            and hours[w.name] > 0
            and (w.name, p, g) in data.combos
            and not data.combos[(w.name, p, g)].blocked
            and not (dec.shares.get((w.name, p, g), 0) and (w.name, p, g) in data.flexible)
        )
        training = {name for name, _h in trainers}
        if data.bursts(p, g):
            # The hours the services and notebooks leave below their own busiest hour: the
            # training's own standby (its wait target's headroom) is not theirs to lend.
            why: Literal["standby", "quiet_hours"] = "quiet_hours"
            owners = [k for k in here if not isinstance(scn.workload(k[0]), TrainingWorkload)]
            others = sum((here[k] for k in owners), np.zeros(HOURS_PER_WEEK))
            room = np.minimum(idle, others.max() - others)
        else:
            # What batch work holds beyond its busy GPUs: its headroom between runs. A class
            # cannot run in its own headroom, so the training's own is left out.
            why = "standby"
            owners = [
                k
                for k in here
                if k not in data.flexible
                and k[0] not in training
                and isinstance(scn.workload(k[0]), TrainingWorkload | DeadlineWorkload)
            ]
            held = sum(
                (
                    data.combos[k].load(dec.shares[k] - dec.spot.get(k, 0)) / UNITS - here[k]
                    for k in owners
                ),
                np.zeros(HOURS_PER_WEEK),
            )
            room = np.minimum(idle, np.maximum(0.0, held))
        found = IdleRoom(
            p, g, why, float(room.mean()) * HOURS_PER_MONTH, tuple(k[0] for k in owners), trainers
        )
        if trainers and found.fillable_gpu_hours >= MIN_NODE_MONTHS * gpn * HOURS_PER_MONTH:
            rooms.append(found)
    return sorted(rooms, key=lambda r: (-r.fillable_gpu_hours, r.pool, r.gpu_type))


def idle_caveat(rooms: list[IdleRoom]) -> str:
    """One sentence on the largest room (and how many more there are), or "" where there is none.

    Worded for a meeting: whose GPUs stand idle, when and how many hours a month, which
    training could use them, and that the model does not count it, so a cheaper plan may exist.
    """
    if not rooms:
        return ""
    r = rooms[0]
    names = and_list([n for n, _h in r.trainers])
    runs = sum(h for _n, h in r.trainers)
    if r.why == "standby":
        owners = and_list(list(dict.fromkeys(r.owners)))
        idle = (
            f"Between {owners}'s runs the {r.pool} pool's own {r.gpu_type} GPUs stand idle "
            f"about {_hours(r.idle_gpu_hours)} GPU-hours a month, held so that the next run "
            "starts within its wait target"
        )
        uncounted = (
            "which this model does not count (it lets training fill only the quiet hours of "
            "services and interactive work)"
        )
        back = "when a run starts"
    else:
        quiet = "in quiet hours"
        if r.owners:
            verb = "is" if len(r.owners) == 1 else "are"
            quiet = f"when {and_list(list(r.owners))} {verb} quiet"
        idle = (
            f"The {r.pool} pool's own {r.gpu_type} GPUs stand idle about "
            f"{_hours(r.idle_gpu_hours)} GPU-hours a month {quiet}, while it rents its peaks"
        )
        uncounted = "which this model counts only in pools that do not rent their peaks"
        back = "at the peaks"
    more = len(rooms) - 1
    also = (
        f" {'Another pool has' if more == 1 else f'{more} other pools have'} such idle GPUs too."
        if more
        else ""
    )
    return (
        f"{idle}; {names} ({_hours(runs)} GPU-hours a month, checkpointed) could run in them "
        f"and give them back {back}, {uncounted}, so a cheaper plan may exist.{also}"
    )


def _hours(gpu_hours: float) -> str:
    """GPU-hours as a meeting says them: to the hundred (76,900)."""
    return f"{round(gpu_hours, -2):,.0f}"
