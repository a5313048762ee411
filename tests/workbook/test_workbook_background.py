"""Background work never delays a live answer: stale verdict checks and look-aheads are stopped.

The apps check each answer's alternatives (the verdict) and solve the moved control's next values
(the look-ahead) on threads of the same kernel. Before, a control change let the previous
answer's check run on: its CP-SAT solves shared the two cores and the interpreter with the new
answer's solve, and the new total took over a minute to show in the browser. These tests hold a
background solve in place (a stand-in for a long search, released only when someone asks that
solver to stop) and check, without timing anything, that the new answer asks it to stop, that a
stopped check is dropped whole, and that a look-ahead of the very value wanted is waited for.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest
from ortools.sat.python import cp_model

import cluster_decide as cd
from cluster_decide.model.stopping import SolveStopped, StopSignal, stoppable
from cluster_decide.widgets import PlanCache, executive_app

HOLD_S = 60.0
"""How long a held solve waits for a stop before it runs anyway (the old code never stops it)."""


@dataclass
class StandIn:
    verdict: str
    sentence: str


class HeldSolves:
    """CP-SAT solves on threads ``held`` picks wait until some solver is asked to stop."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, held: Any) -> None:
        self.held = held
        self.entered = threading.Event()
        self.released = threading.Event()
        self.stops = 0
        plain_solve, plain_stop = cp_model.CpSolver.solve, cp_model.CpSolver.stop_search

        def solve(solver: cp_model.CpSolver, model: Any, callback: Any = None) -> Any:
            if self.held() and not self.released.is_set():
                self.entered.set()
                self.released.wait(HOLD_S)
            return plain_solve(solver, model, callback)

        def stop_search(solver: cp_model.CpSolver) -> None:
            self.stops += 1
            self.released.set()
            plain_stop(solver)

        monkeypatch.setattr(cp_model.CpSolver, "solve", solve)
        monkeypatch.setattr(cp_model.CpSolver, "stop_search", stop_search)


def test_a_control_change_stops_the_verdict_check_under_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first answer's check is in a solve when the slider moves: that solver is asked to
    stop, the stale check ends without a verdict, and the new answer's check shows (whole)."""
    checking = threading.local()
    held = HeldSolves(monkeypatch, lambda: getattr(checking, "on", False))
    outcomes: list[tuple[str, float]] = []

    def recommend(scn: cd.Scenario, plan: Any = None) -> StandIn:
        fte = scn.team.kubernetes.fte
        checking.on = True
        try:
            cd.solve(scn, workers=1)  # a real solve, as the runner-up and flip solves are
        except SolveStopped:
            outcomes.append(("stopped", fte))
            raise
        finally:
            checking.on = False
        outcomes.append(("done", fte))
        return StandIn("close", f"checked at {fte:.1f} Kubernetes FTE")

    app = executive_app(debounce_s=0.0, cache=PlanCache(), prefetch=False, recommend=recommend)
    assert held.entered.wait(HOLD_S), "the first answer's check never reached its solve"
    start = float(app.controls.value("fte:kubernetes"))
    app.controls.set_value("fte:kubernetes", start + 0.5)
    assert "Checking alternatives" in app.answer.verdict.value
    app.wait(timeout_s=120)
    assert held.stops >= 1, "the stale check's solver was never asked to stop"
    assert outcomes == [("stopped", start), ("done", start + 0.5)]
    assert f"checked at {start + 0.5:.1f} Kubernetes FTE" in app.answer.verdict.value


def test_a_live_solve_stops_the_look_ahead_of_another_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The look-ahead is solving the next step when the user jumps elsewhere: the live solve
    does not queue behind it (the look-ahead's solver is asked to stop), and the stopped
    look-ahead leaves nothing in the cache."""
    main = threading.main_thread()
    held = HeldSolves(monkeypatch, lambda: threading.current_thread() is not main)
    cache = PlanCache()
    app = executive_app(debounce_s=0.0, cache=cache, prefetch=True, recommend=None)
    start = float(app.controls.value("fte:kubernetes"))
    app.controls.set_value("fte:kubernetes", start + 0.5)  # looks ahead to +1.0 and +0.0
    assert held.entered.wait(HOLD_S), "the look-ahead never reached its solve"
    app.controls.set_value("fte:kubernetes", start + 2.0)
    assert held.stops >= 1, "the live solve waited for the look-ahead instead of stopping it"
    assert app.scenario is not None and app.scenario.team.kubernetes.fte == start + 2.0
    assert app.controls.scenario_with("fte:kubernetes", start + 1.0) not in cache
    app.wait(timeout_s=120)


def test_a_live_solve_waits_for_the_look_ahead_of_the_same_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The look-ahead is solving the very value the user moves to: it is worth waiting for, so
    it is not stopped, and the answer comes from the cache it fills."""
    main = threading.main_thread()
    held = HeldSolves(monkeypatch, lambda: threading.current_thread() is not main)
    cache = PlanCache()
    app = executive_app(debounce_s=0.0, cache=cache, prefetch=True, recommend=None)
    start = float(app.controls.value("fte:kubernetes"))
    app.controls.set_value("fte:kubernetes", start + 0.5)
    assert held.entered.wait(HOLD_S)
    wanted = app.controls.scenario_with("fte:kubernetes", start + 1.0)
    assert cache._solving is not None and cache._solving[0] == cache.key(wanted)
    misses = cache.misses
    app.prefetch = False  # count only the live solve (the held look-ahead runs on)
    timer = threading.Timer(0.5, held.released.set)  # the held look-ahead solve then ends
    timer.start()
    app.controls.set_value("fte:kubernetes", start + 1.0)
    timer.join()
    assert held.stops == 0
    assert cache.misses == misses  # the live answer was the look-ahead's plan
    assert app.scenario is not None and app.scenario.team.kubernetes.fte == start + 1.0
    app.wait(timeout_s=120)


def _golomb(marks: int) -> cp_model.CpModel:
    """The shortest Golomb ruler: a search that runs for minutes on one worker at 12 marks."""
    model = cp_model.CpModel()
    top = marks * marks
    x = [model.new_int_var(0, top, f"x{i}") for i in range(marks)]
    model.add(x[0] == 0)
    diffs = []
    for i in range(marks):
        for j in range(i + 1, marks):
            d = model.new_int_var(1, top, f"d{i}_{j}")
            model.add(d == x[j] - x[i])
            diffs.append(d)
    model.add_all_different(diffs)
    for i in range(marks - 1):
        model.add(x[i] < x[i + 1])
    model.minimize(x[-1])
    return model


def test_a_stop_signal_ends_a_long_search_and_every_later_one() -> None:
    """A real CP-SAT search, stopped from another thread before or during it, raises
    SolveStopped (no half answer) instead of running on; later solves raise at once."""
    from cluster_decide.model.stopping import new_solver

    for stop_first in (True, False):
        signal = StopSignal()
        outcome: list[str] = []
        searching = threading.Event()

        def search(
            sig: StopSignal = signal, out: list[str] = outcome, busy: threading.Event = searching
        ) -> None:
            with stoppable(sig):
                solver = new_solver()
                solver.parameters.num_workers = 1
                solver.parameters.max_time_in_seconds = 600.0
                busy.set()
                try:
                    solver.solve(_golomb(12))
                    out.append("finished")
                except SolveStopped:
                    out.append("stopped")

        if stop_first:
            signal.stop()
        thread = threading.Thread(target=search)
        thread.start()
        assert searching.wait(30)
        signal.stop()
        thread.join(120)
        assert not thread.is_alive() and outcome == ["stopped"], (stop_first, outcome)
        with stoppable(signal), pytest.raises(SolveStopped):
            new_solver().solve(_golomb(4))


def test_stopped_work_ends_between_its_solves_not_at_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stale check stopped while it repairs a plan (Python, no CP-SAT under way) ends at its
    next pool check, not after finishing the repair and the cuts: until it ends it shares the
    interpreter with the new answer."""
    from cluster_decide.planning import loop

    signal = StopSignal()
    checks: list[int] = []
    real = loop.evaluate_decisions

    def evaluating(*args: Any, **kwargs: Any) -> Any:
        checks.append(1)
        if len(checks) == 3:
            signal.stop()  # the control moved while this work was checking plans
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "evaluate_decisions", evaluating)
    scn = cd.load_scenario().scale_demand("distributed_training", 1.1)  # 15 plan checks
    with stoppable(signal), pytest.raises(SolveStopped):
        cd.solve(scn, workers=1)
    assert len(checks) <= 4, f"{len(checks) - 3} plan checks after the stop"


def test_stopped_work_ends_within_a_model_build_and_before_another_lp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stale check stopped while it builds a model ends before the next constraint family,
    and one stopped during an LP relaxation (GLOP holds the interpreter and cannot be
    interrupted) tries no further LP: each would otherwise run on beside the new answer."""
    from cluster_decide.model import build
    from cluster_decide.model.data import prepare
    from cluster_decide.planning import warmstart

    data = prepare(cd.load_scenario())
    signal = StopSignal()
    later: list[str] = []
    real_capacity = build.add_capacity

    def capacity(m: Any) -> None:
        real_capacity(m)
        signal.stop()  # the control moved while this family was built

    monkeypatch.setattr(build, "add_capacity", capacity)
    monkeypatch.setattr(build, "add_gang_fit", lambda m: later.append("gang fit"))
    with stoppable(signal), pytest.raises(SolveStopped):
        build.build_model(data)
    assert later == [], "families were built after the stop"

    monkeypatch.undo()  # the real families again
    m = build.build_model(data)
    m.cp.minimize(m.cost_cents)
    lps: list[str] = []
    signal = StopSignal()

    def abnormal(proto: Any, params: str) -> None:
        lps.append(params)
        signal.stop()  # stopped during the first LP, which then ends without an answer
        return None

    monkeypatch.setattr(warmstart, "_glop", abnormal)
    with stoppable(signal), pytest.raises(SolveStopped):
        warmstart.lp_relaxation(m.cp)
    assert len(lps) == 1, f"{len(lps) - 1} more LPs after the stop"


def test_an_infeasible_relaxation_is_solved_once() -> None:
    """GLOP's three settings are for ABNORMAL ends; an infeasible LP is infeasible in every one
    (CP-SAT proves the model infeasible on its own)."""
    from cluster_decide.planning import warmstart

    model = cp_model.CpModel()
    x = model.new_int_var(0, 10, "x")
    model.add(x >= 11)
    model.minimize(x)
    calls: list[str] = []
    real = warmstart._glop

    def counted(lp: Any, params: str) -> Any:
        calls.append("solve")
        return real(lp, params)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(warmstart, "_glop", counted)
        assert warmstart.lp_relaxation(model) is None
    assert calls == ["solve"]


def test_cancelling_an_analysis_stops_its_solve_under_way() -> None:
    """ "What would change it" runs as a BackgroundJob: Cancel (or a control change) stops the
    step's CP-SAT search itself, not only the steps after it, and nothing is reported done."""
    from cluster_decide.model.stopping import new_solver
    from cluster_decide.widgets.background import BackgroundJob

    searching = threading.Event()
    said: list[str] = []

    def long_step() -> int:
        solver = new_solver()
        solver.parameters.num_workers = 1
        solver.parameters.max_time_in_seconds = 600.0
        searching.set()
        return int(solver.solve(_golomb(12)))

    job = BackgroundJob(
        [("a search that runs for minutes", long_step), ("never reached", lambda: 0)],
        on_progress=lambda i, n, what: said.append(f"step {i + 1} of {n}"),
        on_done=lambda results: said.append("done"),
        on_error=lambda exc: said.append(f"error {exc}"),
        on_cancel=lambda: said.append("cancelled"),
    ).start()
    assert searching.wait(30)
    job.cancel()
    job.join(120)
    assert not job.thread.is_alive()
    assert said == ["step 1 of 2", "cancelled"]


def test_a_refused_value_keeps_the_answer_and_redoes_its_stopped_check() -> None:
    """A budget of "abc" while the answer's check runs: the change stops the check, the value is
    refused and the answer stays, so its check is run again (it was left "checking" for ever);
    and a value seen before shows its verdict at once, with no new check."""
    gate = threading.Event()
    calls: list[float] = []

    def recommend(scn: cd.Scenario) -> StandIn:
        calls.append(scn.team.kubernetes.fte)
        gate.wait(30)
        return StandIn("close", f"checked at {scn.team.kubernetes.fte:.1f} Kubernetes FTE")

    app = executive_app(debounce_s=0.0, cache=PlanCache(), prefetch=False, recommend=recommend)
    start = float(app.controls.value("fte:kubernetes"))
    app.controls.set_value("budget", "abc")
    assert "refused" in app.answer.message.value
    gate.set()
    app.wait()
    assert f"checked at {start:.1f} Kubernetes FTE" in app.answer.verdict.value
    app.controls.set_value("fte:kubernetes", start + 0.5)
    app.wait()
    seen = len(calls)
    app.controls.set_value("fte:kubernetes", start)
    assert f"checked at {start:.1f} Kubernetes FTE" in app.answer.verdict.value
    app.wait()
    assert len(calls) == seen


def test_stopped_work_ends_between_capacity_pools_and_while_the_lp_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The capacity rows (the largest family) and the LP's rows (built one call at a time)
    were each a stretch of interpreter a stop could not cut: a stale check ran on beside the
    new answer for up to 50 ms. Now it ends before the next pool, and every few LP rows."""
    from cluster_decide.model import build
    from cluster_decide.model.data import prepare
    from cluster_decide.planning import warmstart

    data = prepare(cd.load_scenario())
    signal = StopSignal()
    pools: list[int] = []
    real_buckets = build.reduced_buckets

    def buckets(demands: Any, bursts: bool, *rest: Any) -> Any:
        pools.append(1)
        signal.stop()  # the control moved while the first pool's rows were built
        return real_buckets(demands, bursts, *rest)

    monkeypatch.setattr(build, "reduced_buckets", buckets)
    with stoppable(signal), pytest.raises(SolveStopped):
        build.build_model(data)
    assert len(pools) == 1, f"{len(pools) - 1} more pools' rows after the stop"

    monkeypatch.undo()
    m = build.build_model(data)
    m.cp.minimize(m.cost_cents)
    signal = StopSignal()
    signal.stop()
    with stoppable(signal), pytest.raises(SolveStopped):
        warmstart._lp_of(m.cp)
