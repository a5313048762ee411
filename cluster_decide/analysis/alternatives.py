"""Near-optimal alternatives: the most different plans that cost at most a slack above the optimum.

Modelling to generate alternatives (MGA, the Hop-Skip-Jump variant): solve for the optimum,
then repeatedly add ``cost ≤ (1 + slack) · optimum`` to a freshly built model and maximize the
summed distance from every plan found so far: the share points (percent of a workload) placed
differently in each (workload, pool, GPU type), plus ``POOL_WEIGHT`` for each pool opened or
closed. Each new plan must differ from every earlier one by at least ``min_distance``. Among equally distant plans the cheaper
wins. A review reads them as "an all-Kubernetes plan costs 3% more, and moves pre-training".
"""

from __future__ import annotations

import math

import polars as pl
from ortools.sat.python import cp_model

from cluster_decide.analysis.core import Outcome, outcome_of, quick_solve, solve_model
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.model.build import Model
from cluster_decide.model.data import prepare
from cluster_decide.planning.explain import ARCHETYPE_WORDS, money

__all__ = [
    "ALTERNATIVES_SCHEMA",
    "POOL_WEIGHT",
    "SEARCH_LIMIT",
    "alternative_plans",
    "describe_difference",
    "near_optimal",
]

SEARCH_LIMIT = 4.0
"""CP-SAT deterministic time for each alternative's search, its rounds of service-level cuts
included: a distant plan often misses a pooled target at first, and a search with its own
objective cannot fall back on a repaired plan, so it needs room for two or three rounds.
2.0 until 2026-12-08, when the default's second alternative was found unproven at that limit
and then, with five more rows in the model (managed pools' sellers), not at all; at 4.0 all
three are proven (9 s in all), and the presets' searches take what they took."""

POOL_WEIGHT = 200
"""Opening or closing a pool counts as much as moving a whole workload (100 share points out of
one place and 100 into another): it changes who operates what."""

ALTERNATIVES_SCHEMA = {
    "alternative": pl.Int64,
    "status": pl.String,
    "archetype": pl.String,
    "total_monthly_usd": pl.Float64,
    "delta_usd": pl.Float64,
    "delta_pct": pl.Float64,
    "pools": pl.String,
    "distance": pl.Int64,
    "sentence": pl.String,
}
"""Columns of :func:`near_optimal`: ``alternative`` 0 is the optimum; ``distance`` is how far a
plan is from the optimum (share points moved plus ``POOL_WEIGHT`` per pool opened or closed);
money in USD per month."""


def _placements(out: Outcome) -> dict[str, list[str]]:
    by_w: dict[str, list[str]] = {}
    for (w, p, g), s in sorted(out.decisions.shares.items()):
        if s > 0:
            by_w.setdefault(w, []).append(f"{p}/{g}" + (f" {s}%" if s < 100 else ""))
    return by_w


def describe_difference(best: Outcome, alt: Outcome) -> str:
    """What ``alt`` changes against ``best``, in one sentence."""
    pools_b, pools_a = set(best.open_pools), set(alt.open_pools)
    parts = []
    if pools_a - pools_b:
        parts.append("opens " + ", ".join(sorted(pools_a - pools_b)))
    if pools_b - pools_a:
        parts.append("closes " + ", ".join(sorted(pools_b - pools_a)))
    pb, pa = _placements(best), _placements(alt)
    moved = [
        f"{w} from {' + '.join(pb.get(w, []))} to {' + '.join(pa.get(w, []))}"
        for w in sorted(set(pb) | set(pa))
        if pb.get(w) != pa.get(w)
    ]
    if moved:
        parts.append("moves " + "; ".join(moved))
    what = ", ".join(parts) if parts else "resizes the same pools"
    delta = alt.total_monthly_usd - best.total_monthly_usd
    pct = delta / best.total_monthly_usd if best.total_monthly_usd else math.nan
    arch = ARCHETYPE_WORDS.get(alt.archetype or "", str(alt.archetype))
    return (
        f"{arch[0].upper()}{arch[1:]} ({alt.archetype}) costs {money(abs(delta))} ({abs(pct):.1%}) "
        f"{'more' if delta >= 0 else 'less'} a month: it {what}."
    )


def _distance_to(m: Model, out: Outcome, tag: str) -> cp_model.LinearExprT:
    """Weighted pools and share points by which the model's plan differs from ``out``.

    |share - share*| needs a boolean per share only where share* lies strictly inside 0..100;
    at either end it is linear.
    """
    pools = set(out.open_pools)
    terms: list[cp_model.LinearExprT] = [
        POOL_WEIGHT * ((1 - o) if p in pools else o) for p, o in m.open.items()
    ]
    for key, s in m.share.items():
        ref = out.decisions.shares.get(key, 0)
        if ref == 0:
            terms.append(s)
        elif ref == 100:
            terms.append(100 - s)
        else:
            d = m.cp.new_int_var(0, 100, f"mga[{tag},{','.join(key)}]")
            up = m.cp.new_bool_var(f"mga[{tag},{','.join(key)},up]")
            m.cp.add(d <= s - ref + 200 * (1 - up))
            m.cp.add(d <= ref - s + 200 * up)
            terms.append(d)
    return sum(terms)


def _distance(a: Outcome, b: Outcome) -> int:
    pools = POOL_WEIGHT * len(set(a.open_pools) ^ set(b.open_pools))
    keys = set(a.decisions.shares) | set(b.decisions.shares)
    return pools + sum(
        abs(a.decisions.shares.get(k, 0) - b.decisions.shares.get(k, 0)) for k in keys
    )


def alternative_plans(
    scn: Scenario,
    slack: float = 0.05,
    n: int = 3,
    seed: int = 0,
    min_distance: int = 50,
    deterministic_limit: float = SEARCH_LIMIT,
) -> list[Outcome]:
    """The optimum, then up to ``n`` alternatives as solved outcomes (see :func:`near_optimal`)."""
    if slack < 0:
        raise ValueError(f"slack must be at least 0, got {slack}")
    best = quick_solve(scn, seed)
    if not best.feasible:
        return []
    data = prepare(scn)
    cap = math.floor(round(best.total_monthly_usd * 100) * (1 + slack))
    found = [best]
    for _ in range(n):
        earlier = list(found)
        spread: list[cp_model.LinearExprT] = []

        def constrain(
            m: Model, earlier: list[Outcome] = earlier, spread: list[cp_model.LinearExprT] = spread
        ) -> None:
            m.cp.add(m.cost_cents <= cap).with_name("mga[cost]")
            for i, out in enumerate(earlier):
                dist = _distance_to(m, out, str(i))
                m.cp.add(dist >= min_distance).with_name(f"mga[differs,{i}]")
                spread.append(dist)

        def objective(
            m: Model, spread: list[cp_model.LinearExprT] = spread
        ) -> cp_model.LinearExprT:
            return -sum(spread) * (cap + 1) + m.cost_cents

        res = solve_model(
            data,
            seed=seed,
            constrain=constrain,
            objective=objective,
            deterministic_limit=deterministic_limit,
            hint=best.decisions,
        )
        if res.decisions is None:
            break
        found.append(outcome_of(data, res.status.value, res.decisions))
    return found


def near_optimal(
    scn: Scenario,
    slack: float = 0.05,
    n: int = 3,
    seed: int = 0,
    min_distance: int = 50,
    deterministic_limit: float = SEARCH_LIMIT,
) -> pl.DataFrame:
    """The optimum and up to ``n`` most different plans within ``slack`` of its cost.

    Each alternative is feasible, costs at most ``(1 + slack)`` times the optimum and differs
    from the optimum and every earlier alternative by at least ``min_distance`` (share points
    moved, or ``POOL_WEIGHT`` per pool opened or closed). Fewer rows come back when no further
    different plan fits in the slack; an infeasible scenario gives an empty frame.
    ``deterministic_limit`` bounds each search (CP-SAT's machine-independent time), so the
    alternatives are the same on every run.
    """
    found = alternative_plans(scn, slack, n, seed, min_distance, deterministic_limit)
    if not found:
        return pl.DataFrame(schema=ALTERNATIVES_SCHEMA)
    best = found[0]
    rows = []
    for i, out in enumerate(found):
        delta = out.total_monthly_usd - best.total_monthly_usd
        rows.append(
            {
                "alternative": i,
                "status": out.status,
                "archetype": out.archetype,
                "total_monthly_usd": out.total_monthly_usd,
                "delta_usd": delta,
                "delta_pct": delta / best.total_monthly_usd,
                "pools": ", ".join(out.open_pools),
                "distance": _distance(best, out),
                "sentence": (
                    f"The optimum: {ARCHETYPE_WORDS.get(out.archetype or '', '')} at "
                    f"{money(out.total_monthly_usd)} a month."
                    if i == 0
                    else describe_difference(best, out)
                ),
            }
        )
    return pl.DataFrame(rows, schema=ALTERNATIVES_SCHEMA)
