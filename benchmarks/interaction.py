"""Interaction speed: page load to first answer, and a control change to the updated answer.

Run: ``.venv/bin/python benchmarks/interaction.py [--rounds 10] [--no-browser] [--no-busy]``.
Goals (issue 18): first answer within 5 s of page load; a new value under 200 ms in the kernel
and 800 ms in the browser, grouped sliders included, and the same answers on a busy CPU.

Each kernel figure is the median of ``rounds`` one-step (5%) changes of a slider:

- old: the solve path before issue 18 (2 CP-SAT workers, 3 s wall-clock limit, hint from the
  last plan) plus the same redraw, on the same values, measured in the same run;
- new value: the app's path (deterministic solve on one worker, redraw of what is on screen);
- next step: after each answer the moved slider's neighbours are solved in the background (for
  the grouped "training demand" slider this failed before with a KeyError), so the next step
  is a cache hit once the room has paused that long (printed below it).

The verdict under the headline (issue 16: the runner-up and flip solves, in the background) is
timed on its own, over ``--verdict-rounds`` rounds of three steps (each check takes seconds):

- answer, verdict on: a new value while the previous answer's verdict is still being checked,
  beside the same value set right after in an app with no verdict at all (each pair back to
  back, and the median of their differences: what the verdict adds); the answer must still
  come within 200 ms (the change stops the stale check's solve under way);
- verdict follows: from a control change until its verdict is on screen (no goal but "after
  the answer": the app shows "checking alternatives…" meanwhile).

All of it runs for the grouped training slider and the Kubernetes-engineers slider, then again
with every core kept busy by spinning processes. The browser figures time the executive app in
Voila and Debian's chromium: page load (``goto``) to the first headline, with the project's
pre-heated kernel and, for comparison, without it; then key press to new headline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cluster_decide as cd
from cluster_decide.widgets import PlanCache, executive_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the browser harness
from browser_harness import CHROMIUM, LAUNCH_ARGS, only_from, voila_server

SLIDERS = {"demand:training": 0.05, "fte:kubernetes": 0.5}


def _ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:8.0f} ms" if samples else "       –   "


@contextmanager
def busy_cpu(on: bool) -> Iterator[None]:
    """Twice as many spinning processes as cores while the block runs (when ``on``)."""
    procs = []
    if on:
        spin = [sys.executable, "-c", "while True: pass"]
        procs = [subprocess.Popen(spin) for _ in range((os.cpu_count() or 2) * 2)]
        time.sleep(0.5)
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def kernel(name: str, rounds: int) -> dict[str, list[float]]:
    """Times (s) of the old path, a new value, the next step solved ahead, and the prefetch."""
    step = SLIDERS[name]
    app = executive_app(debounce_s=0.0, cache=PlanCache(), prefetch=False, recommend=None)
    start_value = float(app.controls.value(name))
    values = [round(start_value + step * (i + 1), 2) for i in range(rounds)]
    old, last = [], None
    for v in values:
        scn = app.controls.scenario_with(name, v)
        t = time.perf_counter()
        last = cd.solve(scn, time_limit_s=3.0, hint=last)
        for part in app.answer.visible:  # the same redraw the app does
            app.answer._html(part, last)
        old.append(time.perf_counter() - t)
    new = []
    for v in values:
        t = time.perf_counter()
        app.controls.set_value(name, v)
        new.append(time.perf_counter() - t)
    app = executive_app(debounce_s=0.0, cache=PlanCache(), prefetch=True, recommend=None)
    stepped, ahead = [], []
    for v in values:
        t = time.perf_counter()
        app.controls.set_value(name, v)
        stepped.append(time.perf_counter() - t)
        t = time.perf_counter()
        app.wait()  # the room reads the answer while the next steps are solved
        ahead.append(time.perf_counter() - t)
    return {"old": old, "new": new, "stepped": stepped, "ahead": ahead}


def verdict(name: str, rounds: int) -> dict[str, list[float]]:
    """Times (s) of the verdict over ``rounds`` rounds of three steps.

    Each round: a step and its verdict, waited for (``follows``); a second step, and a third half
    a second later, while the second's verdict is being checked (``on``: the answer beside a
    running check, which the change stops). The third step's own check is then stopped, not
    waited for (the next round's first step would stop it anyway), and the same value is set
    at once in an app with no verdict at all (``off``): each pair runs back to back, so a
    change in the machine's speed between rounds moves both alike.
    """
    step = SLIDERS[name]
    plain = executive_app(debounce_s=0.0, cache=PlanCache(), prefetch=False, recommend=None)
    app = executive_app(debounce_s=0.0, cache=PlanCache(), prefetch=False, recommend=None)
    app.recommend = cd.recommend  # from the first change on (the page load's check is not timed)
    start_value = float(app.controls.value(name))
    values = [round(start_value + step * (i + 1), 2) for i in range(3 * rounds)]
    off, on, follows = [], [], []
    for i, v in enumerate(values):
        t = time.perf_counter()
        app.controls.set_value(name, v)
        if i % 3 == 0:
            app.wait(timeout_s=1800)
            follows.append(time.perf_counter() - t)
        elif i % 3 == 1:
            time.sleep(0.5)  # a reader's pause: this answer's verdict is being checked
        else:
            on.append(time.perf_counter() - t)
            app.stop_background()
            app.wait(timeout_s=1800)
            t = time.perf_counter()
            plain.controls.set_value(name, v)
            off.append(time.perf_counter() - t)
    return {"off": off, "on": on, "follows": follows}


def browser(rounds: int, pause_s: float, preheat: bool) -> dict[str, list[float]]:
    """Page load to first answer, then key press to new headline for the training slider."""
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"load": [], "next": [], "seen": []}
    args = [] if preheat else ["--VoilaConfiguration.preheat_kernel=False"]
    with voila_server(extra_args=args) as server, sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        for i in range(3):
            time.sleep(20 if preheat else 2)  # a visitor every 20 s: the pool has refilled
            page = b.new_page(viewport={"width": 1280, "height": 720})
            only_from(page, server.url[:-1])
            t = time.perf_counter()
            page.goto(server.url, timeout=120_000)
            page.wait_for_selector(".cd-headline", timeout=120_000)
            times["load"].append(time.perf_counter() - t)
            if i < 2 or not preheat:
                page.close(run_before_unload=True)
        if preheat:
            handle = page.locator(".widget-slider", has_text="Training demand").locator(
                ".noUi-handle"
            )
            for key, label in (("ArrowRight", "next"), ("ArrowLeft", "seen")):
                for _ in range(rounds):
                    time.sleep(pause_s)  # a reader's pause, in which the next steps are solved
                    total = page.locator(".cd-headline").get_attribute("data-total")
                    handle.focus()
                    t = time.perf_counter()
                    page.keyboard.press(key)
                    page.wait_for_function(
                        "t => document.querySelector('.cd-headline').dataset.total !== t",
                        arg=total,
                        timeout=60_000,
                        polling=10,
                    )
                    times[label].append(time.perf_counter() - t)
        b.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-busy", action="store_true", help="skip the busy-CPU rerun")
    parser.add_argument("--pause", type=float, default=1.5, help="seconds between key presses")
    parser.add_argument(
        "--verdict-rounds", type=int, default=1, help="rounds of the verdict (three steps each)"
    )
    parser.add_argument(
        "--sliders", nargs="*", default=list(SLIDERS), help="sliders to time (default: both)"
    )
    parser.add_argument(
        "--verdict-sliders",
        nargs="*",
        default=list(SLIDERS),
        help="sliders whose verdict is timed (each full check takes minutes on a loaded machine)",
    )
    args = parser.parse_args()
    print(
        f"Interaction speed, default scenario, median of {args.rounds} one-step changes "
        f"(load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start)"
    )
    print(f"{'path':46} {'old (same run)':>15} {'new':>11}   goal")
    print("(verdict rows: the old column is the same step with no verdict at all)")
    for busy in (False, True) if not args.no_busy else (False,):
        with busy_cpu(busy):
            for name in args.sliders:
                k = kernel(name, args.rounds)
                where = f"{name}{', busy CPU' if busy else ''}"
                print(
                    f"{where + ': new value':46} {_ms(k['old']):>15} {_ms(k['new']):>11}   < 200 ms"
                )
                print(
                    f"{where + ': next step, solved ahead':46} {'':>15} {_ms(k['stepped']):>11}   < 200 ms"
                )
                print(f"{'  (the look-ahead itself takes)':46} {'':>15} {_ms(k['ahead']):>11}")
                if args.verdict_rounds and name in args.verdict_sliders:
                    v = verdict(name, args.verdict_rounds)
                    print(
                        f"{where + ': answer, verdict on':46} {_ms(v['off']):>15} "
                        f"{_ms(v['on']):>11}   < 200 ms"
                    )
                    added = [a - b for a, b in zip(v["on"], v["off"], strict=True)]
                    print(
                        f"{'  (the verdict adds, pair by pair, median)':46} {'':>15} "
                        f"{_ms(added):>11}"
                    )
                    print(
                        f"{'  (verdict follows the change in)':46} {'':>15} "
                        f"{_ms(v['follows']):>11}   after the answer"
                    )
    if args.no_browser or not os.path.exists(CHROMIUM):
        print("browser: skipped (--no-browser, or no /usr/bin/chromium; see .ci/system-deps.sh)")
        return
    cold = browser(args.rounds, args.pause, preheat=False)
    warm = browser(args.rounds, args.pause, preheat=True)
    print(
        f"{'browser: page load to first answer':46} {_ms(cold['load']):>15} {_ms(warm['load']):>11}   < 5 s"
    )
    print(f"{'browser: training slider, next step':46} {'':>15} {_ms(warm['next']):>11}   < 800 ms")
    print(
        f"{'browser: training slider, value seen before':46} {'':>15} {_ms(warm['seen']):>11}   < 800 ms"
    )
    print("(old page load: no pre-heated kernel, each visit starts and runs a kernel)")


if __name__ == "__main__":
    main()
