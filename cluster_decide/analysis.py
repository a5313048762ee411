"""Questions a review asks of a plan, starting with what each archetype would cost."""

from __future__ import annotations

import math

import polars as pl

from cluster_decide.constants import ARCHETYPES
from cluster_decide.model.solve import solve
from cluster_decide.scenario import Scenario

__all__ = ["COMPARE_SCHEMA", "compare"]

COMPARE_SCHEMA = {
    "archetype": pl.String,
    "status": pl.String,
    "total_monthly_usd": pl.Float64,
    "delta_usd": pl.Float64,
    "cash_monthly_usd": pl.Float64,
    "pools": pl.String,
    "hires": pl.Int64,
    "note": pl.String,
}


def compare(
    scn: Scenario, time_limit_s: float = 10.0, workers: int = 2, seed: int = 0
) -> pl.DataFrame:
    """One row per archetype, each solved with that archetype forced, cheapest first.

    Columns: archetype, status, total_monthly_usd, delta_usd (to the cheapest feasible row),
    cash_monthly_usd, pools (``name:GPUxN`` list), hires, note (the first reason, or for an
    infeasible archetype why and its smallest relaxation).
    """
    rows = []
    for arch in ARCHETYPES:
        plan = solve(scn.force_archetype(arch), time_limit_s, workers, seed)
        pools = ", ".join(
            f"{r['pool']}:{r['gpu_type']}x{r['gpus']}" for r in plan.pools.iter_rows(named=True)
        )
        note = plan.explanations[1] if not plan.feasible and len(plan.explanations) > 1 else ""
        if not plan.feasible and plan.relaxations.height:
            note = f"{note} Fix: {plan.relaxations['sentence'][0]}"
        rows.append(
            {
                "archetype": arch,
                "status": plan.status.value,
                "total_monthly_usd": plan.total_monthly_usd,
                "delta_usd": math.nan,
                "cash_monthly_usd": plan.cash_monthly_usd,
                "pools": pools,
                "hires": int(plan.staffing["hires"].sum()),
                "note": note or (plan.explanations[0] if plan.explanations else ""),
            }
        )
    frame = pl.DataFrame(rows, schema=COMPARE_SCHEMA)
    best = frame.filter(pl.col("status") != "infeasible")["total_monthly_usd"].min()
    frame = frame.with_columns(
        (pl.col("total_monthly_usd") - (best if best is not None else math.nan)).alias("delta_usd")
    )
    return frame.sort(["total_monthly_usd", "archetype"], nulls_last=True)
