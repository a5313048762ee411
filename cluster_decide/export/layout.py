"""What a deck's template gives: its slide size, title and footer boxes, theme fonts and colours.

A company template is measured, not assumed: the title goes where the template's title
placeholder is, the body fills the space between it and the footer, the footer text goes into
the template's own footer and slide-number placeholders, and accents take the theme's colour.
Text is fitted with the widths of the theme's actual fonts (the font files fontconfig finds,
the same ones LibreOffice renders with), so a line wraps where the renderer wraps it and a
word or number is never split: a box that cannot hold its text shrinks the text instead.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from PIL import ImageFont

from cluster_decide.style import INK, PALETTE

__all__ = ["EMU_PER_IN", "Geometry", "Metrics", "Theme", "metrics", "theme_of"]

EMU_PER_IN: Final = 914400
_TITLE: Final = (1, 3)  # TITLE, CENTER_TITLE
_FOOTER: Final = 15
_SLIDE_NUMBER: Final = 13
_SERIF: Final = re.compile(r"serif|times|georgia|cambria|garamond|book|roman|palatino", re.I)


@dataclass(frozen=True)
class Theme:
    """The template's theme: heading and body font families, accent and text colours (hex)."""

    heading_font: str
    body_font: str
    accent: str
    ink: str


def _colour(xml: str, name: str) -> str | None:
    block = re.search(rf"<a:{name}>(.*?)</a:{name}>", xml, re.S)
    if block is None:
        return None
    rgb = re.search(r'srgbClr val="([0-9A-Fa-f]{6})"', block.group(1)) or re.search(
        r'lastClr="([0-9A-Fa-f]{6})"', block.group(1)
    )
    return f"#{rgb.group(1).upper()}" if rgb else None


def theme_of(prs: Any, templated: bool) -> Theme:
    """The presentation's theme; without a company template, the house colours."""
    xml = ""
    for rel in prs.slide_master.part.rels.values():
        if rel.reltype.endswith("/theme"):
            xml = rel.target_part.blob.decode("utf-8", "replace")
    fonts = dict(re.findall(r'<a:(majorFont|minorFont)>\s*<a:latin typeface="([^"]*)"', xml))
    heading = fonts.get("majorFont") or "Calibri"
    body = fonts.get("minorFont") or heading
    if not templated:
        return Theme(heading, body, PALETTE["blue"], INK)
    accent = _colour(xml, "accent1") or PALETTE["blue"]
    ink = _colour(xml, "dk1") or INK
    return Theme(heading, body, accent, ink)


@lru_cache(maxsize=32)
def _font_file(family: str, bold: bool) -> str | None:
    """The font file fontconfig (and so LibreOffice) uses for ``family``, if fontconfig runs."""
    if shutil.which("fc-match") is None:
        return None
    pattern = f"{family}:bold" if bold else family
    try:
        out = subprocess.run(
            ["fc-match", "-f", "%{file}", pattern],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out if out.lower().endswith((".ttf", ".otf", ".ttc")) else None


class Metrics:
    """Text widths of one font family at any size (measured from its file, else estimated)."""

    def __init__(self, family: str) -> None:
        self.family = family
        self.fonts: dict[bool, Any] = {}
        self.known: dict[tuple[str, bool], float] = {}
        for bold in (False, True):
            path = _font_file(family, bold)
            if path is not None:
                with contextlib.suppress(OSError):
                    self.fonts[bold] = ImageFont.truetype(path, 100)
        # Estimates when no font file is found: roomy, wider for serif faces.
        self.em = 0.56 if _SERIF.search(family) else 0.52
        self.line = 1.2
        font = self.fonts.get(False)
        if font is not None:
            ascent, descent = font.getmetrics()
            self.line = max(1.17, (ascent + descent) / 100 * 1.02)

    def width(self, text: str, pt: float, bold: bool = False) -> float:
        """Width of ``text`` in inches at ``pt`` points (each text measured once, at 100 pt)."""
        key = (text, bold)
        if key not in self.known:
            font = self.fonts.get(bold) or self.fonts.get(False)
            if font is None:
                self.known[key] = len(text) * 100 * (self.em + (0.04 if bold else 0.0))
            else:
                factor = 1.0 if bold in self.fonts or not bold else 1.06
                self.known[key] = float(font.getlength(text)) * factor
        return self.known[key] * pt / 100 / 72

    def widest_word(self, text: str, pt: float, bold: bool = False) -> float:
        """The widest single word of ``text``: a box narrower than this would split a word."""
        return max((self.width(w, pt, bold) for w in text.split()), default=0.0)

    def lines(self, text: str, width: float, pt: float, bold: bool = False) -> int:
        """How many lines ``text`` wraps to in ``width`` inches (greedy, at spaces only)."""
        space = self.width(" ", pt, bold)
        total = 0
        for para in text.split("\n"):
            n, used = 1, 0.0
            for word in para.split():
                w = self.width(word, pt, bold)
                if used and used + space + w > width:
                    n += 1
                    used = w
                else:
                    used += w + (space if used else 0.0)
            total += n
        return total

    def height(self, text: str, width: float, pt: float, bold: bool = False) -> float:
        """Height in inches of ``text`` wrapped to ``width`` at ``pt``."""
        return self.lines(text, width, pt, bold) * pt * self.line / 72

    def fits(self, text: str, width: float, height: float, pt: float, bold: bool = False) -> bool:
        """Whether ``text`` fits the box at ``pt`` with no word split."""
        return self.widest_word(text, pt, bold) <= width and (
            self.height(text, width, pt, bold) <= height
        )

    def fit(
        self,
        text: str,
        width: float,
        height: float,
        largest: float,
        smallest: float,
        bold: bool = False,
    ) -> float:
        """The largest size (in half points) from ``largest`` down to ``smallest`` that fits."""
        pt = largest
        while pt > smallest and not self.fits(text, width, height, pt, bold):
            pt -= 0.5
        return pt


@lru_cache(maxsize=16)
def metrics(family: str) -> Metrics:
    """Metrics of a font family, measured once per process."""
    return Metrics(family)


@dataclass(frozen=True)
class Geometry:
    """Where things go on a slide, in inches: title box, body box, footer line."""

    width: float
    height: float
    title: tuple[float, float, float, float]
    body_top: float
    body_bottom: float
    margin: float
    footer_top: float
    uses_placeholders: bool

    @property
    def inner(self) -> float:
        """Usable body width."""
        return self.width - 2 * self.margin

    @classmethod
    def house(cls, width: float, height: float) -> Geometry:
        """The default 16:9 layout (no company template)."""
        margin = 0.5 * width / 13.333
        return cls(
            width,
            height,
            (margin + 0.18, 0.3, width - 2 * margin - 0.18, 0.95),
            1.45,
            height - 0.55,
            margin,
            height - 0.45,
            False,
        )

    @classmethod
    def measure(cls, prs: Any, layout: Any) -> Geometry:
        """The layout of a company template, measured.

        Its title placeholder, its footer placeholders and any shapes its master draws near
        the bottom edge (a logo, a confidentiality line) bound the body.
        """
        width = prs.slide_width / EMU_PER_IN
        height = prs.slide_height / EMU_PER_IN

        def box(shape: Any) -> tuple[float, float, float, float]:
            return (
                shape.left / EMU_PER_IN,
                shape.top / EMU_PER_IN,
                shape.width / EMU_PER_IN,
                shape.height / EMU_PER_IN,
            )

        placeholders = {ph.placeholder_format.type: ph for ph in layout.placeholders}
        title_ph = next((placeholders[t] for t in _TITLE if t in placeholders), None)
        margin = 0.5 * width / 13.333
        title = (margin, 0.3, width - 2 * margin, 0.95)
        if title_ph is not None and title_ph.width and title_ph.height:
            tx, ty, tw, th = box(title_ph)
            # Kept on the slide whatever the template says (a box past the edge is clipped).
            tx = min(max(tx, 0.25), width / 3)
            tw = min(tw, width - tx - 0.25)
            if tw > width / 3 and 0 <= ty < height / 3:
                margin = max(0.25, min(tx, width - tx - tw))
                title = (tx, ty, tw, max(0.6, min(th, 1.3)))
        footer_top = height - 0.45
        has_footer = _FOOTER in placeholders or _SLIDE_NUMBER in placeholders
        for t in (_FOOTER, _SLIDE_NUMBER, 16):
            if t in placeholders and placeholders[t].top:
                footer_top = min(footer_top, placeholders[t].top / EMU_PER_IN)
        drawn = [
            shape.top / EMU_PER_IN
            for shape in [*prs.slide_master.shapes, *layout.shapes]
            if not shape.is_placeholder
            and shape.top is not None
            and shape.top / EMU_PER_IN > height * 0.75
        ]
        if drawn:
            # The master prints its own line at the bottom: our footer goes just above it.
            footer_top = min(footer_top, min(drawn) - (0 if has_footer else 0.36))
        body_top = title[1] + title[3] + 0.15
        return cls(
            width,
            height,
            title,
            body_top,
            footer_top - 0.12,
            margin,
            footer_top,
            has_footer,
        )
