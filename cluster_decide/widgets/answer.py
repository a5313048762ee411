"""The answer panel: headline, architecture and the other charts, tables and reasons.

Charts are rendered to SVG in the kernel (vl-convert), so they show with no internet and in any
front end. The panel keeps the last good answer on screen until a new one is ready, shows a small
busy indicator meanwhile, and renders a tab's charts only when it is opened.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w

from cluster_decide import charts
from cluster_decide.planning.plan import Plan
from cluster_decide.widgets.html import (
    busy_html,
    chart_html,
    headline_html,
    message_html,
    reasons_html,
    relaxations_html,
    table_html,
    verdict_html,
)

__all__ = ["CHARTS", "AnswerPanel"]

_PLACEMENT_COLUMNS = {
    "workload": "Workload",
    "platform": "Platform",
    "gpu_type": "GPU",
    "share": "Share",
    "gpus": "GPUs at peak",
    "gpu_hours_per_month": "GPU-hours/month",
}
_POOL_COLUMNS = {
    "platform": "Platform",
    "gpu_type": "GPU",
    "nodes": "Nodes",
    "gpus": "GPUs",
    "burst_gpu_hours": "Rented at peaks (GPU-hours a month)",
    "utilization": "Utilization",
}


def _placements(plan: Plan, width: int) -> str:
    svg = charts.to_svg(charts.placements(plan, width))
    return chart_html("placements", svg) + table_html(plan.placements, _PLACEMENT_COLUMNS)


def _architecture(plan: Plan, width: int) -> str:
    return chart_html("architecture", charts.architecture_svg(plan, width))


def _costs(plan: Plan, width: int) -> str:
    return chart_html("costs", charts.cost_svg(plan, width))


def _service(plan: Plan, width: int) -> str:
    return chart_html("service_levels", charts.to_svg(charts.service_levels(plan, width)))


def _staffing(plan: Plan, width: int) -> str:
    return chart_html("staffing", charts.to_svg(charts.staffing(plan, width)))


def _sharing(plan: Plan, width: int) -> str:
    """A week of each pool where training fills the services' troughs (or says there is none)."""
    return chart_html("sharing", charts.to_svg(charts.sharing_week(plan, width)))


def _sharing_if_any(plan: Plan, width: int) -> str:
    """The week of :func:`_sharing` for a plan that shares by the hour; nothing for other plans."""
    split = plan.hourly_split()  # kept on a solved plan; else it evaluates the plan, once
    if not split.height:
        return ""
    return chart_html("sharing", charts.to_svg(charts.sharing_week(plan, width, split)))


def _pools(plan: Plan, width: int) -> str:
    return table_html(plan.pools, _POOL_COLUMNS)


def _reasons(plan: Plan, width: int) -> str:
    return reasons_html(plan)


CHARTS: dict[str, tuple[str, Callable[[Plan, int], str]]] = {
    "architecture": ("Architecture", _architecture),
    "costs": ("Cost", _costs),
    "placements": ("Placements", _placements),
    "service_levels": ("Service levels", _service),
    "staffing": ("Staffing", _staffing),
    "sharing": ("Sharing by the hour", _sharing),
    "sharing_if_any": ("Sharing by the hour", _sharing_if_any),
    "pools": ("Pools", _pools),
    "reasons": ("Reasons", _reasons),
}
"""Answer parts by name: tab title and a function that renders the part of a plan as HTML."""


class AnswerPanel:
    """Headline, the always-visible parts, and tabs for the rest; redrawn by :meth:`show`.

    ``visible`` parts render on every new plan; ``tabs`` render when their tab is open, so a
    control change pays for what is on screen and nothing else. ``reasons`` limits the reasons
    under the headline (None: all of them in a tab instead).
    """

    def __init__(
        self,
        visible: Sequence[str] = ("architecture",),
        tabs: Sequence[str] = ("costs", "placements", "service_levels", "staffing", "reasons"),
        reasons: int | None = None,
        width: int = charts.WIDTH,
        extra_tabs: dict[str, w.Widget] | None = None,
    ) -> None:
        self.width = width
        self.plan: Plan | None = None
        self.busy = w.HTML(busy_html(False))
        self.message = w.HTML("", layout=w.Layout(display="none"))
        self.headline = w.HTML("")
        self.verdict = w.HTML("", layout=w.Layout(display="none"))
        self.change = w.HTML("", layout=w.Layout(display="none"))
        self.relaxations = w.HTML("", layout=w.Layout(display="none"))
        self.reasons_limit = reasons
        self.reasons = w.HTML("")
        self.parts: dict[str, w.HTML] = {n: w.HTML("") for n in (*visible, *tabs)}
        self.visible = tuple(visible)
        self.tab_names = tuple(tabs)
        self._drawn: dict[str, Plan | None] = dict.fromkeys(self.parts)
        self._rendered: dict[tuple[str, int], tuple[Plan, str]] = {}
        self._render_lock = threading.Lock()  # the prefetch thread draws too
        # Headline (answer and cost), then the reasons, then the charts side by side as the
        # screen allows: the answer, its reason and its cost fit above the fold at 1280×720.
        shown = w.Box([self.parts[n] for n in self.visible])
        shown.add_class("cd-visible")
        self._shown = shown
        children: list[w.Widget] = [
            self.busy,
            self.message,
            self.headline,
            self.verdict,
            self.change,
            self.relaxations,
            *([self.reasons] if reasons is not None else []),
            shown,
        ]
        self.tabs: w.Tab | None = None
        extra = extra_tabs or {}
        if self.tab_names or extra:
            self.tabs = w.Tab(children=[*(self.parts[n] for n in self.tab_names), *extra.values()])
            self.tabs.titles = (*(CHARTS[n][0] for n in self.tab_names), *extra)
            self.tabs.add_class("cd-tabs")
            self.tabs.observe(self._tab_opened, names="selected_index")
            children.append(self.tabs)
        self.box = w.VBox(children)
        self.box.add_class("cd-answer-col")

    @staticmethod
    def _put(widget: w.HTML, value: str) -> None:
        """Set an optional line; an empty one takes no room at all."""
        widget.value = value
        widget.layout.display = None if value else "none"

    def show_verdict(self, verdict: Any, pending: bool = False) -> None:
        """Show a recommendation-like object (``.verdict``, ``.sentence``), or the pending state."""
        self._put(self.verdict, verdict_html(verdict, pending))

    def show_change(self, sentence: str) -> None:
        """Say why the answer moved (empty: nothing to explain)."""
        self._put(
            self.change,
            f'<div class="cd cd-change" data-change="1">{html.escape(sentence)}</div>'
            if sentence
            else "",
        )

    def set_busy(self, busy: bool) -> None:
        """Show or hide the busy indicator (the answer below stays as it is)."""
        self.busy.value = busy_html(busy)

    def show_message(self, text: str, level: str = "error") -> None:
        """Show a message above the answer (empty text clears it)."""
        self._put(self.message, message_html(text, level) if text else "")

    def show(self, plan: Plan) -> None:
        """Redraw the headline and the parts on screen for ``plan``."""
        self.plan = plan
        self.headline.value = headline_html(plan)
        self._put(self.relaxations, relaxations_html(plan))
        self._shown.layout.display = None if plan.feasible else "none"
        if self.reasons_limit is not None:
            self.reasons.value = reasons_html(plan, self.reasons_limit)
        for name in self.visible:
            self._draw(name)
        if self.tabs is not None:
            self._tab_opened({"new": self.tabs.selected_index})

    def render_all(self) -> None:
        """Draw every part now, tabs included (for exports and tests)."""
        for name in self.parts:
            self._draw(name)

    def _html(self, name: str, plan: Plan) -> str:
        # Plans come from a cache, so a plan seen before is the same object: reuse its drawing.
        key = (name, id(plan))
        with self._render_lock:
            hit = self._rendered.get(key)
        if hit is None or hit[0] is not plan:
            hit = (plan, CHARTS[name][1](plan, self.width))
            with self._render_lock:
                self._rendered[key] = hit
                while len(self._rendered) > 64:
                    self._rendered.pop(next(iter(self._rendered)))
        return hit[1]

    def prerender(self, plan: Plan) -> None:
        """Draw the always-visible parts of ``plan`` ahead of time, without showing them."""
        for name in self.visible:
            self._html(name, plan)

    def _draw(self, name: str) -> None:
        plan = self.plan
        if plan is None or self._drawn[name] is plan:
            return
        self.parts[name].value = self._html(name, plan)
        self._drawn[name] = plan

    def _tab_opened(self, change: Any) -> None:
        if change["new"] is not None and change["new"] < len(self.tab_names):
            self._draw(self.tab_names[change["new"]])
