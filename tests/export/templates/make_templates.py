"""Build the two company templates the export tests render through (run to regenerate them).

``serif-4x3.pptx``: a 4:3 master with a serif theme font (DejaVu Serif, wide), a wine accent,
a title placeholder lower and shorter than python-pptx's default, its own footer and slide
number placeholders, and a confidentiality line the master draws at the bottom.
``corporate-16x9.pptx``: a 16:9 master in a narrow sans font with a teal accent, a band across
the top, a company name at the bottom right and no footer placeholders at all.

    python tests/export/templates/make_templates.py
"""

from __future__ import annotations

import copy
import io
import re
import zipfile
from pathlib import Path
from typing import Any

from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_SHAPE
from pptx.oxml.ns import qn
from pptx.util import Emu, Inches, Pt

HERE = Path(__file__).parent


def _theme(prs: Any, font: str, heading: str, accent: str, ink: str) -> None:
    part = next(
        r.target_part for r in prs.slide_master.part.rels.values() if r.reltype.endswith("/theme")
    )
    xml = part.blob.decode("utf-8")
    xml = re.sub(r'(<a:majorFont>\s*<a:latin typeface=")[^"]*', rf"\g<1>{heading}", xml, count=1)
    xml = re.sub(r'(<a:minorFont>\s*<a:latin typeface=")[^"]*', rf"\g<1>{font}", xml, count=1)
    xml = re.sub(
        r"<a:accent1>.*?</a:accent1>",
        f'<a:accent1><a:srgbClr val="{accent}"/></a:accent1>',
        xml,
        flags=re.S,
    )
    xml = re.sub(r"<a:dk1>.*?</a:dk1>", f'<a:dk1><a:srgbClr val="{ink}"/></a:dk1>', xml, flags=re.S)
    part._blob = xml.encode("utf-8")


def _scratch(prs: Any) -> Any:
    """A blank slide to draw shapes on before they move to the master."""
    return prs.slides.add_slide(prs.slide_layouts[6])


def _to_master(prs: Any, scratch: Any) -> None:
    """Move the scratch slide's shapes onto the master and drop the slide."""
    tree = prs.slide_master.shapes._spTree
    for shape in list(scratch.shapes):
        tree.append(copy.deepcopy(shape._element))
    ids = prs.slides._sldIdLst
    for sld in list(ids):
        prs.part.drop_rel(sld.rId)
        ids.remove(sld)


def _master_text(prs: Any, text: str, box: tuple[float, float, float, float]) -> None:
    scratch = _scratch(prs)
    shape = scratch.shapes.add_textbox(*(Inches(v) for v in box))
    shape.text_frame.text = text
    run = shape.text_frame.paragraphs[0].runs[0]
    run.font.size = Pt(10)
    run.font.color.rgb = RGBColor(0x59, 0x59, 0x59)
    _to_master(prs, scratch)


def _scale_layouts(prs: Any, sx: float) -> None:
    """Stretch the master's and layouts' placeholders horizontally (4:3 → 16:9)."""
    for owner in [prs.slide_master, *prs.slide_layouts]:
        for ph in owner.placeholders:
            if ph._element.spPr.find(qn("a:xfrm")) is not None:  # its own box, not inherited
                ph.left, ph.width = Emu(int(ph.left * sx)), Emu(int(ph.width * sx))


def _save(prs: Any, name: str) -> None:
    raw = io.BytesIO()
    prs.save(raw)
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(member, src.read(info.filename))
    (HERE / name).write_bytes(out.getvalue())


def serif_4x3() -> None:
    prs = Presentation()
    _theme(prs, "DejaVu Serif", "DejaVu Serif", "7B1E3A", "222222")
    for layout in prs.slide_layouts:
        if layout.name == "Title Only":
            title = layout.placeholders[0]
            title.top, title.height = Inches(0.45), Inches(0.95)
    _master_text(prs, "ACME Corp · Confidential", (0.4, 7.05, 3.5, 0.3))
    sample = prs.slides.add_slide(prs.slide_layouts[0])
    sample.shapes.title.text = "A sample slide the export drops"
    _save(prs, "serif-4x3.pptx")


def corporate_16x9() -> None:
    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
    _scale_layouts(prs, 13.333 / 10)
    _theme(prs, "Liberation Sans Narrow", "Liberation Sans", "00857C", "1B2631")
    for owner in [prs.slide_master, *prs.slide_layouts]:
        for ph in list(owner.placeholders):
            if ph.placeholder_format.type in (13, 15, 16):  # slide number, footer, date
                ph._element.getparent().remove(ph._element)
    scratch = _scratch(prs)
    band = scratch.shapes.add_shape(MSO_SHAPE.RECTANGLE, 0, 0, prs.slide_width, Inches(0.18))
    band.fill.solid()
    band.fill.fore_color.rgb = RGBColor(0x00, 0x85, 0x7C)
    band.line.fill.background()
    _to_master(prs, scratch)
    _master_text(prs, "Corporate Inc.", (11.2, 7.0, 1.8, 0.3))
    _save(prs, "corporate-16x9.pptx")


if __name__ == "__main__":
    serif_4x3()
    corporate_16x9()
