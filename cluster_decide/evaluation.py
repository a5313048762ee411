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
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, STEPS, ModelData, prepare
from cluster_decide.model.decisions import Decisions
from cluster_decide.model.people import FAMILY, cheapest_staffing
from cluster_decide.service import SERVICE_LEVEL_SCHEMA, service_levels
from cluster_decide.sharing import Sharing, replay_sharing
from cluster_decide.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT

if TYPE_CHECKING:
    from cluster_decide.plan import Plan
    from cluster_decide.scenario import Scenario

__all__ = [
    "COST_COMPONENTS",
    "ONE_TIME_COMPONENTS",
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
    (
        "leases",
        True,
        "Leases of today's clusters, paid until they end whether the plan uses them or not",
    ),
    ("burst", True, "On-demand GPUs rented by the hour above the baseline"),
    ("spot", True, "Spot GPUs for interruptible work, interruption overhead included"),
    ("managed_fees", True, "Control-plane and per-node fees of pools run as a managed service"),
    ("staff", True, "Engineers on staff today (all of them, busy or free to redeploy)"),
    ("new_hires", True, "Salaries of new hires (whole people)"),
    ("hiring", True, "One-off cost of hires, spread over the planning horizon"),
    ("retraining", True, "Training engineers in the other skill (course and ramp-up), spread"),
    ("cluster_build", True, "Standing up clusters that do not exist today, spread"),
    (
        "migration",
        True,
        "Moving workloads off their platform of today and retraining users, spread",
    ),
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
ONE_TIME_COMPONENTS = ("hiring", "retraining", "cluster_build", "migration")
"""Components that are one-off costs spread evenly over the horizon (one-time = monthly × months)."""

UNITS = DEMAND_UNITS_PER_GPU_PERCENT


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
    retrained: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """People trained in the other skill, (from, to)."""
    moved: tuple[str, ...] = ()
    """Workloads the plan moves off their platform of today."""
    retooled: tuple[str, ...] = ()
    """Moved workloads whose users must change tools."""
    horizon_months: int = 36
    service_levels: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=SERVICE_LEVEL_SCHEMA)
    )
    """Predicted service level of every placed share beside its target (``service.py``)."""
    sharing: Mapping[tuple[str, str], Sharing] = field(default_factory=dict)
    """The replayed week of each pool and GPU type where training fills the troughs."""

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

    @property
    def one_time_usd(self) -> float:
        """The one-off costs (hiring, retraining, builds, moves) before spreading."""
        return sum(self.costs_cents[c] for c in ONE_TIME_COMPONENTS) * self.horizon_months / 100.0

    def costs_frame(self) -> pl.DataFrame:
        """Columns: component, monthly_usd, cash (bool), meaning, one_time_usd.

        ``one_time_usd`` is the one-off amount a spread component stands for (0 otherwise).
        """
        return pl.DataFrame(
            {
                "component": [c for c, _, _ in COST_COMPONENTS],
                "monthly_usd": [self.costs_cents[c] / 100.0 for c, _, _ in COST_COMPONENTS],
                "cash": [cash for _, cash, _ in COST_COMPONENTS],
                "meaning": [m for _, _, m in COST_COMPONENTS],
                "one_time_usd": [
                    self.costs_cents[c] * self.horizon_months / 100.0
                    if c in ONE_TIME_COMPONENTS
                    else 0.0
                    for c, _, _ in COST_COMPONENTS
                ],
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

    v.extend(_spot_violations(data, dec))
    placed: dict[tuple[str, str], np.ndarray] = {}
    burst: dict[tuple[str, str], np.ndarray] = {}
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        s_base = s - dec.spot.get((w, p, g), 0)
        if s_base > 0 and combo is not None and (w, p, g) not in data.flexible:
            placed.setdefault((p, g), np.zeros(HOURS_PER_WEEK, dtype=np.int64))
            placed[(p, g)] = placed[(p, g)] + combo.load(s_base)
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

    own = {k: s - dec.spot.get(k, 0) for k, s in dec.shares.items() if k in data.combos}
    sharing = replay_sharing(data, own, dict(dec.nodes))
    v.extend(_sharing_violations(data, own, sharing))
    for (p, g), sh in sharing.items():
        placed[(p, g)] = sh.services_units + np.ceil(sh.training_units).astype(np.int64)
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        gpus = data.gpus_per_node.get(g, 0) * dec.nodes.get((p, g), 0)
        flex = (w, p, g) in data.flexible and s > 0
        if flex and combo is not None and combo.gang_gpus > max(1, gpus):
            v.append(
                f"gang_fit[{w},{p},{g}]: its {combo.gang_gpus}-GPU jobs need more than the pool's "
                f"{gpus} baseline GPUs"
            )

    for g, cap in data.burst_cap_units.items():
        rented = sum((b for (_p, gg), b in burst.items() if gg == g), np.zeros(HOURS_PER_WEEK))
        if rented.max(initial=0) > cap:
            t = int(np.argmax(rented))
            v.append(
                f"burst_cap[{g},t={t}]: {rented[t] / DEMAND_UNITS_PER_GPU:.1f} on-demand GPUs in hour "
                f"{t}, more than the {cap / DEMAND_UNITS_PER_GPU:.0f} one can count on renting"
            )

    open_pools = tuple(dec.open_pools())
    people = data.people
    assert people is not None, "model data without people tables"
    nodes_of = {p: sum(n for (pp, _g), n in dec.nodes.items() if pp == p) for p in open_pools}
    managed = {p for p in dec.managed if p in nodes_of}
    for p in sorted(dec.managed):
        if p not in people.managed:
            v.append(f"staffing[managed,{p}]: the pool has no managed option here")
    for p, opt in sorted(people.managed.items()):
        if opt.forced and p in nodes_of and p not in managed:
            v.append(f"staffing[managed,{p}]: the pool runs as a managed service today")
    required: dict[str, int] = {}
    for skill in SKILLS:
        req = 0
        for p in open_pools:
            if p not in pools:
                continue
            if p in managed and p in people.managed:
                req += people.managed[p].base_milli[skill]
            else:
                req += data.base_milli[(p, skill)] + data.addon_milli[(p, skill)]
            req += data.per_node_milli[(p, skill)] * nodes_of[p]
        required[skill] = req
    choice = cheapest_staffing(people, required, data.available_milli)
    hires = dict(choice.hires) if choice is not None else dict.fromkeys(SKILLS, 0)
    retrained = dict(choice.retrained) if choice is not None else {}
    if choice is None:
        short = ", ".join(
            f"{s} {required[s] / MILLI:.2f} FTE needed, {data.available_milli[s] / MILLI:.2f} on staff"
            for s in SKILLS
            if required[s] > data.available_milli[s]
        )
        v.append(
            f"staffing: {short}"
            + (
                f"; at most {people.max_hires} hires in all"
                if people.max_hires
                else "; hiring is not allowed"
            )
        )
    moved: list[str] = []
    retooled: list[str] = []
    interfaces = {w.name: w.interface for w in data.workloads}
    for w, mv in people.moves.items():
        targets = [p for (ww, p, _g), s in dec.shares.items() if ww == w and s > 0 and p in pools]
        if any(FAMILY[pools[p].platform] != FAMILY[mv.today] for p in targets):
            moved.append(w)
            if any(
                FAMILY[pools[p].platform] != FAMILY[mv.today]
                and data.platform(p).interface not in ("both", interfaces[w])
                for p in targets
            ):
                retooled.append(w)

    costs = {
        "gpu_capacity": sum(
            data.node_cost(p, g) * n for (p, g), n in dec.nodes.items() if p in pools
        ),
        "leases": data.lease_cents,
        "burst": sum(int(data.burst_cents[g] * b.sum()) for (_p, g), b in burst.items()),
        "spot": sum(
            data.spot_cents.get(k, 0) * pct for k, pct in dec.spot.items() if k in data.combos
        ),
        "managed_fees": sum(
            people.managed[p].cluster_cents for p in managed if p in people.managed
        ),
        "staff": sum(people.payroll_cents.values()),
        "new_hires": sum(people.salary_cents[s] * hires[s] for s in SKILLS),
        "hiring": people.hire_fee_cents * sum(hires.values()),
        "retraining": sum(people.retrain_cents.get(k, 0) * r for k, r in retrained.items()),
        "cluster_build": sum(
            (
                people.managed[p].build_cents
                if p in managed and p in people.managed
                else people.build_cents.get(p, 0)
            )
            for p in open_pools
            if p in pools
        ),
        "migration": sum(people.moves[w].move_cents for w in moved)
        + sum(people.moves[w].retool_cents for w in retooled),
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
        retrained={k: r for k, r in retrained.items() if r},
        moved=tuple(moved),
        retooled=tuple(retooled),
        horizon_months=people.horizon_months,
        sharing=sharing,
    )
    levels = service_levels(data, dec, ev, service_pools)
    v += check_service_levels(levels)
    return replace(ev, feasible=not v, violations=tuple(v), service_levels=levels)


def check_service_levels(levels: pl.DataFrame) -> list[str]:
    """One violation per predicted service level that misses its target."""
    if levels.is_empty() or levels["met"].all():
        return []  # the common case, without building a filtered frame
    return [
        f"service_levels[{r['workload']},{r['pool']},{r['gpu_type']}]: predicted {r['metric']} "
        f"{r['predicted']:.4g} exceeds the target {r['target']:g}"
        for r in levels.filter(~pl.col("met")).iter_rows(named=True)
    ]


def _sharing_violations(
    data: ModelData,
    own: Mapping[tuple[str, str, str], int],
    sharing: Mapping[tuple[str, str], Sharing],
) -> list[str]:
    """Trough-filling training gets its GPU-hours and keeps its wait target, hour by hour."""
    v = []
    for (p, g), sh in sharing.items():
        if not sh.steady:
            v.append(
                f"sharing[{p},{g}]: the hours other work leaves hold less than the training's "
                f"{sh.arriving_units / UNITS:,.0f} GPU-hours a week (restarts included), so its queue grows"
            )
            continue
        for k, s in sorted(own.items()):
            if s > 0 and k[1] == p and k[2] == g and k in data.flexible:
                slack = data.flexible[k]
                if 100 * int(sh.backlog_steps.sum()) > STEPS * slack * sh.arriving_units:
                    v.append(
                        f"sharing[{','.join(k)},wait]: waiting for the service's troughs adds "
                        f"{sh.wait_centi_hours / 100:.1f} h to {k[0]}'s queue, more than the "
                        f"{slack / 100:.1f} h its target leaves"
                    )
    return v


def _spot_violations(data: ModelData, dec: Decisions) -> list[str]:
    """Spot only where it is open, never above the share placed, and within the cap per class."""
    v = []
    for (w, p, g), pct in dec.spot.items():
        if pct <= 0:
            continue
        if (w, p, g) not in data.spot_cents:
            v.append(
                f"spot[{w},{p},{g}]: {w} may not run on spot there (not interruptible, a pool that "
                "cannot replace reclaimed nodes, or no spot offer that fits its jobs)"
            )
        if pct > dec.shares.get((w, p, g), 0):
            v.append(
                f"spot[{w},{p},{g}]: {pct}% on spot is more than the {dec.shares.get((w, p, g), 0)}% placed"
            )
        wl = next((x for x in data.workloads if x.name == w), None)
        if wl is not None and not wl.is_divisible and pct != dec.shares.get((w, p, g), 0):
            v.append(f"spot[{w},{p},{g}]: an indivisible workload runs all on spot or none")
        placed = dec.shares.get((w, p, g), 0)
        if 100 * pct > data.spot_cap_pct * placed:
            v.append(
                f"spot[{w},{p},{g},cap]: {pct / max(placed, 1):.0%} of {w} here on spot, more "
                f"than the {data.spot_cap_pct}% a class may rely on"
            )
    return v


def evaluate(scn: Scenario, plan: Plan) -> Evaluation:
    """Cost and feasibility of any plan for ``scn``, recomputed without the solver."""
    return evaluate_decisions(prepare(scn), plan.decisions())
