"""Solve a scenario: prepare data, build the model, run CP-SAT, read the answer back into a Plan.

Solver parameters are always explicit (workers, seed, time limit). The objective is the monthly
cost in cents scaled so that one cent outweighs a tie-break preferring fewer and earlier
placements, so equal-cost answers resolve the same way whatever the number of workers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

import polars as pl
from ortools.sat.python import cp_model

from cluster_decide.evaluate import Decisions, evaluate_decisions
from cluster_decide.explain import explain
from cluster_decide.model.build import Model, build_model, tie_break_scale
from cluster_decide.model.data import ModelData, prepare
from cluster_decide.model.warmstart import add_hints, lp_relaxation, rounded_plan
from cluster_decide.plan import (
    RELAXATION_SCHEMA,
    SERVICE_LEVEL_SCHEMA,
    Plan,
    Status,
    build_frames,
    investment,
)
from cluster_decide.scenario import Scenario
from cluster_decide.service import service_levels

__all__ = ["SolveResult", "deterministic_work", "solve", "solve_data"]


@dataclass(frozen=True)
class SolveResult:
    """The raw outcome of one CP-SAT run, before it becomes a Plan."""

    status: Status
    decisions: Decisions | None
    objective_cents: float
    bound_cents: float
    wall_time_s: float
    model: Model
    slack: dict[str, int]


_WORK_LIMIT: ContextVar[float | None] = ContextVar("work_limit", default=None)


@contextmanager
def deterministic_work(limit: float) -> Iterator[None]:
    """Within this block (in this thread), solves stop on CP-SAT's deterministic time, not the clock.

    CP-SAT runs on one worker (whatever ``workers`` says): a single search is reproducible, and
    with ``max_deterministic_time`` it stops after the same amount of work however busy the
    machine is, so the same scenario gives the same plan. (Two workers with
    ``interleave_search`` are deterministic too, but proved the default scenario 15× slower.)
    The wall-clock limit passed to ``solve`` stays as a safety net only.
    """
    token = _WORK_LIMIT.set(limit)
    try:
        yield
    finally:
        _WORK_LIMIT.reset(token)


def _solver(time_limit_s: float, workers: int, seed: int) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    work = _WORK_LIMIT.get()
    if work is not None:
        solver.parameters.max_deterministic_time = float(work)
        solver.parameters.num_workers = 1
    return solver


def _cost(data: ModelData, dec: Decisions) -> float:
    """Total monthly cost of ``dec`` by the evaluator (infinite when infeasible)."""
    ev = evaluate_decisions(data, dec)
    return float(ev.total_cents) if ev.feasible else math.inf


def read_decisions(m: Model, solver: cp_model.CpSolver) -> Decisions:
    """Shares and node counts from a solved model, keyed by the data's names."""
    shares = {k: int(solver.value(s)) for k, s in m.share.items()}
    nodes = {k: int(solver.value(n)) for k, n in m.nodes.items()}
    spot = {k: int(solver.value(s)) for k, s in m.spot.items()}
    return Decisions(
        shares={k: v for k, v in sorted(shares.items()) if v},
        nodes={k: v for k, v in sorted(nodes.items()) if v},
        spot={k: v for k, v in sorted(spot.items()) if v},
        managed=frozenset(p for p, z in m.managed.items() if solver.value(z)),
    )


LARGE_MODEL_PLACEMENTS = 400
"""Above this many placement variables, solve a restricted model first (see ``restricted``)."""
RESTRICTED_SHARE = 0.45
"""Share of the remaining time limit the restricted model gets."""


def restricted(data: ModelData, m: Model, lp_values: list[float], top: int = 2) -> ModelData:
    """``data`` with each workload limited to its ``top`` places by LP share (and any the LP uses).

    A relax-and-fix style narrowing: the restricted model is far smaller, so CP-SAT finds a
    good plan of it quickly; that plan is a feasible start for the full model, which may still
    move anything.
    """
    ranked: dict[str, list[tuple[float, tuple[str, str, str]]]] = {}
    for key, z in m.place.items():
        if not data.combos[key].blocked:
            ranked.setdefault(key[0], []).append((lp_values[z.index], key))
    keep: set[tuple[str, str, str]] = set()
    for options in ranked.values():
        options.sort(key=lambda o: (-o[0], o[1]))
        keep.update(k for i, (v, k) in enumerate(options) if i < top or v > 1e-6)
    combos = {
        k: c
        if k in keep or c.blocked
        else replace(c, blocked="outside the restricted search", blocked_family="policy")
        for k, c in data.combos.items()
    }
    # Spot likewise only where the LP uses it: most spot variables of a large estate stay at 0.
    spot = {
        k: cents
        for k, cents in data.spot_cents.items()
        if k in keep and k in m.spot_on and lp_values[m.spot_on[k].index] > 1e-6
    }
    return replace(data, combos=combos, spot_cents=spot)


def sharing_short(data: ModelData, dec: Decisions) -> frozenset[tuple[str, str]]:
    """Pools and GPU types where the evaluator finds trough-filling training short, hour by hour."""
    if not data.flexible:
        return frozenset()
    violations = evaluate_decisions(data, dec).violations
    return frozenset(
        (p, g)
        for (_w, p, g) in data.flexible
        if any(
            v.startswith(f"sharing[{p},{g}]") or f",{p},{g},wait]" in v.split(":")[0]
            for v in violations
        )
    )


def solve_data(
    data: ModelData,
    time_limit_s: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    relax: frozenset[str] = frozenset(),
    warm_start: bool = True,
    hint: Decisions | None = None,
    exact_sharing: frozenset[tuple[str, str]] = frozenset(),
) -> SolveResult:
    """Build and solve the model of ``data``; with ``relax``, minimize the slack first.

    ``warm_start`` hints CP-SAT with the rounded LP relaxation (see ``model.warmstart``), or
    with ``hint`` when given: the decisions of a nearby plan, such as the one on screen before a
    slider moved. Hints change how fast the optimum is found, never which plan is optimal.
    """
    start = time.perf_counter()
    m = build_model(data, relax, exact_sharing)
    scale = tie_break_scale(m)
    lp_bound = -math.inf
    if not relax and hint is not None:
        add_hints(m, hint)
    elif not relax and warm_start:
        m.cp.minimize(m.cost_cents)
        relaxed = lp_relaxation(m.cp)
        if relaxed is not None:
            lp_bound = relaxed[0]
            start_from = rounded_plan(m, relaxed[1])
            if len(m.place) > LARGE_MODEL_PLACEMENTS:
                # Large estates: first solve the model restricted to each workload's likeliest
                # places (by the LP) for part of the time, then start the full search there.
                share = RESTRICTED_SHARE * (time_limit_s - (time.perf_counter() - start))
                narrow = solve_data(
                    restricted(data, m, relaxed[1]), share, workers, seed, hint=start_from
                )
                if narrow.decisions is not None and _cost(data, narrow.decisions) <= _cost(
                    data, start_from
                ):
                    start_from = narrow.decisions
            add_hints(m, start_from)
    if relax:
        # Fewest extra FTE first (a thousandth of an FTE outweighs any cost); a budget slack
        # needs no weight: the cheapest plan's overspend is the smallest budget increase.
        extra_staff = sum(m.staff_slack.values())
        budget = m.budget_slack if m.budget_slack is not None else 0
        m.cp.minimize(extra_staff * 10**9 + budget + m.cost_cents)
    else:
        m.cp.minimize(m.cost_cents * scale + m.tie_break)
    # The time limit covers the whole solve, so CP-SAT gets what building and hinting left.
    solver = _solver(max(0.05, time_limit_s - (time.perf_counter() - start)), workers, seed)
    code = solver.solve(m.cp)
    wall = time.perf_counter() - start
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code == cp_model.FEASIBLE:
        status = Status.FEASIBLE
    else:
        return SolveResult(Status.INFEASIBLE, None, math.nan, math.nan, wall, m, {})
    div = 1 if relax else scale
    decisions = read_decisions(m, solver)
    short = sharing_short(data, decisions) - exact_sharing
    if short and not relax:
        # Training in the troughs waits too long hour by hour: state those hours and solve again.
        left = max(0.05, time_limit_s - wall)
        return solve_data(
            data, left, workers, seed, warm_start=warm_start, exact_sharing=exact_sharing | short
        )
    slack_values = {f"staffing:{s}": int(solver.value(v)) for s, v in m.staff_slack.items()}
    if m.budget_slack is not None:
        slack_values["budget"] = int(solver.value(m.budget_slack))
    return SolveResult(
        status,
        decisions,
        solver.objective_value / div,
        # The LP relaxation of the same model is a valid bound too; report the better one.
        max(solver.best_objective_bound / div, lp_bound),
        wall,
        m,
        slack_values,
    )


def solve(
    scn: Scenario,
    time_limit_s: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    hint: Plan | None = None,
) -> Plan:
    """The cheapest plan for ``scn`` with its reasons, or an explained infeasible plan.

    ``time_limit_s`` caps the solve; a plan found but not proven optimal comes back with status
    ``feasible`` and its gap. ``workers`` and ``seed`` are passed to CP-SAT as they are. ``hint``
    (a feasible plan of a similar scenario) starts the search from that plan.
    """
    from cluster_decide.model.relax import diagnose

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
    )


def plan_from(
    data: ModelData,
    dec: Decisions,
    status: Status,
    objective_cents: float,
    bound_cents: float,
    wall_time_s: float,
) -> Plan:
    """Turn decisions into a Plan, costed by the independent evaluator."""
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
        service_levels=service_levels(data, dec, ev),
        explanations=explain(data, dec, ev, ev.archetype),
        gap=gap,
        wall_time_s=wall_time_s,
        upfront_usd=upfront_usd,
        cash_flow=cash,
        inputs=data.scenario,
    )


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
