"""Events per second of the simulation engine, for 1 million jobs and a small baseline.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/sim_speed.py [--jobs N] [--policy P]``.
A mixed-gang workload fills a 1024-GPU pool (128 nodes of 8) to about 70% utilization; the
time measured is the engine's (``SimResult.wall_s``, and the process CPU time, which is the
fairer figure on a busy machine), excluding job generation.
"""

from __future__ import annotations

import argparse
import time

from cluster_decide.simulation import engine as se

MIX = (  # (gang size, mean hours, share of GPU load)
    (1, 1.0, 0.10),
    (2, 2.0, 0.10),
    (4, 2.0, 0.15),
    (8, 4.0, 0.25),
    (16, 6.0, 0.20),
    (64, 8.0, 0.20),
)


def mix_classes(pool: str, gpus: int, utilization: float) -> list[se.JobClass]:
    """Job classes whose GPU load is ``utilization * gpus``, split as in ``MIX``."""
    return [
        se.JobClass(
            f"g{g}", pool, utilization * gpus * share / (g * hours), g, hours, "lognormal", 2.0
        )
        for g, hours, share in MIX
    ]


def measure(n_jobs: int, policy: str, nodes: int = 128, utilization: float = 0.7) -> None:
    classes = mix_classes("p", nodes * 8, utilization)
    rate = sum(k.rate_per_h for k in classes)
    hours = n_jobs / rate
    t0 = time.perf_counter()
    jobs = se.generate_jobs(classes, hours, seed=0)
    gen = time.perf_counter() - t0
    cpu0 = time.process_time()
    res = se.run([se.Pool("p", policy, 8, nodes)], jobs, se.SimOptions(warmup_h=hours * 0.05))
    cpu = time.process_time() - cpu0
    util = res.pools["utilization"][0]
    print(
        f"{policy:<10} {jobs.height:>9,d} jobs {hours / 24:>6.1f} days {res.events:>10,d} events"
        f"  wall {res.wall_s:6.2f} s {res.events_per_s:>9,.0f} events/s"
        f"  cpu {cpu:6.2f} s {res.events / cpu:>9,.0f} events/cpu-s"
        f"  util {util:.3f}  (generation {gen:.2f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--policy", default="slurm", choices=se.POLICIES)
    args = parser.parse_args()
    measure(10_000, args.policy)
    measure(args.jobs, args.policy)


if __name__ == "__main__":
    main()
