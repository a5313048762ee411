"""Small scenario builders shared by the tests."""

from __future__ import annotations

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
