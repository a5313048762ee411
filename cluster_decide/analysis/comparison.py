"""What each archetype would cost, staff and deliver, solved with that archetype forced."""

from __future__ import annotations

import math

import polars as pl

from cluster_decide.base.constants import ARCHETYPES
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.model.data import ModelData, prepare
from cluster_decide.planning.evaluation import whole_node_usd
from cluster_decide.planning.plan import Plan
from cluster_decide.planning.solve import solve

__all__ = ["COMPARE_SCHEMA", "capability_gaps", "compare"]

COMPARE_SCHEMA = {
    "archetype": pl.String,
    "status": pl.String,
    "total_monthly_usd": pl.Float64,
    "delta_usd": pl.Float64,
    "cash_monthly_usd": pl.Float64,
    "pools": pl.String,
    "hires": pl.Int64,
    "note": pl.String,
    "delta_pct": pl.Float64,
    "hpc_fte": pl.Float64,
    "kubernetes_fte": pl.Float64,
    "hires_hpc": pl.Int64,
    "hires_kubernetes": pl.Int64,
    "capability_gaps": pl.String,
    "capability_gaps_usd": pl.Float64,
    "slo_met": pl.String,
    "min_slo_margin": pl.Float64,
    "reason": pl.String,
    "relaxation": pl.String,
    "whole_node_usd": pl.Float64,
}
"""Columns of :func:`compare` (money in USD per month, staff in FTE, margins as fractions)."""


def capability_gaps(scn: Scenario, plan: Plan) -> list[str]:
    """Preferred capabilities a plan's platforms lack, as ``workload: capability (support)``."""
    cat = scn.catalog
    out = []
    for r in plan.placements.unique(["workload", "platform"], maintain_order=True).iter_rows(
        named=True
    ):
        kind = cat.platforms[r["platform"]]
        for cap in scn.workload(r["workload"]).prefers:
            support = kind.supports(cap)
            if support != "native":
                out.append(f"{r['workload']}: {cap} ({support}, {r['platform']})")
    return out


def _row(scn: Scenario, arch: str, plan: Plan, data: ModelData | None) -> dict[str, object]:
    staffing = {r["skill"]: r for r in plan.staffing.iter_rows(named=True)}
    pools = ", ".join(
        f"{r['pool']}:{r['gpu_type']}x{r['gpus']}" for r in plan.pools.iter_rows(named=True)
    )
    reason = relaxation = ""
    if not plan.feasible:
        reason = next((s for s in plan.explanations if s.startswith("Why")), "")
        reason = reason or (plan.explanations[1] if len(plan.explanations) > 1 else "")
        fixes = plan.relaxations.filter(pl.col("monthly_usd").is_not_null()).sort("monthly_usd")
        if fixes.height == 0:
            fixes = plan.relaxations
        relaxation = fixes["sentence"][0] if fixes.height else ""
    note = f"{reason} Fix: {relaxation}" if relaxation else reason
    sl = plan.service_levels
    margin = (
        float(((sl["target"] - sl["predicted"]) / sl["target"]).min()) if sl.height else math.nan
    )
    gaps = capability_gaps(scn, plan) if plan.feasible else []
    gap_usd = plan.costs.filter(pl.col("component") == "capability_gaps")["monthly_usd"]
    return {
        "archetype": arch,
        "status": plan.status.value,
        "total_monthly_usd": plan.total_monthly_usd,
        "delta_usd": math.nan,
        "cash_monthly_usd": plan.cash_monthly_usd,
        "pools": pools,
        "hires": int(plan.staffing["hires"].sum()),
        "note": note or (plan.explanations[0] if plan.explanations else ""),
        "delta_pct": math.nan,
        "hpc_fte": staffing["hpc"]["required_fte"] if plan.feasible else math.nan,
        "kubernetes_fte": staffing["kubernetes"]["required_fte"] if plan.feasible else math.nan,
        "hires_hpc": staffing["hpc"]["hires"],
        "hires_kubernetes": staffing["kubernetes"]["hires"],
        "capability_gaps": "; ".join(gaps),
        "capability_gaps_usd": float(gap_usd[0]) if gap_usd.len() and plan.feasible else math.nan,
        "slo_met": _workloads_met(sl),
        "min_slo_margin": margin,
        "reason": reason,
        "relaxation": relaxation,
        "whole_node_usd": (
            whole_node_usd(data, plan.decisions())
            if plan.feasible and data is not None
            else math.nan
        ),
    }


def _workloads_met(service_levels: pl.DataFrame) -> str:
    """``met/total`` workloads with a service level, each met where every piece of it is.

    A workload split across pools has a row per piece: counted per row, three workloads read
    "4/4" in a meeting.
    """
    if not service_levels.height:
        return ""
    met = service_levels.group_by("workload").agg(pl.col("met").all())["met"]
    return f"{int(met.sum())}/{met.len()}"


def compare(
    scn: Scenario, time_limit_s: float = 10.0, workers: int | None = None, seed: int = 0
) -> pl.DataFrame:
    """One row per archetype, each solved with that archetype forced, cheapest first.

    Columns (see :data:`COMPARE_SCHEMA`): archetype, status, total_monthly_usd, delta_usd and
    delta_pct (to the cheapest feasible row), cash_monthly_usd, pools (``name:GPUxN`` list),
    hires, note (the first reason, or why an archetype is infeasible and its fix), hpc_fte and
    kubernetes_fte (FTE the plan needs), hires_hpc, hires_kubernetes, capability_gaps (preferred
    capabilities the platforms lack) and capability_gaps_usd (their estimated monthly cost),
    slo_met (``met/total`` workloads whose predicted service levels are met, in every pool
    they run in), min_slo_margin (smallest ``(target - predicted) / target``), reason and
    relaxation (for an infeasible archetype: why, and the change that makes it feasible at the
    lowest cost), whole_node_usd (what the plan rents beyond its cost when whole-node jobs get
    whole nodes: its cost is a floor there).
    """
    plans = {
        arch: solve(scn.force_archetype(arch), time_limit_s, workers, seed) for arch in ARCHETYPES
    }
    # A forced archetype changes the model's policy rows alone: one set of tables costs them all.
    data = prepare(scn) if any(p.feasible for p in plans.values()) else None
    rows = [_row(scn, arch, plan, data) for arch, plan in plans.items()]
    frame = pl.DataFrame(rows, schema=COMPARE_SCHEMA)
    best = frame.filter(pl.col("status") != "infeasible")["total_monthly_usd"].min()
    best_usd = float(best) if isinstance(best, int | float) else math.nan
    frame = frame.with_columns(
        (pl.col("total_monthly_usd") - best_usd).alias("delta_usd"),
        ((pl.col("total_monthly_usd") - best_usd) / best_usd).alias("delta_pct"),
    )
    return frame.sort(["total_monthly_usd", "archetype"], nulls_last=True)
