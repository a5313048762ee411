"""Analytic batch waits (``queueing.batch_waits``) against the simulator's slurm policy.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/queueing_grid.py [--jobs N]``.
Each case is a pool of 8-GPU nodes with Poisson gang jobs (lognormal durations with SCV 2
unless marked ``exp``) at a target GPU utilization. The simulated mean wait comes with a
95% confidence interval from independent replications. The goal: within 15% where the
simulated wait is above 5 minutes.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from cluster_decide.demand import queueing as q
from cluster_decide.simulation import engine as se

GOAL = 0.15
MIN_WAIT_H = 5.0 / 60.0


@dataclass(frozen=True)
class Case:
    """A pool and its classes: (gang size, mean hours, share of the GPU load, SCV)."""

    gpus: int
    utilization: float
    classes: tuple[tuple[int, float, float, float], ...]

    @property
    def label(self) -> str:
        """Short name: the gang sizes, ``exp`` marking exponential durations."""
        return "+".join(f"g{g}{'exp' if scv == 1.0 else ''}" for g, _, _, scv in self.classes)


def single_cases() -> list[Case]:
    cases = []
    for gpus in (64, 256, 1024):
        for g in (1, 4, 16, 64):
            for rho in (0.5, 0.7, 0.9):
                cases.append(Case(gpus, rho, ((g, 4.0, 1.0, 2.0),)))
    for gpus, g, rho in ((128, 8, 0.8), (512, 32, 0.8), (128, 2, 0.9)):
        cases.append(Case(gpus, rho, ((g, 4.0, 1.0, 1.0),)))
    return cases


def mixed_cases() -> list[Case]:
    mixes = (
        ((1, 2.0, 0.5, 2.0), (8, 4.0, 0.5, 2.0)),
        ((4, 2.0, 0.3, 2.0), (16, 6.0, 0.4, 2.0), (64, 12.0, 0.3, 2.0)),
        ((8, 4.0, 0.7, 2.0), (64, 8.0, 0.3, 2.0)),
    )
    return [Case(gpus, rho, mix) for mix in mixes for gpus in (256, 1024) for rho in (0.6, 0.85)]


def batch_classes(case: Case) -> list[q.BatchClass]:
    load = case.utilization * case.gpus
    return [
        q.BatchClass(load * share / (g * hours), g, hours, scv)
        for g, hours, share, scv in case.classes
    ]


def job_classes(case: Case) -> list[se.JobClass]:
    return [
        se.JobClass(
            f"g{g}",
            "p",
            b.arrival_rate,
            g,
            hours,
            "exponential" if scv == 1.0 else "lognormal",
            scv,
        )
        for b, (g, hours, _, scv) in zip(batch_classes(case), case.classes, strict=True)
    ]


def simulate(case: Case, n_jobs: int, seed: int, policy: str, reps: int) -> pl.DataFrame:
    """Per-class simulated mean and p95 wait, with a 95% interval from ``reps`` replications.

    Independent replications (Law, *Simulation Modeling and Analysis*, 5th ed.)
    each of ``n_jobs / reps`` jobs, dropping the first 5% of each as warm-up; batch means
    within one run understated the interval at 90% utilization.
    """
    classes = job_classes(case)
    hours = n_jobs / reps / sum(k.rate_per_h for k in classes)
    means: dict[str, list[float]] = {k.workload: [] for k in classes}
    waits: dict[str, list[np.ndarray]] = {k.workload: [] for k in classes}
    for r in range(reps):
        jobs = se.generate_jobs(classes, hours, seed * 100 + r)
        res = se.run([se.Pool("p", policy, 8, case.gpus // 8)], jobs)
        done = res.jobs.filter(pl.col("submit_h") >= 0.05 * hours)
        for k in classes:
            w = done.filter(pl.col("workload") == k.workload)["wait_h"].to_numpy()
            means[k.workload].append(float(w.mean()))
            waits[k.workload].append(w)
    rows = []
    for k in classes:
        m = np.array(means[k.workload])
        half = stats.t.ppf(0.975, reps - 1) * m.std(ddof=1) / math.sqrt(reps)
        p95 = float(np.quantile(np.concatenate(waits[k.workload]), 0.95))
        rows.append(
            {
                "workload": k.workload,
                "sim_h": float(m.mean()),
                "ci_h": float(half),
                "sim_p95_h": p95,
            }
        )
    return pl.DataFrame(rows)


def evaluate(
    cases: list[Case], n_jobs: int, seed: int = 0, policy: str = "slurm", reps: int = 4
) -> pl.DataFrame:
    """One row per class of every case: analytic vs simulated mean (and p95) wait.

    ``policy="slurm"`` is compared with ``batch_waits(order="backfill")``, ``"gang"`` (strict
    FIFO) with ``order="fifo"``.
    """
    order = "backfill" if policy == "slurm" else "fifo"
    rows = []
    for i, case in enumerate(cases):
        est = q.batch_waits(case.gpus, batch_classes(case), 8, 0.95, order)
        sim = simulate(case, n_jobs, seed + i, policy, reps)
        for e, s in zip(est, sim.iter_rows(named=True), strict=True):
            rows.append(
                {
                    "case": i,
                    "mix": case.label,
                    "gpus": case.gpus,
                    "rho": case.utilization,
                    "class": s["workload"],
                    "slots": int(e.slots),
                    "analytic_h": e.mean,
                    "sim_h": s["sim_h"],
                    "ci_h": s["ci_h"],
                    "analytic_p95_h": e.quantile,
                    "sim_p95_h": s["sim_p95_h"],
                }
            )
    df = pl.DataFrame(rows)
    return df.with_columns(
        ((pl.col("analytic_h") - pl.col("sim_h")) / pl.col("sim_h")).alias("rel_err"),
        (pl.col("sim_h") > MIN_WAIT_H).alias("counted"),
    )


def report(df: pl.DataFrame, title: str) -> None:
    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(200)
    pl.Config.set_float_precision(3)
    print(f"\n## {title}\n")
    print(df.drop("case"))
    counted = df.filter(pl.col("counted"))
    ok = counted.filter(pl.col("rel_err").abs() <= GOAL)
    print(
        f"\n{title}: {counted.height} of {df.height} class-cases wait more than 5 min; "
        f"{ok.height} of them within {GOAL:.0%}; "
        f"median |error| {counted['rel_err'].abs().median():.1%}, "
        f"max |error| {counted['rel_err'].abs().max():.1%}"
    )
    bad = counted.filter(pl.col("rel_err").abs() > GOAL)
    if bad.height:
        print("outside the goal:")
        print(
            bad.select(
                "mix", "gpus", "rho", "class", "slots", "analytic_h", "sim_h", "ci_h", "rel_err"
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=800_000, help="jobs per case")
    parser.add_argument("--reps", type=int, default=4, help="independent replications")
    args = parser.parse_args()
    t0 = time.perf_counter()
    report(evaluate(single_cases(), args.jobs, reps=args.reps), "single-class grid, slurm")
    mixed = mixed_cases()
    report(
        evaluate(mixed, args.jobs, seed=1000, reps=args.reps),
        "mixed-class grid, slurm vs order=backfill",
    )
    report(
        evaluate(mixed, args.jobs, seed=1000, policy="gang", reps=args.reps),
        "mixed-class grid, gang (strict FIFO) vs order=fifo",
    )
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
