"""Predicted pooled waits (``plan.service_levels``) against the simulator, on solved plans.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/pooled_waits.py [--seeds N] [--days D]``.
Each plan is solved (so it meets every service level by the queueing formulas), then replayed
by ``cd.simulate`` with ``N`` seeds; the simulated mean wait of each class in each pool is the
median over the seeds. Error = (predicted − simulated median) / simulated median, counted
where the simulated wait exceeds 5 minutes (below that, the absolute difference is shown).
Two sets: the shipped presets, and a grid of pools mixing gang sizes (a large gang beside
small jobs, under Slurm backfill and under gang admission).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import polars as pl

import cluster_decide as cd
from cluster_decide.scenario import PRESETS

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


def compare(scn: cd.Scenario, seeds: int, days: float) -> list[dict[str, Any]]:
    """Predicted against the median simulated mean wait of every queue-wait row of the plan."""
    plan = cd.solve(scn, time_limit_s=30)
    if not plan.feasible:
        return []
    runs = [cd.simulate(plan, days=days, seed=s).comparison for s in range(seeds)]
    rows = []
    for r in runs[0].iter_rows(named=True):
        sims = [
            float(
                c.filter((pl.col("workload") == r["workload"]) & (pl.col("pool") == r["pool"]))[
                    "simulated_h"
                ][0]
            )
            for c in runs
        ]
        med = statistics.median(sims)
        rows.append(
            {
                "scenario": scn.name,
                "workload": r["workload"],
                "pool": r["pool"],
                "predicted_h": round(r["predicted_h"], 3),
                "simulated_median_h": round(med, 3),
                "error": (r["predicted_h"] - med) / med if med > MIN_WAIT_H else None,
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
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--days", type=float, default=28.0)
    args = ap.parse_args()
    start = time.perf_counter()
    presets = [r for p in PRESETS for r in compare(cd.load_scenario(p), args.seeds, args.days)]
    report("Presets", presets)
    mixed = [r for s in grid() for r in compare(s, args.seeds, args.days)]
    report("Mixed-gang pools", mixed)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
