"""Where the project's data lives: one resolver for the catalog, presets, rules and samples.

The data folder is ``data/`` at the top of the project (its layout in a checkout). A built wheel
carries the same folder as package data, ``cluster_decide/_data`` (``pyproject.toml`` maps it),
so ``pip install`` of a release can solve without a checkout. The resolver asks
``importlib.resources`` for the installed copy first and falls back to the checkout's folder,
which is what editable installs and ``PYTHONPATH`` runs see; ``CLUSTER_DECIDE_DATA`` overrides
both (a company's own catalog, a test's fixture).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["data_dir"]

ENV = "CLUSTER_DECIDE_DATA"
"""The environment variable naming another data folder."""


def data_dir() -> Path:
    """The data folder: ``$CLUSTER_DECIDE_DATA``, the wheel's ``_data``, or the checkout's ``data``."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    package = Path(str(resources.files("cluster_decide")))
    installed = package / "_data"
    return installed if installed.is_dir() else package.parent / "data"
