"""The HTML and Markdown reports, chart images and plan data; the HTML opened in chromium."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import polars as pl
import pytest
from browser_harness import CHROMIUM, LAUNCH_ARGS, only_from

import cluster_decide as cd
from cluster_decide.export import Bundle, frames, images, report
from cluster_decide.export.assumptions import key_assumptions
from cluster_decide.export.figures import chart_names
from cluster_decide.planning.explain import money


@pytest.fixture(scope="module")
def written(bundle: Bundle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    report(bundle, out / "report.html", out / "report.md")
    return out


def test_html_is_self_contained_with_an_svg_per_chart(written: Path, bundle: Bundle) -> None:
    page = (written / "report.html").read_text(encoding="utf-8")
    figures = re.findall(r'<figure class="chart" data-chart="([a-z_]+)"><svg', page)
    assert sorted(figures) == sorted(chart_names(bundle))  # each chart once, in story order
    assert not re.search(r'(?:src|href)="(?!#)', page), "the report must not load anything"
    assert "<script" not in page and "@import" not in page
    assert money(bundle.plan.total_monthly_usd) in page
    assert "Pilot: prove four real workloads" in page
    assert "<dt>How sure</dt>" in page


def test_markdown_has_the_tables_and_links_its_images(written: Path, bundle: Bundle) -> None:
    text = (written / "report.md").read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == len(chart_names(bundle))
    for link in links:
        assert (written / link).read_bytes().startswith(b"\x89PNG")
    assert "| Workload | Kind | Cluster |" in text
    figures = key_assumptions(bundle.plan, bundle.scenario)
    guessed = figures.filter(pl.col("confidence").is_in(["assumption", "low"])).height
    assert guessed and f"## Appendix: {guessed} of the {figures.height} key figures" in text
    assert all(f"| {figure} |" in text for figure in figures["figure"])
    assert "- **We ask:** Approve" in text


def test_images_are_png_at_twice_the_svg_size(bundle: Bundle, tmp_path: Path) -> None:
    paths = images(bundle, tmp_path)
    assert [p.name for p in paths][:2] == ["architecture.png", "architecture.svg"]
    assert len(paths) == 2 * len(chart_names(bundle))
    for png in tmp_path.glob("*.png"):
        width = struct.unpack(">I", png.read_bytes()[16:20])[0]
        svg = (tmp_path / f"{png.stem}.svg").read_text(encoding="utf-8")
        svg_width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
        assert width == pytest.approx(2 * svg_width, abs=2)


def test_frames_are_the_plans_tables(bundle: Bundle, tmp_path: Path) -> None:
    frames(bundle, tmp_path)
    assert json.loads((tmp_path / "plan.json").read_text()) == json.loads(bundle.plan.to_json())
    placements = pl.read_csv(tmp_path / "placements.csv")
    assert placements["gpus"].sum() == pytest.approx(bundle.plan.placements["gpus"].sum())
    pilot = pl.read_csv(tmp_path / "pilot_plan.csv")
    assert pilot.height == 8
    document = json.loads((tmp_path / "export.json").read_text())
    assert {"plan", "pilot_plan", "assumptions", "alternatives"} <= set(document)


def test_reports_are_reproducible(bundle: Bundle, written: Path, tmp_path: Path) -> None:
    report(bundle, tmp_path / "report.html")
    assert (tmp_path / "report.html").read_bytes() == (written / "report.html").read_bytes()


def test_report_needs_a_target(default_plan: cd.Plan) -> None:
    with pytest.raises(ValueError, match="html_path, markdown_path"):
        report(default_plan)


@pytest.mark.browser
def test_html_report_shows_every_chart_offline(written: Path, bundle: Bundle) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM} (run .ci/system-deps.sh)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            outside = only_from(page, "file://")
            page.goto((written / "report.html").as_uri())
            for name in chart_names(bundle):
                svg = page.locator(f'figure[data-chart="{name}"] svg')
                assert svg.count() == 1, name
                box = svg.bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 50, name
                assert svg.locator("text").count() > 3, name
            assert page.locator("table").count() >= 8
        finally:
            browser.close()
    assert outside == []
