"""The value of levers: what one change to the scenario is worth per month, found by re-solving.

Each lever is one scenario change — one more FTE of a skill, 10% more budget, a relaxed SLO, a
cheaper GPU type — solved again; its value is the monthly cost of the base plan minus that of
the changed one (positive: the lever saves money). Re-solving, not LP duals, because the model
is integer: a dual says nothing about a whole engineer or a change of architecture.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor

import polars as pl

from cluster_decide.analysis.core import Outcome, quick_solve, run_all
from cluster_decide.base.constants import SKILLS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import ARCHETYPE_WORDS, SKILL_WORDS, money

__all__ = ["LEVER_SCHEMA", "lever_scenarios", "lever_values"]

LEVER_SCHEMA = {
    "lever": pl.String,
    "change": pl.String,
    "base_monthly_usd": pl.Float64,
    "lever_monthly_usd": pl.Float64,
    "value_usd_per_month": pl.Float64,
    "base_archetype": pl.String,
    "lever_archetype": pl.String,
    "sentence": pl.String,
}
"""Columns of :func:`lever_values`; ``value_usd_per_month`` = base − lever (positive saves)."""


def lever_scenarios(
    scn: Scenario,
    budget_factor: float = 1.1,
    slo_factor: float = 1.25,
    gpu_discount: float = 0.1,
) -> list[tuple[str, str, Scenario]]:
    """The levers of ``scn`` as ``(lever, change in words, changed scenario)``.

    One more FTE per skill; the budget times ``budget_factor`` (when there is one); each
    workload's SLO times ``slo_factor`` (more time or latency allowed); each GPU type a workload
    may use ``gpu_discount`` cheaper (reserved, on-demand and capex prices alike).
    """
    out: list[tuple[str, str, Scenario]] = []
    for s in SKILLS:
        fte = getattr(scn.team, s).fte
        out.append((f"fte:{s}", f"one more {SKILL_WORDS[s]} engineer", scn.set_fte(s, fte + 1.0)))
    budget = scn.policy.budget_usd_per_month
    if budget is not None:
        out.append(
            (
                "budget",
                f"{budget_factor - 1:.0%} more budget",
                scn.set_budget(budget * budget_factor),
            )
        )
    for w in scn.workloads:
        out.append(
            (
                f"slo:{w.name}",
                f"the {w.name} SLO relaxed by {slo_factor - 1:.0%}",
                scn.set_slo(w.name, w.slo * slo_factor),
            )
        )
    gpus = sorted({g for w in scn.workloads for g in w.gpu_types})
    scales = dict(scn.procurement.gpu_price_scale_by_type or {})
    for g in gpus:
        # Every market price of the type (offers and capex), not one figure in place of the market.
        change = {g: scales.get(g, 1.0) * (1 - gpu_discount)}
        out.append(
            (
                f"gpu:{g}",
                f"{g} {gpu_discount:.0%} cheaper",
                scn.update({"procurement": {"gpu_price_scale_by_type": {**scales, **change}}}),
            )
        )
    return out


def _sentence(change: str, base: Outcome, alt: Outcome) -> str:
    if not base.feasible and alt.feasible:
        return f"With {change} the scenario becomes feasible, at {money(alt.total_monthly_usd)} a month."
    if not alt.feasible:
        return f"With {change} no plan is feasible."
    if not base.feasible:
        return f"With {change} the scenario stays infeasible."
    value = base.total_monthly_usd - alt.total_monthly_usd
    if abs(value) < 0.5:
        text = (
            f"{change[0].upper()}{change[1:]} is worth nothing: the plan does not change its cost."
        )
    elif value < 0:
        # Staff are paid: one more engineer the plan cannot use costs their salary.
        text = f"{change[0].upper()}{change[1:]} costs {money(-value)} a month more."
    else:
        text = f"{change[0].upper()}{change[1:]} is worth {money(value)} a month."
    if alt.archetype != base.archetype:
        text += (
            f" It changes the answer to {ARCHETYPE_WORDS.get(alt.archetype or '', '')} "
            f"({alt.archetype})."
        )
    return text


def lever_values(
    scn: Scenario,
    budget_factor: float = 1.1,
    slo_factor: float = 1.25,
    gpu_discount: float = 0.1,
    seed: int = 0,
    executor: Executor | None = None,
    max_workers: int | None = 1,
    progress: bool | str = False,
) -> pl.DataFrame:
    """What each lever of :func:`lever_scenarios` is worth per month, most valuable first."""
    base = quick_solve(scn, seed)
    levers = lever_scenarios(scn, budget_factor, slo_factor, gpu_discount)
    outs = run_all(
        [s for _, _, s in levers], executor, max_workers, seed, chunk_size=2, progress=progress
    )
    rows = [
        {
            "lever": name,
            "change": change,
            "base_monthly_usd": base.total_monthly_usd,
            "lever_monthly_usd": out.total_monthly_usd,
            "value_usd_per_month": base.total_monthly_usd - out.total_monthly_usd,
            "base_archetype": base.archetype,
            "lever_archetype": out.archetype,
            "sentence": _sentence(change, base, out),
        }
        for (name, change, _), out in zip(levers, outs, strict=True)
    ]
    frame = pl.DataFrame(rows, schema=LEVER_SCHEMA)
    return frame.sort(
        pl.col("value_usd_per_month").fill_nan(-math.inf), "lever", descending=[True, False]
    )
