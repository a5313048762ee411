"""Analysis speed: 500 uncertainty samples and a full tornado on the default scenario, 1 and 2 workers.

Run: ``.venv/bin/python benchmarks/analysis_scale.py [--samples 500] [--workers 1 2]
[--scenario NAME]`` (a preset or a scenario file instead of the default). Goal (issue 6): 500
samples in under 60 s on a 2-core machine. Each sample is one free solve plus one forced solve
per tracked archetype (the base optimum's and the runner-up's; skipped where the
archetype already wins), every solve on one CP-SAT worker with a deterministic limit, so the
rows are identical whatever the worker count; the script checks that too.

``--baseline REV --rounds N`` instead times the uncertainty sweep on one worker, in a fresh
interpreter per round, this code's and REV's (a temporary worktree) alternating, and checks that
both give the same samples and costs byte for byte: how a change to the solve path is judged
against the code before under the same load.

``--recommend 200`` instead times ``cd.recommend(scn, samples=200)`` (runner-ups, nearest flips
and the sampled robust choice) on a 2-thread pool and on a Dask ``LocalCluster`` of 2 worker
processes on loopback, and checks that both give the same numbers (needs the ``distributed``
extra for the second row).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from baseline_tree import baseline_tree, child_figures, load_average

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
        "--scenario",
        default=None,
        help="a preset's name or a scenario file (default: the default scenario)",
    )
    parser.add_argument(
        "--track",
        default=None,
        help="comma-separated archetypes to cost in every sample ('' for none; default: best two)",
    )
    parser.add_argument("--no-tornado", action="store_true", help="time the uncertainty sweep only")
    parser.add_argument(
        "--recommend",
        type=int,
        default=0,
        metavar="N",
        help="time cd.recommend(samples=N) on a thread pool and a Dask LocalCluster instead",
    )
    parser.add_argument("--baseline", metavar="REV", help="time REV's sweep beside this code's")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per tree with --baseline")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    scn = cd.load_scenario(args.scenario) if args.scenario else cd.load_scenario()
    tracked = None if args.track is None else [a for a in args.track.split(",") if a]
    if args.child:
        print(json.dumps(_one_worker_sweep(scn, args.samples, args.seed, tracked)))
        return
    if args.baseline:
        _against_baseline(args)
        return
    quick_solve(scn)  # warm imports and caches before timing
    load = os.getloadavg()[0]
    name = args.scenario or "Default scenario"
    print(f"{name}, {os.cpu_count()} CPUs, load average {load:.1f} at start\n")
    if args.recommend:
        _recommend_rows(scn, args.recommend, args.seed)
        return
    print("CPU s: all processes; an idle machine needs about CPU s / workers of wall time.\n")
    print("| case | workers | wall s | CPU s | CPU s per sample or solve | result |")
    print("|---|---|---|---|---|---|")
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


def _one_worker_sweep(
    scn: cd.Scenario, samples: int, seed: int, tracked: list[str] | None
) -> dict[str, Any]:
    """CPU seconds a sample of the sweep on one worker, and a fingerprint of its frames."""
    quick_solve(scn)  # warm imports and caches before timing
    result, _wall, cpu = _timed(
        partial(uncertainty, scn, samples, seed, archetypes=tracked, max_workers=1, progress=False)
    )
    frames = result.samples.write_csv() + result.costs.write_csv()
    return {
        "cpu_per_sample": cpu / samples,
        "frames": hashlib.sha256(frames.encode()).hexdigest(),
    }


def _against_baseline(args: argparse.Namespace) -> None:
    """The one-worker sweep of this code beside REV's, a fresh interpreter per round, alternating."""
    child = ["--child", "--samples", str(args.samples), "--seed", str(args.seed)]
    child += ["--scenario", args.scenario] if args.scenario else []
    child += ["--track", args.track] if args.track is not None else []
    here = Path(__file__).resolve().parents[1]
    runs: dict[str, list[dict[str, Any]]] = {"this code": [], args.baseline: []}
    with (
        tempfile.TemporaryDirectory() as tmp,
        baseline_tree(args.baseline, Path(tmp) / "baseline") as base,
    ):
        print(f"{args.scenario or 'default scenario'}, {args.samples} samples on one worker")
        print(f"load average before: {load_average()}", flush=True)
        for i in range(args.rounds):
            for label, tree in (("this code", here), (args.baseline, base)):
                f = child_figures(__file__, child, tree)
                runs[label].append(f)
                print(
                    f"  {label:<20} round {i + 1}: {f['cpu_per_sample']:.3f} CPU s a sample",
                    flush=True,
                )
        print(f"load average after: {load_average()}")
    for label, fs in runs.items():
        rates = [f["cpu_per_sample"] for f in fs]
        print(
            f"{label:<20} median {statistics.median(rates):.3f} CPU s a sample: 500 samples on "
            f"2 workers take about {250 * statistics.median(rates):.0f} s (goal 30 s, issue 21)"
        )
    same = runs["this code"][0]["frames"] == runs[args.baseline][0]["frames"]
    print(f"the same samples and costs, byte for byte, as {args.baseline}: {same}")


def _recommend_rows(scn: cd.Scenario, samples: int, seed: int) -> None:
    """Time ``cd.recommend(scn, samples=N)`` on a thread pool and on a Dask LocalCluster."""
    print("| case | executor | wall s | CPU s (this process) | verdict | same numbers |")
    print("|---|---|---|---|---|---|")
    with ThreadPoolExecutor(2) as pool:
        local, wall, cpu = _timed(
            partial(cd.recommend, scn, samples=samples, seed=seed, executor=pool)
        )
    case = f"recommend, {samples} samples"
    print(f"| {case} | thread pool, 2 threads | {wall:.1f} | {cpu:.1f} | {local.verdict} | – |")
    try:
        import distributed
    except ImportError:
        print("\n(dask.distributed is not installed: pip install 'cluster-decide[distributed]')")
        return
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    with cluster, distributed.Client(cluster) as client:
        client.run(importlib.import_module, "cluster_decide.analysis")  # workers' imports
        remote, wall, cpu = _timed(
            partial(cd.recommend, scn, samples=samples, seed=seed, executor=client.get_executor())
        )
    same = (
        remote.robust.equals(local.robust)
        and remote.flips.equals(local.flips)
        and remote.runner_ups.equals(local.runner_ups)
        and remote.sentence == local.sentence
    )
    print(
        f"| {case} | Dask LocalCluster, 2 worker processes | {wall:.1f} | {cpu:.1f} "
        f"(workers not counted) | {remote.verdict} | {same} |"
    )
    print(f"\n{local.sentence}\n")
    print(local.robust)


if __name__ == "__main__":
    main()
