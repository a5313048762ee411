"""The slide deck: a plan and its analyses as a 16:9 PowerPoint file a reviewer can hand on.

Every shape is placed explicitly (python-pptx does not move a template's placeholders when the
slide size changes), and text is sized by an estimate of how many lines it wraps to, so it
stays inside its box in PowerPoint and LibreOffice alike. Tables are native (reviewers edit
them), charts are 2× PNGs, and the reasons go to the speaker notes. A company's own master
(``template``) supplies fonts, colours and logos; its sample slides are dropped.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import polars as pl
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_SHAPE
from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
from pptx.util import Emu, Inches, Pt

from cluster_decide.charts import ARCHETYPE_LABELS, INK, PALETTE
from cluster_decide.explain import money
from cluster_decide.export.atomic import repack_zip, write_atomic
from cluster_decide.export.content import Bundle, Section, Table, gather, headline, sections
from cluster_decide.export.figures import chart_names, render
from cluster_decide.plan import Plan
from cluster_decide.scenario import Scenario

__all__ = ["FIXED_DATE", "build_deck", "deck"]

FIXED_DATE: Final = datetime(2000, 1, 1)
"""The created/modified date of a deck when no timestamp is asked for (keeps bytes stable)."""
_WIDE: Final = (Inches(13.333), Inches(7.5))
_FULL_PX: Final = 1100
_SIDE_PX: Final = 700
_CHAR_EM: Final = 0.5
"""Average glyph width of Calibri/Carlito text in em, rounded up so estimates err roomy."""
_WORD_EM: Final = 0.58
"""Glyph width for sizing a column to its longest word: wide, as a broken word reads badly."""
_LINE: Final = 1.22


def _rgb(hex_colour: str) -> RGBColor:
    return RGBColor.from_string(hex_colour.lstrip("#"))


def _wrap(text: str, chars: int) -> int:
    """How many lines ``text`` wraps to at ``chars`` characters a line (greedy, by word)."""
    lines = 0
    for para in text.split("\n"):
        n, width = 1, 0
        for word in para.split(" "):
            size = len(word)
            if width and width + 1 + size > chars:
                n += 1 + (size - 1) // max(1, chars)
                width = size % max(1, chars)
            else:
                width += size + (1 if width else 0)
        lines += n
    return lines


def _chars(width_in: float, pt: float, bold: bool = False) -> int:
    return max(1, int(width_in * 72 / (pt * (_CHAR_EM + (0.04 if bold else 0.0)))))


def _text_height(text: str, width_in: float, pt: float, bold: bool = False) -> float:
    return _wrap(text, _chars(width_in, pt, bold)) * pt * _LINE / 72


def _fit_pt(text: str, width_in: float, height_in: float, largest: float, smallest: float) -> float:
    pt = largest
    while pt > smallest and _text_height(text, width_in, pt) > height_in:
        pt -= 1
    return pt


@dataclass(frozen=True)
class _Frame:
    """Slide geometry in inches, scaled to the presentation's size."""

    width: float
    height: float

    @property
    def margin(self) -> float:
        return 0.5 * self.width / 13.333

    @property
    def inner(self) -> float:
        return self.width - 2 * self.margin

    @property
    def body_top(self) -> float:
        return 1.75

    @property
    def body_bottom(self) -> float:
        return self.height - 0.55


class _Writer:
    """Adds slides to one presentation with a consistent geometry and style."""

    def __init__(self, prs: Any, scenario_name: str) -> None:
        self.prs = prs
        self.geo = _Frame(prs.slide_width / 914400, prs.slide_height / 914400)
        self.layout = _title_layout(prs)
        self.scenario_name = scenario_name
        self.slides: list[Any] = []

    # -- primitives ---------------------------------------------------------------------------

    def text(
        self,
        slide: Any,
        box: tuple[float, float, float, float],
        paragraphs: list[tuple[str, float, bool, str]],
        align: Any = PP_ALIGN.LEFT,
        anchor: Any = MSO_ANCHOR.TOP,
    ) -> Any:
        """A text box of ``(text, pt, bold, colour)`` paragraphs, wrapped, no autofit."""
        x, y, w, h = box
        shape = slide.shapes.add_textbox(Inches(x), Inches(y), Inches(w), Inches(h))
        frame = shape.text_frame
        frame.word_wrap = True
        frame.vertical_anchor = anchor
        for side in ("margin_left", "margin_right", "margin_top", "margin_bottom"):
            setattr(frame, side, Inches(0.04))
        for i, (words, pt, bold, colour) in enumerate(paragraphs):
            para = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
            para.alignment = align
            run = para.add_run()
            run.text = words
            run.font.size = Pt(pt)
            run.font.bold = bold
            run.font.color.rgb = _rgb(colour)
            if i:
                para.space_before = Pt(pt * 0.5)
        return shape

    def slide(self, title: str, lead: str = "") -> Any:
        """A new slide with its title, an accent bar, the lead sentence and the footer."""
        geo = self.geo
        slide = self.prs.slides.add_slide(self.layout)
        for ph in list(slide.placeholders):
            if ph.placeholder_format.type not in (1, 3):  # keep only TITLE / CENTER_TITLE
                ph._element.getparent().remove(ph._element)
        box = (geo.margin + 0.18, 0.32, geo.inner - 0.18, 0.7)
        pt = _fit_pt(title, box[2], box[3], 28, 20)
        if slide.shapes.title is not None:
            shape = slide.shapes.title
            shape.left, shape.top = Inches(box[0]), Inches(box[1])
            shape.width, shape.height = Inches(box[2]), Inches(box[3])
            frame = shape.text_frame
            frame.word_wrap = True
            frame.vertical_anchor = MSO_ANCHOR.MIDDLE
            for side in ("margin_left", "margin_right", "margin_top", "margin_bottom"):
                setattr(frame, side, Inches(0.04))
            frame.text = title
            para = frame.paragraphs[0]
            para.alignment = PP_ALIGN.LEFT
            para.runs[0].font.size = Pt(pt)
            para.runs[0].font.bold = True
            para.runs[0].font.color.rgb = _rgb(INK)
        else:
            self.text(slide, box, [(title, pt, True, INK)], anchor=MSO_ANCHOR.MIDDLE)
        bar = slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, Inches(geo.margin), Inches(0.42), Inches(0.08), Inches(0.5)
        )
        bar.fill.solid()
        bar.fill.fore_color.rgb = _rgb(PALETTE["blue"])
        bar.line.fill.background()
        if lead:
            lead_box = (geo.margin, 1.08, geo.inner, 0.6)
            lead_pt = _fit_pt(lead, lead_box[2], lead_box[3], 17, 12)
            self.text(slide, lead_box, [(lead, lead_pt, False, INK)])
        self.slides.append(slide)
        return slide

    def footers(self) -> None:
        """Scenario name and page numbers, once the page count is known."""
        geo = self.geo
        total = len(self.slides)
        grey = PALETTE["grey"]
        for n, slide in enumerate(self.slides, start=1):
            if n == 1:
                continue
            y = geo.height - 0.42
            self.text(
                slide,
                (geo.margin, y, geo.inner * 0.7, 0.3),
                [(f"cluster_decide · {self.scenario_name}", 10, False, grey)],
            )
            self.text(
                slide,
                (geo.margin + geo.inner * 0.7, y, geo.inner * 0.3, 0.3),
                [(f"{n} / {total}", 10, False, grey)],
                align=PP_ALIGN.RIGHT,
            )

    def picture(self, slide: Any, png: bytes, box: tuple[float, float, float, float]) -> Any:
        """A PNG scaled to fit ``box`` (aspect kept), centred horizontally, top-aligned."""
        x, y, w, h = box
        px_w = int.from_bytes(png[16:20], "big")
        px_h = int.from_bytes(png[20:24], "big")
        scale = min(w / px_w, h / px_h)
        pw, ph = px_w * scale, px_h * scale
        return slide.shapes.add_picture(
            io.BytesIO(png), Inches(x + (w - pw) / 2), Inches(y), Inches(pw), Inches(ph)
        )

    def notes(self, slide: Any, notes: tuple[str, ...] | list[str]) -> None:
        """The reasons, one paragraph each, in the speaker notes."""
        if notes:
            slide.notes_slide.notes_text_frame.text = "\n\n".join(n for n in notes if n)

    # -- tables -------------------------------------------------------------------------------

    def _widths(self, table: Table, width: float, pt: float) -> list[float]:
        """Column widths: each at least its longest word (never broken), the rest by content."""
        pad = 0.14

        def word_in(text: str, bold: bool) -> float:
            longest = max((len(w) for w in text.split()), default=0)
            return longest * pt * (_WORD_EM + (0.04 if bold else 0.0)) / 72 + pad

        floors, weights = [], []
        for j, header in enumerate(table.columns):
            cells = [r[j] for r in table.rows]
            floors.append(max([word_in(header, True), *(word_in(c, False) for c in cells)]))
            longest = max([len(c) for c in cells] or [0])
            weights.append(max(len(header) * 0.9, min(longest, 46), 5))
        spare = width - sum(floors)
        if spare <= 0:
            return [width * f / sum(floors) for f in floors]
        extra = [
            max(0.0, w * pt * _CHAR_EM / 72 + pad - f) for w, f in zip(weights, floors, strict=True)
        ]
        if sum(extra) <= 0:
            return [f + spare / len(floors) for f in floors]
        return [f + spare * e / sum(extra) for f, e in zip(floors, extra, strict=True)]

    def _row_heights(self, table: Table, widths: list[float], pt: float) -> list[float]:
        pad = 0.12
        heights = [
            max(
                _text_height(h, w - pad, pt, bold=True)
                for h, w in zip(table.columns, widths, strict=True)
            )
            + pad
        ]
        for row in table.rows:
            heights.append(
                max(_text_height(c, w - pad, pt) for c, w in zip(row, widths, strict=True)) + pad
            )
        return heights

    def pages(self, table: Table, width: float, height: float, pt: float) -> list[Table]:
        """Split ``table`` into pages whose rows fit ``height`` at ``pt``."""
        widths = self._widths(table, width, pt)
        heights = [h * 1.06 for h in self._row_heights(table, widths, pt)]
        out, start, used = [], 0, heights[0]
        for i, h in enumerate(heights[1:]):
            if used + h > height and i > start:
                out.append(table.page(start, i))
                start, used = i, heights[0]
            used += h
        out.append(table.page(start, len(table.rows)))
        return out

    def table(
        self, slide: Any, table: Table, box: tuple[float, float, float, float], pt: float
    ) -> Any:
        """A native table: header row, banded rows, numbers right-aligned, explicit sizes."""
        x, y, w, _h = box
        widths = self._widths(table, w, pt)
        heights = self._row_heights(table, widths, pt)
        shape = slide.shapes.add_table(
            len(table.rows) + 1,
            len(table.columns),
            Inches(x),
            Inches(y),
            Inches(w),
            Inches(sum(heights)),
        )
        grid = shape.table
        grid.first_row = True
        grid.horz_banding = True
        for j, cw in enumerate(widths):
            grid.columns[j].width = Inches(cw)
        for i, rh in enumerate(heights):
            grid.rows[i].height = Emu(int(Inches(rh)))
        cells = [table.columns, *table.rows]
        for i, row in enumerate(cells):
            for j, value in enumerate(row):
                cell = grid.cell(i, j)
                cell.margin_left = cell.margin_right = Inches(0.05)
                cell.margin_top = cell.margin_bottom = Inches(0.03)
                cell.vertical_anchor = MSO_ANCHOR.MIDDLE
                frame = cell.text_frame
                frame.word_wrap = True
                frame.text = value
                para = frame.paragraphs[0]
                para.alignment = PP_ALIGN.RIGHT if table.numeric[j] else PP_ALIGN.LEFT
                for run in para.runs:
                    run.font.size = Pt(pt)
                    run.font.bold = i == 0
        return shape


class _Images:
    """Chart PNGs rendered on first use, at full-slide or beside-a-table width."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.cache: dict[tuple[str, int], bytes | None] = {}

    def get(self, name: str | None, side: bool = False) -> bytes | None:
        """The chart's PNG, or None when the bundle has no such chart."""
        if name is None:
            return None
        width = _SIDE_PX if side else _FULL_PX
        if (name, width) not in self.cache:
            done = render(self.bundle, width=width, svg=False, names=(name,))
            self.cache[(name, width)] = done[name].png if name in done else None
        return self.cache[(name, width)]


def _title_layout(prs: Any) -> Any:
    """The master's "Title Only" layout, else the one with a title and fewest placeholders."""
    layouts = list(prs.slide_layouts)
    for layout in layouts:
        if layout.name.strip().lower() == "title only":
            return layout

    def rank(layout: Any) -> tuple[int, int]:
        types = [ph.placeholder_format.type for ph in layout.placeholders]
        has_title = any(t in (1, 3) for t in types)
        return (0 if has_title else 1, len(types))

    return min(layouts, key=rank)


def _drop_slides(prs: Any) -> None:
    """Remove a template's own slides (its masters and layouts stay)."""
    ids = prs.slides._sldIdLst
    for sld in list(ids):
        prs.part.drop_rel(sld.rId)
        ids.remove(sld)


def _title_slide(w: _Writer, bundle: Bundle, timestamp: datetime | None) -> None:
    geo = w.geo
    plan = bundle.plan
    slide = w.prs.slides.add_slide(w.layout)
    for ph in list(slide.placeholders):
        ph._element.getparent().remove(ph._element)
    band = slide.shapes.add_shape(
        MSO_SHAPE.RECTANGLE, 0, 0, Inches(0.35 * geo.width / 13.333), Inches(geo.height)
    )
    band.fill.solid()
    band.fill.fore_color.rgb = _rgb(PALETTE["blue"])
    band.line.fill.background()
    left = geo.margin + 0.5
    width = geo.width - left - geo.margin
    title = f"How to run the GPU estate: {plan.scenario}"
    w.text(
        slide,
        (left, 2.0, width, 1.6),
        [(title, _fit_pt(title, width, 1.6, 40, 26), True, INK)],
        anchor=MSO_ANCHOR.BOTTOM,
    )
    if plan.feasible:
        sub = (
            f"Recommended: {ARCHETYPE_LABELS.get(plan.archetype or '', plan.archetype)}, "
            f"{money(plan.total_monthly_usd)} a month"
        )
    else:
        sub = "No architecture meets the scenario as stated; what would make one feasible"
    lines = [(sub, _fit_pt(sub, width, 0.9, 24, 16), False, PALETTE["blue"])]
    w.text(slide, (left, 3.8, width, 0.9), lines)
    small = "Optimized and explained with cluster_decide; every figure has a source."
    if timestamp is not None:
        small += f" {timestamp:%Y-%m-%d}."
    w.text(slide, (left, 4.9, width, 0.5), [(small, 14, False, PALETTE["grey"])])
    w.notes(slide, (headline(plan),))
    w.slides.append(slide)


def _recommendation(w: _Writer, sec: Section) -> None:
    geo = w.geo
    slide = w.slide(sec.title)
    top = geo.body_top - 0.55
    box = (geo.margin, top, geo.inner, 1.5)
    w.text(slide, box, [(sec.lead, _fit_pt(sec.lead, box[2], box[3], 28, 18), True, INK)])
    y = top + 1.75
    if sec.metrics:
        n = len(sec.metrics)
        gap = 0.3
        card_w = (geo.inner - gap * (n - 1)) / n
        for i, (label, value) in enumerate(sec.metrics):
            x = geo.margin + i * (card_w + gap)
            card = slide.shapes.add_shape(
                MSO_SHAPE.RECTANGLE, Inches(x), Inches(y), Inches(card_w), Inches(1.3)
            )
            card.fill.solid()
            card.fill.fore_color.rgb = _rgb(PALETTE["light"])
            card.line.fill.background()
            w.text(slide, (x + 0.15, y + 0.1, card_w - 0.3, 0.7), [(value, 30, True, INK)])
            w.text(slide, (x + 0.15, y + 0.8, card_w - 0.3, 0.4), [(label, 14, False, INK)])
        y += 1.6
    if sec.bullets:
        items = [f"• {b}" for b in sec.bullets]
        height = geo.body_bottom - y
        pt = 16.0
        while pt > 10 and sum(_text_height(t, geo.inner, pt) * 1.15 for t in items) > height:
            pt -= 1
        w.text(slide, (geo.margin, y, geo.inner, height), [(t, pt, False, INK) for t in items])
    w.notes(slide, sec.notes)


def _bullets(w: _Writer, slide: Any, bullets: tuple[str, ...], box: tuple[float, ...]) -> None:
    x, y, width, height = box
    items = [f"• {b}" for b in bullets]
    pt = 18.0
    while pt > 11 and sum(_text_height(t, width, pt) * 1.2 for t in items) > height:
        pt -= 1
    w.text(slide, (x, y, width, height), [(t, pt, False, INK) for t in items])


def _section(w: _Writer, sec: Section, images: _Images) -> None:
    geo = w.geo
    top, bottom = geo.body_top, geo.body_bottom
    height = bottom - top
    has_chart = sec.chart_in_deck and sec.chart in chart_names(images.bundle)
    table = sec.table if sec.table is not None and sec.table.rows else None
    if has_chart and table is not None:
        side_w = geo.inner * 0.38
        chart_w = geo.inner - side_w - 0.3
        pages = w.pages(table, side_w, height, 12)
        side_png = images.get(sec.chart, side=True)
        if len(pages) == 1 and side_png is not None:
            slide = w.slide(sec.title, sec.lead)
            w.picture(slide, side_png, (geo.margin, top, chart_w, height))
            w.table(slide, table, (geo.margin + chart_w + 0.3, top, side_w, height), 12)
            w.notes(slide, sec.notes)
            return
    png = images.get(sec.chart) if has_chart else None
    if png is not None and table is not None:
        # The table is too long to sit beside the chart: chart first, then the table alone.
        slide = w.slide(sec.title, sec.lead)
        w.picture(slide, png, (geo.margin, top, geo.inner, height))
        w.notes(slide, sec.notes)
    elif png is not None:
        slide = w.slide(sec.title, sec.lead)
        w.picture(slide, png, (geo.margin, top, geo.inner, height))
        if sec.bullets:
            _bullets(w, slide, sec.bullets, (geo.margin, bottom - 1.0, geo.inner, 1.0))
        w.notes(slide, sec.notes)
        return
    if table is not None:
        pt = 13 if len(table.columns) <= 5 else 12
        pages = w.pages(table, geo.inner, height, pt)
        for i, part in enumerate(pages):
            title = sec.title if i == 0 else f"{sec.title} (continued)"
            slide = w.slide(title, sec.lead if i == 0 else "")
            w.table(slide, part, (geo.margin, top, geo.inner, height), pt)
            w.notes(slide, sec.notes)
        return
    slide = w.slide(sec.title, sec.lead)
    if sec.bullets:
        _bullets(w, slide, sec.bullets, (geo.margin, top, geo.inner, height))
    w.notes(slide, sec.notes)


def _set_properties(prs: Any, plan: Plan, timestamp: datetime | None) -> None:
    props = prs.core_properties
    when = timestamp or FIXED_DATE
    props.title = f"How to run the GPU estate: {plan.scenario}"
    props.subject = headline(plan)
    props.author = "cluster_decide"
    props.last_modified_by = "cluster_decide"
    props.keywords = "GPU, Slurm, Kubernetes, architecture"
    props.revision = 1
    props.created = when
    props.modified = when
    props.last_printed = when


def build_deck(
    bundle: Bundle,
    template: str | os.PathLike[str] | None = None,
    timestamp: datetime | None = None,
) -> bytes:
    """The deck of ``bundle`` as .pptx bytes (deterministic unless ``timestamp`` is given)."""
    if template is not None and not Path(template).is_file():
        raise FileNotFoundError(f"template {os.fspath(template)}: no such .pptx file")
    prs = Presentation(os.fspath(template)) if template is not None else Presentation()
    if template is None:
        prs.slide_width, prs.slide_height = _WIDE
    else:
        _drop_slides(prs)
    story = sections(bundle)
    images = _Images(bundle)
    writer = _Writer(prs, bundle.plan.scenario)
    _title_slide(writer, bundle, timestamp)
    for sec in story:
        if sec.key == "recommendation":
            _recommendation(writer, sec)
        else:
            _section(writer, sec, images)
    writer.footers()
    _set_properties(prs, bundle.plan, timestamp)
    out = io.BytesIO()
    prs.save(out)
    return repack_zip(out.getvalue())


def deck(
    source: Plan | Scenario | Bundle,
    path: str | os.PathLike[str],
    *,
    scenario: Scenario | None = None,
    alternatives: pl.DataFrame | None = None,
    analyses: Mapping[str, pl.DataFrame] | None = None,
    template: str | os.PathLike[str] | None = None,
    timestamp: datetime | None = None,
    run_compare: bool = True,
    time_limit_s: float = 10.0,
) -> Path:
    """Write the plan's slide deck to ``path`` (.pptx), atomically; returns the path.

    ``source`` is a solved plan, a scenario (solved here) or a bundle. With the scenario known,
    the alternatives come from ``cd.compare`` unless given (or ``run_compare`` is False);
    ``analyses`` are named frames (lever values, break-evens) for "What would change the
    answer". ``template`` is a .pptx whose masters and layouts the deck uses. ``timestamp``
    stamps the title slide and document properties; without it the file is byte-for-byte
    reproducible.
    """
    bundle = gather(source, scenario, alternatives, analyses, run_compare, time_limit_s)
    data = build_deck(bundle, template, timestamp)
    return write_atomic(path, data)
