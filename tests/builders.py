"""Small scenario builders shared by the tests."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import polars as pl

import cluster_decide as cd


def small_scenario(workloads: list[dict[str, Any]], **sections: Any) -> cd.Scenario:
    """A scenario from plain dicts, with a generous team unless told otherwise."""
    data: dict[str, Any] = {
        "schema_version": 1,
        "scenario": {"name": "test"},
        "team": {"hpc": {"fte": 4.0}, "kubernetes": {"fte": 6.0}},
        "workloads": workloads,
    }
    data.update(sections)
    return cd.parse_scenario(data, source="test.toml")


def training(name: str = "train", **kw: Any) -> dict[str, Any]:
    base = {
        "name": name,
        "kind": "distributed_training",
        "interface": "slurm",
        "gpu_types": ["H100"],
        "gpus_per_job": 16,
        "gpu_hours_per_month": 5000.0,
        "mean_job_hours": 12.0,
        "max_queue_wait_hours": 8.0,
        "requires": ["gang_scheduling"],
    }
    base.update(kw)
    return base


def service(name: str = "api", **kw: Any) -> dict[str, Any]:
    base = {
        "name": name,
        "kind": "realtime_inference",
        "interface": "containers",
        "gpu_types": ["L40S"],
        "peak_requests_per_second": 20.0,
        "gpu_seconds_per_request": 0.2,
        "p99_latency_ms": 1000.0,
        "profile": "business_hours",
        "requires": ["autoscaling", "self_healing"],
    }
    base.update(kw)
    return base


def embeddings(name: str = "embed", **kw: Any) -> dict[str, Any]:
    """An embedding service on L4 (sold by AWS alone in the catalog): 200 short requests a second."""
    shape = {
        "gpu_types": ["L4"],
        "peak_requests_per_second": 200.0,
        "gpu_seconds_per_request": 0.02,
        "p99_latency_ms": 500.0,
    }
    return service(name, **(shape | kw))


def fine_tuning(name: str = "finetune", **kw: Any) -> dict[str, Any]:
    """Fine-tuning on Slurm today: 8-GPU jobs of 8 hours on H100, queued at most 6 hours."""
    shape = {
        "kind": "fine_tuning",
        "gpus_per_job": 8,
        "gpu_hours_per_month": 20_000.0,
        "mean_job_hours": 8.0,
        "max_queue_wait_hours": 6.0,
        "requires": [],
    }
    return training(name, **(shape | kw))


def chat_service(name: str = "chat", **kw: Any) -> dict[str, Any]:
    """A business-hours chat service on H100 in containers: 30 req/s, p99 within 2 s."""
    shape = {
        "gpu_types": ["H100"],
        "peak_requests_per_second": 30.0,
        "p99_latency_ms": 2000.0,
        "requires": ["autoscaling", "self_healing", "rolling_updates"],
    }
    return service(name, **(shape | kw))


def component_usd(plan: cd.Plan, component: str) -> float:
    """Monthly dollars of one cost component of ``plan`` (one row per component)."""
    return float(plan.costs.filter(pl.col("component") == component)["monthly_usd"].item())


def solve_by_work(scn: cd.Scenario, work: float = 5.0) -> cd.Plan:
    """``cd.solve`` on one worker, stopping on CP-SAT's deterministic work instead of the clock.

    For tests that compare the plans of two solves: a wall-clock limit ends a search earlier
    on a loaded machine (a feasible plan instead of the optimum, or a repaired one), so the
    comparison would depend on the load. The generous wall limit is only a safety net.
    """
    from cluster_decide.planning.solve import deterministic_work

    with deterministic_work(work):
        return cd.solve(scn, time_limit_s=600.0, workers=1)


def shop(
    finetune_gpu_hours: float,
    gang: int,
    pretrain_gpu_hours: float,
    pretrain_wait_hours: float,
    clusters: dict[str, tuple[str, int]],
    **sections: Any,
) -> cd.Scenario:
    """Generated estates of 2026-12-02: owned H100 clusters of today, gang pre-training on
    Slurm, 8-GPU fine-tuning that may move to containers (and spot), a chat service."""
    return small_scenario(
        [
            training(
                "pretrain",
                gpus_per_job=gang,
                gpu_hours_per_month=pretrain_gpu_hours,
                mean_job_hours=12.0,
                max_queue_wait_hours=pretrain_wait_hours,
                divisible=False,
            ),
            fine_tuning(gpu_hours_per_month=finetune_gpu_hours),
            chat_service(**sections.pop("chat", {})),
        ],
        current={
            "as_of": "2026-12",
            "workloads": {"pretrain": {"platform": "slurm", "users": 10}}
            | ({"chat": {"platform": "kubernetes"}} if "k8s-a" in clusters else {}),
            "clusters": [
                {"name": n, "platform": platform, "gpu_type": "H100", "nodes": nodes}
                for n, (platform, nodes) in clusters.items()
            ],
        },
        **sections,
    )


def slurm_shop(finetune_gpu_hours: float) -> cd.Scenario:
    """One 12-node Slurm cluster, two HPC engineers, cloud or owned, whichever is cheaper
    (seed 134)."""
    return shop(
        finetune_gpu_hours,
        64,
        15_000.0,
        6.0,
        {"hpc-a": ("slurm", 12)},
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 0.0}},
        procurement={"mode": "cheapest"},
    )


def two_clusters(finetune_gpu_hours: float) -> cd.Scenario:
    """16-node Slurm and 1-node Kubernetes clusters, 128-GPU pre-training, a 10 req/s chat
    service; one HPC engineer, cloud from now on (seed 42)."""
    return shop(
        finetune_gpu_hours,
        128,
        5_000.0,
        24.0,
        {"hpc-a": ("slurm", 16), "k8s-a": ("kubernetes", 1)},
        team={"hpc": {"fte": 1.0}, "kubernetes": {"fte": 0.0}},
        procurement={"mode": "cloud"},
        chat={"peak_requests_per_second": 10.0},
    )


def random_shop(seed: int) -> Callable[[float], cd.Scenario]:
    """A generated estate of 2026-12-03 with clusters of today, as a function of fine-tuning growth.

    An owned Slurm cluster of 8-24 H100 nodes (and half the time a 1-4 node Kubernetes one),
    gang pre-training of 16-128 GPUs, a 5-40 req/s chat service, one or two HPC engineers,
    cloud, on-premises or the cheaper: the neighbour check of ``docs/model.md`` ran on 100.
    """
    rng = random.Random(seed)
    clusters = {"hpc-a": ("slurm", rng.choice([8, 12, 16, 24]))}
    if rng.random() < 0.5:
        clusters["k8s-a"] = ("kubernetes", rng.choice([1, 2, 4]))
    gang = rng.choice([16, 32, 64, 128])
    team = {
        "hpc": {"fte": rng.choice([1.0, 2.0])},
        "kubernetes": {"fte": rng.choice([0.0, 1.0, 2.0])},
    }
    mode = rng.choice(["cloud", "cheapest", "on_prem"])
    rps = rng.choice([5.0, 10.0, 20.0, 40.0])
    pretrain = rng.choice([5000.0, 15000.0, 30000.0])
    wait = rng.choice([6.0, 12.0, 24.0])
    finetune = rng.choice([3000.0, 6000.0, 10000.0])
    return lambda growth: shop(
        finetune * growth,
        gang,
        pretrain,
        wait,
        clusters,
        team=team,
        procurement={"mode": mode},
        chat={"peak_requests_per_second": rps},
    )
