"""The sentence that says what a sharing pool shares, when, and what that is worth in nodes.

It reads the week :mod:`cluster_decide.planning.sharing` replays, as
:mod:`cluster_decide.planning.explain_people` holds the people's sentences;
:func:`~cluster_decide.planning.explain.explain` puts it in a plan's reasons.
"""

from __future__ import annotations

import numpy as np

from cluster_decide.base.constants import HOURS_PER_WEEK
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT as UNITS
from cluster_decide.planning.explain_people import money, plural
from cluster_decide.planning.sharing import Sharing, borrowed_gpus

__all__ = ["sharing_sentence"]


def sharing_sentence(
    p: str,
    gpu: str,
    sh: Sharing,
    gpus_per_node: int,
    usd_per_node_month: float,
    holders: str = "services'",
) -> str | None:
    """What is shared, when, and how many nodes' worth of the training runs in borrowed GPUs.

    None where the other work's need is the same in every hour: there is no trough to share
    (a Slurm cluster of training alone), and nothing to say. ``holders`` names whose GPUs are
    borrowed ("services'", "notebooks'").

    The hours are the longest run that starts between Monday noon and Tuesday noon where the
    training borrows at least half its most (an evening's catch-up, a night), and the weekend
    when it does so in most weekend hours; the figure is the typical (median) borrowed in those
    hours. The saving is counted in this pool, not against another design: the other work's
    peak and the training's flat need (its weekly GPU-hours and restarts over the week), each in
    whole nodes, against the pool's nodes. What the training needs beyond the nodes the other
    work leaves free at its peak runs in borrowed GPUs; borrowing does not always save a node,
    and where it does not the sentence says so rather than count the training's need as saved.
    """
    if not sh.has_troughs:
        return None
    borrowed = borrowed_gpus(sh)
    most = float(borrowed.max())
    if most <= 0:
        return (
            f"Training in {p} runs only in GPUs nothing else there ever needs: nothing is borrowed."
        )
    high = borrowed >= most / 2
    night = _longest_run(high, range(12, 36))
    window = f" from {_clock(night[0])} to {_clock(night[-1] + 1)}" if 0 < len(night) < 24 else ""
    weekend = " and at weekends" if high[120:168].mean() > 0.5 else ""
    typical = int(np.median(borrowed[high]))
    pool_nodes = sh.supply_units // (UNITS * gpus_per_node)
    others = _whole_nodes(float(sh.services_units.max()) / UNITS, gpus_per_node)
    training = _whole_nodes(sh.arriving_units / HOURS_PER_WEEK / UNITS, gpus_per_node)
    saved = others + training - pool_nodes
    worth = f"{saved} nodes'" if saved != 1 else "1 node's"
    whose = holders.replace("'s", "").replace("'", "")
    counts = (
        f"at their peak the {whose} need {others} of the pool's {pool_nodes} nodes and the "
        f"training's weekly work would fill {plural(training, 'node')} on its own"
    )
    shared = f"Training uses {typical} of the {holders} {gpu} GPUs in {p}{window}{weekend}"
    if saved <= 0:
        return f"{shared}, but that saves no nodes: {counts}, which the pool has beside them."
    return (
        f"{shared}: {counts}, so {worth} worth of it "
        f"({money(saved * usd_per_node_month)} a month) runs in GPUs the {whose} leave idle."
    )


def _whole_nodes(gpus: float, gpus_per_node: int) -> int:
    return int(np.ceil(gpus / gpus_per_node - 1e-9))


def _longest_run(high: np.ndarray, starts: range) -> list[int]:
    """The longest run of consecutive ``high`` hours that starts at one of ``starts`` (the week wraps)."""
    best: list[int] = []
    for t in starts:
        if not high[t] or high[t - 1]:
            continue
        run = [t]
        while len(run) < len(high) and high[(run[-1] + 1) % len(high)]:
            run.append(run[-1] + 1)
        if len(run) > len(best):
            best = run
    return best


def _clock(hour: int) -> str:
    return f"{hour % 24:02d}:00"
