"""One test per constraint family: each builds a tiny case the family alone decides.

``test_every_family_has_a_test`` fails when a family is added to the model without a test here.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from builders import fine_tuning, service, small_scenario, training
from hypothesis import given, settings
from hypothesis import strategies as st

import cluster_decide as cd
from cluster_decide.model.build import FAMILIES, build_model, reduced_buckets
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions
from cluster_decide.planning.solve import solve_data


def test_every_family_has_a_test() -> None:
    tested = {
        name.removeprefix("test_family_")
        for name in dir(sys.modules[__name__])
        if name.startswith("test_family_")
    }
    assert set(FAMILIES) <= tested, f"families without a test: {set(FAMILIES) - tested}"


def test_every_family_adds_rows_on_the_default_scenario(default_scenario: cd.Scenario) -> None:
    m = build_model(prepare(default_scenario))
    # Policy rows exist only when a policy is set; service-level cuts only where a pool misses
    # one. No default class fills troughs (fine-tuning's 2-hour wait target leaves less room
    # than one of its jobs): the sharing rows are counted on the preset built to share.
    skipped = ("policy", "service_levels", "sharing")
    assert {f for f in FAMILIES if f not in skipped} <= set(m.families)
    shared = build_model(prepare(cd.load_scenario("train-and-serve")))
    assert "sharing" in shared.families


def test_family_coverage() -> None:
    scn = small_scenario([training(), service()])
    plan = cd.solve(scn)
    shares = plan.placements.group_by("workload").agg(pl.col("share").sum())
    assert sorted(shares["share"].to_list()) == [1.0, 1.0]
    # Dropping a placement breaks coverage and the evaluator says so by name.
    dec = plan.decisions()
    broken = Decisions({k: v for k, v in dec.shares.items() if k[0] != "api"}, dec.nodes)
    assert any(
        v.startswith("coverage[api]") for v in evaluate_decisions(prepare(scn), broken).violations
    )


def test_family_capability() -> None:
    scn = small_scenario([service(requires=["autoscaling", "rolling_updates"])])
    plan = cd.solve(scn)
    assert set(plan.placements["platform"]) <= {"kubernetes", "kubernetes_batch"}
    assert any("Slurm is ruled out" in s for s in plan.explanations)


def test_family_capability_prefers_costs_a_penalty() -> None:
    scn = small_scenario([service(requires=["autoscaling"], prefers=["fair_share", "accounting"])])
    data = prepare(scn)
    gaps = {c.pool: c.gap_cents_per_pct for c in data.combos.values()}
    assert gaps["k8s"] > gaps["k8s-batch"] > 0


def test_family_linking(default_plan: cd.Plan) -> None:
    used = set(default_plan.placements["pool"])
    assert set(default_plan.pools["pool"]) <= used
    scn = small_scenario([training()])
    dec = Decisions({("train", "slurm", "H100"): 100}, {("slurm", "H100"): 2, ("k8s", "H100"): 1})
    assert any(
        v.startswith("linking[k8s]") for v in evaluate_decisions(prepare(scn), dec).violations
    )


def test_family_capacity() -> None:
    scn = small_scenario(
        [training(gpu_hours_per_month=7300.0, gpus_per_job=8)], policy={"platforms": ["slurm"]}
    )
    plan = cd.solve(scn)
    # 7,300 GPU-hours a month is 10 busy GPUs; Slurm reaches 85% on training: 11.8 -> 2 nodes.
    assert plan.pools["gpus"].to_list() == [16]
    dec = plan.decisions()
    short = Decisions(dec.shares, {k: v - 1 for k, v in dec.nodes.items()})
    assert any(
        v.startswith("capacity[slurm,H100")
        for v in evaluate_decisions(prepare(scn), short).violations
    )


def test_family_gang_fit() -> None:
    scn = small_scenario([training(gpus_per_job=64, gpu_hours_per_month=1000.0, requires=[])])
    plan = cd.solve(scn)
    assert "kubernetes" not in set(plan.placements["platform"]), (
        "a multi-node gang never lands on plain Kubernetes"
    )
    assert int(plan.pools["gpus"].sum()) >= 64, "the largest job fits the baseline nodes"


def test_family_staffing() -> None:
    scn = small_scenario(
        [training()],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 6.0}},
        hiring={"retraining": False},
    )
    plan = cd.solve(scn)
    assert plan.archetype == "kubernetes_batch", "without HPC staff, hiring or retraining, no Slurm"
    hired = small_scenario(
        [training()],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.0}},
        hiring={"allowed": True, "max_fte": 4},
    )
    plan = cd.solve(hired)
    hires = int(plan.staffing["hires"].sum())
    assert hires >= 1
    assert plan.costs.filter(pl.col("component") == "hiring")["monthly_usd"][0] > 0
    # A hire is a whole person: the plan pays every hire's full salary, busy or not.
    salary = plan.costs.filter(pl.col("component") == "new_hires")["monthly_usd"][0]
    assert salary == pytest.approx(
        sum(
            h * hired.loaded_cost_usd_per_year(s) / 12
            for s, h in zip(plan.staffing["skill"], plan.staffing["hires"], strict=True)
        ),
        abs=0.02,
    )


def test_family_budget() -> None:
    scn = small_scenario([training()])
    free = cd.solve(scn)
    capped = cd.solve(scn.set_budget(free.cash_monthly_usd * 0.5))
    assert capped.status == "infeasible", capped.explanations
    assert any("raise the budget" in s.lower() for s in capped.explanations), capped.explanations


def test_family_policy() -> None:
    scn = small_scenario(
        [training(), service()], team={"hpc": {"fte": 4.0}, "kubernetes": {"fte": 8.0}}
    )
    assert cd.solve(scn.force_archetype("hybrid_shared")).archetype == "hybrid_shared"
    one = cd.solve(scn.update({"policy": {"max_pools": 1}}))
    assert one.placements["pool"].n_unique() == 1
    pinned = small_scenario([training(platforms=["kubernetes_batch"]), service()])
    plan = cd.solve(pinned)
    assert plan.placements.filter(pl.col("workload") == "train")["platform"].to_list() == [
        "kubernetes_batch"
    ]


def test_family_spot() -> None:
    scoring = {
        "name": "scoring",
        "kind": "batch_inference",
        "interface": "containers",
        "gpu_types": ["H100"],
        "gpus_per_job": 1,
        "gpu_hours_per_month": 9000.0,
        "mean_job_hours": 1.0,
        "max_completion_hours": 8.0,
        "profile": "nightly_batch",
    }
    scn = small_scenario(
        [scoring], policy={"platforms": ["kubernetes"]}, procurement={"max_spot_share": 0.4}
    )
    plan = cd.solve(scn)
    assert 0 < plan.placements["spot_share"][0] <= 0.4
    dec = plan.decisions()
    key = next(iter(dec.shares))
    greedy = Decisions(dec.shares, dec.nodes, spot={key: dec.shares[key]})
    assert any(
        v.startswith(f"spot[{key[0]},k8s,H100,cap]")
        for v in evaluate_decisions(prepare(scn), greedy).violations
    )


def test_family_burst_cap() -> None:
    scn = small_scenario([service(gpu_types=["H100"], peak_requests_per_second=400.0)])
    free = cd.solve(scn.update({"procurement": {"burst_cap_gpus": {"H100": 10000}}}))
    capped = cd.solve(scn.update({"procurement": {"burst_cap_gpus": {"H100": 8}}}))
    assert free.pools["burst_gpu_hours"].sum() > capped.pools["burst_gpu_hours"].sum()
    assert capped.cash_monthly_usd >= free.cash_monthly_usd
    data = prepare(scn.update({"procurement": {"burst_cap_gpus": {"H100": 8}}}))
    ev = evaluate_decisions(data, free.decisions())
    assert any(v.startswith("burst_cap[H100") for v in ev.violations)
    assert not cd.evaluate(capped.inputs, capped).violations  # type: ignore[arg-type]


def test_the_burst_cap_sums_the_burst_variables_of_the_capacity_rows_hours() -> None:
    """Every hour's burst in a capped pool is the variable of the capacity row standing for that
    hour, and each row's variable stands for as many hours as the cost charges it for."""
    scn = cd.load_scenario().update({"procurement": {"burst_cap_gpus": {"H100": 40, "L40S": 8}}})
    m = build_model(prepare(scn))
    assert m.families["burst_cap"] > 0
    assert {(p, g) for p, g, _t in m.burst} == set(m.burst_bucket)
    for (p, g), buckets in m.burst_bucket.items():
        hours, counts = np.unique(buckets, return_counts=True)
        weights = {t: w for (q, h, t), w in m.burst_weight.items() if (q, h) == (p, g)}
        assert weights == dict(zip(hours.tolist(), counts.tolist(), strict=True)), (p, g)


def test_each_hours_burst_is_the_variable_of_a_row_with_that_hours_coefficients() -> None:
    """The burst cap sums, for every hour, the burst variable of the capacity row whose
    coefficients are that hour's. A divisible service's piece line can differ between two hours
    of equal whole-class demand (a diurnal service at 60 requests a second), so grouping hours
    by demand, as the cap once did, capped another row's variable for those hours."""
    scn = small_scenario(
        [service(divisible=True, peak_requests_per_second=60.0, profile="diurnal")],
        procurement={"burst_cap_gpus": {"L40S": 2}},
    )
    data = prepare(scn)
    m = build_model(data)
    assert m.families["burst_cap"] > 0
    by_demand = 0  # hours of equal demand whose rows differ
    for (p, g), buckets in m.burst_bucket.items():
        combos = [c for c in data.allowed() if (c.pool, c.gpu_type) == (p, g)]
        slopes = [c.slope if c.slope is not None else c.demand for c in combos]
        fixeds = [c.fixed if c.fixed is not None else 0 * c.demand for c in combos]
        rows = np.vstack([np.stack(slopes), np.stack(fixeds)])
        assert (rows[:, buckets] == rows).all(), (p, g)
        demand = np.stack([c.demand for c in combos])
        by_demand += sum(
            (demand[:, t] == demand[:, u]).all() and not (rows[:, t] == rows[:, u]).all()
            for t in range(168)
            for u in range(t)
        )
    assert by_demand > 0, "no two hours of equal demand with different rows: the case is not here"


def test_family_transition() -> None:
    # A Slurm team's class placed on Kubernetes is moved (priced), its users retool.
    scn = small_scenario(
        [training(requires=[])],
        current={"workloads": {"train": {"platform": "slurm", "users": 10}}},
    )
    moved = cd.solve(scn.restrict_platforms(["kubernetes_batch"]))
    row = moved.transition.row(0, named=True)
    assert row["action"] == "move" and row["retool"] and row["one_time_usd"] > 0
    kept = cd.solve(scn)
    assert kept.transition["action"].to_list() == ["keep"]
    assert kept.costs.filter(pl.col("component") == "migration")["monthly_usd"][0] == 0.0


def test_family_dominance() -> None:
    # Kubernetes with a batch add-on can take everything plain Kubernetes hosts, no dearer:
    # never both, and the cut never changes the optimum.
    from cluster_decide.model.build import dominated_pairs

    scn = small_scenario([training(), service()])
    data = prepare(scn)
    assert ("k8s", "k8s-batch") in dominated_pairs(data)
    plan = cd.solve(scn)
    assert not {"k8s", "k8s-batch"} <= set(plan.pools["pool"])


def pooled_gangs() -> cd.Scenario:
    """A 512-GPU gang beside 8-GPU fine-tuning in one Kubernetes batch pool (FIFO admission)."""
    return small_scenario(
        [
            training(
                "pretrain",
                gpus_per_job=512,
                gpu_hours_per_month=150000.0,
                mean_job_hours=24.0,
                max_queue_wait_hours=24.0,
                interface="containers",
            ),
            training(
                "finetune",
                kind="fine_tuning",
                gpus_per_job=8,
                gpu_hours_per_month=30000.0,
                mean_job_hours=6.0,
                max_queue_wait_hours=2.0,
                interface="containers",
                requires=[],
            ),
        ],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 6.0}},
        policy={"platforms": ["kubernetes", "kubernetes_batch"]},
    )


def test_family_service_levels() -> None:
    scn = pooled_gangs()
    data = prepare(scn)
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert plan.service_levels["met"].all(), plan.service_levels
    assert set(plan.service_levels["workload"]) == {"pretrain", "finetune"}
    # Each class sized alone fits the capacity rows, but the pooled wait misses the target: the
    # solve loop had to cut, and one node fewer is a service-level violation by name.
    res = solve_data(data)
    assert res.cuts >= 1
    dec = plan.decisions()
    short = Decisions(dec.shares, {k: v - 1 for k, v in dec.nodes.items()})
    violations = evaluate_decisions(data, short).violations
    assert any(v.startswith("service_levels[finetune,k8s-batch,H100]") for v in violations)
    assert not any(v.startswith("capacity[") for v in violations), violations


def test_family_sharing() -> None:
    checkpointed = training(
        gpus_per_job=8, gpu_hours_per_month=7300.0, interruptible=True, max_queue_wait_hours=24.0
    )
    api = service(gpu_types=["H100"], peak_requests_per_second=200.0, profile="diurnal")
    scn = small_scenario(
        [checkpointed, api],
        procurement={"mode": "on_prem", "on_demand_burst": False},
        policy={"platforms": ["shared"]},
    )
    data = prepare(scn)
    assert ("train", "shared", "H100") in data.flexible
    plan = cd.solve(scn)
    ev = cd.evaluate(scn, plan)
    assert ev.feasible and ev.sharing
    # The training's 10 busy GPUs live in the service's troughs: the pool is not service + 12.
    (sh,) = ev.sharing.values()
    assert plan.pools["gpus"][0] < sh.services_units.max() / 1000 + 12
    # Give the service the training's troughs and the evaluator names the sharing row.
    dec = plan.decisions()
    short = Decisions(dec.shares, {k: v - 2 for k, v in dec.nodes.items()})
    assert any(
        v.startswith("sharing[") or v.startswith("capacity[")
        for v in evaluate_decisions(data, short).violations
    )


def test_every_family_has_an_add_and_a_check() -> None:
    """The model adds each family with ``add_<family>``; ``cd.evaluate`` checks it with ``check_<family>``."""
    evaluate = importlib.import_module("cluster_decide.planning.evaluation")
    build = importlib.import_module("cluster_decide.model.build")

    missing = [f"add_{f}" for f in FAMILIES if not callable(getattr(build, f"add_{f}", None))]
    missing += [
        f"check_{f}" for f in FAMILIES if not callable(getattr(evaluate, f"check_{f}", None))
    ]
    assert not missing, f"families without their function: {missing}"


@pytest.fixture(scope="module")
def two_pools() -> tuple[cd.Scenario, Decisions]:
    """A 16-GPU training class and a service, solved: the plan every breach below starts from."""
    scn = small_scenario([training(), service()])
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    return scn, plan.decisions()


def _breach(family: str, scn: cd.Scenario, dec: Decisions) -> tuple[cd.Scenario, Decisions]:
    """The scenario and decisions of a plan that breaks ``family`` (and as little else as may be)."""
    (train,) = [k for k in dec.shares if k[0] == "train"]
    nodes = dict(dec.nodes)
    tn = (train[1], train[2])
    if family == "coverage":
        return scn, replace(dec, shares={train: 100})
    if family == "capability":  # the service needs autoscaling, which Slurm lacks
        return scn, replace(dec, shares={train: 100, ("api", "slurm", "L40S"): 100})
    if family == "linking":
        return scn, replace(dec, nodes={**nodes, ("slurm", "L40S"): 1})
    if family == "capacity":  # the pool cannot burst, and two of its GPUs are missing
        return scn, replace(dec, nodes={**nodes, tn: nodes[tn] - 1})
    if family == "gang_fit":
        return scn, replace(dec, nodes={**nodes, tn: 1})
    if family == "staffing":
        return scn.update(
            {
                "team": {"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.0}},
                "hiring": {"allowed": False},
            }
        ), dec
    if family == "transition":
        return scn.update({"current": {"workloads": {"train": {"platform": "slurm"}}}}), dec
    if family == "budget":
        return scn.set_budget(1000.0), dec
    if family == "policy":  # force a shape the plan does not have
        shape = evaluate_decisions(prepare(scn), dec).archetype
        forced = "slurm_only" if shape != "slurm_only" else "kubernetes_only"
        return scn.update({"policy": {"archetype": forced}}), dec
    if family == "spot":  # nothing here may run on spot
        return scn, replace(dec, spot={train: 50})
    if family == "burst_cap":  # the service rents its L40S by the hour, one GPU at most
        return scn.update({"procurement": {"burst_cap_gpus": {"L40S": 1}}}), replace(
            dec, shares={train: 100, ("api", "k8s", "L40S"): 100}, nodes={tn: nodes[tn]}
        )
    if family == "dominance":  # Kubernetes with a batch add-on could host both
        return scn, replace(
            dec,
            shares={("train", "k8s-batch", "H100"): 100, ("api", "k8s", "L40S"): 100},
            nodes={("k8s", "L40S"): 1, ("k8s-batch", "H100"): 4},
        )
    if family == "sharing":
        # Six shared nodes hold 7,300 GPU-hours a month in the service's troughs, not 12,000.
        checkpointed = training(
            gpus_per_job=8,
            gpu_hours_per_month=12000.0,
            interruptible=True,
            max_queue_wait_hours=24.0,
        )
        diurnal = service(gpu_types=["H100"], peak_requests_per_second=200.0, profile="diurnal")
        shared = small_scenario(
            [checkpointed, diurnal],
            procurement={"mode": "on_prem", "on_demand_burst": False},
            policy={"platforms": ["shared"]},
        )
        return shared, Decisions(
            {("train", "shared", "H100"): 100, ("api", "shared", "H100"): 100},
            {("shared", "H100"): 6},
        )
    assert family == "service_levels"
    return scn.update({"workloads": [training(max_queue_wait_hours=0.5), service()]}), dec


@pytest.mark.parametrize("family", FAMILIES)
def test_evaluate_flags_a_plan_that_breaks_each_family(
    family: str, two_pools: tuple[cd.Scenario, Decisions]
) -> None:
    """Every family's check finds its own breach, by name, and not on the solved plan."""
    scn, dec = two_pools

    def found(ev: object) -> list[str]:
        names = [*ev.violations, *ev.dominated]  # type: ignore[attr-defined]
        return [v for v in names if v.startswith(f"{family}[") or v.startswith(f"{family}:")]

    assert not found(evaluate_decisions(prepare(scn), dec))
    bad_scn, bad = _breach(family, scn, dec)
    ev = evaluate_decisions(prepare(bad_scn), bad)
    if family == "transition":
        # Decisions cannot break the transition rows: the move and its price are derived from
        # the placements. A class moved off its platform of today is named and charged.
        assert ev.moved == ("train",) and ev.costs_cents["migration"] > 0
        return
    assert found(ev), ev.violations
    if family == "dominance":  # a finding, not a violation: the plan works, but costs no less
        assert not any(v.startswith("dominance") for v in ev.violations)


def test_a_gpu_type_another_dominates_is_used_only_beside_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An H200 node at an H100's price, as fast or faster: pre-training alone goes on H200.

    The rule only removes twin plans (the same cost with the same work on no slower GPUs), so
    the optimum's cost is the same with and without it; and where work the H200 cannot host
    (fine-tuning here allows H100 only) shares the H100s, both may stay there.
    """
    from cluster_decide.model import build

    alone = small_scenario(
        [training(gpu_types=["H100", "H200"], gpu_hours_per_month=60000.0, gpus_per_job=64)],
        policy={"platforms": ["slurm"]},
    )
    data = prepare(alone)
    assert build.dominated_gpus(data) == [("slurm", "H100", "H200", ())]
    ruled = cd.solve(alone)
    assert ruled.pools["gpu_type"].to_list() == ["H200"]
    with monkeypatch.context() as m:
        m.setattr(build, "dominated_gpus", lambda d: [])
        free = cd.solve(alone)
    assert free.pools["gpu_type"].to_list() == ["H100"]  # the tie-break's pick without the rule
    assert ruled.total_monthly_usd == pytest.approx(free.total_monthly_usd, abs=0.01)
    beside = small_scenario(
        [
            training(gpu_types=["H100", "H200"], gpu_hours_per_month=60000.0, gpus_per_job=64),
            fine_tuning(
                "ft", gpu_hours_per_month=8000.0, mean_job_hours=6.0, max_queue_wait_hours=2.0
            ),
        ],
        policy={"platforms": ["slurm"]},
    )
    assert build.dominated_gpus(prepare(beside)) == [("slurm", "H100", "H200", ("ft",))]
    assert cd.solve(beside).pools["gpu_type"].to_list() == ["H100"]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(1, 1000),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_the_capacity_rows_hours_are_the_distinct_undominated_ones(
    workloads: int, levels: int, unit: int, daily: bool, bursts: bool, seed: int
) -> None:
    """``reduced_buckets`` keeps one hour for each distinct column of demands (the first, with
    how many hours it stands for), and without burst only those no other distinct hour covers
    in every workload: the definition, checked hour by hour against the dict-and-broadcast form."""
    rng = np.random.default_rng(seed)
    demands = rng.integers(0, levels, size=(workloads, 168)).astype(np.int64) * unit
    if daily:
        demands = np.repeat(demands[:, :24], 7, axis=1)
    hours = [tuple(demands[:, t]) for t in range(168)]
    distinct = sorted({h: hours.index(h) for h in hours}.items(), key=lambda kv: kv[1])
    expected = [
        (first, hours.count(h))
        for h, first in distinct
        if bursts
        or not any(o != h and all(a >= b for a, b in zip(o, h, strict=True)) for o, _f in distinct)
    ]
    got = reduced_buckets(demands, bursts)
    assert got == expected
    if bursts:
        assert sum(n for _t, n in got) == 168
