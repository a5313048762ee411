"""How the views look: one palette, one font, one width, one number format, colours by name.

Charts, the app's HTML and the exported slides and reports read their colours here, so a
platform, an archetype or a workload kind has the same colour everywhere. Nothing here imports
a plotting library: a slide or a table reads a colour without loading Altair.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ARCHETYPE_COLORS",
    "FONT",
    "INK",
    "KIND_COLORS",
    "PALETTE",
    "PLATFORM_COLORS",
    "WIDTH",
    "short_number",
]

PALETTE: Final = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "vermilion": "#D55E00",
    "yellow": "#F0E442",
    "grey": "#8C8C8C",
    "light": "#E6E6E6",
}
"""Okabe-Ito colours (colour-blind safe) plus two greys; the only colours the charts use."""
INK: Final = "#1A1A1A"
"""Text colour: near-black, for contrast on white and on the light platform tints."""
FONT: Final = "Liberation Sans, DejaVu Sans, Arial, Helvetica, sans-serif"
PLATFORM_COLORS: Final = {
    "slurm": PALETTE["blue"],
    "kubernetes": PALETTE["orange"],
    "kubernetes_batch": PALETTE["green"],
    "shared": PALETTE["purple"],
}
WIDTH: Final = 760
"""Default chart width in pixels: fits beside the controls on a 1280×800 screen."""
ARCHETYPE_COLORS: Final = {
    "slurm_only": PALETTE["blue"],
    "kubernetes_only": PALETTE["orange"],
    "kubernetes_batch": PALETTE["green"],
    "hybrid_separate": PALETTE["sky"],
    "hybrid_shared": PALETTE["purple"],
}
"""Archetype colours, each near the colour of the platform that defines it."""
KIND_COLORS: Final = {
    "distributed_training": PALETTE["blue"],
    "fine_tuning": PALETTE["sky"],
    "experimentation": PALETTE["green"],
    "batch_inference": PALETTE["orange"],
    "pipeline": PALETTE["purple"],
    "realtime_inference": PALETTE["vermilion"],
}
"""One Okabe-Ito colour per kind, so a kind looks the same in every chart (no yellow: thin
lines of it vanish on white)."""


def short_number(value: float) -> str:
    """A measured level as charts and exports print it: 631, 18, 4.9, 0.33.

    Two significant digits under ten, so a figure reads the same on a chart and in a table.
    """
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.2g}"
