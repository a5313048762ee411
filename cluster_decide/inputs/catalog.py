"""The catalog: GPU types, platform kinds, demand profiles and cost parameters, read from ``data/catalog``.

Every figure in those files carries its source (see ``docs/data-sources.md``); this module only
turns the long fact tables into typed, immutable objects and applies a scenario's overrides.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from cluster_decide.base import resources
from cluster_decide.base.constants import (
    CAPABILITIES,
    HOURS_PER_WEEK,
    PLATFORMS,
    SKILLS,
    SUPPORT_LEVELS,
    WORKLOAD_KINDS,
)
from cluster_decide.inputs.offers import (
    Offer,
    OnPremNode,
    read_burst_caps,
    read_offers,
    read_onprem,
    read_resale,
)

__all__ = [
    "GPU_ATTRIBUTES",
    "Catalog",
    "CostParameters",
    "GpuType",
    "ManagedVariant",
    "PeopleParameters",
    "PlatformKind",
    "data_dir",
    "load_catalog",
]

GPU_ATTRIBUTES = (
    "memory_gb",
    "tdp_w",
    "gpus_per_node",
    "node_power_kw",
    "usd_per_gpu_hour_on_demand",
    "usd_per_gpu_hour_reserved",
    "node_capex_usd",
    "training_speed",
    "inference_speed",
)
"""Numeric attributes every GPU type has; a scenario's ``[gpus.NAME]`` may set any of them."""

STAFFING_COMPONENTS = ("base", "per_100_nodes", "addon", "integration")


def data_dir() -> Path:
    """The project's ``data/`` folder (``CLUSTER_DECIDE_DATA`` overrides it)."""
    return resources.data_dir()


@dataclass(frozen=True)
class GpuType:
    """One GPU type and the 8-GPU node built from it; prices in USD, speeds relative to H100."""

    name: str
    memory_gb: float
    tdp_w: float
    gpus_per_node: int
    node_power_kw: float
    usd_per_gpu_hour_on_demand: float
    usd_per_gpu_hour_reserved: float
    node_capex_usd: float
    training_speed: float
    inference_speed: float


@dataclass(frozen=True)
class PlatformKind:
    """A platform kind: what it supports, how well it packs work, and what it takes to run."""

    name: str
    interface: str
    scale_up_lag_minutes: float
    preemption_overhead: float
    topology_slowdown: float
    support: Mapping[str, str]
    utilization: Mapping[str, float]
    node_autoscaling: str = "none"
    """``native`` where the platform adds nodes for work that waits and drops idle ones (Slurm's
    power saving and cloud nodes, Kubernetes' node autoscalers), ``partial`` or ``none``."""
    staffing: Mapping[tuple[str, str], float] = field(default_factory=dict)
    side_support: Mapping[tuple[str, str], str] = field(default_factory=dict)
    """(interface, capability) -> support where work submitted through one side of a pool that
    serves both (Slurm on Kubernetes) differs from the pool as a whole (``sides.csv``)."""

    def supports(self, capability: str, side: str | None = None) -> str:
        """``native``, ``partial`` or ``none``; ``side`` is the interface work is submitted through.

        In a pool that serves both interfaces, a Kubernetes Deployment keeps Kubernetes'
        autoscaling while an sbatch job keeps Slurm's gangs: the side's row wins over the pool's.
        """
        if side is not None and (side, capability) in self.side_support:
            return self.side_support[(side, capability)]
        return self.support.get(capability, "none")

    @property
    def shares_by_hour(self) -> bool:
        """Whether the other work and preemptible batch work share this pool's GPUs hour by hour.

        A gang-aware scheduler that preempts checkpointed batch work for the other work placed
        with it, and gives it back what that work frees: Slurm (a preemptible QOS or partition
        beside interactive sessions), Slurm on Kubernetes and Kubernetes with a batch add-on.
        What the other work frees follows its hourly need: notebooks' sessions everywhere, and
        services' replicas only where the platform autoscales them (elsewhere a service holds
        its peak in every hour and leaves no trough).
        """
        return (
            self.supports("preemption") == "native" and self.supports("gang_scheduling") == "native"
        )

    @property
    def autoscales(self) -> bool:
        """Whether services' replicas follow their load here (native service autoscaling)."""
        return self.supports("autoscaling") == "native"

    @property
    def adds_nodes(self) -> bool:
        """Whether pools of this kind can rent capacity by the hour, where procurement allows it.

        Nodes added for waiting work and dropped when idle (``node_autoscaling`` native), or
        services that scale by the hour (:attr:`autoscales`), whose replicas need the nodes: a
        scenario that said its Slurm autoscales services made it rent before this attribute was.
        """
        return self.node_autoscaling == "native" or self.autoscales

    def fte(self, skill: str, component: str) -> float:
        """Staffing effort of one component (base, per_100_nodes, addon, integration) for a skill."""
        return self.staffing.get((skill, component), 0.0)


@dataclass(frozen=True)
class CostParameters:
    """Site and people costs that are not tied to one GPU type."""

    power_usd_per_kwh: float
    pue: float
    average_power_fraction: float
    facility_usd_per_kw_month: float
    residual_value_fraction: float
    hire_one_time_cost_usd: float
    friction_fte_per_class: float
    split_fte_per_extra_placement: float
    hpc_loaded_cost_usd_per_year: float
    kubernetes_loaded_cost_usd_per_year: float
    support_fraction_per_year: float
    discount_rate: float
    useful_life_months: float
    spot_interruptions_per_node_month: float
    checkpoint_interval_hours: float
    spot_restart_hours: float
    max_spot_share: float
    preempt_restart_hours: float


@dataclass(frozen=True)
class ManagedVariant:
    """A platform kind run as a managed service: its fee and the operations left to the team.

    Capabilities are those of the platform kind (EKS, GKE and AKS run upstream Kubernetes; AWS
    PCS runs Slurm), so only the money and the fixed effort differ: the provider runs the
    control plane, while node care (GPU failures, drivers, images) stays with the team at the
    self-managed per-node effort.
    """

    platform: str
    cluster_usd_per_hour: float
    build_weeks: float
    staffing: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """FTE by (skill, component), components as in ``PlatformKind.fte``."""
    sellers: frozenset[str] = frozenset()
    """Companies (``Offer.seller``) that run the platform as a service beside the GPUs they rent:
    a vendor's Slurm on Kubernetes is CoreWeave's or Nebius's, not a hyperscaler's."""

    def fte(self, skill: str, component: str) -> float:
        """Fixed operations effort of one component (base, addon, integration)."""
        return self.staffing.get((skill, component), 0.0)


@dataclass(frozen=True)
class PeopleParameters:
    """What changing people's skills and tools costs (``data/catalog/people.csv``)."""

    retraining_course_usd: float
    retraining_ramp_months: float
    retraining_ramp_productivity_loss: float
    user_retraining_weeks: float
    user_loaded_cost_usd_per_year: float
    default_users_per_class: float
    migration_base_weeks: float
    migration_weeks_per_user: float
    migration_weeks_per_1000_jobs: float
    relocation_weeks: float
    """A workload class moved to another cluster of its platform (``[current.workloads] cluster``)."""
    slurm_build_weeks: float
    kubernetes_build_weeks: float
    kubernetes_batch_build_weeks: float
    shared_build_weeks: float

    def build_weeks(self, platform: str) -> float:
        """Engineer-weeks to stand up a new self-managed cluster of ``platform``."""
        return float(getattr(self, f"{platform}_build_weeks"))


@dataclass(frozen=True)
class Catalog:
    """Everything the model needs to know about hardware, platforms and costs."""

    gpus: Mapping[str, GpuType]
    platforms: Mapping[str, PlatformKind]
    profiles: Mapping[str, np.ndarray]
    costs: CostParameters
    capability_gaps_usd: Mapping[str, float]
    capability_descriptions: Mapping[str, str]
    offers: tuple[Offer, ...] = ()
    """Rental offers per GPU type, provider class and term (``offers.csv``)."""
    resale: tuple[tuple[int, float], ...] = ()
    """Resale value of owned hardware by months owned (``resale.csv``)."""
    onprem: Mapping[str, OnPremNode] = field(default_factory=dict)
    """Fabric and storage share per owned node (``onprem.csv``)."""
    burst_caps: Mapping[str, int] = field(default_factory=dict)
    """On-demand GPUs per hour an estate can count on, per GPU type (``burst_caps.csv``)."""
    managed: Mapping[str, ManagedVariant] = field(default_factory=dict)
    """Managed variants by platform kind (``data/catalog/managed.csv``)."""
    people: PeopleParameters | None = None
    """Retraining, migration and build parameters (``data/catalog/people.csv``)."""

    def seller_classes(self) -> dict[str, str]:
        """Each company that sells GPUs in ``offers.csv`` → its provider class."""
        return {o.seller: o.provider_class for o in self.offers}

    def profile(self, name: str) -> np.ndarray:
        """The 168 hour-of-week weights of a named profile (max 1.0)."""
        return self.profiles[name]

    def with_overrides(
        self,
        gpus: Mapping[str, Mapping[str, float]] | None = None,
        platforms: Mapping[str, Mapping[str, Any]] | None = None,
        profiles: Mapping[str, np.ndarray] | None = None,
        costs: Mapping[str, float] | None = None,
    ) -> Catalog:
        """A copy with a scenario's overrides applied (new GPU types need every attribute)."""
        new_gpus = dict(self.gpus)
        for name, attrs in (gpus or {}).items():
            values: dict[str, Any] = dict(attrs)
            if name in new_gpus:
                new_gpus[name] = replace(new_gpus[name], **values)
            else:
                new_gpus[name] = GpuType(name=name, **values)
        new_platforms = dict(self.platforms)
        for name, over in (platforms or {}).items():
            base = new_platforms[name]
            changes: dict[str, object] = {}
            for key, value in over.items():
                if key == "capabilities":
                    changes["support"] = MappingProxyType({**base.support, **dict(value)})
                elif key == "utilization":
                    changes["utilization"] = MappingProxyType({**base.utilization, **dict(value)})
                elif key == "staffing":
                    merged = dict(base.staffing)
                    for skill, comps in dict(value).items():
                        for comp, fte in dict(comps).items():
                            merged[(skill, comp)] = float(fte)
                    changes["staffing"] = MappingProxyType(merged)
                else:
                    changes[key] = value
            new_platforms[name] = replace(base, **changes)  # type: ignore[arg-type]
        new_profiles = {**self.profiles, **dict(profiles or {})}
        new_costs = replace(self.costs, **dict(costs or {}))
        return replace(
            self,
            gpus=MappingProxyType(new_gpus),
            platforms=MappingProxyType(new_platforms),
            profiles=MappingProxyType(new_profiles),
            costs=new_costs,
        )


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _read_gpus(folder: Path) -> dict[str, GpuType]:
    values: dict[str, dict[str, float]] = {}
    for row in _rows(folder / "gpus.csv"):
        values.setdefault(row["gpu"], {})[row["attribute"]] = float(row["value"])
    gpus = {}
    for name, attrs in values.items():
        missing = [a for a in GPU_ATTRIBUTES if a not in attrs]
        if missing:
            raise ValueError(f"data/catalog/gpus.csv: GPU '{name}' lacks {', '.join(missing)}")
        picked: dict[str, Any] = {a: attrs[a] for a in GPU_ATTRIBUTES}
        gpus[name] = GpuType(name=name, **{**picked, "gpus_per_node": int(picked["gpus_per_node"])})
    return gpus


def _read_platforms(folder: Path) -> dict[str, PlatformKind]:
    attrs: dict[str, dict[str, str]] = {}
    for row in _rows(folder / "platforms.csv"):
        attrs.setdefault(row["platform"], {})[row["attribute"]] = row["value"]
    support: dict[str, dict[str, str]] = {}
    for row in _rows(folder / "capabilities.csv"):
        support.setdefault(row["platform"], {})[row["capability"]] = row["support"]
    util: dict[str, dict[str, float]] = {}
    for row in _rows(folder / "utilization.csv"):
        util.setdefault(row["platform"], {})[row["kind"]] = float(row["value"])
    sides: dict[str, dict[tuple[str, str], str]] = {}
    for row in _rows(folder / "sides.csv"):
        if row["side"] not in ("slurm", "containers") or row["capability"] not in CAPABILITIES:
            raise ValueError(
                f"data/catalog/sides.csv: expected side slurm or containers and a known "
                f"capability, got {row['side']!r}, {row['capability']!r}"
            )
        sides.setdefault(row["platform"], {})[(row["side"], row["capability"])] = row["support"]
    staffing: dict[str, dict[tuple[str, str], float]] = {}
    for row in _rows(folder / "staffing.csv"):
        key = (row["skill"], row["component"])
        staffing.setdefault(row["platform"], {})[key] = float(row["fte"])
    platforms = {}
    for name in PLATFORMS:
        a = attrs[name]
        if a.get("node_autoscaling") not in SUPPORT_LEVELS:
            raise ValueError(
                f"data/catalog/platforms.csv: platform '{name}' needs node_autoscaling, one of "
                f"{', '.join(SUPPORT_LEVELS)}; got {a.get('node_autoscaling')!r}"
            )
        missing_caps = [c for c in CAPABILITIES if c not in support.get(name, {})]
        missing_kinds = [k for k in WORKLOAD_KINDS if k not in util.get(name, {})]
        if missing_caps or missing_kinds:
            raise ValueError(
                f"data/catalog: platform '{name}' lacks capabilities {missing_caps} "
                f"or utilization for kinds {missing_kinds}"
            )
        platforms[name] = PlatformKind(
            name=name,
            interface=a["interface"],
            scale_up_lag_minutes=float(a["scale_up_lag_minutes"]),
            preemption_overhead=float(a["preemption_overhead"]),
            topology_slowdown=float(a["topology_slowdown"]),
            node_autoscaling=a["node_autoscaling"],
            support=MappingProxyType(support[name]),
            utilization=MappingProxyType(util[name]),
            staffing=MappingProxyType(
                {k: v for k, v in staffing.get(name, {}).items() if k[0] in SKILLS}
            ),
            side_support=MappingProxyType(sides.get(name, {})),
        )
    return platforms


def _read_profiles(folder: Path) -> dict[str, np.ndarray]:
    raw: dict[str, np.ndarray] = {}
    for row in _rows(folder / "profiles.csv"):
        arr = raw.setdefault(row["profile"], np.full(HOURS_PER_WEEK, np.nan))
        arr[int(row["hour_of_week"])] = float(row["weight"])
    for name, arr in raw.items():
        if np.isnan(arr).any():
            raise ValueError(f"data/catalog/profiles.csv: profile '{name}' lacks some hours")
        arr.setflags(write=False)
    return raw


def _read_managed(folder: Path) -> dict[str, ManagedVariant]:
    attrs: dict[str, dict[str, float]] = {}
    sellers: dict[str, frozenset[str]] = {}
    for row in _rows(folder / "managed.csv"):
        if row["attribute"] == "sellers":
            sellers[row["platform"]] = frozenset(filter(None, row["value"].split(";")))
        else:
            attrs.setdefault(row["platform"], {})[row["attribute"]] = float(row["value"])
    out = {}
    for name, a in attrs.items():
        if name not in sellers:
            raise ValueError(
                f"data/catalog/managed.csv: platform '{name}' needs a 'sellers' row (the "
                "companies that run it as a service, separated by ';')"
            )
        staffing = {}
        for key, value in a.items():
            if key.endswith("_fte"):
                skill, _, component = key[: -len("_fte")].partition("_")
                staffing[(skill, component)] = value
        out[name] = ManagedVariant(
            platform=name,
            cluster_usd_per_hour=a["cluster_usd_per_hour"],
            build_weeks=a["build_weeks"],
            staffing=MappingProxyType(staffing),
            sellers=sellers[name],
        )
    return out


@lru_cache(maxsize=4)
def load_catalog(folder: Path | None = None) -> Catalog:
    """The shipped catalog (or one from ``folder``), parsed once and cached."""
    folder = Path(folder) if folder is not None else data_dir() / "catalog"
    costs_raw = {row["parameter"]: float(row["value"]) for row in _rows(folder / "costs.csv")}
    gaps = _rows(folder / "capability_gaps.csv")
    return Catalog(
        gpus=MappingProxyType(_read_gpus(folder)),
        platforms=MappingProxyType(_read_platforms(folder)),
        profiles=MappingProxyType(_read_profiles(folder)),
        costs=CostParameters(**{f: costs_raw[f] for f in CostParameters.__dataclass_fields__}),
        capability_gaps_usd=MappingProxyType(
            {r["capability"]: float(r["gap_usd_per_month"]) for r in gaps}
        ),
        capability_descriptions=MappingProxyType({r["capability"]: r["description"] for r in gaps}),
        offers=read_offers(folder),
        resale=read_resale(folder),
        onprem=MappingProxyType(read_onprem(folder)),
        burst_caps=MappingProxyType(read_burst_caps(folder)),
        managed=MappingProxyType(_read_managed(folder)),
        people=PeopleParameters(
            **{
                r["parameter"]: float(r["value"])
                for r in _rows(folder / "people.csv")
                if r["parameter"] in PeopleParameters.__dataclass_fields__
            }
        ),
    )
