"""Solving: presets give what the seed predicts, plans agree with evaluate, answers are stable."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from builders import service, small_scenario, training

import cluster_decide as cd
from cluster_decide.base.constants import ARCHETYPES
from cluster_decide.planning.explain import money


@pytest.fixture(scope="module")
def preset_plans() -> dict[str, cd.Plan]:
    return {name: cd.solve(cd.load_scenario(name), time_limit_s=30) for name in cd.PRESETS}


def test_presets_give_the_seeds_answers(preset_plans: dict[str, cd.Plan]) -> None:
    assert preset_plans["research-lab"].archetype == "slurm_only"
    assert "slurm" not in set(preset_plans["inference-platform"].pools["platform"])
    # Staff are paid whatever the plan does, so one Kubernetes platform no longer saves the
    # Slurm team's cost, and pre-training stays on today's Slurm cluster: separate clusters win
    # at GPU-cloud prices too. Kubernetes with a batch add-on is about 24% dearer (README,
    # "Presets"): it leaves the 32 H100 nodes whose lease is paid until December 2027 (13 of 36
    # months, $118k a month averaged) and rents their capacity again; with hyperscaler prices
    # only separate clusters win by more.
    assert preset_plans["enterprise-mixed"].archetype == "hybrid_separate"
    forced = cd.load_scenario().update({"policy": {"archetype": "kubernetes_batch"}})
    margin = cd.solve(forced).total_monthly_usd / preset_plans["enterprise-mixed"].total_monthly_usd
    assert 1.15 < margin < 1.35
    hyperscaler = cd.load_scenario().update({"procurement": {"provider_classes": ["hyperscaler"]}})
    assert cd.solve(hyperscaler).archetype == "hybrid_separate"
    for plan in preset_plans.values():
        assert plan.status == "optimal"


def test_multi_node_gangs_never_land_on_plain_kubernetes(preset_plans: dict[str, cd.Plan]) -> None:
    for name, plan in preset_plans.items():
        scn = cd.load_scenario(name)
        gangs = {w.name for w in scn.workloads if getattr(w, "gpus_per_job", 1) > 8}
        on_k8s = plan.placements.filter(
            pl.col("workload").is_in(gangs) & (pl.col("platform") == "kubernetes")
        )
        assert on_k8s.height == 0


def test_evaluate_agrees_with_every_solved_plan(preset_plans: dict[str, cd.Plan]) -> None:
    for name, plan in preset_plans.items():
        ev = cd.evaluate(cd.load_scenario(name), plan)
        assert ev.feasible, ev.violations
        assert ev.total_monthly_usd == pytest.approx(plan.total_monthly_usd, abs=0.005)
        assert plan.costs["monthly_usd"].sum() == pytest.approx(plan.total_monthly_usd, abs=0.05)


def test_plan_frames_have_documented_columns(default_plan: cd.Plan) -> None:
    assert default_plan.placements.columns[:6] == [
        "workload",
        "kind",
        "pool",
        "platform",
        "gpu_type",
        "share",
    ]
    assert {
        "pool",
        "platform",
        "gpu_type",
        "nodes",
        "gpus",
        "burst_gpu_hours",
        "utilization",
    } <= set(default_plan.pools.columns)
    assert default_plan.staffing.columns[:4] == ["skill", "available_fte", "required_fte", "hires"]
    assert default_plan.costs.columns[:2] == ["component", "monthly_usd"]
    assert default_plan.archetype in ARCHETYPES


def test_every_workload_gets_a_reason(default_scenario: cd.Scenario, default_plan: cd.Plan) -> None:
    text = "\n".join(default_plan.explanations)
    for w in default_scenario.workloads:
        assert any(s.startswith(f"{w.name} runs on") for s in default_plan.explanations), w.name
    assert "Staffing binds" in text or "busiest hour" in text


def test_service_levels_meet_the_latency_slos(default_plan: cd.Plan) -> None:
    latency = default_plan.service_levels.filter(pl.col("metric") == "p99_latency_ms")
    assert latency.height >= 2
    assert latency["met"].all()


def test_json_is_byte_identical_across_runs_and_worker_counts(
    default_scenario: cd.Scenario,
) -> None:
    texts = {cd.solve(default_scenario, workers=w, time_limit_s=30).to_json() for w in (1, 2, 2)}
    assert len(texts) == 1
    data = json.loads(texts.pop())
    assert "wall_time_s" not in data
    assert data["status"] == "optimal"


def test_compare_has_one_row_per_archetype(default_scenario: cd.Scenario) -> None:
    frame = cd.compare(default_scenario)
    assert sorted(frame["archetype"]) == sorted(ARCHETYPES)
    best = frame.row(0, named=True)
    assert best["delta_usd"] == 0
    assert (frame.filter(pl.col("status") != "infeasible")["delta_usd"] >= 0).all()
    plan = cd.solve(default_scenario)
    assert best["total_monthly_usd"] == pytest.approx(plan.total_monthly_usd)


def test_infeasible_staffing_is_explained_by_a_solved_relaxation() -> None:
    scn = small_scenario(
        [training(), service()],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.0}},
        hiring={"allowed": False},
    )
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    assert math.isnan(plan.total_monthly_usd)
    assert plan.relaxations.height >= 1
    fix = plan.relaxations.row(0, named=True)
    assert fix["monthly_usd"] > 0
    # The suggested change really works.
    text = " ".join(plan.explanations)
    # Fixes state totals a manager can act on.
    assert "Hire 1 Kubernetes engineer (0.55 FTE needed, 0.0 on staff)" in text, text
    assert "Add 1 Kubernetes engineer to the team" in text, text
    # The plan short of the fewest FTE is short in both skills (0.3 and 0.2 FTE); the hire is
    # stated as the plan solved with hiring allowed makes it: one person, not one of each.
    hire = plan.relaxations.filter(pl.col("change") == "hiring")
    assert hire["amount"].to_list() == [1.0]
    assert "HPC" not in hire["sentence"][0]
    fixed = cd.solve(
        scn.set_fte(
            "kubernetes",
            float(plan.relaxations.filter(pl.col("change") == "staffing:kubernetes")["amount"][0]),
        )
    )
    assert fixed.feasible


def test_short_of_staff_and_budget_at_once_is_fixed_by_both_together() -> None:
    # A biotech with no HPC engineer, a hiring freeze and a budget below what its MPI training
    # costs: neither more staff nor more budget alone gives a plan. The diagnosis said "the
    # constraints conflict in combination" and offered nothing.
    mpi = training(gpus_per_job=32, gpu_hours_per_month=6000.0, requires=["gang_scheduling", "mpi"])
    scn = small_scenario(
        [mpi],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.5}},
        hiring={"allowed": False, "retraining": False},
        policy={"budget_usd_per_month": 20_000.0},
    )
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    text = " ".join(plan.explanations)
    assert "HPC (Slurm) FTE, 0.0 are on staff and hiring is not allowed; and even without" in text
    both = plan.relaxations.filter(pl.col("change") == "staffing:hpc+budget")
    assert both.height == 1, text
    words = both["sentence"][0]
    assert (
        words.startswith("Add 1 HPC (Slurm) engineer to the team") and "raise the budget" in words
    )
    # The pair really works, and each half alone does not.
    budget = float(words.split(" to $")[1].split("k a month")[0]) * 1000
    staffed = scn.set_fte("hpc", 1.0)
    assert cd.solve(staffed.set_budget(budget)).feasible
    assert not cd.solve(staffed).feasible
    assert not cd.solve(scn.set_budget(budget)).feasible


def test_a_budget_fix_says_the_cash_spend_the_budget_caps() -> None:
    # The default under a $450k budget once said "Raise the budget by $176k to $626k a month:
    # the best plan then costs $628k a month.", read as a plan above its own budget: $2k of its
    # cost was estimated effort, which a budget does not cap. (That cheaper-cash plan ran
    # 4-GPU jobs on single-GPU L40S spot; the default's cheapest-cash plan is now its optimum,
    # all cash.) A quant fund whose Slurm users would move to Kubernetes: $8k of effort.
    scn = cd.load_scenario(Path(__file__).parent / "data" / "quant-fund.toml").set_budget(250_000.0)
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    row = plan.relaxations.filter(pl.col("change") == "budget")
    words = row["sentence"][0]
    budget = float(words.split(" to $")[1].split("k a month")[0]) * 1000
    fixed = cd.solve(scn.set_budget(budget + 500.0))
    assert fixed.feasible and fixed.cash_monthly_usd < fixed.total_monthly_usd - 500
    assert words.endswith(
        f"the best plan then costs {money(fixed.total_monthly_usd)} a month, "
        f"{money(fixed.cash_monthly_usd)} of it cash spend."
    )


def test_a_forced_archetype_names_the_workload_it_cannot_host_and_what_would_let_it() -> None:
    # "Why: the forced archetype slurm_only cannot host every workload within the limits" left
    # a meeting to find which workload, and offered only to stop forcing the policy.
    scn = small_scenario([training(), service()], policy={"archetype": "slurm_only"})
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    text = " ".join(plan.explanations)
    assert (
        "the forced archetype slurm_only cannot host api (api requires autoscaling and "
        "self-healing, which Slurm lacks natively)"
    ) in text
    drop = plan.relaxations.filter(pl.col("change") == "requires:api:autoscaling+self_healing")
    assert drop.height == 1, text
    assert drop["sentence"][0].startswith(
        "Drop autoscaling and self-healing from what api requires"
    )
    # Dropping one of the two is not enough; both, as offered, is.
    one = scn.update({"workloads": [training(), service(requires=["self_healing"])]})
    assert not cd.solve(one).feasible
    both = scn.update({"workloads": [training(), service(requires=[])]})
    assert cd.solve(both).feasible
    # The reason is the closest kind's: the batch add-on lacks only MPI, plain Kubernetes more.
    mpi = training(requires=["gang_scheduling", "mpi"])
    batch = small_scenario([mpi], policy={"archetype": "kubernetes_batch"})
    assert (
        "cannot host train (train requires MPI integration, which Kubernetes with a batch add-on "
        "lacks natively)"
    ) in " ".join(cd.solve(batch).explanations)


def test_unmeetable_latency_slo_is_explained() -> None:
    scn = small_scenario([service(p99_latency_ms=100.0)])
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    assert any("Relax the p99 latency SLO of api to 240 ms" in s for s in plan.explanations), (
        plan.explanations
    )


def test_missing_platform_is_explained() -> None:
    scn = small_scenario([service()], policy={"platforms": ["slurm"]})
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    assert any("Allow Kubernetes as a candidate" in s for s in plan.explanations), plan.explanations


def test_time_limited_solve_reports_its_status(default_scenario: cd.Scenario) -> None:
    plan = cd.solve(default_scenario, time_limit_s=0.001)
    # Cut short, a solve is never called infeasible: no plan yet is "time_limit".
    assert plan.status in ("optimal", "feasible", "time_limit")
    if plan.status == "feasible":
        assert plan.gap >= 0


@pytest.mark.parametrize("seed", [0, 3, 11, 16, 22])
def test_generated_plans_are_identical_across_worker_counts(seed: int) -> None:
    from test_bruteforce import instance

    scn = instance(seed)
    assert cd.solve(scn, workers=1).to_json() == cd.solve(scn, workers=2).to_json()


def test_a_hint_speeds_the_search_but_never_changes_the_plan(default_scenario: cd.Scenario) -> None:
    base = cd.solve(default_scenario)
    moved = default_scenario.scale_demand("realtime_inference", 1.3)
    assert cd.solve(moved, hint=base).to_json() == cd.solve(moved).to_json()
    other = cd.load_scenario("research-lab")
    assert cd.solve(other, hint=base).to_json() == cd.solve(other).to_json()


def test_the_lp_relaxation_stays_a_relaxation_with_service_level_cuts(
    default_scenario: cd.Scenario,
) -> None:
    """A model that carries cuts (rows enforced by a premise literal) still has an LP, below
    the proven optimum: the enforced rows are left out, not read as unconditional."""
    from cluster_decide.model.build import add_service_levels, build_model
    from cluster_decide.model.data import prepare
    from cluster_decide.planning.loop import solve_data, tie_break_scale
    from cluster_decide.planning.warmstart import lp_relaxation

    data = prepare(default_scenario)
    result = solve_data(data, 10.0, 1, 0)
    assert result.status is cd.Status.OPTIMAL and result.model.service_rows
    m = build_model(data)
    add_service_levels(m, list(result.model.service_rows))
    m.cp.minimize(m.cost_cents * tie_break_scale(m) + m.tie_break)
    relaxed = lp_relaxation(m.cp)
    assert relaxed is not None
    assert relaxed[0] <= result.objective_cents * tie_break_scale(m) + 1


def test_the_restricted_search_gives_a_feasible_start_for_the_full_model(
    default_scenario: cd.Scenario,
) -> None:
    from cluster_decide.model.build import build_model
    from cluster_decide.model.data import prepare
    from cluster_decide.planning.evaluation import evaluate_decisions
    from cluster_decide.planning.solve import restricted, solve_data
    from cluster_decide.planning.warmstart import lp_relaxation

    data = prepare(default_scenario)
    m = build_model(data)
    m.cp.minimize(m.cost_cents)
    relaxed = lp_relaxation(m.cp)
    assert relaxed is not None
    narrow = restricted(data, m, relaxed[1], top=1)
    allowed = [c for c in narrow.combos.values() if not c.blocked]
    assert len(allowed) < len(data.allowed())
    assert {c.workload for c in allowed} == {w.name for w in data.workloads}, (
        "every workload keeps a place"
    )
    result = solve_data(narrow, 10.0, 1, 0)
    assert result.decisions is not None
    full = evaluate_decisions(data, result.decisions)
    assert full.feasible
    assert full.total_cents >= round(cd.solve(default_scenario).total_monthly_usd * 100)
