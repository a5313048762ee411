"""The executive app in a real browser: Voila on 127.0.0.1, Debian's chromium, no other network."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster_decide.widgets.serve import CHROMIUM, LAUNCH_ARGS, only_from, voila_app

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).resolve().parent / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"Debian chromium not found at {CHROMIUM} (run .ci/system-deps.sh to install it)",
    ),
]


@pytest.fixture(scope="module")
def voila_url() -> Iterator[str]:
    """Voila serving the executive app on a fresh port; probed by TCP, stopped at the end."""
    # binder/verify.sh points this at a clean environment built from binder/requirements.txt.
    with voila_app(python=os.environ.get("CD_VOILA_PYTHON", sys.executable)) as url:
        yield url


def test_executive_app_updates_in_the_browser(voila_url: str) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(exist_ok=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            blocked = only_from(page, voila_url.rstrip("/"))
            page.goto(voila_url, timeout=120_000)
            page.wait_for_selector(".cd-chart[data-chart=architecture] svg", timeout=120_000)
            headline = page.locator(".cd-headline")
            total = headline.get_attribute("data-total")
            archetype = headline.get_attribute("data-archetype")
            arch_before = page.locator(".cd-chart[data-chart=architecture]").inner_html()
            assert archetype and total
            page.screenshot(path=str(SHOTS / "executive-before.png"))

            slider = page.locator(".widget-slider", has_text="Training demand")
            slider.locator(".noUi-handle").focus()
            page.keyboard.press("Home")  # the slider's minimum: a quarter of today's training
            page.wait_for_function(
                "t => document.querySelector('.cd-headline').dataset.total !== t",
                arg=total,
                timeout=60_000,
            )
            page.wait_for_selector(".cd-busy[data-busy=false]", timeout=60_000)
            new_total = headline.get_attribute("data-total")
            assert new_total and float(new_total) < float(total)
            # A quarter of the training costs less; it may keep its Slurm cluster (a 256-GPU gang
            # still needs 256 GPUs, and sharing a gang-admission pool with 2-hour fine-tuning
            # would break that target), but when the archetype changes the chart follows it.
            arch_after = page.locator(".cd-chart[data-chart=architecture]").inner_html()
            if headline.get_attribute("data-archetype") != archetype:
                assert arch_after != arch_before

            frames = page.locator(".cd-chart")
            assert frames.count() >= 2
            for i in range(frames.count()):
                assert frames.nth(i).locator("svg, canvas").count() >= 1
            content = page.content()
            assert "Error loading script" not in content
            assert "Traceback" not in content
            page.screenshot(path=str(SHOTS / "executive-after.png"))
        finally:
            browser.close()
    assert all(not u.startswith(("http://127.0.0.1", "ws://127.0.0.1")) for u in blocked)
