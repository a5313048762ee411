"""HTML pieces of the answer: headline, reasons, tables, messages and chart frames.

Plain strings, so they are cheap to build on every change and easy to test; every piece uses
the chart palette and escapes what it quotes.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import Any

import polars as pl

from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, PLATFORM_LABELS, SKILL_SHORT
from cluster_decide.planning.explain import money, split_closing
from cluster_decide.planning.plan import Plan, Status
from cluster_decide.style import INK, PALETTE, PLATFORM_COLORS

__all__ = [
    "STYLE",
    "archetype_label",
    "busy_html",
    "chart_html",
    "download_link",
    "fix_sentence",
    "headline_html",
    "message_html",
    "plain",
    "reasons_html",
    "relaxations_html",
    "staffing_sentence",
    "table_html",
    "unproven_words",
    "verdict_html",
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
.cd, .cd li, .cd-msg, .widget-html-content {{ white-space: normal; overflow-wrap: anywhere; }}
.cd-small {{ font-size: 14px; color: #444; font-weight: 400; }}
.cd-status {{ display: block; width: fit-content; margin: 4px 0 0; }}
.cd-verdict {{ font-size: 15px; margin: 2px 0 6px; min-height: 0; }}
.cd-verdict[data-state=pending] {{ color: #444; }}
.cd-verdict ul.cd-caveats {{ font-size: 14px; line-height: 1.45; color: #333; margin: 6px 0 0;
  padding-left: 20px; }}
.cd-verdict ul.cd-caveats li {{ margin: 0 0 3px; }}
.cd-verdict .cd-dot {{ display: inline-block; width: 9px; height: 9px; border-radius: 50%;
  background: {PALETTE["sky"]}; margin-right: 6px; animation: cd-pulse 0.8s infinite alternate; }}
.cd-change {{ font-size: 15px; background: #FFF6D5; border-left: 6px solid {PALETTE["yellow"]};
  padding: 6px 10px; margin: 2px 0 6px; }}
.cd-reasons details summary {{ cursor: pointer; }}
.cd-reasons details[open] summary {{ margin-bottom: 2px; }}
.cd-scenario-line {{ font-size: 14px; line-height: 1.4; color: #333; }}
.cd-assumptions {{ font-size: 14px; line-height: 1.45; }}
.cd-assumptions a {{ color: {PALETTE["blue"]}; }}
.cd-share a, .cd-actions a {{ font-size: 14px; color: {PALETTE["blue"]}; }}
.cd-answer-col {{ flex: 1 1 600px; min-width: 0; }}
.cd-visible {{ display: flex; flex-wrap: wrap; gap: 0 24px; align-items: flex-start; }}
.cd-visible > .widget-html {{ flex: 1 1 560px; max-width: 900px; min-width: 0; }}
.cd-app-title {{ font-size: 22px; font-weight: 700; margin: 0 0 2px; }}
.cd-answer-col > .widget-html, .cd-controls-col > .widget-html {{ min-height: 0; }}
.cd-answer-col > .widget-html > .widget-html-content:empty {{ display: none; }}
@media print {{
  @page {{ size: A4 landscape; margin: 9mm; }}
  .cd-controls-col, .cd-noprint, .jupyter-widgets.widget-tab > .lm-TabBar {{ display: none !important; }}
  .cd-answer-col {{ width: auto !important; max-width: 100% !important; flex: 1 1 auto !important; }}
  .cd-answer-col .widget-html, .cd-answer-col .widget-box {{ max-width: 100% !important; }}
  .cd-visible {{ flex-wrap: nowrap; }}
  .cd-visible > .widget-html {{ flex: 1 1 0 !important; min-width: 0 !important; }}
  .cd-chart svg {{ max-height: 92mm; width: 100%; }}
  .cd-reasons details > *:not(summary) {{ display: none; }}
  body, .jp-Notebook, #rendered_cells {{ padding: 0 !important; margin: 0 !important; }}
  /* Voila's page is a Lumino layout sized in pixels for the screen: let the paper size it. */
  .jp-LabShell, .lm-BoxPanel, .lm-BoxPanel-child, .jp-Notebook {{ position: static !important;
    width: auto !important; height: auto !important; overflow: visible !important;
    contain: none !important; }}
}}
</style>"""
"""CSS for every piece below; shown once per app in an HTML widget."""


def _e(text: Any) -> str:
    return html.escape(str(text))


def staffing_sentence(plan: Plan) -> str:
    """Who the plan needs, and the change from today's team (hires or idle staff)."""
    parts, changes = [], []
    for r in plan.staffing.iter_rows(named=True):
        skill = SKILL_SHORT.get(r["skill"], r["skill"])
        if r["required_fte"] > 0:
            parts.append(f"{r['required_fte']:.1f} {skill} FTE")
        if r["hires"]:
            changes.append(f"hire {r['hires']} {skill}")
        elif r["idle_fte"] >= 0.5:
            changes.append(f"{r['idle_fte']:.1f} {skill} FTE freed")
    need = "Needs " + " and ".join(parts) if parts else "Needs no operations staff"
    return need + (f" ({'; '.join(changes)})" if changes else " (today's team)")


def unproven_words(plan: Plan) -> str:
    """What a plan that is not proven the cheapest means, in words a meeting can repeat."""
    bound = ""
    if plan.gap and math.isfinite(plan.gap) and plan.gap < 1:
        bound = f"; a cheaper one, if it exists, saves at most {money(plan.gap * plan.total_monthly_usd)} a month"
    return f"Good plan, not proven the cheapest{bound}"


def _pool_words(label: str, found: re.Match[str]) -> str:
    """``the <label>``, capitalized where the pool's name opened the sentence with "The"."""
    return f"{'The' if found.group(0)[0] == 'T' else 'the'} {label}"


def plain(text: str, plan: Plan) -> str:
    """A model sentence in the room's words: pool ids become platform names, no jargon."""
    if plan.pools.height:
        pools = dict(
            zip(plan.pools["pool"].to_list(), plan.pools["platform"].to_list(), strict=True)
        )
        kinds = Counter(pools.values())
        for pool, platform in sorted(pools.items(), key=lambda kv: -len(kv[0])):
            # Two pools of one platform keep their names, or "the Slurm pool" means either.
            label = f"{PLATFORM_LABELS.get(platform, platform)} pool"
            label += f" ({pool})" if kinds[platform] > 1 else ""
            text = re.sub(
                rf"(?<![\w-])([Tt]he )?{re.escape(pool)}(?![\w-])( pool| cluster(?!s))?",
                partial(_pool_words, label),
                text,
            )
    for word, label in PLATFORM_LABELS.items():
        text = re.sub(rf"\bruns on {word}\b", f"runs on {label}", text)
    return text.replace("Staffing binds for", "Not enough engineers for")


def _short(sentence: str) -> tuple[str, str]:
    """A reason's first sentence, and the rest (shown on demand)."""
    head, sep, rest = sentence.partition(". ")
    return (head + "." if sep else head), rest


def _cash_words(plan: Plan) -> str:
    estimated = plan.total_monthly_usd - plan.cash_monthly_usd
    if estimated < 500:
        return "all of it cash spend"
    return (
        f"{money(plan.cash_monthly_usd)} paid out, plus {money(estimated)} of estimated staff "
        "effort (work-arounds, unfamiliar tools)"
    )


def headline_html(plan: Plan) -> str:
    """Architecture in words, monthly cost and staffing change, with the status if not optimal."""
    if not plan.feasible:
        why = next((s for s in plan.explanations if s.startswith("Why")), "")
        why = why.removeprefix("Why: ")
        return (
            '<div class="cd cd-headline cd-infeasible" data-total="" data-archetype="">'
            '<div class="cd-arch">No plan meets every limit</div>'
            + (f'<div class="cd-cost">{_e(why[0].upper() + why[1:])}</div>' if why else "")
            + "</div>"
        )
    words = plan.architecture_words or plan.archetype or ""
    status = ""
    if plan.status is not Status.OPTIMAL:
        status = f'<div class="cd-status">{_e(unproven_words(plan))}</div>'
    extras = ""
    for attr, label in (
        ("one_time_usd", "one-time cost"),
        ("upfront_usd", "up-front outlay"),
        ("today_monthly_usd", "today's estate"),
    ):
        value = getattr(plan, attr, None)
        if isinstance(value, (int, float)) and math.isfinite(value):
            extras += f"; {label} {money(float(value))}"
    return (
        f'<div class="cd cd-headline" data-total="{plan.total_monthly_usd:.2f}" '
        f'data-archetype="{_e(plan.archetype or "")}">'
        f'<div class="cd-arch">{_e(words[0].upper() + words[1:])}</div>{status}'
        f'<div class="cd-cost"><b>{money(plan.total_monthly_usd)}</b> a month '
        f'<span class="cd-small">({_e(_cash_words(plan))}{_e(extras)})</span></div>'
        f'<div class="cd-staff">{_e(staffing_sentence(plan))}</div>'
        "</div>"
    )


def reasons_html(plan: Plan, limit: int | None = None) -> str:
    """The plan's reasons, short first sentence with the detail behind a click.

    With ``limit``, the first ``limit`` reasons after the headline's (what binds first); for an
    infeasible plan, the reasons only (the fixes have their own list).
    """
    if plan.feasible:
        sentences = plan.explanations[1:]
        if limit is not None:
            # The headline already says the cost and the staffing: the first two sentences.
            sentences = _top_reasons(sentences[1:], limit)
    else:
        shown = set(plan.relaxations["sentence"].to_list()) if plan.relaxations.height else set()
        sentences = [
            s
            for s in plan.explanations[1:]
            if s not in shown and not s.rstrip().endswith(":") and not s.startswith("Why")
        ][: limit or None]
    items = []
    for s in sentences:
        head, rest = _short(plain(s, plan))
        if rest:
            items.append(f"<li><details><summary>{_e(head)}</summary>{_e(rest)}</details></li>")
        else:
            items.append(f"<li>{_e(head)}</li>")
    return f'<ul class="cd cd-reasons">{"".join(items)}</ul>'


def _top_reasons(sentences: Sequence[str], limit: int) -> list[str]:
    """What binds first (staff, budget), then the workload reasons in the scenario's order."""
    binding = [s for s in sentences if "binds" in s]
    rest = [s for s in sentences if s not in binding]
    return (binding + rest)[:limit]


def fix_sentence(row: dict[str, Any], budget_usd: float | None) -> str:
    """One fix of an infeasible scenario, in one consistent sentence.

    A budget fix names the new cap only: the cheapest plan then fits it exactly, so no second
    figure can contradict it (the model's sentence quotes the total cost, estimated effort
    included, beside a cap on cash).
    """
    if row["change"] == "budget" and budget_usd is not None:
        cap = budget_usd + float(row["amount"])
        return (
            f"Raise the budget cap from {money(budget_usd)} to {money(cap)} a month "
            f"(+{money(float(row['amount']))}): the cheapest plan then fits."
        )
    text = str(row["sentence"]).strip()
    head, _, _cost = text.partition(": the best plan then costs")
    if _cost:
        return f"{head} (the best plan then costs {money(float(row['monthly_usd']))} a month)."
    return text


def relaxations_html(plan: Plan) -> str:
    """The smallest changes that make an infeasible scenario work, smallest first."""
    if plan.feasible or plan.relaxations.height == 0:
        return ""
    budget = plan.inputs.policy.budget_usd_per_month if plan.inputs is not None else None
    fixes = [fix_sentence(r, budget) for r in plan.relaxations.iter_rows(named=True)]
    items = "".join(f"<li>{_e(plain(s, plan))}</li>" for s in dict.fromkeys(fixes))
    return (
        '<div class="cd cd-msg cd-msg-info cd-fixes"><b>Smallest changes that make it work '
        f'(each checked by solving again)</b><ul class="cd-reasons">{items}</ul></div>'
    )


def verdict_html(verdict: Any, pending: bool = False) -> str:
    """A recommendation-like object (``.verdict``, ``.sentence``) under the headline.

    ``pending``: the alternatives are still being checked. Nothing at all when there is neither.
    The sentences the verdict ends with that qualify the plan's cost (``.caveats``: one cluster
    fewer, whole nodes, one company) are listed under it, one each, so the verdict itself reads
    as the one sentence a meeting repeats.
    """
    if pending:
        return (
            '<div class="cd cd-verdict" data-state="pending">'
            '<span class="cd-dot"></span>Checking alternatives…</div>'
        )
    if verdict is None:
        return ""
    label = getattr(verdict, "verdict", "")
    label = getattr(label, "value", label)
    sentence = str(getattr(verdict, "sentence", "") or "")
    sentence, caveats = split_closing(
        sentence, [str(c) for c in getattr(verdict, "caveats", ()) or ()]
    )
    listed = (
        '<ul class="cd-caveats">' + "".join(f"<li>{_e(c)}</li>" for c in caveats) + "</ul>"
        if caveats
        else ""
    )
    word = str(label).replace("_", " ").capitalize()
    lead, colon, rest = sentence.partition(":")
    if colon and lead.lower().startswith(word.lower()):
        # The sentence opens with its verdict ("Close call: …"): bold that, never "Close — Close call".
        body = f"<b>{_e(lead)}:</b>{_e(rest)}"
    else:
        body = f"<b>{_e(word)}</b>" + (f" — {_e(sentence)}" if sentence else "")
    return f'<div class="cd cd-verdict" data-state="done" data-verdict="{_e(label)}">{body}{listed}</div>'


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
