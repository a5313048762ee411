"""Replay jobs on a plan's pools and set the simulated waits beside the predicted ones.

This is the adapter between a :class:`~cluster_decide.planning.plan.Plan` and the scheduling simulator
of :mod:`cluster_decide.simulation.engine`, which knows nothing of scenarios. Each (pool, GPU type) of
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
from pathlib import Path

import numpy as np
import polars as pl

from cluster_decide.inputs.scenario import (
    DeadlineWorkload,
    ExperimentationWorkload,
    RealtimeWorkload,
    TrainingWorkload,
)
from cluster_decide.model.data import (
    DEMAND_UNITS_PER_GPU,
    STEPS,
    ModelData,
    batch_class,
    job_stretch,
    prepare,
)
from cluster_decide.planning.evaluation import evaluate_decisions
from cluster_decide.planning.plan import Plan
from cluster_decide.planning.service import realtime_replicas
from cluster_decide.simulation.engine import (
    JobClass,
    Pool,
    SimOptions,
    generate_jobs,
    run,
    wait_stats,
)

__all__ = [
    "JOB_COLUMNS",
    "POLICY_OF",
    "SESSION_HOURS",
    "Simulation",
    "read_jobs",
    "simulate",
    "simulated_pools",
]

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
MAX_JOBS = 5_000_000
"""The most jobs one replay draws (about 1 GB of memory with the simulator's state)."""
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


def scenario_jobs(
    plan: Plan, data: ModelData, days: float, seed: int, pools: set[str] | None = None
) -> pl.DataFrame:
    """A job table for ``days`` drawn from the scenario's classes as the plan places them.

    ``pools`` (names ``pool/gpu_type``) keeps only the work placed there: a long replay of the
    pools whose waits are being checked, without drawing every service request elsewhere.
    """
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    hours = days * 24.0
    classes: list[JobClass] = []
    weights: dict[str, np.ndarray] = {}
    service_rows: list[dict[str, object]] = []
    expected = 0.0
    for row in plan.placements.iter_rows(named=True):
        w = workloads[row["workload"]]
        p, g = row["pool"], row["gpu_type"]
        share = round((row["share"] - row["spot_share"]) * 100)
        if share <= 0:
            continue  # run on spot nodes that follow its own need, outside the pools replayed here
        pool = _name(p, g)
        if pools is not None and pool not in pools:
            continue
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
                    # Regular submissions stay regular (thinning by a flat profile keeps all).
                    arrival_scv=cls.arrival_scv,
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
            expected += float(np.sum(replicas)) * hours / 168.0
            _check_size(expected, days)
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
    _check_size(expected + sum(k.rate_per_h for k in classes) * hours, days)
    jobs = _thin(generate_jobs(classes, hours, seed), weights, seed).drop("job_id")
    if service_rows:
        jobs = pl.concat([jobs, pl.DataFrame(service_rows, schema=jobs.schema)])
    jobs = jobs.sort(["submit_h", "workload"], maintain_order=True)
    return jobs.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("job_id"))


def _check_size(expected_jobs: float, days: float) -> None:
    """Refuse, before drawing them, a replay of more than :data:`MAX_JOBS` jobs."""
    if expected_jobs > MAX_JOBS:
        fits = max(1.0, days * MAX_JOBS / expected_jobs)
        raise ValueError(
            f"simulating {days:g} days would draw about {expected_jobs:,.0f} jobs, more than the "
            f"limit of {MAX_JOBS:,} (about 1 GB of memory); simulate at most {fits:.1f} days "
            f"(--days {fits:.1f})"
        )


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
    # A preempted job loses what the scenario says: half a checkpoint interval and a restart.
    options = SimOptions(
        checkpoint_restart_h=data.preempt_loss_steps / STEPS,
        warmup_h=WARMUP_H,
        horizon_h=days * 24.0,
    )
    result = run(pools, table, options)
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


JOB_COLUMNS = {"workload": "text", "submit_h": "number", "gpus": "integer", "duration_h": "number"}
"""The columns a job table needs, and what each holds."""


def read_jobs(path: Path) -> pl.DataFrame:
    """A job table from a CSV or Parquet file (``simulate --jobs``), checked before the replay.

    Raises ValueError naming the file, the line and the column of the first bad value.
    """
    if not path.is_file():
        raise ValueError(f"{path}: no such jobs file (expected a CSV or Parquet job table)")
    try:
        if path.suffix == ".parquet":
            jobs = pl.read_parquet(path)
        else:
            jobs = pl.read_csv(path, infer_schema_length=10_000)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        kind = "Parquet" if path.suffix == ".parquet" else "CSV"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable {kind} job table ({first[:160]})") from None
    missing = [c for c in JOB_COLUMNS if c not in jobs.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(a job table needs {', '.join(JOB_COLUMNS)})"
        )
    checks = {
        "submit_h": (pl.col("submit_h").cast(pl.Float64, strict=False), 0.0, None),
        "duration_h": (pl.col("duration_h").cast(pl.Float64, strict=False), 0.0, None),
        "gpus": (pl.col("gpus").cast(pl.Float64, strict=False), 1.0, 100_000.0),
    }
    for column, (expr, lo, hi) in checks.items():
        values = jobs.select(expr.alias("v"))["v"]
        bad = values.is_null() | values.is_nan() | (values < lo)
        if hi is not None:
            bad = bad | (values > hi)
        if column == "gpus":
            bad = bad | (values != values.floor())
        if bad.any():
            row = int(bad.arg_true()[0])
            want = f"an integer {lo:,.0f}–{hi:,.0f}" if hi else f"a number of at least {lo:g}"
            raise ValueError(
                f"{path}: line {row + 2}: {column}: expected {want}, got "
                f"{jobs[column][row]!r} ({int(bad.sum()):,} of {jobs.height:,} rows are bad)"
            )
    return jobs.with_columns(
        pl.col("submit_h").cast(pl.Float64),
        pl.col("duration_h").cast(pl.Float64),
        pl.col("gpus").cast(pl.Int64),
        pl.col("workload").cast(pl.String),
    )
