"""Predicted pooled waits (``plan.service_levels``) against the simulator, on solved plans.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/pooled_waits.py [--seeds N] [--days D]
[--long-days L] [--presets-only]``. Each plan is solved (so it meets every service level by the
queueing formulas), then the pools with a queue-wait row are replayed by the simulator (as
``cd.simulate`` does) with ``N`` seeds: for ``L`` days where only batch work runs, ``D`` days
where services share the GPUs; the simulated mean wait of each class in each pool is the
median over the seeds. Error = (predicted − simulated median) / simulated median, counted
where the simulated wait exceeds 5 minutes (below that, the absolute difference is shown).
Three sets: the shipped presets; a grid of pools mixing gang sizes (a large gang beside
small jobs, under Slurm backfill and under gang admission), solved; and pools of those mixes
at fixed sizes near where plans put them, predicted by ``batch_waits`` directly and replayed
for ``--fixed-days``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Literal

import polars as pl

import cluster_decide as cd
from cluster_decide.demand.queueing import BatchClass, batch_waits
from cluster_decide.inputs.scenario import PRESETS
from cluster_decide.model.data import prepare
from cluster_decide.simulation.engine import (
    JobClass,
    Pool,
    SimOptions,
    generate_jobs,
    run,
    wait_stats,
)
from cluster_decide.simulation.replay import WARMUP_H, scenario_jobs, simulated_pools

MIN_WAIT_H = 5.0 / 60.0


def mixed_gang(
    platform: str, big: int, busy_big: float, small: int, busy_small: float
) -> cd.Scenario:
    """One pool of H100s holding a ``big``-GPU gang class beside a ``small``-GPU class."""

    def cls(name: str, gang: int, busy: float, hours: float, wait: float) -> dict[str, Any]:
        return {
            "name": name,
            "kind": "distributed_training" if gang > 8 else "fine_tuning",
            "interface": "slurm" if platform == "slurm" else "containers",
            "gpu_types": ["H100"],
            "gpus_per_job": gang,
            "gpu_hours_per_month": round(busy * 730.0, 1),
            "mean_job_hours": hours,
            "max_queue_wait_hours": wait,
            "divisible": False,
        }

    return cd.parse_scenario(
        {
            "schema_version": 1,
            "scenario": {"name": f"{platform} g{big}+g{small}"},
            "team": {"hpc": {"fte": 4.0}, "kubernetes": {"fte": 6.0}},
            "procurement": {"on_demand_burst": False},
            "policy": {"platforms": [platform]},
            "workloads": [
                cls("big", big, busy_big, 24.0, 24.0),
                cls("small", small, busy_small, 4.0, 2.0),
            ],
        },
        source="benchmarks/pooled_waits.py",
    )


def grid() -> list[cd.Scenario]:
    out = []
    for platform in ("slurm", "kubernetes_batch"):
        for big, busy_big in ((64, 100.0), (256, 300.0), (512, 250.0)):
            for small, busy_small in ((8, 60.0), (1, 20.0)):
                out.append(mixed_gang(platform, big, busy_big, small, busy_small))
    return out


FIXED_POOLS = [
    ("slurm", 23, ((128, 82.0, 24.0, 0.1), (16, 20.5, 8.0, 1.0))),
    ("slurm", 24, ((64, 100.0, 24.0, 1.0), (1, 20.0, 4.0, 1.0))),
    ("slurm", 27, ((64, 100.0, 24.0, 1.0), (1, 20.0, 4.0, 1.0))),
    ("slurm", 33, ((64, 100.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("slurm", 40, ((64, 100.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("slurm", 72, ((512, 250.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("slurm", 96, ((256, 200.0, 12.0, 2.0), (8, 80.0, 6.0, 2.0), (1, 24.0, 2.0, 1.0))),
    ("gang", 24, ((64, 100.0, 24.0, 1.0), (1, 20.0, 4.0, 1.0))),
    ("gang", 34, ((64, 100.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("gang", 40, ((64, 100.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("gang", 72, ((512, 250.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("gang", 80, ((512, 250.0, 24.0, 1.0), (8, 60.0, 4.0, 1.0))),
    ("gang", 96, ((256, 200.0, 12.0, 2.0), (8, 80.0, 6.0, 2.0), (1, 24.0, 2.0, 1.0))),
]
"""Pools of a fixed size (policy, 8-GPU nodes, classes of (gang, busy GPUs, mean hours, duration
SCV)): a large gang beside smaller jobs, sized near where a plan would put them."""


def fixed(seeds: int, days: float) -> list[dict[str, Any]]:
    """:func:`cluster_decide.demand.queueing.batch_waits` against the simulator on :data:`FIXED_POOLS`.

    Poisson arrivals, gamma durations; the first 20 days are left out of the statistics.
    """
    rows = []
    for policy, nodes, spec in FIXED_POOLS:
        classes = [BatchClass(busy / (g * d), g, d, scv) for g, busy, d, scv in spec]
        order: Literal["backfill", "fifo"] = "backfill" if policy == "slurm" else "fifo"
        predicted = batch_waits(nodes * 8, classes, 8, order=order)
        names = [f"g{g}" for g, *_ in spec]
        sims: dict[str, list[float]] = {n: [] for n in names}
        for seed in range(seeds):
            jobs = generate_jobs(
                [
                    JobClass(
                        n, "p", k.arrival_rate, k.gpus, k.mean_duration, "gamma", k.duration_scv
                    )
                    for n, k in zip(names, classes, strict=True)
                ],
                days * 24.0,
                seed,
            )
            result = run(
                [Pool("p", policy, 8, nodes)],
                jobs,
                SimOptions(warmup_h=480.0, horizon_h=days * 24.0),
            )
            waits = wait_stats(result.jobs.filter(pl.col("submit_h") >= 480.0), ["workload"])
            for n in names:
                sims[n].append(float(waits.filter(pl.col("workload") == n)["mean_wait_h"][0]))
        for n, est in zip(names, predicted, strict=True):
            med = statistics.median(sims[n])
            rows.append(
                {
                    "scenario": f"{policy} {nodes} nodes " + "+".join(names),
                    "workload": n,
                    "pool": policy,
                    "days": days,
                    "predicted_h": round(est.mean, 3),
                    "simulated_median_h": round(med, 3),
                    "error": (est.mean - med) / med if med > MIN_WAIT_H else None,
                }
            )
    return rows


def _replay(plan: cd.Plan, pools: set[str], days: float, seed: int) -> pl.DataFrame:
    """Mean wait of every batch class in ``pools`` over ``days`` of the plan's jobs there."""
    data = prepare(plan.inputs)  # type: ignore[arg-type]
    sim_pools = [p for p in simulated_pools(plan, data) if p.name in pools]
    jobs = scenario_jobs(plan, data, days, seed, pools)
    result = run(sim_pools, jobs, SimOptions(warmup_h=WARMUP_H, horizon_h=days * 24.0))
    done = result.jobs.filter((pl.col("submit_h") >= WARMUP_H) & ~pl.col("service"))
    return wait_stats(done, ["workload", "pool"])


def compare(scn: cd.Scenario, seeds: int, days: float, long_days: float) -> list[dict[str, Any]]:
    """Predicted against the median simulated mean wait of every queue-wait row of the plan.

    A pool of long gang jobs needs thousands of jobs to settle (a 24-hour job at 80% load
    relaxes over weeks), so pools without services are replayed for ``long_days``; pools that
    share their GPUs with services, whose every replica-hour is a simulated job, for ``days``.
    """
    plan = cd.solve(scn, time_limit_s=30)
    if not plan.feasible:
        return []
    levels = plan.service_levels.filter(pl.col("metric") == "queue_wait_hours")
    services = {
        f"{r['pool']}/{r['gpu_type']}"
        for r in plan.placements.iter_rows(named=True)
        if r["kind"] == "realtime_inference"
    }
    pools = {f"{r['pool']}/{r['gpu_type']}" for r in levels.iter_rows(named=True)}
    rows = []
    for group, length in ((pools - services, long_days), (pools & services, days)):
        if not group:
            continue
        runs = [_replay(plan, group, length, s) for s in range(seeds)]
        for r in levels.iter_rows(named=True):
            pool = f"{r['pool']}/{r['gpu_type']}"
            if pool not in group:
                continue
            sims = [
                float(
                    w.filter((pl.col("workload") == r["workload"]) & (pl.col("pool") == pool))[
                        "mean_wait_h"
                    ][0]
                )
                for w in runs
            ]
            med = statistics.median(sims)
            rows.append(
                {
                    "scenario": scn.name,
                    "workload": r["workload"],
                    "pool": pool,
                    "days": length,
                    "predicted_h": round(r["predicted"], 3),
                    "simulated_median_h": round(med, 3),
                    "error": (r["predicted"] - med) / med if med > MIN_WAIT_H else None,
                }
            )
    return rows


def report(label: str, rows: list[dict[str, Any]]) -> None:
    frame = pl.DataFrame(rows)
    print(f"\n{label}")
    with pl.Config(tbl_rows=100, tbl_width_chars=140, fmt_str_lengths=40):
        print(frame)
    errs = [abs(e) for e in frame["error"].to_list() if e is not None]
    if errs:
        within = sum(e <= 0.25 for e in errs)
        print(
            f"{len(errs)} rows above 5 min of simulated wait: median |error| "
            f"{statistics.median(errs):.0%}, worst {max(errs):.0%}, {within} within 25%"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--days", type=float, default=365.0, help="pools with services")
    ap.add_argument("--long-days", type=float, default=7300.0, help="pools of batch work only")
    ap.add_argument("--fixed-days", type=float, default=3000.0, help="pools of a fixed size")
    ap.add_argument("--presets-only", action="store_true")
    args = ap.parse_args()
    start = time.perf_counter()
    presets = [
        r
        for p in PRESETS
        for r in compare(cd.load_scenario(p), args.seeds, args.days, args.long_days)
    ]
    report("Presets", presets)
    if args.presets_only:
        return
    mixed = [r for s in grid() for r in compare(s, args.seeds, args.days, args.long_days)]
    report("Mixed-gang pools", mixed)
    report("Mixed-gang pools of a fixed size", fixed(args.seeds, args.fixed_days))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
