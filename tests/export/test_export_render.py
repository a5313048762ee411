"""The deck rendered by LibreOffice: one PDF page per slide, no blank page, no text below the
footer line or off the page (the check that text fits its boxes)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from pptx import Presentation

pytestmark = pytest.mark.slow
FOOTER_TOP_PT = (7.5 - 0.45) * 72
"""Where the footer line starts on a 7.5-inch slide, in PDF points."""


@pytest.fixture(scope="module")
def pdf(deck_path: Path, tmp_path_factory: pytest.TempPathFactory, render_tools: None) -> Path:
    out = tmp_path_factory.mktemp("pdf")
    subprocess.run(
        ["libreoffice", "--headless", "--convert-to", "pdf", "--outdir", str(out), str(deck_path)],
        check=True,
        capture_output=True,
        timeout=120,
        env={"HOME": str(out), "PATH": "/usr/bin:/bin"},
    )
    return out / f"{deck_path.stem}.pdf"


def test_one_page_per_slide_and_none_blank(pdf: Path, deck_path: Path) -> None:
    subprocess.run(["pdftoppm", "-png", "-r", "40", str(pdf), str(pdf.parent / "page")], check=True)
    pages = sorted(pdf.parent.glob("page-*.png"))
    assert len(pages) == len(Presentation(str(deck_path)).slides)
    for page in pages:
        image = Image.open(page).convert("L")
        white = Image.new("L", image.size, 255)
        box = ImageChops.difference(image, white).getbbox()
        assert box is not None, f"{page.name} is blank"
        inked = sum(image.histogram()[:200])
        assert inked > 0.01 * image.size[0] * image.size[1], f"{page.name} is nearly blank"


def test_text_stays_above_the_footer_and_on_the_page(pdf: Path) -> None:
    html = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    pages = html.split("<page ")[1:]
    assert pages
    for n, page in enumerate(pages, start=1):
        width, height = (float(v) for v in re.findall(r'(?:width|height)="([\d.]+)"', page)[:2])
        for y_min, x_max, y_max, word in re.findall(
            r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)',
            page,
        ):
            assert float(x_max) <= width + 0.5 and float(y_max) <= height + 0.5, (n, word)
            if float(y_min) < FOOTER_TOP_PT - 2:
                assert float(y_max) <= FOOTER_TOP_PT, f"page {n}: '{word}' runs into the footer"
