"""The charts an export shows, by name, drawn by :mod:`cluster_decide.charts` in its palette.

Every chart comes from ``cluster_decide.charts`` (the plan's) or
``cluster_decide.charts.analysis`` (lever values, break-evens); this module only decides which charts a
bundle has (the comparison needs ``cd.compare``'s frame) and renders them all at once, so a
failed render stops an export before any file is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

import altair as alt
import polars as pl

from cluster_decide import charts
from cluster_decide.charts import analysis as analysis_charts
from cluster_decide.export.content import Bundle, is_break_evens, is_levers, levers_shown
from cluster_decide.export.words import Names

__all__ = ["CHART_TITLES", "Rendered", "chart_names", "chart_set", "render", "shown"]

CHART_TITLES: Final = {
    "architecture": "Architecture",
    "cost_breakdown": "Monthly cost",
    "placements": "Placements",
    "compare": "Cost by architecture",
    "staffing": "Staffing",
    "service_levels": "Service levels",
    "levers": "What each lever is worth",
    "break_evens": "Break-even points",
}
"""Chart names, in the order exports show them, and their titles."""


@dataclass(frozen=True)
class Rendered:
    """One chart rendered: PNG bytes (at ``scale`` × its size) and SVG text."""

    name: str
    png: bytes
    svg: str


def _alternatives(bundle: Bundle) -> pl.DataFrame:
    if bundle.alternatives is None:
        raise ValueError("the compare chart needs alternatives (cd.compare's frame)")
    return bundle.alternatives


def _analysis(bundle: Bundle, is_kind: Callable[[pl.DataFrame], bool]) -> pl.DataFrame | None:
    """The first analysis frame of a kind (lever values, break-evens), or None."""
    return next((f for f in bundle.analyses.values() if is_kind(f)), None)


def _analysis_frame(bundle: Bundle, is_kind: Callable[[pl.DataFrame], bool]) -> pl.DataFrame:
    frame = _analysis(bundle, is_kind)
    if frame is None:
        raise ValueError("this chart needs its analysis frame in the bundle's analyses")
    return frame


_BUILDERS: Final[dict[str, Callable[[Bundle, int], Any]]] = {
    "architecture": lambda b, w: charts.architecture(b.plan, w),
    "cost_breakdown": lambda b, w: charts.cost_breakdown(b.plan, w),
    "placements": lambda b, w: charts.placements(b.plan, w),
    "compare": lambda b, w: charts.compare_archetypes(_alternatives(b), w),
    "staffing": lambda b, w: charts.staffing(b.plan, w),
    "service_levels": lambda b, w: charts.service_levels(b.plan, w),
    "levers": lambda b, w: analysis_charts.levers_chart(
        levers_shown(_analysis_frame(b, is_levers)), w
    ),
    "break_evens": lambda b, w: analysis_charts.break_even_chart(
        _analysis_frame(b, is_break_evens), w
    ),
}


_LONG_LABEL_PX: Final = 460
"""The widest a lever's label may print before Vega cuts it with an ellipsis."""
_LABEL_GAP_PX: Final = 8
"""The least space between two axis labels: closer ones print as one word ("$0k$50k")."""


def _build(name: str, bundle: Bundle, width: int) -> Any:
    """Chart ``name`` of a bundle (already in display names), its axis labels kept apart.

    A chart narrowed to share a slide with its table has little room for its value axis: with
    a gap set, Vega drops every other tick label instead of running them together. The lever
    chart shows the levers its table lists (:func:`levers_shown`), their labels uncut.
    """
    chart = _BUILDERS[name](bundle, width)
    config = getattr(chart, "config", None)
    axis = getattr(config, "axis", None)
    if isinstance(axis, alt.AxisConfig):
        axis.labelOverlap = True
        axis.labelSeparation = _LABEL_GAP_PX
        # A lever is a sentence ("the Chat API service target relaxed by 25%"): shown whole.
        axis.labelLimit = _LONG_LABEL_PX if name == "levers" else axis.labelLimit
    return chart


def chart_names(bundle: Bundle) -> tuple[str, ...]:
    """The charts this bundle has, in order.

    ``compare`` needs the alternatives; ``levers`` and ``break_evens`` need those analyses.
    """
    present = {
        "compare": bundle.alternatives is not None,
        "levers": _analysis(bundle, is_levers) is not None,
        "break_evens": _analysis(bundle, is_break_evens) is not None,
    }
    return tuple(n for n in CHART_TITLES if present.get(n, True))


def chart_set(bundle: Bundle, width: int = charts.WIDTH) -> dict[str, Any]:
    """The bundle's charts by name, as Altair charts."""
    view = shown(bundle)
    return {name: _build(name, view, width) for name in chart_names(bundle)}


def shown(bundle: Bundle) -> Bundle:
    """The bundle as charts show it: workloads and pools by display name, never by slug."""
    names = Names.of(bundle.plan, bundle.scenario)
    plan = bundle.plan

    def rename(frame: pl.DataFrame) -> pl.DataFrame:
        out = frame
        if "workload" in frame.columns:
            out = out.with_columns(
                pl.col("workload").replace_strict(names.workloads, default=pl.col("workload"))
            )
        if "pool" in frame.columns:
            out = out.with_columns(
                pl.col("pool").replace_strict(names.pools, default=pl.col("pool"))
            )
        return out

    def words(frame: pl.DataFrame) -> pl.DataFrame:
        cols = [c for c in ("change", "label", "sentence") if c in frame.columns]
        return (
            frame.with_columns(
                pl.col(c).map_elements(names.plain, return_dtype=pl.String) for c in cols
            )
            if cols and frame.height
            else frame
        )

    plan = replace(
        plan,
        placements=rename(plan.placements),
        pools=rename(plan.pools),
        service_levels=rename(plan.service_levels),
    )
    analyses = {k: words(v) for k, v in bundle.analyses.items()}
    return replace(bundle, plan=plan, analyses=analyses)


def render(
    bundle: Bundle,
    width: int = charts.WIDTH,
    scale: float = 2,
    png: bool = True,
    svg: bool = True,
    names: tuple[str, ...] | None = None,
    accent: str | None = None,
) -> dict[str, Rendered]:
    """Render the bundle's charts (all, or those of ``names`` it has) offline with vl-convert.

    ``accent`` replaces the house blue (a company template's theme colour).
    """
    out = {}
    view = shown(bundle)
    colours = {charts.PALETTE["blue"]: accent} if accent else None
    for name in chart_names(bundle):
        if names is not None and name not in names:
            continue
        chart = _build(name, view, width)
        out[name] = Rendered(
            name,
            charts.to_png(chart, scale, colours) if png else b"",
            charts.to_svg(chart, colours) if svg else "",
        )
    return out
