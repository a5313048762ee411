"""The deck rendered by LibreOffice, in the house layout and in two company templates (a 4:3
serif one and a 16:9 corporate one, built by ``templates/make_templates.py``): read back from
the rendered pages, no text runs outside its box or off the page, and no number or word is
split across lines.

Skipped, saying why, when LibreOffice or poppler is not installed.
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pptx import Presentation
from pptx.util import Inches

from cluster_decide.export import Bundle, deck

pytestmark = pytest.mark.slow
TEMPLATES = Path(__file__).parent / "templates"
EMU_PER_PT = 12700
SLACK_PT = 3.0
"""How far a word may stand outside its box: LibreOffice's rounding, not an overflow."""
SLACK_LINE = 0.12
"""pdftotext's word box spans the font's whole ascent and descent (about 1.25 em, more than
the glyphs): this share of a word's height may stick out of its box."""
_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)')
_NUMBER = re.compile(r"[$]?\d[\d,.]*(?:[kM×%]|\b)")


@pytest.fixture(scope="module", params=["house", "serif-4x3", "corporate-16x9"])
def rendered(
    request: pytest.FixtureRequest,
    bundle: Bundle,
    tmp_path_factory: pytest.TempPathFactory,
    render_tools: None,
) -> tuple[Path, Path]:
    """(deck, its PDF) for one template."""
    out = tmp_path_factory.mktemp(request.param)
    template = None if request.param == "house" else TEMPLATES / f"{request.param}.pptx"
    path = deck(bundle, out / f"{request.param}.pptx", template=template)
    subprocess.run(
        ["libreoffice", "--headless", "--convert-to", "pdf", "--outdir", str(out), str(path)],
        check=True,
        capture_output=True,
        timeout=180,
        env={"HOME": str(out), "PATH": "/usr/bin:/bin"},
    )
    return path, out / f"{path.stem}.pdf"


def _pages(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """Each page's size and its words with their boxes, in points."""
    text = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    pages = []
    for page in text.split("<page ")[1:]:
        width, height = (float(v) for v in re.findall(r'(?:width|height)="([\d.]+)"', page)[:2])
        words = [
            (float(a), float(b), float(c), float(d), __import__("html").unescape(w))
            for a, b, c, d, w in _WORD.findall(page)
        ]
        pages.append((width, height, words))
    return pages


def _boxes(slide: Any) -> list[tuple[float, float, float, float]]:
    """The boxes text may occupy on a slide: its own shapes and its master's and layout's."""
    shapes = [*slide.shapes, *slide.slide_layout.shapes, *slide.slide_layout.slide_master.shapes]
    out = []
    for s in shapes:
        if s.left is None or s.width is None:
            continue
        if not (s.has_text_frame or getattr(s, "has_table", False)):
            continue
        if s.is_placeholder and s not in slide.shapes and not s.has_text_frame:
            continue
        if s.is_placeholder and s not in list(slide.shapes):
            continue  # a layout's empty placeholder prints nothing
        x, y = s.left / EMU_PER_PT, s.top / EMU_PER_PT
        out.append((x, y, x + s.width / EMU_PER_PT, y + s.height / EMU_PER_PT))
    return out


def _slide_words(slide: Any) -> list[str]:
    text = []
    for shape in slide.shapes:
        if shape.has_text_frame:
            text.append(shape.text_frame.text)
        if shape.has_table:
            text += [c.text for row in shape.table.rows for c in row.cells]
    return " ".join(text).split()


def test_one_page_per_slide_and_nothing_off_the_page(rendered: tuple[Path, Path]) -> None:
    path, pdf = rendered
    pages = _pages(pdf)
    assert len(pages) == len(Presentation(str(path)).slides)
    for n, (width, height, words) in enumerate(pages, start=1):
        assert words, f"page {n} has no text"
        for x0, y0, x1, y1, word in words:
            assert x0 >= -0.5 and y0 >= -0.5, (n, word)
            assert x1 <= width + 0.5 and y1 <= height + 0.5, (n, word)


def test_no_text_overflows_its_box(rendered: tuple[Path, Path]) -> None:
    path, pdf = rendered
    slides = list(Presentation(str(path)).slides)
    for n, ((_w, _h, words), slide) in enumerate(zip(_pages(pdf), slides, strict=True), start=1):
        boxes = _boxes(slide)
        for x0, y0, x1, y1, word in words:
            dy = max(SLACK_PT, SLACK_LINE * (y1 - y0))
            inside = any(
                x0 >= bx0 - SLACK_PT and y0 >= by0 - dy and x1 <= bx1 + SLACK_PT and y1 <= by1 + dy
                for bx0, by0, bx1, by1 in boxes
            )
            assert inside, f"{path.stem} page {n}: '{word}' is outside every text box"


def test_no_number_or_word_is_split_across_lines(rendered: tuple[Path, Path]) -> None:
    """Every number, and every word in the slide's text, prints whole on the rendered page.

    A split shows as a fragment ("$1.25" then "M", "Architect" then "ure"): the whole token is
    then missing from the page's words. A hyphenated word or range (on-demand, 30-50%) may
    break after its hyphen, as typesetting does.
    """
    path, pdf = rendered
    slides = list(Presentation(str(path)).slides)
    for n, ((_w, _h, words), slide) in enumerate(zip(_pages(pdf), slides, strict=True), start=1):
        printed = {w for *_box, w in words}
        parts = {p.strip(".,;:()") for w in printed for p in re.split(r"(?<=-)", w)}
        for token in _slide_words(slide):
            token = token.strip(".,;:()")
            if not token or token in printed:
                continue
            pieces = [p for p in re.split(r"(?<=-)", token) if p]
            if len(pieces) > 1 and all(p.strip("()") in parts for p in pieces):
                continue
            kind = "number" if _NUMBER.fullmatch(token) else "word"
            assert any(token in w for w in printed), (
                f"{path.stem} page {n}: the {kind} '{token}' is split"
            )


def test_no_text_prints_over_other_text(rendered: tuple[Path, Path]) -> None:
    """No two words overlap: a footer over the master's own footer line, a headline run under
    a tile, a table over a chart's caption all show as overlapping words."""
    path, pdf = rendered
    for n, (_w, _h, words) in enumerate(_pages(pdf), start=1):
        for i, (ax0, ay0, ax1, ay1, a) in enumerate(words):
            for bx0, by0, bx1, by1, b in words[i + 1 :]:
                dx = min(ax1, bx1) - max(ax0, bx0)
                dy = min(ay1, by1) - max(ay0, by0)
                if dx <= 0 or dy <= 0:
                    continue
                smaller = min((ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0))
                assert dx * dy < 0.3 * smaller, f"{path.stem} page {n}: '{a}' prints over '{b}'"


def test_the_templates_footer_placeholders_carry_the_footer(bundle: Bundle, tmp_path: Path) -> None:
    """The serif template has footer and slide-number placeholders: the deck fills them (and
    draws no footer of its own); the corporate one has none: the deck draws its footer above
    the line the master prints at the bottom."""
    serif = Presentation(
        str(deck(bundle, tmp_path / "s.pptx", template=TEMPLATES / "serif-4x3.pptx"))
    )
    for n, slide in enumerate(list(serif.slides)[1:], start=2):
        kinds = {ph.placeholder_format.type: ph.text_frame.text for ph in slide.placeholders}
        assert kinds.get(15) == bundle.plan.scenario  # FOOTER
        assert kinds.get(13) == f"{n} / {len(serif.slides)}"  # SLIDE_NUMBER
        assert not any(
            s.has_text_frame and s.text_frame.text == bundle.plan.scenario and not s.is_placeholder
            for s in slide.shapes
        )
    corporate = deck(bundle, tmp_path / "c.pptx", template=TEMPLATES / "corporate-16x9.pptx")
    prs = Presentation(str(corporate))
    master_line = min(
        s.top for s in prs.slide_master.shapes if not s.is_placeholder and s.top > Inches(6)
    )
    for slide in list(prs.slides)[1:]:
        footer = [
            s
            for s in slide.shapes
            if s.has_text_frame and s.text_frame.text == bundle.plan.scenario
        ]
        assert footer and footer[0].top + footer[0].height <= master_line


HOUSE_BLUE = (0x00, 0x72, 0xB2)
"""The house accent (the charts' Okabe-Ito blue): a company template's deck must not show it."""


def _near(colour: tuple[int, ...], target: tuple[int, ...], tol: int = 14) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(colour, target, strict=False))


def _count(image: Any, target: tuple[int, ...]) -> int:
    """Pixels of ``image`` within a small tolerance of ``target`` (anti-aliasing aside)."""
    colours = image.convert("RGB").getcolors(1 << 24) or []
    return sum(n for n, c in colours if _near(c, target))


def _accent(template: Path) -> tuple[int, int, int]:
    """The template theme's accent1 colour, read from its theme XML."""
    prs = Presentation(str(template))
    xml = next(
        r.target_part.blob.decode("utf-8")
        for r in prs.slide_master.part.rels.values()
        if r.reltype.endswith("/theme")
    )
    found = re.search(r'<a:accent1>\s*<a:srgbClr val="([0-9A-Fa-f]{6})"', xml)
    assert found is not None
    hex_colour = found.group(1)
    return tuple(int(hex_colour[i : i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]


def test_a_templates_deck_takes_its_colours_from_the_theme(
    rendered: tuple[Path, Path], tmp_path: Path
) -> None:
    """In the corporate (teal) and serif (wine) templates no rendered page shows the house blue:
    title accents, tiles, tables and every chart take the theme's accent, and the charts show
    it. (Before, tables took the accent while title bars and charts stayed blue.)"""
    from PIL import Image

    path, pdf = rendered
    if path.stem == "house":
        pytest.skip("the house layout is the house colours")
    subprocess.run(
        ["pdftoppm", "-png", "-r", "30", str(pdf), str(tmp_path / "page")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    pages = sorted(tmp_path.glob("page*.png"))
    assert len(pages) == len(Presentation(str(path)).slides)
    for n, page in enumerate(pages, start=1):
        with Image.open(page) as im:
            assert _count(im, HOUSE_BLUE) == 0, f"{path.stem} page {n} shows the house blue"
    accent = _accent(TEMPLATES / f"{path.stem}.pptx")
    charts = [
        shape.image.blob
        for slide in Presentation(str(path)).slides
        for shape in slide.shapes
        if shape.shape_type == 13  # PICTURE
    ]
    assert charts, f"{path.stem}: the deck has charts"
    with_accent = 0
    for blob in charts:
        with Image.open(io.BytesIO(blob)) as im:
            assert _count(im, HOUSE_BLUE) == 0, f"{path.stem}: a chart is drawn in the house blue"
            with_accent += _count(im, accent) > 0
    assert with_accent >= len(charts) // 2, f"{path.stem}: the charts do not use the theme accent"


def test_the_deck_prints_nothing_over_the_masters_own_text(rendered: tuple[Path, Path]) -> None:
    """The master's own lines (the corporate template's company name, bottom right; the serif
    one's confidentiality line, bottom left) print alone: no footer, page number or other
    text of the deck lands in their boxes. (Before, the page number printed inside the
    corporate company name's box, on the same line.)"""
    path, pdf = rendered
    prs = Presentation(str(path))
    master = [
        s
        for s in prs.slide_master.shapes
        if not s.is_placeholder and s.has_text_frame and s.text_frame.text.strip()
    ]
    if not master:
        pytest.skip("the house master prints no text of its own")
    own = {w for s in master for w in s.text_frame.text.split()}
    boxes = [
        (
            s.left / EMU_PER_PT,
            s.top / EMU_PER_PT,
            (s.left + s.width) / EMU_PER_PT,
            (s.top + s.height) / EMU_PER_PT,
        )
        for s in master
    ]
    for n, (_w, _h, words) in enumerate(_pages(pdf), start=1):
        for x0, y0, x1, y1, word in words:
            if word in own:
                continue
            for bx0, by0, bx1, by1 in boxes:
                dx = min(x1, bx1) - max(x0, bx0)
                dy = min(y1, by1) - max(y0, by0)
                assert dx <= 0 or dy <= 0, (
                    f"{path.stem} page {n}: '{word}' prints in the master's box"
                )
