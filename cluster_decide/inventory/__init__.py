"""Inventory: read scheduler exports and public traces into one tidy job table, then classes.

The pipeline is read (any format) -> job table (`jobs.JOB_COLUMNS`) -> classify by editable
rules (`data/rules/default.toml`) -> derive `[[workloads]]` demand per (kind, team) class,
with the evidence beside it. See docs/inventory.md.
"""

from __future__ import annotations

from cluster_decide.inventory.classification import Classification, classify
from cluster_decide.inventory.demand import Demand, derive_workloads, write_scenario
from cluster_decide.inventory.detect import FORMATS, detect_format
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import (
    JOB_COLUMNS,
    JOB_SCHEMA,
    BadLine,
    ReadReport,
    ReadResult,
    SkippedFile,
    gpu_hours,
)
from cluster_decide.inventory.read import read_jobs, read_many
from cluster_decide.inventory.rules import Rules, load_rules
from cluster_decide.inventory.traces import read_pai

__all__ = [
    "FORMATS",
    "JOB_COLUMNS",
    "JOB_SCHEMA",
    "BadLine",
    "Classification",
    "Demand",
    "InventoryError",
    "ReadReport",
    "ReadResult",
    "Rules",
    "SkippedFile",
    "classify",
    "derive_workloads",
    "detect_format",
    "gpu_hours",
    "load_rules",
    "read_jobs",
    "read_many",
    "read_pai",
    "write_scenario",
]
