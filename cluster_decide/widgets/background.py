"""Long work off the kernel's main thread, with progress and cancel.

Voila and Jupyter handle widget events on the kernel's main thread: an analysis that runs there
freezes every control until it ends. A :class:`BackgroundJob` runs a list of steps on a thread
(not a daemon: a solve cut off at interpreter exit aborts the process), reports after each
step, and stops when cancelled or superseded: the CP-SAT solve under way is stopped
(:class:`~cluster_decide.model.stopping.StopSignal`) and the results so far are dropped. Its solves are deterministic (same
work limit as the live answers), so a rerun gives the same result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from cluster_decide.model.stopping import SolveStopped, StopSignal, stoppable
from cluster_decide.planning.solve import deterministic_work
from cluster_decide.widgets.cache import INTERACTIVE_WORK_LIMIT

__all__ = ["BackgroundJob"]

Step = tuple[str, Callable[[], Any]]
"""A step: what it is doing, in words, and the call that does it."""


class BackgroundJob:
    """Run steps one after another on a thread; ``cancel()`` stops it, mid-solve if need be."""

    def __init__(
        self,
        steps: Sequence[Step],
        on_progress: Callable[[int, int, str], None],
        on_done: Callable[[list[Any]], None],
        on_error: Callable[[Exception], None],
        on_cancel: Callable[[], None],
    ) -> None:
        self.steps = list(steps)
        self._progress, self._done = on_progress, on_done
        self._error, self._cancelled = on_error, on_cancel
        self._stop = StopSignal()
        self.thread = threading.Thread(target=self._run, daemon=False)

    def start(self) -> BackgroundJob:
        """Start the steps; returns self."""
        self.thread.start()
        return self

    def cancel(self) -> None:
        """Stop the step under way at its next solve, or its solve under way (nothing is kept)."""
        self._stop.stop()

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel()`` was called."""
        return self._stop.stopped

    def join(self, timeout_s: float | None = None) -> None:
        """Wait for the thread (tests and scripts)."""
        self.thread.join(timeout_s)

    def _run(self) -> None:
        results: list[Any] = []
        try:
            with deterministic_work(INTERACTIVE_WORK_LIMIT), stoppable(self._stop):
                for i, (what, call) in enumerate(self.steps):
                    self._stop.check()
                    self._progress(i, len(self.steps), what)
                    results.append(call())
            self._stop.check()
            self._done(results)
        except SolveStopped:
            self._cancelled()
        except Exception as exc:  # shown as a message by the owner
            self._error(exc)
