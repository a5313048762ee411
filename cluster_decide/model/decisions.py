"""What the model returns: the decisions a plan makes, and how the solve ended.

These are the model layer's answer, before anything is costed, checked or explained: the
evaluator, the Plan and the explanations read them from here (``cluster_decide.planning.evaluation`` and
``cluster_decide.planning.plan`` re-export them under their public names).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["Decisions", "Status"]


@dataclass(frozen=True)
class Decisions:
    """What a plan decides: percent of each workload per (pool, GPU type), and nodes per pool type."""

    shares: Mapping[tuple[str, str, str], int]
    nodes: Mapping[tuple[str, str], int]
    spot: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    """Percent of each workload run on spot, out of its share in that pool and GPU type."""
    managed: frozenset[str] = frozenset()
    """Pools run as a managed service (EKS/GKE/AKS, AWS PCS or a vendor's Slurm on Kubernetes)."""

    def open_pools(self) -> list[str]:
        """Pools that host a workload or buy a node, sorted."""
        pools = {p for (_w, p, _g), s in self.shares.items() if s > 0}
        pools |= {p for (p, _g), n in self.nodes.items() if n > 0}
        return sorted(pools)


class Status(str, Enum):
    """How the solve ended."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"
    """No plan was found within the time limit: not a verdict on the scenario (give it more time)."""

    def __str__(self) -> str:
        return self.value
