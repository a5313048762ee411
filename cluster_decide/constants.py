"""The fixed vocabulary of cluster_decide: platform kinds, workload kinds, capabilities, skills.

These names are part of the scenario-file contract (SCENARIO.md): add to them, never rename.
"""

from __future__ import annotations

from typing import Final

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

PRESETS: Final = ("enterprise-mixed", "research-lab", "inference-platform")
"""Shipped scenarios in ``data/scenarios/``; the first is the default. Here rather than in
`scenario` so the command line names them without loading the scenario model (pydantic)."""

PLATFORMS: Final = ("slurm", "kubernetes", "kubernetes_batch", "shared")
"""Platform kinds a pool can be, in the fixed order used for tie-breaking."""

WORKLOAD_KINDS: Final = (
    "distributed_training",
    "fine_tuning",
    "experimentation",
    "batch_inference",
    "pipeline",
    "realtime_inference",
)
TRAINING_KINDS: Final = ("distributed_training", "fine_tuning")
DEADLINE_KINDS: Final = ("batch_inference", "pipeline")
BATCH_KINDS: Final = TRAINING_KINDS + DEADLINE_KINDS
"""Kinds whose demand is GPU-hours of gang jobs (as opposed to users or requests)."""

CAPABILITIES: Final = (
    "gang_scheduling",
    "topology_aware",
    "fair_share",
    "preemption",
    "reservations",
    "accounting",
    "mpi",
    "interactive_shell",
    "autoscaling",
    "self_healing",
    "rolling_updates",
    "service_networking",
    "gitops",
    "multi_tenant_isolation",
    "gpu_sharing",
)
SUPPORT_LEVELS: Final = ("native", "partial", "none")
SKILLS: Final = ("hpc", "kubernetes")
INTERFACES: Final = ("slurm", "containers")
ARCHETYPES: Final = (
    "slurm_only",
    "kubernetes_only",
    "kubernetes_batch",
    "hybrid_separate",
    "hybrid_shared",
)
CAPABILITY_WORDS: Final = {
    "gang_scheduling": "gang scheduling",
    "topology_aware": "topology-aware placement",
    "fair_share": "fair-share queues",
    "preemption": "preemption",
    "reservations": "reservations",
    "accounting": "usage accounting",
    "mpi": "MPI integration",
    "interactive_shell": "interactive shells",
    "autoscaling": "autoscaling",
    "self_healing": "self-healing",
    "rolling_updates": "rolling updates",
    "service_networking": "service networking",
    "gitops": "GitOps",
    "multi_tenant_isolation": "multi-tenant isolation",
    "gpu_sharing": "GPU sharing",
}
"""Capabilities in plain words, for sentences."""
PLATFORM_WORDS: Final = {
    "slurm": "Slurm",
    "kubernetes": "Kubernetes",
    "kubernetes_batch": "Kubernetes with a batch add-on",
    "shared": "the shared Slurm-on-Kubernetes pool",
}
"""Platform kinds in plain words, for sentences."""
HOURS_PER_WEEK: Final = 168
HOURS_PER_MONTH: Final = 730.0
"""Average hours in a month (8760 / 12), the convention cloud price sheets use."""
