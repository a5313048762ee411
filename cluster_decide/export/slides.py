"""The slide deck: the story of a plan as a PowerPoint file an analyst can hand to executives.

One slide per section of :func:`cluster_decide.export.content.sections`: its action title, the
lead sentence, at most one chart, a native table (reviewers edit them) or labelled statements,
and the talking points in the speaker notes. Geometry, fonts and colours come from
:mod:`cluster_decide.export.layout`: the house 16:9 layout, or a company template measured from
its own placeholders and theme. Every text box is sized with the widths of the font that will
render it, shrinking the text rather than splitting a word or a number, and no table continues
onto a slide of one row.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import polars as pl
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_SHAPE
from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE, PP_ALIGN
from pptx.util import Emu, Inches, Pt

from cluster_decide.base.vocabulary import ARCHETYPE_LABELS
from cluster_decide.export.atomic import repack_zip, write_atomic
from cluster_decide.export.content import Bundle, Section, Table, gather, headline, sections
from cluster_decide.export.figures import chart_names, render
from cluster_decide.export.layout import EMU_PER_IN, Geometry, Metrics, Theme, metrics, theme_of
from cluster_decide.export.words import NOTE_WORDS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import money, split_closing
from cluster_decide.planning.plan import Plan
from cluster_decide.style import PALETTE

__all__ = ["FIXED_DATE", "build_deck", "deck"]

FIXED_DATE: Final = datetime(2000, 1, 1)
"""The created/modified date of a deck when no timestamp is asked for (keeps bytes stable)."""
_WIDE: Final = (Inches(13.333), Inches(7.5))
_PROPERTY_CHARS: Final = 255
"""The longest a document property may be (the OOXML core-properties limit)."""
_CELL_PAD_X: Final = 0.1
_CELL_PAD_Y: Final = 0.05
_SMALLEST_TABLE_PT: Final = 10.0
_LEAST_PX: Final = {"architecture": 760}
"""The narrowest a chart is drawn, in pixels: the architecture's boxes hold lines of text
that a narrower drawing cuts with an ellipsis (on a 4:3 slide); the picture is scaled to fit."""
_CHART_PX_PER_IN: Final = 62
"""Chart pixels per inch of slide: a chart's 15 px labels then print at about 17 pt."""


def _rgb(hex_colour: str) -> RGBColor:
    return RGBColor.from_string(hex_colour.lstrip("#"))


def _clip_property(text: str) -> str:
    """``text`` cut at a word to fit a document property (PowerPoint rejects longer ones)."""
    if len(text) <= _PROPERTY_CHARS:
        return text
    return text[: _PROPERTY_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _no_autofit(frame: Any) -> None:
    frame.word_wrap = True
    frame.auto_size = MSO_AUTO_SIZE.NONE
    for side in ("margin_left", "margin_right", "margin_top", "margin_bottom"):
        setattr(frame, side, Inches(0.04))


class _Writer:
    """Adds slides to one presentation with the template's geometry, fonts and colours."""

    def __init__(self, prs: Any, scenario_name: str, templated: bool) -> None:
        self.prs = prs
        self.layout = _title_layout(prs)
        self.theme: Theme = theme_of(prs, templated)
        self.body: Metrics = metrics(self.theme.body_font)
        self.head: Metrics = metrics(self.theme.heading_font)
        width, height = prs.slide_width / EMU_PER_IN, prs.slide_height / EMU_PER_IN
        self.geo = (
            Geometry.measure(prs, self.layout) if templated else Geometry.house(width, height)
        )
        self.templated = templated
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
        space: float = 0.5,
    ) -> Any:
        """A text box of ``(text, pt, bold, colour)`` paragraphs in the theme's body font."""
        x, y, w, h = box
        shape = slide.shapes.add_textbox(Inches(x), Inches(y), Inches(w), Inches(h))
        frame = shape.text_frame
        _no_autofit(frame)
        frame.vertical_anchor = anchor
        for i, (words, pt, bold, colour) in enumerate(paragraphs):
            para = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
            para.alignment = align
            run = para.add_run()
            run.text = words
            run.font.size = Pt(pt)
            run.font.bold = bold
            run.font.color.rgb = _rgb(colour)
            if i:
                para.space_before = Pt(pt * space)
        return shape

    def paragraphs_height(
        self, items: list[str], width: float, pt: float, space: float, bold: bool = False
    ) -> float:
        """Height of paragraphs set with :meth:`text` (their spacing included)."""
        inner = width - 0.08
        return sum(self.body.height(t, inner, pt, bold) for t in items) + (
            (len(items) - 1) * pt * space / 72 + 0.1
        )

    def fit_paragraphs(
        self, items: list[str], width: float, height: float, largest: float, smallest: float
    ) -> float:
        """The largest size at which ``items`` fit the box without splitting a word."""
        pt = largest
        while pt > smallest and (
            self.paragraphs_height(items, width, pt, 0.5) > height
            or any(self.body.widest_word(t, pt) > width - 0.1 for t in items)
        ):
            pt -= 0.5
        return pt

    def slide(self, title: str, lead: str = "") -> tuple[Any, float]:
        """A new slide with its action title and lead; returns it and where the body starts."""
        geo = self.geo
        slide = self.prs.slides.add_slide(self.layout)
        for ph in list(slide.placeholders):
            if ph.placeholder_format.type not in (1, 3):  # keep only TITLE / CENTER_TITLE
                ph._element.getparent().remove(ph._element)
        x, y, w, h = geo.title
        if not self.templated:
            x, w = x + 0.0, w
        pt = self.head.fit(title, w - 0.1, h - 0.1, 28, 16, bold=True)
        if slide.shapes.title is not None:
            shape = slide.shapes.title
            shape.left, shape.top = Inches(x), Inches(y)
            shape.width, shape.height = Inches(w), Inches(h)
            frame = shape.text_frame
            _no_autofit(frame)
            frame.vertical_anchor = MSO_ANCHOR.MIDDLE
            frame.text = title
            para = frame.paragraphs[0]
            para.alignment = PP_ALIGN.LEFT
            para.runs[0].font.size = Pt(pt)
            para.runs[0].font.bold = True
            para.runs[0].font.color.rgb = _rgb(self.theme.ink)
        else:
            self.text(slide, (x, y, w, h), [(title, pt, True, self.theme.ink)])
        if not self.templated:
            bar = slide.shapes.add_shape(
                MSO_SHAPE.RECTANGLE,
                Inches(geo.margin),
                Inches(y + 0.12),
                Inches(0.08),
                Inches(h - 0.24),
            )
            bar.fill.solid()
            bar.fill.fore_color.rgb = _rgb(self.theme.accent)
            bar.line.fill.background()
        top = geo.body_top
        if lead:
            lead_pt = self.body.fit(lead, geo.inner - 0.1, 0.72, 17, 12)
            height = self.body.height(lead, geo.inner - 0.1, lead_pt) + 0.12
            self.text(
                slide,
                (geo.margin, top, geo.inner, height),
                [(lead, lead_pt, False, self.theme.ink)],
            )
            top += height + 0.1
        self.slides.append(slide)
        return slide, top

    def footers(self) -> None:
        """Scenario name and page numbers on every slide but the first.

        In the template's footer placeholders when it has them, else as small grey text on the
        footer line.
        """
        geo = self.geo
        total = len(self.slides)
        grey = PALETTE["grey"]
        for n, slide in enumerate(self.slides, start=1):
            if n == 1:
                continue
            words = (f"{self.scenario_name}", f"{n} / {total}")
            if geo.uses_placeholders and self._footer_placeholders(slide, words):
                continue
            y = geo.footer_top + 0.03
            height = min(0.3, geo.height - y)
            self.text(
                slide,
                (geo.margin, y, geo.inner * 0.7, height),
                [(words[0], 10, False, grey)],
            )
            self.text(
                slide,
                (geo.margin + geo.inner * 0.7, y, geo.inner * 0.3, height),
                [(words[1], 10, False, grey)],
                align=PP_ALIGN.RIGHT,
            )

    def _footer_placeholders(self, slide: Any, words: tuple[str, str]) -> bool:
        done = False
        for ph in self.layout.placeholders:
            kind = ph.placeholder_format.type
            if kind not in (15, 13):
                continue
            slide.shapes.clone_placeholder(ph)
            shape = next(
                s
                for s in slide.placeholders
                if s.placeholder_format.idx == ph.placeholder_format.idx
            )
            shape.text_frame.text = words[0] if kind == 15 else words[1]
            done = True
        return done

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
        """The talking points, one paragraph each, within the word budget."""
        points, used = [], 0
        for note in notes:
            n = len(note.split())
            if note and used + n <= NOTE_WORDS:
                points.append(note)
                used += n
        if points:
            slide.notes_slide.notes_text_frame.text = "\n\n".join(points)

    # -- tables -------------------------------------------------------------------------------

    def widths(self, table: Table, width: float, pt: float) -> list[float] | None:
        """Column widths: each at least its widest word (never split), the rest by content.

        None when the words alone do not fit ``width`` at ``pt``.
        """
        floors, wants = [], []
        for j, header in enumerate(table.columns):
            cells = [r[j] for r in table.rows]
            floor = max(
                [
                    self.body.widest_word(header, pt, True),
                    *(self.body.widest_word(c, pt) for c in cells),
                ]
            )
            if table.numeric[j]:
                # A number's column holds its longest figure on one line.
                floor = max([floor, *(self.body.width(c, pt) for c in cells)])
            floors.append(floor + 2 * _CELL_PAD_X + 0.02)
            full = max([self.body.width(c, pt) for c in cells] or [0.0])
            wants.append(max(floors[-1], min(full, 4.2) + 2 * _CELL_PAD_X))
        if sum(floors) > width:
            return None
        if sum(wants) <= width:
            spare = width - sum(wants)
            return [w + spare * w / sum(wants) for w in wants]
        # Give each column its floor, and share what is left by how much more it wants.
        extra = [w - f for w, f in zip(wants, floors, strict=True)]
        spare = width - sum(floors)
        return [f + spare * e / sum(extra) for f, e in zip(floors, extra, strict=True)]

    def row_heights(self, table: Table, widths: list[float], pt: float) -> list[float]:
        """Each row's height: its tallest wrapped cell plus the cell margins."""
        pad = 2 * _CELL_PAD_Y + 0.04

        def tallest(row: tuple[str, ...], bold: bool) -> float:
            return max(
                self.body.height(c, w - 2 * _CELL_PAD_X - 0.02, pt, bold)
                for c, w in zip(row, widths, strict=True)
            )

        return [tallest(table.columns, True) + pad] + [tallest(r, False) + pad for r in table.rows]

    def layout_table(
        self, table: Table, width: float, height: float, largest: float
    ) -> tuple[float, list[Table]]:
        """The size and pages of ``table`` in a ``width`` × ``height`` box.

        Shrink first (down to 10 pt); only then split, into pages of equal length, so no
        slide carries a one-row remainder, and set the pages back at the largest size (up to
        ``largest``) at which each still fits: a table split in two does not stay at the size
        that almost fitted one slide, leaving each page two-thirds empty.
        """
        pt = largest
        while True:
            widths = self.widths(table, width, pt)
            if widths is not None:
                heights = self.row_heights(table, widths, pt)
                if sum(heights) <= height or pt <= _SMALLEST_TABLE_PT:
                    break
            elif pt <= 8:
                break
            pt -= 0.5
        if self._page_height(table, width, pt) <= height:
            return pt, [table]
        n = len(table.rows)
        for pages in range(2, n + 1):
            per = math.ceil(n / pages)
            parts = [table.page(i, min(n, i + per)) for i in range(0, n, per)]
            if all(self._page_height(p, width, pt) <= height for p in parts):
                while pt < largest and all(
                    self._page_height(p, width, pt + 0.5) <= height for p in parts
                ):
                    pt += 0.5
                return pt, parts
        return pt, [table.page(i, i + 1) for i in range(n)]

    def _page_height(self, table: Table, width: float, pt: float) -> float:
        """Height of ``table`` as :meth:`table` sets it (its own column widths) at ``pt``."""
        widths = self.widths(table, width, pt)
        if widths is None and pt > 8:
            return math.inf  # a word would split: never chosen while a smaller size remains
        even = [width / len(table.columns)] * len(table.columns)
        return sum(self.row_heights(table, widths or even, pt))

    def table(
        self, slide: Any, table: Table, box: tuple[float, float, float, float], pt: float
    ) -> Any:
        """A native table: header row, banded rows, numbers right-aligned, explicit sizes."""
        x, y, w, _h = box
        widths = self.widths(table, w, pt) or [w / len(table.columns)] * len(table.columns)
        heights = self.row_heights(table, widths, pt)
        shape = slide.shapes.add_table(
            len(table.rows) + 1,
            len(table.columns),
            Inches(x),
            Inches(y),
            Inches(sum(widths)),
            Inches(sum(heights)),
        )
        grid = shape.table
        grid.first_row = True
        grid.horz_banding = True
        for j, cw in enumerate(widths):
            grid.columns[j].width = Inches(cw)
        for i, rh in enumerate(heights):
            grid.rows[i].height = Emu(int(Inches(rh)))
        for i, row in enumerate([table.columns, *table.rows]):
            for j, value in enumerate(row):
                cell = grid.cell(i, j)
                cell.margin_left = cell.margin_right = Inches(_CELL_PAD_X)
                cell.margin_top = cell.margin_bottom = Inches(_CELL_PAD_Y)
                cell.vertical_anchor = MSO_ANCHOR.MIDDLE
                frame = cell.text_frame
                frame.word_wrap = True
                # An empty cell would take the default 18 pt line and stretch its row.
                frame.text = value or "–"
                para = frame.paragraphs[0]
                para.alignment = PP_ALIGN.RIGHT if table.numeric[j] else PP_ALIGN.LEFT
                for run in para.runs:
                    run.font.size = Pt(pt)
                    run.font.bold = i == 0
        return shape


def _natural_height(png: bytes) -> float:
    """The height in inches at which a chart's text prints at its designed size."""
    return int.from_bytes(png[20:24], "big") / 2 / _CHART_PX_PER_IN


class _Images:
    """Chart PNGs rendered on first use, at the pixel width of the box they fill."""

    def __init__(self, bundle: Bundle, accent: str | None) -> None:
        self.bundle = bundle
        self.accent = accent
        self.cache: dict[tuple[str, int], bytes | None] = {}

    def get(self, name: str | None, width_in: float) -> bytes | None:
        """The chart's PNG for a box ``width_in`` wide (its text then prints at about 14 pt)."""
        if name is None:
            return None
        px = max(_LEAST_PX.get(name, 480), int(width_in * _CHART_PX_PER_IN))
        if (name, px) not in self.cache:
            done = render(self.bundle, width=px, svg=False, names=(name,), accent=self.accent)
            self.cache[(name, px)] = done[name].png if name in done else None
        return self.cache[(name, px)]


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
    if not w.templated:
        band = slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, 0, 0, Inches(0.35 * geo.width / 13.333), Inches(geo.height)
        )
        band.fill.solid()
        band.fill.fore_color.rgb = _rgb(w.theme.accent)
        band.line.fill.background()
    left = geo.margin + (0.5 if not w.templated else 0.0)
    width = geo.width - left - geo.margin
    top = geo.height * 0.22
    title = f"How to run the GPU estate: {plan.scenario}"
    title_pt = w.head.fit(title, width - 0.1, 1.5, 40, 24, bold=True)
    w.text(
        slide,
        (left, top, width, 1.6),
        [(title, title_pt, True, w.theme.ink)],
        anchor=MSO_ANCHOR.BOTTOM,
    )
    if plan.feasible:
        sub = (
            f"Recommendation: {ARCHETYPE_LABELS.get(plan.archetype or '', plan.archetype)}, "
            f"{money(plan.total_monthly_usd)} a month"
        )
    else:
        sub = "No architecture meets the scenario as stated: what would make one feasible"
    rec = bundle.recommendation
    lines = [sub]
    if rec is not None and getattr(rec, "sentence", None):
        from cluster_decide.export.words import Names

        # The verdict without its caveats, which the How sure slide lists one by one.
        verdict, _caveats = split_closing(
            str(rec.sentence), [str(c) for c in getattr(rec, "caveats", ()) or ()]
        )
        lines.append(Names.of(plan, bundle.scenario).plain(verdict))
    sub_pt = w.fit_paragraphs(lines, width, 1.5, 24, 14)
    w.text(
        slide,
        (left, top + 1.8, width, 1.6),
        [
            (
                t,
                sub_pt if i == 0 else sub_pt * 0.8,
                False,
                w.theme.accent if i == 0 else w.theme.ink,
            )
            for i, t in enumerate(lines)
        ],
    )
    small = "Optimized and explained with cluster_decide; every figure's source is in the appendix."
    if timestamp is not None:
        small += f" {timestamp:%Y-%m-%d}."
    small_pt = w.body.fit(small, width - 0.1, 0.6, 14, 10)
    w.text(slide, (left, top + 3.5, width, 0.6), [(small, small_pt, False, PALETTE["grey"])])
    w.notes(slide, (headline(plan),))
    w.slides.append(slide)


def _rows_slide(w: _Writer, sec: Section) -> None:
    """Labelled statements (the executive summary, the decision): label left, text right."""
    geo = w.geo
    slide, top = w.slide(sec.title, sec.lead)
    label_w = min(1.9, geo.inner * 0.2)
    text_w = geo.inner - label_w - 0.2
    height = geo.body_bottom - top
    texts = [t for _, t in sec.rows]
    pt = 20.0
    while pt > 11 and (
        sum(w.body.height(t, text_w - 0.1, pt) + 0.28 for t in texts) > height
        or any(w.body.widest_word(t, pt) > text_w - 0.1 for t in texts)
    ):
        pt -= 0.5
    gap = max(
        0.2, (height - sum(w.body.height(t, text_w - 0.1, pt) for t in texts)) / (len(texts) + 1)
    )
    gap = min(gap, 0.45)
    y = top + 0.05
    for label, text in sec.rows:
        h = w.body.height(text, text_w - 0.1, pt) + 0.1
        rule = slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, Inches(geo.margin), Inches(y), Inches(0.06), Inches(h)
        )
        rule.fill.solid()
        rule.fill.fore_color.rgb = _rgb(w.theme.accent)
        rule.line.fill.background()
        w.text(
            slide, (geo.margin + 0.15, y, label_w - 0.15, h), [(label, pt, True, w.theme.accent)]
        )
        w.text(slide, (geo.margin + label_w + 0.2, y, text_w, h), [(text, pt, False, w.theme.ink)])
        y += h + gap
    w.notes(slide, sec.notes)


def _bullets(w: _Writer, slide: Any, bullets: tuple[str, ...], box: tuple[float, ...]) -> None:
    x, y, width, height = box
    items = [f"• {b}" for b in bullets]
    pt = w.fit_paragraphs(items, width, height, 18, 11)
    w.text(slide, (x, y, width, height), [(t, pt, False, w.theme.ink) for t in items], space=0.6)


def _section(w: _Writer, sec: Section, images: _Images) -> None:
    geo = w.geo
    if sec.rows:
        _rows_slide(w, sec)
        return
    has_chart = sec.chart_in_deck and sec.chart in chart_names(images.bundle)
    table = sec.table if sec.table is not None and sec.table.rows else None
    lead_h = 0.0
    if sec.lead:
        lead_pt = w.body.fit(sec.lead, geo.inner - 0.1, 0.72, 17, 12)
        lead_h = w.body.height(sec.lead, geo.inner - 0.1, lead_pt) + 0.22
    top = geo.body_top + lead_h
    height = geo.body_bottom - top
    if has_chart and (table is not None or sec.bullets):
        side_w = geo.inner * 0.42
        chart_w = geo.inner - side_w - 0.3
        if table is not None:
            pt, pages = w.layout_table(table, side_w, height, 13)
            fits = len(pages) == 1 and pt >= 11
        else:
            pt = w.fit_paragraphs([f"• {b}" for b in sec.bullets], side_w, height, 17, 11)
            fits = pt >= 12
        png = images.get(sec.chart, chart_w)
        if fits and png is not None:
            slide, top = w.slide(sec.title, sec.lead)
            w.picture(slide, png, (geo.margin, top, chart_w, geo.body_bottom - top))
            side = (geo.margin + chart_w + 0.3, top, side_w, geo.body_bottom - top)
            if table is not None:
                w.table(slide, table, side, pt)
            else:
                _bullets(w, slide, sec.bullets, side)
            w.notes(slide, sec.notes)
            return
    if has_chart and table is not None:
        # Too narrow to sit side by side (a 4:3 slide): the chart above, the table below.
        pt, pages = w.layout_table(table, geo.inner, height * 0.5, 13)
        widths = w.widths(table, geo.inner, pt)
        table_h = sum(w.row_heights(table, widths, pt)) if widths else height
        png = images.get(sec.chart, geo.inner * 0.8)
        room = height - table_h - 0.2
        if (
            len(pages) == 1
            and pt >= 11
            and png is not None
            and room >= max(2.0, 0.75 * _natural_height(png))
        ):
            slide, top = w.slide(sec.title, sec.lead)
            chart_h = geo.body_bottom - top - table_h - 0.2
            w.picture(slide, png, (geo.margin, top, geo.inner, chart_h))
            w.table(slide, table, (geo.margin, top + chart_h + 0.2, geo.inner, table_h), pt)
            w.notes(slide, sec.notes)
            return
    if has_chart and (table is None or not sec.bullets):
        png = images.get(sec.chart, geo.inner)
        if png is not None:
            slide, top = w.slide(sec.title, sec.lead)
            w.picture(slide, png, (geo.margin, top, geo.inner, geo.body_bottom - top))
            w.notes(slide, sec.notes)
            return
    if table is not None:
        pt, pages = w.layout_table(table, geo.inner, height, 15)
        if sec.bullets and _table_and_bullets(w, sec, table, pt, pages, top):
            return
        for i, part in enumerate(pages):
            title = sec.title if i == 0 else f"{sec.title} (cont.)"
            slide, body = w.slide(title, sec.lead if i == 0 else "")
            w.table(slide, part, (geo.margin, body, geo.inner, geo.body_bottom - body), pt)
            w.notes(slide, sec.notes if i == 0 else (f"The table goes on: part {i + 1}.",))
        if sec.bullets:
            slide, body = w.slide(f"{sec.title} (cont.)")
            _bullets(w, slide, sec.bullets, (geo.margin, body, geo.inner, geo.body_bottom - body))
            w.notes(slide, ("The points under the table.",))
        return
    slide, top = w.slide(sec.title, sec.lead)
    if sec.bullets:
        _bullets(w, slide, sec.bullets, (geo.margin, top, geo.inner, geo.body_bottom - top))
    w.notes(slide, sec.notes)


def _table_and_bullets(
    w: _Writer, sec: Section, table: Table, pt: float, pages: list[Table], top: float
) -> bool:
    """A one-page table with the section's bullets under it, where both fit; else False.

    (Where they do not, the caller gives the bullets a slide of their own after the table.)
    """
    geo = w.geo
    widths = w.widths(table, geo.inner, pt)
    table_h = sum(w.row_heights(table, widths, pt)) if widths else geo.body_bottom - top
    room = geo.body_bottom - top - table_h - 0.2
    items = [f"• {b}" for b in sec.bullets]
    if len(pages) != 1 or room < 0.6:
        return False
    if (
        w.paragraphs_height(items, geo.inner, w.fit_paragraphs(items, geo.inner, room, 15, 11), 0.5)
        > room
    ):
        return False
    slide, body = w.slide(sec.title, sec.lead)
    w.table(slide, table, (geo.margin, body, geo.inner, table_h), pt)
    below = body + table_h + 0.2
    _bullets(w, slide, sec.bullets, (geo.margin, below, geo.inner, geo.body_bottom - below))
    w.notes(slide, sec.notes)
    return True


def _set_properties(prs: Any, plan: Plan, timestamp: datetime | None) -> None:
    props = prs.core_properties
    when = timestamp or FIXED_DATE
    props.title = _clip_property(f"How to run the GPU estate: {plan.scenario}")
    props.subject = _clip_property(headline(plan))
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
    writer = _Writer(prs, bundle.plan.scenario, templated=template is not None)
    images = _Images(bundle, writer.theme.accent if template is not None else None)
    _title_slide(writer, bundle, timestamp)
    for sec in story:
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
    recommendation: Any = None,
) -> Path:
    """Write the plan's slide deck to ``path`` (.pptx), atomically; returns the path.

    ``source`` is a solved plan, a scenario (solved here) or a bundle. With the scenario known,
    the alternatives come from ``cd.compare`` unless given (or ``run_compare`` is False);
    ``analyses`` are named frames (lever values, break-evens) for the risks and the appendix;
    ``recommendation`` is a verdict (``cd.recommend``'s result) for the title, the summary and a
    "how sure" slide. ``template`` is a .pptx whose masters, layouts, fonts and colours the deck
    uses. ``timestamp`` stamps the title slide and document properties; without it the file is
    byte-for-byte reproducible.
    """
    bundle = gather(
        source, scenario, alternatives, analyses, run_compare, time_limit_s, recommendation
    )
    data = build_deck(bundle, template, timestamp)
    return write_atomic(path, data)
