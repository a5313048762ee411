"""The review-meeting dashboard and the executive app: picker, controls and answer, wired.

Every control change rebuilds the scenario from the base and the controls, solves it (cached by
scenario) and redraws the answer. Changes are debounced when ``debounce_s`` > 0: a burst of key
presses solves once, on a worker thread, while the last good answer stays on screen with a busy
indicator. Nothing a user does shows a traceback: bad input and failed solves become messages
and the last good answer is kept.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import ipywidgets as w

from cluster_decide.charts import WIDTH
from cluster_decide.errors import ScenarioError
from cluster_decide.plan import Plan
from cluster_decide.scenario import PRESETS, Scenario
from cluster_decide.widgets.answer import AnswerPanel
from cluster_decide.widgets.cache import PlanCache
from cluster_decide.widgets.compare import ABCompare
from cluster_decide.widgets.controls import DASHBOARD_CONTROLS, EXECUTIVE_CONTROLS, Controls
from cluster_decide.widgets.exporter import ExportPanel
from cluster_decide.widgets.html import STYLE, download_link
from cluster_decide.widgets.insight import InsightPanel
from cluster_decide.widgets.picker import ScenarioPicker

__all__ = ["Dashboard", "dashboard", "executive_app"]


def _filename(scn: Scenario) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", scn.name).strip("-").lower() or "scenario"
    return f"{slug}.toml"


class Dashboard:
    """Scenario picker, controls and the answer, kept in step; display it as a widget."""

    def __init__(
        self,
        controls: Sequence[str] = DASHBOARD_CONTROLS,
        presets: tuple[str, ...] = PRESETS,
        executive: bool = False,
        debounce_s: float = 0.0,
        cache: PlanCache | None = None,
        width: int = WIDTH,
        prefetch: bool = False,
    ) -> None:
        """``prefetch``: after each answer, solve and draw the moved control's next values."""
        self.cache = cache if cache is not None else PlanCache()
        self.debounce_s = debounce_s
        self.prefetch = prefetch
        self.executive = executive
        self.plan: Plan | None = None
        self.scenario: Scenario | None = None
        self._generation = 0
        self._timer: threading.Timer | None = None
        self._prefetcher: threading.Thread | None = None
        self._refresh_lock = threading.Lock()
        self.picker = ScenarioPicker(presets, upload=not executive)
        self.controls = Controls(controls, self.picker.current)
        self.download = w.HTML("")
        self.exporter = ExportPanel()
        self.insight: InsightPanel | None = None
        self.ab: ABCompare | None = None
        if executive:
            self.answer = AnswerPanel(
                visible=("architecture", "costs"), tabs=(), reasons=3, width=width
            )
        else:
            self.ab = ABCompare()
            self.insight = InsightPanel(width)
            self.answer = AnswerPanel(
                width=width,
                extra_tabs={"A/B": self.ab.box, "What would change it": self.insight.box},
            )
        self.picker.on_pick(self._picked)
        self.picker.on_error(self.answer.show_message)
        self.picker.save_button.on_click(lambda _b: self.save_in_session())
        self.controls.on_change(self._changed)
        left: list[w.Widget] = [self.picker.box, self.controls.box]
        if not executive:
            left.extend([self.download, self.exporter.box])
        if self.ab is not None:
            left.append(w.HBox([self.ab.pin_button, self.ab.clear_button]))
            self.ab.box.children = (self.ab.view,)
        self.box = w.VBox(
            [
                w.HTML(STYLE),
                w.HBox(
                    [w.VBox(left, layout=w.Layout(width="440px")), self.answer.box],
                    layout=w.Layout(align_items="flex-start"),
                ),
            ]
        )
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)

    # -- events ---------------------------------------------------------------------------

    def _picked(self, scn: Scenario) -> None:
        self.controls.reset(scn)
        self._changed()

    def _changed(self) -> None:
        self._generation += 1
        if self.debounce_s <= 0:
            self.refresh()
            return
        self.answer.set_busy(True)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(
            self.debounce_s, self._refresh_if_current, (self._generation,)
        )
        self._timer.daemon = True
        self._timer.start()

    def _refresh_if_current(self, generation: int) -> None:
        if generation == self._generation:
            self.refresh()

    def wait(self, timeout_s: float = 30.0) -> None:
        """Block until a pending refresh and its prefetch have finished (for scripts and tests)."""
        timer = self._timer
        if timer is not None:
            timer.join(timeout_s)
        with self._refresh_lock:
            pass
        prefetcher = self._prefetcher
        if prefetcher is not None:
            prefetcher.join(timeout_s)

    # -- the work -------------------------------------------------------------------------

    def refresh(self) -> None:
        """Solve the scenario the controls describe and redraw; on any failure keep the answer."""
        with self._refresh_lock:
            generation = self._generation
            try:
                scn = self.controls.scenario()
            except (ScenarioError, ValueError) as exc:
                self.answer.show_message(
                    f"That change cannot be used; the last answer is kept.\n{exc}"
                )
                self.answer.set_busy(False)
                return
            self.answer.set_busy(True)
            try:
                plan = self.cache.solve(scn)
                if generation != self._generation:
                    return  # a newer change is waiting; it will draw
                self.answer.show(plan)
            except Exception as exc:  # the room must never see a traceback
                self.answer.show_message(
                    f"Could not solve this scenario; the last answer is kept.\n{exc}"
                )
                self.answer.set_busy(False)
                return
            self.plan, self.scenario = plan, scn
            self.answer.show_message("")
            if self.ab is not None:
                self.ab.update(plan, scn)
            if not self.executive:
                self.download.value = download_link(
                    scn.to_toml(), _filename(scn), "Download this scenario (TOML)"
                )
                self.exporter.update(plan, scn)
            if self.insight is not None:
                self.insight.update(scn)
            self.answer.set_busy(False)
            if self.prefetch and self.controls.last_changed is not None:
                self._prefetcher = threading.Thread(
                    target=self._prefetch,
                    args=(generation, self.controls.last_changed),
                    daemon=True,
                )
                self._prefetcher.start()

    def _prefetch(self, generation: int, name: str) -> None:
        """Solve and draw the next values of control ``name`` while the room reads the answer.

        Stops as soon as the user changes anything; a failure here is silent, since the same
        scenario solved for real reports its own message.
        """
        for value in self.controls.neighbours(name):
            if generation != self._generation:
                return
            try:
                plan = self.cache.solve(self.controls.scenario_with(name, value))
                if generation != self._generation:
                    return
                self.answer.prerender(plan)
            except Exception:
                continue

    def save_in_session(self, name: str = "") -> str:
        """Remember the current scenario (controls applied) under a name, and select it."""
        if self.scenario is None:
            return ""
        name = (
            name or self.picker.save_name.value.strip() or f"saved {len(self.picker.scenarios) - 2}"
        )
        key = f"saved: {name}"
        self.picker.add(key, self.scenario)
        self.picker.save_name.value = ""
        return key


def dashboard(debounce_s: float = 0.1, prefetch: bool = True, **kwargs: Any) -> Dashboard:
    """The review-meeting dashboard with every control."""
    return Dashboard(DASHBOARD_CONTROLS, debounce_s=debounce_s, prefetch=prefetch, **kwargs)


def executive_app(debounce_s: float = 0.1, prefetch: bool = True, **kwargs: Any) -> Dashboard:
    """The executive app: presets, six controls and the one-glance answer."""
    return Dashboard(
        EXECUTIVE_CONTROLS, executive=True, debounce_s=debounce_s, prefetch=prefetch, **kwargs
    )
