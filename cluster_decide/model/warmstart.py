"""A good first plan for CP-SAT: solve the LP relaxation, round it, size the pools, hint it all.

CP-SAT proves the default scenario optimal in a few tens of milliseconds once it holds a near
optimal plan, but can spend most of a second finding one. The LP relaxation of the very same
model (GLOP, every integer made continuous) says where each workload wants to go; rounding it
and sizing every pool at its cheapest node count gives a complete plan to start from. The
hint changes how fast the optimum is found, never which plan is optimal.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model

from cluster_decide.constants import SKILLS
from cluster_decide.evaluate import Decisions, evaluate_decisions
from cluster_decide.model.build import Model
from cluster_decide.model.data import ModelData

__all__ = ["add_hints", "lp_relaxation", "rounded_plan"]

_INF = 2**62


def lp_relaxation(model: cp_model.CpModel) -> tuple[float, list[float]] | None:
    """Objective and variable values of the model's LP relaxation, or None if GLOP fails.

    Every integer variable becomes continuous within its domain; every linear constraint is
    kept as it is. (The model has no other kinds of constraint but an empty clause for an
    impossible archetype, which makes it infeasible anyway.)
    """
    proto = model.proto
    lp = pywraplp.Solver.CreateSolver("GLOP")
    # The proto's repeated fields do not support negative indexes: copy them to lists first.
    domains = [list(v.domain) for v in proto.variables]
    xs = [lp.NumVar(float(d[0]), float(d[-1]), "") for d in domains]
    for c in proto.constraints:
        if not c.has_linear():
            if c.has_bool_or() and not list(c.bool_or.literals):
                return None
            continue
        bounds = list(c.linear.domain)
        lo = float(bounds[0]) if bounds[0] > -_INF else -lp.infinity()
        hi = float(bounds[-1]) if bounds[-1] < _INF else lp.infinity()
        row = lp.Constraint(lo, hi)
        for var, coef in zip(c.linear.vars, c.linear.coeffs, strict=True):
            row.SetCoefficient(xs[var], float(coef))
    objective = lp.Objective()
    for var, coef in zip(proto.objective.vars, proto.objective.coeffs, strict=True):
        objective.SetCoefficient(xs[var], float(coef))
    objective.SetMinimization()
    if lp.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    return objective.Value() + proto.objective.offset, [x.solution_value() for x in xs]


def _round_shares(
    weights: dict[tuple[str, str, str], float], divisible: bool
) -> dict[tuple[str, str, str], int]:
    """Percent shares from LP weights: the largest for an indivisible class, else largest remainder."""
    ordered = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    if not divisible or len(ordered) == 1:
        return {ordered[0][0]: 100}
    total = sum(max(v, 0.0) for _, v in ordered) or 1.0
    raw = {k: 100.0 * max(v, 0.0) / total for k, v in ordered if v > 1e-6}
    shares = {k: math.floor(v) for k, v in raw.items()}
    for k, _ in sorted(raw.items(), key=lambda kv: (-(kv[1] - math.floor(kv[1])), kv[0]))[
        : 100 - sum(shares.values())
    ]:
        shares[k] += 1
    return {k: v for k, v in shares.items() if v > 0}


def _cheapest_nodes(data: ModelData, pool: str, gpu: str, load: np.ndarray, gang: int) -> int:
    """Node count that minimizes node plus burst cost for a load profile (units: share × tenths)."""
    gpn = data.gpus_per_node[gpu]
    per_node = 1000 * gpn
    lo = math.ceil(gang / gpn) if gang > 1 else 0
    hi = max(lo, math.ceil(float(load.max()) / per_node))
    if not data.pool(pool).bursts:
        return hi
    best, best_cost = hi, math.inf
    for n in range(lo, hi + 1):
        short = np.maximum(load - n * per_node, 0)
        cost = n * data.node_cents[gpu] + float(np.ceil(short / 100).sum()) * data.burst_cents[gpu]
        if cost < best_cost:
            best, best_cost = n, cost
    return best


def rounded_plan(m: Model, values: list[float]) -> Decisions:
    """A complete plan from LP values: rounded shares, then each pool at its cheapest size."""
    d = m.data
    index = {id(v): v.index for v in m.place.values()}
    weights: dict[str, dict[tuple[str, str, str], float]] = defaultdict(dict)
    for key, share in m.share.items():
        z = m.place[key]
        value = (
            values[share.index]
            if isinstance(share, cp_model.IntVar)
            else 100 * values[index[id(z)]]
        )
        if not d.combos[key].blocked:
            weights[key[0]][key] = value
    shares: dict[tuple[str, str, str], int] = {}
    for w in d.workloads:
        if weights[w.name]:
            shares.update(_round_shares(weights[w.name], w.is_divisible))
    loads: dict[tuple[str, str], np.ndarray] = {}
    gangs: dict[tuple[str, str], int] = defaultdict(int)
    for (name, p, g), s in shares.items():
        combo = d.combos[(name, p, g)]
        loads[(p, g)] = loads.get((p, g), 0) + combo.load(s)
        gangs[(p, g)] = max(gangs[(p, g)], combo.gang_gpus)
    nodes = {k: _cheapest_nodes(d, k[0], k[1], load, gangs[k]) for k, load in loads.items()}
    return Decisions(shares, {k: n for k, n in nodes.items() if n})


def add_hints(m: Model, dec: Decisions) -> None:
    """Hint every variable of ``m`` with the values ``dec`` implies (CP-SAT repairs the rest)."""
    d, cp = m.data, m.cp
    ev = evaluate_decisions(d, dec, service_pools=set())  # costs and burst; no service levels
    open_pools = set(ev.open_pools)
    for p, var in m.open.items():
        cp.add_hint(var, p in open_pools)
    for key, z in m.place.items():
        s = dec.shares.get(key, 0)
        cp.add_hint(z, s > 0)
        share = m.share[key]
        if isinstance(share, cp_model.IntVar):
            cp.add_hint(share, s)
    for pg, n in m.nodes.items():
        cp.add_hint(n, min(dec.nodes.get(pg, 0), m.node_ub[pg]))
    for (p, g, t), b in m.burst.items():
        burst = ev.burst.get((p, g))
        cp.add_hint(b, int(burst[t]) if burst is not None else 0)
    for skill in SKILLS:
        cp.add_hint(m.hires[skill], min(ev.hires[skill], d.max_hires))
