"""Build the CP-SAT model: variables, then one function per constraint family, then the objective.

``build_model`` reads like the table of contents of ``docs/model.md``. Every variable and
constraint is named after the data it stands for (``share[llm-pretraining,slurm,H100]``,
``capacity[k8s,H100,t=37]``) so reports can point at the exact row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from cluster_decide.constants import SKILLS
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, ModelData

__all__ = [
    "FAMILIES",
    "Model",
    "ServiceCut",
    "add_budget",
    "add_capability",
    "add_capacity",
    "add_coverage",
    "add_gang_fit",
    "add_linking",
    "add_policy",
    "add_service_levels",
    "add_staffing",
    "build_model",
    "reduced_buckets",
]

FAMILIES = (
    "coverage",
    "capability",
    "linking",
    "capacity",
    "gang_fit",
    "staffing",
    "budget",
    "policy",
    "service_levels",
)
"""The constraint families, in the order ``build_model`` adds them (service-level cuts last,
added by the solve loop as it finds pools that miss a target)."""

UNITS_PER_NODE_GPU = DEMAND_UNITS_PER_GPU * 100
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
    burst: dict[tuple[str, str, int], cp_model.IntVar] = field(default_factory=dict)
    burst_weight: dict[tuple[str, str, int], int] = field(default_factory=dict)
    hires: dict[str, cp_model.IntVar] = field(default_factory=dict)
    staff_slack: dict[str, cp_model.IntVar] = field(default_factory=dict)
    budget_slack: cp_model.IntVar | None = None
    required_milli: dict[str, Any] = field(default_factory=dict)
    cash_cents: Any = 0
    cost_cents: Any = 0
    tie_break: Any = 0
    families: dict[str, int] = field(default_factory=dict)

    def _count(self, family: str) -> None:
        self.families[family] = self.families.get(family, 0) + 1


def reduced_buckets(demands: np.ndarray, bursts: bool) -> list[tuple[int, int]]:
    """The hours whose capacity rows are needed, each with how many hours it stands for.

    Identical hours give identical rows, so one row with a multiplicity stands for them all
    (exact). Without burst capacity only the largest demand matters, so an hour whose demand is
    no larger than another's in every workload is dropped too (also exact: its row is implied).
    ``demands`` is workloads × 168; returns ``(hour, multiplicity)`` in hour order.
    """
    if demands.size == 0:
        return []
    cols, first, counts = np.unique(demands.T, axis=0, return_index=True, return_counts=True)
    keep = list(range(len(cols)))
    if not bursts:
        keep = [
            i
            for i in keep
            if not any(
                j != i and np.all(cols[j] >= cols[i]) and np.any(cols[j] > cols[i]) for j in keep
            )
        ]
    return sorted((int(first[i]), int(counts[i])) for i in keep)


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
            if p.max_nodes is not None:
                ub = min(ub, p.max_nodes)
            m.nodes[(p.name, g)] = cp.new_int_var(0, ub, f"nodes[{p.name},{g}]")
            m.node_ub[(p.name, g)] = ub
    for skill in SKILLS:
        m.hires[skill] = cp.new_int_var(0, d.max_hires, f"hires[{skill}]")


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
    """Nothing is placed in or bought for a closed pool, and an open pool hosts something.

    place[w,p,g] ≤ open[p];  nodes[p,g] ≤ ub·open[p];  open[p] ≤ Σ_{w,g} place[w,p,g].
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


def add_capacity(m: Model) -> None:
    """Demand placed fits the pool's GPUs in every hour that can bind.

    Σ_w share[w,p,g]·slope[w,p,g,t] + fixed[w,p,g,t]·place[w,p,g]
        ≤ 1000·gpus_per_node[g]·nodes[p,g] + 100·burst[p,g,t],
    with share in percent, demand and burst in tenths of a GPU (utilization and SLO headroom
    are in the demand already). ``slope = demand`` and ``fixed = 0`` except for split services
    and notebooks, whose pieces are each sized for their own traffic (``Combo.load``). Burst exists only where the platform autoscales and procurement
    allows on-demand GPUs. Identical or dominated hours are merged (see ``reduced_buckets``).
    """
    d = m.data
    for p in d.pools:
        for g in p.gpu_types:
            combos = [c for c in d.allowed() if c.pool == p.name and c.gpu_type == g]
            if not combos:
                m.cp.add(m.nodes[(p.name, g)] == 0).with_name(f"capacity[{p.name},{g},unused]")
                continue
            slopes = np.stack([c.slope if c.slope is not None else c.demand for c in combos])
            fixeds = np.stack(
                [c.fixed if c.fixed is not None else np.zeros_like(c.demand) for c in combos]
            )
            n = m.nodes[(p.name, g)]
            gpn = d.gpus_per_node[g]
            total_peak = int(np.stack([c.demand for c in combos]).sum(axis=0).max())
            # Identical or dominated hours are found on both coefficients of every class.
            for t, weight in reduced_buckets(np.vstack([slopes, fixeds]), p.bursts):
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
                if not terms:
                    continue
                placed = cp_model.LinearExpr.weighted_sum(
                    [t_[0] for t_ in terms], [t_[1] for t_ in terms]
                )
                supply = UNITS_PER_NODE_GPU * gpn * n
                if p.bursts:
                    b = m.cp.new_int_var(0, total_peak, f"burst[{p.name},{g},t={t}]")
                    m.burst[(p.name, g, t)] = b
                    m.burst_weight[(p.name, g, t)] = weight
                    supply = supply + UNITS_PER_BURST * b
                m.cp.add(placed <= supply).with_name(f"capacity[{p.name},{g},t={t}]")
                m._count("capacity")


def add_gang_fit(m: Model) -> None:
    """A class's largest job fits the pool's baseline nodes of its GPU type.

    gpus_per_node[g]·nodes[p,g] ≥ gang[w]·place[w,p,g]. Multi-node gangs on platforms that
    cannot start all pods together are blocked here; topology slowdowns are in the demand.
    """
    d = m.data
    for key, c in d.combos.items():
        if c.blocked and c.blocked_family == "gang_fit":
            m.cp.add(m.place[key] == 0).with_name(f"gang_fit[{','.join(key)}]")
            m._count("gang_fit")
        elif not c.blocked and c.gang_gpus > 1:
            n = m.nodes[(c.pool, c.gpu_type)]
            m.cp.add(d.gpus_per_node[c.gpu_type] * n >= c.gang_gpus * m.place[key]).with_name(
                f"gang_fit[{','.join(key)}]"
            )
            m._count("gang_fit")


def add_staffing(m: Model) -> None:
    """Per skill, the effort of every open pool fits the staff available plus hires.

    Σ_p (base[p,s] + addon[p,s])·open[p] + per_node[p,s]·Σ_g nodes[p,g] ≤ available[s] + hires[s]
    (in thousandths of an FTE). Optional slack turns this into a question: how many more FTE?
    """
    d = m.data
    for s in SKILLS:
        terms: list[cp_model.LinearExprT] = []
        for p in d.pools:
            fixed = d.base_milli[(p.name, s)] + d.addon_milli[(p.name, s)]
            if fixed:
                terms.append(fixed * m.open[p.name])
            per = d.per_node_milli[(p.name, s)]
            if per:
                terms.extend(per * m.nodes[(p.name, g)] for g in p.gpu_types)
        required = sum(terms)
        m.required_milli[s] = required
        supply: cp_model.LinearExprT = d.available_milli[s] + MILLI * m.hires[s]
        if s in m.staff_slack:
            supply = supply + m.staff_slack[s]
        m.cp.add(required <= supply).with_name(f"staffing[{s}]")
        m._count("staffing")


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


@dataclass(frozen=True)
class ServiceCut:
    """A pool that must have ``nodes`` nodes whenever it hosts at least these shares.

    ``shares`` are ``(workload, percent)`` pairs of the classes the pool hosted in the plan
    that missed a target; ``nodes = -1`` means no size the pool may take is enough.
    """

    pool: str
    gpu_type: str
    shares: tuple[tuple[str, int], ...]
    nodes: int


def add_service_levels(m: Model, cuts: Sequence[ServiceCut]) -> None:
    """Pooled service levels hold: a pool that hosts this work has the nodes it needs.

    For each cut: (∧_w share[w,p,g] ≥ s_w) ⇒ nodes[p,g] ≥ N. Waits grow with the work placed
    in a pool, so every plan that puts at least as much of the same classes there needs at
    least N nodes; other plans are untouched. N = -1 (no size is enough) forbids the premise.
    Split services and notebooks need no cut: their pieces are sized in ``add_capacity``.
    """
    for cut in cuts:
        premise: list[Any] = []
        for w, s in cut.shares:
            key = (w, cut.pool, cut.gpu_type)
            share = m.share[key]
            if isinstance(share, cp_model.IntVar) and s < 100:
                y = m.cp.new_bool_var(f"at_least[{w},{cut.pool},{cut.gpu_type},{s}]")
                m.cp.add(share >= s).only_enforce_if(y)
                m.cp.add(share <= s - 1).only_enforce_if(~y)
                premise.append(y)
            else:
                premise.append(m.place[key])
        k = (cut.pool, cut.gpu_type)
        name = f"service_levels[{cut.pool},{cut.gpu_type},{m.families.get('service_levels', 0)}]"
        if cut.nodes < 0 or cut.nodes > m.node_ub[k]:
            m.cp.add_bool_or([~lit for lit in premise]).with_name(name)
        else:
            ct = m.cp.add(m.nodes[k] >= cut.nodes).with_name(name)
            ct.only_enforce_if(premise)
        m._count("service_levels")


def _objective(m: Model) -> None:
    """Monthly cost in cents, then a tie-break that prefers fewer pools and earlier pools."""
    d = m.data
    capacity = sum(d.node_cents[g] * n for (_p, g), n in m.nodes.items())
    burst = sum(
        d.burst_cents[g] * m.burst_weight[(p, g, t)] * b for (p, g, t), b in m.burst.items()
    )
    staff = sum(d.staff_cents_per_milli[s] * m.required_milli[s] for s in SKILLS)
    hires = sum(d.hire_cents * h for h in m.hires.values())
    m.cash_cents = capacity + burst + staff + hires
    shares = list(m.share.items())
    penalties = sum(
        (d.combos[k].gap_cents_per_pct + d.combos[k].friction_cents_per_pct) * s
        for k, s in shares
        if d.combos[k].gap_cents_per_pct + d.combos[k].friction_cents_per_pct
    )
    splits = d.split_cents * (sum(m.place.values()) - len(d.workloads))
    m.cost_cents = m.cash_cents + penalties + splits
    order = {
        (p.name, g): i + 1 for i, (p, g) in enumerate((p, g) for p in d.pools for g in p.gpu_types)
    }
    placements = sum(order[(p, g)] * z for (_w, p, g), z in m.place.items())
    per_pool = len(m.place) * (len(order) + 1) + 1
    m.tie_break = per_pool * sum(m.open.values()) + placements


def tie_break_scale(m: Model) -> int:
    """One cent of cost outweighs every tie-break point."""
    n_order = sum(len(p.gpu_types) for p in m.data.pools) + 1
    per_pool = len(m.place) * n_order + 1
    return per_pool * (len(m.open) + 1)


def build_model(
    data: ModelData, relax: frozenset[str] = frozenset(), cuts: Sequence[ServiceCut] = ()
) -> Model:
    """The CP-SAT model of ``data``; ``relax`` may add slack to ``staffing`` or ``budget``."""
    m = Model(data=data, cp=cp_model.CpModel())
    _variables(m)
    if "staffing" in relax:
        m.staff_slack = {
            s: m.cp.new_int_var(0, 1000 * MILLI, f"slack[staffing,{s}]") for s in SKILLS
        }
    if "budget" in relax:
        m.budget_slack = m.cp.new_int_var(0, 10**12, "slack[budget]")
    add_coverage(m)
    add_capability(m)
    add_linking(m)
    add_capacity(m)
    add_gang_fit(m)
    add_staffing(m)
    _objective(m)
    add_budget(m)
    add_policy(m)
    add_service_levels(m, cuts)
    return m
