"""The live dashboard's hand-drawn SVGs against the Altair charts they stand in for.

Both are rendered for the same plans and read back from their SVG text: the same bars (by
label, in order, of the same colour and relative length), the same value labels, titles and
legend entries. A change to one drawing that the other does not follow fails here.
"""

from __future__ import annotations

import html
import re
from collections import Counter

import pytest

import cluster_decide as cd
from cluster_decide import charts


@pytest.fixture(scope="module", params=["enterprise-mixed", "inference-platform"])
def plan(request: pytest.FixtureRequest) -> cd.Plan:
    return cd.solve(cd.load_scenario(request.param))


def _texts(svg: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def _altair_bars(svg: str) -> list[tuple[str, str, float]]:
    """(component, colour, length) of each bar vega drew, top to bottom."""
    bars = re.findall(
        r'<path aria-label="[^"]*component: ([^;"]*);[^"]*" role="graphics-symbol" '
        r'aria-roledescription="bar" d="M0,([\d.e-]+)h([\d.e-]+)[^"]*" fill="([^"]*)"',
        svg,
    )
    rows = sorted((float(y), html.unescape(c), fill, float(w)) for c, y, w, fill in bars)
    return [(c, fill, w) for _y, c, fill, w in rows]


def _hand_bars(svg: str) -> list[tuple[str, str, float]]:
    """(component, colour, length) of each bar of the hand-drawn cost chart, top to bottom."""
    bars = re.findall(
        r'text-anchor="end"[^>]*>([^<]*)</text><rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" '
        r'height="\d+" fill="([^"]*)">',
        svg,
    )
    return [(html.unescape(c), fill, float(w)) for c, w, fill in bars]


def test_the_cost_bars_labels_and_colours_agree(plan: cd.Plan) -> None:
    drawn = charts.to_svg(charts.cost_breakdown(plan))
    hand = charts.cost_svg(plan)
    vega, mine = _altair_bars(drawn), _hand_bars(hand)
    assert len(vega) == plan.costs.filter(plan.costs["monthly_usd"] > 0).height
    assert [(c, f) for c, f, _ in mine] == [(c, f) for c, f, _ in vega]
    # Lengths on each chart's own scale: each bar's share of the largest agrees to 0.1%; a cost
    # under a pixel is drawn one pixel long by hand, so it stays visible (the default's add-on
    # install, $246 a month beside $342k of GPU capacity).
    for (c, _f, a), (_c, _g, b) in zip(mine, vega, strict=True):
        share = max(b / vega[0][2], 1.0 / mine[0][2])
        assert a / mine[0][2] == pytest.approx(share, abs=1e-3), c
    values = re.findall(r'aria-roledescription="text mark"[^>]*>([^<]*)</text>', drawn)
    assert [t for t in _texts(hand) if t.startswith("$")] == values
    for words in ("Monthly cost", "cash spend", "estimated effort"):
        assert words in _texts(drawn) and words in _texts(hand)
    subtitle = [t for t in _texts(drawn) if t.startswith("Total ")]
    assert subtitle and subtitle[0] in _texts(hand)


def test_the_architecture_says_the_same_words(plan: cd.Plan) -> None:
    drawn, hand = (
        _texts(charts.to_svg(charts.architecture(plan))),
        _texts(charts.architecture_svg(plan)),
    )
    # Every block's header and lines, the title, the subtitle and the legend (in any order).
    assert Counter(hand) == Counter(drawn)
