"""The project stands on its own: nothing in it points at notes or folders outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"SCENARIO\.md|DESIGN\.md|MODEL-NEXT|seed article|\.\./shared|/work/shared")


def test_no_file_refers_outside_the_project() -> None:
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    hits = []
    for name in files:
        path = ROOT / name
        if name == "tests/test_standalone.py" or not path.is_file() or path.suffix == ".gz":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{name}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert hits == []
