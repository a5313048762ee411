"""The current answer as one self-contained page: what to print, mail or attach to the minutes.

Headline, the reasons, the fixes when no plan fits, the architecture and cost charts and the
settings it was solved for, in one HTML file with the app's styles and a print stylesheet that
keeps it to one landscape page. Built from the drawings already on screen, so it costs nothing.
"""

from __future__ import annotations

import html

from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan
from cluster_decide.widgets.answer import AnswerPanel
from cluster_decide.widgets.html import (
    STYLE,
    headline_html,
    reasons_html,
    relaxations_html,
)

__all__ = ["one_page_html"]

_PAGE_CSS = """<style>
body { margin: 16px 24px; }
.cd-row { display: flex; gap: 16px; align-items: flex-start; }
.cd-row > div { flex: 1 1 0; min-width: 0; }
.cd-row svg { width: 100%; height: auto; max-height: 330px; }
.cd-foot { font-size: 12px; color: #555; margin-top: 6px; }
@media print { @page { size: A4 landscape; margin: 8mm; } body { margin: 0; }
  .cd-reasons details > *:not(summary) { display: none; } }
</style>"""


def one_page_html(plan: Plan, scn: Scenario, answer: AnswerPanel, title: str) -> str:
    """A standalone page of ``plan`` (solved for ``scn``), using ``answer``'s drawings."""
    charts = ""
    if plan.feasible:
        parts = [answer._html(n, plan) for n in ("architecture", "costs")]
        charts = '<div class="cd-row">' + "".join(f"<div>{p}</div>" for p in parts) + "</div>"
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>{STYLE}{_PAGE_CSS}</head><body>"
        f'<div class="cd cd-app-title">{html.escape(title)}</div>'
        f'<div class="cd cd-small">Scenario: {html.escape(scn.name)}</div>'
        + headline_html(plan)
        + relaxations_html(plan)
        + reasons_html(plan, 3)
        + charts
        + '<div class="cd cd-foot">Solved by an optimization model (OR-Tools CP-SAT); the same '
        "settings always give this answer.</div></body></html>"
    )
