"""Charts of the analyses (alternatives, levers, break-evens, tornado, uncertainty, Pareto, showback).

Each function takes the frame (or result) an analysis returns and gives an Altair chart in the
house style (:mod:`cluster_decide.style`: its palette, ink, font and width), so it renders
offline with ``charts.to_svg`` / ``charts.to_png`` beside the plan's own charts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from cluster_decide.base.constants import ARCHETYPES
from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, COMPONENT_LABELS
from cluster_decide.charts.plan import finish
from cluster_decide.style import ARCHETYPE_COLORS, INK, PALETTE, WIDTH

if TYPE_CHECKING:
    from cluster_decide.analysis.uncertainty_samples import UncertaintyResult

__all__ = [
    "ARCHETYPE_COLORS",
    "alternatives_chart",
    "break_even_chart",
    "levers_chart",
    "pareto_chart",
    "showback_chart",
    "tornado_chart",
    "uncertainty_chart",
]

_LABEL, _SMALL = 15, 14


def _archetype_color(title: str | None = "Architecture") -> alt.Color:
    return alt.Color(
        "archetype_label:N",
        scale=alt.Scale(
            domain=[ARCHETYPE_LABELS[a] for a in ARCHETYPES],
            range=[ARCHETYPE_COLORS[a] for a in ARCHETYPES],
        ),
        legend=alt.Legend(title=title, orient="bottom", direction="horizontal", labelLimit=300),
    )


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Plain rows with NaN as None (Vega-Lite reads NaN as a number)."""
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in frame.iter_rows(named=True)
    ]


def _label(archetype: str | None) -> str:
    return ARCHETYPE_LABELS.get(archetype or "", "infeasible")


def alternatives_chart(frame: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Cost above the optimum of each near-optimal alternative (``near_optimal``)."""
    rows = [
        {
            **r,
            "archetype_label": _label(r["archetype"]),
            "name": "optimum" if r["alternative"] == 0 else f"alternative {r['alternative']}",
        }
        for r in _rows(frame)
    ]
    base = alt.Chart(alt.Data(values=rows))
    y = alt.Y("name:N", sort=[r["name"] for r in rows], title=None)
    x = alt.X("delta_pct:Q", title="Cost above the optimum", axis=alt.Axis(format="%"))
    bars = base.mark_bar(height=22).encode(
        x=x, y=y, color=_archetype_color(), tooltip=["sentence:N", "pools:N"]
    )
    text = base.mark_text(align="left", dx=6, fontSize=_SMALL, color=INK).encode(
        x=x, y=y, text=alt.Text("delta_pct:Q", format=".1%")
    )
    chart = alt.layer(bars, text).properties(width=width - 200, height=36 * max(1, len(rows)))
    return finish(chart, "Near-optimal alternatives", "The most different plans within the slack")


def levers_chart(frame: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Monthly value of each lever (``lever_values``); positive saves money."""
    rows = _rows(frame)
    base = alt.Chart(alt.Data(values=rows))
    y = alt.Y("change:N", sort=[r["change"] for r in rows], title=None)
    x = alt.X("value_usd_per_month:Q", title="US$ saved per month", axis=alt.Axis(format="$~s"))
    bars = base.mark_bar(height=18, color=PALETTE["blue"]).encode(x=x, y=y, tooltip=["sentence:N"])
    chart = bars.properties(width=width - 330, height=26 * max(1, len(rows)))
    return finish(chart, "What each lever is worth", "Each solved again with that one change")


def tornado_chart(frame: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Change in monthly cost at the low and high value of each input (``tornado``).

    Inputs that change the recommended architecture say so in their label.
    """
    rows = []
    for r in _rows(frame):
        label = r["label"] + (" (answer changes)" if r["archetype_changes"] else "")
        for side in ("low", "high"):
            rows.append(
                {
                    "input": label,
                    "side": f"{side} ({r[f'{side}_value']:.3g})",
                    "end": side,
                    "delta": r[f"{side}_delta_usd"],
                    "archetype": _label(r[f"{side}_archetype"]),
                }
            )
    order = list(dict.fromkeys(r["input"] for r in rows))
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar(height=16)
        .encode(
            y=alt.Y("input:N", sort=order, title=None),
            x=alt.X("delta:Q", title="Change in US$ per month", axis=alt.Axis(format="$~s")),
            color=alt.Color(
                "end:N",
                scale=alt.Scale(domain=["low", "high"], range=[PALETTE["sky"], PALETTE["orange"]]),
                legend=alt.Legend(title="Input at", orient="bottom"),
            ),
            tooltip=["input:N", "side:N", "delta:Q", "archetype:N"],
        )
        .properties(width=width - 330, height=24 * max(1, len(order)))
    )
    return finish(
        chart,
        "Sensitivity of monthly cost",
        "Each input at its low and high value, the rest at base",
    )


def break_even_chart(frame: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Where each input changes the answer (``break_evens``), as a multiple of its base value."""
    rows = []
    for r in _rows(frame):
        if not r["found"] or not r["base_value"]:
            continue
        rows.append(
            {
                "input": r["label"],
                "factor": r["value"] / r["base_value"],
                "archetype_label": _label(r["changed_archetype"]),
                "sentence": r["sentence"],
            }
        )
    if not rows:
        return finish(
            alt.Chart(alt.Data(values=[{"t": "No break-even in the searched ranges."}]))
            .mark_text(fontSize=_LABEL, color=INK, align="left")
            .encode(text="t:N", x=alt.value(0), y=alt.value(20))
            .properties(width=width, height=40),
            "What would change the answer",
        )
    base = alt.Chart(alt.Data(values=rows))
    points = base.mark_point(size=220, filled=True).encode(
        y=alt.Y("input:N", title=None),
        x=alt.X("factor:Q", title="× base value", scale=alt.Scale(type="log")),
        color=_archetype_color("Then best"),
        tooltip=["sentence:N"],
    )
    rule = alt.Chart(alt.Data(values=[{"x": 1.0}])).mark_rule(color=INK).encode(x="x:Q")
    chart = alt.layer(rule, points).properties(width=width - 330, height=34 * len(rows))
    return finish(chart, "What would change the answer", "Break-even of each input, by bisection")


def uncertainty_chart(result: UncertaintyResult, width: int = WIDTH) -> alt.TopLevelMixin:
    """Distribution of the optimal monthly cost, coloured by the archetype that wins each sample."""
    rows = [
        {"usd": r["total_monthly_usd"], "archetype_label": _label(r["archetype"])}
        for r in _rows(result.samples.filter(pl.col("status") != "infeasible"))
    ]
    hist = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X(
                "usd:Q",
                bin=alt.Bin(maxbins=30),
                title="Optimal US$ per month",
                axis=alt.Axis(format="$~s"),
            ),
            y=alt.Y("count():Q", title="Samples", stack=True),
            color=_archetype_color("Optimal"),
        )
        .properties(width=width - 120, height=260)
    )
    n = result.samples.height
    share = ", ".join(
        f"{_label(r['archetype'])} {r['p_optimal']:.0%}"
        for r in result.summary.filter(pl.col("p_optimal") > 0).iter_rows(named=True)
    )
    if result.p_infeasible:
        share += f"; no feasible plan {result.p_infeasible:.0%}"
    return finish(hist, f"Uncertainty: {n} sampled scenarios", f"Optimal: {share}")


def pareto_chart(frame: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Monthly cost against the risk measure (``pareto_front``), the efficient plans joined."""
    measure = frame["measure"][0] if frame.height else ""
    title = {
        "capability_gaps": "Missing preferred capabilities (share-weighted)",
        "slo_margin": "Margin below every SLO target",
    }.get(measure, "Risk")
    rows = [{**r, "archetype_label": _label(r["archetype"])} for r in _rows(frame)]
    base = alt.Chart(alt.Data(values=rows))
    x = alt.X(
        "risk:Q",
        title=title,
        axis=alt.Axis(format="%" if measure == "slo_margin" else "~g"),
    )
    y = alt.Y(
        "total_monthly_usd:Q",
        title="US$ per month",
        scale=alt.Scale(zero=False),
        axis=alt.Axis(format="$~s"),
    )
    line = base.transform_filter("datum.pareto").mark_line(color=PALETTE["grey"]).encode(x=x, y=y)
    points = base.mark_point(size=160, filled=True).encode(
        x=x, y=y, color=_archetype_color(), tooltip=["epsilon:Q", "pools:N", "total_monthly_usd:Q"]
    )
    chart = alt.layer(line, points).properties(width=width - 120, height=300)
    return finish(
        chart, "Cost against risk", "Epsilon-constraint: cheapest plan at each risk level"
    )


def showback_chart(frame: pl.DataFrame, by: str = "team", width: int = WIDTH) -> alt.TopLevelMixin:
    """Monthly cost per team (or ``by="workload"``) stacked by component (``showback``)."""
    agg = frame.group_by(by, "component").agg(pl.col("monthly_usd").sum())
    order = (
        agg.group_by(by).agg(pl.col("monthly_usd").sum()).sort("monthly_usd", descending=True)[by]
    )
    rows = [
        {
            "who": r[by],
            "component": COMPONENT_LABELS.get(r["component"], r["component"]),
            "usd": r["monthly_usd"],
        }
        for r in agg.iter_rows(named=True)
    ]
    components = [COMPONENT_LABELS[c] for c in COMPONENT_LABELS]
    colors = [
        PALETTE[c]
        for c in ("blue", "sky", "orange", "yellow", "vermilion", "purple", "green", "grey")
    ]
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar(height=22)
        .encode(
            y=alt.Y("who:N", sort=list(order), title=None),
            x=alt.X("sum(usd):Q", title="US$ per month", axis=alt.Axis(format="$~s")),
            color=alt.Color(
                "component:N",
                scale=alt.Scale(domain=components, range=colors),
                legend=alt.Legend(title=None, orient="bottom", columns=4),
            ),
            tooltip=["who:N", "component:N", "usd:Q"],
        )
        .properties(width=width - 250, height=34 * max(1, len(order)))
    )
    return finish(chart, f"Showback by {by}", "Who drives the monthly cost, before it is spent")
