"""Scenario files: load, validate, save, and change them one validated copy at a time.

A scenario is one TOML file (every key is in ``docs/scenario.md``): the estate's workloads, its team,
procurement and policy, plus optional overrides of the catalog. A :class:`Scenario` is frozen;
every change returns a new, validated scenario, so the same object can back a chart, a cached
solve and an undo history without surprises. Validation collects every problem and raises once,
each message naming the file, the key path and what was expected.
"""

from __future__ import annotations

import copy
import math
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from cluster_decide.base import ranges
from cluster_decide.base.atomic import write_atomic
from cluster_decide.base.constants import (
    HOURS_PER_WEEK,
    PLATFORMS,
    PRESETS,
    SKILLS,
    WORKLOAD_KINDS,
)
from cluster_decide.base.errors import Problem, ScenarioError, did_you_mean
from cluster_decide.base.ranges import Range
from cluster_decide.base.tomlread import tomllib
from cluster_decide.base.vocabulary import (
    FAMILY,
    Archetype,
    Capability,
    Interface,
    Kind,
    Platform,
    Skill,
    Support,
)
from cluster_decide.inputs.catalog import GPU_ATTRIBUTES, Catalog, data_dir, load_catalog
from cluster_decide.inputs.estate_size import size_problem

__all__ = [
    "DEMAND_KEYS",
    "PRESETS",
    "SLO_KEYS",
    "DeadlineWorkload",
    "ExperimentationWorkload",
    "RealtimeWorkload",
    "Scenario",
    "TrainingWorkload",
    "Workload",
    "load_scenario",
    "parse_scenario",
    "preset_path",
    "save_scenario",
]

ArchetypeChoice = Literal["any", Archetype]

# The open-ended number types below remain for fractions and for keys without a plausible range
# yet; a new number key should get a Range of its own (cluster_decide/base/ranges.py).
PosInt = Annotated[int, Field(strict=True, gt=0)]
NonNegInt = Annotated[int, Field(strict=True, ge=0)]
PosFloat = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)]
Share = Annotated[float, Field(strict=True, ge=0, lt=1, allow_inf_nan=False)]
StrictBool = Annotated[bool, Field(strict=True)]
Name = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")]


def _no_control(value: str) -> str:
    """Refuse text holding control characters (they would reach a terminal or report raw)."""
    bad = [c for c in value if (ord(c) < 32 and c not in "\n\t") or 127 <= ord(c) < 160]
    if bad:
        raise PydanticCustomError(
            "control_character",
            "expected text without control characters, got one ({code}) at position {at}",
            {"code": f"U+{ord(bad[0]):04X}", "at": value.index(bad[0]) + 1},
        )
    return value


Text = Annotated[str, Field(max_length=200), AfterValidator(_no_control)]
"""A short display text (a scenario or team name): no control characters, at most 200."""
LongText = Annotated[str, Field(max_length=5_000), AfterValidator(_no_control)]
"""A description: newlines and tabs allowed, no other control characters."""


GpusPerJob = Annotated[int, Field(strict=True), ranges.GPUS_PER_JOB]
Hires = Annotated[int, Field(strict=True), ranges.HIRES]
HorizonMonths = Annotated[int, Field(strict=True), ranges.HORIZON_MONTHS]
PoolCount = Annotated[int, Field(strict=True), ranges.POOLS]
NodeCount = Annotated[int, Field(strict=True), ranges.NODES]
Users = Annotated[int, Field(strict=True), ranges.USERS]
GpusPerUser = Annotated[int, Field(strict=True), ranges.GPUS_PER_USER]
SessionHours = Annotated[float, Field(strict=True), ranges.SESSION_HOURS]
ServiceTimeCv = Annotated[float, Field(strict=True), ranges.SERVICE_TIME_CV]
Concurrency = Annotated[int, Field(strict=True), ranges.CONCURRENCY]
GpusPerNode = Annotated[int, Field(strict=True), ranges.GPUS_PER_NODE]
Fte = Annotated[float, Field(strict=True), ranges.FTE]
FteEffort = Annotated[float, Field(strict=True), ranges.FTE_EFFORT]
Salary = Annotated[float, Field(strict=True), ranges.SALARY]
OneOffUsd = Annotated[float, Field(strict=True), ranges.ONE_OFF_USD]
PriceScale = Annotated[float, Field(strict=True), ranges.PRICE_SCALE]
BudgetUsdMonth = Annotated[float, Field(strict=True), ranges.BUDGET_USD_MONTH]
GpuHoursMonth = Annotated[float, Field(strict=True), ranges.GPU_HOURS_MONTH]
JobHours = Annotated[float, Field(strict=True), ranges.JOB_HOURS]
WaitHours = Annotated[float, Field(strict=True), ranges.WAIT_HOURS]
Scv = Annotated[float, Field(strict=True), ranges.SCV]
RequestsPerSecond = Annotated[float, Field(strict=True), ranges.REQUESTS_PER_SECOND]
GpuSeconds = Annotated[float, Field(strict=True), ranges.GPU_SECONDS]
LatencyMs = Annotated[float, Field(strict=True), ranges.LATENCY_MS]
MemoryGb = Annotated[float, Field(strict=True), ranges.MEMORY_GB]
TdpW = Annotated[float, Field(strict=True), ranges.TDP_W]
NodeKw = Annotated[float, Field(strict=True), ranges.NODE_KW]
GpuHourUsd = Annotated[float, Field(strict=True), ranges.GPU_HOUR_USD]
CapexUsd = Annotated[float, Field(strict=True), ranges.CAPEX_USD]
Speed = Annotated[float, Field(strict=True), ranges.SPEED]
LagMinutes = Annotated[float, Field(strict=True), ranges.LAG_MINUTES]
PowerUsdKwh = Annotated[float, Field(strict=True), ranges.POWER_USD_KWH]
Pue = Annotated[float, Field(strict=True), ranges.PUE]
FacilityUsdKw = Annotated[float, Field(strict=True), ranges.FACILITY_USD_KW]
BurstCapGpus = Annotated[int, Field(strict=True), ranges.BURST_CAP_GPUS]
SupportFraction = Annotated[float, Field(strict=True), ranges.SUPPORT_FRACTION]
UsefulLifeMonths = Annotated[float, Field(strict=True), ranges.USEFUL_LIFE_MONTHS]
SpotInterruptions = Annotated[float, Field(strict=True), ranges.SPOT_INTERRUPTIONS]
IntervalHours = Annotated[float, Field(strict=True), ranges.INTERVAL_HOURS]


class _Section(BaseModel):
    """A frozen table that rejects unknown keys; numbers are strict, so a quoted "8" is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ScenarioInfo(_Section):
    """Name and description shown on every output."""

    name: Annotated[Text, Field(min_length=1)]
    description: LongText = ""


class Team(_Section):
    """One skill's available staff and what an FTE of it costs per year, fully loaded."""

    fte: Fte = 0.0
    loaded_cost_usd_per_year: Salary | None = None


class Teams(_Section):
    """Staff by skill: ``hpc`` runs Slurm, ``kubernetes`` runs Kubernetes."""

    hpc: Team = Team()
    kubernetes: Team = Team()


class Hiring(_Section):
    """Whether the plan may hire, how many people at most, and the one-off cost of a hire.

    ``max_fte`` caps the hires of all skills together (a hire is a whole person);
    ``max_fte_by_skill`` may cap a skill further. ``retraining`` lets the plan train existing
    engineers in the other skill (a one-off course and ramp-up cost per person).
    """

    allowed: StrictBool = False
    max_fte: Hires = 0
    one_time_cost_usd: OneOffUsd | None = None
    max_fte_by_skill: dict[Skill, Hires] = {}
    retraining: StrictBool = True


class Procurement(_Section):
    """How capacity is bought: the markets a plan may use (see ``docs/scenario.md``).

    ``mode`` says where the pools' baseline nodes come from: rented on a commitment (``cloud``),
    owned (``on_prem``) or whichever is cheaper per GPU type (``cheapest``). ``provider_classes``
    are the sellers it may rent from (baseline in cloud mode, bursts and spot always);
    ``commitment`` the longest term it accepts (default: the longest that fits the horizon);
    ``providers`` the companies it may rent from, when it has chosen them (``None``: any seller
    of an allowed class).
    """

    mode: Literal["cloud", "on_prem", "cheapest"] = "cloud"
    on_demand_burst: StrictBool = True
    horizon_months: HorizonMonths = 36
    gpu_price_scale: PriceScale = 1.0
    provider_classes: tuple[Literal["hyperscaler", "gpu_cloud", "marketplace"], ...] = (
        "hyperscaler",
        "gpu_cloud",
    )
    providers: Annotated[tuple[Name, ...], Field(min_length=1)] | None = None
    commitment: Literal["none", "1y", "3y"] | None = None
    spot: StrictBool | None = None
    max_spot_share: Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)] | None = (
        None
    )
    discount_rate: Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)] | None = (
        None
    )
    burst_cap_gpus: dict[str, BurstCapGpus] | None = None
    gpu_price_scale_by_type: dict[str, PriceScale] | None = None

    @model_validator(mode="after")
    def _commitment_fits_horizon(self) -> Procurement:
        months = {"none": 0, "1y": 12, "3y": 36}
        if self.commitment is not None and months[self.commitment] > self.horizon_months:
            raise PydanticCustomError(
                "commitment_horizon",
                "commitment '{term}' binds {months} months but horizon_months is {horizon}: "
                "choose a commitment no longer than the horizon ('1y' needs 12 months, 'none' "
                "rents on demand) or lengthen the horizon",
                {
                    "term": self.commitment,
                    "months": months[self.commitment],
                    "horizon": self.horizon_months,
                },
            )
        return self

    @property
    def spot_allowed(self) -> bool:
        """Spot as the scenario says; unset, an on-prem estate that rents no bursts rents no spot.

        An estate that keeps its GPUs in its own machine room and allows no on-demand bursts has
        said it does not rent from a cloud; cloud spot would contradict that.
        """
        if self.spot is not None:
            return self.spot
        return self.mode != "on_prem" or self.on_demand_burst

    @property
    def commitment_term(self) -> str:
        """The commitment in force: the scenario's, or the longest that fits the horizon."""
        if self.commitment is not None:
            return self.commitment
        if self.horizon_months >= 36:
            return "3y"
        return "1y" if self.horizon_months >= 12 else "none"


class Policy(_Section):
    """Candidate platforms, a forced archetype, a budget and a limit on the number of pools."""

    platforms: tuple[Platform, ...] = PLATFORMS
    archetype: ArchetypeChoice = "any"
    budget_usd_per_month: BudgetUsdMonth | None = None
    max_pools: PoolCount | None = None
    managed: StrictBool = True
    """Whether pools may run as a managed service (cloud procurement only)."""

    @field_validator("platforms")
    @classmethod
    def _platforms_unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise PydanticCustomError("too_short", "expected at least one platform")
        if len(set(value)) != len(value):
            raise PydanticCustomError("unique", "lists a platform twice")
        return value


class PoolSpec(_Section):
    """An explicit candidate pool; without ``[[pools]]`` there is one pool per candidate platform."""

    name: Name
    platform: Platform
    gpu_types: tuple[str, ...] | None = None
    max_nodes: NodeCount | None = None


class _WorkloadBase(_Section):
    name: Name
    team: Text = ""
    interface: Interface = "containers"
    gpu_types: Annotated[tuple[str, ...], Field(min_length=1)]
    profile: str | tuple[float, ...] = "flat"
    requires: tuple[Capability, ...] = ()
    prefers: tuple[Capability, ...] = ()
    divisible: StrictBool | None = None
    platforms: tuple[Platform, ...] | None = None
    interruptible: StrictBool | None = None
    """May run on spot capacity (checkpointed or re-runnable); default by kind, see below."""

    @field_validator("platforms")
    @classmethod
    def _platforms_listed(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and not value:
            raise PydanticCustomError(
                "no_platform", "expected at least one platform (leave the key out to allow any)"
            )
        if value is not None and len(set(value)) != len(value):
            raise PydanticCustomError("unique", "lists a platform twice")
        return value

    @field_validator("profile", mode="before")
    @classmethod
    def _profile_shape(cls, value: Any) -> Any:
        return _check_profile(value)

    @property
    def is_divisible(self) -> bool:
        """Whether the class may be split across pools and GPU types.

        Default: yes, except distributed training (one gang is one allocation) and real-time
        inference (a service split in two needs more replicas than its halves suggest, because
        Erlang-C capacity does not scale linearly; the model sizes it as one queue).
        """
        if self.divisible is not None:
            return self.divisible
        return self.kind not in ("distributed_training", "realtime_inference")  # type: ignore[attr-defined]

    @property
    def is_interruptible(self) -> bool:
        """Whether the class may run on spot capacity that can be reclaimed at any time.

        Default: yes for fine-tuning (checkpointed, usually single-node), batch inference and
        pipelines (a reclaimed job is re-run); no for distributed training (one reclaimed node
        stops the whole gang; set ``interruptible = true`` for checkpointed runs), interactive
        sessions (a person loses their session) and real-time services (never).
        """
        kind = self.kind  # type: ignore[attr-defined]
        if kind == "realtime_inference":
            return False
        if self.interruptible is not None:
            return self.interruptible
        return kind in ("fine_tuning", "batch_inference", "pipeline")

    @property
    def slo_key(self) -> str:
        """The name of this workload's service-level key."""
        return SLO_KEYS[self.kind]  # type: ignore[attr-defined]

    @property
    def slo(self) -> float:
        """The service-level target, in the unit its key names."""
        return float(getattr(self, self.slo_key))


class TrainingWorkload(_WorkloadBase):
    """Gang jobs measured in GPU-hours, with a queue-wait SLO (distributed training, fine-tuning)."""

    kind: Literal["distributed_training", "fine_tuning"]
    gpus_per_job: GpusPerJob
    gpu_hours_per_month: GpuHoursMonth
    mean_job_hours: JobHours
    max_queue_wait_hours: WaitHours
    duration_scv: Scv = 1.0
    """Squared coefficient of variation of job run times: 1 exponential, 0 fixed-length."""
    arrival_scv: Scv = 1.0
    """Of the gaps between submissions: 1 independent submitters (Poisson), below 1 planned runs."""


class DeadlineWorkload(_WorkloadBase):
    """Batch jobs that must finish within a deadline (batch inference, pipelines)."""

    kind: Literal["batch_inference", "pipeline"]
    gpus_per_job: GpusPerJob
    gpu_hours_per_month: GpuHoursMonth
    mean_job_hours: JobHours
    max_completion_hours: WaitHours
    duration_scv: Scv = 1.0
    """Squared coefficient of variation of job run times: 1 exponential, 0 fixed-length."""


class ExperimentationWorkload(_WorkloadBase):
    """Interactive users holding GPUs (notebooks, debugging), with a short wait SLO."""

    kind: Literal["experimentation"]
    concurrent_users: Users
    gpus_per_user: GpusPerUser
    max_queue_wait_hours: WaitHours
    mean_session_hours: SessionHours = 2.0
    """Mean length of one session holding GPUs (assumption: a working notebook session of a
    couple of hours; the mean queue wait of :func:`cluster_decide.demand.queueing.mean_wait_mmc`
    scales with it)."""


class RealtimeWorkload(_WorkloadBase):
    """An online service: requests per second, GPU-seconds each, and a p99 latency SLO."""

    kind: Literal["realtime_inference"]

    @field_validator("interruptible")
    @classmethod
    def _never_on_spot(cls, value: bool | None) -> bool | None:
        if value:
            raise PydanticCustomError(
                "realtime_spot",
                "a real-time service cannot be interruptible: a reclaimed spot node drops live "
                "requests; remove the key or set it to false",
            )
        return value

    peak_requests_per_second: RequestsPerSecond
    gpu_seconds_per_request: GpuSeconds
    p99_latency_ms: LatencyMs
    concurrency_per_gpu: Concurrency = 1
    service_time_cv: ServiceTimeCv = 1.0
    """Coefficient of variation of request times (1: exponential; LLM generation varies more,
    see ``docs/queueing.md``); the p99 uses the M/G/c approximation."""
    headroom: Literal["none", "n+1"] = "none"
    """``n+1`` keeps one node's worth of replicas spare, so the p99 holds with a node down or
    drained for a rolling update."""


Workload = Annotated[
    TrainingWorkload | DeadlineWorkload | ExperimentationWorkload | RealtimeWorkload,
    Field(discriminator="kind"),
]

_KIND_CLASS: dict[str, type[_WorkloadBase]] = {
    "distributed_training": TrainingWorkload,
    "fine_tuning": TrainingWorkload,
    "batch_inference": DeadlineWorkload,
    "pipeline": DeadlineWorkload,
    "experimentation": ExperimentationWorkload,
    "realtime_inference": RealtimeWorkload,
}
SLO_KEYS = {
    "distributed_training": "max_queue_wait_hours",
    "fine_tuning": "max_queue_wait_hours",
    "batch_inference": "max_completion_hours",
    "pipeline": "max_completion_hours",
    "experimentation": "max_queue_wait_hours",
    "realtime_inference": "p99_latency_ms",
}
"""The service-level key of each workload kind (hours of wait or completion, or p99 ms)."""
DEMAND_KEYS = {
    "distributed_training": "gpu_hours_per_month",
    "fine_tuning": "gpu_hours_per_month",
    "batch_inference": "gpu_hours_per_month",
    "pipeline": "gpu_hours_per_month",
    "experimentation": "concurrent_users",
    "realtime_inference": "peak_requests_per_second",
}
"""The key that measures each workload kind's demand (the one ``scale_demand`` scales)."""


class GpuOverride(_Section):
    """Changes to a catalog GPU type, or a whole new type (then every attribute is needed)."""

    memory_gb: MemoryGb | None = None
    tdp_w: TdpW | None = None
    gpus_per_node: GpusPerNode | None = None
    node_power_kw: NodeKw | None = None
    usd_per_gpu_hour_on_demand: GpuHourUsd | None = None
    usd_per_gpu_hour_reserved: GpuHourUsd | None = None
    node_capex_usd: CapexUsd | None = None
    training_speed: Speed | None = None
    inference_speed: Speed | None = None


class PlatformOverride(_Section):
    """Changes to a platform kind of the catalog."""

    interface: Literal["slurm", "containers", "both"] | None = None
    scale_up_lag_minutes: LagMinutes | None = None
    preemption_overhead: Share | None = None
    topology_slowdown: Share | None = None
    node_autoscaling: Support | None = None
    capabilities: dict[Capability, Support] | None = None
    utilization: dict[Kind, Fraction] | None = None
    staffing: (
        dict[Skill, dict[Literal["base", "per_100_nodes", "addon", "integration"], FteEffort]]
        | None
    ) = None


class CostOverride(_Section):
    """Changes to the catalog's site and people cost parameters."""

    power_usd_per_kwh: PowerUsdKwh | None = None
    pue: Pue | None = None
    average_power_fraction: Fraction | None = None
    facility_usd_per_kw_month: FacilityUsdKw | None = None
    residual_value_fraction: Share | None = None
    hire_one_time_cost_usd: OneOffUsd | None = None
    friction_fte_per_class: FteEffort | None = None
    split_fte_per_extra_placement: FteEffort | None = None
    hpc_loaded_cost_usd_per_year: Salary | None = None
    kubernetes_loaded_cost_usd_per_year: Salary | None = None
    support_fraction_per_year: SupportFraction | None = None
    useful_life_months: UsefulLifeMonths | None = None
    spot_interruptions_per_node_month: SpotInterruptions | None = None
    checkpoint_interval_hours: IntervalHours | None = None
    spot_restart_hours: IntervalHours | None = None
    preempt_restart_hours: IntervalHours | None = None


class CurrentWorkload(_Section):
    """Where one workload runs today, and how many people submit its work.

    ``cluster`` names the listed cluster (``[[current.clusters]]``) it runs on, when known: a
    plan that puts it on another cluster of the same platform family moves it there (a smaller
    cost than a move to another platform), and a plain Kubernetes cluster named by a workload
    that runs on ``kubernetes_batch`` today has the batch add-on already. ``hold`` keeps it
    there: on its platform family, and on its cluster when named (a production service that
    policy keeps apart, say).
    """

    platform: Platform
    cluster: Name | None = None
    users: Users | None = None
    hold: StrictBool = False
    """Keep this workload where it runs today (``Current.hold`` for one workload)."""


class CurrentCluster(_Section):
    """A cluster that exists today: reused without a build cost (owned nodes without capex).

    It may grow: nodes beyond ``nodes`` are bought as any new node is (the GPU type's baseline
    offer; for an owned cluster only where that offer is owned hardware), up to ``max_nodes``
    (its rack space, power or fabric ports; none: no limit).
    """

    name: Name
    platform: Platform
    gpu_type: str
    nodes: NodeCount
    max_nodes: NodeCount | None = None
    ownership: Literal["owned", "leased"] = "owned"
    leased_until: Annotated[str, Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$")] | None = None
    managed: StrictBool = False
    provider: Name | None = None
    """The company a leased cluster is rented from (a catalog seller, ``CoreWeave``, ``AWS``…):
    its own nodes cost that company's price, and the nodes and node groups it adds are rented
    there, since a cluster does not span clouds. None: the seller is not named, and its nodes
    and the nodes it adds are priced at the cheapest allowed offer of their GPU type."""


class Current(_Section):
    """The estate as it is today: where each workload runs, and the clusters that exist.

    ``as_of`` is the month the plan starts (today), needed to count how many months of a
    lease (``leased_until``) fall inside the planning horizon.
    """

    as_of: Annotated[str, Field(pattern=r"^\d{4}-\d{2}$")] | None = None
    workloads: dict[Name, CurrentWorkload] = {}
    clusters: tuple[CurrentCluster, ...] = ()
    hold: StrictBool = False
    """Keep every listed workload where it runs today: on its platform family, and on its
    cluster where ``cluster`` names one (the estate as it is, which "Today -> plan" prices)."""


def _check_profile(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        if len(value) != HOURS_PER_WEEK:
            raise PydanticCustomError(
                "profile_length",
                "expected a profile name or a list of 168 hourly weights, got {n} values",
                {"n": len(value)},
            )
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            raise PydanticCustomError("profile_type", "expected 168 numbers")
        if min(value) < 0 or max(value) <= 0 or not all(math.isfinite(v) for v in value):
            raise PydanticCustomError(
                "profile_values", "expected non-negative finite weights with at least one above 0"
            )
        return tuple(float(v) for v in value)
    raise PydanticCustomError(
        "profile_type", "expected a profile name or a list of 168 hourly weights"
    )


class Scenario(_Section):
    """A validated, immutable scenario. Change it with the methods below; each returns a copy."""

    schema_version: Literal[1]
    scenario: ScenarioInfo
    team: Teams = Teams()
    hiring: Hiring = Hiring()
    procurement: Procurement = Procurement()
    policy: Policy = Policy()
    workloads: Annotated[tuple[Workload, ...], Field(min_length=1)]
    pools: tuple[PoolSpec, ...] | None = None
    gpus: dict[str, GpuOverride] = {}
    platforms: dict[Platform, PlatformOverride] = {}
    profiles: dict[Name, tuple[float, ...]] = {}
    costs: CostOverride = CostOverride()
    current: Current | None = None

    _catalog: Catalog = PrivateAttr()
    _source: str = PrivateAttr(default="")

    @field_validator("profiles", mode="before")
    @classmethod
    def _profiles_shape(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: _check_profile(v) for k, v in value.items()}
        return value

    # -- derived --------------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        """The catalog with this scenario's overrides applied."""
        return self._catalog

    @property
    def source(self) -> str:
        """The file this scenario came from (for messages), or an empty string."""
        return self._source

    @property
    def name(self) -> str:
        """The scenario's display name."""
        return self.scenario.name

    def workload(
        self, name: str
    ) -> TrainingWorkload | DeadlineWorkload | ExperimentationWorkload | RealtimeWorkload:
        """The workload called ``name`` (KeyError with a suggestion otherwise)."""
        for w in self.workloads:
            if w.name == name:
                return w
        hint = did_you_mean(name, [w.name for w in self.workloads])
        raise KeyError(f"no workload named '{name}'" + (f" ({hint})" if hint else ""))

    def sets_gpu_prices(self, gpu: str) -> bool:
        """Whether the scenario rents ``gpu`` at its own prices, not the catalog's offers.

        Its ``[gpus.<type>]`` table sets an on-demand or a reserved price.
        """
        over = self.gpus.get(gpu)
        return over is not None and (
            over.usd_per_gpu_hour_on_demand is not None
            or over.usd_per_gpu_hour_reserved is not None
        )

    def current_cluster(self, name: str) -> CurrentCluster | None:
        """The cluster of today listed as ``name`` (``[[current.clusters]]``), if any."""
        if self.current is None:
            return None
        return next((c for c in self.current.clusters if c.name == name), None)

    def loaded_cost_usd_per_year(self, skill: str) -> float:
        """What one FTE of ``skill`` costs per year: the scenario's figure or the catalog default."""
        team: Team = getattr(self.team, skill)
        if team.loaded_cost_usd_per_year is not None:
            return team.loaded_cost_usd_per_year
        return float(getattr(self.catalog.costs, f"{skill}_loaded_cost_usd_per_year"))

    @property
    def hire_one_time_cost_usd(self) -> float:
        """One-off cost of a hire: the scenario's figure or the catalog default."""
        if self.hiring.one_time_cost_usd is not None:
            return self.hiring.one_time_cost_usd
        return self.catalog.costs.hire_one_time_cost_usd

    # -- copies with changes (each one call, each validated) -------------------------------

    def update(self, changes: Mapping[str, Any]) -> Scenario:
        """A validated copy with ``changes`` (nested tables) merged into the scenario's data."""
        data = _deep_merge(self.to_dict(), changes)
        return parse_scenario(data, source=self._source)

    def scale_demand(self, kind: str, factor: float) -> Scenario:
        """Multiply the demand of every workload of ``kind`` by ``factor`` (> 0)."""
        if kind not in WORKLOAD_KINDS:
            raise ValueError(
                f"unknown workload kind '{kind}' ({did_you_mean(kind, WORKLOAD_KINDS)})"
            )
        if not (factor > 0 and math.isfinite(factor)):
            raise ValueError(f"demand factor must be a positive number, got {factor}")
        data = self.to_dict()
        for w in data["workloads"]:
            if w["kind"] == kind:
                key = DEMAND_KEYS[kind]
                scaled = w[key] * factor
                w[key] = max(1, round(scaled)) if isinstance(w[key], int) else scaled
        return parse_scenario(data, source=self._source)

    def set_fte(self, skill: str, fte: float) -> Scenario:
        """Set the available FTE of a skill (``hpc`` or ``kubernetes``)."""
        if skill not in SKILLS:
            raise ValueError(f"unknown skill '{skill}' (expected one of {', '.join(SKILLS)})")
        return self.update({"team": {skill: {"fte": float(fte)}}})

    def set_hiring(self, allowed: bool, max_fte: int | None = None) -> Scenario:
        """Allow or forbid hiring, optionally changing the most FTE the plan may hire."""
        change: dict[str, Any] = {"allowed": allowed}
        if max_fte is not None:
            change["max_fte"] = max_fte
        return self.update({"hiring": change})

    def set_procurement(self, mode: str, on_demand_burst: bool | None = None) -> Scenario:
        """Switch between ``cloud`` and ``on_prem`` (and optionally on-demand bursting)."""
        change: dict[str, Any] = {"mode": mode}
        if on_demand_burst is not None:
            change["on_demand_burst"] = on_demand_burst
        return self.update({"procurement": change})

    def scale_gpu_prices(self, factor: float) -> Scenario:
        """Scale every GPU price (reserved, on-demand and node capex) by ``factor``."""
        return self.update({"procurement": {"gpu_price_scale": float(factor)}})

    def set_slo(self, workload: str, value: float) -> Scenario:
        """Set one workload's service-level target, in the unit of its SLO key."""
        key = self.workload(workload).slo_key
        data = self.to_dict()
        for w in data["workloads"]:
            if w["name"] == workload:
                w[key] = value
        return parse_scenario(data, source=self._source)

    def scale_slo(self, kind: str, factor: float) -> Scenario:
        """Multiply the SLO target of every workload of ``kind`` (> 1 relaxes it)."""
        data = self.to_dict()
        for w, model in zip(data["workloads"], self.workloads, strict=True):
            if model.kind == kind:
                w[model.slo_key] = model.slo * factor
        return parse_scenario(data, source=self._source)

    def set_budget(self, usd_per_month: float | None) -> Scenario:
        """Cap the monthly cash spend, or remove the cap with ``None``."""
        data = self.to_dict()
        data["policy"].pop("budget_usd_per_month", None)
        if usd_per_month is not None:
            data["policy"]["budget_usd_per_month"] = usd_per_month
        return parse_scenario(data, source=self._source)

    def set_slurm_adds_nodes(self, adds: bool) -> Scenario:
        """Say whether the estate's Slurm starts cloud nodes for queued jobs and ends idle ones.

        ``[platforms.slurm] node_autoscaling``: ``native`` when it does (its pools may rent
        peaks and run interruptible work on spot), else ``partial``, the catalog's own figure
        (a fixed set of nodes, as most Slurm clusters run).
        """
        support = "native" if adds else "partial"
        return self.update({"platforms": {"slurm": {"node_autoscaling": support}}})

    def restrict_platforms(self, platforms: Sequence[str]) -> Scenario:
        """Limit the candidate platforms to ``platforms``."""
        return self.update({"policy": {"platforms": list(platforms)}})

    def force_archetype(self, archetype: str) -> Scenario:
        """Force an archetype (or ``any`` to let the optimizer choose)."""
        return self.update({"policy": {"archetype": archetype}})

    # -- serialization ---------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain data in the scenario-file layout (lists, not tuples; no unset keys)."""
        data = self.model_dump(mode="python", exclude_none=True)
        return _plain(data)

    def to_toml(self) -> str:
        """The scenario as TOML text that loads back to an equal scenario."""
        data = self.to_dict()
        for key in ("gpus", "platforms", "profiles"):
            if not data.get(key):
                data.pop(key, None)
        if not data.get("costs"):
            data.pop("costs", None)
        ordered = {k: data[k] for k in _TOP_ORDER if k in data}
        return tomli_w.dumps(ordered)


_TOP_ORDER = (
    "schema_version",
    "scenario",
    "team",
    "hiring",
    "procurement",
    "policy",
    "costs",
    "gpus",
    "platforms",
    "profiles",
    "pools",
    "workloads",
    "current",
)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _deep_merge(base: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


# -- error translation -------------------------------------------------------------------

_SECTION_MODELS: dict[str, type[BaseModel]] = {
    "scenario": ScenarioInfo,
    "team": Teams,
    "hiring": Hiring,
    "procurement": Procurement,
    "policy": Policy,
    "costs": CostOverride,
}


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model whose keys are valid at the parent of ``loc`` (for near-miss suggestions)."""
    parent = loc[:-1]
    if not parent:
        return Scenario
    head = parent[0]
    if head == "workloads" and len(parent) >= 3 and parent[2] in _KIND_CLASS:
        return _KIND_CLASS[parent[2]]
    if head == "workloads":
        return _WorkloadBase
    if head == "team" and len(parent) == 2:
        return Team
    if head == "pools":
        return PoolSpec
    if head == "current" and len(parent) == 1:
        return Current
    if head == "current" and len(parent) == 3 and parent[1] == "workloads":
        return CurrentWorkload
    if head == "current" and len(parent) >= 2 and parent[1] == "clusters":
        return CurrentCluster
    if head == "gpus" and len(parent) == 2:
        return GpuOverride
    if head == "platforms" and len(parent) == 2:
        return PlatformOverride
    if len(parent) == 1:
        return _SECTION_MODELS.get(head)
    return None


def _is_int_field(loc: tuple[Any, ...]) -> bool:
    """Whether the key at ``loc`` holds an integer (for "expected a positive integer")."""
    model = _model_at(loc)
    field = model.model_fields.get(str(loc[-1])) if model else None
    if field is None:
        return False
    text = repr(field.annotation)
    return "int" in text and "float" not in text


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif loc[0] == "workloads" and i == 2 and part in _KIND_CLASS:
            continue  # the discriminator tag pydantic inserts is not a key the user wrote
        elif part == "[key]":
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


def _expected_from_literal(ctx: Mapping[str, Any]) -> list[str]:
    raw = str(ctx.get("expected", ""))
    return [p.strip().strip("'") for p in raw.replace(" or ", ", ").split(",") if p.strip()]


def _translate(err: Mapping[str, Any]) -> Problem:
    loc = tuple(err["loc"])
    kind, ctx, got = err["type"], err.get("ctx", {}) or {}, err.get("input")
    where = _path(loc)
    noun = "integer" if _is_int_field(loc) else "number"
    if kind in ("value_range", "control_character", "no_platform"):
        return Problem(where, str(err["msg"]))
    if kind == "extra_forbidden":
        key = str(loc[-1])
        model = _model_at(loc)
        choices = list(model.model_fields) if model else []
        return Problem(_path(loc[:-1]), f"unknown key '{key}'", did_you_mean(key, choices))
    if kind == "missing":
        return Problem(_path(loc[:-1]), f"missing required key '{loc[-1]}'")
    if kind in ("greater_than", "greater_than_equal"):
        bound = ctx.get("gt", ctx.get("ge"))
        if bound == 0 and kind == "greater_than":
            return Problem(where, f"expected a positive {noun}, got {_show(got)}")
        if bound == 0:
            return Problem(where, f"expected a {noun} of at least 0, got {_show(got)}")
        return Problem(
            where,
            f"expected a {noun} {'above' if 'gt' in ctx else 'of at least'} {bound}, got {_show(got)}",
        )
    if kind in ("less_than", "less_than_equal"):
        bound = ctx.get("lt", ctx.get("le"))
        return Problem(
            where,
            f"expected a number {'below' if 'lt' in ctx else 'of at most'} {bound}, got {_show(got)}",
        )
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return Problem(where, f"expected an integer, got {_show(got)}")
    if kind in ("float_type", "float_parsing", "number_type", "finite_number"):
        return Problem(where, f"expected a number, got {_show(got)}")
    if kind in ("bool_type", "bool_parsing"):
        return Problem(where, f"expected true or false, got {_show(got)}")
    if kind in ("string_type",):
        return Problem(where, f"expected text, got {_show(got)}")
    if kind == "string_pattern_mismatch":
        return Problem(
            where, f"expected a name of letters, digits, '-', '_' or '.', got {_show(got)}"
        )
    if kind in ("literal_error", "enum"):
        options = _expected_from_literal(ctx)
        return Problem(
            where,
            f"expected one of {', '.join(options)}, got {_show(got)}",
            did_you_mean(str(got), options),
        )
    if kind == "union_tag_invalid":
        return Problem(
            _path(loc) + ".kind" if _path(loc) else "kind",
            f"expected one of {', '.join(WORKLOAD_KINDS)}, got {_show(ctx.get('tag'))}",
            did_you_mean(str(ctx.get("tag")), WORKLOAD_KINDS),
        )
    if kind == "union_tag_not_found":
        return Problem(where, "missing required key 'kind'", f"one of {', '.join(WORKLOAD_KINDS)}")
    if kind in ("too_short",):
        return Problem(where, "expected at least one item")
    if kind in ("tuple_type", "list_type"):
        return Problem(where, f"expected a list, got {_show(got)}")
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return Problem(where, f"expected a table, got {_show(got)}")
    message = str(err.get("msg", "invalid value"))
    return Problem(where, message[0].lower() + message[1:] if message else "invalid value")


# -- checks that need the catalog --------------------------------------------------------


def _unknown_seller(where: str, name: str, classes: Mapping[str, str]) -> Problem | None:
    """A problem at ``where`` when ``name`` is no catalog seller, with the nearest names."""
    if name in classes:
        return None
    same = [s for s in sorted(classes) if s.lower() == name.lower()]
    return Problem(
        where,
        f"unknown provider '{name}'",
        (f"did you mean '{same[0]}'?" if same else did_you_mean(name, sorted(classes)))
        or f"known: {', '.join(sorted(classes))}",
    )


def _check_providers(proc: Procurement, catalog: Catalog) -> list[Problem]:
    """Each of ``procurement.providers`` is a catalog seller of a class the scenario allows."""
    classes = catalog.seller_classes()
    problems = []
    for i, name in enumerate(proc.providers or ()):
        where = f"procurement.providers[{i}]"
        if (unknown := _unknown_seller(where, name, classes)) is not None:
            problems.append(unknown)
        elif classes[name] not in proc.provider_classes:
            problems.append(
                Problem(
                    where,
                    f"'{name}' is a {classes[name]} seller, a class procurement.provider_classes "
                    "leaves out",
                    f"add '{classes[name]}' to procurement.provider_classes or drop '{name}'",
                )
            )
        elif name in (proc.providers or ())[:i]:
            problems.append(Problem(where, f"lists '{name}' twice"))
    return problems


def _check_cluster_providers(scn: Scenario, catalog: Catalog) -> list[Problem]:
    """A cluster's ``provider`` is a catalog seller of its nodes, named for a leased cluster only.

    Any seller, whatever ``procurement.provider_classes`` and ``providers`` allow: the cluster
    stands there today. It must rent out the cluster's GPU type as a pool's nodes (a term
    that is not spot, sold with a fabric), unless the scenario sets that type's prices itself.
    """
    classes = catalog.seller_classes()
    problems = []
    current = scn.current
    for i, c in enumerate(current.clusters if current is not None else ()):
        if c.provider is None:
            continue
        where = f"current.clusters[{i}].provider"
        if c.ownership != "leased":
            problems.append(
                Problem(
                    where,
                    f"'{c.name}' is owned (the default ownership), so no company rents it out",
                    'ownership = "leased" for a cluster rented from a cloud, or drop provider',
                )
            )
        elif (unknown := _unknown_seller(where, c.provider, classes)) is not None:
            problems.append(unknown)
        elif not scn.sets_gpu_prices(c.gpu_type):
            nodes = {
                o.seller
                for o in catalog.offers
                if o.gpu == c.gpu_type and o.term != "spot" and o.multi_node
            }
            if c.provider not in nodes:
                problems.append(
                    Problem(
                        where,
                        f"'{c.provider}' rents out no {c.gpu_type} nodes for a cluster in the "
                        "catalog (data/catalog/offers.csv), so the cluster's nodes could not be "
                        "priced there",
                        f"a seller of {c.gpu_type} nodes: {', '.join(sorted(nodes)) or 'none'}; "
                        f"or set {c.gpu_type}'s prices under [gpus.{c.gpu_type}]",
                    )
                )
    return problems


def _check_against_catalog(scn: Scenario, catalog: Catalog) -> list[Problem]:
    problems: list[Problem] = []
    known_gpus = set(catalog.gpus)
    for name, over in scn.gpus.items():
        if name not in catalog.gpus:
            missing = [a for a in GPU_ATTRIBUTES if getattr(over, a) is None]
            if missing:
                problems.append(
                    Problem(
                        f"gpus.{name}",
                        f"'{name}' is not a catalog GPU type, so a new type needs {', '.join(missing)}",
                        did_you_mean(name, catalog.gpus),
                    )
                )
                continue
        known_gpus.add(name)
    by_type = {
        **(scn.procurement.burst_cap_gpus or {}),
        **(scn.procurement.gpu_price_scale_by_type or {}),
    }
    for name in by_type:
        if name not in known_gpus:
            key = (
                "burst_cap_gpus"
                if name in (scn.procurement.burst_cap_gpus or {})
                else "gpu_price_scale_by_type"
            )
            problems.append(
                Problem(
                    f"procurement.{key}.{name}",
                    f"unknown GPU type '{name}'",
                    did_you_mean(name, sorted(known_gpus))
                    or f"known: {', '.join(sorted(known_gpus))}",
                )
            )
    problems += _check_providers(scn.procurement, catalog)
    problems += _check_cluster_providers(scn, catalog)
    profiles = set(catalog.profiles) | set(scn.profiles)
    seen: dict[str, int] = {}
    for i, w in enumerate(scn.workloads):
        if w.name in seen:
            problems.append(
                Problem(
                    f"workloads[{i}].name",
                    f"'{w.name}' is already the name of workloads[{seen[w.name]}]",
                    "names must be unique",
                )
            )
        seen.setdefault(w.name, i)
        for j, g in enumerate(w.gpu_types):
            if g not in known_gpus:
                problems.append(
                    Problem(
                        f"workloads[{i}].gpu_types[{j}]",
                        f"unknown GPU type '{g}'",
                        did_you_mean(g, sorted(known_gpus))
                        or f"known: {', '.join(sorted(known_gpus))}",
                    )
                )
        if isinstance(w.profile, str) and w.profile not in profiles:
            problems.append(
                Problem(
                    f"workloads[{i}].profile",
                    f"unknown profile '{w.profile}'",
                    did_you_mean(w.profile, sorted(profiles))
                    or f"known: {', '.join(sorted(profiles))}",
                )
            )
        both = sorted(set(w.requires) & set(w.prefers))
        if both:
            problems.append(
                Problem(
                    f"workloads[{i}].prefers",
                    f"{', '.join(both)} is already required",
                    "list a capability in requires or prefers, not both",
                )
            )
    problems += _check_current(scn, known_gpus)
    if scn.pools is not None:
        names: set[str] = set()
        for i, p in enumerate(scn.pools):
            if p.name in names:
                problems.append(
                    Problem(
                        f"pools[{i}].name",
                        f"'{p.name}' is used by another pool",
                        "pool names must be unique",
                    )
                )
            names.add(p.name)
            for j, g in enumerate(p.gpu_types or ()):
                if g not in known_gpus:
                    problems.append(
                        Problem(
                            f"pools[{i}].gpu_types[{j}]",
                            f"unknown GPU type '{g}'",
                            did_you_mean(g, sorted(known_gpus)),
                        )
                    )
    return problems


def _check_size(scn: Scenario) -> list[Problem]:
    """Values each in range can still combine into an estate no one runs; refuse those.

    The bound is :func:`cluster_decide.inputs.estate_size.size_problem`'s, which `ingest` shares.
    """
    problem = size_problem(
        [w.model_dump() for w in scn.workloads],
        scn.catalog,
        price_scale=scn.procurement.gpu_price_scale,
        horizon_months=scn.procurement.horizon_months,
    )
    return [Problem(*problem)] if problem else []


def _check_current(scn: Scenario, known_gpus: set[str]) -> list[Problem]:
    """``[current]`` names real workloads and GPU types, and each cluster once."""
    if scn.current is None:
        return []
    problems = []
    names = [w.name for w in scn.workloads]
    for name in scn.current.workloads:
        if name not in names:
            problems.append(
                Problem(
                    f"current.workloads.{name}",
                    f"no workload named '{name}'",
                    did_you_mean(name, names) or f"workloads: {', '.join(names)}",
                )
            )
    problems += _check_workload_clusters(scn.current)
    seen: set[str] = set()
    for i, c in enumerate(scn.current.clusters):
        if c.name in seen:
            problems.append(
                Problem(
                    f"current.clusters[{i}].name",
                    f"'{c.name}' names another cluster",
                    "cluster names must be unique",
                )
            )
        seen.add(c.name)
        if c.gpu_type not in known_gpus:
            problems.append(
                Problem(
                    f"current.clusters[{i}].gpu_type",
                    f"unknown GPU type '{c.gpu_type}'",
                    did_you_mean(c.gpu_type, sorted(known_gpus)),
                )
            )
        if c.max_nodes is not None and c.max_nodes < c.nodes:
            problems.append(
                Problem(
                    f"current.clusters[{i}].max_nodes",
                    f"'{c.name}' has {c.nodes} nodes today, more than max_nodes = {c.max_nodes}",
                    f"a number of nodes of at least {c.nodes} (max_nodes = {c.nodes}: it does "
                    "not grow)",
                )
            )
        if c.managed and c.ownership == "owned":
            # A managed service (EKS, GKE, AKS; SUNK-class Slurm) runs on rented nodes; read as
            # owned, its nodes would cost only power and space (an EKS cluster at $0.65 per
            # H100 GPU-hour instead of its market price), and the plan would lean on them.
            problems.append(
                Problem(
                    f"current.clusters[{i}].managed",
                    f"'{c.name}' is a managed service today, but its nodes are owned (the "
                    "default ownership); a managed service runs on rented nodes",
                    'ownership = "leased", a rolling lease unless leased_until is given; or '
                    "managed = false for a cluster you own and run",
                )
            )
        problems += _check_lease(scn.current, i, c)
    return problems


def _check_workload_clusters(current: Current) -> list[Problem]:
    """A workload's ``cluster`` names a listed cluster of its platform's family."""
    clusters = {c.name: c for c in current.clusters}
    problems = []
    for name, cur in current.workloads.items():
        if cur.cluster is None:
            continue
        key = f"current.workloads.{name}.cluster"
        c = clusters.get(cur.cluster)
        if c is None:
            listed = ", ".join(clusters) or "none"
            problems.append(
                Problem(
                    key,
                    f"no cluster named '{cur.cluster}' in [[current.clusters]]",
                    did_you_mean(cur.cluster, list(clusters)) or f"clusters listed: {listed}",
                )
            )
        elif FAMILY[c.platform] != FAMILY[cur.platform]:
            problems.append(
                Problem(
                    key,
                    f"'{name}' runs on {cur.platform} today, but cluster '{c.name}' is "
                    f"{c.platform}",
                    f"a cluster of the {FAMILY[cur.platform]} family, or platform = "
                    f'"{c.platform}" for {name}',
                )
            )
    return problems


def _check_lease(current: Current, i: int, c: CurrentCluster) -> list[Problem]:
    """A ``leased_until`` belongs to a leased cluster and needs ``current.as_of`` to count from."""
    if c.leased_until is None:
        return []
    if c.ownership != "leased":
        return [
            Problem(
                f"current.clusters[{i}].leased_until",
                f"'{c.name}' is owned, so it has no lease to end",
                'set ownership = "leased" or drop leased_until',
            )
        ]
    if current.as_of is None:
        return [
            Problem(
                f"current.clusters[{i}].leased_until",
                f"the lease of '{c.name}' ends {c.leased_until}, but the month the plan starts "
                "is not given",
                'add as_of = "YYYY-MM" to [current] (the month the plan starts)',
            )
        ]
    return []


def _resolved_catalog(scn: Scenario, base: Catalog) -> Catalog:
    import numpy as np

    gpu_over = {k: v.model_dump(exclude_none=True) for k, v in scn.gpus.items()}
    platform_over: dict[str, dict[str, Any]] = {
        str(k): v.model_dump(exclude_none=True) for k, v in scn.platforms.items()
    }
    profiles = {}
    for k, v in scn.profiles.items():
        arr = np.asarray(v, dtype=float)
        arr = arr / arr.max()
        arr.setflags(write=False)
        profiles[k] = arr
    return base.with_overrides(
        gpus=gpu_over,
        platforms=platform_over,
        profiles=profiles,
        costs=scn.costs.model_dump(exclude_none=True),
    )


def parse_scenario(
    data: Mapping[str, Any], source: str = "", catalog: Catalog | None = None
) -> Scenario:
    """Validate scenario data (as read from TOML) into a :class:`Scenario`, or raise ScenarioError."""
    base = catalog if catalog is not None else load_catalog()
    if not isinstance(data, Mapping):
        raise ScenarioError(source, [Problem("", "expected a TOML table at the top level")])
    version = data.get("schema_version")
    if version is None:
        missing = Problem(
            "", "missing required key 'schema_version'", "add schema_version = 1 at the top"
        )
        raise ScenarioError(source, [missing])
    if version != 1:
        raise ScenarioError(
            source,
            [
                Problem(
                    "schema_version",
                    f"unsupported schema_version {_show(version)}",
                    "this version of cluster_decide reads schema_version = 1",
                )
            ],
        )
    try:
        scn = Scenario.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A list whose items failed also reports "too short" (its valid items are too few): noise.
        nested = [tuple(e["loc"]) for e in errors]
        errors = [
            e
            for e in errors
            if e["type"] != "too_short"
            or not any(
                len(n) > len(e["loc"]) and n[: len(e["loc"])] == tuple(e["loc"]) for n in nested
            )
        ]
        problems = [_translate(e) for e in errors]
        raise ScenarioError(source, _unique(_drop_missing_typos(problems))) from None
    problems = _check_against_catalog(scn, base)
    if problems:
        raise ScenarioError(source, problems)
    scn._catalog = _resolved_catalog(scn, base)
    scn._source = source
    problems = _check_size(scn)
    if problems:
        raise ScenarioError(source, problems)
    return scn


def _drop_missing_typos(problems: list[Problem]) -> list[Problem]:
    """A misspelt key reports "unknown key (did you mean X)"; its "missing X" twin is noise."""
    meant = {(p.where, p.hint) for p in problems if p.hint.startswith("did you mean")}
    return [
        p
        for p in problems
        if not (
            p.what.startswith("missing required key")
            and (p.where, f"did you mean {p.what.split()[-1]}?") in meant
        )
    ]


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: set[Problem] = set()
    out = []
    for p in problems:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def _ranges_in(annotation: Any) -> list[Range]:
    """The ranges inside a (possibly optional, list or dict) field annotation."""
    found = [m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Range)]
    for arg in typing.get_args(annotation):
        found += _ranges_in(arg)
    return found


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def scenario_ranges() -> list[tuple[str, Range]]:
    """Every ranged key of a scenario file with its range, in file order (for the reference)."""
    out: list[tuple[str, Range]] = []
    seen: set[tuple[str, Range]] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        for key, field in model.model_fields.items():
            path = f"{prefix}.{key}" if prefix else key
            direct = [m for m in field.metadata if isinstance(m, Range)]
            for rng in direct + _ranges_in(field.annotation):
                if (path, rng) not in seen:
                    seen.add((path, rng))
                    out.append((path, rng))
            for sub in _models_in(field.annotation):
                walk(sub, path)

    walk(Team, "team.<skill>")
    for key in ("hiring", "procurement", "policy"):
        walk(_models_in(Scenario.model_fields[key].annotation)[0], key)
    walk(PoolSpec, "pools[]")
    for cls in (TrainingWorkload, DeadlineWorkload, ExperimentationWorkload, RealtimeWorkload):
        walk(cls, "workloads[]")
    walk(CurrentWorkload, "current.workloads.<name>")
    walk(CurrentCluster, "current.clusters[]")
    walk(GpuOverride, "gpus.<type>")
    walk(PlatformOverride, "platforms.<platform>")
    walk(CostOverride, "costs")
    return out


def preset_path(name: str) -> Path:
    """The file of a shipped preset (``enterprise-mixed``, ``research-lab``, ``inference-platform``)."""
    return data_dir() / "scenarios" / f"{name}.toml"


MAX_SCENARIO_BYTES = 20_000_000
"""The largest scenario file read: 10,000 workloads take about 4 MB."""


def load_scenario(path: str | Path | None = None, catalog: Catalog | None = None) -> Scenario:
    """Read and validate a scenario file; no argument loads the default preset.

    ``path`` may also be a preset name such as ``"research-lab"``.
    """
    if path is None:
        path = preset_path(PRESETS[0])
    elif str(path) in PRESETS:
        path = preset_path(str(path))
    path = Path(path)
    source = path.name
    if not path.is_file():
        raise ScenarioError(str(path), [_not_a_file(path)])
    size = path.stat().st_size
    if size > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            source,
            [
                Problem(
                    "",
                    f"the file is {size / 1e6:,.0f} MB; a scenario is read whole, so at most "
                    f"{MAX_SCENARIO_BYTES // 1_000_000} MB is accepted",
                )
            ],
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(str(path), [Problem("", f"cannot read it: {exc.strerror}")]) from None
    data = read_scenario_toml(raw, source)
    return parse_scenario(data, source=source, catalog=catalog)


def _not_a_file(path: Path) -> Problem:
    """Why ``path`` cannot be read as a scenario: missing, a folder, or a pipe or device."""
    if path.is_dir():
        return Problem("", "is a folder, not a scenario file", "give the path of a .toml file")
    if path.exists():
        return Problem(
            "", "is not a regular file (a pipe, socket or device)", "give the path of a .toml file"
        )
    hint = did_you_mean(path.stem, PRESETS) or f"presets: {', '.join(PRESETS)}"
    return Problem("", "no such scenario file", hint)


def read_scenario_toml(raw: bytes, source: str) -> dict[str, Any]:
    """Parse a scenario file's bytes into data, or raise ScenarioError naming ``source``.

    A UTF-8 byte-order mark (which some Windows editors write) is skipped; nesting deeper than
    the parser can follow, or an integer too long to read, is refused with a message.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise ScenarioError(
            source,
            [Problem("", "the file is empty", "expected a TOML scenario (see docs/scenario.md)")],
        )
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            source, [Problem("", f"not UTF-8 text (byte {exc.start})", "expected a TOML scenario")]
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(source, [Problem("", f"invalid TOML: {exc}")]) from None
    except RecursionError:
        raise ScenarioError(
            source,
            [Problem("", "lists or tables nested too deeply to read", "a scenario needs 4 levels")],
        ) from None
    except ValueError:  # tomllib's int() refuses integers of more than 4,300 digits
        raise ScenarioError(
            source, [Problem("", "invalid TOML: an integer of more than 4,300 digits")]
        ) from None


def save_scenario(scenario: Scenario, path: str | Path) -> Path:
    """Write ``scenario`` as TOML (atomically) and return the path."""
    return write_atomic(path, scenario.to_toml())
