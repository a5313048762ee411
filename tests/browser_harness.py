"""Serve the executive app with Voila on a local port, and the headless browser that opens it.

A test harness (it runs the project folder's notebooks, so it is not in the package): used by
the browser tests, the report test and ``benchmarks/interaction.py``, and handy for a demo
from a checkout: ``with voila_app() as url: ...``. Voila is probed by opening a TCP socket, not by
``GET /`` (each GET runs the notebook in a new kernel); the browser is Debian's chromium with
the flags that keep it quiet on a machine without internet, never a downloaded one.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CHROMIUM",
    "LAUNCH_ARGS",
    "ROOT",
    "VoilaServer",
    "free_port",
    "only_from",
    "voila_app",
    "voila_server",
]

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
ROOT = Path(__file__).resolve().parents[1]


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


@dataclass(frozen=True)
class VoilaServer:
    """A running Voila: its URL and process (whose children are the kernels)."""

    url: str
    process: subprocess.Popen[bytes]

    def kernels(self) -> int:
        """How many kernels this Voila runs now (its ``ipykernel_launcher`` children)."""
        import psutil

        try:
            children = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return 0
        count = 0
        for child in children:
            try:
                if "ipykernel_launcher" in " ".join(child.cmdline()) and child.is_running():
                    count += child.status() != psutil.STATUS_ZOMBIE
            except psutil.Error:
                continue
        return count


@contextmanager
def voila_server(
    notebook: str = "workbook/executive.ipynb",
    python: str | None = None,
    timeout_s: float = 60.0,
    extra_args: Sequence[str] = (),
) -> Iterator[VoilaServer]:
    """Voila serving ``notebook`` on a fresh local port; stopped afterwards.

    It runs from the project folder, so it reads the project's ``voila.json`` (kernel culling,
    a pre-heated kernel).
    """
    port = free_port()
    proc = subprocess.Popen(
        [
            python or sys.executable,
            "-m",
            "voila",
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
            *extra_args,
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
        yield VoilaServer(f"http://127.0.0.1:{port}/", proc)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def voila_app(
    notebook: str = "workbook/executive.ipynb", python: str | None = None, timeout_s: float = 60.0
) -> Iterator[str]:
    """Voila serving ``notebook`` on a fresh local port; yields its URL and stops it afterwards."""
    with voila_server(notebook, python, timeout_s) as server:
        yield server.url
