"""The one vocabulary of cluster_decide: kinds, platforms, skills, capabilities, archetypes.

Each set of names is written once, as a ``Literal`` type the scenario models validate against;
the tuples the code iterates are derived from it (``typing.get_args``), so the two cannot drift.
Beside the names: their display labels (charts and tables), their words for sentences, and the
units the model counts demand in. These names are part of the scenario-file contract
(``docs/scenario.md``): add to them, never rename. Nothing here imports a plotting library, so a
view reads a label without loading Altair.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "ADDONS",
    "ARCHETYPES",
    "ARCHETYPE_LABELS",
    "ARCHETYPE_SHORT",
    "ARCHETYPE_WORDS",
    "BATCH_KINDS",
    "CAPABILITIES",
    "CAPABILITY_WORDS",
    "CLUSTER_WORDS",
    "COMPONENT_LABELS",
    "DEADLINE_KINDS",
    "DEMAND_UNITS_PER_GPU",
    "DEMAND_UNITS_PER_GPU_PERCENT",
    "FAMILY",
    "HOURS_PER_MONTH",
    "HOURS_PER_WEEK",
    "INTERFACES",
    "INTERFACE_WORDS",
    "KIND_LABELS",
    "KIND_WORDS",
    "MANAGED_WORDS",
    "METRIC_WORDS",
    "NODE_GROUP_WORDS",
    "PLATFORMS",
    "PLATFORM_LABELS",
    "PLATFORM_SHORT",
    "PLATFORM_WORDS",
    "SKILLS",
    "SKILL_LABELS",
    "SKILL_SHORT",
    "SUPPORT_LEVELS",
    "TRAINING_KINDS",
    "WORKLOAD_KINDS",
    "Archetype",
    "Capability",
    "Interface",
    "Kind",
    "Platform",
    "Skill",
    "Support",
]

# -- names ----------------------------------------------------------------------------------

Platform = Literal["slurm", "kubernetes", "kubernetes_batch", "shared"]
"""Platform kinds a pool can be, in the fixed order used for tie-breaking."""
Kind = Literal[
    "distributed_training",
    "fine_tuning",
    "experimentation",
    "batch_inference",
    "pipeline",
    "realtime_inference",
]
"""Workload kinds; each has its own demand and service-level keys (``docs/scenario.md``)."""
Capability = Literal[
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
]
"""What a workload may require or prefer of a platform."""
Support = Literal["native", "partial", "none"]
"""How well a platform provides a capability."""
Skill = Literal["hpc", "kubernetes"]
"""Staff skills: ``hpc`` runs Slurm, ``kubernetes`` runs Kubernetes."""
Interface = Literal["slurm", "containers"]
"""How a workload's team submits work."""
Archetype = Literal[
    "slurm_only",
    "kubernetes_only",
    "kubernetes_batch",
    "hybrid_separate",
    "hybrid_shared",
]
"""The architectures a plan can amount to."""

PLATFORMS: Final = get_args(Platform)
WORKLOAD_KINDS: Final = get_args(Kind)
TRAINING_KINDS: Final = ("distributed_training", "fine_tuning")
DEADLINE_KINDS: Final = ("batch_inference", "pipeline")
BATCH_KINDS: Final = TRAINING_KINDS + DEADLINE_KINDS
"""Kinds whose demand is GPU-hours of gang jobs (as opposed to users or requests)."""
CAPABILITIES: Final = get_args(Capability)
SUPPORT_LEVELS: Final = get_args(Support)
SKILLS: Final = get_args(Skill)
INTERFACES: Final = get_args(Interface)
ARCHETYPES: Final = get_args(Archetype)

# -- words for sentences ----------------------------------------------------------------------

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
FAMILY: Final = {
    "slurm": "slurm",
    "kubernetes": "kubernetes",
    "kubernetes_batch": "kubernetes",
    "shared": "shared",
}
"""Platform kinds a workload can switch between without moving: a batch add-on (Kueue, Volcano,
KAI) installs on the Kubernetes cluster that runs today, and users keep their containers."""
ADDONS: Final = {"kubernetes_batch": "kubernetes"}
"""Platform kinds that are another kind with an add-on installed: a batch scheduler (Kueue,
Volcano or KAI) goes onto a Kubernetes cluster of today, which keeps its nodes and services."""
PLATFORM_WORDS: Final = {
    "slurm": "Slurm",
    "kubernetes": "Kubernetes",
    "kubernetes_batch": "Kubernetes with a batch add-on",
    "shared": "the shared Slurm-on-Kubernetes pool",
}
"""Platform kinds in plain words, for sentences."""
CLUSTER_WORDS: Final = {
    "slurm": ("Slurm cluster", "Slurm clusters"),
    "kubernetes": ("Kubernetes cluster", "Kubernetes clusters"),
    "kubernetes_batch": (
        "Kubernetes cluster with a batch add-on",
        "Kubernetes clusters with a batch add-on",
    ),
}
"""Pools of a platform kind other than the shared one, as clusters (one, many): what a plan
runs beside its shared pool."""
NODE_GROUP_WORDS: Final = {
    "slurm": "partition",
    "kubernetes": "node pool",
    "kubernetes_batch": "node pool",
    "shared": "node pool",
}
"""What a group of nodes of one GPU type within a cluster is called on each platform kind."""
MANAGED_WORDS: Final = {
    "slurm": "managed Slurm (AWS Parallel Computing Service class)",
    "kubernetes": "managed Kubernetes (EKS, GKE or AKS class)",
    "kubernetes_batch": "managed Kubernetes (EKS, GKE or AKS class) with the batch add-on",
    "shared": "a vendor's managed Slurm on Kubernetes (CoreWeave SUNK or Nebius Soperator class)",
}
"""What a managed variant of each platform kind is, in words."""
KIND_WORDS: Final = {
    "distributed_training": "distributed training",
    "fine_tuning": "fine-tuning",
    "experimentation": "experimentation",
    "batch_inference": "batch inference",
    "pipeline": "pipeline",
    "realtime_inference": "real-time inference",
}
"""Workload kinds in plain words, for sentences."""
INTERFACE_WORDS: Final = {"slurm": "Slurm job scripts", "containers": "containers"}
"""How a team submits work, in words."""
ARCHETYPE_WORDS: Final = {
    "slurm_only": "Slurm only",
    "kubernetes_only": "Kubernetes only",
    "kubernetes_batch": "Kubernetes with a batch scheduler add-on (Kueue, Volcano or KAI)",
    "hybrid_separate": "separate Slurm and Kubernetes clusters",
    "hybrid_shared": "a shared GPU pool (Slurm on Kubernetes)",
}
"""Archetypes in full words, for the sentence that states the answer."""
ARCHETYPE_SHORT: Final = {
    "slurm_only": "Slurm only",
    "kubernetes_only": "Kubernetes only",
    "kubernetes_batch": "Kubernetes with a batch add-on",
    "hybrid_separate": "separate Slurm and Kubernetes clusters",
    "hybrid_shared": "a shared Slurm-on-Kubernetes pool",
}
"""Archetypes in the fewest words a sentence can carry (a verdict, a chart label)."""
METRIC_WORDS: Final = {
    "p99_latency_ms": ("p99 latency", "ms"),
    "max_queue_wait_hours": ("queue wait", "h"),
    "max_completion_hours": ("completion", "h"),
    "queue_wait_hours": ("queue wait", "h"),
    "completion_hours": ("completion", "h"),
}
"""Service-level metrics (``Plan.service_levels["metric"]``, the SLO keys) as (words, unit)."""

# -- labels for charts and tables -------------------------------------------------------------

PLATFORM_LABELS: Final = {
    "slurm": "Slurm",
    "kubernetes": "Kubernetes",
    "kubernetes_batch": "Kubernetes + batch add-on",
    "shared": "Shared (Slurm on Kubernetes)",
}
"""Platform names as charts and tables show them (sentences use ``PLATFORM_WORDS``)."""
PLATFORM_SHORT: Final = {
    "slurm": "Slurm",
    "kubernetes": "Kubernetes",
    "kubernetes_batch": "K8s + batch add-on",
    "shared": "Shared pool",
}
"""Platform names where room is short (the app's platform check boxes)."""
ARCHETYPE_LABELS: Final = {
    "slurm_only": "Slurm only",
    "kubernetes_only": "Kubernetes only",
    "kubernetes_batch": "Kubernetes + batch add-on",
    "hybrid_separate": "Separate Slurm and Kubernetes",
    "hybrid_shared": "Shared pool (Slurm on Kubernetes)",
}
"""Archetypes as charts and tables show them."""
KIND_LABELS: Final = {
    "distributed_training": "Distributed training",
    "fine_tuning": "Fine-tuning",
    "experimentation": "Experimentation",
    "batch_inference": "Batch inference",
    "pipeline": "Pipelines",
    "realtime_inference": "Real-time inference",
}
"""Workload kinds as charts and tables show them."""
COMPONENT_LABELS: Final = {
    "gpu_capacity": "GPU capacity",
    "leases": "Committed leases",
    "burst": "On-demand burst",
    "spot": "Spot capacity",
    "managed_fees": "Managed service fees",
    "staff": "Staff (payroll)",
    "new_hires": "New hires",
    "hiring": "Hiring (amortized)",
    "retraining": "Retraining (amortized)",
    "cluster_build": "Cluster builds (amortized)",
    "migration": "Moves (amortized)",
    "capability_gaps": "Capability gaps (est.)",
    "interface_friction": "Interface friction (est.)",
    "split_overhead": "Split overhead (est.)",
}
"""Cost components as charts and tables show them."""
SKILL_LABELS: Final = {"hpc": "HPC (Slurm)", "kubernetes": "Kubernetes"}
"""Skills as charts, tables and sentences show them."""
SKILL_SHORT: Final = {"hpc": "HPC", "kubernetes": "Kubernetes"}
"""Skills where the platform is already said (the app's staffing line)."""

# -- units ------------------------------------------------------------------------------------

HOURS_PER_WEEK: Final = 168
HOURS_PER_MONTH: Final = 730.0
"""Average hours in a month (8760 / 12), the convention cloud price sheets use."""
DEMAND_UNITS_PER_GPU: Final = 10
"""The model counts demand in tenths of a GPU (integers for CP-SAT)."""
DEMAND_UNITS_PER_GPU_PERCENT: Final = DEMAND_UNITS_PER_GPU * 100
"""Demand units of one GPU times a share in percent: the unit of ``share × demand`` sums."""
