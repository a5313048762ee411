"""Scenario A/B: pin the current plan, change things, and see both side by side with deltas."""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as w

from cluster_decide.base.vocabulary import COMPONENT_LABELS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan
from cluster_decide.widgets.html import archetype_label, message_html

__all__ = ["ABCompare", "ab_rows", "scenario_changes"]


def _total(plan: Plan, frame: str, column: str, **where: str) -> float:
    df = getattr(plan, frame)
    for k, v in where.items():
        df = df.filter(df[k] == v)
    return float(df[column].sum()) if df.height else 0.0


def _money_or_dash(value: float) -> str:
    return "–" if math.isnan(value) else money(value)


def ab_rows(a: Plan, b: Plan) -> list[tuple[str, str, str, str, float]]:
    """Rows of (what, A, B, change, signed delta) comparing two plans; delta > 0 costs more."""
    rows: list[tuple[str, str, str, str, float]] = []
    same = a.archetype == b.archetype
    rows.append(
        (
            "Architecture",
            archetype_label(a.archetype),
            archetype_label(b.archetype),
            "same" if same else "changed",
            0.0,
        )
    )
    for label, attr in (("Monthly cost", "total_monthly_usd"), ("Cash spend", "cash_monthly_usd")):
        va, vb = getattr(a, attr), getattr(b, attr)
        d = vb - va
        rows.append(
            (
                label,
                _money_or_dash(va),
                _money_or_dash(vb),
                _signed_money(d),
                0.0 if math.isnan(d) else d,
            )
        )
    for label, frame, column, fmt in (
        ("Baseline GPUs", "pools", "gpus", "{:,.0f}"),
        ("GPU-hours rented at peaks, a month", "pools", "burst_gpu_hours", "{:,.0f}"),
        ("HPC FTE needed", "staffing", "required_fte", "{:.1f}"),
        ("Hires", "staffing", "hires", "{:.0f}"),
    ):
        where = {"skill": "hpc"} if label.startswith("HPC") else {}
        va, vb = _total(a, frame, column, **where), _total(b, frame, column, **where)
        rows.append((label, fmt.format(va), fmt.format(vb), _signed(vb - va, fmt), vb - va))
    va = _total(a, "staffing", "required_fte", skill="kubernetes")
    vb = _total(b, "staffing", "required_fte", skill="kubernetes")
    rows.insert(
        5, ("Kubernetes FTE needed", f"{va:.1f}", f"{vb:.1f}", _signed(vb - va, "{:.1f}"), vb - va)
    )
    components = list(dict.fromkeys([*a.costs["component"], *b.costs["component"]]))
    for comp in components:
        va = _total(a, "costs", "monthly_usd", component=comp)
        vb = _total(b, "costs", "monthly_usd", component=comp)
        if va or vb:
            rows.append(
                (
                    f"  {COMPONENT_LABELS.get(comp, comp)}",
                    money(va),
                    money(vb),
                    _signed_money(vb - va),
                    vb - va,
                )
            )
    return rows


def _signed(d: float, fmt: str) -> str:
    if abs(d) < 1e-9 or not fmt.format(abs(d)).strip("0.,"):
        return "–"  # no change at the precision shown
    return ("+" if d > 0 else "−") + fmt.format(abs(d))


def _signed_money(d: float) -> str:
    if math.isnan(d):
        return "–"
    if abs(d) < 0.5:
        return "–"
    return ("+" if d > 0 else "−") + money(abs(d))


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(data, list) and data and isinstance(data[0], dict) and "name" in data[0]:
        for item in data:
            out.update(
                _flat({k: v for k, v in item.items() if k != "name"}, f"{prefix}[{item['name']}]")
            )
    else:
        out[prefix] = data
    return out


def scenario_changes(a: Scenario, b: Scenario, limit: int = 10) -> list[str]:
    """What differs between two scenarios, as ``key: A → B`` lines (the first ``limit``)."""
    fa, fb = _flat(a.to_dict()), _flat(b.to_dict())
    lines = []
    for key in [*fa, *(k for k in fb if k not in fa)]:
        va, vb = fa.get(key), fb.get(key)
        if va != vb:
            lines.append(f"{key}: {_show(va)} → {_show(vb)}")
    return lines[:limit] + ([f"… and {len(lines) - limit} more"] if len(lines) > limit else [])


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


class ABCompare:
    """A pinned plan (A) beside the current one (B), with the change in every figure."""

    def __init__(self) -> None:
        self.pinned: tuple[Plan, Scenario] | None = None
        self.current: tuple[Plan, Scenario] | None = None
        self.pin_button = w.Button(
            description="Pin as A", icon="thumb-tack", tooltip="Pin this plan to compare"
        )
        self.clear_button = w.Button(description="Unpin", icon="times", disabled=True)
        self.view = w.HTML(message_html("Pin a plan as A, then change things to compare.", "info"))
        self.pin_button.on_click(lambda _b: self.pin())
        self.clear_button.on_click(lambda _b: self.clear())
        self.box = w.VBox([w.HBox([self.pin_button, self.clear_button]), self.view])

    def pin(self) -> None:
        """Pin the current plan as A."""
        if self.current is not None:
            self.pinned = self.current
            self.clear_button.disabled = False
            self._draw()

    def clear(self) -> None:
        """Forget the pinned plan."""
        self.pinned = None
        self.clear_button.disabled = True
        self.view.value = message_html("Pin a plan as A, then change things to compare.", "info")

    def update(self, plan: Plan, scn: Scenario) -> None:
        """Take the latest plan as B and redraw the comparison."""
        self.current = (plan, scn)
        if self.pinned is not None:
            self._draw()

    def _draw(self) -> None:
        if self.pinned is None or self.current is None:
            return
        (a, sa), (b, sb) = self.pinned, self.current
        body = []
        for what, va, vb, change, delta in ab_rows(a, b):
            cls = "cd-up" if delta > 0 else ("cd-down" if delta < 0 else "")
            body.append(
                f"<tr><td>{html.escape(what)}</td><td class='num'>{html.escape(va)}</td>"
                f"<td class='num'>{html.escape(vb)}</td>"
                f"<td class='num {cls}'>{html.escape(change)}</td></tr>"
            )
        changes = scenario_changes(sa, sb) or ["nothing: B is the pinned scenario"]
        items = "".join(f"<li>{html.escape(c)}</li>" for c in changes)
        self.view.value = (
            "<div class='cd'><table class='cd-table'><tr><th></th><th>A (pinned)</th>"
            f"<th>B (now)</th><th>Change</th></tr>{''.join(body)}</table>"
            f"<div><b>What changed from A to B</b><ul class='cd-reasons'>{items}</ul></div></div>"
        )
