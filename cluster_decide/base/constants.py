"""The fixed vocabulary's names and units, as the rest of the code has long imported them.

They live in :mod:`cluster_decide.base.vocabulary` (one place, with their labels); this module
re-exports them so existing imports keep working.
"""

from __future__ import annotations

from typing import Final

from cluster_decide.base.vocabulary import (
    ARCHETYPES,
    BATCH_KINDS,
    CAPABILITIES,
    CAPABILITY_WORDS,
    DEADLINE_KINDS,
    HOURS_PER_MONTH,
    HOURS_PER_WEEK,
    INTERFACES,
    PLATFORM_WORDS,
    PLATFORMS,
    SKILLS,
    SUPPORT_LEVELS,
    TRAINING_KINDS,
    WORKLOAD_KINDS,
)

__all__ = [
    "ARCHETYPES",
    "BATCH_KINDS",
    "CAPABILITIES",
    "CAPABILITY_WORDS",
    "DEADLINE_KINDS",
    "HOURS_PER_MONTH",
    "HOURS_PER_WEEK",
    "INTERFACES",
    "PLATFORMS",
    "PLATFORM_WORDS",
    "PRESETS",
    "SKILLS",
    "SUPPORT_LEVELS",
    "TRAINING_KINDS",
    "WORKLOAD_KINDS",
]

PRESETS: Final = ("enterprise-mixed", "research-lab", "inference-platform", "train-and-serve")
"""Shipped scenarios in ``data/scenarios/``; the first is the default. Here rather than in
`scenario` so the command line names them without loading the scenario model (pydantic)."""
