"""Invariants any sound planner keeps, checked on generated scenarios (hypothesis).

More demand never costs less; more staff on the payroll never raises the cost by more than
their salaries; another candidate platform never costs more; a budget cap never lowers the cost;
hires never exceed ``hiring.max_fte`` in total; a plan that keeps every workload where it runs
today pays no migration.
"""

from __future__ import annotations

import math

import polars as pl
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_bruteforce import instance

import cluster_decide as cd
from cluster_decide.base.constants import PLATFORMS, SKILLS

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    # The same 25 estates on every run and machine: a random draw found a real defect once
    # (pinned below as a strict expected failure), and a suite that fails at random on a known,
    # pinned defect teaches people to ignore it. To explore new estates, set derandomize=False
    # locally and look at what it finds.
    derandomize=True,
    database=None,
)


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


def test_more_training_demand_never_costs_less_in_a_bursting_pool() -> None:
    """The property above found this estate (seed 7850) on 2026-12-02; 1 of 200 seeds did it.

    At 1.5x training: $120,686 a month, both the service and the training on one
    Kubernetes-with-batch H100 node plus on-demand GPUs. Today's demand cost $124,040 (training
    on a Slurm node of its own) while a bursting pool's gang wait counted only the on-demand
    GPUs its hourly need rents: at today's demand they left no whole node free for the 8-GPU
    gang, so the same one-pool plan "never" ran its jobs. A pool that rents gives a waiting job
    the nodes it needs (``service._rented_slot``); today's optimum is that plan, $120,168.
    """
    scn = instance(7850)
    assert cost(scn.scale_demand("distributed_training", 1.5)) >= cost(scn) - 0.01


def test_more_training_never_costs_less_when_it_fills_troughs() -> None:
    """Found on 2026-12-02 by scaling each preset's demand by 1.1, 1.25 and 1.5.

    train-and-serve, training x1.25: separate clusters, $425,371 a month; x1.5: one shared pool,
    $400,567. At x1.25 the class, sized alone at two 32-GPU slots, waited over 12 h, so it was
    not let fill troughs; at x1.5 three slots left it room. Whether it may share now depends on
    its target against its job length only (``data._flexible``): x1.25 costs $363,505.
    """
    scn = cd.load_scenario("train-and-serve")
    assert (
        cost(scn.scale_demand("distributed_training", 1.5))
        >= cost(scn.scale_demand("distributed_training", 1.25)) - 0.01
    )


@SETTINGS
@given(seed=st.integers(0, 10_000), skill=st.sampled_from(SKILLS), extra=st.floats(0.5, 4.0))
def test_more_staff_never_costs_more_than_their_salaries(
    seed: int, skill: str, extra: float
) -> None:
    scn = instance(seed)
    richer = scn.set_fte(skill, getattr(scn.team, skill).fte + extra)
    salaries = extra * scn.loaded_cost_usd_per_year(skill) / 12
    more = cost(richer)
    assume(math.isfinite(more))
    base = cd.solve(scn, time_limit_s=30)
    if base.feasible:
        # The same plan with more people on the payroll: cash rises by their salaries exactly
        # (less any hire they make unnecessary), and the optimum is never dearer than that.
        same = cd.evaluate(richer, base)
        assert same.cash_cents / 100 <= base.cash_monthly_usd + salaries + 0.01
        assert more <= base.total_monthly_usd + salaries + 0.01


@SETTINGS
@given(seed=st.integers(0, 10_000), max_fte=st.integers(0, 3), cap=st.integers(0, 2))
def test_hires_never_exceed_max_fte_in_total(seed: int, max_fte: int, cap: int) -> None:
    scn = instance(seed).update(
        {
            "team": {"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.0}},
            "hiring": {"allowed": True, "max_fte": max_fte, "max_fte_by_skill": {"hpc": cap}},
        }
    )
    plan = cd.solve(scn, time_limit_s=30)
    hires = dict(zip(plan.staffing["skill"], plan.staffing["hires"], strict=True))
    assert sum(hires.values()) <= max_fte
    assert hires["hpc"] <= cap
    if plan.feasible:
        assert sum(hires.values()) >= 1, "with nobody on staff, every plan hires"


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_keeping_every_workload_where_it_runs_costs_no_migration(seed: int) -> None:
    scn = instance(seed)
    plan = cd.solve(scn, time_limit_s=30)
    assume(plan.feasible)
    kinds = plan.placements.group_by("workload").agg(pl.col("platform").unique())
    today = {
        r["workload"]: {"platform": r["platform"][0]}
        for r in kinds.iter_rows(named=True)
        if len(r["platform"]) == 1
    }
    assume(len(today) == len(scn.workloads))
    here = scn.update({"current": {"workloads": today}})
    same = cd.evaluate(here, plan)
    assert same.feasible, same.violations
    assert same.costs_cents["migration"] == 0
    again = cd.solve(here, time_limit_s=30)
    assert again.total_monthly_usd <= same.total_cents / 100 + 0.01
    assert (again.transition["action"] == "keep").all() or again.total_monthly_usd < (
        same.total_cents / 100 - 0.01
    )


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
