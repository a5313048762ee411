"""Export speed: the default scenario's deck, report and images, beside the solve they follow.

Run: ``.venv/bin/python benchmarks/export_speed.py [--repeat N]``. Goal (issue 17): the default
scenario's deck from a solved plan takes under 3 s (issue 7 asked for 10 s). The table prints
the median of N runs of each step in one process, wall clock and CPU time (the process's, all
threads: vl-convert renders on its own), with the solve alone and ``cd.compare`` (the
alternatives the deck shows) as baselines, so a slow export can be told from a slow machine;
the load average is printed beside them. The first chart render starts vl-convert's engine;
it is timed once, on its own, before the repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cluster_decide as cd
from cluster_decide import charts
from cluster_decide.export import deck, gather, images, report

GOAL_S = 3.0


def _median(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds of ``repeat`` calls of ``fn``."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per step (default 3)")
    args = parser.parse_args()
    scn = cd.load_scenario()
    out = Path(tempfile.mkdtemp(prefix="export-speed-"))

    plan = cd.solve(scn)
    start = time.perf_counter()
    charts.to_png(charts.staffing(plan))
    engine_s = time.perf_counter() - start

    alternatives = cd.compare(scn)
    bundle = gather(plan, scn, alternatives)
    rows = [
        ("solve (baseline)", _median(lambda: cd.solve(scn), args.repeat)),
        ("cd.compare, 5 solves (baseline)", _median(lambda: cd.compare(scn), 1)),
        ("deck from a solved plan", _median(lambda: deck(bundle, out / "d.pptx"), args.repeat)),
        (
            "report: HTML + Markdown",
            _median(lambda: report(bundle, out / "r.html", out / "r.md"), args.repeat),
        ),
        ("images: PNG (2x) + SVG", _median(lambda: images(bundle, out / "img"), args.repeat)),
        (
            "deck from the scenario (solve + compare + deck)",
            _median(lambda: deck(scn, out / "e.pptx"), 1),
        ),
    ]
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"Default scenario: {scn.name}; median of {args.repeat} runs (1 for compare rows)")
    print(f"Load average (1, 5, 15 min) on {os.cpu_count()} cores: {load}")
    print(f"vl-convert engine start, once per process: {engine_s:.2f} s\n")
    print(f"| {'step':<48} | wall s | CPU s |")
    print(f"|{'-' * 50}|--------|-------|")
    for name, (wall, cpu) in rows:
        print(f"| {name:<48} | {wall:6.2f} | {cpu:5.2f} |")
    deck_s, deck_cpu = rows[2][1]
    verdict = "meets" if deck_s < GOAL_S else "MISSES"
    print(
        f"\nThe deck export {verdict} the {GOAL_S:.0f} s goal ({deck_s:.2f} s wall, "
        f"{deck_cpu:.2f} s CPU)."
    )


if __name__ == "__main__":
    main()
