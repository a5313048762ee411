"""Stopping the solves of a piece of work from another thread: the one under way and every later one.

The apps check the alternatives of an answer (the verdict) and solve the moved control's next
values (the look-ahead) in the background. When the user moves a control again, that work is
stale, and every second it keeps solving is a second the new answer's solve shares the cores and
the interpreter with it. :class:`StopSignal` ends it: within ``with stoppable(signal):`` every
CP-SAT solve of this thread registers with the signal, ``signal.stop()`` asks the one under way
to stop (CP-SAT's ``stop_search``) and every solve raises :class:`SolveStopped` once the signal
is raised, so the work ends at its next solve and returns nothing: a stopped piece of work is
never half-reported.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ortools.sat.python import cp_model

__all__ = ["SolveStopped", "StopSignal", "check_stopped", "new_solver", "stoppable"]

_RETRY_S = 0.02
"""How often a stop is repeated while the solve it targets has not yet started its search."""


class SolveStopped(Exception):
    """The work this solve belonged to was stopped (:meth:`StopSignal.stop`); it has no answer."""


class StopSignal:
    """A flag that stops the solves registered with it, now and later (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopped = False
        self._running: set[cp_model.CpSolver] = set()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopped

    def stop(self) -> None:
        """Stop the solve under way and make every later one raise :class:`SolveStopped`.

        Returns at once. CP-SAT ignores ``stop_search`` on a solver that has not yet started its
        search, so the stop is repeated every few milliseconds, on a timer, until the solves
        under way have ended.
        """
        with self._lock:
            self._stopped = True
        self._repeat()

    def _repeat(self) -> None:
        with self._lock:
            running = list(self._running)
        for solver in running:
            solver.stop_search()
        if running:
            timer = threading.Timer(_RETRY_S, self._repeat)
            timer.daemon = True  # it only calls stop_search; nothing is lost if cut at exit
            timer.start()

    def check(self) -> None:
        """Raise :class:`SolveStopped` if the signal was raised."""
        if self._stopped:
            raise SolveStopped("stopped: a newer request replaced this work")

    def _enter(self, solver: cp_model.CpSolver) -> None:
        with self._lock:
            self.check()
            self._running.add(solver)

    def _leave(self, solver: cp_model.CpSolver) -> None:
        with self._lock:
            self._running.discard(solver)


class _StoppableSolver(cp_model.CpSolver):
    """A CP-SAT solver that a :class:`StopSignal` can stop; a stopped solve raises."""

    def __init__(self, signal: StopSignal) -> None:
        super().__init__()
        self._signal = signal

    def solve(self, model: cp_model.CpModel, solution_callback: Any = None) -> Any:
        self._signal._enter(self)
        try:
            code = super().solve(model, solution_callback)
        finally:
            self._signal._leave(self)
        self._signal.check()  # stopped during the search: whatever it found is not the answer
        return code


_SIGNAL: ContextVar[StopSignal | None] = ContextVar("stop_signal", default=None)


@contextmanager
def stoppable(signal: StopSignal) -> Iterator[None]:
    """Within this block (in this thread), every solve can be stopped by ``signal``."""
    token = _SIGNAL.set(signal)
    try:
        yield
    finally:
        _SIGNAL.reset(token)


def new_solver() -> cp_model.CpSolver:
    """A CP-SAT solver; inside :func:`stoppable`, one its signal can stop."""
    signal = _SIGNAL.get()
    return cp_model.CpSolver() if signal is None else _StoppableSolver(signal)


def check_stopped() -> None:
    """Raise :class:`SolveStopped` if this thread's work was stopped (inside :func:`stoppable`).

    Called between the Python steps of a solve (preparing the data, each round of cuts, each
    check of a pool's service levels), so stopped work ends within milliseconds rather than at
    its next CP-SAT run: until then it shares the interpreter with the new answer's solve.
    """
    signal = _SIGNAL.get()
    if signal is not None:
        signal.check()
