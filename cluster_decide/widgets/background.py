"""Long work off the kernel's main thread, with progress and cancel.

Voila and Jupyter handle widget events on the kernel's main thread: an analysis that runs there
freezes every control until it ends. A :class:`BackgroundJob` runs a list of steps on a thread
(not a daemon: a solve cut off at interpreter exit aborts the process), reports after each
step, and stops between steps when cancelled or superseded. Its solves are deterministic (same
work limit as the live answers), so a rerun gives the same result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from cluster_decide.planning.solve import deterministic_work
from cluster_decide.widgets.cache import INTERACTIVE_WORK_LIMIT

__all__ = ["BackgroundJob"]

Step = tuple[str, Callable[[], Any]]
"""A step: what it is doing, in words, and the call that does it."""


class BackgroundJob:
    """Run steps one after another on a thread; ``cancel()`` stops it between two steps."""

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
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=False)

    def start(self) -> BackgroundJob:
        """Start the steps; returns self."""
        self.thread.start()
        return self

    def cancel(self) -> None:
        """Stop after the step under way (its result is dropped)."""
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel()`` was called."""
        return self._stop.is_set()

    def join(self, timeout_s: float | None = None) -> None:
        """Wait for the thread (tests and scripts)."""
        self.thread.join(timeout_s)

    def _run(self) -> None:
        results: list[Any] = []
        try:
            with deterministic_work(INTERACTIVE_WORK_LIMIT):
                for i, (what, call) in enumerate(self.steps):
                    if self._stop.is_set():
                        self._cancelled()
                        return
                    self._progress(i, len(self.steps), what)
                    results.append(call())
            if self._stop.is_set():
                self._cancelled()
                return
            self._done(results)
        except Exception as exc:  # shown as a message by the owner
            self._error(exc)
