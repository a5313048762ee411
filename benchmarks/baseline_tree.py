"""What the benchmarks that compare two trees share: an earlier commit checked out, the load, a child run.

A benchmark with ``--baseline REV`` runs the code of REV beside this tree's in the same rounds,
so a change is judged against the old code under the same load. The checkout is a detached git
worktree in a temporary folder, removed when the benchmark ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def baseline_tree(rev: str, where: Path) -> Iterator[Path]:
    """``rev`` of this repository checked out at ``where`` while the block runs."""
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev],
        check=True,
        capture_output=True,
    )
    try:
        yield where
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)],
            check=False,
            capture_output=True,
        )


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages: how busy the shared machine was."""
    return ", ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def child_figures(script: str, args: list[str], tree: Path | None = None) -> dict[str, Any]:
    """Run ``script args`` in a fresh interpreter; its last stdout line is its JSON figures.

    With ``tree`` (a checkout of an earlier commit) the child imports cluster_decide from it.
    """
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    proc = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, check=False, env=env
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed{f' in {tree}' if tree else ''}:\n{proc.stderr}")
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures
