"""Solve speed: the default scenario (median of 20) and a generated large one against its LP floor.

Run: ``.venv/bin/python benchmarks/solve_scale.py``. Goals (issue 2): the default scenario
solves in under 0.3 s; the large scenario (200 workload classes, 8 GPU types, 6 candidate
pools, 168 hourly buckets) reaches a proven optimum or a gap under 1% in 10 s. The LP
relaxation of the very same CP-SAT model (every integer made continuous, solved by GLOP) is
printed beside it as a floor no plan can beat.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import cluster_decide as cd
from cluster_decide.constants import WORKLOAD_KINDS
from cluster_decide.model.build import build_model, tie_break_scale
from cluster_decide.model.data import prepare
from cluster_decide.solving.solve import solve_data
from cluster_decide.solving.warmstart import lp_relaxation

KINDS = WORKLOAD_KINDS
TYPES = ["A100", "H100", "H200", "B200", "L40S", "L4", "MI300X", "A10G"]
# Two GPU types beyond the catalog, for scale only (figures illustrative, not catalog data).
EXTRA_GPUS = {
    "MI300X": {
        "memory_gb": 192.0,
        "tdp_w": 750.0,
        "gpus_per_node": 8,
        "node_power_kw": 11.0,
        "usd_per_gpu_hour_on_demand": 6.0,
        "usd_per_gpu_hour_reserved": 3.6,
        "node_capex_usd": 300000.0,
        "training_speed": 1.3,
        "inference_speed": 1.58,
    },
    "A10G": {
        "memory_gb": 24.0,
        "tdp_w": 150.0,
        "gpus_per_node": 8,
        "node_power_kw": 2.0,
        "usd_per_gpu_hour_on_demand": 1.0,
        "usd_per_gpu_hour_reserved": 0.6,
        "node_capex_usd": 50000.0,
        "training_speed": 0.13,
        "inference_speed": 0.18,
    },
}
POOLS = [
    {"name": "slurm-train", "platform": "slurm", "gpu_types": ["H100", "H200", "B200", "MI300X"]},
    {"name": "slurm-research", "platform": "slurm", "gpu_types": ["A100", "H100", "L40S"]},
    {
        "name": "k8s-serving",
        "platform": "kubernetes",
        "gpu_types": ["L4", "L40S", "A10G", "H100", "H200"],
    },
    {"name": "k8s-batch", "platform": "kubernetes_batch"},
    {"name": "shared", "platform": "shared"},
    {"name": "k8s-edge", "platform": "kubernetes", "gpu_types": ["L4", "A10G"]},
]


def large_scenario(n: int = 200, seed: int = 7) -> cd.Scenario:
    """A generated estate of ``n`` workload classes over 8 GPU types and 6 candidate pools."""
    rng = random.Random(seed)
    workloads: list[dict[str, Any]] = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        types = rng.sample(TYPES, k=rng.choice([1, 2, 3]))
        w: dict[str, Any] = {
            "name": f"{kind.split('_')[0]}-{i:03d}",
            "kind": kind,
            "interface": rng.choice(["slurm", "containers"]),
            "gpu_types": types,
            "profile": rng.choice(["flat", "business_hours", "diurnal", "nightly_batch"]),
        }
        if kind == "realtime_inference":
            w |= {
                "peak_requests_per_second": rng.uniform(5, 200),
                "gpu_seconds_per_request": rng.uniform(0.05, 0.4),
                "p99_latency_ms": 2500.0,
                "requires": ["autoscaling", "self_healing"],
            }
        elif kind == "experimentation":
            w |= {
                "concurrent_users": rng.randint(2, 20),
                "gpus_per_user": rng.choice([1, 2]),
                "max_queue_wait_hours": 0.25,
            }
        else:
            gang = (
                rng.choice([1, 2, 4, 8, 16, 32, 64])
                if kind == "distributed_training"
                else rng.choice([1, 4, 8])
            )
            slo = (
                "max_completion_hours"
                if kind in ("batch_inference", "pipeline")
                else "max_queue_wait_hours"
            )
            hours = rng.uniform(1, 24)
            w |= {
                "gpus_per_job": gang,
                "gpu_hours_per_month": rng.uniform(500, 20000),
                "mean_job_hours": hours,
                # A deadline must outlast a job even on the slowest allowed GPU (up to ~20x slower).
                slo: 24.0 if slo == "max_queue_wait_hours" else 24.0 * hours,
                "requires": ["gang_scheduling"] if gang > 8 else [],
                "prefers": rng.sample(["fair_share", "accounting", "gitops", "preemption"], k=2),
            }
        workloads.append(w)
    data = {
        "schema_version": 1,
        "scenario": {"name": f"Generated estate ({n} classes)"},
        "team": {"hpc": {"fte": 12.0}, "kubernetes": {"fte": 20.0}},
        "hiring": {"allowed": True, "max_fte": 6},
        "gpus": EXTRA_GPUS,
        "pools": POOLS,
        "workloads": workloads,
    }
    return cd.parse_scenario(data, source="generated")


def lp_floor(scn: cd.Scenario) -> float:
    """The LP relaxation of the CP-SAT model (monthly USD): every integer variable made continuous."""
    m = build_model(prepare(scn))
    m.cp.minimize(m.cost_cents)
    relaxed = lp_relaxation(m.cp)
    assert relaxed is not None, "the LP relaxation has no solution"
    return relaxed[0] / 100.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--classes", type=int, default=200)
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args()

    scn = cd.load_scenario()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        plan = cd.solve(scn)
        times.append(time.perf_counter() - start)
    print(
        f"default scenario ({len(scn.workloads)} classes): median {statistics.median(times):.3f} s over {args.runs} runs "
        f"(min {min(times):.3f}, max {max(times):.3f}); goal < 0.3 s; status {plan.status}, {cd.explain.money(plan.total_monthly_usd)}/month"
    )
    data = prepare(scn)
    cold = []
    for _ in range(args.runs):
        start = time.perf_counter()
        solve_data(data, warm_start=False)
        cold.append(time.perf_counter() - start)
    print(f"  baseline without the LP warm start: median {statistics.median(cold):.3f} s")
    floor = lp_floor(scn)
    print(
        f"  LP floor {cd.explain.money(floor)}/month; integer optimum is {100 * (plan.total_monthly_usd / floor - 1):.2f}% above it"
    )

    big = large_scenario(args.classes)
    data = prepare(big)
    m = build_model(data)
    rows = sum(m.families.values())
    start = time.perf_counter()
    plan = cd.solve(big, time_limit_s=args.time_limit)
    wall = time.perf_counter() - start
    floor = lp_floor(big)
    print(
        f"large scenario ({len(big.workloads)} classes, {len(data.gpu_types)} GPU types, {len(data.pools)} pools, "
        f"168 buckets; {len(m.place)} placement and {len(m.burst)} burst variables, {rows} constraint rows, tie-break scale {tie_break_scale(m)}):"
    )
    print(
        f"  {plan.status} in {wall:.2f} s (limit {args.time_limit:.0f} s), gap {100 * plan.gap:.3f}%, {cd.explain.money(plan.total_monthly_usd)}/month"
    )
    print(
        f"  LP floor {cd.explain.money(floor)}/month; plan is {100 * (plan.total_monthly_usd / floor - 1):.2f}% above the floor; goal: optimal or gap < 1%"
    )


if __name__ == "__main__":
    main()
