"""Replay jobs on a plan's pools and set the simulated waits beside the predicted ones.

This is the adapter between a :class:`~cluster_decide.plan.Plan` and the scheduling simulator
of :mod:`cluster_decide.simengine`, which knows nothing of scenarios. Each (pool, GPU type) of
the plan becomes a simulated pool of its baseline nodes plus the nodes its average burst
would add, under the policy of its platform: Slurm (priority FIFO, EASY backfill), the default
Kubernetes scheduler (pods placed one at a time), gang admission (Kubernetes with a batch
add-on) or a shared pool (services first, training preempted). Jobs come from the scenario —
Poisson arrivals thinned by each class's hour-of-week profile, durations drawn around its mean —
or from a job table such as the inventory's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from cluster_decide.evaluate import evaluate_decisions
from cluster_decide.model.data import (
    DEMAND_UNITS_PER_GPU,
    ModelData,
    batch_class,
    job_stretch,
    prepare,
)
from cluster_decide.plan import Plan
from cluster_decide.scenario import (
    DeadlineWorkload,
    ExperimentationWorkload,
    RealtimeWorkload,
    TrainingWorkload,
)
from cluster_decide.service import realtime_replicas
from cluster_decide.simengine import JobClass, Pool, SimOptions, generate_jobs, run, wait_stats

__all__ = ["POLICY_OF", "SESSION_HOURS", "Simulation", "simulate", "simulated_pools"]

POLICY_OF = {
    "slurm": "slurm",
    "kubernetes": "kubernetes",
    "kubernetes_batch": "gang",
    "shared": "shared",
}
"""The simulator policy that stands for each platform kind."""
SESSION_HOURS = 2.0
"""Default length of an interactive (experimentation) session, in hours (the scenario's
``mean_session_hours``, whose default this is); arrivals are users / session length."""
WARMUP_H = 24.0
"""Hours at the start of a replay left out of the statistics, while the queues fill."""
SERVICE_PRIORITY = 10
INTERACTIVE_PRIORITY = 5


@dataclass(frozen=True)
class Simulation:
    """What a replay of a plan measured.

    ``waits``: workload, pool, jobs, mean_wait_h, p50_wait_h, p95_wait_h, p99_wait_h
    (pool is ``pool/gpu_type``). ``pools``: pool, policy, gpus, utilization, busy_gpu_hours,
    partial_alloc_gpu_hours, preempted_gpu_hours, preemptions, deadlocks, deadlock_hours.
    ``comparison``: workload, pool, metric, predicted_h, simulated_h (mean queue waits of batch
    classes, as the planner predicts them and as replayed).
    """

    waits: pl.DataFrame
    pools: pl.DataFrame
    comparison: pl.DataFrame
    jobs: pl.DataFrame
    events: int
    wall_s: float
    days: float


def _name(pool: str, gpu: str) -> str:
    return f"{pool}/{gpu}"


def simulated_pools(plan: Plan, data: ModelData) -> list[Pool]:
    """One simulated pool per (pool, GPU type) of the plan: baseline nodes plus average burst."""
    ev = evaluate_decisions(data, plan.decisions())
    out = []
    for row in plan.pools.iter_rows(named=True):
        p, g = row["pool"], row["gpu_type"]
        gpn = data.gpus_per_node[g]
        burst = ev.burst.get((p, g))
        extra = float(burst.mean()) / DEMAND_UNITS_PER_GPU if burst is not None else 0.0
        nodes = max(1, int(row["nodes"]) + math.ceil(extra / gpn - 1e-9))
        out.append(Pool(_name(p, g), POLICY_OF[row["platform"]], gpn, nodes))
    return out


def _thin(jobs: pl.DataFrame, weights: dict[str, np.ndarray], seed: int) -> pl.DataFrame:
    """Keep each job with probability profile(hour)/max, turning a peak-rate stream into a shaped one."""
    if jobs.height == 0:
        return jobs
    rng = np.random.default_rng(seed + 1)
    hours = np.floor(jobs["submit_h"].to_numpy()).astype(int) % 168
    keep = np.array([weights[w][h] for w, h in zip(jobs["workload"].to_list(), hours, strict=True)])
    return jobs.filter(pl.Series(rng.random(jobs.height) < keep))


def scenario_jobs(plan: Plan, data: ModelData, days: float, seed: int) -> pl.DataFrame:
    """A job table for ``days`` drawn from the scenario's classes as the plan places them."""
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    hours = days * 24.0
    classes: list[JobClass] = []
    weights: dict[str, np.ndarray] = {}
    service_rows: list[dict[str, object]] = []
    for row in plan.placements.iter_rows(named=True):
        w = workloads[row["workload"]]
        p, g = row["pool"], row["gpu_type"]
        share = round(row["share"] * 100)
        pool = _name(p, g)
        shape = np.asarray(
            cat.profile(w.profile) if isinstance(w.profile, str) else w.profile, dtype=float
        )
        shape = shape / shape.max()
        peak_factor = 1.0 / float(shape.mean())
        if isinstance(w, TrainingWorkload | DeadlineWorkload):
            cls = batch_class(w, job_stretch(w, data.platform(p), cat.gpus[g], cat), share)
            weights[w.name] = shape
            classes.append(
                JobClass(
                    w.name,
                    pool,
                    cls.arrival_rate * peak_factor,
                    cls.gpus,
                    cls.mean_duration,
                    "deterministic" if cls.duration_scv == 0 else "gamma",
                    max(cls.duration_scv, 1e-6),
                )
            )
        elif isinstance(w, ExperimentationWorkload):
            weights[w.name] = shape
            rate = w.concurrent_users * share / 100.0 / w.mean_session_hours
            classes.append(
                JobClass(
                    w.name,
                    pool,
                    rate,
                    w.gpus_per_user,
                    w.mean_session_hours,
                    priority=INTERACTIVE_PRIORITY,
                )
            )
        elif isinstance(w, RealtimeWorkload):
            replicas = realtime_replicas(data, (w.name, p, g), share)
            for t in range(int(hours)):
                service_rows.extend(
                    {
                        "workload": w.name,
                        "pool": pool,
                        "submit_h": float(t),
                        "gpus": 1,
                        "duration_h": 1.0,
                        "priority": SERVICE_PRIORITY,
                        "service": True,
                    }
                    for _ in range(replicas[t % 168])
                )
    jobs = _thin(generate_jobs(classes, hours, seed), weights, seed).drop("job_id")
    if service_rows:
        jobs = pl.concat([jobs, pl.DataFrame(service_rows, schema=jobs.schema)])
    jobs = jobs.sort(["submit_h", "workload"], maintain_order=True)
    return jobs.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("job_id"))


def _assign_pools(jobs: pl.DataFrame, plan: Plan, seed: int) -> pl.DataFrame:
    """Send each given job to a pool where its workload is placed, in proportion to the shares."""
    if "pool" in jobs.columns:
        return jobs
    rng = np.random.default_rng(seed)
    options: dict[str, tuple[list[str], np.ndarray]] = {}
    for row in plan.placements.iter_rows(named=True):
        names, probs = options.get(row["workload"], ([], np.array([])))
        options[row["workload"]] = (
            [*names, _name(row["pool"], row["gpu_type"])],
            np.append(probs, row["share"]),
        )
    unknown = sorted(set(jobs["workload"].unique().to_list()) - set(options))
    if unknown:
        raise ValueError(f"jobs name workloads the plan does not place: {', '.join(unknown[:5])}")
    pools = [
        options[w][0][int(rng.choice(len(options[w][0]), p=options[w][1] / options[w][1].sum()))]
        for w in jobs["workload"].to_list()
    ]
    return jobs.with_columns(pl.Series("pool", pools))


def simulate(
    plan: Plan, jobs: pl.DataFrame | None = None, days: float = 28, seed: int = 0
) -> Simulation:
    """Replay ``days`` of jobs on the plan's pools; compare simulated with predicted waits.

    ``jobs`` (optional) needs workload, submit_h, gpus and duration_h (job_id, priority,
    service and pool optional); without it, jobs are drawn from the plan's scenario. The first
    day is a warm-up and is left out of the statistics. The same seed gives the same result.
    """
    if plan.inputs is None or not plan.feasible:
        raise ValueError(
            "only a feasible plan returned by cd.solve (which carries its scenario) can be simulated"
        )
    data = prepare(plan.inputs)
    pools = simulated_pools(plan, data)
    if jobs is None:
        table = scenario_jobs(plan, data, days, seed)
    else:
        table = _assign_pools(jobs, plan, seed)
        if "job_id" not in table.columns:
            table = table.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("job_id"))
    result = run(pools, table, SimOptions(warmup_h=WARMUP_H, horizon_h=days * 24.0))
    waits = wait_stats(
        result.jobs.filter((pl.col("submit_h") >= WARMUP_H) & ~pl.col("service")),
        ["workload", "pool"],
    )
    predicted = plan.service_levels.filter(pl.col("metric") == "queue_wait_hours")
    comparison = (
        predicted.select(
            "workload",
            pl.concat_str("pool", "gpu_type", separator="/").alias("pool"),
            pl.col("predicted").alias("predicted_h"),
        )
        .join(
            waits.select("workload", "pool", pl.col("mean_wait_h").alias("simulated_h")),
            on=["workload", "pool"],
            how="left",
        )
        .with_columns(pl.lit("queue_wait_hours").alias("metric"))
        .select("workload", "pool", "metric", "predicted_h", "simulated_h")
        .sort("workload", "pool")
    )
    return Simulation(
        waits, result.pools, comparison, result.jobs, result.events, result.wall_s, days
    )
