"""Interaction speed: from a control change to the updated answer, in the kernel and the browser.

Run: ``.venv/bin/python benchmarks/interaction.py [--rounds 20] [--no-browser]``. Goals (issue
5): under 200 ms in the kernel and under 800 ms in the browser, on the default scenario.

Each figure is the median of ``rounds`` changes of the training-demand control, one step (5%)
at a time:

- kernel baseline: what a change would cost with no cache — ``cd.solve`` plus rendering the
  answer's visible charts to SVG, from scratch;
- kernel, new value: the dashboard's own path (solve through the cache, redraw what is on
  screen) for a value not seen before;
- kernel, value seen before: the same steps back down, answered from the plan and drawing caches;
- kernel, next step solved ahead: the apps' own setting; after each answer the moved control's
  neighbouring values are solved and drawn in the background, so the next step is a cache hit
  when the room pauses for as long as that takes (printed below it);
- browser: the executive app in Voila, driven in Debian's chromium with the keyboard, timed
  from the key press to the new headline on the page (the app's 0.1 s debounce included), one
  step up per ``--pause`` seconds, then the same steps back down.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import cluster_decide as cd
from cluster_decide import charts
from cluster_decide.widgets import Dashboard, PlanCache
from cluster_decide.widgets.serve import CHROMIUM, LAUNCH_ARGS, only_from, voila_app


def _ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:7.0f} ms"


def kernel(rounds: int) -> dict[str, list[float]]:
    """Times of the baseline, a new value and a value seen before, in seconds."""
    scn = cd.load_scenario()
    values = [round(1 + 0.05 * (i + 1), 2) for i in range(rounds)]
    baseline = []
    for v in values:
        start = time.perf_counter()
        plan = cd.solve(scn.scale_demand("distributed_training", v), time_limit_s=10)
        charts.to_svg(charts.architecture(plan))
        charts.to_svg(charts.cost_breakdown(plan))
        baseline.append(time.perf_counter() - start)
    controls = ("demand:distributed_training",)
    app = Dashboard(controls, executive=True, debounce_s=0.0, cache=PlanCache())
    cold, warm = [], []
    for v in values:
        start = time.perf_counter()
        app.controls.set_value("demand:distributed_training", v)
        cold.append(time.perf_counter() - start)
    for v in reversed(values):
        start = time.perf_counter()
        app.controls.set_value("demand:distributed_training", v)
        warm.append(time.perf_counter() - start)
    app = Dashboard(controls, executive=True, debounce_s=0.0, cache=PlanCache(), prefetch=True)
    stepped, ahead = [], []
    for v in values:
        start = time.perf_counter()
        app.controls.set_value("demand:distributed_training", v)
        stepped.append(time.perf_counter() - start)
        start = time.perf_counter()
        app.wait()  # the room reads the answer while the next steps are solved
        ahead.append(time.perf_counter() - start)
    return {"baseline": baseline, "cold": cold, "warm": warm, "stepped": stepped, "ahead": ahead}


def browser(rounds: int, pause_s: float) -> dict[str, list[float]]:
    """Key press to new headline in the executive app: new values up, seen values back down."""
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"cold": [], "warm": []}
    with voila_app() as url, sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = b.new_page(viewport={"width": 1280, "height": 800})
        only_from(page, url[:-1])
        page.goto(url, timeout=120_000)
        page.wait_for_selector(".cd-chart[data-chart=architecture] svg", timeout=120_000)
        handle = page.locator(".widget-slider", has_text="Training demand").locator(".noUi-handle")
        for key, label in (("ArrowRight", "cold"), ("ArrowLeft", "warm")):
            for _ in range(rounds):
                # A reader's pause between changes, in which the app solves the next steps.
                time.sleep(pause_s)
                total = page.locator(".cd-headline").get_attribute("data-total")
                handle.focus()
                start = time.perf_counter()
                page.keyboard.press(key)
                page.wait_for_function(
                    "t => document.querySelector('.cd-headline').dataset.total !== t",
                    arg=total,
                    timeout=60_000,
                    polling=10,
                )
                times[label].append(time.perf_counter() - start)
        b.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument(
        "--pause", type=float, default=1.5, help="seconds between key presses in the browser"
    )
    args = parser.parse_args()
    k = kernel(args.rounds)
    print(
        f"Interaction speed, default scenario, median of {args.rounds} (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(f"{'path':52} {'median':>10}   goal")
    print(f"{'kernel baseline: solve + render, no cache':52} {_ms(k['baseline'])}")
    print(f"{'kernel, new value (solve + redraw)':52} {_ms(k['cold'])}   < 200 ms")
    print(f"{'kernel, value seen before (cached)':52} {_ms(k['warm'])}   < 200 ms")
    print(f"{'kernel, next step, solved ahead (prefetch)':52} {_ms(k['stepped'])}   < 200 ms")
    print(f"{'  (time the prefetch of the next steps takes)':52} {_ms(k['ahead'])}")
    if args.no_browser or not os.path.exists(CHROMIUM):
        print("browser: skipped (--no-browser, or no /usr/bin/chromium; see .ci/system-deps.sh)")
        return
    br = browser(args.rounds, args.pause)
    label = f"browser, next step, {args.pause:g} s after the last"
    print(f"{label:52} {_ms(br['cold'])}   < 800 ms")
    print(f"{'browser, value seen before':52} {_ms(br['warm'])}   < 800 ms")


if __name__ == "__main__":
    main()
