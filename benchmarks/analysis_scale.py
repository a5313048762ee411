"""Analysis speed: 500 uncertainty samples and a full tornado on the default scenario, 1 and 2 workers.

Run: ``.venv/bin/python benchmarks/analysis_scale.py [--samples 500] [--workers 1 2]``. Goal
(issue 6): 500 samples in under 60 s on a 2-core machine. Each sample is one free solve plus one
forced solve per tracked archetype (the base optimum's and the runner-up's; skipped where the
archetype already wins), every solve on one CP-SAT worker with a deterministic limit, so the
rows are identical whatever the worker count; the script checks that too.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import cluster_decide as cd
from cluster_decide.analysis import default_inputs, quick_solve, tornado, uncertainty


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (pool workers are joined)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall seconds and CPU seconds of ``run()``."""
    wall, cpu = time.perf_counter(), _cpu_s()
    out = run()
    return out, time.perf_counter() - wall, _cpu_s() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--track",
        default=None,
        help="comma-separated archetypes to cost in every sample ('' for none; default: best two)",
    )
    parser.add_argument("--no-tornado", action="store_true", help="time the uncertainty sweep only")
    args = parser.parse_args()
    scn = cd.load_scenario()
    quick_solve(scn)  # warm imports and caches before timing
    load = os.getloadavg()[0]
    print(f"Default scenario, {os.cpu_count()} CPUs, load average {load:.1f} at start\n")
    print("CPU s: all processes; an idle machine needs about CPU s / workers of wall time.\n")
    print("| case | workers | wall s | CPU s | CPU s per sample or solve | result |")
    print("|---|---|---|---|---|---|")
    tracked = None if args.track is None else [a for a in args.track.split(",") if a]
    label = "best two" if tracked is None else (", ".join(tracked) or "none")
    reference = None
    for workers in args.workers:
        result, wall, cpu = _timed(
            partial(
                uncertainty,
                scn,
                args.samples,
                args.seed,
                archetypes=tracked,
                max_workers=workers,
                progress=False,
            )
        )
        top = result.summary.row(0, named=True)
        same = (
            ""
            if reference is None
            else f", identical to 1 worker: {result.samples.equals(reference)}"
        )
        reference = result.samples if reference is None else reference
        print(
            f"| uncertainty, {args.samples} samples, tracked: {label} | {workers} | {wall:.1f} | "
            f"{cpu:.1f} | "
            f"{cpu / args.samples:.3f} | {top['archetype']} optimal in {top['p_optimal']:.0%}{same} |"
        )
    if args.no_tornado:
        return
    names = default_inputs(scn)
    for workers in args.workers:
        frame, wall, cpu = _timed(partial(tornado, scn, 0.2, names, max_workers=workers))
        solves = 2 * len(names) + 1
        changes = int(frame["archetype_changes"].sum())
        print(
            f"| tornado ±20%, {len(names)} inputs ({solves} solves) | {workers} | {wall:.1f} | "
            f"{cpu:.1f} | {cpu / solves:.3f} | {changes} inputs change the archetype |"
        )


if __name__ == "__main__":
    main()
