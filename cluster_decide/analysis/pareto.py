"""Pareto front of monthly cost against a risk measure, by the epsilon-constraint method.

Two risk measures, each turned into a constraint whose level ε is stepped across its range, the
cost minimized at each step:

- ``capability_gaps``: the preferred capabilities the chosen platforms lack, weighted by the
  share of each workload placed there (a missing capability counts 1, partial support ½). At
  the cost optimum the gaps are what they are; the cheapest plan with gaps ≤ ε for smaller ε
  shows what closing them costs. The constraint is added to the model itself.
- ``slo_margin``: headroom below every service-level target. At margin ε every SLO is tightened
  to (1 − ε) × target, so the plan still meets the real target if the queueing model is
  optimistic by that much; the constraint enters through the demand (a scenario change).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import cast

import polars as pl
from ortools.sat.python import cp_model

from cluster_decide.analysis.core import Outcome, quick_solve
from cluster_decide.analysis.inputs import apply_inputs
from cluster_decide.base.constants import WORKLOAD_KINDS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.model.build import Model
from cluster_decide.model.data import prepare

__all__ = ["PARETO_SCHEMA", "RISK_MEASURES", "gap_weights", "pareto_front"]

RISK_MEASURES = ("capability_gaps", "slo_margin")

PARETO_SCHEMA = {
    "measure": pl.String,
    "epsilon": pl.Float64,
    "risk": pl.Float64,
    "status": pl.String,
    "archetype": pl.String,
    "total_monthly_usd": pl.Float64,
    "pools": pl.String,
    "pareto": pl.Boolean,
}
"""Columns of :func:`pareto_front`. ``risk``: for ``capability_gaps`` the share-weighted count of
missing preferred capabilities (lower is safer); for ``slo_margin`` the margin below every SLO
target as a fraction (higher is safer). ``pareto``: no other row is cheaper and at least as safe."""

_HALF = 2
"""Gap weights are counted in halves so partial support stays an integer."""


def gap_weights(scn: Scenario) -> dict[tuple[str, str, str], int]:
    """Missing preferred capabilities of each placement option, in halves (none 2, partial 1)."""
    data = prepare(scn)
    cat = scn.catalog
    out = {}
    for key, combo in data.combos.items():
        kind = cat.platforms[data.pool(combo.pool).platform]
        w = scn.workload(combo.workload)
        out[key] = sum({"none": 2, "partial": 1}.get(kind.supports(c), 0) for c in w.prefers)
    return out


def _gap_risk(out: Outcome, weights: Mapping[tuple[str, str, str], int]) -> float:
    return sum(weights.get(k, 0) * s for k, s in out.decisions.shares.items()) / (100 * _HALF)


def _gap_expr(m: Model, weights: Mapping[tuple[str, str, str], int]) -> cp_model.LinearExprT:
    return sum(weights[k] * s for k, s in m.share.items() if weights.get(k))


def _mark_front(rows: list[dict[str, object]], lower_is_safer: bool) -> None:
    sign = 1.0 if lower_is_safer else -1.0
    pts = [(cast(float, r["total_monthly_usd"]), sign * cast(float, r["risk"])) for r in rows]
    for r, (cost, risk) in zip(rows, pts, strict=True):
        r["pareto"] = not math.isnan(cost) and not any(
            c <= cost and k <= risk and (c < cost or k < risk) for c, k in pts if not math.isnan(c)
        )


def _row(measure: str, eps: float, risk: float, out: Outcome) -> dict[str, object]:
    return {
        "measure": measure,
        "epsilon": eps,
        "risk": risk,
        "status": out.status,
        "archetype": out.archetype,
        "total_monthly_usd": out.total_monthly_usd,
        "pools": ", ".join(out.open_pools),
        "pareto": False,
    }


def pareto_front(
    scn: Scenario,
    measure: str = "capability_gaps",
    points: int = 5,
    max_margin: float = 0.4,
    seed: int = 0,
) -> pl.DataFrame:
    """Cheapest plans at ``points`` levels of the risk ``measure`` (see the module docstring).

    ``capability_gaps``: ε runs from the cost optimum's gaps down to the fewest gaps any plan
    has. ``slo_margin``: ε runs from 0 to ``max_margin``. Rows are sorted by ε.
    """
    if measure not in RISK_MEASURES:
        raise ValueError(f"unknown risk measure '{measure}' (expected one of {RISK_MEASURES})")
    if points < 2:
        raise ValueError(f"points must be at least 2, got {points}")
    rows: list[dict[str, object]] = []
    if measure == "slo_margin":
        kinds = [k for k in WORKLOAD_KINDS if any(w.kind == k for w in scn.workloads)]
        for i in range(points):
            eps = max_margin * i / (points - 1)
            tightened = apply_inputs(scn, {f"slo:{k}": 1 - eps for k in kinds})
            rows.append(_row(measure, eps, eps, quick_solve(tightened, seed)))
        _mark_front(rows, lower_is_safer=False)
        return pl.DataFrame(rows, schema=PARETO_SCHEMA)
    weights = gap_weights(scn)
    best = quick_solve(scn, seed)
    if not best.feasible:
        return pl.DataFrame(schema=PARETO_SCHEMA)

    def fewest(m: Model) -> cp_model.LinearExprT:
        return _gap_expr(m, weights) * (10**13) + m.cost_cents

    safest = quick_solve(scn, seed, objective=fewest)
    hi, lo = _gap_risk(best, weights), _gap_risk(safest, weights)
    for i in range(points):
        eps = hi - (hi - lo) * i / (points - 1)
        limit = math.floor(eps * 100 * _HALF + 1e-9)

        def constrain(m: Model, limit: int = limit) -> None:
            m.cp.add(_gap_expr(m, weights) <= limit).with_name("pareto[capability_gaps]")

        out = quick_solve(scn, seed, constrain=constrain)
        rows.append(_row(measure, eps, _gap_risk(out, weights), out))
    _mark_front(rows, lower_is_safer=True)
    return pl.DataFrame(rows, schema=PARETO_SCHEMA)
