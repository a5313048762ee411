"""Solve a scenario: prepare data, build the model, run CP-SAT, read the answer back into a Plan.

Solver parameters are always explicit (workers, seed, time limit). The objective is the monthly
cost in cents scaled so that one cent outweighs a tie-break preferring fewer and earlier
placements, so equal-cost answers resolve the same way whatever the number of workers.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import polars as pl

from cluster_decide.inputs.scenario import Scenario
from cluster_decide.model.data import ModelData, prepare
from cluster_decide.planning.evaluation import Decisions, Evaluation, evaluate_decisions
from cluster_decide.planning.explain import explain
from cluster_decide.planning.loop import (
    SolveResult,
    deterministic_work,
    read_decisions,
    restricted,
    solve_data,
)
from cluster_decide.planning.plan import RELAXATION_SCHEMA, Plan, Status, build_frames, investment
from cluster_decide.planning.relax import diagnose
from cluster_decide.planning.service import SERVICE_LEVEL_SCHEMA
from cluster_decide.planning.sharing import hourly_split

__all__ = [
    "SolveResult",
    "deterministic_work",
    "read_decisions",
    "restricted",
    "solve",
    "solve_data",
]


def solve(
    scn: Scenario,
    time_limit_s: float = 10.0,
    workers: int | None = None,
    seed: int = 0,
    hint: Plan | None = None,
) -> Plan:
    """The cheapest plan for ``scn`` with its reasons, or an explained infeasible plan.

    ``time_limit_s`` caps the solve; a plan found but not proven optimal comes back with status
    ``feasible`` and its gap. No plan within the limit is status ``time_limit`` (not a verdict:
    no relaxation is searched for, and the sentence says how to give it more time). Every
    service level of an ``optimal`` or ``feasible`` plan holds. ``workers`` and ``seed`` are
    passed to CP-SAT as they are (``workers`` None: one for a model of the default scenario's
    size, two for a large estate; see :func:`~cluster_decide.planning.loop.workers_for`). ``hint`` (a feasible plan of a similar scenario) starts the
    search from that plan.
    """
    start = time.perf_counter()
    data = prepare(scn)
    start_from = None
    if hint is not None and hint.feasible:
        # Only what the new model knows: a hint from another scenario may name other pools or GPUs.
        dec = hint.decisions()
        known = {(p.name, g) for p in data.pools for g in p.gpu_types}
        start_from = Decisions(
            {k: v for k, v in dec.shares.items() if k in data.combos},
            {k: v for k, v in dec.nodes.items() if k in known},
            {k: v for k, v in dec.spot.items() if k in data.spot_cents},
            managed=dec.managed,
        )
    result = (
        None if data.unplaceable else solve_data(data, time_limit_s, workers, seed, hint=start_from)
    )
    if result is not None and result.status is Status.TIME_LIMIT:
        return no_answer_plan(scn, [result.message], time.perf_counter() - start)
    if result is None or result.decisions is None:
        relaxations, sentences = diagnose(scn, data, time_limit_s, workers, seed)
        return infeasible_plan(scn, relaxations, sentences, time.perf_counter() - start)
    return plan_from(
        data,
        result.decisions,
        result.status,
        result.objective_cents,
        result.bound_cents,
        time.perf_counter() - start,
        result.evaluation,
    )


def plan_from(
    data: ModelData,
    dec: Decisions,
    status: Status,
    objective_cents: float,
    bound_cents: float,
    wall_time_s: float,
    ev: Evaluation | None = None,
) -> Plan:
    """Turn decisions into a Plan, costed by the independent evaluator.

    ``ev`` is the evaluator's verdict on ``dec`` when the caller has it already.
    """
    if ev is None:
        ev = evaluate_decisions(data, dec)
    frames = build_frames(data, dec, ev)
    upfront_usd, cash = investment(data, dec, ev)
    gap = (
        0.0
        if status is Status.OPTIMAL or not objective_cents
        else abs(objective_cents - bound_cents) / abs(objective_cents)
    )
    return Plan(
        scenario=data.scenario.name,
        status=status,
        archetype=ev.archetype,
        total_monthly_usd=ev.total_cents / 100.0,
        cash_monthly_usd=ev.cash_cents / 100.0,
        placements=frames["placements"],
        pools=frames["pools"],
        staffing=frames["staffing"],
        costs=frames["costs"],
        transition=frames["transition"],
        service_levels=ev.service_levels,
        explanations=explain(data, dec, ev, ev.archetype),
        gap=gap,
        wall_time_s=wall_time_s,
        upfront_usd=upfront_usd,
        cash_flow=cash,
        inputs=data.scenario,
        hourly=hourly_split(ev.sharing),
    )


def no_answer_plan(scn: Scenario, sentences: list[str], wall_time_s: float) -> Plan:
    """A plan with status ``time_limit``: no answer yet, and how to get one."""
    plan = infeasible_plan(scn, pl.DataFrame(schema=RELAXATION_SCHEMA), sentences, wall_time_s)
    return replace(plan, status=Status.TIME_LIMIT)


def infeasible_plan(
    scn: Scenario, relaxations: pl.DataFrame, sentences: list[str], wall_time_s: float
) -> Plan:
    """A plan that says why nothing works and the smallest changes that would."""
    empty = build_frames(
        prepare(scn), Decisions({}, {}), evaluate_decisions(prepare(scn), Decisions({}, {}))
    )
    return Plan(
        scenario=scn.name,
        status=Status.INFEASIBLE,
        archetype=None,
        total_monthly_usd=math.nan,
        cash_monthly_usd=math.nan,
        placements=empty["placements"],
        pools=empty["pools"],
        staffing=empty["staffing"],
        costs=empty["costs"].with_columns(pl.lit(None, dtype=pl.Float64).alias("monthly_usd")),
        transition=empty["transition"],
        service_levels=pl.DataFrame(schema=SERVICE_LEVEL_SCHEMA),
        explanations=sentences,
        relaxations=relaxations if relaxations.height else pl.DataFrame(schema=RELAXATION_SCHEMA),
        wall_time_s=wall_time_s,
        inputs=scn,
    )
