"""What the command line promises a script: exit codes, checked flags, a time bound, no tracebacks.

Exit codes: 0 answered, 1 infeasible (the output lists fixes), 2 bad input, 3 no answer within
the time limit, 4 internal error. An internal error prints one line naming the file the
traceback was written to; nothing else a user can type reaches the terminal as a traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cluster_decide.base.ranges import Range

__all__ = [
    "EXIT_ANSWERED",
    "EXIT_BAD_INPUT",
    "EXIT_CODES_HELP",
    "EXIT_INFEASIBLE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_TIME_LIMIT",
    "TimeLimitExceeded",
    "check_template",
    "clean",
    "clean_stdout",
    "deadline",
    "flag",
    "report_internal_error",
    "text_flag",
    "time_zone",
]

EXIT_ANSWERED = 0
EXIT_INFEASIBLE = 1
EXIT_BAD_INPUT = 2
EXIT_TIME_LIMIT = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130
EXIT_CODES_HELP = """exit codes:
  0  answered (an optimal or feasible plan; the analysis ran)
  1  infeasible: no plan meets the scenario; the output lists the changes that would fix it
  2  bad input: a scenario, file or flag was refused; the message names it and what was expected
  3  no answer within the time limit (--time-limit per solve, --max-time for the whole command)
  4  internal error: a one-line message names the file holding the details
  130  interrupted (Ctrl-C)
"""


class TimeLimitExceeded(Exception):
    """The whole command ran past ``--max-time``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"no answer within --max-time {seconds:g} s")


def clean(text: str) -> str:
    """``text`` with control characters shown as hex escapes (newlines and tabs kept).

    Messages quote file names and values a user typed; an escape sequence in one must not
    recolour, clear or retitle the terminal that shows it.
    """
    return "".join(
        c if c in "\n\t" or not (ord(c) < 32 or 127 <= ord(c) < 160) else f"\\x{ord(c):02x}"
        for c in text
    )


class _CleanWriter:
    """A text stream that shows control characters as escapes (see :func:`clean`)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return int(self._stream.write(clean(text)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def clean_stdout() -> Iterator[None]:
    """Within the block, nothing written to ``sys.stdout`` reaches the terminal as a control code.

    Reports quote names from job logs and scenario files; one holding an escape sequence must
    not be able to recolour, clear or retitle the user's terminal.
    """
    original = sys.stdout
    sys.stdout = _CleanWriter(original)
    try:
        yield
    finally:
        sys.stdout = original


def flag(rng: Range) -> Callable[[str], float]:
    """An argparse ``type`` reading a number inside ``rng``; the error states the range."""

    def parse(text: str) -> Any:
        try:
            value: float = int(text) if rng.integer else float(text)
        except ValueError:
            shown = clean(text if len(text) <= 40 else text[:40] + "...")
            raise argparse.ArgumentTypeError(f"expected {rng.expected()}, got '{shown}'") from None
        if not (math.isfinite(value) and rng.contains(value)):
            unit = f" {rng.unit}" if rng.unit else ""
            raise argparse.ArgumentTypeError(f"expected {rng.expected()}{unit}, got {clean(text)}")
        return value

    parse.__name__ = rng.expected()
    return parse


def time_zone(text: str) -> str:
    """An argparse ``type`` accepting an IANA time-zone name (``America/Chicago``)."""
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(text)
    except (ValueError, KeyError, OSError):
        raise argparse.ArgumentTypeError(
            f"unknown time zone '{clean(text)}' (expected an IANA name such as America/Chicago "
            "or UTC)"
        ) from None
    return text


def text_flag(text: str) -> str:
    """An argparse ``type`` for a name: no control characters, at most 200 characters."""
    if clean(text) != text or len(text) > 200:
        raise argparse.ArgumentTypeError(
            "expected text of at most 200 characters without control characters"
        )
    return text


@contextmanager
def deadline(seconds: float | None, progress: bool = False) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in this thread once ``seconds`` of wall time have passed.

    Uses a POSIX interval timer, so it bounds Python code; a running CP-SAT solve is cut by its
    own time limit and the bound fires when it returns. Off the main thread, or on a platform
    without ``SIGALRM``, the command runs unbounded. With ``progress``, a line on standard
    error says how long the command has run, every 10 seconds.
    """
    ticker = _Ticker(seconds) if progress else None
    usable = (
        seconds is not None
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        with _ticking(ticker):
            yield
        return
    assert seconds is not None

    def _expire(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with _ticking(ticker):
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Ticker(threading.Thread):
    """Writes ``... still working: 20 s (limit 60 s)`` to standard error every 10 seconds."""

    def __init__(self, limit: float | None) -> None:
        super().__init__(daemon=True)
        self.limit = limit
        self.stop = threading.Event()
        self.start_time = time.monotonic()

    def run(self) -> None:
        while not self.stop.wait(10.0):
            spent = time.monotonic() - self.start_time
            limit = f" of --max-time {self.limit:g} s" if self.limit else ""
            sys.stderr.write(f"... still working: {spent:.0f} s{limit}\n")
            sys.stderr.flush()


@contextmanager
def _ticking(ticker: _Ticker | None) -> Iterator[None]:
    if ticker is not None:
        ticker.start()
    try:
        yield
    finally:
        if ticker is not None:
            ticker.stop.set()


def report_internal_error(exc: BaseException, argv: Sequence[str] | None = None) -> str:
    """Write ``exc``'s traceback to a new file in the temp folder; the one-line message to print."""
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    summary = clean(
        f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    )
    if len(summary) > 200:
        summary = summary[:200] + "..."
    try:
        fd, path = tempfile.mkstemp(prefix="cluster-decide-error-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            words = sys.argv[1:] if argv is None else list(argv)
            handle.write(f"cluster-decide {' '.join(words)}\n\n{detail}")
        where = f"the details are in {path}"
    except OSError as write_error:
        where = f"the details could not be written ({write_error.strerror})"
    return (
        f"error: internal error ({summary}); this is a bug in cluster-decide, not in your "
        f"input; {where}"
    )


def check_template(path: Path) -> None:
    """Refuse an ``export --template`` that is not a PowerPoint file, before any solving."""
    import zipfile

    template = str(path)
    if not path.is_file():
        raise ValueError(f"{template}: no such template file (expected a .pptx or .potx)")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{template}: not a PowerPoint file (expected a .pptx or .potx, a zip)")
    with zipfile.ZipFile(path) as z:
        if "ppt/presentation.xml" not in z.namelist():
            raise ValueError(f"{template}: a zip, but not a PowerPoint file (no presentation)")
