"""Serve the executive app with Voila on a local port, and the headless browser that opens it.

Used by the browser tests, the interaction benchmark and the report test, and handy for a
demo: ``with voila_app() as url: ...``. Voila is probed by opening a TCP socket, not by
``GET /`` (each GET runs the notebook in a new kernel); the browser is Debian's chromium with
the flags that keep it quiet on a machine without internet, never a downloaded one.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM", "LAUNCH_ARGS", "ROOT", "free_port", "only_from", "voila_app"]

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
"""Chromium flags for a headless run here: no background network, no component updates."""
ROOT = Path(__file__).resolve().parents[2]


def only_from(page: Any, prefix: str) -> list[str]:
    """Let ``page`` load only URLs starting with ``prefix``; returns the list of blocked URLs.

    Proves a page works with no network: everything else (CDNs, fonts) is aborted and noted.
    """
    blocked: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(prefix):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return blocked


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def voila_app(
    notebook: str = "workbook/executive.ipynb", python: str | None = None, timeout_s: float = 60.0
) -> Iterator[str]:
    """Voila serving ``notebook`` on a fresh local port; yields its URL and stops it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [
            python or sys.executable,
            "-m",
            "voila",
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
            notebook,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(
                        f"Voila did not start listening on port {port} within {timeout_s:.0f} s"
                    ) from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
