"""Exports a reviewer can hand on: a slide deck, a standalone report, chart images, plan data.

``deck`` writes a PowerPoint file (16:9, or a company template's size and theme), ``report`` a self-contained HTML file and a Markdown
version, ``images`` every chart as PNG (2×) and SVG, ``frames`` the plan's tables as CSV and
JSON. Each takes a solved plan (with its scenario, for alternatives and sources), a scenario
(solved on the way) or a :class:`Bundle` from :func:`gather` (to export one solve many ways).
All are deterministic (no timestamps unless asked) and written atomically. ``build_deck`` and
``report_html`` give the same deck and HTML as bytes and text, for a download button.
"""

from cluster_decide.export.assets import frames, images
from cluster_decide.export.assumptions import key_assumptions
from cluster_decide.export.content import Bundle, gather, headline, sections, standard_analyses
from cluster_decide.export.pilot import pilot_plan
from cluster_decide.export.reports import report, report_html
from cluster_decide.export.slides import build_deck, deck

__all__ = [
    "Bundle",
    "build_deck",
    "deck",
    "frames",
    "gather",
    "headline",
    "images",
    "key_assumptions",
    "pilot_plan",
    "report",
    "report_html",
    "sections",
    "standard_analyses",
]
