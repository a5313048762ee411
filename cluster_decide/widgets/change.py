"""Why the answer moved: one sentence built from the difference between two plans.

When a control change moves the architecture, or the monthly cost by more than a few percent,
the room needs the cause, not just the new number. The sentence names the change that was made,
what the plans differ in most (GPUs of a type, and whether that is room for another gang of a
large training job), the platforms that appeared or went away, and the cost of it.
"""

from __future__ import annotations

import math

import polars as pl

from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, PLATFORM_LABELS
from cluster_decide.inputs.scenario import Scenario, TrainingWorkload
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan

__all__ = ["JUMP_SHARE", "change_sentence", "is_jump"]

JUMP_SHARE = 0.03
"""A cost move larger than this share of the earlier cost (or a new architecture) is a jump."""


def is_jump(a: Plan, b: Plan) -> bool:
    """Whether ``b`` differs from ``a`` enough to need a reason: new architecture or cost jump."""
    if not (a.feasible and b.feasible):
        return a.feasible != b.feasible
    share = abs(b.total_monthly_usd - a.total_monthly_usd) / max(a.total_monthly_usd, 1.0)
    return a.archetype != b.archetype or share > JUMP_SHARE


def _gpus(plan: Plan) -> dict[str, int]:
    if plan.pools.height == 0:
        return {}
    df = plan.pools.group_by("gpu_type").agg(pl.col("gpus").sum()).sort("gpu_type")
    return {str(g): int(n) for g, n in df.iter_rows()}


def _platforms(plan: Plan) -> set[str]:
    return set(plan.pools["platform"].to_list()) if plan.pools.height else set()


def _component(plan: Plan, name: str) -> float:
    df = plan.costs.filter(pl.col("component") == name)
    return float(df["monthly_usd"].sum()) if df.height else 0.0


def _gang(scn: Scenario | None, plan: Plan, gpu: str) -> tuple[str, int] | None:
    """The largest gang (GPUs per job) of a training workload placed on ``gpu``, with its name."""
    if scn is None:
        return None
    placed = set(plan.placements.filter(pl.col("gpu_type") == gpu)["workload"].to_list())
    gangs = [
        (x.gpus_per_job, x.name)
        for x in scn.workloads
        if isinstance(x, TrainingWorkload) and x.name in placed and x.gpus_per_job >= 16
    ]
    if not gangs:
        return None
    size, name = max(gangs)
    return name, size


def change_sentence(a: Plan, b: Plan, what: str, b_scenario: Scenario | None = None) -> str:
    """Why the answer moved from ``a`` to ``b`` after ``what`` ("training demand ×1.05 → ×1.10")."""
    if not b.feasible:
        return f"After {what}, no plan meets every limit any more; the fixes are listed below."
    if not a.feasible:
        return f"After {what}, a plan fits again: {money(b.total_monthly_usd)} a month."
    delta = b.total_monthly_usd - a.total_monthly_usd
    pct = delta / max(a.total_monthly_usd, 1.0)
    cost = f"{'+' if delta >= 0 else '−'}{money(abs(delta))} a month ({pct:+.0%})"
    gpus_a, gpus_b = _gpus(a), _gpus(b)
    moves = {g: gpus_b.get(g, 0) - gpus_a.get(g, 0) for g in {*gpus_a, *gpus_b}}
    causes: list[str] = []
    if moves:
        gpu = max(sorted(moves), key=lambda g: abs(moves[g]))
        d = moves[gpu]
        if d:
            gang = _gang(b_scenario, b if d > 0 else a, gpu)
            extra = ""
            if gang is not None and abs(d) >= 0.9 * gang[1]:
                slots = max(1, round(abs(d) / gang[1]))
                which = "a second" if slots == 1 and d > 0 else str(slots)
                side = "room for" if d > 0 else "no longer room for"
                extra = (
                    f" — {side} {which} {gang[1]}-GPU {gang[0]} job{'s' if slots > 1 else ''}"
                    " running at once"
                )
            causes.append(
                f"{'needs' if d > 0 else 'frees'} {abs(d):,} {'more ' if d > 0 else ''}{gpu} GPUs "
                f"({gpus_a.get(gpu, 0):,} → {gpus_b.get(gpu, 0):,}){extra}"
            )
    gone = sorted(_platforms(a) - _platforms(b))
    new = sorted(_platforms(b) - _platforms(a))
    if a.archetype != b.archetype:
        arch = (
            f"the answer moves from {ARCHETYPE_LABELS.get(a.archetype or '', a.archetype)} to "
            f"{ARCHETYPE_LABELS.get(b.archetype or '', b.archetype)}"
        )
        if gone or new:
            parts = [f"{PLATFORM_LABELS.get(p, p)} goes" for p in gone]
            parts += [f"{PLATFORM_LABELS.get(p, p)} comes in" for p in new]
            arch += f" ({', '.join(parts)})"
        causes.append(arch)
    for name, label in (("staff", "staff"), ("burst", "on-demand rental")):
        usd = _component(b, name) - _component(a, name)
        if abs(usd) >= max(0.25 * abs(delta), 1000) and not math.isnan(usd):
            causes.append(f"{label} {'+' if usd > 0 else '−'}{money(abs(usd))} a month")
    why = "; ".join(causes) if causes else "the same pools cost more or less to run"
    return f"{what[0].upper()}{what[1:]} {why}: {cost}."
