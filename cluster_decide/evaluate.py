"""Score any plan without the solver: feasibility, burst, staffing and cost, recomputed from scratch.

The evaluator reads only the decisions a person could write down (what share of each workload
goes to which pool and GPU type, and how many nodes each pool buys) and the shared integer tables
of :mod:`cluster_decide.model.data`. Burst GPUs and hires follow from those decisions (the least
that makes them work), so a plan from the solver, from a spreadsheet or from brute force is scored
the same way. Tests hold the solver to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from cluster_decide.constants import HOURS_PER_WEEK, SKILLS
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, ModelData, prepare
from cluster_decide.service import SERVICE_LEVEL_SCHEMA, service_levels

if TYPE_CHECKING:
    from cluster_decide.plan import Plan
    from cluster_decide.scenario import Scenario

__all__ = [
    "COST_COMPONENTS",
    "Decisions",
    "Evaluation",
    "archetype_of",
    "check_service_levels",
    "evaluate",
    "evaluate_decisions",
]

COST_COMPONENTS = (
    (
        "gpu_capacity",
        True,
        "Baseline GPU nodes (reserved cloud, or on-prem capex, power and space)",
    ),
    ("burst", True, "On-demand GPUs rented by the hour above the baseline"),
    ("staff", True, "Engineers operating the pools (FTE the plan needs × loaded cost)"),
    (
        "addon_integration",
        True,
        "Engineers keeping batch add-ons and Slurm-on-Kubernetes integration running",
    ),
    ("hiring", True, "One-off cost of hires, spread over the planning horizon"),
    (
        "capability_gaps",
        False,
        "Estimated work-arounds where a platform lacks a preferred capability",
    ),
    (
        "interface_friction",
        False,
        "Estimated lost productivity where a team must leave its usual interface",
    ),
    (
        "split_overhead",
        False,
        "Estimated effort of running a workload class in more than one place",
    ),
)
"""Cost components: name, whether it is cash spend (counts against the budget), meaning."""

UNITS = DEMAND_UNITS_PER_GPU * 100


@dataclass(frozen=True)
class Decisions:
    """What a plan decides: percent of each workload per (pool, GPU type), and nodes per pool type."""

    shares: Mapping[tuple[str, str, str], int]
    nodes: Mapping[tuple[str, str], int]

    def open_pools(self) -> list[str]:
        """Pools that host a workload or buy a node, sorted."""
        pools = {p for (_w, p, _g), s in self.shares.items() if s > 0}
        pools |= {p for (p, _g), n in self.nodes.items() if n > 0}
        return sorted(pools)


@dataclass(frozen=True)
class Evaluation:
    """The independent verdict on a plan."""

    feasible: bool
    violations: tuple[str, ...]
    costs_cents: Mapping[str, int]
    burst: Mapping[tuple[str, str], np.ndarray]
    """On-demand GPUs per hour of the week, in tenths of a GPU."""
    required_milli: Mapping[str, int]
    hires: Mapping[str, int]
    open_pools: tuple[str, ...]
    archetype: str | None
    placed_units: Mapping[tuple[str, str], np.ndarray] = field(default_factory=dict)
    service_levels: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=SERVICE_LEVEL_SCHEMA)
    )
    """Predicted service level of every placed share beside its target (``service.py``)."""

    @property
    def total_cents(self) -> int:
        """Everything the optimizer minimizes, in cents."""
        return sum(self.costs_cents.values())

    @property
    def cash_cents(self) -> int:
        """The cash part (what a budget limits), in cents."""
        return sum(self.costs_cents[name] for name, cash, _ in COST_COMPONENTS if cash)

    @property
    def total_monthly_usd(self) -> float:
        """Total monthly cost in dollars."""
        return self.total_cents / 100.0

    def costs_frame(self) -> pl.DataFrame:
        """Columns: component, monthly_usd, cash (bool), meaning."""
        return pl.DataFrame(
            {
                "component": [c for c, _, _ in COST_COMPONENTS],
                "monthly_usd": [self.costs_cents[c] / 100.0 for c, _, _ in COST_COMPONENTS],
                "cash": [cash for _, cash, _ in COST_COMPONENTS],
                "meaning": [m for _, _, m in COST_COMPONENTS],
            }
        )


def archetype_of(platforms: set[str] | list[str]) -> str | None:
    """Name a plan's shape from the platform kinds of its open pools."""
    kinds = set(platforms)
    if not kinds:
        return None
    if "shared" in kinds:
        return "hybrid_shared"
    k8s = kinds & {"kubernetes", "kubernetes_batch"}
    if "slurm" in kinds and k8s:
        return "hybrid_separate"
    if "slurm" in kinds:
        return "slurm_only"
    if "kubernetes_batch" in kinds:
        return "kubernetes_batch"
    return "kubernetes_only"


def evaluate_decisions(
    data: ModelData, dec: Decisions, service_pools: set[tuple[str, str]] | None = None
) -> Evaluation:
    """Check and cost ``dec`` against every constraint family, without a solver.

    The service levels are predicted for every pool, or only for ``service_pools`` (the solve
    loop sizing one pool asks for that pool alone).
    """
    v: list[str] = []
    scn = data.scenario
    pools = {p.name: p for p in data.pools}
    by_w: dict[str, int] = defaultdict(int)
    for key, s in dec.shares.items():
        if s == 0:
            continue
        w, p, g = key
        combo = data.combos.get(key)
        if combo is None:
            v.append(
                f"placement[{w},{p},{g}]: not a candidate (unknown pool, or GPU type not allowed)"
            )
            continue
        if combo.blocked:
            v.append(f"{combo.blocked_family}[{w},{p},{g}]: {w} cannot run there: {combo.blocked}")
        if not 0 < s <= 100:
            v.append(f"share[{w},{p},{g}]: expected a percent in 1..100, got {s}")
        by_w[w] += s
    for wl in data.workloads:
        if by_w[wl.name] != 100:
            v.append(f"coverage[{wl.name}]: {by_w[wl.name]}% placed, expected 100%")
        parts = sum(1 for (ww, _, _), pct in dec.shares.items() if ww == wl.name and pct > 0)
        if not wl.is_divisible and parts > 1:
            v.append(f"coverage[{wl.name}]: an indivisible workload is split across pools")

    for (p, g), n in dec.nodes.items():
        if p not in pools or g not in pools[p].gpu_types:
            if n:
                v.append(
                    f"linking[{p},{g}]: nodes bought for a pool or GPU type that is not a candidate"
                )
        elif (limit := pools[p].max_nodes) is not None and n > limit:
            v.append(f"capacity[{p},{g}]: {n} nodes exceed the pool's limit of {limit}")
        if n < 0:
            v.append(f"nodes[{p},{g}]: negative")

    placed: dict[tuple[str, str], np.ndarray] = {}
    burst: dict[tuple[str, str], np.ndarray] = {}
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        if s and combo is not None:
            placed.setdefault((p, g), np.zeros(HOURS_PER_WEEK, dtype=np.int64))
            placed[(p, g)] = placed[(p, g)] + combo.load(s)
            n = dec.nodes.get((p, g), 0)
            if combo.gang_gpus > 1 and combo.gang_gpus > data.gpus_per_node[g] * n:
                v.append(
                    f"gang_fit[{w},{p},{g}]: its {combo.gang_gpus}-GPU jobs need more than the pool's "
                    f"{data.gpus_per_node[g] * n} baseline GPUs"
                )
    for (p, g), load in placed.items():
        supply = UNITS * data.gpus_per_node[g] * dec.nodes.get((p, g), 0)
        excess = np.maximum(load - supply, 0)
        need = -(-excess // (UNITS // DEMAND_UNITS_PER_GPU))  # tenths of a GPU
        if pools[p].bursts:
            burst[(p, g)] = need
        elif need.any():
            t = int(np.argmax(need))
            v.append(
                f"capacity[{p},{g},t={t}]: {need[t] / DEMAND_UNITS_PER_GPU:.1f} GPUs short in hour {t} "
                "and the pool cannot burst"
            )

    open_pools = tuple(dec.open_pools())
    required: dict[str, int] = {}
    addon: dict[str, int] = {}
    hires: dict[str, int] = {}
    for skill in SKILLS:
        req = add = 0
        for p in open_pools:
            if p not in pools:
                continue
            add += data.addon_milli[(p, skill)]
            req += data.base_milli[(p, skill)] + data.addon_milli[(p, skill)]
            req += data.per_node_milli[(p, skill)] * sum(
                n for (pp, _g), n in dec.nodes.items() if pp == p
            )
        required[skill], addon[skill] = req, add
        hires[skill] = max(0, -(-(req - data.available_milli[skill]) // MILLI))
        if hires[skill] > data.max_hires:
            v.append(
                f"staffing[{skill}]: needs {req / MILLI:.2f} FTE, {data.available_milli[skill] / MILLI:.2f} available"
                + (
                    f" and at most {data.max_hires} hires"
                    if data.max_hires
                    else " and hiring is not allowed"
                )
            )

    costs = {
        "gpu_capacity": sum(
            data.node_cents[g] * n for (p, g), n in dec.nodes.items() if p in pools
        ),
        "burst": sum(int(data.burst_cents[g] * b.sum()) for (_p, g), b in burst.items()),
        "staff": sum(data.staff_cents_per_milli[k] * (required[k] - addon[k]) for k in SKILLS),
        "addon_integration": sum(data.staff_cents_per_milli[k] * addon[k] for k in SKILLS),
        "hiring": data.hire_cents * sum(hires.values()),
        "capability_gaps": sum(
            data.combos[k].gap_cents_per_pct * s for k, s in dec.shares.items() if k in data.combos
        ),
        "interface_friction": sum(
            data.combos[k].friction_cents_per_pct * s
            for k, s in dec.shares.items()
            if k in data.combos
        ),
        "split_overhead": data.split_cents
        * (sum(1 for s in dec.shares.values() if s > 0) - len(by_w)),
    }
    cash = sum(costs[c] for c, is_cash, _ in COST_COMPONENTS if is_cash)
    if data.budget_cents is not None and cash > data.budget_cents:
        v.append(
            f"budget: cash spend ${cash / 100:,.0f}/month exceeds the budget ${data.budget_cents / 100:,.0f}"
        )

    kinds = {pools[p].platform for p in open_pools if p in pools}
    arch = archetype_of(kinds)
    forced = scn.policy.archetype
    if forced != "any" and arch != forced:
        v.append(f"policy[archetype]: the plan is {arch}, but the scenario forces {forced}")
    if scn.policy.max_pools is not None and len(open_pools) > scn.policy.max_pools:
        v.append(
            f"policy[max_pools]: {len(open_pools)} pools open, at most {scn.policy.max_pools} allowed"
        )
    for p in open_pools:
        if p in pools and not any(s for (_w, pp, _g), s in dec.shares.items() if pp == p):
            v.append(f"linking[{p}]: the pool buys nodes but hosts no workload")

    ev = Evaluation(
        feasible=not v,
        violations=tuple(v),
        costs_cents=costs,
        burst=burst,
        required_milli=required,
        hires=hires,
        open_pools=open_pools,
        archetype=arch,
        placed_units=placed,
    )
    levels = service_levels(data, dec, ev, service_pools)
    v += check_service_levels(levels)
    return replace(ev, feasible=not v, violations=tuple(v), service_levels=levels)


def check_service_levels(levels: pl.DataFrame) -> list[str]:
    """One violation per predicted service level that misses its target."""
    return [
        f"service_levels[{r['workload']},{r['pool']},{r['gpu_type']}]: predicted {r['metric']} "
        f"{r['predicted']:.4g} exceeds the target {r['target']:g}"
        for r in levels.filter(~pl.col("met")).iter_rows(named=True)
    ]


def evaluate(scn: Scenario, plan: Plan) -> Evaluation:
    """Cost and feasibility of any plan for ``scn``, recomputed without the solver."""
    return evaluate_decisions(prepare(scn), plan.decisions())
