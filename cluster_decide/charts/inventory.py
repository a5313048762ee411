"""Charts of an inventory: the evidence behind the derived workloads, rendered offline.

Each function takes the classified job table (`classify(...).jobs`) or the busy-GPU frame
(`Demand.busy`), aggregates it in polars first (a chart embeds a few hundred points, never
millions of jobs) and returns an Altair chart in the house palette and fonts
(`cluster_decide.style`); `cluster_decide.charts.to_svg` / `to_png` render it without a
network. Altair is a `workbook` extra, so `cluster_decide.inventory` does not import the
charts.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import numpy as np
import polars as pl

from cluster_decide.base import vocabulary
from cluster_decide.charts.plan import finish, to_png, to_svg
from cluster_decide.inventory.rules import EXCLUDED
from cluster_decide.style import KIND_COLORS, PALETTE, WIDTH

__all__ = [
    "KIND_COLORS",
    "KIND_LABELS",
    "gang_sizes",
    "gpu_hours_by_class",
    "hour_of_week",
    "queue_wait_cdf",
    "to_png",
    "to_svg",
    "utilization",
]

KIND_LABELS = vocabulary.KIND_LABELS
"""Workload kinds as the charts name them, in the order they are drawn."""
_TEAM_COLORS = [
    PALETTE[c] for c in ("blue", "orange", "green", "purple", "sky", "vermilion", "yellow")
]
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _kind_scale(kinds: list[str]) -> alt.Scale:
    domain = [k for k in KIND_LABELS if k in kinds]
    return alt.Scale(
        domain=[KIND_LABELS[k] for k in domain], range=[KIND_COLORS[k] for k in domain]
    )


def _gpu_jobs(classified: pl.DataFrame) -> pl.DataFrame:
    """Classified GPU jobs (excluded and unclassified left out), with a display kind label."""
    return classified.filter(
        pl.col("kind").is_not_null() & (pl.col("kind") != EXCLUDED) & (pl.col("gpus") > 0)
    ).with_columns(
        pl.col("kind").replace_strict(KIND_LABELS, default=pl.col("kind")).alias("label")
    )


def _values(frame: pl.DataFrame) -> alt.Data:
    return alt.Data(values=frame.to_dicts())


def gpu_hours_by_class(classified: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """GPU-hours of each workload kind, stacked by team: where the estate's GPUs go."""
    jobs = _gpu_jobs(classified)
    by = (
        jobs.group_by("kind", "label", "team")
        .agg((pl.col("gpus") * pl.col("elapsed_s")).sum().truediv(3600.0).alias("gpu_hours"))
        .filter(pl.col("gpu_hours") > 0)
    )
    total = float(by["gpu_hours"].sum() or 0.0)
    order = (
        by.group_by("label").agg(pl.col("gpu_hours").sum()).sort("gpu_hours", descending=True)
    )["label"].to_list()
    teams = sorted(by["team"].unique().to_list())
    bars = (
        alt.Chart(_values(by.with_columns((pl.col("gpu_hours") / max(total, 1e-9)).alias("share"))))
        .mark_bar(height=24)
        .encode(
            x=alt.X("gpu_hours:Q", title="GPU-hours", axis=alt.Axis(format="~s", tickCount=6)),
            y=alt.Y("label:N", sort=order, title=None),
            color=alt.Color(
                "team:N",
                title="Team",
                scale=alt.Scale(domain=teams, range=_TEAM_COLORS),
                legend=alt.Legend(orient="bottom", direction="horizontal", columns=4),
            ),
            order=alt.Order("team:N"),
            tooltip=[
                alt.Tooltip("label:N", title="kind"),
                "team:N",
                alt.Tooltip("gpu_hours:Q", format=",.0f"),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
        .properties(width=width - 230, height=40 * max(len(order), 1))
    )
    return finish(
        bars, "GPU-hours by workload class and team", f"{total:,.0f} GPU-hours in the log"
    )


def hour_of_week(busy: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Mean busy GPUs for each hour of the week (local time): the estate's weekly rhythm."""
    how = (
        busy.group_by(
            (pl.col("hour").dt.weekday() - 1).alias("day"), pl.col("hour").dt.hour().alias("h")
        )
        .agg(pl.col("busy_gpus").mean().alias("busy_gpus"))
        .with_columns(pl.col("day").replace_strict(dict(enumerate(_DAYS))).alias("weekday"))
        .sort("day", "h")
    )
    tz = getattr(busy.schema["hour"], "time_zone", None) or "UTC"
    cell = max((width - 80) // 24, 10)
    heat = (
        alt.Chart(_values(how.drop("day")))
        .mark_rect()
        .encode(
            x=alt.X("h:O", title=f"hour of day ({tz})", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("weekday:N", sort=_DAYS, title=None),
            color=alt.Color(
                "busy_gpus:Q",
                title="mean busy GPUs",
                scale=alt.Scale(range=["#F7FBFF", PALETTE["blue"]], zero=True),
                legend=alt.Legend(orient="right", gradientLength=180),
            ),
            tooltip=[
                "weekday:N",
                alt.Tooltip("h:O", title="hour"),
                alt.Tooltip("busy_gpus:Q", format=",.1f"),
            ],
        )
        .properties(width=cell * 24, height=cell * 7)
    )
    peak = how.sort("busy_gpus", descending=True).row(0, named=True) if how.height else None
    note = f"Busiest: {peak['weekday']} {peak['h']:02d}:00" if peak else ""
    return finish(heat, "Busy GPUs by hour of the week", note)


def _gang_bucket(gpus: pl.Expr) -> pl.Expr:
    """Gang sizes rounded up to a power of two (1, 2, 4, ..., 512, then 1024+)."""
    exponent = gpus.cast(pl.Float64).log(2).ceil().clip(0, 10).cast(pl.Int64)
    return pl.lit(2, dtype=pl.Int64).pow(exponent)


def gang_sizes(classified: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Share of jobs and share of GPU-hours by gang size: many small jobs, few large gangs."""
    jobs = _gpu_jobs(classified).with_columns(_gang_bucket(pl.col("gpus")).alias("gang"))
    by = jobs.group_by("gang").agg(
        pl.len().alias("jobs"),
        (pl.col("gpus") * pl.col("elapsed_s")).sum().truediv(3600.0).alias("gpu_hours"),
    )
    n_jobs, n_hours = max(int(by["jobs"].sum() or 0), 1), max(float(by["gpu_hours"].sum()), 1e-9)
    long = pl.concat(
        [
            by.select("gang", (pl.col("jobs") / n_jobs).alias("share"), pl.lit("jobs").alias("m")),
            by.select(
                "gang",
                (pl.col("gpu_hours") / n_hours).alias("share"),
                pl.lit("GPU-hours").alias("m"),
            ),
        ]
    ).with_columns(
        pl.when(pl.col("gang") >= 1024)
        .then(pl.lit("1024+"))
        .otherwise(pl.col("gang").cast(pl.String))
        .alias("size")
    )
    sizes = [str(2**i) for i in range(10)] + ["1024+"]
    present = [s for s in sizes if s in set(long["size"].to_list())]
    median = float(jobs.select(pl.col("gpus").median()).item() or 0.0)
    bars = (
        alt.Chart(_values(long.drop("gang")))
        .mark_bar()
        .encode(
            x=alt.X(
                "size:N",
                sort=present,
                title="GPUs per job (rounded up to a power of 2)",
                axis=alt.Axis(labelAngle=0),
            ),
            xOffset=alt.XOffset("m:N", sort=["jobs", "GPU-hours"]),
            y=alt.Y("share:Q", title="share", axis=alt.Axis(format="%")),
            color=alt.Color(
                "m:N",
                title=None,
                scale=alt.Scale(
                    domain=["jobs", "GPU-hours"], range=[PALETTE["grey"], PALETTE["blue"]]
                ),
                legend=alt.Legend(
                    orient="bottom", direction="horizontal", labelExpr="'share of ' + datum.label"
                ),
            ),
            tooltip=["size:N", "m:N", alt.Tooltip("share:Q", format=".1%")],
        )
        .properties(width=width - 120, height=300)
    )
    return finish(
        bars,
        "Gang sizes: jobs vs GPU-hours",
        f"Median job: {median:g} GPU{'' if median == 1 else 's'} ({n_jobs:,} GPU jobs)",
    )


_WAIT_FLOOR_H = 1.0 / 60.0
_CDF_POINTS = 101
_WAIT_LABEL = (
    "datum.value < 1 ? format(datum.value * 60, '.0f') + ' min'"
    " : datum.value < 48 ? format(datum.value, '~g') + ' h' : format(datum.value / 24, '~g') + ' d'"
)


def queue_wait_cdf(classified: pl.DataFrame, width: int = WIDTH) -> alt.TopLevelMixin:
    """Cumulative share of jobs started within a given wait, one line per workload kind.

    Waits are start − submit of jobs that started; under a minute is drawn at one minute
    (log axis). Each line is 101 quantiles, so the chart stays small for any log size.
    """
    jobs = _gpu_jobs(classified).filter(
        pl.col("start").is_not_null() & pl.col("submit").is_not_null()
    )
    waits = jobs.select(
        "kind",
        "label",
        ((pl.col("start") - pl.col("submit")).dt.total_seconds() / 3600.0)
        .clip(lower_bound=_WAIT_FLOOR_H)
        .alias("wait"),
    )
    probs = np.linspace(0.0, 1.0, _CDF_POINTS)
    rows = []
    for (kind, label), part in waits.group_by("kind", "label"):
        q = np.quantile(part["wait"].to_numpy(), probs)
        rows += [
            {"kind": kind, "label": label, "wait": float(w), "share": float(p)}
            for w, p in zip(q, probs, strict=True)
        ]
    frame = pl.DataFrame(
        rows,
        schema={"kind": pl.String, "label": pl.String, "wait": pl.Float64, "share": pl.Float64},
    )
    kinds = frame["kind"].unique().to_list()
    top = max(float(frame.select(pl.col("wait").max()).item() or 1.0), 1.0)
    lines = (
        alt.Chart(_values(frame))
        .mark_line(interpolate="step-after", strokeWidth=2.5)
        .encode(
            x=alt.X(
                "wait:Q",
                title="queue wait (log scale; under a minute drawn at 1 min)",
                scale=alt.Scale(
                    type="log", domain=[_WAIT_FLOOR_H, 10 ** math.ceil(math.log10(top))]
                ),
                axis=alt.Axis(values=[1 / 60, 0.1, 1, 4, 12, 24, 72, 168], labelExpr=_WAIT_LABEL),
            ),
            y=alt.Y("share:Q", title="jobs started within", axis=alt.Axis(format="%")),
            color=alt.Color(
                "label:N",
                title=None,
                scale=_kind_scale(kinds),
                legend=alt.Legend(orient="bottom", direction="horizontal", columns=3),
            ),
            tooltip=[
                alt.Tooltip("label:N", title="kind"),
                alt.Tooltip("wait:Q", format=",.2f", title="wait (h)"),
                alt.Tooltip("share:Q", format=".0%"),
            ],
        )
        .properties(width=width - 120, height=320)
    )
    return finish(lines, "Observed queue waits", "Evidence for the SLOs, not targets")


def utilization(
    busy: pl.DataFrame, capacity_gpus: float | None = None, width: int = WIDTH
) -> alt.TopLevelMixin:
    """Busy GPUs per hour (thin) and per day (mean, bold) over the log; utilization with a capacity.

    With `capacity_gpus` the y axis is the share of that capacity, and the capacity is a rule
    at 100%; without it the axis counts GPUs.
    """
    tz = getattr(busy.schema["hour"], "time_zone", None) or "UTC"
    scale = 1.0 / capacity_gpus if capacity_gpus else 1.0
    hourly = busy.select(
        pl.col("hour").dt.strftime("%Y-%m-%dT%H:%M:%S").alias("t"),
        (pl.col("busy_gpus") * scale).alias("v"),
        pl.lit("hourly").alias("series"),
    )
    daily = (
        busy.group_by(pl.col("hour").dt.truncate("1d").alias("day"))
        .agg((pl.col("busy_gpus").mean() * scale).alias("v"))
        .sort("day")
        .select(
            (pl.col("day") + pl.duration(hours=12)).dt.strftime("%Y-%m-%dT%H:%M:%S").alias("t"),
            "v",
            pl.lit("daily mean").alias("series"),
        )
    )
    y_title = "utilization (busy / capacity)" if capacity_gpus else "busy GPUs"
    y_axis = alt.Axis(format="%" if capacity_gpus else "~s")
    line = (
        alt.Chart(_values(pl.concat([hourly, daily])))
        .mark_line()
        .encode(
            x=alt.X("t:T", title=f"local time ({tz})", axis=alt.Axis(format="%d %b", labelAngle=0)),
            y=alt.Y("v:Q", title=y_title, axis=y_axis),
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(
                    domain=["hourly", "daily mean"], range=["#A6CEE3", PALETTE["blue"]]
                ),
                legend=alt.Legend(orient="bottom", direction="horizontal"),
            ),
            strokeWidth=alt.StrokeWidth(
                "series:N",
                scale=alt.Scale(domain=["hourly", "daily mean"], range=[1, 2.5]),
                legend=None,
            ),
            tooltip=[
                alt.Tooltip("t:T", format="%a %d %b %H:%M"),
                alt.Tooltip("v:Q", format=",.2f"),
            ],
        )
        .properties(width=width - 100, height=300)
    )
    layers: list[Any] = [line]
    if capacity_gpus:
        layers.append(
            alt.Chart(alt.Data(values=[{"v": 1.0}]))
            .mark_rule(color=PALETTE["vermilion"], strokeDash=[6, 4])
            .encode(y="v:Q")
        )
    mean = float(busy.select(pl.col("busy_gpus").mean()).item() or 0.0)
    peak = float(busy.select(pl.col("busy_gpus").max()).item() or 0.0)
    note = f"Mean {mean:,.0f} busy GPUs, peak {peak:,.0f}"
    if capacity_gpus:
        note += f" of {capacity_gpus:,.0f} ({mean / capacity_gpus:.0%} mean utilization)"
    title = "GPU utilization over time" if capacity_gpus else "Busy GPUs over time"
    return finish(alt.layer(*layers), title, note)
