"""The review-meeting dashboard and the executive app: picker, controls and answer, wired.

Every control change rebuilds the scenario from the base and the controls, solves it (cached by
scenario, deterministic) and redraws everything below the controls, live views included.
Changes are debounced when ``debounce_s`` > 0: a burst of key presses solves once, on a worker
thread, while the last good answer stays on screen with a busy indicator. Nothing a user does
shows a traceback: an invalid value is refused with a message and the control goes back to its
last good value; a failed solve becomes a message and the last good answer is kept.

Reset, Undo and a share link work on snapshots of the controls (``Controls.settings``); when
the answer jumps, a sentence built from the two plans says why (``change_sentence``).

Background work never delays a live answer: a control change stops the previous answer's verdict
check at once (its CP-SAT solve under way is stopped and its result dropped: a verdict is shown
whole or not at all), and a live solve stops the look-ahead unless it is solving the very value
wanted. The new answer's verdict starts after the new answer is drawn.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w

from cluster_decide.base.errors import ScenarioError
from cluster_decide.inputs.scenario import PRESETS, Scenario
from cluster_decide.model.stopping import SolveStopped, StopSignal, stoppable
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan
from cluster_decide.style import WIDTH
from cluster_decide.widgets.a11y import SliderNames
from cluster_decide.widgets.answer import AnswerPanel
from cluster_decide.widgets.assumptions import assumptions_html, scenario_line
from cluster_decide.widgets.cache import INTERACTIVE_TIME_LIMIT_S, INTERACTIVE_WORK_LIMIT, PlanCache
from cluster_decide.widgets.change import change_sentence, is_jump
from cluster_decide.widgets.compare import ABCompare
from cluster_decide.widgets.controls import (
    CONTROL_LABELS,
    DASHBOARD_CONTROLS,
    EXECUTIVE_CONTROLS,
    PROCUREMENT_WORDS,
    Controls,
    parse_budget,
)
from cluster_decide.widgets.exporter import ExportPanel
from cluster_decide.widgets.html import STYLE, download_link, message_html
from cluster_decide.widgets.insight import InsightPanel
from cluster_decide.widgets.onepage import one_page_html
from cluster_decide.widgets.picker import ScenarioPicker
from cluster_decide.widgets.share import from_query, to_query

__all__ = ["APP_TITLE", "Dashboard", "dashboard", "executive_app"]

APP_TITLE = "Cluster Decide — which way should we run our GPUs?"
"""The app's name, as the page title and the printed page say it."""
Snapshot = tuple[str, dict[str, Any]]
"""The picked scenario's key and every control's value: what Undo and a link restore."""


def _filename(scn: Scenario, ext: str = "toml") -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", scn.name).strip("-").lower() or "scenario"
    return f"{slug}.{ext}"


def _what(key: str, old: Any, new: Any) -> str:
    """A control change in words: "training demand ×1.05 → ×1.10"."""
    label = CONTROL_LABELS.get(key, key)
    if (
        isinstance(old, float)
        and isinstance(new, float)
        and key.startswith(("demand", "gpu", "slo"))
    ):
        return f"{label} ×{old:.2f} → ×{new:.2f}"
    if isinstance(old, bool):
        return f"{label} {'on' if new else 'off'}"
    if isinstance(old, tuple):
        return f"{label} {', '.join(new) or 'none'}"
    if key == "budget":
        return f"{label} {_budget_words(old)} → {_budget_words(new)}"
    if key == "procurement":
        return f"{label} {PROCUREMENT_WORDS[old][0].lower()} → {PROCUREMENT_WORDS[new][0].lower()}"
    return f"{label} {old or 'none'} → {new or 'none'}"


def _budget_words(text: Any) -> str:
    try:
        cap = parse_budget(text)
    except ValueError:
        return str(text)
    return "none" if cap is None else money(cap * 1e6)


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
        recommend: Callable[[Scenario], Any] | None = None,
    ) -> None:
        """``prefetch``: after each answer, solve and draw the moved control's next values.

        ``recommend``: a function of the scenario returning a recommendation-like object
        (``.verdict``, ``.sentence``); it runs in the background after each answer and its
        result shows under the headline, "Checking alternatives…" meanwhile.
        """
        self.cache = cache if cache is not None else PlanCache()
        self.debounce_s = debounce_s
        self.prefetch = prefetch
        self.executive = executive
        self.recommend = recommend
        self.plan: Plan | None = None
        self.scenario: Scenario | None = None
        self._generation = 0
        self._timer: threading.Timer | None = None
        self._prefetcher: threading.Thread | None = None
        self._verdict_thread: threading.Thread | None = None
        self._verdict_next: tuple[int, Scenario, Plan] | None = None
        self._verdict_stop: StopSignal | None = None
        self._checked: OrderedDict[str, Any] = OrderedDict()
        """Verdicts computed whole, by scenario key: a value seen again shows its verdict at once."""
        self._prefetch_stop: StopSignal | None = None
        self._verdict_lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self._live: list[tuple[w.HTML, Callable[[Plan], str]]] = []
        self.history: list[Snapshot] = []
        self.picker = ScenarioPicker(presets, upload=not executive)
        self.controls = Controls(controls, self.picker.current)
        self._applied: Snapshot = (str(self.picker.dropdown.value), self.controls.settings())
        self.download = w.HTML("")
        self.page = w.HTML("")
        self.share = w.HTML("")
        self.scenario_line = w.HTML("")
        self.assumptions = w.HTML("")
        self.exporter = ExportPanel()
        self.reset_button = w.Button(
            description="Reset", icon="undo", tooltip="Back to the scenario's own values"
        )
        self.undo_button = w.Button(
            description="Undo", icon="reply", tooltip="Undo the last change", disabled=True
        )
        self.reset_button.on_click(lambda _b: self.reset())
        self.undo_button.on_click(lambda _b: self.undo())
        self.insight: InsightPanel | None = None
        self.ab: ABCompare | None = None
        if executive:
            self.answer = AnswerPanel(
                visible=("architecture", "costs", "sharing_if_any"),
                tabs=(),
                reasons=3,
                width=width,
            )
        else:
            self.ab = ABCompare()
            self.insight = InsightPanel(width)
            self.answer = AnswerPanel(
                tabs=("costs", "placements", "service_levels", "staffing", "sharing", "reasons"),
                width=width,
                reasons=3,
                extra_tabs={"A/B": self.ab.box, "What would change it": self.insight.box},
            )
        self.picker.on_pick(self._picked)
        self.picker.on_error(self.answer.show_message)
        self.picker.save_button.on_click(lambda _b: self.save_in_session())
        self.controls.on_change(self._changed)
        actions = w.HBox([self.reset_button, self.undo_button])
        actions.add_class("cd-noprint")
        details = w.Accordion(children=[self.assumptions])
        details.set_title(0, "What ×1.00 means, and where the numbers come from")
        details.selected_index = None
        left: list[w.Widget] = [
            self.picker.box,
            actions,
            self.controls.box,
            self.scenario_line,
            details,
            self.share,
            self.page,
        ]
        left.append(self.exporter.box)
        if not executive:
            left.append(self.download)
        if self.ab is not None:
            left.append(w.HBox([self.ab.pin_button, self.ab.clear_button]))
            self.ab.box.children = (self.ab.view,)
        left_col = w.VBox(left, layout=w.Layout(width="472px", flex="0 0 472px"))
        left_col.add_class("cd-controls-col")
        title = w.HTML(
            f'<div class="cd cd-app-title">{APP_TITLE}</div><div class="cd cd-small">Pick the '
            "estate closest to yours and move the controls: an optimization model works out the "
            "architecture, its monthly cost, the staff it needs and why, again each time.</div>"
        )
        self.box = w.VBox(
            [
                w.HTML(STYLE),
                SliderNames(),
                title,
                w.HBox(
                    [left_col, self.answer.box],
                    layout=w.Layout(align_items="flex-start", width="100%", grid_gap="20px"),
                ),
            ]
        )
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)

    # -- live views -----------------------------------------------------------------------

    def live(self, render: Callable[[Plan], str]) -> w.HTML:
        """An HTML widget showing ``render(plan)`` for every new answer (no stale cells).

        Put it anywhere below the dashboard in a notebook; it redraws with the controls, in
        Jupyter and in Voila alike.
        """
        view = w.HTML("")
        self._live.append((view, render))
        if self.plan is not None:
            self._draw_live(view, render, self.plan)
        return view

    @staticmethod
    def _draw_live(view: w.HTML, render: Callable[[Plan], str], plan: Plan) -> None:
        try:
            view.value = render(plan)
        except Exception as exc:  # a view must never take the dashboard down
            view.value = message_html(f"This view could not be drawn for the new answer.\n{exc}")

    # -- events ---------------------------------------------------------------------------

    def _snapshot(self) -> Snapshot:
        return (str(self.picker.dropdown.value), self.controls.settings())

    def _picked(self, scn: Scenario) -> None:
        self.history.append(self._applied)
        self.controls.reset(scn)
        widened = self.controls.widened
        if widened:
            self.answer.show_message(
                "Some values of this scenario lie outside the usual range of their control; the "
                f"control was widened to show them as they are: {', '.join(widened)}.",
                "info",
            )
        self._changed(from_pick=True)

    def _changed(self, from_pick: bool = False) -> None:
        if not from_pick:
            self.history.append(self._applied)
        self.undo_button.disabled = not self.history
        self._supersede()
        if self.debounce_s <= 0:
            self.refresh()
            return
        self.answer.set_busy(True)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(
            self.debounce_s, self._refresh_if_current, (self._generation,)
        )
        # Not a daemon: a solve cut off at interpreter exit aborts the process (CP-SAT's threads).
        self._timer.daemon = False
        self._timer.start()

    def _supersede(self) -> None:
        """A newer request: what is on screen is stale, and so is its verdict check (stopped)."""
        with self._verdict_lock:
            self._generation += 1
            if self._verdict_stop is not None:
                self._verdict_stop.stop()
        if self.insight is not None:
            self.insight.settings_changed()

    def stop_background(self) -> None:
        """Stop the verdict check, the look-ahead and the analysis under way (nothing is shown)."""
        self._supersede()
        if self._prefetch_stop is not None:
            self._prefetch_stop.stop()

    def _refresh_if_current(self, generation: int) -> None:
        if generation == self._generation:
            self.refresh()

    def wait(self, timeout_s: float = 30.0) -> None:
        """Block until a pending refresh, its prefetch and its verdict have finished."""
        timer = self._timer
        if timer is not None:
            timer.join(timeout_s)
        with self._refresh_lock:
            pass
        for thread in (self._prefetcher, self._verdict_thread):
            if thread is not None:
                thread.join(timeout_s)

    def restore(self, snap: Snapshot) -> None:
        """Show a snapshot's scenario and control values, and answer it."""
        key, values = snap
        if key in self.picker.scenarios and key != self.picker.dropdown.value:
            self.picker.dropdown.unobserve(self.picker._picked, names="value")
            try:
                self.picker.dropdown.value = key
            finally:
                self.picker.dropdown.observe(self.picker._picked, names="value")
            self.controls.reset(self.picker.scenarios[key])
        self.controls.apply_settings(values)
        self.controls.last_changed = None  # nothing to explain or look ahead for
        self._supersede()
        self.undo_button.disabled = not self.history
        self.refresh()

    def reset(self) -> None:
        """Back to the picked scenario's own values (undoable)."""
        self.history.append(self._applied)
        key = str(self.picker.dropdown.value)
        self.controls.reset(self.picker.scenarios[key])
        self.restore((key, self.controls.settings()))

    def undo(self) -> None:
        """Undo the last change (a control, a reset or a scenario picked)."""
        if self.history:
            self.restore(self.history.pop())

    def apply_query(self, query: str) -> None:
        """Restore the settings of a share link (``?scenario=…&key=value``); bad values are named."""
        preset, values, problems = from_query(query, self.controls)
        if preset is not None and preset not in self.picker.scenarios:
            problems.insert(0, f"'scenario={preset}' is not a scenario of this app; ignored.")
            preset = None
        if preset is None and not values:
            if problems:
                self.answer.show_message(
                    "The link's settings were not used.\n" + "\n".join(problems)
                )
            return
        self.restore((preset or str(self.picker.dropdown.value), values))
        if problems:
            self.answer.show_message(
                "Some of the link's settings were not used.\n" + "\n".join(problems), "info"
            )

    def share_query(self) -> str:
        """The query string that restores what is on screen."""
        key = str(self.picker.dropdown.value)
        defaults = self.controls.defaults(self.picker.scenarios[key])
        return to_query(key, self.controls.settings(), defaults)

    # -- the work -------------------------------------------------------------------------

    def refresh(self) -> None:
        """Solve the scenario the controls describe and redraw; on any failure keep the answer."""
        with self._refresh_lock:
            generation = self._generation
            try:
                scn = self.controls.scenario()
            except (ScenarioError, ValueError) as exc:
                self._refuse(str(exc))
                return
            self.answer.set_busy(True)
            self.cache.make_way(scn)  # the look-ahead stops unless it is solving this very value
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
                self._check_again()
                return
            before, moved = self.plan, self.controls.last_changed
            old = self._applied[1].get(moved) if moved else None
            self.plan, self.scenario = plan, scn
            self._applied = self._snapshot()
            sentence = ""
            if before is not None and moved is not None and is_jump(before, plan):
                what = _what(moved, old, self.controls.value(moved))
                sentence = change_sentence(before, plan, what, scn)
            self.answer.show_change(sentence)
            if not self.controls.widened:
                self.answer.show_message("")
            self._after_answer(plan, scn)
            self.answer.set_busy(False)
            if self.prefetch and moved is not None:
                if self._prefetch_stop is not None:
                    self._prefetch_stop.stop()
                self._prefetch_stop = StopSignal()
                self._prefetcher = threading.Thread(
                    target=self._prefetch,
                    args=(generation, moved, self._prefetch_stop),
                    daemon=False,
                )
                self._prefetcher.start()
            if self.recommend is not None:
                self._start_verdict(generation, scn, plan)

    def _refuse(self, why: str) -> None:
        """Refuse an invalid control value: say why and show the last good values again."""
        if self.history:
            self.history.pop()
        self.undo_button.disabled = not self.history
        self.controls.apply_settings(self._applied[1])
        self.answer.show_message(f"That value was refused; the last answer is kept.\n{why}")
        self.answer.set_busy(False)
        self._check_again()

    def _check_again(self) -> None:
        """The answer on screen stays: its verdict, if the change stopped its check, is redone."""
        if self.recommend is not None and self.plan is not None and self.scenario is not None:
            self._start_verdict(self._generation, self.scenario, self.plan)

    def _after_answer(self, plan: Plan, scn: Scenario) -> None:
        """Everything else that shows the answer on screen: links, panels and live views."""
        names = tuple(self.controls.controls)
        self.scenario_line.value = scenario_line(scn, names)
        self.assumptions.value = assumptions_html(scn)
        query = self.share_query()
        self.share.value = (
            f'<div class="cd cd-share cd-noprint"><a href="{query}" data-query="{query}" '
            'target="_blank">Link to these settings</a> (copy it to share this view)</div>'
        )
        self.page.value = download_link(
            one_page_html(plan, scn, self.answer, APP_TITLE),
            _filename(scn, "html"),
            "Download this answer as one page (HTML, prints to one PDF page)",
            "text/html",
        ).replace('class="cd cd-download"', 'class="cd cd-download cd-noprint"')
        if self.ab is not None:
            self.ab.update(plan, scn)
        if not self.executive:
            self.download.value = download_link(
                scn.to_toml(), _filename(scn), "Download this scenario (TOML)"
            )
        self.exporter.update(plan, scn)
        if self.insight is not None:
            self.insight.update(scn, plan)
        for view, render in self._live:
            self._draw_live(view, render, plan)

    def _start_verdict(self, generation: int, scn: Scenario, plan: Plan) -> None:
        """Check the alternatives of the answer on screen in the background, one check at a time.

        A check takes seconds to minutes (the runner-up and the flip solves). A control change
        stops the check under way (:meth:`_supersede`), and a newer answer queues its own
        (replacing any older queued one) for the thread to take once the stopped check has
        let go: at most one check runs, never while a live solve waits for it, and the one
        that shows is the current answer's, computed whole.
        """
        done = self._checked.get(self.cache.key(scn))
        if done is not None:
            self.answer.show_verdict(done)
            return
        self.answer.show_verdict(None, pending=True)
        with self._verdict_lock:
            self._verdict_next = (generation, scn, plan)
            if self._verdict_thread is not None:
                return  # the running check takes the queued one when it ends
            self._verdict_thread = threading.Thread(target=self._verdicts, daemon=False)
            self._verdict_thread.start()

    def _verdicts(self) -> None:
        """Run the queued checks until none is left; show each only if it is still current."""
        from cluster_decide.planning.solve import deterministic_work

        recommend = self.recommend
        assert recommend is not None
        while True:
            with self._verdict_lock:
                job, self._verdict_next = self._verdict_next, None
                if job is None:
                    self._verdict_thread = self._verdict_stop = None
                    return
                generation, scn, plan = job
                if generation != self._generation:
                    continue  # a newer answer is on screen and has queued its own check
                stop = self._verdict_stop = StopSignal()  # _supersede stops it from now on
            try:
                with deterministic_work(INTERACTIVE_WORK_LIMIT), stoppable(stop):
                    verdict = _check(recommend, scn, plan)
            except SolveStopped:
                continue  # stale: dropped whole, never shown in part
            except Exception:  # the headline stands on its own; no verdict is shown
                verdict = None
            with self._verdict_lock:
                if verdict is not None and not stop.stopped:
                    self._checked[self.cache.key(scn)] = verdict
                    while len(self._checked) > 32:
                        self._checked.popitem(last=False)
                if generation == self._generation and not stop.stopped:
                    self.answer.show_verdict(verdict)

    def _prefetch(self, generation: int, name: str, stop: StopSignal) -> None:
        """Solve and draw the next values of control ``name`` while the room reads the answer.

        Stops as soon as the user changes anything, and a live solve stops its solve under way
        (``PlanCache.make_way``) unless it wants that very value; a failure here is silent,
        since the same scenario solved for real reports its own message.
        """
        for value in self.controls.neighbours(name):
            if generation != self._generation or stop.stopped:
                return
            try:
                plan = self.cache.solve(self.controls.scenario_with(name, value), stop)
                if generation != self._generation:
                    return
                self.answer.prerender(plan)
            except SolveStopped:
                return
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


def _check(recommend: Callable[..., Any], scn: Scenario, plan: Plan) -> Any:
    """``recommend(scn)``, with the answer on screen and the live solves' clock limit if it takes them.

    ``cluster_decide.recommend`` does: the plan is not solved twice, and a busy machine cannot
    cut a runner-up solve short on the wall clock (the work limit decides, as for live solves).
    """
    try:
        takes = set(inspect.signature(recommend).parameters)
    except (TypeError, ValueError):  # a callable without a signature: the scenario only
        takes = set()
    extra = {"plan": plan, "time_limit_s": INTERACTIVE_TIME_LIMIT_S}
    return recommend(scn, **{k: v for k, v in extra.items() if k in takes})


def dashboard(debounce_s: float = 0.1, prefetch: bool = True, **kwargs: Any) -> Dashboard:
    """The review-meeting dashboard with every control.

    Like the executive app, it states the verdict under the headline (``cluster_decide.
    recommend``; pass ``recommend=None`` to leave it out).
    """
    if "recommend" not in kwargs:
        import cluster_decide

        kwargs["recommend"] = getattr(cluster_decide, "recommend", None)
    return Dashboard(DASHBOARD_CONTROLS, debounce_s=debounce_s, prefetch=prefetch, **kwargs)


def executive_app(debounce_s: float = 0.1, prefetch: bool = True, **kwargs: Any) -> Dashboard:
    """The executive app: presets, the controls every limit needs, and the one-glance answer.

    Uses ``cluster_decide.recommend`` for the verdict under the headline when the package has
    it (pass ``recommend=None`` to leave it out).
    """
    if "recommend" not in kwargs:
        import cluster_decide

        kwargs["recommend"] = getattr(cluster_decide, "recommend", None)
    return Dashboard(
        EXECUTIVE_CONTROLS, executive=True, debounce_s=debounce_s, prefetch=prefetch, **kwargs
    )
