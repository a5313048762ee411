"""The solver's optimum equals the cheapest of every enumerated plan, scored by the evaluator.

Small instances (2-4 indivisible workloads, 3 candidate pools, 2 GPU types) are enumerated in
full: every placement of every workload, every node count that could matter, every choice of
managed pools, scored by ``evaluate_decisions`` — which knows nothing of CP-SAT (it finds the
cheapest hires and retraining by enumeration too).
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
from builders import small_scenario

import cluster_decide as cd
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, ModelData, prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions

PLATFORM_SETS = [
    ["slurm", "kubernetes", "kubernetes_batch"],
    ["slurm", "kubernetes_batch", "shared"],
    ["slurm", "kubernetes", "shared"],
]


def _workload(rng: random.Random, i: int) -> dict[str, Any]:
    kind = rng.choice(
        [
            "distributed_training",
            "fine_tuning",
            "batch_inference",
            "realtime_inference",
            "experimentation",
        ]
    )
    types = rng.sample(["H100", "L40S"], k=rng.choice([1, 2]))
    common = {
        "name": f"w{i}",
        "kind": kind,
        "interface": rng.choice(["slurm", "containers"]),
        "gpu_types": types,
        "divisible": False,
        "profile": rng.choice(["flat", "business_hours", "nightly_batch"]),
    }
    if kind == "realtime_inference":
        return common | {
            "peak_requests_per_second": rng.uniform(2, 15),
            "gpu_seconds_per_request": 0.2,
            "p99_latency_ms": 2000.0,
            "requires": rng.choice([[], ["autoscaling"], ["self_healing"]]),
        }
    if kind == "experimentation":
        return common | {
            "concurrent_users": rng.randint(1, 6),
            "gpus_per_user": 1,
            "max_queue_wait_hours": 0.25,
        }
    slo = "max_completion_hours" if kind == "batch_inference" else "max_queue_wait_hours"
    return common | {
        "gpus_per_job": rng.choice([1, 4, 8, 16]),
        "gpu_hours_per_month": rng.uniform(300, 4000),
        "mean_job_hours": 4.0,
        slo: 12.0,
        "requires": rng.choice([[], ["gang_scheduling"], ["fair_share"]]),
        "prefers": rng.choice([[], ["accounting"], ["gitops", "preemption"]]),
    }


def instance(seed: int) -> cd.Scenario:
    rng = random.Random(seed)
    n = rng.choice([2, 3, 3, 4])
    return small_scenario(
        [_workload(rng, i) for i in range(n)],
        team={
            "hpc": {"fte": rng.choice([0.0, 1.0, 2.5])},
            "kubernetes": {"fte": rng.choice([0.0, 3.0, 4.5])},
        },
        hiring={"allowed": rng.random() < 0.6, "max_fte": rng.choice([1, 2, 4])},
        procurement={
            "mode": rng.choice(["cloud", "on_prem"]),
            "on_demand_burst": rng.random() < 0.7,
        },
        policy={"platforms": rng.choice(PLATFORM_SETS)},
    )


def _node_options(data: ModelData, pool: str, gpu: str, combos: list[Any]) -> range:
    gpn = data.gpus_per_node[gpu]
    gang = max((c.gang_gpus for c in combos if c.gang_gpus > 1), default=0)
    lb = math.ceil(gang / gpn)
    peak = sum(c.demand for c in combos).max() / DEMAND_UNITS_PER_GPU
    need = math.ceil(peak / gpn - 1e-9)
    flexible = any((c.workload, pool, gpu) in data.flexible for c in combos)
    if not data.pool(pool).bursts and not flexible:
        return range(max(lb, need), max(lb, need) + 1)
    # Bursting pools rent peaks; where training fills troughs, fewer nodes than the summed
    # peak may hold it: every count from the gang's floor up could be the cheapest.
    lb = max(lb, 1) if flexible else lb
    return range(lb, max(lb, need) + 1)


def brute_force(data: ModelData) -> int | None:
    """Cheapest feasible plan over every placement, spot choice (all or none: the workloads are
    indivisible) and node count that could matter."""
    options = [[c for c in data.allowed() if c.workload == w.name] for w in data.workloads]
    best: int | None = None
    for choice in itertools.product(*options):
        spot_options = [
            (0, 100) if (c.workload, c.pool, c.gpu_type) in data.spot_cents else (0,)
            for c in choice
        ]
        for spot_choice in itertools.product(*spot_options):
            groups: dict[tuple[str, str], list[Any]] = {}
            for c, on_spot in zip(choice, spot_choice, strict=True):
                if not on_spot:
                    groups.setdefault((c.pool, c.gpu_type), []).append(c)
            keys = sorted(groups)
            ranges = [_node_options(data, p, g, groups[(p, g)]) for p, g in keys]
            shares = {(c.workload, c.pool, c.gpu_type): 100 for c in choice}
            spot = {
                (c.workload, c.pool, c.gpu_type): 100
                for c, on_spot in zip(choice, spot_choice, strict=True)
                if on_spot
            }
            people = data.people
            managed_options = sorted(
                {c.pool for c in choice if people is not None and c.pool in people.managed}
            )
            for nodes in itertools.product(*ranges):
                for k in range(len(managed_options) + 1):
                    for managed in itertools.combinations(managed_options, k):
                        dec = Decisions(
                            shares, dict(zip(keys, nodes, strict=True)), spot, frozenset(managed)
                        )
                        ev = evaluate_decisions(data, dec)
                        if ev.feasible and (best is None or ev.total_cents < best):
                            best = ev.total_cents
    return best


@pytest.mark.parametrize("seed", range(40))
def test_solver_matches_brute_force(seed: int) -> None:
    assert_brute_force_optimum(instance(seed))


def assert_brute_force_optimum(scn: cd.Scenario) -> None:
    """The solver proves the cheapest enumerated plan's cost, or infeasible where none is."""
    data = prepare(scn)
    expected = None if data.unplaceable else brute_force(data)
    plan = cd.solve(scn, time_limit_s=30)
    if expected is None:
        assert plan.status == "infeasible"
        return
    assert plan.status == "optimal"
    ev = cd.evaluate(scn, plan)
    assert ev.feasible, ev.violations
    assert ev.total_cents == expected


def test_brute_force_instances_are_not_vacuous() -> None:
    feasible = sum(
        1
        for seed in range(40)
        if not prepare(instance(seed)).unplaceable and brute_force(prepare(instance(seed)))
    )
    assert feasible >= 15


def with_kubernetes_cluster(seed: int) -> cd.Scenario:
    """``instance(seed)`` with a Kubernetes cluster of today: two pools (with and without the
    batch add-on, at most one open), its nodes owned or leased, its services running on it."""
    rng = random.Random(1000 + seed)
    scn = instance(seed)
    cluster = {
        "name": "today",
        "platform": "kubernetes",
        "gpu_type": rng.choice(sorted({g for w in scn.workloads for g in w.gpu_types})),
        "nodes": rng.randint(1, 3),
        "max_nodes": rng.choice([3, 4]),
        "ownership": rng.choice(["owned", "leased"]),
    }
    running = {w.name: {"platform": "kubernetes"} for w in scn.workloads if rng.random() < 0.5}
    return scn.update(
        {
            "current": {"as_of": "2026-12", "workloads": running, "clusters": [cluster]},
            "policy": {"platforms": ["slurm", "kubernetes", "kubernetes_batch"]},
        }
    )


@pytest.mark.parametrize("seed", range(12))
def test_solver_matches_brute_force_beside_a_cluster_of_today(seed: int) -> None:
    scn = with_kubernetes_cluster(seed)
    assert {p.name for p in prepare(scn).pools} >= {"today", "today+batch"}
    assert_brute_force_optimum(scn)


def test_the_cluster_instances_use_the_add_on_pool() -> None:
    used = sum(
        1
        for seed in range(12)
        if "today+batch" in cd.solve(with_kubernetes_cluster(seed)).pools["pool"].to_list()
    )
    assert used >= 2


def with_two_kubernetes_clusters(seed: int) -> cd.Scenario:
    """``with_kubernetes_cluster(seed)`` beside a second Kubernetes cluster, each workload of
    today naming the cluster it runs on: moving one to the other cluster costs a relocation."""
    rng = random.Random(2000 + seed)
    scn = with_kubernetes_cluster(seed)
    assert scn.current is not None
    first = scn.to_dict()["current"]["clusters"][0]
    second = first | {"name": "other", "nodes": rng.randint(1, 2), "max_nodes": None}
    running = {
        w: {"platform": "kubernetes", "cluster": rng.choice(["today", "other"])}
        for w in scn.current.workloads
    }
    return scn.update(
        {"current": {"workloads": running, "clusters": [first, second]}},
    )


@pytest.mark.parametrize("seed", range(6))
def test_solver_matches_brute_force_beside_two_named_clusters(seed: int) -> None:
    scn = with_two_kubernetes_clusters(seed)
    assert {p.name for p in prepare(scn).pools} >= {"today", "other"}
    assert_brute_force_optimum(scn)


def test_the_named_cluster_instances_relocate_and_keep() -> None:
    actions = [
        a
        for seed in range(6)
        for a in cd.solve(with_two_kubernetes_clusters(seed)).transition["action"].to_list()
    ]
    assert "keep" in actions and "relocate" in actions
