"""Charts of a plan, all from one palette and one set of platform names, rendered offline.

Every function takes a Plan (or a frame) and returns an Altair chart; :func:`to_svg` and
:func:`to_png` render one with vl-convert, which needs no internet: review rooms and enterprise
networks block the CDN that Altair's default renderer loads vega from. Colours are the Okabe-Ito
set (safe for the common colour-vision deficiencies), text is dark on light, and sizes are set
for a projector and a 1280×800 screen.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from typing import Any, TypeVar

import altair as alt
import polars as pl
import vl_convert as vlc

from cluster_decide.base.constants import PLATFORMS
from cluster_decide.base.vocabulary import (
    ARCHETYPE_LABELS,
    COMPONENT_LABELS,
    METRIC_WORDS,
    NODE_GROUP_WORDS,
    PLATFORM_LABELS,
    SKILL_LABELS,
)
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan
from cluster_decide.style import FONT, INK, PALETTE, PLATFORM_COLORS, WIDTH, short_number

__all__ = [
    "architecture",
    "architecture_svg",
    "compare_archetypes",
    "cost_breakdown",
    "cost_svg",
    "finish",
    "placements",
    "service_levels",
    "sharing_week",
    "simulated_waits",
    "staffing",
    "to_png",
    "to_svg",
]

C = TypeVar(
    "C", bound=alt.Chart | alt.LayerChart | alt.VConcatChart | alt.HConcatChart | alt.FacetChart
)
"""Any Altair chart: :func:`finish` returns the chart it was given, titled and styled."""
_TITLE = 20
_LABEL = 15
_SMALL = 14
_VL_VERSION = "_".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])


def _present(plan: Plan | None) -> tuple[str, ...]:
    """The platforms the plan opens, in vocabulary order (all of them without a plan)."""
    if plan is None or plan.pools.height == 0:
        return tuple(PLATFORMS)
    used = set(plan.pools["platform"].to_list())
    return tuple(p for p in PLATFORMS if p in used)


def _platform_scale(plan: Plan | None = None) -> alt.Scale:
    """Platform colours; with a plan, only its platforms (a legend lists what is there)."""
    shown = _present(plan)
    return alt.Scale(domain=list(shown), range=[PLATFORM_COLORS[p] for p in shown])


def _platform_legend(title: str | None = "Platform", plan: Plan | None = None) -> alt.Legend:
    labels = " : ".join(f"datum.label === '{p}' ? '{PLATFORM_LABELS[p]}'" for p in _present(plan))
    return alt.Legend(
        title=title,
        orient="bottom",
        direction="horizontal",
        labelExpr=f"{labels} : datum.label",
        labelLimit=300,
    )


def _config() -> alt.Config:
    """The house style: one font, large dark text, no chart border, white background."""
    return alt.Config(
        font=FONT,
        background="white",
        padding=12,
        view=alt.ViewConfig(stroke=None),
        axis=alt.AxisConfig(
            labelFontSize=_LABEL,
            titleFontSize=_LABEL,
            labelColor=INK,
            titleColor=INK,
            gridColor=PALETTE["light"],
            domainColor=PALETTE["grey"],
            tickColor=PALETTE["grey"],
            labelLimit=260,
        ),
        legend=alt.LegendConfig(
            labelFontSize=_LABEL,
            titleFontSize=_LABEL,
            labelColor=INK,
            titleColor=INK,
            symbolSize=200,
        ),
    )


def finish(chart: C, title: str, subtitle: str = "") -> C:
    """Give ``chart`` its title and the house style (every module's charts use this).

    Set in place: Altair's chained ``configure_*`` calls deep-copy the whole chart each time,
    which cost more than rendering it on every control change.
    """
    chart.title = alt.TitleParams(
        text=title,
        subtitle=subtitle or alt.Undefined,
        anchor="start",
        fontSize=_TITLE,
        subtitleFontSize=_SMALL,
        color=INK,
        subtitleColor=INK,
        offset=10,
    )
    chart.config = _config()
    return chart


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in frame.iter_rows(named=True)
    ]


def _empty(title: str, message: str, width: int = WIDTH) -> alt.Chart:
    """A chart that says why there is nothing to draw (keeps the layout steady)."""
    note = alt.Chart(alt.Data(values=[{"text": message}])).mark_text(
        fontSize=_LABEL, color=INK, align="left", baseline="middle"
    )
    chart = note.encode(text="text:N", x=alt.value(0), y=alt.value(30)).properties(
        width=width, height=60
    )
    return finish(chart, title)


# -- architecture ---------------------------------------------------------------------------


def _pool_lines(plan: Plan, pool: str) -> tuple[list[str], list[str]]:
    """The capacity lines and workload lines of one pool block."""
    capacity = []
    for r in plan.pools.filter(pl.col("pool") == pool).sort("gpu_type").iter_rows(named=True):
        hours = r["burst_gpu_hours"] or 0.0
        burst = f"{hours / 1000:.1f}k" if hours >= 1000 else f"{hours:.0f}"
        if r["gpus"]:
            added = r.get("nodes_added") or 0  # a cluster of today that grows says by how much
            nodes = f"{r['nodes']} node{'s' if r['nodes'] != 1 else ''}"
            group = NODE_GROUP_WORDS[r["platform"]]
            extra = f", new {group})" if added == r["nodes"] else f", {added} added)"
            capacity.append(f"{r['gpus']} × {r['gpu_type']} ({nodes}" + (extra if added else ")"))
            if hours > 0:
                capacity.append(f"+ {burst} GPU-hours/month rented at peaks")
        else:
            capacity.append(f"{r['gpu_type']}: rented only, {burst} GPU-hours/month")
    work = []
    placed = plan.placements.filter(pl.col("pool") == pool).sort(
        ["gpus", "workload"], descending=[True, False]
    )
    for r in placed.iter_rows(named=True):
        share = f" {r['share']:.0%}" if r["share"] < 0.999 else ""
        work.append(f"{r['workload']}{share} · {r['gpu_type']} · {r['gpus']:.0f} GPUs")
    return capacity, work


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _architecture_layout(
    plan: Plan, width: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], float]:
    """Blocks, block headers, text lines (pixel positions) and total height of the diagram."""
    order = {p: i for i, p in enumerate(PLATFORMS)}
    pools = sorted(
        {(r["pool"], r["platform"]) for r in plan.pools.iter_rows(named=True)},
        key=lambda pp: (order.get(pp[1], 99), pp[0]),
    )
    cols = min(len(pools), 2)
    gap, line_h, head_h, pad = 16, 21, 34, 10
    block_w = (width - gap * (cols - 1)) / cols
    contents = [_pool_lines(plan, p) for p, _ in pools]
    heights = [head_h + pad * 2 + line_h * (len(c) + len(w) + 1) for c, w in contents]
    # Truncate by an average glyph width here: vega's own `limit` measures every glyph and
    # doubles the render time of this chart.
    chars = {"bold": int((block_w - 2 * pad) / 8.6), "normal": int((block_w - 2 * pad) / 7.4)}
    blocks, heads, texts = [], [], []
    y0 = 0.0
    for row_start in range(0, len(pools), cols):
        row = range(row_start, min(row_start + cols, len(pools)))
        row_h = max(heights[i] for i in row)
        for j, i in enumerate(row):
            pool, platform = pools[i]
            x0 = j * (block_w + gap)
            blocks.append(
                {"x": x0, "x2": x0 + block_w, "y": y0, "y2": y0 + row_h, "platform": platform}
            )
            heads.append(
                {"x": x0, "x2": x0 + block_w, "y": y0, "y2": y0 + head_h, "platform": platform}
            )
            words = PLATFORM_LABELS.get(platform, platform)
            # The platform names the block; a pool's own name only tells two pools apart, and a
            # pool already named for its platform (an export's display name) says it once.
            label = words
            if pool.startswith(f"{words} cluster"):
                label = pool
            elif sum(1 for _, other in pools if other == platform) > 1:
                label += f" — {pool}"
            texts.append(
                {
                    "x": x0 + pad,
                    "y": y0 + head_h / 2,
                    "text": _clip(label, chars["bold"]),
                    "weight": "bold",
                }
            )
            at = y0 + head_h + pad + line_h / 2
            capacity, work = contents[i]
            for line in capacity:
                texts.append(
                    {"x": x0 + pad, "y": at, "text": _clip(line, chars["bold"]), "weight": "bold"}
                )
                at += line_h
            at += line_h / 2
            for line in work:
                texts.append(
                    {
                        "x": x0 + pad,
                        "y": at,
                        "text": _clip(line, chars["normal"]),
                        "weight": "normal",
                    }
                )
                at += line_h
        y0 += row_h + gap
    height = y0 - gap
    return blocks, heads, texts, height


def architecture(plan: Plan, width: int = WIDTH) -> alt.TopLevelMixin:
    """Pools as blocks, coloured by platform: GPU type and count, and the workloads placed in each.

    Blocks sit side by side (two to a row) so the whole estate reads at a glance; the
    layout is computed here in pixels, which keeps text inside its block at any plan size.
    """
    title = "Architecture"
    if plan.pools.height == 0:
        return _empty(title, "No feasible plan: see the smallest relaxation below.", width)
    blocks, heads, texts, height = _architecture_layout(plan, width)
    x = alt.X("x:Q", scale=alt.Scale(domain=[0, width], nice=False), axis=None)
    y = alt.Y("y:Q", scale=alt.Scale(domain=[height, 0], nice=False, zero=False), axis=None)
    color = alt.Color("platform:N", scale=_platform_scale(plan), legend=_platform_legend(plan=plan))
    body = (
        alt.Chart(alt.Data(values=blocks))
        .mark_rect(fillOpacity=0.12, strokeWidth=3, cornerRadius=6)
        .encode(
            x=x,
            x2="x2:Q",
            y=y,
            y2="y2:Q",
            fill=color,
            stroke=alt.Stroke("platform:N", scale=_platform_scale(plan), legend=None),
        )
    )
    head = (
        alt.Chart(alt.Data(values=heads))
        .mark_rect(fillOpacity=0.35, cornerRadiusTopLeft=6, cornerRadiusTopRight=6)
        .encode(
            x=x,
            x2="x2:Q",
            y=y,
            y2="y2:Q",
            fill=alt.Fill("platform:N", scale=_platform_scale(plan), legend=None),
        )
    )
    words = [
        alt.Chart(alt.Data(values=[t for t in texts if t["weight"] == weight]))
        .mark_text(
            align="left",
            baseline="middle",
            fontSize=_SMALL + (1 if weight == "bold" else 0),
            fontWeight=weight,
            color=INK,
        )
        .encode(x=x, y=y, text="text:N")
        for weight in ("bold", "normal")
    ]
    chart = alt.layer(body, head, *words).properties(width=width, height=height)
    subtitle = plan.architecture_words
    return finish(chart, title, subtitle[0].upper() + subtitle[1:] if subtitle else "")


# -- live drawings: the same two charts as plain SVG, for the interactive path ---------------


def _svg_title(title: str, subtitle: str) -> str:
    sub = (
        f'<text x="12" y="54" font-size="{_SMALL}" fill="{INK}">{html.escape(subtitle)}</text>'
        if subtitle
        else ""
    )
    return f'<text x="12" y="30" font-size="{_TITLE}" font-weight="bold" fill="{INK}">{html.escape(title)}</text>{sub}'


def _svg(width: float, height: float, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}"><rect width="100%" height="100%" fill="white"/>'
        f"{body}</svg>"
    )


def _svg_legend(items: list[tuple[str, str]], y: float) -> str:
    parts, x = [], 12.0
    for label, colour in items:
        parts.append(
            f'<rect x="{x:.0f}" y="{y - 8:.0f}" width="16" height="16" fill="{colour}"/>'
            f'<text x="{x + 22:.0f}" y="{y:.0f}" dominant-baseline="middle" font-size="{_LABEL}" fill="{INK}">{html.escape(label)}</text>'
        )
        x += 22 + 7.6 * len(label) + 28
    return "".join(parts)


def architecture_svg(plan: Plan, width: int = WIDTH) -> str:
    """:func:`architecture` drawn straight to SVG, in a millisecond instead of a hundred.

    The live dashboard redraws it on every control change; vl-convert's render would be most
    of the 200 ms a change may take. Same layout, colours and words as the Altair chart.
    """
    if plan.pools.height == 0:
        return to_svg(architecture(plan, width))
    blocks, heads, texts, height = _architecture_layout(plan, width)
    top, left = 70, 12
    parts = [
        _svg_title(
            "Architecture",
            (lambda t: t[:1].upper() + t[1:])(plan.architecture_words),
        )
    ]
    for b in blocks:
        colour = PLATFORM_COLORS.get(b["platform"], PALETTE["grey"])
        parts.append(
            f'<rect x="{left + b["x"] + 1.5:.1f}" y="{top + b["y"] + 1.5:.1f}" width="{b["x2"] - b["x"] - 3:.1f}" '
            f'height="{b["y2"] - b["y"] - 3:.1f}" rx="6" fill="{colour}" fill-opacity="0.12" stroke="{colour}" stroke-width="3"/>'
        )
    for h in heads:
        colour = PLATFORM_COLORS.get(h["platform"], PALETTE["grey"])
        parts.append(
            f'<rect x="{left + h["x"] + 3:.1f}" y="{top + h["y"] + 3:.1f}" width="{h["x2"] - h["x"] - 6:.1f}" '
            f'height="{h["y2"] - h["y"] - 3:.1f}" rx="4" fill="{colour}" fill-opacity="0.35"/>'
        )
    for t in texts:
        size = _SMALL + (1 if t["weight"] == "bold" else 0)
        parts.append(
            f'<text x="{left + t["x"]:.1f}" y="{top + t["y"]:.1f}" dominant-baseline="middle" font-size="{size}" '
            f'font-weight="{t["weight"]}" fill="{INK}">{html.escape(t["text"])}</text>'
        )
    legend_y = top + height + 40
    parts.append(
        f'<text x="12" y="{legend_y - 22:.0f}" font-size="{_LABEL}" font-weight="bold" fill="{INK}">Platform</text>'
    )
    parts.append(
        _svg_legend([(PLATFORM_LABELS[p], PLATFORM_COLORS[p]) for p in _present(plan)], legend_y)
    )
    return _svg(width + 2 * left, legend_y + 24, "".join(parts))


def _cost_rows(plan: Plan) -> list[dict[str, Any]]:
    costs = plan.costs.filter(pl.col("monthly_usd").is_not_null() & (pl.col("monthly_usd") > 0))
    return [
        {
            "component": COMPONENT_LABELS.get(r["component"], r["component"]),
            "usd": r["monthly_usd"],
            "label": money(r["monthly_usd"]),
            "kind": "cash spend" if r["cash"] else "estimated effort",
            "meaning": r["meaning"],
        }
        for r in costs.sort("monthly_usd", descending=True).iter_rows(named=True)
    ]


def cost_svg(plan: Plan, width: int = WIDTH) -> str:
    """:func:`cost_breakdown` drawn straight to SVG for the live dashboard (see :func:`architecture_svg`)."""
    rows = _cost_rows(plan)
    if not rows:
        return to_svg(cost_breakdown(plan, width))
    top, label_w, bar_h, row_h = 72, 230, 22, 34
    span = width - label_w - 90
    biggest = max(r["usd"] for r in rows)
    colours = {"cash spend": PALETTE["blue"], "estimated effort": PALETTE["grey"]}
    subtitle = (
        f"Total {money(plan.total_monthly_usd)} a month, {money(plan.cash_monthly_usd)} of it cash"
    )
    parts = [_svg_title("Monthly cost", subtitle)]
    for i, r in enumerate(rows):
        y = top + i * row_h
        length = max(1.0, span * r["usd"] / biggest)
        parts.append(
            f'<text x="{12 + label_w - 8}" y="{y + bar_h / 2:.0f}" text-anchor="end" dominant-baseline="middle" '
            f'font-size="{_LABEL}" fill="{INK}">{html.escape(r["component"])}</text>'
            f'<rect x="{12 + label_w}" y="{y}" width="{length:.1f}" height="{bar_h}" fill="{colours[r["kind"]]}">'
            f"<title>{html.escape(r['meaning'])}</title></rect>"
            f'<text x="{12 + label_w + length + 6:.1f}" y="{y + bar_h / 2:.0f}" dominant-baseline="middle" '
            f'font-size="{_SMALL}" fill="{INK}">{html.escape(r["label"])}</text>'
        )
    legend_y = top + len(rows) * row_h + 24
    parts.append(_svg_legend([(k, c) for k, c in colours.items()], legend_y))
    return _svg(width + 24, legend_y + 24, "".join(parts))


# -- costs, placements, service levels, staffing ----------------------------------------------


def cost_breakdown(plan: Plan, width: int = WIDTH) -> alt.TopLevelMixin:
    """Monthly cost by component, largest first; estimated (non-cash) items in grey."""
    title = "Monthly cost"
    rows = _cost_rows(plan)
    if not rows:
        return _empty(title, "No feasible plan, so no cost.", width)
    order = [r["component"] for r in rows]
    y = alt.Y("component:N", sort=order, title=None)
    x = alt.X("usd:Q", title="US$ per month", axis=alt.Axis(format="$~s", tickCount=5))
    color = alt.Color(
        "kind:N",
        scale=alt.Scale(
            domain=["cash spend", "estimated effort"], range=[PALETTE["blue"], PALETTE["grey"]]
        ),
        legend=alt.Legend(title=None, orient="bottom", direction="horizontal"),
    )
    base = alt.Chart(alt.Data(values=rows))
    bars = base.mark_bar(height=22).encode(
        x=x, y=y, color=color, tooltip=["component:N", "label:N", "meaning:N"]
    )
    labels = base.mark_text(align="left", dx=6, fontSize=_SMALL, color=INK).encode(
        x=x, y=y, text="label:N"
    )
    chart = alt.layer(bars, labels).properties(width=width - 260, height=34 * len(rows))
    return finish(
        chart,
        title,
        f"Total {money(plan.total_monthly_usd)} a month, {money(plan.cash_monthly_usd)} of it cash",
    )


def placements(plan: Plan, width: int = WIDTH) -> alt.TopLevelMixin:
    """Peak GPUs each workload takes, split by the pool and GPU type it runs on."""
    title = "Placements"
    if plan.placements.height == 0:
        return _empty(title, "No feasible plan, so nothing is placed.", width)
    rows = [
        {
            **r,
            "where": f"{r['pool']} · {r['gpu_type']}",
            "share_label": f"{r['share']:.0%}",
        }
        for r in _rows(plan.placements)
    ]
    totals = (
        plan.placements.group_by("workload")
        # Summed in any order (the last bits differ from run to run), shown to a tenth: ties
        # are ties, ordered by name, so the same plan draws the same bytes.
        .agg(pl.col("gpus").sum().round(1))
        .sort(["gpus", "workload"], descending=[True, False])
    )
    order = totals["workload"].to_list()
    y = alt.Y("workload:N", sort=order, title=None)
    x = alt.X(
        "gpus:Q",
        title="GPUs at peak (SLO headroom included)",
        stack="zero",
        axis=alt.Axis(tickCount=6),
    )
    base = alt.Chart(alt.Data(values=rows))
    bars = base.mark_bar(height=22, stroke="white", strokeWidth=1).encode(
        x=x,
        y=y,
        color=alt.Color(
            "platform:N", scale=_platform_scale(plan), legend=_platform_legend(plan=plan)
        ),
        order=alt.Order("pool:N"),
        tooltip=["workload:N", "where:N", "share_label:N", alt.Tooltip("gpus:Q", format=".0f")],
    )
    label_rows = [
        {"workload": r["workload"], "gpus": r["gpus"], "text": f"{r['gpus']:.0f}"}
        for r in _rows(totals)
    ]
    labels = (
        alt.Chart(alt.Data(values=label_rows))
        .mark_text(align="left", dx=6, fontSize=_SMALL, color=INK)
        .encode(x="gpus:Q", y=alt.Y("workload:N", sort=order), text="text:N")
    )
    chart = alt.layer(bars, labels).properties(width=width - 260, height=34 * len(order))
    return finish(chart, title)


_SHARE_PARTS = (
    ("services_gpus", "Services", "blue"),
    ("training_gpus", "Training in the troughs", "orange"),
    ("idle_gpus", "Idle", "grey"),
)


def sharing_week(
    plan: Plan, width: int = WIDTH, split: pl.DataFrame | None = None
) -> alt.TopLevelMixin:
    """A week of each sharing pool: GPUs the services hold, training fills, and stay idle.

    ``split``: ``plan.hourly_split()`` when the caller has it already.
    """
    title = "Who uses the pool's GPUs, hour by hour"
    split = plan.hourly_split() if split is None else split
    if split.height == 0:
        return _empty(title, "No pool in this plan fills its troughs with training.", width)
    labels = {col: label for col, label, _c in _SHARE_PARTS}
    rows = [
        {
            "hour": r["hour"],
            "day": r["hour"] / 24,
            "where": f"{r['pool']} · {r['gpu_type']}",
            "part": labels[col],
            "order": i,
            "gpus": r[col],
        }
        for r in _rows(split)
        for i, (col, _label, _c) in enumerate(_SHARE_PARTS)
    ]
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_area()
        .encode(
            x=alt.X(
                "day:Q", title="Day of the week (0 = Monday 00:00)", scale=alt.Scale(domain=[0, 7])
            ),
            y=alt.Y("gpus:Q", title="GPUs", stack="zero"),
            color=alt.Color(
                "part:N",
                sort=[label for _c, label, _k in _SHARE_PARTS],
                scale=alt.Scale(
                    domain=[label for _c, label, _k in _SHARE_PARTS],
                    range=[PALETTE[k] for _c, _l, k in _SHARE_PARTS],
                ),
                legend=alt.Legend(title=None, orient="top"),
            ),
            order=alt.Order("order:Q"),
            row=alt.Row("where:N", title=None),
            tooltip=["where:N", "hour:Q", "part:N", alt.Tooltip("gpus:Q", format=".1f")],
        )
        .properties(width=width - 160, height=220)
    )
    return finish(
        chart, title, "Services scale by the hour; preemptible training takes what they leave."
    )


def service_levels(plan: Plan, width: int = WIDTH) -> alt.TopLevelMixin:
    """Predicted service level as a share of its target (under 100% is met), one bar each.

    A workload split over pools or GPU types has one row per piece in ``service_levels``; the
    chart shows one bar per workload and metric, the worst piece (a target holds only when it
    holds everywhere), and says how many pieces there are.
    """
    title = "Service levels"
    frame = plan.service_levels.filter(
        pl.col("predicted").is_not_null() & pl.col("predicted").is_finite()
    )
    if frame.height == 0:
        return _empty(title, "No service-level predictions for this plan.", width)
    worst: dict[tuple[str, str], dict[str, Any]] = {}
    pieces: dict[tuple[str, str], int] = {}
    for r in frame.iter_rows(named=True):
        key = (r["workload"], r["metric"])
        ratio = r["predicted"] / r["target"] if r["target"] else 0.0
        pieces[key] = pieces.get(key, 0) + 1
        if key not in worst or ratio > worst[key]["ratio"]:
            worst[key] = {**r, "ratio": ratio}
    rows: list[dict[str, Any]] = []
    for key, r in worst.items():
        words, unit = METRIC_WORDS.get(r["metric"], (r["metric"], ""))
        label = f"{short_number(r['predicted'])} of {short_number(r['target'])} {unit}".strip()
        if pieces[key] > 1:
            label += f" (worst of {pieces[key]} parts)"
        rows.append(
            {
                "row": f"{r['workload']} ({words})",
                "ratio": r["ratio"],
                "state": "met" if r["ratio"] <= 1.0 + 1e-9 and r["met"] else "missed",
                "label": label,
            }
        )
    top = max(1.2, max(float(r["ratio"]) for r in rows) * 1.1)
    y = alt.Y("row:N", title=None, sort=None)
    x = alt.X(
        "ratio:Q",
        title="Predicted, as a share of the target",
        scale=alt.Scale(domain=[0, top]),
        axis=alt.Axis(format="%", tickCount=5),
    )
    base = alt.Chart(alt.Data(values=rows))
    bars = base.mark_bar(height=22).encode(
        x=x,
        y=y,
        color=alt.Color(
            "state:N",
            scale=alt.Scale(
                domain=["met", "missed"], range=[PALETTE["blue"], PALETTE["vermilion"]]
            ),
            legend=alt.Legend(title=None, orient="bottom", direction="horizontal"),
        ),
        tooltip=["row:N", "label:N", "state:N"],
    )
    # Labels sit past the longer of the bar and the target line, so neither overprints them.
    label_rows = [{**r, "at": max(float(r["ratio"]), 1.0)} for r in rows]
    labels = (
        alt.Chart(alt.Data(values=label_rows))
        .mark_text(align="left", dx=8, fontSize=_SMALL, color=INK)
        .encode(x=alt.X("at:Q", scale=alt.Scale(domain=[0, top])), y=y, text="label:N")
    )
    target = (
        alt.Chart(alt.Data(values=[{"ratio": 1.0}]))
        .mark_rule(color=INK, strokeDash=[6, 4], strokeWidth=2)
        .encode(x="ratio:Q")
    )
    plot_w = max(200, width - 520)
    chart = alt.layer(bars, target, labels).properties(width=plot_w, height=34 * len(rows))
    return finish(
        chart, title, "The dashed line is the target; each bar is a workload's worst part"
    )


def simulated_waits(comparison: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Mean queue wait of each batch class, as the planner predicts it and as the replay measured.

    Takes ``Simulation.comparison`` (workload, pool, metric, predicted_h, simulated_h).
    """
    title = "Queue waits: predicted vs simulated"
    rows: list[dict[str, Any]] = []
    for r in comparison.iter_rows(named=True):
        for source, key in (
            ("predicted (queueing formula)", "predicted_h"),
            ("simulated (replay)", "simulated_h"),
        ):
            value = r[key]
            if value is not None and math.isfinite(value):
                rows.append(
                    {
                        "row": f"{r['workload']} · {r['pool']}",
                        "source": source,
                        "hours": float(value),
                    }
                )
    if not rows:
        return _empty(title, "No batch class to compare in this plan.", width)
    y = alt.Y("row:N", title=None, sort=None)
    x = alt.X("hours:Q", title="Mean queue wait (hours)")
    color = alt.Color(
        "source:N",
        scale=alt.Scale(
            domain=["predicted (queueing formula)", "simulated (replay)"],
            range=[PALETTE["blue"], PALETTE["orange"]],
        ),
        legend=alt.Legend(title=None, orient="bottom", direction="horizontal", labelLimit=300),
    )
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar(height=14)
        .encode(
            x=x,
            y=y,
            yOffset="source:N",
            color=color,
            tooltip=["row:N", "source:N", alt.Tooltip("hours:Q", format=".2f")],
        )
        .properties(width=width - 300, height=44 * len({r["row"] for r in rows}))
    )
    return finish(
        chart, title, "The replay draws jobs from the scenario and runs them on the plan's pools"
    )


def staffing(plan: Plan, width: int = WIDTH) -> alt.TopLevelMixin:
    """FTE the plan needs per skill against the staff of today (tick) and with its new people.

    Where the plan hires or retrains, a grey tick marks the staff with them (each a whole
    person), so a need above today's staff that they cover does not read as a shortfall.
    """
    title = "Staffing"
    rows = []
    for r in plan.staffing.iter_rows(named=True):
        retrained = int(r["retrained_in"] or 0)
        if r["required_fte"] <= 0 and r["available_fte"] <= 0 and not (r["hires"] or retrained):
            continue  # a skill the plan neither needs nor has: nothing to draw
        hires = int(r["hires"] or 0)
        label = f"needs {r['required_fte']:.1f} of {r['available_fte']:.1f} FTE"
        if hires:
            label += f", hires {hires}"
        if retrained:
            # Otherwise a need above the tick reads as a shortfall nothing covers.
            label += f", {retrained} retrained in"
        grown = r["available_fte"] + hires + retrained
        rows.append(
            {
                "skill": SKILL_LABELS.get(r["skill"], r["skill"]),
                "required": r["required_fte"],
                "available": r["available_fte"],
                "grown": grown if grown > r["available_fte"] else None,
                "label_at": max(r["required_fte"], grown),
                "label": label,
                "color": PLATFORM_COLORS["slurm" if r["skill"] == "hpc" else "kubernetes"],
            }
        )
    if not rows:
        return _empty(title, "No staffing figures.", width)
    top = max(1.0, *(r["label_at"] for r in rows)) * 1.6
    y = alt.Y("skill:N", title=None, sort=None)
    scale = alt.Scale(domain=[0, top])
    base = alt.Chart(alt.Data(values=rows))
    bars = base.mark_bar(height=24).encode(
        x=alt.X("required:Q", title="FTE", scale=scale, axis=alt.Axis(tickCount=6)),
        y=y,
        color=alt.Color("color:N", scale=None),
        tooltip=["skill:N", "label:N"],
    )
    tick = base.mark_tick(color=INK, thickness=3, size=36).encode(x="available:Q", y=y)
    layers = [bars, tick]
    note = "Bar: FTE the plan needs; black tick: staff today"
    if any(r["grown"] is not None for r in rows):
        grown = alt.Chart(alt.Data(values=[r for r in rows if r["grown"] is not None]))
        layers.append(
            grown.mark_tick(color=PALETTE["grey"], thickness=3, size=36).encode(
                x=alt.X("grown:Q", scale=scale), y=y
            )
        )
        note += "; grey tick: with the people it hires or retrains"
    labels = base.mark_text(align="left", dx=10, fontSize=_SMALL, color=INK).encode(
        x=alt.X("label_at:Q", scale=scale), y=y, text="label:N"
    )
    chart = alt.layer(*layers, labels).properties(width=width - 260, height=45 * len(rows))
    return finish(chart, title, note)


def compare_archetypes(frame: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Monthly cost of each archetype (``cd.compare``), the cheapest highlighted, infeasible marked."""
    title = "Cost by architecture"
    best = frame.filter(pl.col("status") != "infeasible")["total_monthly_usd"].min()
    rows = []
    for r in _rows(frame):
        feasible = r["status"] != "infeasible" and r["total_monthly_usd"] is not None
        usd = r["total_monthly_usd"] if feasible else 0.0
        if not feasible:
            label = "infeasible"
        elif r["total_monthly_usd"] == best:
            label = f"{money(usd)}  (cheapest)"
        else:
            label = f"{money(usd)}  (+{money(r['delta_usd'] or 0.0)})"
        rows.append(
            {
                "archetype": ARCHETYPE_LABELS.get(r["archetype"], r["archetype"]),
                "usd": usd,
                "label": label,
                "rank": "cheapest"
                if feasible and r["total_monthly_usd"] == best
                else ("alternative" if feasible else "infeasible"),
                "note": r.get("note") or "",
            }
        )
    order = [r["archetype"] for r in rows]
    y = alt.Y("archetype:N", sort=order, title=None)
    x = alt.X("usd:Q", title="US$ per month", axis=alt.Axis(format="$~s", tickCount=5))
    base = alt.Chart(alt.Data(values=rows))
    bars = base.mark_bar(height=24).encode(
        x=x,
        y=y,
        color=alt.Color(
            "rank:N",
            scale=alt.Scale(
                domain=["cheapest", "alternative", "infeasible"],
                range=[PALETTE["blue"], PALETTE["sky"], PALETTE["light"]],
            ),
            legend=alt.Legend(title=None, orient="bottom", direction="horizontal"),
        ),
        tooltip=["archetype:N", "label:N", "note:N"],
    )
    labels = base.mark_text(align="left", dx=6, fontSize=_SMALL, color=INK).encode(
        x=x, y=y, text="label:N"
    )
    chart = alt.layer(bars, labels).properties(width=width - 330, height=40 * len(rows))
    return finish(chart, title, "Each solved with that architecture required")


# -- rendering --------------------------------------------------------------------------------


def _spec(chart: Any, colours: Mapping[str, str] | None = None) -> dict[str, Any]:
    # Our charts are built from typed Altair objects, so the schema check is skipped for speed.
    spec: dict[str, Any] = chart.to_dict(validate=False)
    if colours:
        # A company template's accent replaces the house blue (exports match their theme).
        text = json.dumps(spec)
        for old, new in colours.items():
            text = text.replace(f'"{old}"', f'"{new}"')
        spec = json.loads(text)
    return spec


def to_svg(chart: Any, colours: Mapping[str, str] | None = None) -> str:
    """The chart as SVG text, rendered offline by vl-convert (embeds in any HTML).

    ``colours`` maps palette colours to replacements (a template's theme accent).
    """
    return str(vlc.vegalite_to_svg(_spec(chart, colours), vl_version=_VL_VERSION))


def to_png(chart: Any, scale: float = 2, colours: Mapping[str, str] | None = None) -> bytes:
    """The chart as PNG bytes at ``scale`` × its pixel size (2 suits slides and projectors).

    ``colours`` maps palette colours to replacements (a template's theme accent).
    """
    return bytes(vlc.vegalite_to_png(_spec(chart, colours), vl_version=_VL_VERSION, scale=scale))
