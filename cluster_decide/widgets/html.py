"""HTML pieces of the answer: headline, reasons, tables, messages and chart frames.

Plain strings, so they are cheap to build on every change and easy to test; every piece uses
the chart palette and escapes what it quotes.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from cluster_decide.charts import ARCHETYPE_LABELS, INK, PALETTE, PLATFORM_COLORS, PLATFORM_LABELS
from cluster_decide.explain import ARCHETYPE_WORDS, money
from cluster_decide.plan import Plan, Status

__all__ = [
    "STYLE",
    "archetype_label",
    "busy_html",
    "chart_html",
    "download_link",
    "headline_html",
    "message_html",
    "reasons_html",
    "relaxations_html",
    "staffing_sentence",
    "table_html",
]

STYLE = f"""<style>
.cd {{ font-family: 'Liberation Sans', 'DejaVu Sans', Arial, sans-serif; color: {INK}; }}
.cd-headline {{ border-left: 8px solid {PALETTE["blue"]}; padding: 6px 14px; margin: 4px 0 8px; }}
.cd-headline.cd-infeasible {{ border-left-color: {PALETTE["vermilion"]}; }}
.cd-arch {{ font-size: 26px; font-weight: 700; line-height: 1.2; }}
.cd-cost {{ font-size: 22px; margin-top: 2px; }}
.cd-staff {{ font-size: 16px; margin-top: 4px; }}
.cd-status {{ display: inline-block; font-size: 14px; padding: 1px 8px; border-radius: 10px;
  background: {PALETTE["yellow"]}; color: {INK}; margin-left: 8px; vertical-align: middle; }}
.cd-msg {{ font-size: 15px; padding: 8px 12px; border-radius: 4px; margin: 4px 0; }}
.cd-msg-error {{ background: #FBE3D6; border-left: 6px solid {PALETTE["vermilion"]}; }}
.cd-msg-info {{ background: #E1F0FA; border-left: 6px solid {PALETTE["blue"]}; }}
.cd-msg pre {{ white-space: pre-wrap; margin: 4px 0 0; font-size: 14px; }}
.cd-reasons {{ font-size: 15px; line-height: 1.45; margin: 4px 0; padding-left: 22px; }}
.cd-table {{ border-collapse: collapse; font-size: 15px; margin: 4px 0; }}
.cd-table th {{ text-align: left; border-bottom: 2px solid {INK}; padding: 4px 12px 4px 0; }}
.cd-table td {{ border-bottom: 1px solid {PALETTE["light"]}; padding: 4px 12px 4px 0; }}
.cd-table td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.cd-up {{ color: {PALETTE["vermilion"]}; font-weight: 700; }}
.cd-down {{ color: {PALETTE["blue"]}; font-weight: 700; }}
.cd-chip {{ display: inline-block; width: 12px; height: 12px; border-radius: 2px;
  margin-right: 6px; vertical-align: middle; }}
.cd-busy {{ font-size: 14px; color: {INK}; height: 20px; }}
.cd-busy .cd-dot {{ display: inline-block; width: 10px; height: 10px; border-radius: 50%;
  background: {PALETTE["orange"]}; margin-right: 6px; animation: cd-pulse 0.8s infinite alternate; }}
@keyframes cd-pulse {{ from {{ opacity: 0.25; }} to {{ opacity: 1; }} }}
.cd-chart svg {{ max-width: 100%; height: auto; }}
.jupyter-widgets.widget-tab.cd-tabs > .lm-TabBar .lm-TabBar-tab {{ flex: 0 0 auto; }}
.cd-download a {{ font-size: 15px; color: {PALETTE["blue"]}; text-decoration: underline; }}
</style>"""
"""CSS for every piece below; shown once per app in an HTML widget."""

_SKILL_WORDS = {"hpc": "HPC", "kubernetes": "Kubernetes"}


def _e(text: Any) -> str:
    return html.escape(str(text))


def staffing_sentence(plan: Plan) -> str:
    """Who the plan needs, and the change from today's team (hires or idle staff)."""
    parts, changes = [], []
    for r in plan.staffing.iter_rows(named=True):
        skill = _SKILL_WORDS.get(r["skill"], r["skill"])
        if r["required_fte"] > 0:
            parts.append(f"{r['required_fte']:.1f} {skill} FTE")
        if r["hires"]:
            changes.append(f"hire {r['hires']} {skill}")
        elif r["idle_fte"] >= 0.5:
            changes.append(f"{r['idle_fte']:.1f} {skill} FTE freed")
    need = "Needs " + " and ".join(parts) if parts else "Needs no operations staff"
    return need + (f" ({'; '.join(changes)})" if changes else " (today's team)")


def headline_html(plan: Plan) -> str:
    """Architecture in words, monthly cost and staffing change, with the status if not optimal."""
    if not plan.feasible:
        first = plan.relaxations["sentence"][0] if plan.relaxations.height else ""
        why = next((s for s in plan.explanations if s.startswith("Why")), "")
        return (
            '<div class="cd cd-headline cd-infeasible" data-total="" data-archetype="">'
            '<div class="cd-arch">No feasible plan</div>'
            f'<div class="cd-cost">{_e(why)}</div>'
            + (f'<div class="cd-staff"><b>Smallest fix:</b> {_e(first)}</div>' if first else "")
            + "</div>"
        )
    words = ARCHETYPE_WORDS.get(plan.archetype or "", plan.archetype or "")
    status = ""
    if plan.status is not Status.OPTIMAL:
        status = (
            f'<span class="cd-status">{_e(plan.status.value)}: within {plan.gap:.1%} of optimal'
            " (time limit)</span>"
        )
    return (
        f'<div class="cd cd-headline" data-total="{plan.total_monthly_usd:.2f}" '
        f'data-archetype="{_e(plan.archetype or "")}">'
        f'<div class="cd-arch">{_e(words[0].upper() + words[1:])}{status}</div>'
        f'<div class="cd-cost"><b>{money(plan.total_monthly_usd)}</b> a month '
        f"({money(plan.cash_monthly_usd)} cash)</div>"
        f'<div class="cd-staff">{_e(staffing_sentence(plan))}</div>'
        "</div>"
    )


def reasons_html(plan: Plan, limit: int | None = None) -> str:
    """The plan's reasons as a bulleted list (the first ``limit`` after the headline sentence)."""
    sentences = plan.explanations[1:] if plan.feasible else plan.explanations
    if limit is not None:
        # The headline already says the cost and the staffing: the first two sentences.
        sentences = _top_reasons(sentences[1:], limit) if plan.feasible else sentences[:limit]
    items = "".join(f"<li>{_e(s)}</li>" for s in sentences)
    return f'<ul class="cd cd-reasons">{items}</ul>'


def _top_reasons(sentences: Sequence[str], limit: int) -> list[str]:
    """What binds first (staff, budget), then the workload reasons in the scenario's order."""
    binding = [s for s in sentences if "binds" in s]
    rest = [s for s in sentences if s not in binding]
    return (binding + rest)[:limit]


def relaxations_html(plan: Plan) -> str:
    """The smallest changes that make an infeasible scenario work, smallest first."""
    if plan.feasible or plan.relaxations.height == 0:
        return ""
    sentences = dict.fromkeys(plan.relaxations["sentence"].to_list())  # once each, in order
    items = "".join(f"<li>{_e(s)}</li>" for s in sentences)
    return (
        '<div class="cd cd-msg cd-msg-info"><b>Smallest changes that make it work</b>'
        f'<ul class="cd-reasons">{items}</ul></div>'
    )


def message_html(text: str, level: str = "error") -> str:
    """A message box; multi-line text (e.g. every problem in a scenario file) keeps its lines."""
    first, _, rest = text.partition("\n")
    body = f"<pre>{_e(rest)}</pre>" if rest else ""
    return f'<div class="cd cd-msg cd-msg-{level}">{_e(first)}{body}</div>'


def busy_html(busy: bool) -> str:
    """The small busy indicator: a pulsing dot while solving, empty (same height) otherwise."""
    inner = '<span class="cd-dot"></span>Solving…' if busy else ""
    return f'<div class="cd cd-busy" data-busy="{str(busy).lower()}">{inner}</div>'


def chart_html(name: str, svg: str) -> str:
    """A rendered chart in a frame the tests and the browser can find by name."""
    return f'<div class="cd-chart" data-chart="{_e(name)}">{svg}</div>'


def _cell(value: Any) -> tuple[str, bool]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–", True
    if isinstance(value, bool):
        return ("yes" if value else "no"), False
    if isinstance(value, float):
        return (f"{value:,.1f}" if abs(value) < 1e4 else f"{value:,.0f}"), True
    if isinstance(value, int):
        return f"{value:,}", True
    return _e(value), False


def table_html(frame: pl.DataFrame, columns: dict[str, str] | None = None) -> str:
    """A frame as a readable table; ``columns`` picks and renames columns (key → header)."""
    columns = columns or {c: c for c in frame.columns}
    head = "".join(f"<th>{_e(h)}</th>" for h in columns.values())
    rows = []
    for r in frame.iter_rows(named=True):
        cells = []
        for c in columns:
            value = r[c]
            if c == "platform" and value in PLATFORM_LABELS:
                chip = f'<span class="cd-chip" style="background:{PLATFORM_COLORS[value]}"></span>'
                cells.append(f"<td>{chip}{_e(PLATFORM_LABELS[value])}</td>")
                continue
            if c == "share" and isinstance(value, float):
                cells.append(f'<td class="num">{value:.0%}</td>')
                continue
            text, num = _cell(value)
            cells.append(f'<td class="num">{text}</td>' if num else f"<td>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="cd cd-table"><tr>{head}</tr>{"".join(rows)}</table>'


def archetype_label(archetype: str | None) -> str:
    """Short archetype name for tables."""
    return ARCHETYPE_LABELS.get(archetype or "", "none (infeasible)")


def download_link(
    content: str | bytes, filename: str, label: str, mime: str = "application/toml"
) -> str:
    """A link that downloads ``content`` as a file, with no server round trip (works in Voila)."""
    raw = content.encode("utf-8") if isinstance(content, str) else content
    data = base64.b64encode(raw).decode("ascii")
    return (
        f'<div class="cd cd-download"><a download="{_e(filename)}" '
        f'href="data:{mime};base64,{data}">{_e(label)}</a></div>'
    )
