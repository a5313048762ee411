"""Build the CP-SAT model: variables, then one function per constraint family, then the objective.

``build_model`` reads like the table of contents of ``docs/model.md``. Every variable and
constraint is named after the data it stands for (``share[llm-pretraining,slurm,H100]``,
``capacity[k8s,H100,t=37]``) so reports can point at the exact row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from cluster_decide.base.constants import HOURS_PER_WEEK, SKILLS
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT, FAMILY
from cluster_decide.model.data import (
    DEMAND_UNITS_PER_GPU,
    MILLI,
    SPOT_STEPS,
    STEPS,
    Combo,
    ModelData,
    Pool,
    pushed_out,
)
from cluster_decide.model.stopping import check_stopped

__all__ = [
    "FAMILIES",
    "LARGE_MODEL_PLACEMENTS",
    "Model",
    "ServiceCut",
    "add_budget",
    "add_burst_cap",
    "add_capability",
    "add_capacity",
    "add_coverage",
    "add_dominance",
    "add_gang_fit",
    "add_linking",
    "add_policy",
    "add_service_levels",
    "add_sharing",
    "add_sharing_hours",
    "add_spot",
    "add_staffing",
    "add_transition",
    "build_model",
    "dominated_pairs",
    "exempt_whole_shares",
    "hour_buckets",
    "reduced_buckets",
]

FAMILIES = (
    "coverage",
    "capability",
    "linking",
    "capacity",
    "gang_fit",
    "staffing",
    "transition",
    "budget",
    "policy",
    "spot",
    "burst_cap",
    "sharing",
    "dominance",
    "service_levels",
)
"""The constraint families, in the order ``build_model`` adds them (service-level cuts last,
added by the solve loop as it finds pools that miss a target)."""

LARGE_MODEL_PLACEMENTS = 400
"""Above this many placement variables a model is large: the solve loop searches it on two
workers, first restricted to each workload's likeliest places, with CP-SAT's presolve; below
it, on one worker without presolve, to a proof (``planning.loop``), and its tie-break settles
every equal-cost choice (``_objective``)."""
UNITS_PER_NODE_GPU = DEMAND_UNITS_PER_GPU_PERCENT
"""Capacity rows compare share (percent) × demand (tenths of a GPU) with GPUs × 1000."""
UNITS_PER_BURST = 100
"""Burst is rented in tenths of a GPU-hour per hour: a fluid approximation of hourly rentals."""


@dataclass
class Model:
    """A built CP-SAT model with its variables keyed by the data's own names."""

    data: ModelData
    cp: cp_model.CpModel
    open: dict[str, cp_model.IntVar] = field(default_factory=dict)
    place: dict[tuple[str, str, str], cp_model.IntVar] = field(default_factory=dict)
    share: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    nodes: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    node_ub: dict[tuple[str, str], int] = field(default_factory=dict)
    grown: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    """Nodes a cluster of today grows by (priced at ``ModelData.added_node_cost``)."""
    burst: dict[tuple[str, str, int], cp_model.IntVar] = field(default_factory=dict)
    burst_weight: dict[tuple[str, str, int], int] = field(default_factory=dict)
    burst_ub: dict[tuple[str, str, int], int] = field(default_factory=dict)
    """Upper bound of each burst variable: all the work its hour can place in the pool."""
    burst_bucket: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    """For each hour of a bursting pool and GPU type, the hour whose capacity row (and burst
    variable) stands for it (``hour_buckets``): what ``add_burst_cap`` sums hour by hour."""
    hires: dict[str, cp_model.IntVar] = field(default_factory=dict)
    exact_sharing: frozenset[tuple[str, str]] = frozenset()
    """Pools and GPU types whose trough-filling training has the hour-by-hour rows; the others
    have the weekly row only (a relaxation the solve loop tightens where a plan needs it, see
    ``add_sharing_hours``)."""
    backlog: dict[tuple[str, str, int], cp_model.IntVar] = field(default_factory=dict)
    """Preemptible training queued at the end of each hour in a sharing pool (hundredths of
    capacity units: percent × tenths of a GPU)."""
    spot: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    """Percent of a workload's share here that runs on spot (0 where spot is not open)."""
    spot_on: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    """Whether any of it does (for indivisible classes: all of it)."""
    spot_tenths: dict[tuple[str, str, str], cp_model.IntVar] = field(default_factory=dict)
    """For divisible classes: spot in steps of 10% of the workload (a plan says "30% on spot";
    finer steps only slow the search)."""
    managed: dict[str, cp_model.IntVar] = field(default_factory=dict)
    """Pool runs as a managed service (only pools with a managed option)."""
    retrain: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    """People of one skill trained in the other, (from, to)."""
    shifted_milli: dict[tuple[str, str], cp_model.IntVar] = field(default_factory=dict)
    """Time of retrained people spent on the other skill, thousandths of an FTE."""
    moved: dict[str, cp_model.IntVar] = field(default_factory=dict)
    """Workload leaves the platform it runs on today."""
    retooled: dict[str, cp_model.IntVar] = field(default_factory=dict)
    """Workload's users must change tools (its new platform lacks their interface)."""
    relocated: dict[str, cp_model.IntVar] = field(default_factory=dict)
    """Workload leaves its cluster of today for another of the same platform family."""
    people_cents: Any = 0
    staff_slack: dict[str, cp_model.IntVar] = field(default_factory=dict)
    budget_slack: cp_model.IntVar | None = None
    required_milli: dict[str, Any] = field(default_factory=dict)
    cash_cents: Any = 0
    cost_cents: Any = 0
    tie_break: Any = 0
    tie_break_max: int = 0
    """The largest value ``tie_break`` can take (see ``_objective``)."""
    families: dict[str, int] = field(default_factory=dict)
    service_rows: dict[ServiceCut, list[cp_model.Constraint]] = field(default_factory=dict)
    """The rows each service-level cut was stated as (see ``exempt_whole_shares``)."""
    pool_verdicts: dict[tuple[Any, ...], bool] = field(default_factory=dict)
    """The solve loop's checks of one pool's service levels so far, by what each one read
    (``planning.loop``): the same question recurs hundreds of times while it builds cuts."""

    @property
    def large(self) -> bool:
        """More than :data:`LARGE_MODEL_PLACEMENTS` placements.

        The one test of size that the tie-break, the solve loop's workers and restricted
        search, and CP-SAT's presolve all read.
        """
        return len(self.place) > LARGE_MODEL_PLACEMENTS

    def _count(self, family: str) -> None:
        self.families[family] = self.families.get(family, 0) + 1


def hour_buckets(demands: np.ndarray) -> np.ndarray:
    """For each of the 168 hours, the first hour whose demands equal its own in every row.

    ``demands`` is rows × 168 integers. Identical hours give identical capacity rows, so the
    first of them stands for them all. Each hour is viewed as one opaque value of its bytes, so
    ``np.unique`` compares whole hours at once (``np.unique(axis=0)`` sorts structured rows
    field by field, 10× slower; a dict over the bytes, 2× slower).
    """
    hours = np.ascontiguousarray(demands.T)
    whole = hours.view(np.dtype((np.void, hours.dtype.itemsize * hours.shape[1]))).ravel()
    _values, first, inverse = np.unique(whole, return_index=True, return_inverse=True)
    return np.asarray(first[np.ravel(inverse)])


def reduced_buckets(
    demands: np.ndarray, bursts: bool, buckets: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """The hours whose capacity rows are needed, each with how many hours it stands for.

    Identical hours give identical rows, so one row with a multiplicity stands for them all
    (exact). Without burst capacity only the largest demand matters, so an hour whose demand is
    no larger than another's in every workload is dropped too (also exact: its row is implied).
    ``demands`` is workloads × 168; ``buckets`` is ``hour_buckets(demands)`` where the caller
    has it already. Returns ``(hour, multiplicity)`` in hour order.
    """
    if demands.size == 0:
        return []
    if buckets is None:
        buckets = hour_buckets(demands)
    first, counts = np.unique(buckets, return_counts=True)
    keep = np.ones(len(first), dtype=bool)
    if not bursts:
        # Hour i is implied by a distinct hour j with at least its demand in every workload.
        cols = np.ascontiguousarray(demands.T)[first]
        covers = (cols[None, :, :] >= cols[:, None, :]).all(axis=2)
        np.fill_diagonal(covers, False)
        keep = ~covers.any(axis=1)
    return [(int(first[i]), int(counts[i])) for i in np.flatnonzero(keep)]


def _variables(m: Model) -> None:
    """Pools open, placement indicators and shares, nodes, burst GPUs and hires."""
    d, cp = m.data, m.cp
    allowed = d.allowed()
    for p in d.pools:
        m.open[p.name] = cp.new_bool_var(f"open[{p.name}]")
    divisible = {w.name: w.is_divisible for w in d.workloads}
    for c in d.combos.values():
        key = (c.workload, c.pool, c.gpu_type)
        z = cp.new_bool_var(f"place[{c.workload},{c.pool},{c.gpu_type}]")
        m.place[key] = z
        if divisible[c.workload]:
            s = cp.new_int_var(0, 100, f"share[{c.workload},{c.pool},{c.gpu_type}]")
            cp.add(s <= 100 * z)
            cp.add(s >= z)
            m.share[key] = s
        else:
            m.share[key] = 100 * z
    peak_by_pg: dict[tuple[str, str], int] = defaultdict(int)
    gang_by_pg: dict[tuple[str, str], int] = defaultdict(int)
    for c in allowed:
        peak_by_pg[(c.pool, c.gpu_type)] += int(c.demand.max())
        gang_by_pg[(c.pool, c.gpu_type)] = max(gang_by_pg[(c.pool, c.gpu_type)], c.gang_gpus)
    for p in d.pools:
        for g in p.gpu_types:
            gpn = d.gpus_per_node[g]
            need = -(-peak_by_pg[(p.name, g)] // (DEMAND_UNITS_PER_GPU * gpn))
            ub = max(need, -(-gang_by_pg[(p.name, g)] // gpn))
            # Room above the summed standalone needs for pooled waits (service-level cuts).
            ub = 2 * ub + 2
            limit = p.node_limit(g)
            if limit is not None:
                ub = min(ub, limit)
            m.nodes[(p.name, g)] = cp.new_int_var(0, ub, f"nodes[{p.name},{g}]")
            m.node_ub[(p.name, g)] = ub
            today = p.nodes_today_of(g)
            if ub > today > 0 and d.added_node_cost(p.name, g) > d.node_cost(p.name, g):
                grown = cp.new_int_var(0, ub - today, f"grown[{p.name},{g}]")
                cp.add(grown >= m.nodes[(p.name, g)] - today)
                m.grown[(p.name, g)] = grown
    people = d.people
    for skill in SKILLS:
        cap = people.max_hires_by_skill[skill] if people is not None else d.max_hires
        m.hires[skill] = cp.new_int_var(0, cap, f"hires[{skill}]")
    for key in d.spot_cents:
        if d.combos[key].blocked:  # a restricted model blocks combinations after the fact
            continue
        label = ",".join(key)
        on = cp.new_bool_var(f"spot_on[{label}]")
        m.spot_on[key] = on
        if divisible[key[0]]:
            # Only the steps whose spot nodes meet the class's target (``ModelData.spot_pcts``).
            steps = [0] + [pct // (100 // SPOT_STEPS) for pct in d.spot_pcts[key]]
            tenths = cp.new_int_var_from_domain(
                cp_model.Domain.from_values(steps), f"spot[{label}]"
            )
            cp.add(tenths <= SPOT_STEPS * on)
            cp.add(tenths >= on)
            m.spot_tenths[key] = tenths
            m.spot[key] = (100 // SPOT_STEPS) * tenths
        else:
            m.spot[key] = 100 * on
    if people is None:
        return
    for p in d.pools:
        if p.name in people.managed:
            m.managed[p.name] = cp.new_bool_var(f"managed[{p.name}]")
    for src, dst in people.retrain_cents:
        n = people.max_retrain(src, d.available_milli[src])
        if n:
            m.retrain[(src, dst)] = cp.new_int_var(0, n, f"retrain[{src}->{dst}]")
            m.shifted_milli[(src, dst)] = cp.new_int_var(
                0, d.available_milli[src], f"shifted[{src}->{dst}]"
            )
    for w, mv in people.moves.items():
        m.moved[w] = cp.new_bool_var(f"moved[{w}]")
        m.retooled[w] = cp.new_bool_var(f"retooled[{w}]")
        if mv.cluster is not None:
            m.relocated[w] = cp.new_bool_var(f"relocated[{w}]")


def add_coverage(m: Model) -> None:
    """Every workload is placed in full: Σ_{p,g} share[w,p,g] = 100 (percent)."""
    by_w: dict[str, list[cp_model.LinearExprT]] = defaultdict(list)
    for (name, _p, _g), s in m.share.items():
        by_w[name].append(s)
    for w in m.data.workloads:
        m.cp.add(cp_model.LinearExpr.sum(by_w[w.name]) == 100).with_name(f"coverage[{w.name}]")
        m._count("coverage")


def add_capability(m: Model) -> None:
    """A required capability the platform lacks natively forbids the pool: place[w,p,g] = 0.

    (Preferred capabilities it lacks cost a penalty in the objective instead.) The per-class
    platform policy and unmeetable SLOs block combinations the same way, under their own family
    names.
    """
    for key, c in m.data.combos.items():
        if c.blocked and c.blocked_family in ("capability", "slo"):
            m.cp.add(m.place[key] == 0).with_name(f"{c.blocked_family}[{','.join(key)}]")
            m._count("capability")


def add_linking(m: Model) -> None:
    """Nothing goes in a closed pool, an open pool hosts something, a cluster of today is one pool.

    A cluster of today runs with its batch add-on or without (``Pool.cluster``), not both.

    place[w,p,g] ≤ open[p];  nodes[p,g] ≤ ub·open[p];  open[p] ≤ Σ_{w,g} place[w,p,g];
    Σ_{p of cluster c} open[p] ≤ 1.
    """
    by_pool: dict[str, list[cp_model.IntVar]] = defaultdict(list)
    for (w, p, g), z in m.place.items():
        m.cp.add(z <= m.open[p]).with_name(f"linking[{w},{p},{g}]")
        by_pool[p].append(z)
    for (p, g), n in m.nodes.items():
        m.cp.add(n <= m.node_ub[(p, g)] * m.open[p]).with_name(f"linking[{p},{g}]")
    for p, o in m.open.items():
        m.cp.add(o <= sum(by_pool[p])).with_name(f"linking[{p}]")
        m._count("linking")
    clusters: dict[str, list[cp_model.IntVar]] = defaultdict(list)
    for pool in m.data.pools:
        if pool.cluster:
            clusters[pool.cluster].append(m.open[pool.name])
    for c, opens in clusters.items():
        if len(opens) > 1:
            m.cp.add(sum(opens) <= 1).with_name(f"linking[cluster {c}]")


def add_capacity(m: Model) -> None:
    """Demand placed fits the pool's GPUs in every hour that can bind.

    Σ_w share[w,p,g]·slope[w,p,g,t] + fixed[w,p,g,t]·place[w,p,g]
        ≤ 1000·gpus_per_node[g]·nodes[p,g] + 100·burst[p,g,t],
    with share in percent, demand and burst in tenths of a GPU (utilization and SLO headroom
    are in the demand already). ``slope = demand`` and ``fixed = 0`` except for split services
    and notebooks, whose pieces are each sized for their own traffic (``Combo.load``). Burst exists only where the platform autoscales and procurement
    allows on-demand GPUs. Identical or dominated hours are merged (see ``reduced_buckets``).
    Preemptible training that fills troughs (``data.flexible``) is not in these rows: it takes
    what is left in each hour (``add_sharing``).

    A pool of several GPU types holds them within its node limit together:
    Σ_g nodes[p,g] ≤ max_nodes[p] (a cluster's room, power and fabric ports are shared by its
    node groups; one type's limit is its variable's bound).
    """
    d = m.data
    for p in d.pools:
        if p.max_nodes is not None and len(p.gpu_types) > 1:
            total = sum(m.nodes[(p.name, g)] for g in p.gpu_types)
            m.cp.add(total <= p.max_nodes).with_name(f"capacity[{p.name},node limit]")
            m._count("capacity")
        for g in p.gpu_types:
            check_stopped()  # the largest family: stale work ends between its pools
            here = [c for c in d.allowed() if c.pool == p.name and c.gpu_type == g]
            combos = [c for c in here if (c.workload, c.pool, c.gpu_type) not in d.flexible]
            if here and not combos:
                continue  # only trough-filling work: add_sharing holds it
            if not combos:
                m.cp.add(m.nodes[(p.name, g)] == 0).with_name(f"capacity[{p.name},{g},unused]")
                continue
            slopes = np.stack([c.slope if c.slope is not None else c.demand for c in combos])
            fixeds = np.stack(
                [c.fixed if c.fixed is not None else np.zeros_like(c.demand) for c in combos]
            )
            n = m.nodes[(p.name, g)]
            gpn = d.gpus_per_node[g]
            # Identical or dominated hours are found on both coefficients of every class.
            matrix = np.vstack([slopes, fixeds])
            buckets = hour_buckets(matrix)
            bursts = d.bursts(p.name, g)
            if bursts:
                m.burst_bucket[(p.name, g)] = buckets
                # Burst never exceeds all the work the hour can place here (whole shares, no
                # spot): renting more only costs. Without presolve (small models) CP-SAT does
                # not find these bounds from the rows itself.
                most = -(-(100 * slopes + fixeds).sum(axis=0) // UNITS_PER_BURST)
            for t, weight in reduced_buckets(matrix, bursts, buckets):
                terms = [
                    (m.share[(c.workload, c.pool, c.gpu_type)], int(v))
                    for c, v in zip(combos, slopes[:, t], strict=True)
                    if v
                ]
                terms += [
                    (m.place[(c.workload, c.pool, c.gpu_type)], int(v))
                    for c, v in zip(combos, fixeds[:, t], strict=True)
                    if v
                ]
                # Spot percent runs on spot nodes: it leaves the pool's own capacity (at the
                # slope, so a piece-sized class keeps its fixed part: never under its need).
                terms += [
                    (m.spot[(c.workload, c.pool, c.gpu_type)], -int(v))
                    for c, v in zip(combos, slopes[:, t], strict=True)
                    if v and (c.workload, c.pool, c.gpu_type) in m.spot
                ]
                if not terms:
                    continue
                placed = cp_model.LinearExpr.weighted_sum(
                    [t_[0] for t_ in terms], [t_[1] for t_ in terms]
                )
                supply = UNITS_PER_NODE_GPU * gpn * n
                if bursts:
                    b = m.cp.new_int_var(0, int(most[t]), f"burst[{p.name},{g},t={t}]")
                    m.burst[(p.name, g, t)] = b
                    m.burst_weight[(p.name, g, t)] = weight
                    m.burst_ub[(p.name, g, t)] = int(most[t])
                    supply = supply + UNITS_PER_BURST * b
                m.cp.add(placed <= supply).with_name(f"capacity[{p.name},{g},t={t}]")
                m._count("capacity")


def add_gang_fit(m: Model) -> None:
    """A class's largest job fits its pool's own nodes, and multi-node work runs on them alone.

    gpus_per_node[g]·nodes[p,g] ≥ gang[w]·place[w,p,g]. Multi-node gangs on platforms that
    cannot start all pods together are blocked here; topology slowdowns are in the demand.

    In a pool that bursts, the classes whose jobs its burst GPUs cannot hold (jobs that span
    nodes, or larger than the on-demand instance: ``ModelData.off_burst``) fit the pool's own
    nodes together, in every hour that can bind:
    Σ_{w off burst} share[w,p,g]·slope[w,p,g,t] + fixed·place − spot·slope
        ≤ 1000·gpus_per_node[g]·nodes[p,g].
    On-demand GPUs come an instance at a time, from whatever the market has that hour (from
    another company's cloud, for a cluster of today), and a multi-node job needs all its nodes
    at once on one fabric: burst capacity holds single-node work that fits its instance only.
    """
    d = m.data
    for key, c in d.combos.items():
        if c.blocked and c.blocked_family == "gang_fit":
            m.cp.add(m.place[key] == 0).with_name(f"gang_fit[{','.join(key)}]")
            m._count("gang_fit")
        elif not c.blocked and c.gang_gpus > 1:
            n = m.nodes[(c.pool, c.gpu_type)]
            on_baseline: cp_model.LinearExprT = m.place[key]
            if key in m.spot and key not in m.spot_tenths:
                on_baseline = m.place[key] - m.spot_on[key]  # indivisible: all on spot, or none
            m.cp.add(d.gpus_per_node[c.gpu_type] * n >= c.gang_gpus * on_baseline).with_name(
                f"gang_fit[{','.join(key)}]"
            )
            m._count("gang_fit")
    _gang_capacity(m)


def _gang_capacity(m: Model) -> None:
    """The rows of ``add_gang_fit`` that keep work too large for them off a pool's burst GPUs."""
    d = m.data
    for p in d.pools:
        for g in p.gpu_types:
            if not d.bursts(p.name, g):
                continue
            gpn = d.gpus_per_node[g]
            combos = [
                c
                for c in d.allowed()
                if c.pool == p.name
                and c.gpu_type == g
                and d.off_burst(p.name, g, c.gang_gpus)
                and (c.workload, c.pool, c.gpu_type) not in d.flexible
            ]
            if not combos:
                continue
            slopes = np.stack([c.slope if c.slope is not None else c.demand for c in combos])
            fixeds = np.stack(
                [c.fixed if c.fixed is not None else np.zeros_like(c.demand) for c in combos]
            )
            supply = UNITS_PER_NODE_GPU * gpn * m.nodes[(p.name, g)]
            for t, _weight in reduced_buckets(np.vstack([slopes, fixeds]), False):
                terms: list[tuple[Any, int]] = []
                for c, v, f in zip(combos, slopes[:, t], fixeds[:, t], strict=True):
                    key = (c.workload, c.pool, c.gpu_type)
                    if v:
                        terms.append((m.share[key], int(v)))
                        if key in m.spot:
                            terms.append((m.spot[key], -int(v)))
                    if f:
                        terms.append((m.place[key], int(f)))
                if not terms:
                    continue
                placed = cp_model.LinearExpr.weighted_sum(
                    [t_[0] for t_ in terms], [t_[1] for t_ in terms]
                )
                m.cp.add(placed <= supply).with_name(f"gang_fit[{p.name},{g},t={t}]")
                m._count("gang_fit")


def add_staffing(m: Model) -> None:
    """Per skill, the operations effort of every open pool fits the staff, hires and retraining.

    Σ_p (base[p,s] + addon[p,s])·open[p] + per_node[p,s]·Σ_g nodes[p,g]
      + Σ_p (managed_base[p,s] − base[p,s] − addon[p,s])·managed[p]
      ≤ available[s] + 1000·hires[s] − shifted[s→t] + shifted[t→s]
    (thousandths of an FTE; a managed pool keeps the self-managed per-node effort). A managed
    pool is a cloud's service, so it holds no owned hardware: nodes[p,g] ≤ ub·(1 − managed[p])
    for GPU types bought outright (``procurement.mode = "cheapest"``), and none rented from a
    company that does not run the platform as a service (``ModelData.managed_bar``; a pool
    managed today keeps its nodes). Hires of all skills
    together stay within ``hiring.max_fte``; a retrained person's time shifts only up to 1000
    per person. Optional slack turns this into a question: how many more FTE?
    """
    d = m.data
    people = d.people
    for name, z in m.managed.items():
        option = people.managed[name] if people is not None else None
        assert option is not None
        m.cp.add(z <= m.open[name]).with_name(f"staffing[managed,{name}]")
        if option.forced:
            m.cp.add(z == m.open[name]).with_name(f"staffing[managed,{name},today]")
        for g in d.pool(name).gpu_types:
            why = d.managed_bar(name, g)
            if why is not None:
                ub = m.node_ub[(name, g)]
                m.cp.add(m.nodes[(name, g)] <= ub - ub * z).with_name(
                    f"staffing[managed,{name},{g},{why}]"
                )
    for (s, t), r in m.retrain.items():
        m.cp.add(m.shifted_milli[(s, t)] <= MILLI * r).with_name(f"staffing[retrain,{s}->{t}]")
    for s in SKILLS:
        terms: list[cp_model.LinearExprT] = []
        for p in d.pools:
            fixed = d.base_milli[(p.name, s)] + d.addon_milli[(p.name, s)]
            if fixed:
                terms.append(fixed * m.open[p.name])
            per = d.per_node_milli[(p.name, s)]
            if per:
                terms.extend(per * m.nodes[(p.name, g)] for g in p.gpu_types)
            if p.name in m.managed and people is not None:
                opt = people.managed[p.name]
                terms.append((opt.base_milli[s] - fixed) * m.managed[p.name])
        required = sum(terms)
        m.required_milli[s] = required
        supply: cp_model.LinearExprT = d.available_milli[s] + MILLI * m.hires[s]
        for (a, b), x in m.shifted_milli.items():
            if a == s:
                supply = supply - x
            if b == s:
                supply = supply + x
        if s in m.staff_slack:
            supply = supply + m.staff_slack[s]
        m.cp.add(required <= supply).with_name(f"staffing[{s}]")
        m._count("staffing")
    if people is not None:
        m.cp.add(sum(m.hires.values()) <= people.max_hires).with_name("staffing[max_fte]")
        m._count("staffing")


def add_transition(m: Model) -> None:
    """A workload placed anywhere but its platform of today is moved; its users may retool.

    moved[w] ≥ place[w,p,g] for every pool p of another platform kind; retooled[w] ≥
    place[w,p,g] where p's platform lacks the interface the workload's users work in;
    relocated[w] ≥ place[w,p,g] for every pool p of the same family but not the cluster it runs
    on today, where ``[current]`` names that cluster.
    """
    d = m.data
    people = d.people
    if people is None:
        return
    for w, mv in people.moves.items():
        interface = next(x.interface for x in d.workloads if x.name == w)
        for (name, p, g), z in m.place.items():
            if name != w or d.combos[(name, p, g)].blocked:
                continue
            plat = d.pool(p).platform
            if FAMILY[plat] != FAMILY[mv.today]:
                m.cp.add(m.moved[w] >= z).with_name(f"transition[{w},{p},{g}]")
                m._count("transition")
                if d.platform(p).interface not in ("both", interface):
                    m.cp.add(m.retooled[w] >= z).with_name(f"transition[{w},{p},{g},retool]")
            elif d.relocates(w, p):
                m.cp.add(m.relocated[w] >= z).with_name(f"transition[{w},{p},{g},cluster]")
                m._count("transition")


def add_budget(m: Model) -> None:
    """The monthly cash spend stays within the budget: cash ≤ budget (when one is set)."""
    if m.data.budget_cents is None:
        return
    limit: cp_model.LinearExprT = m.data.budget_cents
    if m.budget_slack is not None:
        limit = limit + m.budget_slack
    m.cp.add(m.cash_cents <= limit).with_name("budget")
    m._count("budget")


def add_policy(m: Model) -> None:
    """Forced or forbidden platforms per class, a forced archetype, and a limit on pools."""
    d, cp = m.data, m.cp
    for key, c in d.combos.items():
        if c.blocked and c.blocked_family == "policy":
            cp.add(m.place[key] == 0).with_name(f"policy[{','.join(key)}]")
            m._count("policy")
    by_kind: dict[str, list[cp_model.IntVar]] = defaultdict(list)
    for p in d.pools:
        by_kind[p.platform].append(m.open[p.name])
    slurm, k8s, batch, shared = (
        sum(by_kind[k]) for k in ("slurm", "kubernetes", "kubernetes_batch", "shared")
    )
    arch = d.scenario.policy.archetype
    rules: dict[str, list[cp_model.BoundedLinearExpression | bool]] = {
        "slurm_only": [slurm >= 1, k8s == 0, batch == 0, shared == 0],
        "kubernetes_only": [k8s >= 1, slurm == 0, batch == 0, shared == 0],
        "kubernetes_batch": [batch >= 1, slurm == 0, shared == 0],
        "hybrid_separate": [slurm >= 1, k8s + batch >= 1, shared == 0],
        "hybrid_shared": [shared >= 1],
    }
    for i, rule in enumerate(rules.get(arch, [])):
        if isinstance(rule, bool):
            if (
                not rule
            ):  # a sum over no pools compared with a positive bound: the archetype is impossible
                cp.add_bool_or([]).with_name(f"policy[archetype={arch},{i}]")
            continue
        cp.add(rule).with_name(f"policy[archetype={arch},{i}]")
        m._count("policy")
    if d.scenario.policy.max_pools is not None:
        cp.add(sum(m.open.values()) <= d.scenario.policy.max_pools).with_name("policy[max_pools]")
        m._count("policy")


def add_spot(m: Model) -> None:
    """Spot carries only interruptible work placed here, and each class relies on it only so far.

    spot[w,p,g] ≤ share[w,p,g] and 100·spot[w,p,g] ≤ cap·share[w,p,g] (percent), so no class
    and hence no pool runs more than cap% of its GPU-hours on spot. The cap is per class, not per
    pool: a pool-wide cap would let more guaranteed work in a pool buy more spot for its
    neighbours, so more demand could cost less. An indivisible class runs all on spot or none,
    so it uses spot only when the cap is 100%. Combinations that may not use spot (real-time
    services, non-restartable gangs, pools that cannot replace a reclaimed node, GPU types
    without a spot offer) have no spot variable.
    """
    d, cp = m.data, m.cp
    for key, s in m.spot.items():
        label = ",".join(key)
        cp.add(s <= m.share[key]).with_name(f"spot[{label}]")
        cp.add(m.spot_on[key] <= m.place[key])
        cp.add(100 * s <= d.spot_cap_pct * m.share[key]).with_name(f"spot[{label},cap]")
        m._count("spot")


def add_burst_cap(m: Model) -> None:
    """On-demand GPUs rented in any hour stay within the GPU type's cap, summed over pools.

    Σ_p burst[p,g,bucket_p(t)] ≤ cap[g] (tenths of a GPU) for every hour t, where bucket_p(t) is
    the capacity row of pool p that stands for hour t (identical hours share one row).
    """
    d, cp = m.data, m.cp
    by_gpu: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)
    for (p, g), buckets in m.burst_bucket.items():
        if g in d.burst_cap_units:
            by_gpu[g].append((p, buckets))
    for g, parts in by_gpu.items():
        check_stopped()
        rows = set(map(tuple, np.stack([b for _p, b in parts], axis=1).tolist()))
        for row in sorted(rows):
            keys = [
                (p, g, t) for (p, _b), t in zip(parts, row, strict=True) if (p, g, t) in m.burst
            ]
            # An hour whose pools cannot rent more than the cap even at their bounds needs no row.
            if sum(m.burst_ub[k] for k in keys) > d.burst_cap_units[g]:
                cp.add(sum(m.burst[k] for k in keys) <= d.burst_cap_units[g]).with_name(
                    f"burst_cap[{g},t={row[0]}]"
                )
                m._count("burst_cap")


def dominated_pairs(d: ModelData) -> list[tuple[str, str]]:
    """Pairs (a, b) where pool b can take all of pool a's work for no more money or effort.

    b dominates a when b holds a's GPU types at the same node price, b bursts wherever a
    does and has no node limit, b's per-node effort is no larger for any skill, moving a's work
    to b moves nobody off the platform family or the cluster it uses today, and every workload
    a may host b may host too, needing no more GPUs in any hour and costing no more in gaps,
    friction or spot (work a may run on spot may run on spot in b at no higher price).
    Then a plan that opens both is never cheaper than one that moves a's work into b (its
    capacity, effort and fees only shrink), so ``open[a] + open[b] ≤ 1`` keeps the least cost
    (an exact tie goes to the plan with fewer pools) and spares CP-SAT from proving it among
    near-equal twins (Kubernetes with and without a batch add-on, once idle staff cost nothing
    extra). Computed once per ``d`` (kept in ``d.memo``).
    """
    if "dominated_pairs" not in d.memo:
        d.memo["dominated_pairs"] = _dominated_pairs(d)
    return list(d.memo["dominated_pairs"])


def _dominated_pairs(d: ModelData) -> list[tuple[str, str]]:
    people = d.people
    today = {FAMILY[mv.today] for mv in people.moves.values()} if people is not None else set()
    moves = list(people.moves) if people is not None else []
    out = []
    for a in d.pools:
        for b in d.pools:
            if a.name == b.name:
                continue
            if FAMILY[a.platform] != FAMILY[b.platform] and FAMILY[a.platform] in today:
                continue
            if any(d.relocates(w, b.name) and not d.relocates(w, a.name) for w in moves):
                continue  # a holds a workload at home that b would take to another cluster
            if not set(a.gpu_types) <= set(b.gpu_types) or b.max_nodes is not None:
                continue
            if a.bursts and not b.bursts:
                continue
            if any(d.node_cost(a.name, g) != d.node_cost(b.name, g) for g in a.gpu_types):
                continue
            if any(d.per_node_milli[(b.name, s)] > d.per_node_milli[(a.name, s)] for s in SKILLS):
                continue
            if people is not None and a.name in people.managed and b.name not in people.managed:
                continue
            if not _sharing_dominates(d, a, b):
                continue
            if all(
                _dominates(d.combos.get((w.name, b.name, g)), d.combos.get((w.name, a.name, g)))
                and _spot_dominates(d, (w.name, b.name, g), (w.name, a.name, g))
                for w in d.workloads
                for g in a.gpu_types
            ):
                out.append((a.name, b.name))
    return out


def _dominates(b: Combo | None, a: Combo | None) -> bool:
    if a is None or a.blocked:
        return True
    if b is None or b.blocked or b.gang_gpus != a.gang_gpus:
        return False
    cost_b = b.gap_cents_per_pct + b.friction_cents_per_pct
    return cost_b <= a.gap_cents_per_pct + a.friction_cents_per_pct and bool(
        np.all(b.demand <= a.demand)
    )


def _sharing_dominates(d: ModelData, a: Pool, b: Pool) -> bool:
    """Moving ``a``'s work into ``b`` leaves every hour-by-hour sharing row no tighter.

    Training that fills ``a``'s troughs must fill ``b``'s too, with no less room in its wait
    target; and where training fills ``b``'s troughs, ``a``'s other work must hold a flat
    block (a rising service would push that training out and cost it restarts).
    """
    for w in d.workloads:
        for g in a.gpu_types:
            ka, kb = (w.name, a.name, g), (w.name, b.name, g)
            combo = d.combos.get(ka)
            if combo is None or combo.blocked:
                continue
            if ka in d.flexible and d.flexible.get(kb, -1) < d.flexible[ka]:
                return False
            if (
                ka not in d.flexible
                and any(k[1] == b.name and k[2] == g for k in d.flexible)
                and bool(combo.pushed(100).any())
            ):
                return False
    return True


def _spot_dominates(d: ModelData, b: tuple[str, str, str], a: tuple[str, str, str]) -> bool:
    """Work ``a`` may run on spot may run on spot in ``b`` too, for no more money."""
    if a not in d.spot_cents:
        return True
    return b in d.spot_cents and d.spot_cents[b] <= d.spot_cents[a]


def dominated_gpus(d: ModelData) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(pool, g, h, stuck): GPU type h can take g's work in the pool for no more, but ``stuck``'s.

    h dominates g in pool p when a node of h costs no more and holds as many GPUs, h is at
    least as fast for training and for inference, where the pool bursts h's on-demand GPUs cost
    no more and have no cap, and every workload p may host on g may go on h too (needing no
    more GPUs in any hour, with the same job size, no dearer in gaps, friction or spot, with
    every spot percent g allows and, for training that fills troughs, no less room), except the
    ``stuck`` ones h cannot host at all. Then a plan that uses g in p, with none of ``stuck``
    there and nothing on h, is matched by the same plan with h in g's place: no dearer, and every
    wait and latency no longer (the same work on as many, no slower GPUs). Of two types that
    dominate each other (an H100 and an H200 node at one price, for work the H200's extra
    memory does not speed up), the one the tie-break prefers (listed first) is kept.
    Computed once per ``d`` (kept in ``d.memo``).
    """
    if "dominated_gpus" not in d.memo:
        d.memo["dominated_gpus"] = _dominated_gpus(d)
    return list(d.memo["dominated_gpus"])


def _stuck_on(d: ModelData, p: Pool, g: str, h: str) -> tuple[str, ...] | None:
    """The workloads on g in p that h cannot host, when h dominates g for all others; else None."""
    cat = d.scenario.catalog
    a, b = cat.gpus[g], cat.gpus[h]
    if d.gpus_per_node[g] != d.gpus_per_node[h] or d.node_cost(p.name, h) > d.node_cost(p.name, g):
        return None
    if b.training_speed < a.training_speed or b.inference_speed < a.inference_speed:
        return None
    if d.bursts(p.name, g) and (
        not d.bursts(p.name, h)
        or d.burst_cost(p.name, h) > d.burst_cost(p.name, g)
        or h in d.burst_cap_units
    ):
        return None
    stuck = []
    for w in d.workloads:
        kg, kh = (w.name, p.name, g), (w.name, p.name, h)
        cg, ch = d.combos.get(kg), d.combos.get(kh)
        if cg is None or cg.blocked:
            continue
        if ch is None or ch.blocked:
            stuck.append(w.name)
            continue
        if not _dominates(ch, cg) or not _pieces_dominate(ch, cg):
            return None
        if not _spot_dominates(d, kh, kg) or not set(d.spot_pcts.get(kg, ())) <= set(
            d.spot_pcts.get(kh, ())
        ):
            return None
        if kg in d.flexible and d.flexible.get(kh, -1) < d.flexible[kg]:
            return None
    return tuple(stuck)


def _pieces_dominate(b: Combo, a: Combo) -> bool:
    """``b``'s pieces need no more than ``a``'s at any share (split services and notebooks)."""
    if (a.slope is None) != (b.slope is None):
        return False
    if a.slope is None or b.slope is None or a.fixed is None or b.fixed is None:
        return True
    return bool(np.all(b.slope <= a.slope) and np.all(b.fixed <= a.fixed))


def _dominated_gpus(d: ModelData) -> list[tuple[str, str, str, tuple[str, ...]]]:
    out = []
    for p in d.pools:
        for i, g in enumerate(p.gpu_types):
            for j, h in enumerate(p.gpu_types):
                stuck = _stuck_on(d, p, g, h) if g != h else None
                if stuck is None:
                    continue
                if i < j and _stuck_on(d, p, h, g) == ():
                    continue  # twins for everything g hosts: keep the one listed first
                out.append((p.name, g, h, stuck))
    return out


def add_dominance(m: Model) -> None:
    """Pools and GPU types that another one dominates are left to it.

    Of two pools where one dominates the other, at most one opens (``dominated_pairs``); work
    goes on a GPU type another one dominates in a pool only beside work on that one or work
    it cannot host (``dominated_gpus``).
    """
    for a, b in dominated_pairs(m.data):
        m.cp.add(m.open[a] + m.open[b] <= 1).with_name(f"dominance[{a},{b}]")
        m._count("dominance")
    for p, g, h, stuck in dominated_gpus(m.data):
        beside = [z for (w, pp, gg), z in m.place.items() if (pp, gg) == (p, h)]
        beside += [m.place[(w, p, g)] for w in stuck if (w, p, g) in m.place]
        for (w, pp, gg), z in m.place.items():
            if (pp, gg) == (p, g) and w not in stuck:
                m.cp.add_bool_or([*beside, ~z]).with_name(f"dominance[{p},{g},{h},{w}]")
                m._count("dominance")


@dataclass(frozen=True)
class ServiceCut:
    """A pool that must have ``nodes`` nodes whenever it hosts at least these shares.

    ``shares`` are ``(workload, percent)`` pairs of the classes the pool hosted on its own
    capacity (spot excluded) in the plan that missed a target; ``nodes = -1`` means no size the
    pool may take is enough. ``spot`` are ``(workload, percent)`` spot shares that are part of
    the premise exactly (a spot share waits on its own nodes, not on the pool's).
    """

    pool: str
    gpu_type: str
    shares: tuple[tuple[str, int], ...]
    nodes: int
    spot: tuple[tuple[str, int], ...] = ()


def _premise(m: Model, cut: ServiceCut) -> list[Any]:
    """The literals whose conjunction is ``cut``'s premise: each share at least its level."""
    premise: list[Any] = []
    for w, s in cut.shares:
        key = (w, cut.pool, cut.gpu_type)
        share = m.share[key]
        if key in m.spot:
            y = m.cp.new_bool_var(f"at_least[{w},{cut.pool},{cut.gpu_type},{s},own]")
            m.cp.add(share - m.spot[key] >= s).only_enforce_if(y)
            m.cp.add(share - m.spot[key] <= s - 1).only_enforce_if(~y)
            premise.append(y)
        elif isinstance(share, cp_model.IntVar):
            y = m.cp.new_bool_var(f"at_least[{w},{cut.pool},{cut.gpu_type},{s}]")
            m.cp.add(share >= s).only_enforce_if(y)
            m.cp.add(share <= s - 1).only_enforce_if(~y)
            premise.append(y)
        else:
            premise.append(m.place[key])
    for w, pct in cut.spot:
        key = (w, cut.pool, cut.gpu_type)
        y = m.cp.new_bool_var(f"spot_is[{w},{cut.pool},{cut.gpu_type},{pct}]")
        m.cp.add(m.spot[key] == pct).only_enforce_if(y)
        m.cp.add(m.spot[key] != pct).only_enforce_if(~y)
        premise.append(y)
    return premise


def add_service_levels(m: Model, cuts: Sequence[ServiceCut]) -> None:
    """Pooled service levels hold: a pool that hosts this work has the nodes it needs.

    For each cut: (∧_w (share − spot)[w,p,g] ≥ s_w) ⇒ nodes[p,g] ≥ N. Waits grow with the
    work placed on a pool's own capacity, so every plan that puts at least as much of the same
    classes there needs at least N nodes; other plans are untouched. N = -1 (no size is enough)
    forbids the premise (with ``spot[w,p,g] = pct`` for the cut's spot shares). Split services
    and notebooks need no cut: their pieces are sized in ``add_capacity``.
    """
    for cut in cuts:
        premise = _premise(m, cut)
        if not premise:
            continue
        k = (cut.pool, cut.gpu_type)
        name = f"service_levels[{cut.pool},{cut.gpu_type},{m.families.get('service_levels', 0)}]"
        if cut.nodes < 0 or cut.nodes > m.node_ub[k]:
            ct = m.cp.add_bool_or([~lit for lit in premise]).with_name(name)
        else:
            ct = m.cp.add(m.nodes[k] >= cut.nodes).with_name(name)
            ct.only_enforce_if(premise)
        m.service_rows.setdefault(cut, []).append(ct)
        m._count("service_levels")


def exempt_whole_shares(m: Model, cut: ServiceCut) -> None:
    """``cut`` no longer holds where every one of its pieces is the whole class (100% own).

    In a pool that rents on demand a wait is not monotone in the work placed (on-demand nodes
    follow it in whole nodes), so a cut stated from a share upward can remove a plan with all of
    the work there on fewer nodes. The solve loop calls this when the evaluator finds such a
    plan cheaper than the one it was about to call optimal, and states the whole shares' own
    cut beside it: ``(∧_w share ≥ s_w) ∧ ¬(∧_w (share − spot) = 100) ⇒ nodes ≥ N``.
    """
    whole = _premise(
        m, ServiceCut(cut.pool, cut.gpu_type, tuple((w, 100) for w, _ in cut.shares), 0)
    )
    at_whole = m.cp.new_bool_var(f"whole[{cut.pool},{cut.gpu_type}]")
    m.cp.add_bool_and(whole).only_enforce_if(at_whole)
    m.cp.add_bool_or([~lit for lit in whole]).only_enforce_if(~at_whole)
    for ct in m.service_rows.get(cut, []):
        ct.only_enforce_if(~at_whole)


def _load_terms(
    m: Model, keys: Sequence[tuple[str, str, str]], slope: np.ndarray, fixed: np.ndarray
) -> cp_model.LinearExprT:
    """Σ (share − spot)[k]·slope[k] + place[k]·fixed[k] over one column of coefficients.

    What these placements hold, counted as ``add_capacity`` counts it.
    """
    terms = [(m.share[k], int(v)) for k, v in zip(keys, slope, strict=True) if v]
    terms += [(m.spot[k], -int(v)) for k, v in zip(keys, slope, strict=True) if v and k in m.spot]
    terms += [(m.place[k], int(v)) for k, v in zip(keys, fixed, strict=True) if v]
    if not terms:
        return 0
    return cp_model.LinearExpr.weighted_sum([t[0] for t in terms], [t[1] for t in terms])


@dataclass(frozen=True)
class _SharingRows:
    """The coefficients of one sharing pool and GPU type (rows: placements, columns: hours)."""

    flex: list[tuple[str, str, str]]
    held: list[tuple[str, str, str]]
    arrive: tuple[np.ndarray, np.ndarray]
    """Slope and fixed part of the trough-filling training's own need."""
    others: tuple[np.ndarray, np.ndarray]
    """Slope and fixed part of what the other work holds."""
    pushed: tuple[np.ndarray, np.ndarray]
    """Slope and fixed part of the GPUs the other work takes back at each hour's start."""


def _sharing_rows(m: Model, p: Pool, g: str) -> _SharingRows | None:
    d = m.data
    here = [c for c in d.allowed() if c.pool == p.name and c.gpu_type == g]
    flex = [c for c in here if (c.workload, p.name, g) in d.flexible]
    if not flex:
        return None
    held = [c for c in here if (c.workload, p.name, g) not in d.flexible]

    def parts(combos: list[Combo]) -> tuple[np.ndarray, np.ndarray]:
        if not combos:
            empty = np.zeros((0, HOURS_PER_WEEK), dtype=np.int64)
            return empty, empty
        slope = np.stack([c.slope if c.slope is not None else c.demand for c in combos])
        fixed = np.stack(
            [c.fixed if c.fixed is not None else np.zeros_like(c.demand) for c in combos]
        )
        return slope, fixed

    others = parts(held)
    return _SharingRows(
        flex=[(c.workload, p.name, g) for c in flex],
        held=[(c.workload, p.name, g) for c in held],
        arrive=parts(flex),
        others=others,
        pushed=(
            np.stack([pushed_out(r) for r in others[0]]) if held else others[0],
            np.stack([pushed_out(r) for r in others[1]]) if held else others[1],
        ),
    )


def add_sharing(m: Model) -> None:
    """Preemptible training takes, hour by hour, the GPUs other work leaves, and still meets its wait.

    In a pool that shares by the hour, per GPU type, a fluid queue over the repeating week:
    backlog[t] ≥ backlog[t−1] + STEPS·arriving[t] + loss·pushed[t] − STEPS·(supply − held[t]),
    backlog[t] ≥ 0, where arriving is the trough-filling classes' own need (Σ share·demand),
    held is everything else placed there (as in ``add_capacity``), pushed the GPUs it takes
    back at hour t (:func:`~cluster_decide.model.data.pushed_out` of each placement's parts)
    and loss the work each one loses in ``1 / STEPS`` of a GPU-hour. Little's law turns the
    backlog into a mean wait, and each placed class keeps it within what its target leaves
    over its steady-state wait: 100·Σ_t backlog[t] ≤ STEPS·slack[w]·Σ_t arriving[t] (slack in
    hundredths of an hour).

    Summed over the week the rows say the troughs hold the training's GPU-hours and restarts;
    the model is built with only that weekly row per pool, and the solve loop states the hourly
    rows (``add_sharing_hours``) for the pools where a plan's training waits too long, which
    keeps estates that do not choose the pool as fast as before.
    """
    d, cp = m.data, m.cp
    for p in d.pools:
        for g in p.gpu_types:
            rows = _sharing_rows(m, p, g)
            if rows is None:
                continue
            supply = UNITS_PER_NODE_GPU * d.gpus_per_node[g] * m.nodes[(p.name, g)]
            need = STEPS * _load_terms(m, rows.flex, *(a.sum(axis=1) for a in rows.arrive))
            if rows.held:
                need = need + d.preempt_loss_steps * _load_terms(
                    m, rows.held, *(a.sum(axis=1) for a in rows.pushed)
                )
                need = need + STEPS * _load_terms(
                    m, rows.held, *(a.sum(axis=1) for a in rows.others)
                )
            cp.add(need <= STEPS * HOURS_PER_WEEK * supply).with_name(f"sharing[{p.name},{g},week]")
            m._count("sharing")


def add_sharing_hours(m: Model, pairs: Iterable[tuple[str, str]]) -> None:
    """The hour-by-hour sharing rows of ``add_sharing`` for these (pool, GPU type) pairs.

    Added by the solve loop where a plan's trough-filling training waits too long; they only
    remove plans (the weekly row is their sum), so every bound found before still holds.
    """
    d, cp = m.data, m.cp
    for name, g in sorted(set(pairs) - m.exact_sharing):
        rows = _sharing_rows(m, d.pool(name), g)
        if rows is None:
            continue
        m.exact_sharing = m.exact_sharing | {(name, g)}
        supply = UNITS_PER_NODE_GPU * d.gpus_per_node[g] * m.nodes[(name, g)]
        ub = max(
            1,
            100
            * (
                STEPS * int(sum(a.sum() for a in rows.arrive))
                + d.preempt_loss_steps * int(sum(a.sum() for a in rows.pushed))
            ),
        )
        b = [cp.new_int_var(0, ub, f"backlog[{name},{g},t={t}]") for t in range(HOURS_PER_WEEK)]
        for t in range(HOURS_PER_WEEK):
            m.backlog[(name, g, t)] = b[t]
            inflow = STEPS * _load_terms(m, rows.flex, *(a[:, t] for a in rows.arrive))
            loss = d.preempt_loss_steps * _load_terms(m, rows.held, *(a[:, t] for a in rows.pushed))
            used = STEPS * _load_terms(m, rows.held, *(a[:, t] for a in rows.others))
            cp.add(b[t] >= b[t - 1] + inflow + loss - STEPS * supply + used).with_name(
                f"sharing[{name},{g},t={t}]"
            )
            m._count("sharing")
        weekly = _load_terms(m, rows.flex, *(a.sum(axis=1) for a in rows.arrive))
        for k in rows.flex:
            cp.add(100 * sum(b) <= STEPS * d.flexible[k] * weekly).only_enforce_if(
                m.place[k]
            ).with_name(f"sharing[{','.join(k)},wait]")
            m._count("sharing")


def _objective(m: Model) -> None:
    """Monthly cost in cents, then a tie-break that prefers work, and spot, in earlier places.

    The tie-break is Σ rank[w,p,g]·(share[w,p,g] + spot[w,p,g]), where rank is the place's
    position among the workload's own places in the fixed (pool, GPU type) order, from 0. Plans
    of equal cost almost always differ in some share or spot percent, so they differ here too,
    and the optimum is a function of the inputs rather than of the search that found it: what
    lets CP-SAT skip its presolve on small models (``model/cpsat.py``). (A tie survives where
    percents trade between places whose ranks balance, a class split three ways, or where only
    node counts, hires or a managed service differ at the same cost; none of the scenarios
    checked has one.) It used to rank placements only, so equally cheap splits of a divisible
    class (24/76 against 34/66) were settled by the search; a large model still is (below).
    Which pools are open follows from the placements (linking), so no per-pool term is needed
    (one multiplied the objective's scale by the number of pools and made the proof 2-3× slower).
    """
    d = m.data
    capacity = sum(d.node_cost(p, g) * n for (p, g), n in m.nodes.items()) + sum(
        (d.added_node_cost(p, g) - d.node_cost(p, g)) * n for (p, g), n in m.grown.items()
    )
    burst = sum(
        d.burst_cost(p, g) * m.burst_weight[(p, g, t)] * b for (p, g, t), b in m.burst.items()
    )
    spot = sum(d.spot_cents[k] * s for k, s in m.spot.items())
    m.people_cents = _people_cents(m)
    m.cash_cents = capacity + d.lease_cents + burst + m.people_cents + spot
    shares = list(m.share.items())
    penalties = sum(
        (d.combos[k].gap_cents_per_pct + d.combos[k].friction_cents_per_pct) * s
        for k, s in shares
        if d.combos[k].gap_cents_per_pct + d.combos[k].friction_cents_per_pct
    )
    splits = d.split_cents * (sum(m.place.values()) - len(d.workloads))
    m.cost_cents = m.cash_cents + penalties + splits
    order = {
        (p.name, g): i for i, (p, g) in enumerate((p, g) for p in d.pools for g in p.gpu_types)
    }
    if m.large:
        # Placements only: a large estate is searched on two workers under the clock, so its
        # plan depends on the run anyway, and the complete tie-break's larger scale (6× on the
        # 200-class estate) costs that search and the objective's headroom below 2^63.
        m.tie_break = sum((order[(p, g)] + 1) * z for (_w, p, g), z in m.place.items())
        m.tie_break_max = len(m.place) * len(order)
        return
    places: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for key in m.share:
        places[key[0]].append(key)
    rank: dict[tuple[str, str, str], int] = {}
    for keys in places.values():
        for r, key in enumerate(sorted(keys, key=lambda k: order[(k[1], k[2])])):
            rank[key] = r
    m.tie_break = sum(rank[k] * s for k, s in m.share.items() if rank[k]) + sum(
        rank[k] * s for k, s in m.spot.items() if rank[k]
    )
    # Shares of a workload sum to 100 and spot never exceeds its share.
    m.tie_break_max = sum(2 * 100 * (len(keys) - 1) for keys in places.values())


def _people_cents(m: Model) -> cp_model.LinearExprT:
    """Payroll, hires, retraining, managed fees, builds and moves, in cents a month."""
    d = m.data
    people = d.people
    if people is None:  # pragma: no cover - prepare always sets it
        return 0
    payroll = sum(people.payroll_cents.values())
    hires = sum((people.salary_cents[s] + people.hire_fee_cents) * h for s, h in m.hires.items())
    retrain = sum(people.retrain_cents[k] * r for k, r in m.retrain.items())
    fees = sum(
        people.managed[p].cluster_cents * z
        + (people.managed[p].build_cents - people.build_cents[p]) * z
        for p, z in m.managed.items()
    )
    build = sum(people.build_cents[p.name] * m.open[p.name] for p in d.pools)
    moves = sum(
        people.moves[w].move_cents * m.moved[w] + people.moves[w].retool_cents * m.retooled[w]
        for w in people.moves
    ) + sum(people.moves[w].relocate_cents * r for w, r in m.relocated.items())
    return payroll + hires + retrain + fees + build + moves


def tie_break_scale(m: Model) -> int:
    """One cent of cost outweighs every tie-break point."""
    return m.tie_break_max + 1


def build_model(
    data: ModelData, relax: frozenset[str] = frozenset(), cuts: Sequence[ServiceCut] = ()
) -> Model:
    """The CP-SAT model of ``data``; ``relax`` may add slack to ``staffing`` or ``budget``.

    Work that was stopped (a stale check beside a live answer) ends before the next family.
    """
    check_stopped()
    m = Model(data=data, cp=cp_model.CpModel())
    _variables(m)
    if "staffing" in relax:
        m.staff_slack = {
            s: m.cp.new_int_var(0, 1000 * MILLI, f"slack[staffing,{s}]") for s in SKILLS
        }
    if "budget" in relax:
        m.budget_slack = m.cp.new_int_var(0, 10**12, "slack[budget]")
    for add in (
        add_coverage,
        add_capability,
        add_linking,
        add_capacity,
        add_gang_fit,
        add_staffing,
        add_transition,
        add_spot,
        add_burst_cap,
        add_sharing,
        _objective,
        add_budget,
        add_policy,
        add_dominance,
    ):
        check_stopped()
        add(m)
    add_service_levels(m, cuts)
    return m
