"""Events per second of the simulation engine, for 1 million jobs and a small warm-up.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/sim_speed.py [--jobs N] [--policy P]
[--rounds R] [--baseline REV]``. A mixed-gang workload fills a 1024-GPU pool (128 nodes of 8)
to about 70% utilization; the time measured is the engine's (``SimResult.wall_s``, and the
process CPU time, which is the fairer figure on a busy machine), excluding job generation.

Each round runs in a fresh interpreter. ``--baseline REV`` checks out an earlier commit in a
temporary git worktree and runs its engine in the same rounds, alternating with this one, so
a change is judged against the old engine under the same load; both must replay the same
jobs to the same waits (their mean waits are compared). Goal (issue 21): at least 500,000
events a second in every round. Figures are printed, not asserted: a shared machine's load
moves them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from baseline_tree import baseline_tree, child_figures, load_average

from cluster_decide.simulation import engine as se

MIX = (  # (gang size, mean hours, share of GPU load)
    (1, 1.0, 0.10),
    (2, 2.0, 0.10),
    (4, 2.0, 0.15),
    (8, 4.0, 0.25),
    (16, 6.0, 0.20),
    (64, 8.0, 0.20),
)

GOAL_EVENTS_PER_S = 500_000


def mix_classes(pool: str, gpus: int, utilization: float) -> list[se.JobClass]:
    """Job classes whose GPU load is ``utilization * gpus``, split as in ``MIX``."""
    return [
        se.JobClass(
            f"g{g}", pool, utilization * gpus * share / (g * hours), g, hours, "lognormal", 2.0
        )
        for g, hours, share in MIX
    ]


def measure(n_jobs: int, policy: str, nodes: int = 128, utilization: float = 0.7) -> dict[str, Any]:
    """Generate about ``n_jobs`` jobs and replay them; the engine's figures."""
    classes = mix_classes("p", nodes * 8, utilization)
    rate = sum(k.rate_per_h for k in classes)
    hours = n_jobs / rate
    t0 = time.perf_counter()
    jobs = se.generate_jobs(classes, hours, seed=0)
    gen = time.perf_counter() - t0
    cpu0 = time.process_time()
    res = se.run([se.Pool("p", policy, 8, nodes)], jobs, se.SimOptions(warmup_h=hours * 0.05))
    cpu = time.process_time() - cpu0
    return {
        "jobs": jobs.height,
        "days": hours / 24,
        "events": res.events,
        "wall_s": res.wall_s,
        "cpu_s": cpu,
        "utilization": float(res.pools["utilization"][0]),
        "generation_s": gen,
        "mean_waits": dict(zip(res.waits["workload"], res.waits["mean_wait_h"], strict=True)),
    }


def _round(n_jobs: int, policy: str, tree: Path) -> dict[str, Any]:
    """One measurement in a fresh interpreter that imports cluster_decide from ``tree``."""
    return child_figures(__file__, ["--child", "--jobs", str(n_jobs), "--policy", policy], tree)


def _line(label: str, f: dict[str, Any]) -> str:
    rate, per_cpu = f["events"] / f["wall_s"], f["events"] / f["cpu_s"]
    return (
        f"{label:<22} {f['jobs']:>9,d} jobs {f['days']:>6.1f} days {f['events']:>10,d} events"
        f"  wall {f['wall_s']:6.2f} s {rate:>9,.0f} events/s"
        f"  cpu {f['cpu_s']:6.2f} s {per_cpu:>9,.0f} events/cpu-s  util {f['utilization']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--policy", default="slurm", choices=se.POLICIES)
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each engine")
    parser.add_argument("--baseline", metavar="REV", help="also time the engine of this commit")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.jobs, args.policy)))
        return
    here = Path(__file__).resolve().parents[1]
    small = measure(10_000, args.policy)
    print(_line(f"{args.policy}, warm-up", small))
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        trees = {"this code": here}
        if args.baseline:
            trees[args.baseline] = stack.enter_context(
                baseline_tree(args.baseline, Path(tmp) / "baseline")
            )
        print(f"load average before: {load_average()}", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label in trees}
        for i in range(args.rounds):
            for label, tree in trees.items():
                f = _round(args.jobs, args.policy, tree)
                runs[label].append(f)
                print(_line(f"{label}, round {i + 1}", f), flush=True)
        print(f"load average after: {load_average()}")
    print(f"\n{args.policy}, {args.rounds} rounds of about {args.jobs:,} jobs")
    for label, fs in runs.items():
        rates = [f["events"] / f["wall_s"] for f in fs]
        cpu_rates = [f["events"] / f["cpu_s"] for f in fs]
        met = "met" if min(rates) >= GOAL_EVENTS_PER_S else "NOT met"
        print(
            f"  {label:<20} events/s median {statistics.median(rates):>9,.0f}, lowest "
            f"{min(rates):>9,.0f} (per CPU second: median {statistics.median(cpu_rates):,.0f})"
            f"  goal >= {GOAL_EVENTS_PER_S:,} in every round: {met}"
        )
    if args.baseline:
        same = runs["this code"][0]["mean_waits"] == runs[args.baseline][0]["mean_waits"]
        print(f"  the same mean waits per class as {args.baseline}: {same}")


if __name__ == "__main__":
    main()
