"""The built wheel carries the data: installed into a fresh environment, it solves a preset."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from cluster_decide.inputs.scenario import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_for_the_wheel() -> None:
    """pyproject lists the packages by hand (to map data/); a new subpackage or data folder must
    join the list (setuptools warns at every install about a data folder that is not listed)."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "cluster_decide").rglob("__init__.py")
    }
    data = {
        ".".join(("cluster_decide", "_data", *p.relative_to(ROOT / "data").parts))
        for p in (ROOT / "data").rglob("*")
        if p.is_dir() and not p.name.startswith((".", "__"))
    }
    assert listed == found | {"cluster_decide._data"} | data


@pytest.mark.slow
def test_wheel_installs_and_solves_from_another_directory(tmp_path: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    src = tmp_path / "src"
    for name in tracked:  # a clean copy: no build/ or egg-info left by an earlier build
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CLUSTER_DECIDE_DATA")}
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", dist, src], env=env, check=True)
    wheel = next(dist.glob("cluster_decide-*.whl"))

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [*pip, "--python", python, "install", "-q", "--no-deps", wheel], env=env, check=True
    )
    # The dependencies come from this test's environment, after the venv's own packages.
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (Path(purelib) / "_deps.pth").write_text("\n".join(sorted(deps)) + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [
            python,
            "-c",
            "import cluster_decide.base.resources as r; print(r.__file__); print(r.data_dir())",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where[0].startswith(purelib) and where[1] == f"{purelib}/cluster_decide/_data"

    run = subprocess.run(
        [venv / "bin" / "cluster-decide", "solve", "research-lab", "--json", "--no-verdict"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["status"] == "optimal"
