"""The controls a review meeting moves, each mapped to one validated change of the scenario.

A control knows how to read its start value from a scenario and how to apply its value to one;
:class:`Controls` lays a chosen set of them out and turns a base scenario plus the current
values into the scenario to solve. Resetting to a new base does not fire change events.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from cluster_decide.base.constants import PLATFORMS, WORKLOAD_KINDS
from cluster_decide.base.vocabulary import KIND_LABELS, PLATFORM_LABELS, PLATFORM_SHORT
from cluster_decide.inputs.scenario import Scenario

__all__ = [
    "CONTROL_LABELS",
    "DASHBOARD_CONTROLS",
    "EXECUTIVE_CONTROLS",
    "KIND_LABELS",
    "PROCUREMENT_WORDS",
    "Control",
    "Controls",
    "control",
    "parse_budget",
]

_STYLE = {"description_width": "262px"}


def _layout(width: str = "484px") -> w.Layout:
    # One Layout per widget: hiding a control sets its layout's display. 484 px holds the
    # longest label ("Distributed training demand (× today)") beside a slider and its readout.
    return w.Layout(width=width)


@dataclass
class Control:
    """One widget with how to initialize it from a scenario and how to apply it to one."""

    name: str
    widget: w.Widget
    read: Callable[[Scenario], Any]
    apply: Callable[[Scenario, Any], Scenario]
    relevant: Callable[[Scenario], bool] = lambda scn: True


def _slider(
    label: str, lo: float, hi: float, step: float, fmt: str = ".2f", hint: str = ""
) -> w.FloatSlider:
    return w.FloatSlider(
        value=1.0,
        min=lo,
        max=hi,
        step=step,
        description=label,
        description_allow_html=False,
        tooltip=hint or f"{label}: 1.00 is the scenario as written (today); 2.00 is twice that",
        readout_format=fmt,
        continuous_update=False,
        style=_STYLE,
        layout=_layout(),
    )


def _has(kinds: Sequence[str]) -> Callable[[Scenario], bool]:
    return lambda scn: any(x.kind in kinds for x in scn.workloads)


def _scale_per_kind(name: str, method: str, kinds: Sequence[str], label: str) -> Control:
    """A × slider that applies ``Scenario.<method>(kind, value)`` to each kind present."""

    def apply(scn: Scenario, value: Any) -> Scenario:
        present = {x.kind for x in scn.workloads}
        for kind in kinds:
            if kind in present and abs(value - 1.0) > 1e-9:
                scn = getattr(scn, method)(kind, float(value))
        return scn

    return Control(
        f"{name}:{'+'.join(kinds)}",
        _slider(f"{label} (× today)", 0.25, 4.0, 0.05),
        lambda scn: 1.0,
        apply,
        _has(kinds),
    )


def _demand(kinds: Sequence[str], label: str) -> Control:
    return _scale_per_kind("demand", "scale_demand", kinds, f"{label} demand")


def _slo(kinds: Sequence[str], label: str) -> Control:
    return _scale_per_kind("slo", "scale_slo", kinds, f"{label} target")


def _fte(skill: str, label: str) -> Control:
    widget = w.FloatSlider(
        min=0.0,
        max=12.0,
        step=0.5,
        description=f"{label} engineers (FTE)",
        tooltip=f"{label} engineers on the team, in full-time equivalents; starts at today's team",
        readout_format=".1f",
        continuous_update=False,
        style=_STYLE,
        layout=_layout(),
    )
    return Control(
        f"fte:{skill}",
        widget,
        lambda scn: float(getattr(scn.team, skill).fte),
        lambda scn, v: scn if v == getattr(scn.team, skill).fte else scn.set_fte(skill, float(v)),
    )


def _hiring() -> Control:
    def apply(scn: Scenario, value: Any) -> Scenario:
        if bool(value) == scn.hiring.allowed:
            return scn
        return scn.set_hiring(bool(value), scn.hiring.max_fte or 4)

    return Control(
        "hiring",
        w.Checkbox(
            description="Hiring allowed",
            tooltip="May the plan hire engineers (up to the scenario's limit)?",
            style=_STYLE,
            layout=_layout(),
        ),
        lambda scn: scn.hiring.allowed,
        apply,
    )


def _slurm_nodes() -> Control:
    """Whether the estate's Slurm starts cloud nodes for queued jobs (``node_autoscaling``).

    The verdict says what such a Slurm would save where the scenario has not said; this lets a
    meeting see that plan without editing the file. Shown where Slurm is a candidate platform
    and the box decides: where the file says Slurm autoscales services, its pools rent whatever
    ``node_autoscaling`` says (``PlatformKind.adds_nodes``), and a box that could not turn that
    off would misstate the plan.
    """

    def read(scn: Scenario) -> bool:
        return scn.catalog.platforms["slurm"].adds_nodes

    return Control(
        "slurm_nodes",
        w.Checkbox(
            description="Slurm starts cloud nodes",
            tooltip=(
                "Does your Slurm start cloud nodes for queued jobs and end idle ones (AWS "
                "ParallelCluster or PCS, Azure CycleCloud, power saving with cloud nodes)? Its "
                "clusters may then rent their peaks and run interruptible work on spot"
            ),
            style=_STYLE,
            layout=_layout(),
        ),
        read,
        lambda scn, v: scn if bool(v) == read(scn) else scn.set_slurm_adds_nodes(bool(v)),
        lambda scn: (
            "slurm" in scn.policy.platforms and not scn.catalog.platforms["slurm"].autoscales
        ),
    )


PROCUREMENT_WORDS = {
    "cloud": ("Cloud", "Rent every GPU from clouds"),
    "on_prem": ("On-prem", "Buy every GPU: owned hardware in your machine room"),
    "cheapest": ("Cheapest", "Buy or rent each GPU type, whichever costs less a month"),
}
"""Each ``procurement.mode``: its button's label and what it means (the button's tooltip)."""


def _procurement() -> Control:
    """A toggle of every ``procurement.mode`` a scenario may have.

    One the toggle lacked made a scenario that buys where cheapest fail to load into it.
    """
    return Control(
        "procurement",
        w.ToggleButtons(
            options=[(label, mode) for mode, (label, _tip) in PROCUREMENT_WORDS.items()],
            tooltips=[tip for _label, tip in PROCUREMENT_WORDS.values()],
            description="Procurement",
            style={**_STYLE, "button_width": "90px"},
        ),
        lambda scn: scn.procurement.mode,
        lambda scn, v: scn if v == scn.procurement.mode else scn.set_procurement(str(v)),
    )


def _prices() -> Control:
    return Control(
        "gpu_prices",
        _slider(
            "GPU prices (× today)",
            0.5,
            2.0,
            0.05,
            hint="GPU prices: 1.00 is the catalog's list prices; 0.80 is 20% cheaper",
        ),
        lambda scn: scn.procurement.gpu_price_scale,
        lambda scn, v: (
            scn
            if abs(v - scn.procurement.gpu_price_scale) < 1e-9
            else scn.scale_gpu_prices(float(v))
        ),
    )


def parse_budget(text: Any) -> float | None:
    """A budget typed in $M a month: None for no cap; ValueError naming the control otherwise."""
    raw = str(text).strip().replace(",", "").lstrip("$").removesuffix("M").strip()
    if raw.lower() in ("", "0", "none", "no cap"):
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or value > 1000:
        raise ValueError(
            f"Budget cap: expected a number of $M a month between 0.01 and 1000 (e.g. 3.5), or "
            f"empty for no cap; got '{text}'."
        )
    return value


def _budget_text(scn: Scenario) -> str:
    cap = scn.policy.budget_usd_per_month
    return "" if cap is None else f"{cap / 1e6:g}"


def _budget() -> Control:
    def apply(scn: Scenario, value: Any) -> Scenario:
        cap = parse_budget(value)
        now = scn.policy.budget_usd_per_month
        if (cap is None and now is None) or (
            cap is not None and now is not None and abs(cap * 1e6 - now) < 0.5
        ):
            return scn
        return scn.set_budget(None if cap is None else cap * 1e6)

    return Control(
        "budget",
        w.Text(
            description="Budget cap ($M a month)",
            placeholder="no cap",
            tooltip="Most the plan may spend in cash a month, in millions of dollars; empty means no cap",
            continuous_update=False,
            style=_STYLE,
            layout=_layout("470px"),  # a text box draws its border outside its width
        ),
        _budget_text,
        apply,
    )


def _platforms() -> Control:
    boxes = [
        w.Checkbox(
            value=True,
            description=PLATFORM_SHORT[p],
            tooltip=PLATFORM_LABELS[p],
            indent=False,
            layout=w.Layout(width="200px"),
        )
        for p in PLATFORMS
    ]
    box = w.VBox(
        [w.HTML("<b>Candidate platforms</b>"), w.HBox(boxes[:2]), w.HBox(boxes[2:])],
        layout=w.Layout(width="420px"),
    )

    def read(scn: Scenario) -> tuple[str, ...]:
        return tuple(scn.policy.platforms)

    def apply(scn: Scenario, value: Any) -> Scenario:
        if not value:
            raise ValueError("Candidate platforms: keep at least one platform ticked.")
        return scn if tuple(value) == read(scn) else scn.restrict_platforms(list(value))

    return Control("platforms", box, read, apply)


def control(name: str) -> Control:
    """A fresh control by name (see ``DASHBOARD_CONTROLS`` for the names)."""
    groups = {
        "demand:training": (("distributed_training", "fine_tuning"), "Training"),
        "demand:inference": (("realtime_inference", "batch_inference"), "Inference"),
    }
    if name in groups:
        return _demand(*groups[name])
    if name.startswith("demand:") and name[7:] in WORKLOAD_KINDS:
        return _demand((name[7:],), KIND_LABELS[name[7:]])
    makers: dict[str, Callable[[], Control]] = {
        "slo:latency": lambda: _slo(("realtime_inference",), "p99 latency"),
        "slo:training": lambda: _slo(("distributed_training", "fine_tuning"), "Training wait"),
        "slo:batch": lambda: _slo(("batch_inference", "pipeline"), "Batch deadline"),
        "fte:hpc": lambda: _fte("hpc", "HPC"),
        "fte:kubernetes": lambda: _fte("kubernetes", "Kubernetes"),
        "hiring": _hiring,
        "slurm_nodes": _slurm_nodes,
        "procurement": _procurement,
        "gpu_prices": _prices,
        "budget": _budget,
        "platforms": _platforms,
    }
    if name not in makers:
        raise KeyError(f"no control named '{name}'")
    return makers[name]()


DASHBOARD_CONTROLS = (
    *(f"demand:{k}" for k in WORKLOAD_KINDS),
    "fte:hpc",
    "fte:kubernetes",
    "hiring",
    "procurement",
    "slurm_nodes",
    "gpu_prices",
    "slo:latency",
    "slo:training",
    "slo:batch",
    "budget",
    "platforms",
)
"""Everything a review meeting changes."""
EXECUTIVE_CONTROLS = (
    "demand:training",
    "demand:inference",
    "fte:hpc",
    "fte:kubernetes",
    "hiring",
    "procurement",
    "slurm_nodes",
    "gpu_prices",
    "budget",
    "platforms",
)
"""The executive app's controls: every limit the answer depends on is on screen."""
CONTROL_LABELS = {
    "demand:training": "training demand",
    "demand:inference": "inference demand",
    **{f"demand:{k}": f"{v.lower()} demand" for k, v in KIND_LABELS.items()},
    "fte:hpc": "HPC engineers",
    "fte:kubernetes": "Kubernetes engineers",
    "hiring": "hiring",
    "slurm_nodes": "Slurm starting cloud nodes",
    "procurement": "procurement",
    "gpu_prices": "GPU prices",
    "slo:latency": "the latency target",
    "slo:training": "the training wait target",
    "slo:batch": "the batch deadline",
    "budget": "the budget cap",
    "platforms": "the candidate platforms",
}
"""What each control is called in a sentence ("+10% training demand …")."""


class Controls:
    """A set of controls over a base scenario: ``scenario()`` applies them all in order.

    Controls are keyed by the names they were asked for (``demand:training``), and every event,
    look-ahead and setting uses that key.
    """

    def __init__(self, names: Sequence[str], base: Scenario) -> None:
        self.controls = {n: control(n) for n in names}
        self._callbacks: list[Callable[[], None]] = []
        self._muted = False
        self.last_changed: str | None = None
        self.widened: list[str] = []
        self._ranges = {
            n: (c.widget.min, c.widget.max)
            for n, c in self.controls.items()
            if isinstance(c.widget, w.FloatSlider)
        }
        self.box = w.VBox([c.widget for c in self.controls.values()])
        for key, c in self.controls.items():
            for leaf in self._leaves(c):
                leaf.observe(lambda _ch, name=key: self._fire(name), names="value")
        self.reset(base)

    @staticmethod
    def _leaves(c: Control) -> list[w.Widget]:
        if c.name == "platforms":
            return [b for row in c.widget.children[1:] for b in row.children]
        return [c.widget]

    def __getitem__(self, name: str) -> w.Widget:
        """The widget of a control (for the platforms control, the box of checkboxes)."""
        return self.controls[name].widget

    def value(self, name: str) -> Any:
        """The current value of a control."""
        c = self.controls[name]
        if c.name == "platforms":
            leaves = self._leaves(c)
            return tuple(p for p, b in zip(PLATFORMS, leaves, strict=True) if b.value)
        return c.widget.value

    def _put(self, name: str, value: Any) -> None:
        """Show ``value`` in a control; a slider's range widens to hold it (never clamps)."""
        c = self.controls[name]
        if c.name == "platforms":
            for p, b in zip(PLATFORMS, self._leaves(c), strict=True):
                b.value = p in value
            return
        if isinstance(c.widget, w.FloatSlider):
            lo, hi = self._ranges[name]
            v = float(value)
            c.widget.min, c.widget.max = min(lo, v), max(hi, v)
            if not lo <= v <= hi:
                self.widened.append(name)
        c.widget.value = value

    def set_value(self, name: str, value: Any) -> None:
        """Set a control's value as a user would (fires the change once)."""
        self._muted = True
        try:
            self._put(name, value)
        finally:
            self._muted = False
        self._fire(name)

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after any control changes (not on reset)."""
        self._callbacks.append(callback)

    def _fire(self, name: str) -> None:
        if not self._muted:
            self.last_changed = name
            for cb in self._callbacks:
                cb()

    def neighbours(self, name: str) -> list[Any]:
        """The values one step either side of a slider's value, or a toggle's other options.

        These are the likeliest next values, which the dashboard solves ahead of time.
        """
        widget = self.controls[name].widget
        if isinstance(widget, w.FloatSlider):
            steps = (widget.value + widget.step, widget.value - widget.step)
            return [round(v, 6) for v in steps if widget.min <= round(v, 6) <= widget.max]
        if isinstance(widget, w.Checkbox):
            return [not widget.value]
        if isinstance(widget, w.ToggleButtons):
            return [v for _label, v in widget.options if v != widget.value]
        return []

    def scenario_with(self, name: str, value: Any) -> Scenario:
        """The scenario the controls would give if control ``name`` had ``value``."""
        scn = self.base
        for key, c in self.controls.items():
            scn = c.apply(scn, value if key == name else self.value(key))
        return scn

    def reset(self, base: Scenario) -> None:
        """Show ``base``'s values (hiding controls that do not apply to it), without firing.

        A value outside a slider's usual range (an uploaded file's 15 FTE) widens the slider
        rather than being clamped: the controls never change a file's value silently.
        """
        self.base = base
        self.widened = []
        self._muted = True
        try:
            for key, c in self.controls.items():
                self._put(key, c.read(base))
                c.widget.layout.display = None if c.relevant(base) else "none"
        finally:
            self._muted = False

    def settings(self) -> dict[str, Any]:
        """Every control's value by key (a snapshot for undo and share links)."""
        return {key: self.value(key) for key in self.controls}

    def defaults(self, scn: Scenario) -> dict[str, Any]:
        """Every control's value for ``scn`` as written (what Reset shows)."""
        return {key: c.read(scn) for key, c in self.controls.items()}

    def apply_settings(self, values: dict[str, Any]) -> None:
        """Show the given values (keys not given keep theirs), without firing."""
        self._muted = True
        try:
            for key, value in values.items():
                if key in self.controls:
                    self._put(key, value)
        finally:
            self._muted = False

    def scenario(self) -> Scenario:
        """The base scenario with every control applied (raises ScenarioError or ValueError)."""
        scn = self.base
        for name, c in self.controls.items():
            scn = c.apply(scn, self.value(name))
        return scn
