"""Today against the plan: the estate as it runs now beside the recommendation, in one table.

"Today" is the status quo re-planned: every workload listed in ``[current]`` kept on the platform
family it runs on today, and on the cluster and GPU type it runs on where ``[current]`` names its
cluster (new workloads placed freely), sized and priced by the same model, so
its monthly cost compares like with like (staff, GPUs, leases on both sides). The table reads
both columns from the two plans' own frames (``pools``, ``staffing``, ``transition``, ``costs``).
"""

from __future__ import annotations

import polars as pl

from cluster_decide.base.vocabulary import FAMILY
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan
from cluster_decide.planning.solve import solve

__all__ = ["TODAY_SCHEMA", "status_quo", "today_plan", "today_vs_plan"]

TODAY_SCHEMA = {"item": pl.String, "today": pl.String, "plan": pl.String}
"""Columns of :func:`today_vs_plan`: what is compared, today's value, the plan's value."""


def status_quo(scn: Scenario) -> Scenario:
    """``scn`` with every workload of ``[current]`` held where it runs today.

    On the platform family it runs on (whatever the scenario's policy says of the future), and
    on its cluster where ``[current]`` names one (``[current] hold``), on that cluster's GPU
    type: the hardware it runs on, not a node group the cluster does not have yet (where the
    workload lists that type).
    """
    if scn.current is None:
        return scn
    today = {name: cur.platform for name, cur in scn.current.workloads.items()}
    gpu_of = {c.name: c.gpu_type for c in scn.current.clusters}
    on = {
        name: gpu_of[cur.cluster]
        for name, cur in scn.current.workloads.items()
        if cur.cluster is not None and cur.cluster in gpu_of
    }
    allowed = list(scn.policy.platforms)
    allowed += sorted({p for p in today.values() if p not in allowed})
    data = scn.to_dict()
    for w in data["workloads"]:
        if w["name"] in today:
            family = FAMILY[today[w["name"]]]
            w["platforms"] = [k for k in allowed if FAMILY[k] == family]
        if on.get(w["name"]) in w["gpu_types"]:
            w["gpu_types"] = [on[w["name"]]]
    return scn.update(
        {
            "workloads": data["workloads"],
            "policy": {"platforms": allowed},
            "current": {"hold": True},
        }
    )


def today_plan(scn: Scenario, time_limit_s: float = 10.0, workers: int = 2, seed: int = 0) -> Plan:
    """The cheapest plan that keeps every workload of ``[current]`` where it runs today."""
    return solve(status_quo(scn), time_limit_s=time_limit_s, workers=workers, seed=seed)


def _platforms(plan: Plan) -> str:
    return ", ".join(sorted(set(plan.placements["platform"].to_list()))) or "none"


def _gpus(plan: Plan) -> str:
    by_type = (
        plan.pools.group_by("gpu_type").agg(pl.col("gpus").sum()).filter(pl.col("gpus") > 0)
    ).sort("gpu_type")
    if not by_type.height:
        return "none"
    total = int(by_type["gpus"].sum())
    parts = ", ".join(f"{int(n)} {g}" for g, n in by_type.iter_rows())
    return f"{total} ({parts})"


def _staff(plan: Plan) -> str:
    s = plan.staffing
    have = float(s["available_fte"].sum()) + int(s["hires"].sum())
    need = float(s["required_fte"].sum())
    return f"{have:g} FTE employed, {need:.1f} needed"


def _changes(plan: Plan) -> tuple[str, str, str]:
    """The plan's moves, hires and retraining, in words (each "none" when there are none)."""
    moves = plan.transition.filter(pl.col("action").is_in(("move", "relocate")))
    moved = [
        f"{r['workload']} ({r['today']} to {r['planned']})"
        if r["action"] == "move"
        else f"{r['workload']} ({r['today_cluster']} to {r['planned_clusters']})"
        for r in moves.iter_rows(named=True)
    ]
    hires = int(plan.staffing["hires"].sum())
    retrained = int(plan.staffing["retrained_in"].sum())
    return (
        f"{len(moved)}: {'; '.join(moved)}" if moved else "none",
        str(hires) if hires else "none",
        f"{retrained} engineer(s)" if retrained else "none",
    )


def today_vs_plan(scn: Scenario, plan: Plan, today: Plan | None) -> pl.DataFrame:
    """Rows: platforms, baseline GPUs, staff, monthly and one-time cost, moves, hires, retraining.

    ``today`` is :func:`today_plan` of ``scn`` (None or infeasible: today's column says no plan
    keeps every workload where it runs, and why where the diagnosis says). Both plans' numbers
    come from their own frames.
    """
    kept = today is not None and today.feasible
    na = "no plan keeps every workload where it runs today"
    why = [s for s in (today.explanations if today is not None else []) if s.startswith("Why: ")]
    if not kept and why:
        na += ": " + why[0].removeprefix("Why: ").rstrip(".")
    before = _changes(today) if kept and today else ("", "", "")
    after = _changes(plan)
    rows = [
        ("platforms", _platforms(today) if kept and today else na, _platforms(plan)),
        ("baseline GPUs", _gpus(today) if kept and today else "", _gpus(plan)),
        ("engineers", _staff(today) if kept and today else "", _staff(plan)),
        (
            "monthly cost",
            money(today.total_monthly_usd) if kept and today else "",
            money(plan.total_monthly_usd),
        ),
        (
            "one-time cost",
            money(today.one_time_usd) if kept and today else "",
            money(plan.one_time_usd),
        ),
        *(
            (item, b, a)
            for item, b, a in zip(("moves", "hires", "retraining"), before, after, strict=True)
        ),
    ]
    return pl.DataFrame(
        [dict(zip(TODAY_SCHEMA, r, strict=True)) for r in rows], schema=TODAY_SCHEMA
    )
