"""Model data: every number the optimizer and :func:`cluster_decide.evaluate` share, as integers.

The scenario and catalog are turned once into integer tables: demand per workload, pool, GPU type
and hour in tenths of a GPU (SLO headroom, utilization and platform overheads already applied),
costs in cents, staff effort in thousandths of an FTE. The CP-SAT model and the independent
evaluator both read these tables, so they agree to the cent; neither recomputes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from cluster_decide.base import vocabulary
from cluster_decide.base.constants import (
    CAPABILITY_WORDS,
    HOURS_PER_MONTH,
    HOURS_PER_WEEK,
    PLATFORM_WORDS,
    PLATFORMS,
    SKILLS,
)
from cluster_decide.base.vocabulary import ADDONS, FAMILY
from cluster_decide.demand.queueing import (
    BatchClass,
    arrival_load_factor,
    autoscaled_rates,
    batch_waits,
    deadline_gpus,
    min_gpus_for_latency,
    min_gpus_for_wait,
    min_servers_for_mean_wait,
)
from cluster_decide.inputs.catalog import Catalog, GpuType, PlatformKind
from cluster_decide.inputs.market import Market, onprem_cost, resolve_markets, spot_overhead
from cluster_decide.inputs.offers import OnPremNode
from cluster_decide.inputs.scenario import (
    Current,
    CurrentCluster,
    DeadlineWorkload,
    ExperimentationWorkload,
    RealtimeWorkload,
    Scenario,
    TrainingWorkload,
    Workload,
)
from cluster_decide.model.people import ADDON_SUFFIX, PeopleData, prepare_people
from cluster_decide.model.stopping import check_stopped

__all__ = [
    "DEMAND_UNITS_PER_GPU",
    "MILLI",
    "SPOT_STEPS",
    "STEPS",
    "Combo",
    "Lease",
    "ModelData",
    "Pool",
    "batch_class",
    "busy_gpus",
    "gpu_demand",
    "job_stretch",
    "lease_months",
    "prepare",
    "pushed_out",
    "realtime_rates",
    "spot_wait_hours",
]

DEMAND_UNITS_PER_GPU = vocabulary.DEMAND_UNITS_PER_GPU
"""Demand is counted in tenths of a GPU (rounded up, so rounding never under-provisions)."""
MILLI = 1000
"""Staff effort is counted in thousandths of an FTE."""
SPOT_STEPS = 10
"""Spot shares of divisible classes move in steps of 100 / SPOT_STEPS percent."""
STEPS = 4
"""Trough-filling backlog is counted in quarters of a capacity unit, so the preemption loss per
GPU pushed out (half a checkpoint interval plus the restart) is a whole number of quarters."""
WEEKS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_WEEK
DEFAULT_POOL_NAMES = {
    "slurm": "slurm",
    "kubernetes": "k8s",
    "kubernetes_batch": "k8s-batch",
    "shared": "shared",
}


@dataclass(frozen=True)
class Pool:
    """A candidate pool: one platform kind, the GPU types it may hold, an optional node limit."""

    name: str
    platform: str
    gpu_types: tuple[str, ...]
    max_nodes: int | None
    bursts: bool
    existing: bool = False
    """The pool is a cluster that exists today (``[current]``): no build cost."""
    owned: bool = False
    """An existing cluster whose nodes are owned: its capex is spent, so a node costs its running
    costs (support, power, space)."""
    nodes_today: int = 0
    """A cluster of today's nodes (``current.clusters[].nodes``), priced as today's; the nodes
    it grows by are bought at the market's price (``ModelData.nodes_cents``)."""
    cluster: str = ""
    """The cluster of today (``current.clusters[].name``) this pool is; empty for a new pool.

    A Kubernetes cluster of today is two pools: itself, and itself with a batch scheduler
    add-on installed (named with ``people.ADDON_SUFFIX``). They hold the same nodes, so at
    most one opens (``build.add_linking``), and the add-on costs only its own build."""
    gpu_today: str = ""
    """The GPU type of a listed cluster of today's own nodes (``current.clusters[].gpu_type``).

    Its other GPU types are node groups (Slurm partitions, Kubernetes node pools) it may gain,
    every node of them bought as a new one is."""
    grows_today: bool = True
    """A listed cluster of today may add nodes of its own GPU type (else it keeps its count)."""

    @property
    def adds_on(self) -> bool:
        """The pool is a cluster of today with a batch scheduler add-on it does not have yet."""
        return bool(self.cluster) and self.cluster != self.name

    def nodes_today_of(self, gpu_type: str) -> int:
        """Nodes of ``gpu_type`` a listed cluster of today has: its own type's, none of others."""
        return self.nodes_today if gpu_type == self.gpu_today else 0

    def owns(self, gpu_type: str) -> bool:
        """The pool's nodes of ``gpu_type`` are owned hardware whose capex is spent."""
        return self.owned and gpu_type == self.gpu_today

    def node_limit(self, gpu_type: str) -> int | None:
        """Most nodes of ``gpu_type`` the pool may hold (``max_nodes`` caps all types together)."""
        if gpu_type == self.gpu_today and not self.grows_today:
            return self.nodes_today
        return self.max_nodes


@dataclass(frozen=True)
class Lease:
    """A cluster of today leased until a date: its nodes are paid for until then, used or not.

    ``months`` of the horizon fall inside the lease (from ``current.as_of`` to ``leased_until``,
    both months counted). The lease costs ``node_cents`` a node a month (the GPU type's market
    price for the pool's baseline); averaged over the horizon it is the constant
    ``committed_cents``, and a node the plan keeps using costs only the months after the lease.
    """

    pool: str
    gpu_type: str
    nodes: int
    months: int
    horizon_months: int
    node_cents: int

    @property
    def committed_cents(self) -> int:
        """All the lease's nodes for its months in the horizon, in cents a month averaged."""
        return round(self.nodes * self.node_cents * self.months / self.horizon_months)

    @property
    def node_after_cents(self) -> int:
        """A node the plan uses, beyond the lease: market price for the months after it ends."""
        return round(self.node_cents * (self.horizon_months - self.months) / self.horizon_months)


def lease_months(as_of: str, leased_until: str, horizon_months: int) -> int:
    """Months of a horizon starting in ``as_of`` (YYYY-MM) that a lease ending ``leased_until`` covers.

    Both months count (a lease until 2027-06 from 2026-12 runs 7 months); a lease that ended
    before the plan starts covers none, one beyond the horizon covers all of it.
    """
    y0, m0 = (int(x) for x in as_of.split("-")[:2])
    y1, m1 = (int(x) for x in leased_until.split("-")[:2])
    months = (y1 * 12 + m1) - (y0 * 12 + m0) + 1
    return max(0, min(horizon_months, months))


@dataclass(frozen=True)
class Combo:
    """One way to place a workload: in a pool, on a GPU type.

    ``demand`` is the hourly requirement of the whole workload in tenths of a GPU (168
    values); ``blocked`` says why the combination is forbidden (empty when it is allowed); the
    cost fields are in cents per percent of the workload placed here.

    A share ``s`` percent of the workload needs ``load(s) = s * slope + fixed`` (percent ×
    tenths of a GPU, ``fixed`` only when placed at all). For most classes ``slope = demand``
    and ``fixed = 0``. A divisible service or notebook class is sized by a queue whose size is
    not linear in its traffic (Erlang C needs more than half the servers for half the
    traffic), so its piece needs are bounded by the line through the whole class's need with
    the smallest slope that stays above every piece's own need (see ``piece_line``).
    """

    workload: str
    pool: str
    gpu_type: str
    demand: np.ndarray
    gang_gpus: int
    blocked: str
    blocked_family: str
    gap_cents_per_pct: int
    friction_cents_per_pct: int
    slope: np.ndarray | None = None
    fixed: np.ndarray | None = None

    def load(self, share_pct: int) -> np.ndarray:
        """What ``share_pct`` percent of the workload needs here, in percent × tenths of a GPU."""
        if share_pct <= 0:
            return np.zeros_like(self.demand)
        if self.slope is None or self.fixed is None:
            return share_pct * self.demand
        return share_pct * self.slope + self.fixed

    def pushed(self, share_pct: int) -> np.ndarray:
        """GPUs ``share_pct`` percent of the workload takes back at the start of each hour.

        Each part of ``load`` rises on its own (:func:`pushed_out`): the sum bounds the rise of
        the whole from above, and the sharing rows of the model count it the same way.
        """
        if share_pct <= 0:
            return np.zeros_like(self.demand)
        if self.slope is None or self.fixed is None:
            return share_pct * pushed_out(self.demand)
        return share_pct * pushed_out(self.slope) + pushed_out(self.fixed)


@dataclass(frozen=True)
class ModelData:
    """Integer tables of one scenario, shared by the model builder and the evaluator."""

    scenario: Scenario
    workloads: tuple[Workload, ...]
    pools: tuple[Pool, ...]
    gpu_types: tuple[str, ...]
    combos: Mapping[tuple[str, str, str], Combo]
    gpus_per_node: Mapping[str, int]
    node_cents: Mapping[str, int]
    burst_cents: Mapping[str, int]
    """Cents per month for a tenth of an on-demand GPU in one hour of the representative week."""
    base_milli: Mapping[tuple[str, str], int]
    addon_milli: Mapping[tuple[str, str], int]
    per_node_milli: Mapping[tuple[str, str], int]
    staff_cents_per_milli: Mapping[str, int]
    available_milli: Mapping[str, int]
    max_hires: int
    hire_cents: int
    split_cents: int
    """Cents per month for each placement of a workload beyond its first (coordination effort)."""
    budget_cents: int | None
    unplaceable: Mapping[str, str]
    markets: Mapping[str, Market] = field(default_factory=dict)
    """Where each GPU type is bought: baseline offer, burst, spot, owned-node investment."""
    spot_cents: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    """Cents per month per percent of a workload run on spot; only combinations that may."""
    spot_cap_pct: int = 0
    """Most of a class's placed GPU-hours (per pool and GPU type) that may run on spot, in percent."""
    spot_pcts: Mapping[tuple[str, str, str], tuple[int, ...]] = field(default_factory=dict)
    """The spot percents each combination in ``spot_cents`` may take (see ``_spot_pcts``)."""
    burst_cap_units: Mapping[str, int] = field(default_factory=dict)
    """On-demand burst cap per GPU type and hour, in tenths of a GPU, summed over pools."""
    people: PeopleData | None = None
    """Payroll, hires, retraining, managed variants, builds and moves (``model.people``)."""
    pool_node_cents: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """Node cost of pools that differ from their GPU type's price (owned clusters of today,
    leased ones whose lease covers part of the horizon, and, where ``procurement.providers``
    names companies, a leased one's own nodes at ``today_markets``' price)."""
    leases: tuple[Lease, ...] = ()
    """Leases of today's clusters that run into the horizon: paid whether the plan uses them."""
    today_markets: Mapping[str, Market] = field(default_factory=dict)
    """The market of a listed cluster of today's own nodes, by GPU type, when
    ``procurement.providers`` names the companies the plan rents from (empty otherwise): the
    cluster stands at its own provider (not named), so its nodes are priced by every seller of
    the allowed classes; the nodes it adds are rented like any others."""
    cluster_markets: Mapping[str, Mapping[str, Market]] = field(default_factory=dict)
    """A leased cluster of today that names its provider → the GPU types that company rents
    out for a pool's nodes → its market (``current.clusters[].provider``): the cluster's own
    nodes, the nodes it grows by and its node groups are all rented there. One that names
    none, in an estate that may buy its new GPUs, rents them from the allowed sellers
    (``_cluster_markets``)."""

    def cluster_market(self, pool: str, gpu_type: str) -> Market | None:
        """Where a leased cluster of today rents ``pool``'s nodes of ``gpu_type``.

        See ``cluster_markets``; None for a pool that is no such cluster, or a type not rented
        out there.
        """
        if not self.cluster_markets:
            return None
        markets = self.cluster_markets.get(self.pool(pool).cluster)
        return None if markets is None else markets.get(gpu_type)

    def market(self, pool: str, gpu_type: str) -> Market | None:
        """The market of ``pool``'s nodes of ``gpu_type`` (see ``today_markets``).

        An owned cluster of today grows by bought hardware (``Market.bought``) even where new
        pools rent: a cloud node is no part of its fabric. A leased one that names its provider
        rents all its nodes there (:meth:`cluster_market`).
        """
        own = self.bought_market(pool, gpu_type) or self.cluster_market(pool, gpu_type)
        if own is not None:
            return own
        if self.today_markets and gpu_type == self.pool(pool).gpu_today:
            return self.today_markets.get(gpu_type)
        return self.markets.get(gpu_type)

    def bought_market(self, pool: str, gpu_type: str) -> Market | None:
        """The market an owned cluster of today buys ``gpu_type`` on where new pools rent it.

        ``Market.bought`` (the scenario may buy, renting is the cheaper baseline) for an owned
        ``pool``; None elsewhere.
        """
        market = self.markets.get(gpu_type)
        if market is None or market.bought is None or not self.pool(pool).owned:
            return None
        return market.bought

    @property
    def lease_cents(self) -> int:
        """The committed leases, in cents a month averaged over the horizon (a constant)."""
        return sum(lease.committed_cents for lease in self.leases)

    def bought_outright(self, gpu_type: str) -> bool:
        """Whether new nodes of ``gpu_type`` are owned hardware (the baseline offer).

        No managed service, a cloud's, runs them.
        """
        market = self.markets.get(gpu_type)
        return (
            market is not None and market.baseline is not None and market.baseline.term == "owned"
        )

    def managed_bar(self, pool: str, gpu_type: str) -> str | None:
        """Why ``pool`` run as a managed service may hold no ``gpu_type`` nodes, or None.

        ``"owned"``: they are bought outright (:meth:`bought_outright`), and no cloud's service
        runs them. ``"seller"``: the company they are rented from does not run the pool's
        platform as a service (``ManagedVariant.sellers``: a vendor's Slurm on Kubernetes is
        CoreWeave's or Nebius's, so a managed shared pool holds no Azure nodes). A pool managed
        today keeps its nodes wherever they come from, and a scenario's own price names no
        company. The model's rows and the evaluator's check both read this.
        """
        if self.bought_outright(gpu_type):
            return "owned"
        option = self.people.managed.get(pool) if self.people is not None else None
        if option is not None and option.forced:
            return None
        market = self.market(pool, gpu_type)
        offer = market.baseline if market is not None else None
        if offer is None or offer.term == "owned" or offer.provider_class == "scenario":
            return None
        variant = self.scenario.catalog.managed.get(self.pool(pool).platform)
        return None if variant is None or offer.seller in variant.sellers else "seller"

    def new_node_market(self, pool: str, gpu_type: str) -> Market | None:
        """The market ``pool``'s new nodes of ``gpu_type`` come from.

        The GPU type's, or bought hardware's in an owned cluster of today (:meth:`bought_market`),
        or a leased one's provider's (:meth:`cluster_market`).
        """
        return (
            self.bought_market(pool, gpu_type)
            or self.cluster_market(pool, gpu_type)
            or self.markets.get(gpu_type)
        )

    def node_cost(self, pool: str, gpu_type: str) -> int:
        """Cents a month for one node of ``gpu_type`` in ``pool`` (of today's: one it has)."""
        return self.pool_node_cents.get((pool, gpu_type), self.new_node_cost(pool, gpu_type))

    def new_node_cost(self, pool: str, gpu_type: str) -> int:
        """Cents a month for a new node of ``gpu_type`` in ``pool``.

        The market's baseline price, or bought hardware's in an owned cluster of today
        (:meth:`bought_market`), or a leased one's provider's (:meth:`cluster_market`).
        """
        own = self.bought_market(pool, gpu_type) or self.cluster_market(pool, gpu_type)
        return self.node_cents[gpu_type] if own is None else round(own.node_usd_per_month * 100)

    def added_node_cost(self, pool: str, gpu_type: str) -> int:
        """Cents a month for a node a cluster of today grows by.

        It is bought at the market's price (:meth:`new_node_cost`), and counted as never cheaper
        than one of the cluster's own nodes (so its own nodes are always used first).
        """
        return max(self.new_node_cost(pool, gpu_type), self.node_cost(pool, gpu_type))

    def nodes_added(self, pool: str, gpu_type: str, nodes: int) -> int:
        """How many of ``nodes`` nodes of ``gpu_type`` a listed cluster of today adds (0 elsewhere).

        Those beyond its own nodes of that type: all of them for a GPU type it does not hold
        today (a new node group).
        """
        p = self.pool(pool)
        return max(0, nodes - p.nodes_today_of(gpu_type)) if p.nodes_today else 0

    def nodes_bought(self, pool: str, gpu_type: str, nodes: int) -> int:
        """How many of ``nodes`` nodes of ``gpu_type`` in ``pool`` are bought as new ones.

        All of them in a new pool; in a cluster of today only those it adds, since its own
        are paid for (owned) or rented (leased, at the market's monthly price). A bought node
        has an up-front outlay when the GPU type's baseline is owned hardware.
        """
        return self.nodes_added(pool, gpu_type, nodes) if self.pool(pool).nodes_today else nodes

    def nodes_cents(self, pool: str, gpu_type: str, nodes: int) -> int:
        """Cents a month for ``nodes`` nodes of ``gpu_type`` in ``pool``.

        A cluster of today's own nodes cost their price, the nodes it adds
        :meth:`added_node_cost`.
        """
        first = self.node_cost(pool, gpu_type)
        extra = self.added_node_cost(pool, gpu_type) - first
        return first * nodes + extra * self.nodes_added(pool, gpu_type, nodes)

    flexible: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    """Placements that fill the troughs other work leaves, hour by hour, with the fluid queue
    wait (hundredths of an hour) their class may add on top of its steady-state wait."""
    preempt_loss_steps: int = 0
    """GPU-hours lost per GPU pushed out by a service, in ``1 / STEPS`` of an hour (half a
    checkpoint interval of work plus the restart)."""
    memo: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Results derived from these tables alone, computed once (``build.dominated_pairs``, read
    by the model and by every evaluation of a plan). Not copied by ``dataclasses.replace``: a
    changed copy derives its own."""

    def platform(self, pool: str) -> PlatformKind:
        """The platform kind of a pool."""
        return self.scenario.catalog.platforms[self.pool(pool).platform]

    def bursts(self, pool: str, gpu_type: str) -> bool:
        """Whether ``pool`` rents on-demand ``gpu_type`` GPUs for its peaks.

        Its platform adds nodes and procurement allows bursts (``Pool.bursts``), and an allowed
        seller sells the type on demand: with ``procurement.providers`` naming companies that
        do not (or an on-prem estate whose allowed classes do not), its nodes are all it has.
        A leased cluster of today rents its peaks where it rents its nodes (:meth:`rental_market`).
        """
        market = self.rental_market(pool, gpu_type)
        return self.pool(pool).bursts and market is not None and market.burst is not None

    def off_burst(self, pool: str, gpu_type: str, job_gpus: int) -> bool:
        """Whether jobs of ``job_gpus`` GPUs run on ``pool``'s own nodes alone, never on its bursts.

        On-demand GPUs come an instance at a time, from whatever the market has that hour: a job
        that spans nodes needs them all at once on one fabric, and one larger than the on-demand
        instance (8 GPUs on AWS's single-L40S g6e.xlarge) does not fit it.
        """
        gpn = self.gpus_per_node[gpu_type]
        market = self.rental_market(pool, gpu_type)
        burst = market.burst if market is not None else None
        return job_gpus > gpn or (burst is not None and not burst.holds(job_gpus, gpn))

    def rental_market(self, pool: str, gpu_type: str) -> Market | None:
        """Where ``pool`` rents ``gpu_type`` peaks and spot.

        Where a leased cluster of today rents its nodes (:meth:`cluster_market`), else the GPU
        type's market.
        """
        return self.cluster_market(pool, gpu_type) or self.markets.get(gpu_type)

    def burst_cost(self, pool: str, gpu_type: str) -> int:
        """Cents per tenth of a GPU rented on demand for an hour of the week, all month long.

        The GPU type's (``burst_cents``), or its market's for a leased cluster of today
        (:meth:`cluster_market`).
        """
        market = self.cluster_market(pool, gpu_type)
        return self.burst_cents[gpu_type] if market is None else _burst_cents(market)

    def pool(self, name: str) -> Pool:
        """The pool called ``name``."""
        for p in self.pools:
            if p.name == name:
                return p
        raise KeyError(name)

    def relocates(self, workload: str, pool: str) -> bool:
        """Work of ``workload`` in ``pool`` has left its cluster of today for another of its family.

        Only where ``[current]`` names the cluster it runs on (``Move.cluster``); a pool of another
        platform family is a move (``moves``), not this.
        """
        mv = self.people.moves.get(workload) if self.people is not None else None
        if mv is None or mv.cluster is None:
            return False
        p = self.pool(pool)
        return FAMILY[p.platform] == FAMILY[mv.today] and p.cluster != mv.cluster

    def cluster_nodes(self, nodes: Mapping[tuple[str, str], int], cluster: str, gpu: str) -> int:
        """Nodes of ``gpu`` a plan's ``nodes`` use in the cluster of today called ``cluster``.

        Counted over its pools: itself and itself with a batch add-on (one of them opens).
        """
        return sum(nodes.get((p.name, gpu), 0) for p in self.pools if p.cluster == cluster)

    def allowed(self) -> list[Combo]:
        """The combinations the optimizer may use, in a fixed order."""
        return [c for c in self.combos.values() if not c.blocked]


def _pools(scn: Scenario, provided: Mapping[str, Mapping[str, Market]]) -> tuple[Pool, ...]:
    """Candidate pools, then today's clusters (``[current]``) as pools of their own.

    ``provided``: where today's leased clusters rent their nodes (:func:`_cluster_markets`).
    """
    pools = _candidate_pools(scn)
    current = scn.current
    if current is None:
        return pools
    burst_ok = scn.procurement.on_demand_burst
    cat = scn.catalog
    today = {FAMILY[c.platform] for c in current.clusters} | {
        FAMILY[w.platform] for w in current.workloads.values()
    }
    listed = {FAMILY[c.platform] for c in current.clusters}
    # A platform family in use today with no cluster listed: its default pools are the ones
    # that exist. A batch add-on no workload runs on today is still to install on the
    # Kubernetes cluster of today, so that pool is the plain one's add-on pool.
    kinds_today = {w.platform for w in current.workloads.values()}
    out = []
    for p in pools:
        if p.name in {c.name for c in current.clusters}:
            continue
        if FAMILY[p.platform] in today - listed and p.name == DEFAULT_POOL_NAMES.get(p.platform):
            base = ADDONS.get(p.platform)
            to_install = base is not None and p.platform not in kinds_today
            cluster = DEFAULT_POOL_NAMES[base] if base and to_install else p.name
            p = replace(p, existing=True, cluster=cluster)
        out.append(p)
    used = sorted({g for w in scn.workloads for g in w.gpu_types})
    markets = resolve_markets(scn, sorted(set(used) | {c.gpu_type for c in current.clusters}))
    installed = _addons_installed(current)
    for c in current.clusters:
        # A cluster that names its provider adds only what that company rents out.
        sold = provided.get(c.name)
        market = {g: markets[g] if sold is None else sold.get(g) for g in markets}
        types = (c.gpu_type, *(g for g in used if g != c.gpu_type and _adds(c, market[g])))
        if c.name in installed:
            kinds = [installed[c.name]]
        else:
            kinds = [c.platform] + [k for k, base in ADDONS.items() if base == c.platform]
        for kind in kinds:
            if kind not in scn.policy.platforms:
                continue
            out.append(
                Pool(
                    c.name
                    if kind in (c.platform, installed.get(c.name))
                    else c.name + ADDON_SUFFIX,
                    kind,
                    types,
                    c.max_nodes,
                    burst_ok and cat.platforms[kind].adds_nodes,
                    existing=True,
                    owned=c.ownership == "owned",
                    nodes_today=c.nodes,
                    cluster=c.name,
                    gpu_today=c.gpu_type,
                    grows_today=_adds(c, market[c.gpu_type]),
                )
            )
    return tuple(out)


def _cluster_markets(scn: Scenario, gpus: Sequence[str]) -> dict[str, dict[str, Market]]:
    """Leased clusters of today → where their nodes are rented, per GPU type.

    One that names its provider: that company's market (``resolve_markets(..., seller=)``).
    One that names none, in an estate that may buy its new GPUs (``procurement.mode`` is
    ``on_prem`` or ``cheapest``): the allowed sellers' rental market (``leased=True``), since a
    leased cluster is rented whatever the estate buys; in the cloud it rents from the estate's
    markets already. Only the types rented out for a pool's nodes (a baseline offer), of
    ``gpus`` and the cluster's own.
    """
    if scn.current is None:
        return {}
    out = {}
    for c in scn.current.clusters:
        types = sorted({*gpus, c.gpu_type})
        if c.provider is not None:
            sold = resolve_markets(scn, types, seller=c.provider)
        elif c.ownership == "leased" and scn.procurement.mode != "cloud":
            sold = resolve_markets(scn, types, leased=True)
        else:
            continue
        out[c.name] = {g: m for g, m in sold.items() if m.baseline is not None}
    return out


def _addons_installed(current: Current) -> dict[str, str]:
    """Listed plain clusters that run an add-on already → the add-on's platform kind.

    A workload runs on Kubernetes with a batch add-on today and names its cluster (``cluster``),
    a plain Kubernetes one: the add-on is on it. Where no such workload names one, and the one
    Kubernetes cluster listed is plain, the add-on is on that one. Either way the cluster runs
    as that kind and installs nothing. With two plain Kubernetes clusters listed and no
    ``cluster`` to say which has it, each may still gain it and pays the install.
    """
    kind_of: dict[str, str] = {c.name: c.platform for c in current.clusters}
    named: dict[str, str] = {
        cur.cluster: cur.platform
        for cur in current.workloads.values()
        if cur.cluster is not None and ADDONS.get(cur.platform) == kind_of[cur.cluster]
    }
    if named:
        return named
    listed = list(kind_of.values())
    unnamed = {cur.platform for cur in current.workloads.values() if cur.cluster is None}
    return {
        next(n for n, k in kind_of.items() if k == base): kind
        for kind, base in ADDONS.items()
        if kind in unnamed and kind not in listed and listed.count(base) == 1
    }


def _adds(cluster: CurrentCluster, market: Market | None) -> bool:
    """A cluster of today may add nodes of ``market``'s GPU type, as its own or a new node group.

    Only nodes that fit it: an owned cluster bought hardware (a cloud node is no part of its
    fabric) wherever the scenario may buy, even where renting is the cheaper baseline
    (``Market.bought``); a leased one the market's baseline offer (its provider's, where it
    names one: None when that company does not rent the type out).
    """
    if market is None:
        return False
    offer = market.baseline
    if cluster.ownership == "leased":
        return offer is not None
    return market.bought is not None or (offer is not None and offer.term == "owned")


def _candidate_pools(scn: Scenario) -> tuple[Pool, ...]:
    cat = scn.catalog
    used = sorted({g for w in scn.workloads for g in w.gpu_types})
    burst_ok = scn.procurement.on_demand_burst
    if scn.pools is not None:
        specs = [
            Pool(
                p.name,
                p.platform,
                tuple(p.gpu_types or used),
                p.max_nodes,
                burst_ok and cat.platforms[p.platform].adds_nodes,
            )
            for p in scn.pools
            if p.platform in scn.policy.platforms
        ]
        return tuple(specs)
    return tuple(
        Pool(DEFAULT_POOL_NAMES[k], k, tuple(used), None, burst_ok and cat.platforms[k].adds_nodes)
        for k in PLATFORMS
        if k in scn.policy.platforms
    )


def _speed_ratio(w: Workload, gpu: GpuType, catalog: Catalog) -> float:
    """How many GPUs of ``gpu`` do the work of one GPU of the workload's reference type."""
    ref = catalog.gpus[w.gpu_types[0]]
    if w.kind == "experimentation":
        return 1.0  # an interactive user holds whole GPUs whatever their speed
    if w.kind in ("realtime_inference", "batch_inference"):
        return ref.inference_speed / gpu.inference_speed
    return ref.training_speed / gpu.training_speed


def _profile(w: Workload, catalog: Catalog) -> np.ndarray:
    if isinstance(w.profile, str):
        return catalog.profile(w.profile)
    arr = np.asarray(w.profile, dtype=float)
    return arr / arr.max()


def gpu_demand(
    w: Workload,
    pool_platform: PlatformKind,
    gpu: GpuType,
    catalog: Catalog,
    share_pct: int = 100,
) -> np.ndarray:
    """GPUs (``share_pct`` percent of) a workload needs in each hour of the week here.

    Training and fine-tuning: enough GPUs that the class's mean queue wait stays within
    ``max_queue_wait_hours`` (the G/G/c approximation over gang-sized job slots of
    :func:`cluster_decide.demand.queueing.min_gpus_for_wait`), and never less than its busy GPUs
    divided by the utilization the platform achieves for the kind. Batch inference and
    pipelines: the flat capacity that finishes every night's work within
    ``max_completion_hours`` (:func:`cluster_decide.demand.queueing.deadline_gpus`), over the same
    utilization. Busy GPUs are GPU-hours per month / 730 converted to this GPU's speed and shaped
    by the profile. Experimentation: seats for the sessions in progress (``concurrent_users``
    shaped by the profile) such that the M/M/c mean wait for a seat stays within
    ``max_queue_wait_hours`` (:func:`cluster_decide.demand.queueing.min_servers_for_mean_wait`), times
    ``gpus_per_user``. Real-time inference: the M/G/c replica count for the p99 SLO at each
    hour's request rate, following the profile (with the scale-up lag) where the side of the
    platform it is submitted through autoscales (a Deployment in a Slurm-on-Kubernetes pool
    does) and holding the peak where it does not, plus one node's worth of spare replicas with
    ``headroom = "n+1"``. Multi-node training runs longer where placement is not
    topology-aware. (Checkpoint-restart time lost where services preempt training is counted
    hour by hour in the sharing rows, not here.)

    Raises ValueError when the SLO cannot be met on this GPU at any size.
    """
    shape = _profile(w, catalog)
    ratio = _speed_ratio(w, gpu, catalog)
    util = pool_platform.utilization[w.kind]
    part = share_pct / 100.0
    if isinstance(w, RealtimeWorkload):
        need = _realtime_gpus(
            w.peak_requests_per_second * part,
            w.gpu_seconds_per_request * ratio,
            w.p99_latency_ms / 1000.0,
            w.concurrency_per_gpu,
            tuple(shape.tolist()),
            pool_platform.scale_up_lag_minutes / 60.0
            if pool_platform.supports("autoscaling", w.interface) == "native"
            else None,
            w.service_time_cv,
        )
        if w.headroom == "n+1":
            need = need + np.where(need > 0, gpu.gpus_per_node, 0)
        return need / util
    if isinstance(w, ExperimentationWorkload):
        seats = _session_seats(
            tuple((w.concurrent_users * part * shape).tolist()),
            w.mean_session_hours,
            w.max_queue_wait_hours,
        )
        return np.asarray(seats * w.gpus_per_user / util, dtype=float)
    stretch = job_stretch(w, pool_platform, gpu, catalog)
    busy = busy_gpus(w, stretch, catalog) * part
    hours = w.mean_job_hours * stretch
    if isinstance(w, TrainingWorkload):
        job = queued_class(w, stretch, catalog, share_pct)
        queue = _slo_gpus(job, w.max_queue_wait_hours, gpu.gpus_per_node)
        return np.maximum(busy / util, queue)
    deadline = _deadline_gpus(tuple(busy.tolist()), w.max_completion_hours, hours)
    return np.full(busy.shape, deadline / util)


def realtime_rates(w: RealtimeWorkload, platform: PlatformKind, catalog: Catalog) -> np.ndarray:
    """Requests per second to provision for in each hour: the profile, or its peak without autoscaling.

    Where the side of the platform it is submitted through autoscales, each hour must cover the
    highest rate within the scale-up lag (:func:`cluster_decide.demand.queueing.autoscaled_rates`).
    """
    rates = w.peak_requests_per_second * _profile(w, catalog)
    if platform.supports("autoscaling", w.interface) != "native":
        return np.full_like(rates, rates.max())
    return autoscaled_rates(rates, platform.scale_up_lag_minutes / 60.0)


@lru_cache(maxsize=4096)
def _session_seats(
    sessions: tuple[float, ...], session_hours: float, max_wait: float
) -> np.ndarray:
    levels = {a: min_servers_for_mean_wait(a, session_hours, max_wait) for a in set(sessions)}
    out = np.array([levels[a] for a in sessions], dtype=float)
    out.setflags(write=False)
    return out


PIECE_SIZED = ("realtime_inference", "experimentation")
"""Kinds whose need is a queue sized for the traffic share itself, so a piece is not linear."""


def piece_line(
    w: Workload, platform: PlatformKind, gpu: GpuType, catalog: Catalog, full: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(slope, fixed)`` with ``s * slope + fixed >= 100 * need(s)`` for every share ``s``.

    ``need(s)`` is the piece's own requirement (tenths of a GPU) sized by its queue for ``s``
    percent of the traffic; ``full = need(100)``. The slope is the smallest secant slope to the
    whole class, so the line is exact for the whole class and never under the need of a piece:
    a split service is sized for each piece's own traffic, in a model that stays linear.

    Kept per everything ``gpu_demand`` reads (the class, the GPU, the platform's utilization
    and scale-up lag, the profile and the speed ratio): a slider that moves other classes
    prepares the same lines again at every step (99 queue sizings each, a tenth of a solve).
    """
    lag = (
        platform.scale_up_lag_minutes
        if platform.supports("autoscaling", w.interface) == "native"
        else None
    )
    key = (
        w,
        gpu,
        platform.utilization[w.kind],
        lag,
        tuple(_profile(w, catalog).tolist()),
        _speed_ratio(w, gpu, catalog),
    )
    line = _PIECE_LINES.get(key)
    if line is None:
        line = _piece_line(w, platform, gpu, catalog, full)
        if len(_PIECE_LINES) >= PIECE_LINES_KEPT:
            _PIECE_LINES.clear()
        _PIECE_LINES[key] = line
    return line


PIECE_LINES_KEPT = 4096
"""Piece lines kept for the next :func:`prepare` (about 3 KB each)."""
_PIECE_LINES: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}


def _piece_line(
    w: Workload, platform: PlatformKind, gpu: GpuType, catalog: Catalog, full: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    pieces = np.stack(
        [
            np.ceil(gpu_demand(w, platform, gpu, catalog, s) * DEMAND_UNITS_PER_GPU - 1e-9)
            for s in range(1, 100)
        ]
    ).astype(np.int64)
    shares = np.arange(1, 100)[:, None]
    secant = (100 * full[None, :] - 100 * pieces) / (100 - shares)
    slope = np.maximum(np.floor(secant.min(axis=0)), 0).astype(np.int64)
    fixed = np.maximum(100 * full - 100 * slope, 0).astype(np.int64)
    slope.setflags(write=False)
    fixed.setflags(write=False)
    return slope, fixed


def job_stretch(w: Workload, platform: PlatformKind, gpu: GpuType, catalog: Catalog) -> float:
    """How much longer a batch job runs here than on its reference GPU, on a neutral platform.

    The GPU's relative speed, times ``1 + topology_slowdown`` for multi-node jobs where
    placement is not topology-aware. Work lost when services preempt training is not a flat
    stretch: only preemptible training is pushed out, and it pays per GPU pushed out
    (:func:`pushed_out`, ``ModelData.preempt_loss_steps``).
    """
    stretch = _speed_ratio(w, gpu, catalog)
    if (
        getattr(w, "gpus_per_job", 1) > gpu.gpus_per_node
        and platform.supports("topology_aware") != "native"
    ):
        stretch *= 1.0 + platform.topology_slowdown
    return stretch


def busy_gpus(
    w: TrainingWorkload | DeadlineWorkload, stretch: float, catalog: Catalog
) -> np.ndarray:
    """GPUs a batch workload keeps busy in each hour: GPU-hours per month / 730, profile-shaped."""
    shape = _profile(w, catalog)
    return np.asarray(
        w.gpu_hours_per_month / HOURS_PER_MONTH * stretch * shape / shape.mean(), dtype=float
    )


def batch_class(
    w: TrainingWorkload | DeadlineWorkload, stretch: float, share_pct: int = 100
) -> BatchClass:
    """The job stream of (a share of) a batch workload whose jobs run ``stretch`` times longer.

    Jobs arrive at ``gpu_hours / 730 / (gang × hours)`` an hour (the stretch does not change the
    rate) and each holds ``gpus_per_job`` GPUs for ``mean_job_hours × stretch``.
    """
    rate = (
        w.gpu_hours_per_month
        * share_pct
        / 100.0
        / HOURS_PER_MONTH
        / (w.gpus_per_job * w.mean_job_hours)
    )
    arrival_scv = w.arrival_scv if isinstance(w, TrainingWorkload) else 1.0
    return BatchClass(rate, w.gpus_per_job, w.mean_job_hours * stretch, w.duration_scv, arrival_scv)


def queued_class(
    w: TrainingWorkload | DeadlineWorkload,
    stretch: float,
    catalog: Catalog,
    share_pct: int = 100,
    seen_by: np.ndarray | None = None,
) -> BatchClass:
    """:func:`batch_class` as a stationary queue formula must see it: its rate as arrivals meet it.

    A class that submits in business hours loads its pool more, when its jobs arrive, than its
    weekly average says; the rate is scaled by
    :func:`cluster_decide.demand.queueing.arrival_load_factor` (1 for a flat profile), as met by
    arrivals shaped by ``seen_by`` (the class's own profile by default). The simulator replays
    the unscaled stream with its profile.
    """
    job = batch_class(w, stretch, share_pct)
    shape = _profile(w, catalog)
    factor = arrival_load_factor(
        shape if seen_by is None else seen_by, shape, job.mean_duration, job.duration_scv
    )
    return replace(job, arrival_rate=job.arrival_rate * factor)


@lru_cache(maxsize=4096)
def _slo_gpus(job: BatchClass, max_wait: float, gpn: int) -> float:
    """Smallest pool (GPUs) in which this job stream alone waits at most ``max_wait`` on average."""
    return float(min_gpus_for_wait([job], max_wait, gpn))


@lru_cache(maxsize=4096)
def _deadline_gpus(work: tuple[float, ...], max_completion: float, hours: float) -> float:
    if max_completion < hours:
        raise ValueError(
            f"max_completion_hours {max_completion:g} is shorter than a job's run time ({hours:.1f} h on this GPU)"
        )
    # A job must start a run time before its deadline: the work's window is what remains.
    window = max(1.0, max_completion - hours)
    return deadline_gpus(np.zeros(len(work)), np.asarray(work), window)


@lru_cache(maxsize=4096)
def _realtime_gpus(
    peak_rps: float,
    service_s: float,
    target_s: float,
    concurrency: int,
    shape: tuple[float, ...],
    lag_hours: float | None,
    service_cv: float = 1.0,
) -> np.ndarray:
    rates = peak_rps * np.asarray(shape)
    if lag_hours is None:
        rates = np.full_like(rates, rates.max())
    else:
        rates = autoscaled_rates(rates, lag_hours)
    levels = {
        r: min_gpus_for_latency(r, service_s, target_s, 0.99, concurrency, service_cv)
        for r in set(rates.tolist())
    }
    out = np.array([levels[r] for r in rates.tolist()], dtype=float)
    out.setflags(write=False)
    return out


def _held(scn: Scenario, w: Workload, pool: Pool) -> tuple[str, str]:
    """Why ``hold`` (``[current]``'s or the workload's own) keeps a workload out of this pool."""
    current = scn.current
    cur = current.workloads.get(w.name) if current is not None else None
    if current is None or cur is None or not (cur.hold or current.hold):
        return "", ""
    if FAMILY[pool.platform] != FAMILY[cur.platform]:
        return f"it is held on {PLATFORM_WORDS[cur.platform]}, where it runs today", "policy"
    if cur.cluster is not None and pool.cluster != cur.cluster:
        return f"it is held on the {cur.cluster} cluster, where it runs today", "policy"
    return "", ""


def _blocked(w: Workload, pool: Pool, platform: PlatformKind, gpu: GpuType) -> tuple[str, str]:
    """Why a workload may not use this pool and GPU type, and the constraint family that says so."""
    if w.platforms is not None and pool.platform not in w.platforms:
        return f"its policy allows only {', '.join(w.platforms)}", "policy"
    missing = [
        CAPABILITY_WORDS[c] for c in w.requires if platform.supports(c, w.interface) != "native"
    ]
    if missing:
        needs = " and ".join(
            [", ".join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing
        )
        return (
            f"{w.name} requires {needs}, which {PLATFORM_WORDS[pool.platform]} lacks natively",
            "capability",
        )
    gang = getattr(w, "gpus_per_job", 1)
    if gang > gpu.gpus_per_node and platform.supports("gang_scheduling") != "native":
        return (
            f"its {gang}-GPU jobs span nodes and {PLATFORM_WORDS[pool.platform]} cannot start all "
            "their pods together (a partly placed job holds GPUs idle)",
            "gang_fit",
        )
    limit = pool.node_limit(gpu.name)
    if limit is not None and gang > limit * gpu.gpus_per_node:
        nodes = f"{limit} node" + ("s" if limit != 1 else "")
        return f"its {gang}-GPU jobs do not fit in {nodes}", "gang_fit"
    return "", ""


def prepare(scn: Scenario) -> ModelData:
    """Turn a scenario into the integer tables the model and the evaluator share."""
    check_stopped()
    cat = scn.catalog
    # Leased clusters' markets, over every GPU type a workload may use (a pool holds no other).
    cluster_markets = _cluster_markets(scn, sorted({g for w in scn.workloads for g in w.gpu_types}))
    pools = _pools(scn, cluster_markets)
    used = tuple(sorted({g for p in pools for g in p.gpu_types}))
    horizon = scn.procurement.horizon_months
    costs = cat.costs
    loaded = {s: scn.loaded_cost_usd_per_year(s) for s in SKILLS}
    friction_usd = costs.friction_fte_per_class * loaded["kubernetes"] / 12.0

    markets = resolve_markets(scn, used)
    # A listed cluster of today stands at a provider the scenario does not name: its nodes are
    # priced by every seller of the allowed classes, whichever companies new capacity comes from.
    today_markets: dict[str, Market] = {}
    if scn.procurement.providers is not None and scn.current is not None:
        held = {p.gpu_today for p in pools if p.gpu_today}
        today_markets = resolve_markets(scn, sorted(held), any_seller=True)
    today_node_cents = {
        g: round(m.node_usd_per_month * 100)
        for g, m in today_markets.items()
        if m.baseline is not None and m.baseline != markets[g].baseline
    }
    # A cluster that names its provider: its own nodes at that company's price.
    cluster_node_cents = {
        c.name: round(cluster_markets[c.name][c.gpu_type].node_usd_per_month * 100)
        for c in (scn.current.clusters if scn.current is not None else ())
        if c.gpu_type in cluster_markets.get(c.name, {})
    }
    gpn, node_cents, burst_cents = {}, {}, {}
    for g in used:
        gpn[g] = cat.gpus[g].gpus_per_node
        node_cents[g] = round(markets[g].node_usd_per_month * 100) if markets[g].baseline else 0
        burst_cents[g] = _burst_cents(markets[g])

    base, addon, per_node = {}, {}, {}
    for p in pools:
        plat = cat.platforms[p.platform]
        for s in SKILLS:
            base[(p.name, s)] = round(plat.fte(s, "base") * MILLI)
            addon[(p.name, s)] = round((plat.fte(s, "addon") + plat.fte(s, "integration")) * MILLI)
            per_node[(p.name, s)] = round(plat.fte(s, "per_100_nodes") * MILLI / 100.0)

    combos: dict[tuple[str, str, str], Combo] = {}
    unplaceable: dict[str, str] = {}
    for w in scn.workloads:
        slo_errors = []
        for p in pools:
            plat = cat.platforms[p.platform]
            gap_usd = sum(
                cat.capability_gaps_usd[c]
                * {"native": 0.0, "partial": 0.5, "none": 1.0}[plat.supports(c, w.interface)]
                for c in w.prefers
            )
            mismatch = plat.interface not in ("both", w.interface)
            for g in w.gpu_types:
                if g not in p.gpu_types:
                    continue
                gpu = cat.gpus[g]
                reason, family = _blocked(w, p, plat, gpu)
                if not reason:
                    reason, family = _held(scn, w, p)
                sold = today_markets.get(g, markets[g]) if g == p.gpu_today else markets[g]
                sold = cluster_markets.get(p.cluster, {}).get(g, sold)
                if p.owned and sold.bought is not None:
                    sold = sold.bought
                if not reason and sold.baseline is None and not p.owns(g):
                    reason = f"no allowed {_sellers(scn)} sells {g} for a pool's baseline nodes"
                    family = "policy"
                demand = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
                if not reason:
                    try:
                        need = gpu_demand(w, plat, gpu, cat)
                        demand = np.ceil(need * DEMAND_UNITS_PER_GPU - 1e-9).astype(np.int64)
                    except ValueError as exc:
                        reason, family = f"its SLO cannot be met on {g}: {exc}", "slo"
                        slo_errors.append(str(exc))
                demand.setflags(write=False)
                slope = fixed = None
                if not reason and w.is_divisible and w.kind in PIECE_SIZED:
                    slope, fixed = piece_line(w, plat, gpu, cat, demand)
                combos[(w.name, p.name, g)] = Combo(
                    workload=w.name,
                    pool=p.name,
                    gpu_type=g,
                    demand=demand,
                    gang_gpus=int(getattr(w, "gpus_per_job", getattr(w, "gpus_per_user", 1))),
                    blocked=reason,
                    blocked_family=family,
                    gap_cents_per_pct=round(gap_usd),
                    friction_cents_per_pct=round(friction_usd) if mismatch else 0,
                    slope=slope,
                    fixed=fixed,
                )
        if not any(c.workload == w.name and not c.blocked for c in combos.values()):
            reasons = sorted({c.blocked for c in combos.values() if c.workload == w.name})
            unplaceable[w.name] = (
                "; ".join(reasons) or "none of its GPU types is in a candidate pool"
            )

    avail = {s: round(getattr(scn.team, s).fte * MILLI) for s in SKILLS}
    budget = scn.policy.budget_usd_per_month
    listed = {c.name: c.managed for c in scn.current.clusters} if scn.current else {}
    existing: dict[str, bool | None] = {
        p.name: listed.get(p.cluster or p.name) for p in pools if p.existing
    }
    addons = {p.name: ADDONS[p.platform] for p in pools if p.adds_on}
    # New pools whose every GPU type is rented stand in a cloud: they may run managed.
    rented = frozenset(
        p.name
        for p in pools
        if not p.existing
        and all(
            (offer := markets[g].baseline) is not None and offer.term != "owned"
            for g in p.gpu_types
        )
    )
    people = prepare_people(
        scn, tuple((p.name, p.platform, p.max_nodes) for p in pools), existing, addons, rented
    )
    owned_cents = {
        (p.name, p.gpu_today): _running_cents(scn, p.gpu_today) for p in pools if p.owned
    }
    owned_cents |= {
        (p.name, p.gpu_today): today_node_cents[p.gpu_today]
        for p in pools
        if not p.owned and p.gpu_today in today_node_cents
    }
    owned_cents |= {
        (p.name, p.gpu_today): cluster_node_cents[p.cluster]
        for p in pools
        if p.cluster in cluster_node_cents
    }
    leases = _leases(scn, node_cents | today_node_cents, cluster_node_cents)
    owned_cents |= {
        (p.name, lease.gpu_type): lease.node_after_cents
        for lease in leases
        for p in pools
        if p.cluster == lease.pool
    }
    flexible = _flexible(scn, pools, combos)
    pools = _lending(pools, flexible)
    spot_cents = _spot_cents(scn, pools, combos, markets, cluster_markets)
    spot_pcts = _spot_pcts(scn, pools, combos, spot_cents)
    return ModelData(
        scenario=scn,
        workloads=tuple(scn.workloads),
        pools=pools,
        gpu_types=used,
        combos=combos,
        gpus_per_node=gpn,
        node_cents=node_cents,
        burst_cents=burst_cents,
        base_milli=base,
        addon_milli=addon,
        per_node_milli=per_node,
        staff_cents_per_milli={s: round(loaded[s] / 12.0 / MILLI * 100) for s in SKILLS},
        available_milli=avail,
        max_hires=scn.hiring.max_fte if scn.hiring.allowed else 0,
        hire_cents=round(scn.hire_one_time_cost_usd / horizon * 100),
        split_cents=round(costs.split_fte_per_extra_placement * loaded["kubernetes"] / 12.0 * 100),
        budget_cents=None if budget is None else math.floor(budget * 100),
        unplaceable=unplaceable,
        markets=markets,
        spot_cents={k: v for k, v in spot_cents.items() if spot_pcts[k]},
        spot_pcts={k: v for k, v in spot_pcts.items() if v},
        flexible=flexible,
        preempt_loss_steps=round(
            STEPS * (costs.checkpoint_interval_hours / 2.0 + costs.preempt_restart_hours)
        ),
        spot_cap_pct=round(100 * _max_spot_share(scn)),
        burst_cap_units={
            g: m.burst_cap_gpus * DEMAND_UNITS_PER_GPU
            for g, m in markets.items()
            if m.burst_cap_gpus is not None
        },
        people=people,
        pool_node_cents=owned_cents,
        leases=leases,
        today_markets=today_markets,
        cluster_markets=cluster_markets,
    )


def _burst_cents(market: Market) -> int:
    """The market's on-demand price, cents per tenth of a GPU for one hour of each week of a month.

    0 where it sells none: no pool bursts there (``ModelData.bursts``).
    """
    burst = market.burst
    return round(
        (burst.usd_per_gpu_hour if burst else 0.0) * WEEKS_PER_MONTH * 100 / DEMAND_UNITS_PER_GPU
    )


def _sellers(scn: Scenario) -> str:
    """Who may sell a pool its nodes, in words for a reason: the classes, or the companies."""
    return "provider class" if scn.procurement.providers is None else "provider"


def _leases(
    scn: Scenario, node_cents: Mapping[str, int], cluster_node_cents: Mapping[str, int]
) -> tuple[Lease, ...]:
    """Today's leased clusters whose lease runs into the horizon (``leased_until`` given).

    A lease is paid whether or not the plan keeps the cluster (even where policy now rules its
    platform out); a leased cluster without an end date is a rolling lease the plan may drop.
    A node costs its GPU type's price (``node_cents``), or its named provider's
    (``cluster_node_cents``, by cluster).
    """
    current = scn.current
    if current is None or current.as_of is None:
        return ()
    horizon = scn.procurement.horizon_months
    out = []
    for c in current.clusters:
        if c.ownership != "leased" or c.leased_until is None:
            continue
        months = lease_months(current.as_of, c.leased_until, horizon)
        if months <= 0:
            continue
        price = cluster_node_cents.get(c.name, node_cents.get(c.gpu_type))
        if price is None:
            usd = resolve_markets(scn, [c.gpu_type], any_seller=True)[c.gpu_type].node_usd_per_month
            price = round(usd * 100) if math.isfinite(usd) else 0
        out.append(Lease(c.name, c.gpu_type, c.nodes, months, horizon, price))
    return tuple(out)


def _max_spot_share(scn: Scenario) -> float:
    """The scenario's cap on how much of a pool's GPU-hours may run on spot (catalog default)."""
    share = scn.procurement.max_spot_share
    return share if share is not None else scn.catalog.costs.max_spot_share


def _spot_cents(
    scn: Scenario,
    pools: tuple[Pool, ...],
    combos: Mapping[tuple[str, str, str], Combo],
    markets: Mapping[str, Market],
    cluster_markets: Mapping[str, Mapping[str, Market]],
) -> dict[tuple[str, str, str], int]:
    """Cents per month for each percent of a workload run on spot, where it may.

    Spot is open to interruptible classes in pools whose platform adds nodes
    (``PlatformKind.adds_nodes``: a reclaimed node is replaced without a person), when a spot
    offer of the GPU type holds the class's jobs (``Market.spot_for``: an instance as large as a
    job, whole nodes on a fabric for a multi-node gang) and the class's SLO can be met. The
    charge is the class's own hourly need at the spot price, times 1 + the interruption overhead
    (:func:`cluster_decide.inputs.market.spot_overhead`, growing with the nodes a job spans).
    A leased cluster of today buys spot where it rents its nodes (``cluster_markets``).
    """
    if not scn.procurement.spot_allowed:
        return {}
    cat = scn.catalog
    elastic = {p.name for p in pools if cat.platforms[p.platform].adds_nodes}
    cluster_of = {p.name: p.cluster for p in pools}
    out = {}
    for key, c in combos.items():
        w = scn.workload(c.workload)
        if c.blocked or c.pool not in elastic or not w.is_interruptible:
            continue
        gpn = cat.gpus[c.gpu_type].gpus_per_node
        nodes = -(-c.gang_gpus // gpn)
        market = cluster_markets.get(cluster_of[c.pool], {}).get(c.gpu_type, markets[c.gpu_type])
        offer = market.spot_for(c.gang_gpus, gpn)
        if offer is None:
            continue
        gpu_hours = float(c.demand.sum()) / DEMAND_UNITS_PER_GPU * WEEKS_PER_MONTH
        usd = gpu_hours * offer.usd_per_gpu_hour * (1.0 + spot_overhead(cat.costs, nodes))
        out[key] = max(1, round(usd))  # cents per percent = dollars per 100 percent
    return out


def spot_wait_hours(
    w: TrainingWorkload | DeadlineWorkload,
    combo: Combo,
    platform: PlatformKind,
    gpu: GpuType,
    catalog: Catalog,
    pct: int,
) -> float:
    """Mean queue wait (hours) of ``pct`` percent of batch class ``w`` run on spot in ``combo``.

    The share runs alone on spot nodes that follow its own hourly need (sized, like any pool,
    for its SLO), counted in whole nodes as the pools are, in first-come order.
    """
    gpn = gpu.gpus_per_node
    gpus = float(combo.demand.max()) / DEMAND_UNITS_PER_GPU * pct / 100
    usable = max(gpn, math.floor(gpus / gpn) * gpn)
    cls = queued_class(w, job_stretch(w, platform, gpu, catalog), catalog, pct)
    return batch_waits(usable, [cls], gpn, order="fifo")[0].mean


def _spot_pcts(
    scn: Scenario,
    pools: tuple[Pool, ...],
    combos: Mapping[tuple[str, str, str], Combo],
    spot_cents: Mapping[tuple[str, str, str], int],
) -> dict[tuple[str, str, str], tuple[int, ...]]:
    """The spot percents each combination may take: those whose spot nodes meet its target.

    A divisible class moves in steps of ``100 / SPOT_STEPS`` percent up to the cap, an
    indivisible one is all on spot or not at all. A training share on spot waits on its own
    spot nodes (:func:`spot_wait_hours`) whatever the rest of the plan is, so a percent whose
    wait misses the class's target misses it in every plan: leaving it out removes no plan
    that meets its targets, and spares the solve loop a round of cuts for each such percent
    (each round's cut named one percent, and the next plan took the step beside it). A
    deadline class is held to its completion window, which its spot share does not lengthen:
    every step.
    """
    cat = scn.catalog
    platforms = {p.name: cat.platforms[p.platform] for p in pools}
    cap = round(100 * _max_spot_share(scn))
    step = 100 // SPOT_STEPS
    out = {}
    for key in spot_cents:
        w = scn.workload(key[0])
        levels = range(step, cap + 1, step) if w.is_divisible else ([100] if cap >= 100 else [])
        if isinstance(w, TrainingWorkload):
            levels = [
                pct
                for pct in levels
                if spot_wait_hours(w, combos[key], platforms[key[1]], cat.gpus[key[2]], cat, pct)
                <= w.slo * (1 + 1e-9)
            ]
        out[key] = tuple(levels)
    return out


def _running_cents(scn: Scenario, gpu_type: str) -> int:
    """Cents a month to run one owned node whose capex is already spent: support, power, space.

    The same running costs a newly bought node pays (:func:`cluster_decide.inputs.market.onprem_cost`),
    without its capital charge: today's owned clusters are paid for.
    """
    cat, proc = scn.catalog, scn.procurement
    scale = proc.gpu_price_scale * (proc.gpu_price_scale_by_type or {}).get(gpu_type, 1.0)
    cost = onprem_cost(
        cat.gpus[gpu_type],
        cat.onprem.get(gpu_type) or OnPremNode(0.0, 0.0),
        cat.costs,
        cat.resale,
        proc.horizon_months,
        0.0,
        scale,
    )
    return round(cost.running_usd_per_month * 100)


def pushed_out(demand: np.ndarray) -> np.ndarray:
    """GPUs (tenths) a placement takes back at the start of each hour: its rise since the last.

    The week repeats, so hour 0 follows hour 167. Where preemptible work fills the troughs,
    each of these GPUs was running it and loses ``preempt_loss_steps`` of work.
    """
    d = np.asarray(demand, dtype=np.int64)
    return np.maximum(d - np.roll(d, 1), 0)


def _flexible(
    scn: Scenario, pools: tuple[Pool, ...], combos: Mapping[tuple[str, str, str], Combo]
) -> dict[tuple[str, str, str], int]:
    """Placements that share their pool hour by hour, with the fluid wait they may add.

    Preemptible (``interruptible``, checkpointed) training in a pool whose platform shares by
    the hour (:attr:`PlatformKind.shares_by_hour`) and that does not rent burst capacity for
    autoscaled services (where their peaks are rented by the hour there is no trough to fill: a
    Kubernetes pool with a batch add-on). A Slurm pool that adds nodes lends its troughs where
    it has such training, and then rents nothing (:func:`_lending`). Its wait target is at least one mean job
    long (work pushed out at a service's peak waits for the
    trough). The class is sized as if alone (``demand``, which meets its wait target at steady
    state); what it may add is the target less the steady-state wait at that size, in hundredths
    of an hour, possibly none. Until 2026-12-02 a class also needed that room to be a job long:
    the size alone moves a gang slot at a time, so the room, and whether the class could share,
    were saw-toothed in demand (train-and-serve cost $425k at ×1.25 training, $401k at ×1.5).
    """
    cat = scn.catalog
    sharing = {
        p.name
        for p in pools
        if cat.platforms[p.platform].shares_by_hour
        and not (p.bursts and cat.platforms[p.platform].autoscales)
    }
    out = {}
    for key, c in combos.items():
        w = scn.workload(c.workload)
        if c.blocked or c.pool not in sharing or not isinstance(w, TrainingWorkload):
            continue
        if not w.is_interruptible or w.max_queue_wait_hours < w.mean_job_hours:
            continue
        gpu = cat.gpus[c.gpu_type]
        gpn = gpu.gpus_per_node
        stretch = job_stretch(w, cat.platforms[_pool(pools, c.pool).platform], gpu, cat)
        size = max(gpn, int(float(c.demand.max()) / DEMAND_UNITS_PER_GPU // gpn) * gpn)
        steady = batch_waits(size, [batch_class(w, stretch)], gpn)[0].mean
        out[key] = max(0, math.floor(100 * (w.max_queue_wait_hours - steady)))
    return out


def _lending(
    pools: tuple[Pool, ...], flexible: Mapping[tuple[str, str, str], int]
) -> tuple[Pool, ...]:
    """``pools``, those that lend their troughs to preemptible training renting nothing.

    A pool either rents its peaks by the hour or holds them and fills the hours they leave
    (``docs/model.md``, sharing): the model does not state both at once. A Kubernetes pool with
    a batch add-on rents, and places its training as other work (``_flexible``); a Slurm pool
    with trough-filling candidates keeps its nodes for them, the established use of a
    preemptible partition, and rents where it has none (power saving and cloud nodes).
    """
    lenders = {pool for _w, pool, _g in flexible}
    return tuple(replace(p, bursts=False) if p.name in lenders else p for p in pools)


def _pool(pools: tuple[Pool, ...], name: str) -> Pool:
    return next(p for p in pools if p.name == name)
