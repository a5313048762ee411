"""The deck opened with python-pptx: titles in order, tables hold the plan's numbers, pictures,
speaker notes, 16:9, reproducible bytes, a company template, and atomic writes."""

from __future__ import annotations

import copy
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.util import Inches

import cluster_decide as cd
from cluster_decide.explain import money
from cluster_decide.export import Bundle, atomic, deck
from cluster_decide.export.slides import FIXED_DATE, build_deck

TITLES = [
    "Recommendation",
    "Architecture",
    "Cost breakdown",
    "Placements",
    "Alternatives",
    "What would change the answer",
    "Staffing plan",
    "Service levels",
    "Key assumptions and sources",
    "Pilot plan: four workloads",
    "Pilot plan: operations under stress",
]


def _title(slide: Any) -> str:
    if slide.shapes.title is not None:
        return str(slide.shapes.title.text_frame.text)
    return ""


def _slides(path: Path) -> dict[str, list[Any]]:
    """Slides by title, continuation slides folded into their first."""
    out: dict[str, list[Any]] = {}
    for slide in Presentation(str(path)).slides:
        out.setdefault(_title(slide).removesuffix(" (continued)"), []).append(slide)
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


def test_slides_come_in_story_order(deck_path: Path) -> None:
    prs = Presentation(str(deck_path))
    assert (prs.slide_width, prs.slide_height) == (Inches(13.333), Inches(7.5))
    titles = [_title(s).removesuffix(" (continued)") for s in prs.slides]
    assert "GPU estate" in _text(prs.slides[0])
    seen = list(dict.fromkeys(titles[1:]))
    assert seen == TITLES


def test_recommendation_is_one_sentence_with_the_plans_cost(
    deck_path: Path, default_plan: cd.Plan
) -> None:
    slide = _slides(deck_path)["Recommendation"][0]
    text = _text(slide)
    assert money(default_plan.total_monthly_usd) in text
    assert "separate Slurm and Kubernetes clusters" in text
    notes = slide.notes_slide.notes_text_frame.text
    assert all(line in notes for line in default_plan.explanations)


def test_placements_table_holds_the_plans_numbers(deck_path: Path, default_plan: cd.Plan) -> None:
    slides = _slides(deck_path)["Placements"]
    rows = [r for t in _tables(slides) for r in t[1:]]
    assert len(rows) == default_plan.placements.height
    assert not any(
        s.shapes[i].shape_type == MSO_SHAPE_TYPE.PICTURE
        for s in slides
        for i in range(len(s.shapes))
    )
    got = {(r[0], r[2], r[4]): (r[5], r[6], r[7]) for r in rows}
    for p in default_plan.placements.iter_rows(named=True):
        share, gpus, hours = got[(p["workload"], p["pool"], p["gpu_type"])]
        assert share == f"{p['share']:.0%}"
        assert float(gpus.replace(",", "")) == pytest.approx(p["gpus"], abs=0.05)
        assert float(hours.replace(",", "")) == pytest.approx(p["gpu_hours_per_month"], abs=0.5)


def test_cost_staffing_and_alternatives_tables_match(
    deck_path: Path, default_plan: cd.Plan, bundle: Bundle
) -> None:
    by_title = _slides(deck_path)
    costs = {r[0]: r[1] for r in _tables(by_title["Cost breakdown"])[0][1:]}
    assert costs["GPU capacity"] == money(
        default_plan.costs.filter(component="gpu_capacity")["monthly_usd"][0]
    )
    staff = {r[0]: r for r in _tables(by_title["Staffing plan"])[0][1:]}
    hpc = default_plan.staffing.filter(skill="hpc").row(0, named=True)
    assert staff["HPC (Slurm)"][2] == f"{hpc['required_fte']:.2f}"
    assert staff["HPC (Slurm)"][3] == str(hpc["hires"])
    alts = _tables(by_title["Alternatives"])[0][1:]
    assert bundle.alternatives is not None
    assert len(alts) == bundle.alternatives.height
    assert alts[0][2] == money(default_plan.total_monthly_usd)


def test_charts_are_pictures(deck_path: Path) -> None:
    by_title = _slides(deck_path)
    for title in (
        "Architecture",
        "Cost breakdown",
        "Alternatives",
        "Staffing plan",
        "Service levels",
    ):
        pictures = [s for s in by_title[title][0].shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
        assert pictures, title
        blob = pictures[0].image.blob
        assert blob.startswith(b"\x89PNG")


def test_assumptions_name_their_sources(deck_path: Path) -> None:
    rows = [r for t in _tables(_slides(deck_path)["Key assumptions and sources"]) for r in t[1:]]
    figures = {r[0]: r for r in rows}
    assert figures["Slurm: HPC (Slurm) staff, base team"][2] == "assumption"
    assert "USD/GPU-hour" in figures["H100 reserved price"][1]
    assert figures["H100 reserved price"][2]
    assert figures["Loaded cost, HPC (Slurm) engineer"][2] == "scenario file"


def test_pilot_plan_uses_the_scenarios_workloads_and_pools(deck_path: Path) -> None:
    slides = _slides(deck_path)
    work = {r[0]: r for t in _tables(slides["Pilot plan: four workloads"]) for r in t[1:]}
    assert list(work) == [
        "Multi-node training",
        "Fine-tuning",
        "Batch pipeline",
        "Inference endpoint",
    ]
    assert work["Multi-node training"][1].startswith("llm-pretraining on slurm")
    assert work["Inference endpoint"][1].startswith("support-assistant on k8s-batch")
    assert "p99 latency against 1,500 ms" in work["Inference endpoint"][3]
    ops = [r[0] for t in _tables(slides["Pilot plan: operations under stress"]) for r in t[1:]]
    assert ops == [
        "Failure injection",
        "GPU node replacement",
        "Quota enforcement",
        "Cost reporting",
    ]
    notes = slides["Pilot plan: four workloads"][0].notes_slide.notes_text_frame.text
    assert "pilot" in notes


def test_every_slide_but_the_title_has_speaker_notes(deck_path: Path) -> None:
    for slide in list(Presentation(str(deck_path)).slides)[1:]:
        assert slide.has_notes_slide and slide.notes_slide.notes_text_frame.text.strip()


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
    assert "Recommendation" in titles
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

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
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
    out = deck(scn, tmp_path / "infeasible.pptx", run_compare=False)
    slides = _slides(out)
    assert "No architecture meets this scenario" in _text(slides["Recommendation"][0])
    assert "Feasible if" in _text(slides["What would change the answer"][0])
