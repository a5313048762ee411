"""Start-up: the package, the CLI and `ingest` import only what they use.

Each check runs in a fresh interpreter, since this test process has long imported everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("ortools", "scipy", "pydantic", "pandas")


def _loaded(code: str) -> dict[str, bool]:
    """Which HEAVY modules a fresh interpreter has in sys.modules after running `code`."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    loaded: dict[str, bool] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


def test_reading_logs_loads_no_scenario_model(tmp_path: Path) -> None:
    """`ingest()` (read, classify, derive) loads none of OR-Tools, SciPy, pydantic."""
    from cluster_decide.inventory.synthetic import generate_sacct

    export = tmp_path / "jobs.txt"
    export.write_text(generate_sacct("enterprise-mixed", days=7, seed=1, scale=0.02))
    code = (
        "from cluster_decide.inventory.ingest import ingest\n"
        f"assert ingest([{str(export)!r}]).demand.workloads"
    )
    assert _loaded(code) == dict.fromkeys(HEAVY, False)


@pytest.mark.parametrize(
    "code",
    [
        "import cluster_decide",
        "import cluster_decide.inventory",
        "from cluster_decide.inventory.ingest import ingest",
        # `cluster-decide ingest --help` and `cluster-decide --help`: argparse exits; the
        # probe runs after it.
        "from cluster_decide.cli import main\ntry:\n    main(['ingest', '--help'])\n"
        "except SystemExit:\n    pass",
        "from cluster_decide.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass",
    ],
)
def test_start_up_loads_no_solver_scipy_or_pydantic(code: str) -> None:
    assert _loaded(code) == dict.fromkeys(HEAVY, False)


def test_ingest_run_loads_no_solver_scipy_or_pydantic(tmp_path: Path) -> None:
    """A whole `ingest` run (read, classify, derive, check, write) loads none of them.

    The derived workloads are checked against the scenario's ranges without the scenario
    model (`inventory.plausible`), so not even the last step loads pydantic.
    """
    from cluster_decide.inventory.synthetic import generate_sacct

    export = tmp_path / "jobs.txt"
    export.write_text(generate_sacct("enterprise-mixed", days=7, seed=1, scale=0.02))
    out = tmp_path / "s.toml"
    code = (
        "from cluster_decide.cli import main\n"
        f"assert main(['ingest', {str(export)!r}, '--out', {str(out)!r}]) == 0"
    )
    loaded = _loaded(code)
    assert out.exists()
    assert loaded == dict.fromkeys(HEAVY, False)


def test_public_api_still_resolves() -> None:
    """`cd.solve`, `cd.evaluate`, `cd.simulate` are the functions, whatever loaded first."""
    code = (
        "import cluster_decide.simulation.replay, cluster_decide.planning.evaluation\n"
        "import cluster_decide as cd\n"
        "from cluster_decide.planning.solve import solve\n"
        "assert callable(cd.simulate) and callable(cd.evaluate) and cd.solve is solve\n"
        "assert cd.Status.OPTIMAL and cd.PRESETS[0] == 'enterprise-mixed'\n"
        "assert set(cd.__all__) <= set(dir(cd))"
    )
    _loaded(code)  # raises CalledProcessError when an assertion fails
    import cluster_decide as cd

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = cd.nope  # type: ignore[attr-defined]
