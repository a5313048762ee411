"""The deck opened with python-pptx: titles in order, tables hold the plan's numbers, pictures,
speaker notes, 16:9, reproducible bytes, a company template, and atomic writes."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from deck_expectations import hire_words, mid_sentence, runner_up, story_order
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.util import Inches

import cluster_decide as cd
from cluster_decide.base.vocabulary import PLATFORM_LABELS, SKILL_LABELS
from cluster_decide.export import Bundle, atomic, deck
from cluster_decide.export.slides import FIXED_DATE, build_deck
from cluster_decide.export.words import Names
from cluster_decide.inputs.datasources import load_facts
from cluster_decide.inputs.market import TERM_WORDS
from cluster_decide.planning.explain import ARCHETYPE_WORDS, money


@pytest.fixture(scope="module")
def order(bundle: Bundle) -> list[str]:
    return story_order(bundle)


def _role(order: list[str], start: str, has: str = "") -> str:
    """The story's title prefix that starts with ``start`` (and holds ``has``): slides after an
    optional one (today against the proposal) are found by what they are, not by position."""
    return next(k for k in order if k.startswith(start) and has in k)


def _title(slide: Any) -> str:
    if slide.shapes.title is not None:
        return str(slide.shapes.title.text_frame.text)
    return ""


def _slides(path: Path, order: list[str]) -> dict[str, list[Any]]:
    """Slides by the :func:`story_order` prefix their title starts with (continuations
    included)."""
    out: dict[str, list[Any]] = {}
    for slide in Presentation(str(path)).slides:
        title = _title(slide)
        key = next((k for k in order if title.startswith(k)), title)
        out.setdefault(key, []).append(slide)
    return out


def _tables(slides: list[Any]) -> list[list[list[str]]]:
    return [
        [[c.text for c in row.cells] for row in shape.table.rows]
        for slide in slides
        for shape in slide.shapes
        if shape.has_table
    ]


def _text(slide: Any) -> str:
    return "\n".join(s.text_frame.text for s in slide.shapes if s.has_text_frame)


def test_slides_come_in_story_order(deck_path: Path, order: list[str]) -> None:
    prs = Presentation(str(deck_path))
    assert (prs.slide_width, prs.slide_height) == (Inches(13.333), Inches(7.5))
    titles = [_title(s) for s in prs.slides]
    assert "GPU estate" in _text(prs.slides[0])
    seen = list(dict.fromkeys(next(k for k in order if t.startswith(k)) for t in titles[1:]))
    assert seen == order, titles


def test_summary_states_answer_cost_certainty_and_ask(
    deck_path: Path, bundle: Bundle, order: list[str]
) -> None:
    plan = bundle.plan
    slide = _slides(deck_path, order)[order[0]][0]
    text = _text(slide)
    for label in ("Answer", "Cost", "How sure", "We ask"):
        assert label in text
    assert money(plan.total_monthly_usd) in text
    runner = runner_up(bundle)
    if runner is not None:
        margin = money(runner["total_monthly_usd"] - plan.total_monthly_usd)
        assert f"the runner-up, {mid_sentence(runner['archetype'])}, costs {margin}" in text
    hires = hire_words(plan)
    assert (hires if hires != "no new hires" else "no new hires are needed") in text
    assert f"Approve a run-rate of {money(plan.cash_monthly_usd)} a month in cash" in text
    why = _text(_slides(deck_path, order)[order[1]][0])
    assert plan.archetype is not None and ARCHETYPE_WORDS[plan.archetype] in why


def test_placements_table_holds_the_plans_numbers(
    deck_path: Path, default_plan: cd.Plan, default_scenario: cd.Scenario
) -> None:
    slides = _slides(deck_path, [])["Appendix: where each workload runs"]
    rows = [r for t in _tables(slides) for r in t[1:]]
    assert len(rows) == default_plan.placements.height
    assert not any(
        s.shapes[i].shape_type == MSO_SHAPE_TYPE.PICTURE
        for s in slides
        for i in range(len(s.shapes))
    )
    names = Names.of(default_plan, default_scenario)
    got = {(r[0], r[2], r[3]): (r[4], r[5], r[6]) for r in rows}
    for p in default_plan.placements.iter_rows(named=True):
        key = (names.workload(p["workload"]), names.pool(p["pool"]), p["gpu_type"])
        share, gpus, hours = got[key]
        assert share == f"{p['share']:.0%}"
        assert float(gpus.replace(",", "")) == pytest.approx(p["gpus"], abs=0.5)
        assert float(hours.replace(",", "")) == pytest.approx(p["gpu_hours_per_month"], abs=0.5)


def test_cost_staffing_and_alternatives_tables_match(
    deck_path: Path, default_plan: cd.Plan, bundle: Bundle, order: list[str]
) -> None:
    by_title = _slides(deck_path, order)
    costs = {r[0]: r[1] for r in _tables(by_title[order[3]])[0][1:]}
    assert costs["GPU capacity"] == money(
        default_plan.costs.filter(component="gpu_capacity")["monthly_usd"][0]
    )
    staff = {r[0]: r for r in _tables(by_title[order[7]])[0][1:]}
    shown = default_plan.staffing.filter(
        (pl.col("required_fte") > 0)
        | (pl.col("available_fte") > 0)
        | (pl.col("hires") > 0)
        | (pl.col("retrained_in") > 0)
    )
    assert len(staff) == shown.height
    for r in shown.iter_rows(named=True):
        row = staff[SKILL_LABELS[r["skill"]]]
        assert row[1:] == [
            f"{r['available_fte']:.1f}",
            f"{r['required_fte']:.1f}",
            str(r["hires"]),
            str(r["retrained_in"]),
            f"{r['idle_fte']:.1f}",
        ]
    alts = _tables(by_title[order[4]])[0][1:]
    assert bundle.alternatives is not None
    assert len(alts) == bundle.alternatives.height
    assert alts[0][2] == money(default_plan.total_monthly_usd)


def test_charts_are_pictures(deck_path: Path, order: list[str]) -> None:
    by_title = _slides(deck_path, order)
    for title in (order[2], order[3], order[4], order[6], order[7]):
        pictures = [s for s in by_title[title][0].shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
        assert pictures, title
        blob = pictures[0].image.blob
        assert blob.startswith(b"\x89PNG")


def test_assumptions_cite_the_offers_the_plan_buys(
    deck_path: Path, bundle: Bundle, order: list[str]
) -> None:
    """Each GPU price is the offer a pool is actually rented on (seller, term, the plan's own
    price per GPU-hour) with that offer's source; staff figures cite the staffing catalog."""
    plan, scn = bundle.plan, bundle.scenario
    assert scn is not None
    rows = [
        r
        for t in _tables(_slides(deck_path, order)[_role(order, "Appendix: ", "key figures")])
        for r in t[1:]
    ]
    figures = {r[0]: r for r in rows}
    facts = {r["key"]: r for r in load_facts().iter_rows(named=True)}
    rented = plan.pools.filter((pl.col("gpus") > 0) & (pl.col("term") != "owned"))
    assert rented.height
    for r in rented.iter_rows(named=True):
        row = figures[f"{r['gpu_type']} from {r['provider']}, {TERM_WORDS[r['term']]}"]
        assert row[1] == f"${r['usd_per_gpu_hour']:,.2f} per GPU-hour"
        fact = facts[f"offers:{r['gpu_type']}:{r['provider_class']}:{r['provider']}:{r['term']}"]
        assert row[2] == fact["source"] and row[3] == fact["date"]
    assert not any("reserved price" in f for f in figures), "the old list price, not the offer"
    for platform in plan.pools["platform"].unique().to_list():
        for (skill_key, component), amount in scn.catalog.platforms[platform].staffing.items():
            if amount <= 0 or component != "base":
                continue
            label = f"{PLATFORM_LABELS[platform]}: {SKILL_LABELS[skill_key]} staff, base team"
            assert figures[label][2] == facts[f"staffing:{platform}:{skill_key}:base"]["source"]
    for r in plan.staffing.filter(pl.col("required_fte") > 0).iter_rows(named=True):
        cost = scn.loaded_cost_usd_per_year(r["skill"])
        row = figures[f"Loaded cost, {SKILL_LABELS[r['skill']]} engineer"]
        assert row[1] == f"{money(cost)} a year"
        listed = getattr(scn.catalog.costs, f"{r['skill']}_loaded_cost_usd_per_year")
        assert (row[2] == "scenario file") == (cost != listed)


def test_pilot_plan_uses_the_scenarios_workloads_and_pools(
    deck_path: Path, bundle: Bundle, order: list[str]
) -> None:
    plan, scn = bundle.plan, bundle.scenario
    assert scn is not None
    names = Names.of(plan, scn)
    slides = _slides(deck_path, order)
    work = {r[0]: r for t in _tables(slides[_role(order, "Pilot: prove")]) for r in t[1:]}
    assert list(work) == [
        "Multi-node training",
        "Fine-tuning",
        "Batch pipeline",
        "Inference endpoint",
    ]

    def largest(kind: str) -> tuple[str, str, str]:
        """The kind's largest workload and the cluster and GPU holding most of it."""
        rows = plan.placements.filter(kind=kind)
        top = rows.group_by("workload").agg(pl.col("gpus").sum())
        name = top.sort(["gpus", "workload"], descending=[True, False])["workload"][0]
        part = rows.filter(workload=name).sort("share", descending=True).row(0, named=True)
        return name, names.pool(part["pool"]), part["gpu_type"]

    train, pool, gpu = largest("distributed_training")
    assert work["Multi-node training"][1].startswith(
        f"{names.workload(train)} on the {pool} ({gpu}"
    )
    serve, pool, gpu = largest("realtime_inference")
    assert work["Inference endpoint"][1].startswith(f"{names.workload(serve)} on the {pool} ({gpu}")
    target = scn.workload(serve).p99_latency_ms
    assert f"p99 latency against {target:,.0f} ms" in work["Inference endpoint"][3]
    ops = [r[0] for t in _tables(slides[_role(order, "Pilot: break")]) for r in t[1:]]
    assert ops == [
        "Failure injection",
        "GPU node replacement",
        "Quota enforcement",
        "Cost reporting",
    ]
    notes = slides[_role(order, "Pilot: prove")][0].notes_slide.notes_text_frame.text
    assert "pilot" in notes


def test_every_slide_but_the_title_has_short_talking_points_said_once(deck_path: Path) -> None:
    seen: set[str] = set()
    for slide in list(Presentation(str(deck_path)).slides)[1:]:
        assert slide.has_notes_slide
        notes = slide.notes_slide.notes_text_frame.text
        assert notes.strip() and len(notes.split()) <= 120, _title(slide)
        points = [p for p in notes.split("\n\n") if p]
        assert not seen & set(points), _title(slide)
        seen |= set(points)
        assert not notes.startswith("Recommended:")


def test_shapes_stay_on_the_slide(deck_path: Path) -> None:
    prs = Presentation(str(deck_path))
    for slide in prs.slides:
        for shape in slide.shapes:
            assert shape.left >= 0 and shape.top >= 0
            assert shape.left + shape.width <= prs.slide_width
            assert shape.top + shape.height <= prs.slide_height, (_title(slide), shape.name)


def test_same_plan_same_bytes_and_fixed_dates(deck_path: Path, bundle: Bundle) -> None:
    assert build_deck(bundle) == deck_path.read_bytes()
    props = Presentation(str(deck_path)).core_properties
    assert props.created == FIXED_DATE and props.modified == FIXED_DATE


def test_company_template_masters_are_used_and_a_timestamp_only_when_asked(
    bundle: Bundle, tmp_path: Path
) -> None:
    template = Presentation()
    template.slide_width, template.slide_height = Inches(13.333), Inches(7.5)
    template.slide_layouts[5].name = "ACME title"
    sample = template.slides.add_slide(template.slide_layouts[0])
    sample.shapes.title.text = "Sample slide"
    logo = sample.shapes.add_textbox(Inches(11.5), Inches(7.0), Inches(1.5), Inches(0.4))
    logo.text_frame.text = "ACME CORP"
    template.slide_master.shapes._spTree.append(copy.deepcopy(logo._element))
    path = tmp_path / "acme.pptx"
    template.save(str(path))
    when = datetime(2026, 11, 30, 9, 0)
    out = deck(bundle, tmp_path / "acme-deck.pptx", template=path, timestamp=when)
    prs = Presentation(str(out))
    assert prs.core_properties.created == when
    assert "2026-11-30" in _text(prs.slides[0])
    master_text = [s.text_frame.text for s in prs.slide_master.shapes if s.has_text_frame]
    assert "ACME CORP" in master_text
    titles = [_title(s) for s in prs.slides]
    assert "Sample slide" not in titles
    assert bundle.plan.archetype is not None
    assert any(t.startswith(f"Run {ARCHETYPE_WORDS[bundle.plan.archetype]} for") for t in titles)
    assert {s.slide_layout.name for s in list(prs.slides)[1:]} == {"ACME title"}


def test_missing_template_is_a_clear_error(bundle: Bundle, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no such \.pptx"):
        deck(bundle, tmp_path / "x.pptx", template=tmp_path / "missing.pptx")
    assert not (tmp_path / "x.pptx").exists()


def test_a_failure_leaves_no_half_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "deck.pptx"
    target.write_bytes(b"the previous deck")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        atomic.write_atomic(target, b"the new deck")
    assert target.read_bytes() == b"the previous deck"
    assert [p.name for p in tmp_path.iterdir()] == ["deck.pptx"]


def test_zip_members_carry_a_fixed_date(deck_path: Path) -> None:
    with zipfile.ZipFile(deck_path) as z:
        assert {i.date_time for i in z.infolist()} == {atomic.ZIP_EPOCH}


def test_an_infeasible_plan_still_makes_a_deck(
    default_scenario: cd.Scenario, tmp_path: Path
) -> None:
    scn = default_scenario.force_archetype("slurm_only")
    plan = cd.solve(scn)
    # A long fix sentence once overflowed the 255-character document-property limit.
    long_fix = plan.relaxations.with_columns(
        pl.col("sentence") + " " + "Hire more HPC staff, or give the Slurm cluster more time. " * 6
    )
    plan = dataclasses.replace(plan, relaxations=long_fix)
    out = deck(plan, tmp_path / "infeasible.pptx", scenario=scn, run_compare=False)
    prs = Presentation(str(out))
    titles = [_title(s) for s in prs.slides]
    assert titles[1] == "No architecture meets every requirement as stated"
    assert "Decision: choose which requirement to relax" in titles
    assert len(prs.core_properties.subject) <= 255
    assert all(_text(s).strip() for s in prs.slides)


def test_a_split_table_is_set_as_large_as_its_pages_allow() -> None:
    """A table just too long for one slide at the smallest size is split in two, and each
    half is then set larger: not left at the size that almost fitted one slide, each page
    two-thirds empty (the default deck's 17-row assumptions table was at 10 pt on two slides
    a third full)."""
    from pptx import Presentation as New

    from cluster_decide.export.content import Table
    from cluster_decide.export.slides import _Writer

    prs = New()
    prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
    writer = _Writer(prs, "test", templated=False)
    row = ("H100 from Nebius, on a 3-year commitment", "$1.75 per GPU-hour", "opslyft", "low")
    table = Table(("Figure", "Value", "Source", "Confidence"), (row,) * 17, (False,) * 4)
    width, height = 12.3, 5.0
    one_page = sum(writer.row_heights(table, writer.widths(table, width, 10) or [], 10))
    assert one_page > height  # it must split
    pt, pages = writer.layout_table(table, width, height, 15)
    assert [len(p.rows) for p in pages] == [9, 8]
    assert pt >= 13
    for page in pages:  # each page still fits, at its own column widths
        widths = writer.widths(page, width, pt)
        assert widths is not None
        assert sum(writer.row_heights(page, widths, pt)) <= height


def test_a_narrow_charts_axis_labels_never_run_together(bundle: Bundle) -> None:
    """The cost comparison beside its table is narrow: on a ~$150k axis its tick labels
    printed as "$0k$50k $100k$150k" (the research-lab deck). Every pair of value-axis labels
    now keeps a gap."""
    import re

    from cluster_decide.export.figures import render
    from cluster_decide.export.layout import metrics

    assert bundle.alternatives is not None
    # The research lab's costs: the dearest architecture $168k a month.
    scale = 168_000 / float(bundle.alternatives["total_monthly_usd"].max())  # type: ignore[arg-type]
    small = bundle.alternatives.with_columns(
        pl.col("total_monthly_usd") * scale, pl.col("delta_usd") * scale
    )
    svg = render(
        dataclasses.replace(bundle, alternatives=small), width=480, png=False, names=("compare",)
    )["compare"].svg
    ticks = sorted(  # the value axis's labels that print (Vega hides one with opacity 0)
        (float(x), text)
        for x, opacity, text in re.findall(
            r'<text text-anchor="(?:start|middle|end)" transform="translate\(([\d.]+),19\)"'
            r'[^>]*opacity="([\d.]+)"[^>]*>(\$[\d.]+[kM]?)</text>',
            svg,
        )
        if float(opacity) > 0
    )
    assert len(ticks) >= 2
    font = metrics("Liberation Sans")
    for (x0, a), (x1, b) in itertools.pairwise(ticks):
        half = (font.width(a, 15) + font.width(b, 15)) * 72 / 2
        assert x1 - x0 >= half + 2, f"'{a}' and '{b}' print as one"
