"""What the benchmarks that compare two trees share: a checkout of an earlier commit, the load.

A benchmark with ``--baseline REV`` runs the code of REV beside this tree's in the same rounds,
so a change is judged against the old code under the same load. The checkout is a detached git
worktree in a temporary folder, removed when the benchmark ends.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
