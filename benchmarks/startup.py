"""Start-up time of the command line beside a bare interpreter, measured in the same run.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/startup.py [--rounds N]``. Each command runs
in a fresh interpreter; rounds alternate the commands, so a busy spell of a shared machine
hits all of them, and the median of each is printed. The difference between a command and
``python -c pass`` is what the project's imports cost.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "cluster-decide --help": ["-m", "cluster_decide.cli", "--help"],
    "cluster-decide ingest --help": ["-m", "cluster_decide.cli", "ingest", "--help"],
    "import cluster_decide.inventory": ["-c", "import cluster_decide.inventory"],
    "import cluster_decide; cd.solve": ["-c", "import cluster_decide as cd; cd.solve"],
}
"""Label -> interpreter arguments."""


def _time(args: list[str]) -> float:
    """Wall seconds of one fresh interpreter running `args` (output discarded)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs of each command")
    args = parser.parse_args()
    runs: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for _ in range(args.rounds):
        for label, argv in COMMANDS.items():
            runs[label].append(_time(argv))
    bare = statistics.median(runs["python -c pass"])
    print(f"{'command':<34}{'median s':>10}{'min s':>8}{'above bare s':>14}")
    for label, times in runs.items():
        median = statistics.median(times)
        print(f"{label:<34}{median:>10.3f}{min(times):>8.3f}{median - bare:>14.3f}")


if __name__ == "__main__":
    main()
