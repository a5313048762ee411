"""What the app does not let you move, and what its ×1.00 means: nothing the answer hides.

``scenario_line`` lists the limits that come from the scenario file and have no control in the
app (hiring limit, service targets, bursting, pool limit, a forced architecture);
``assumptions_html`` says what "× today" is measured against and links to the sources of the
prices and staffing rules in the catalog.
"""

from __future__ import annotations

import csv
import html
from functools import cache

from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, KIND_LABELS
from cluster_decide.inputs.catalog import data_dir
from cluster_decide.inputs.scenario import (
    DeadlineWorkload,
    RealtimeWorkload,
    Scenario,
    TrainingWorkload,
)
from cluster_decide.planning.explain import money

__all__ = ["assumptions_html", "scenario_line", "sources"]

_TRAINING = ("distributed_training", "fine_tuning")
_INFERENCE = ("realtime_inference", "batch_inference")


def _e(text: object) -> str:
    return html.escape(str(text))


def scenario_line(scn: Scenario, controlled: tuple[str, ...]) -> str:
    """The limits set by the scenario (not by a control here), one short clause each."""
    parts: list[str] = []
    if "hiring" in controlled or scn.hiring.allowed:
        if scn.hiring.allowed:
            cost = scn.hiring.one_time_cost_usd
            parts.append(
                f"hiring up to {scn.hiring.max_fte} engineers"
                + (f" at {money(cost)} one-off each" if cost else "")
            )
    elif "hiring" not in controlled:
        parts.append("no hiring")
    for x in scn.workloads:
        if isinstance(x, RealtimeWorkload):
            parts.append(f"{x.name}: answers within {x.slo:g} ms (p99)")
        elif isinstance(x, TrainingWorkload):
            parts.append(f"{x.name}: waits at most {x.slo:g} h to start")
        elif isinstance(x, DeadlineWorkload):
            parts.append(f"{x.name}: done within {x.slo:g} h")
    parts.append(
        "renting on-demand GPUs at peaks "
        + ("allowed" if scn.procurement.on_demand_burst else "not allowed")
    )
    if scn.procurement.mode == "on_prem" or "procurement" in controlled:
        parts.append(f"bought hardware paid over {scn.procurement.horizon_months} months")
    if scn.policy.max_pools is not None:
        parts.append(f"at most {scn.policy.max_pools} pools")
    if scn.policy.archetype != "any":
        parts.append(f"architecture forced to {ARCHETYPE_LABELS.get(scn.policy.archetype)}")
    if "budget" not in controlled and scn.policy.budget_usd_per_month is not None:
        parts.append(f"budget cap {money(scn.policy.budget_usd_per_month)} a month")
    if "platforms" not in controlled:
        parts.append("candidate platforms: " + ", ".join(scn.policy.platforms))
    return (
        '<div class="cd cd-scenario-line"><b>Set by the scenario:</b> '
        + _e("; ".join(parts))
        + ".</div>"
    )


def _demand_words(scn: Scenario, kinds: tuple[str, ...]) -> str:
    words = []
    for x in scn.workloads:
        if x.kind not in kinds:
            continue
        if isinstance(x, RealtimeWorkload):
            words.append(f"{x.name} {x.peak_requests_per_second:,.0f} requests/s at peak")
        elif isinstance(x, (TrainingWorkload, DeadlineWorkload)):
            words.append(f"{x.name} {x.gpu_hours_per_month:,.0f} GPU-hours a month")
    return "; ".join(words) or "none in this scenario"


@cache
def sources() -> tuple[tuple[str, str, str], ...]:
    """(what, source, url) of the catalog's priced and staffing rows that cite a web page."""
    out: dict[str, tuple[str, str, str]] = {}
    for name, what in (("gpus.csv", "GPU prices"), ("staffing.csv", "Staffing rules")):
        with (data_dir() / "catalog" / name).open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                attr = row.get("attribute", "usd_per_gpu_hour")
                if not row.get("url") or (name == "gpus.csv" and "usd" not in attr):
                    continue
                out.setdefault(row["url"], (what, row["source"], row["url"]))
    return tuple(sorted(out.values()))


def assumptions_html(scn: Scenario) -> str:
    """What ×1.00 means for each control, and the sources behind the catalog's numbers."""
    links = "".join(
        f'<li>{_e(what)}: <a href="{_e(url)}" target="_blank" rel="noopener">{_e(src)}</a></li>'
        for what, src, url in sources()
    )
    kinds = ", ".join(KIND_LABELS[k].lower() for k in _TRAINING)
    return (
        '<div class="cd cd-assumptions">'
        f"<p><b>×1.00 is today</b>: the demand written in the scenario "
        f"“{_e(scn.name)}”. Training ({_e(kinds)}): {_e(_demand_words(scn, _TRAINING))}. "
        f"Inference: {_e(_demand_words(scn, _INFERENCE))}. ×1.10 is 10% more of each.</p>"
        "<p><b>GPU prices ×1.00</b> are the catalog's list prices (cloud on-demand and "
        "reserved rates, or purchase prices on-prem); ×0.80 is 20% cheaper.</p>"
        "<p><b>Engineers</b> start at the team in the scenario; the plan hires only when "
        "hiring is allowed.</p>"
        f"<p><b>Sources</b> (every number in the catalog names one; assumptions say so):</p><ul>{links}</ul>"
        "</div>"
    )
