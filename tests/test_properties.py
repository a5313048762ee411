"""Invariants any sound planner keeps, checked on generated scenarios (hypothesis).

More demand never costs less; more available staff never costs more; another candidate
platform never costs more; a budget cap never lowers the cost.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_bruteforce import instance

import cluster_decide as cd
from cluster_decide.constants import PLATFORMS, SKILLS

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cost(scn: cd.Scenario) -> float:
    """Monthly cost of the optimum, or infinity when nothing is feasible."""
    plan = cd.solve(scn, time_limit_s=30)
    assert plan.status != "feasible", "a property needs proven optima"
    return plan.total_monthly_usd if plan.feasible else math.inf


@SETTINGS
@given(seed=st.integers(0, 10_000), factor=st.floats(1.05, 3.0))
def test_more_demand_never_costs_less(seed: int, factor: float) -> None:
    scn = instance(seed)
    base = cost(scn)
    assume(math.isfinite(base))
    kind = scn.workloads[seed % len(scn.workloads)].kind
    assert cost(scn.scale_demand(kind, factor)) >= base - 0.01


@SETTINGS
@given(seed=st.integers(0, 10_000), skill=st.sampled_from(SKILLS), extra=st.floats(0.5, 4.0))
def test_more_staff_never_costs_more(seed: int, skill: str, extra: float) -> None:
    scn = instance(seed)
    more = cost(scn.set_fte(skill, getattr(scn.team, skill).fte + extra))
    assume(math.isfinite(more))
    assert more <= cost(scn) + 0.01


@SETTINGS
@given(seed=st.integers(0, 10_000), data=st.data())
def test_another_candidate_platform_never_costs_more(seed: int, data: st.DataObject) -> None:
    scn = instance(seed)
    missing = [p for p in PLATFORMS if p not in scn.policy.platforms]
    extra = data.draw(st.sampled_from(missing))
    wider = cost(scn.restrict_platforms([*scn.policy.platforms, extra]))
    assume(math.isfinite(wider))
    assert wider <= cost(scn) + 0.01


@SETTINGS
@given(seed=st.integers(0, 10_000), fraction=st.floats(0.3, 1.5))
def test_a_budget_cap_never_lowers_cost(seed: int, fraction: float) -> None:
    scn = instance(seed)
    free = cd.solve(scn, time_limit_s=30)
    assume(free.feasible)
    capped = scn.set_budget(free.cash_monthly_usd * fraction)
    assert cost(capped) >= free.total_monthly_usd - 0.01
