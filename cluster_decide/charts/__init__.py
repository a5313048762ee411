"""Every chart, in one package: each takes a plan or a frame and returns an Altair chart.

- :mod:`~cluster_decide.charts.plan`: a plan's architecture, costs, placements, service
  levels, staffing, the archetype comparison; the two hand-drawn SVGs the live dashboard
  redraws on every change; :func:`finish` (title and house style), :func:`to_svg` and
  :func:`to_png` (offline rendering with vl-convert).
- :mod:`~cluster_decide.charts.analysis`: alternatives, lever values, tornado, break-evens,
  uncertainty, Pareto front, showback.
- :mod:`~cluster_decide.charts.inventory`: the evidence behind an ingested inventory.

Colours, font, width and the number format are :mod:`cluster_decide.style` (re-exported here);
labels are :mod:`cluster_decide.base.vocabulary`.
"""

from __future__ import annotations

from cluster_decide.charts import analysis, inventory, plan
from cluster_decide.charts.plan import (
    architecture,
    architecture_svg,
    compare_archetypes,
    cost_breakdown,
    cost_svg,
    finish,
    placements,
    service_levels,
    sharing_week,
    simulated_waits,
    staffing,
    to_png,
    to_svg,
)
from cluster_decide.style import FONT, INK, PALETTE, PLATFORM_COLORS, WIDTH, short_number

__all__ = [
    "FONT",
    "INK",
    "PALETTE",
    "PLATFORM_COLORS",
    "WIDTH",
    "analysis",
    "architecture",
    "architecture_svg",
    "compare_archetypes",
    "cost_breakdown",
    "cost_svg",
    "finish",
    "inventory",
    "placements",
    "plan",
    "service_levels",
    "sharing_week",
    "short_number",
    "simulated_waits",
    "staffing",
    "to_png",
    "to_svg",
]
