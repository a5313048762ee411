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
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import polars as pl

from cluster_decide.base.constants import HOURS_PER_MONTH, HOURS_PER_WEEK, SKILLS
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT, FAMILY, PLATFORM_LABELS
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, STEPS, ModelData, prepare
from cluster_decide.model.decisions import Decisions
from cluster_decide.model.people import cheapest_staffing
from cluster_decide.model.stopping import check_stopped
from cluster_decide.planning.service import SERVICE_LEVEL_SCHEMA, service_levels
from cluster_decide.planning.sharing import Sharing, replay_sharing

if TYPE_CHECKING:
    from cluster_decide.inputs.scenario import Scenario

__all__ = [
    "COST_COMPONENTS",
    "ONE_TIME_COMPONENTS",
    "Decided",
    "Decisions",
    "Evaluation",
    "archetype_of",
    "check_budget",
    "check_burst_cap",
    "check_capability",
    "check_capacity",
    "check_coverage",
    "check_dominance",
    "check_gang_fit",
    "check_linking",
    "check_policy",
    "check_service_levels",
    "check_sharing",
    "check_spot",
    "check_staffing",
    "check_transition",
    "evaluate",
    "evaluate_decisions",
    "pool_inputs",
    "pool_meets_targets",
    "sharing_place",
    "whole_node_burst",
    "whole_node_extra",
    "whole_node_usd",
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
    ("cluster_build", True, "Standing up new clusters, and add-ons on those of today, spread"),
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
    relocated: tuple[str, ...] = ()
    """Workloads the plan moves to another cluster of their platform family (not moved)."""
    horizon_months: int = 36
    dominated: tuple[str, ...] = ()
    """Open pools of which one could take the other's work for no more money or effort: not a
    violation (the plan works), a finding (``check_dominance``)."""
    service_levels: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=SERVICE_LEVEL_SCHEMA)
    )
    """Predicted service level of every placed share beside its target (``planning/service.py``)."""
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

    One ``check_<family>`` per family of the model (``build.add_<family>``), in the model's
    order except that the budget follows the checks whose results it costs; each returns the violations it finds, named ``family[row]`` like the model's rows.
    The service levels are predicted for every pool, or only for ``service_pools`` (the solve
    loop sizing one pool asks for that pool alone).
    """
    check_stopped()  # the work this check belongs to may be stale (a control moved)
    v: list[str] = []
    v += check_coverage(data, dec)
    v += check_capability(data, dec)
    v += check_linking(data, dec)
    capacity, loads, sharing_v = _loads(data, dec)
    placed, burst, sharing = loads.placed_units, loads.burst, loads.sharing
    v += capacity
    v += check_gang_fit(data, dec)
    staffing, required, hires, retrained = check_staffing(data, dec)
    v += staffing
    moved, retooled, relocated = check_transition(data, dec)
    v += check_spot(data, dec)
    v += check_burst_cap(data, burst)
    v += sharing_v
    costs = _costs(data, dec, burst, hires, retrained, (moved, retooled, relocated))
    cash = sum(costs[c] for c, is_cash, _ in COST_COMPONENTS if is_cash)
    v += check_budget(data, cash)
    v += check_policy(data, dec)
    open_pools = tuple(dec.open_pools())
    pools = {p.name for p in data.pools}
    ev = Evaluation(
        feasible=not v,
        violations=tuple(v),
        costs_cents=costs,
        burst=burst,
        required_milli=required,
        hires=hires,
        open_pools=open_pools,
        archetype=archetype_of({data.pool(p).platform for p in open_pools if p in pools}),
        placed_units=placed,
        retrained={k: r for k, r in retrained.items() if r},
        moved=moved,
        retooled=retooled,
        relocated=relocated,
        horizon_months=data.people.horizon_months if data.people is not None else 36,
        dominated=tuple(check_dominance(data, dec)),
        sharing=sharing,
    )
    levels = service_levels(data, dec, ev, service_pools)
    v += check_service_levels(levels)
    return replace(ev, feasible=not v, violations=tuple(v), service_levels=levels)


@dataclass(frozen=True)
class _Loads:
    """What every pool carries hour by hour, as the service levels read it (``PoolLoads``)."""

    placed_units: dict[tuple[str, str], np.ndarray]
    burst: dict[tuple[str, str], np.ndarray]
    sharing: dict[tuple[str, str], Sharing]


def _loads(data: ModelData, dec: Decisions) -> tuple[list[str], _Loads, list[str]]:
    """The capacity violations, every pool's load, burst and trough replay, and the sharing ones."""
    capacity, placed, burst = check_capacity(data, dec)
    sharing_v, sharing = check_sharing(data, dec)
    for (p, g), sh in sharing.items():
        # What the pool carries hour by hour: its services and the training in their troughs.
        placed[(p, g)] = sh.services_units + np.ceil(sh.training_units).astype(np.int64)
    return capacity, _Loads(placed, burst, sharing), sharing_v


def sharing_place(violation: str) -> tuple[str, str] | None:
    """The (pool, GPU type) a ``sharing[...]`` violation of :func:`check_sharing` names, else None.

    ``sharing[pool,gpu]`` (the troughs cannot hold the work) and ``sharing[workload,pool,gpu,wait]``
    (its wait is too long).
    """
    if not violation.startswith("sharing["):
        return None
    names = violation[len("sharing[") : violation.index("]")].split(",")
    return (names[0], names[1]) if len(names) == 2 else (names[1], names[2])


def pool_inputs(dec: Decisions, pool: str, gpu: str) -> tuple[Any, ...]:
    """All that :func:`pool_meets_targets` reads of ``dec`` for ``pool``'s ``gpu`` nodes.

    Their count, and the shares and spot percents placed there, in ``dec``'s own order (the
    loads held beside a queue are summed in that order, in floating point). Every prediction
    of the pool, its hourly load and burst and its trough replay read nothing else of the
    plan, so two plans with the same inputs here get the same verdict: the solve loop asks
    the same question hundreds of times a solve while it builds staircases of cuts, and keeps
    each verdict (``planning.loop``).
    """
    here = (pool, gpu)
    return (
        dec.nodes.get(here, 0),
        tuple((k, s) for k, s in dec.shares.items() if (k[1], k[2]) == here),
        tuple((k, s) for k, s in dec.spot.items() if (k[1], k[2]) == here),
    )


def pool_meets_targets(
    data: ModelData, dec: Decisions, pool: str, gpu: str, sharing: bool = False
) -> bool:
    """Whether every service level predicted in ``pool``'s ``gpu`` nodes holds; nothing costed.

    The solve loop asks this a dozen times a solve while it sizes one pool: the same answer as
    :func:`evaluate_decisions` with ``service_pools={(pool, gpu)}`` gives, from only what those
    predictions read (every pool's load, burst and trough replay), in about 40% of its time. With
    ``sharing``, the training that fills the pool's troughs must also settle and keep to its wait.
    """
    check_stopped()  # as in evaluate_decisions: a stale solve stops between its checks
    _capacity, loads, sharing_v = _loads(data, dec)
    levels = service_levels(data, dec, loads, {(pool, gpu)})
    if not (levels.is_empty() or levels["met"].all()):
        return False
    return not (sharing and any(sharing_place(v) == (pool, gpu) for v in sharing_v))


def check_coverage(data: ModelData, dec: Decisions) -> list[str]:
    """Every workload is placed in full, in valid percents, and an indivisible one in one place.

    Shares must name a candidate (workload, pool, GPU type); Σ_{p,g} share[w,p,g] = 100.
    """
    v: list[str] = []
    by_w: dict[str, int] = defaultdict(int)
    for (w, p, g), s in dec.shares.items():
        if s == 0:
            continue
        if (w, p, g) not in data.combos:
            v.append(
                f"placement[{w},{p},{g}]: not a candidate (unknown pool, or GPU type not allowed)"
            )
            continue
        if not 0 < s <= 100:
            v.append(f"share[{w},{p},{g}]: expected a percent in 1..100, got {s}")
        by_w[w] += s
    for wl in data.workloads:
        if by_w[wl.name] != 100:
            v.append(f"coverage[{wl.name}]: {by_w[wl.name]}% placed, expected 100%")
        parts = sum(1 for (ww, _, _), pct in dec.shares.items() if ww == wl.name and pct > 0)
        if not wl.is_divisible and parts > 1:
            v.append(f"coverage[{wl.name}]: an indivisible workload is split across pools")
    return v


def _blocked(data: ModelData, dec: Decisions, families: tuple[str, ...]) -> list[str]:
    """Shares placed where the data blocks the combination for one of ``families``."""
    v = []
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        if s and combo is not None and combo.blocked and combo.blocked_family in families:
            v.append(f"{combo.blocked_family}[{w},{p},{g}]: {w} cannot run there: {combo.blocked}")
    return v


def check_capability(data: ModelData, dec: Decisions) -> list[str]:
    """Nothing runs where the platform lacks a required capability or its SLO cannot be met."""
    return _blocked(data, dec, ("capability", "slo"))


def check_linking(data: ModelData, dec: Decisions) -> list[str]:
    """Nodes are bought only for candidate pools and GPU types, and an open pool hosts something."""
    pools = {p.name: p for p in data.pools}
    v = []
    for (p, g), n in dec.nodes.items():
        if (p not in pools or g not in pools[p].gpu_types) and n:
            v.append(
                f"linking[{p},{g}]: nodes bought for a pool or GPU type that is not a candidate"
            )
        if n < 0:
            v.append(f"nodes[{p},{g}]: negative")
    for p in dec.open_pools():
        if p in pools and not any(s for (_w, pp, _g), s in dec.shares.items() if pp == p):
            v.append(f"linking[{p}]: the pool buys nodes but hosts no workload")
    opened: dict[str, list[str]] = defaultdict(list)
    for p in sorted(dec.open_pools()):
        if p in pools and pools[p].cluster:
            opened[pools[p].cluster].append(p)
    for c, names in opened.items():
        if len(names) > 1:
            v.append(
                f"linking[cluster {c}]: {' and '.join(names)} are one cluster of today, "
                "with and without its batch add-on; the plan may run only one"
            )
    return v


def check_capacity(
    data: ModelData, dec: Decisions
) -> tuple[list[str], dict[tuple[str, str], np.ndarray], dict[tuple[str, str], np.ndarray]]:
    """Demand placed on a pool's own capacity fits its nodes in every hour, or is rented.

    Returns the violations, the demand placed per (pool, GPU type) and hour (tenths of a GPU
    × percent) and the burst each bursting pool rents per hour (tenths of a GPU): the least
    that makes the plan work. Training that fills a sharing pool's troughs is not placed hour
    by hour here: ``check_sharing`` replays it in the hours the other work leaves.
    """
    v: list[str] = []
    pools = {p.name: p for p in data.pools}
    for (p, g), n in dec.nodes.items():
        limit = pools[p].node_limit(g) if p in pools and g in pools[p].gpu_types else None
        if limit is not None and n > limit:
            v.append(f"capacity[{p},{g}]: {n} nodes exceed the pool's limit of {limit}")
    for pool in data.pools:
        total = sum(dec.nodes.get((pool.name, g), 0) for g in pool.gpu_types)
        if pool.max_nodes is not None and total > pool.max_nodes:
            v.append(
                f"capacity[{pool.name}]: {total} nodes of all its GPU types exceed the pool's "
                f"limit of {pool.max_nodes}"
            )
    placed: dict[tuple[str, str], np.ndarray] = {}
    spanning: dict[tuple[str, str], np.ndarray] = {}
    burst: dict[tuple[str, str], np.ndarray] = {}
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        s_base = s - dec.spot.get((w, p, g), 0)
        if s_base > 0 and combo is not None and (w, p, g) not in data.flexible:
            zero = np.zeros(HOURS_PER_WEEK, dtype=np.int64)
            placed[(p, g)] = placed.get((p, g), zero) + combo.load(s_base)
            if data.off_burst(p, g, combo.gang_gpus):
                spanning[(p, g)] = spanning.get((p, g), zero) + combo.load(s_base)
    for (p, g), load in placed.items():
        supply = UNITS * data.gpus_per_node[g] * dec.nodes.get((p, g), 0)
        need = _tenths(load - supply, UNITS // DEMAND_UNITS_PER_GPU)
        if data.bursts(p, g):
            burst[(p, g)] = need
            # Jobs that span nodes or outgrow the on-demand instance run on the pool's own
            # nodes: burst GPUs hold none of them (``ModelData.off_burst``).
            gangs = spanning.get((p, g), np.zeros(HOURS_PER_WEEK, dtype=np.int64))
            short = _tenths(gangs - supply, UNITS // DEMAND_UNITS_PER_GPU)
            if short.any():
                t = int(np.argmax(short))
                v.append(
                    f"gang_fit[{p},{g},t={t}]: jobs the burst GPUs cannot hold (multi-node, or "
                    f"larger than the on-demand instance) need {short[t] / DEMAND_UNITS_PER_GPU:.1f} "
                    f"GPUs more than the pool's nodes in hour {t}"
                )
        elif need.any():
            t = int(np.argmax(need))
            v.append(
                f"capacity[{p},{g},t={t}]: {need[t] / DEMAND_UNITS_PER_GPU:.1f} GPUs short in hour {t} "
                "and the pool cannot burst"
            )
    return v, placed, burst


def whole_node_burst(data: ModelData, dec: Decisions) -> dict[tuple[str, str], np.ndarray]:
    """Burst per hour (tenths of a GPU) each bursting pool needs when whole-node jobs get whole nodes.

    The capacity rows (and :func:`check_capacity`) count a pool's GPUs as one fluid: an 8-GPU
    job's load fits in the GPUs a service leaves free on a node, which it cannot use. Here the
    pool's nodes split into those kept for its whole-node classes (jobs of at least a node's
    GPUs) and the rest, each group renting what it lacks, at the split that rents least; the
    model does not state this (see ``docs/model.md``, capacity), so plans only report it. Only
    bursting pools that mix such classes with other work on their own capacity are returned.
    """
    out: dict[tuple[str, str], np.ndarray] = {}
    whole: dict[tuple[str, str], np.ndarray] = {}
    rest: dict[tuple[str, str], np.ndarray] = {}
    spanning: dict[tuple[str, str], np.ndarray] = {}
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        s_base = s - dec.spot.get((w, p, g), 0)
        if s_base <= 0 or combo is None or (w, p, g) in data.flexible or not data.bursts(p, g):
            continue
        into = whole if combo.gang_gpus >= data.gpus_per_node[g] else rest
        load, zero = combo.load(s_base), np.zeros(HOURS_PER_WEEK, dtype=np.int64)
        into[(p, g)] = into.get((p, g), zero) + load
        if combo.gang_gpus > data.gpus_per_node[g]:
            spanning[(p, g)] = spanning.get((p, g), zero) + load
    step = UNITS // DEMAND_UNITS_PER_GPU
    for key in sorted(whole.keys() & rest.keys()):
        per_node = UNITS * data.gpus_per_node[key[1]]
        nodes = dec.nodes.get(key, 0)
        # Each group rents what its nodes lack, in tenths of a GPU (rounded up, as the rows);
        # multi-node jobs rent nothing (``check_capacity``), so their group keeps their nodes.
        least = min(nodes, -(-int(spanning.get(key, np.zeros(1)).max()) // per_node))
        need = [
            _tenths(whole[key] - per_node * k, step)
            + _tenths(rest[key] - per_node * (nodes - k), step)
            for k in range(least, nodes + 1)
        ]
        out[key] = min(need, key=lambda n: int(n.sum()))  # the fewest kept nodes on a tie
    return out


def whole_node_extra(
    data: ModelData, dec: Decisions, ev: Evaluation
) -> dict[tuple[str, str], tuple[float, float]]:
    """What each pool rents beyond ``ev``'s burst when whole-node jobs get whole nodes.

    (on-demand GPU-hours a month, US$ a month) per pool and GPU type of
    :func:`whole_node_burst`, priced at the GPU type's burst offer.
    """
    out = {}
    for (p, g), need in whole_node_burst(data, dec).items():
        market = data.rental_market(p, g)
        counted = ev.burst.get((p, g))
        if market is None or market.burst is None or counted is None:
            continue
        tenths = int(need.sum()) - int(counted.sum())
        hours = tenths / DEMAND_UNITS_PER_GPU * HOURS_PER_MONTH / HOURS_PER_WEEK
        out[(p, g)] = (hours, hours * market.burst.usd_per_gpu_hour)
    return out


def whole_node_usd(data: ModelData, dec: Decisions, ev: Evaluation | None = None) -> float:
    """What counting whole nodes adds to a plan's monthly cost, in US$ (:func:`whole_node_extra`)."""
    ev = evaluate_decisions(data, dec) if ev is None else ev
    return sum(usd for _hours, usd in whole_node_extra(data, dec, ev).values())


def _tenths(excess: np.ndarray, step: int) -> np.ndarray:
    """Demand units above supply as whole tenths of a GPU, rounded up; none where below."""
    return -(-np.maximum(excess, 0) // step)


def check_gang_fit(data: ModelData, dec: Decisions) -> list[str]:
    """A class's largest job fits the pool's baseline nodes (and its platform can gang it).

    Its share on the pool's own capacity counts (spot runs elsewhere); a class filling a
    sharing pool's troughs counts whenever it is placed there.
    """
    v = _blocked(data, dec, ("gang_fit",))
    for (w, p, g), s in dec.shares.items():
        combo = data.combos.get((w, p, g))
        here = s if (w, p, g) in data.flexible else s - dec.spot.get((w, p, g), 0)
        if here <= 0 or combo is None:
            continue
        gpus = data.gpus_per_node.get(g, 0) * dec.nodes.get((p, g), 0)
        if combo.gang_gpus > max(1, gpus):
            v.append(
                f"gang_fit[{w},{p},{g}]: its {combo.gang_gpus}-GPU jobs need more than the pool's "
                f"{gpus} baseline GPUs"
            )
    return v


def check_sharing(
    data: ModelData, dec: Decisions
) -> tuple[list[str], dict[tuple[str, str], Sharing]]:
    """Trough-filling training gets its GPU-hours and keeps its wait target, hour by hour.

    Replays the week of every pool and GPU type where training fills the troughs
    (:func:`~cluster_decide.planning.sharing.replay_sharing`) and returns the violations with the
    replays: the queue must settle (the hours other work leaves hold the training's GPU-hours,
    restarts included), and the wait it adds must stay within what each class's target leaves.
    """
    own = {k: s - dec.spot.get(k, 0) for k, s in dec.shares.items() if k in data.combos}
    sharing = replay_sharing(data, own, dict(dec.nodes))
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
    return v, sharing


def check_staffing(
    data: ModelData, dec: Decisions
) -> tuple[list[str], dict[str, int], dict[str, int], dict[tuple[str, str], int]]:
    """The open pools' operations effort fits the staff, with the cheapest hires and retraining.

    Returns the violations, the effort required per skill (thousandths of an FTE), the hires
    per skill and the people retrained (from, to).
    """
    v: list[str] = []
    pools = {p.name: p for p in data.pools}
    people = data.people
    assert people is not None, "model data without people tables"
    open_pools = dec.open_pools()
    nodes_of = {p: sum(n for (pp, _g), n in dec.nodes.items() if pp == p) for p in open_pools}
    managed = {p for p in dec.managed if p in nodes_of}
    for p in sorted(dec.managed):
        if p not in people.managed:
            v.append(f"staffing[managed,{p}]: the pool has no managed option here")
        for (pp, g), n in sorted(dec.nodes.items()):
            why = data.managed_bar(p, g) if pp == p and n > 0 else None
            if why == "owned":
                v.append(f"staffing[managed,{p},{g},owned]: a managed service holds no owned nodes")
            elif why == "seller":
                seller = data.market(p, g).baseline.seller  # type: ignore[union-attr]
                v.append(
                    f"staffing[managed,{p},{g},seller]: {seller}, where its {g} nodes are "
                    f"rented, runs no managed {PLATFORM_LABELS[data.pool(p).platform]}"
                )
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
    return v, required, hires, retrained


def check_transition(
    data: ModelData, dec: Decisions
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Workloads a plan moves off their platform of today, or retools, or moves to a sibling cluster.

    A sibling cluster is another of the same platform family (``ModelData.relocates``). The
    model's ``transition`` rows only tie the flags to placements; a plan written as decisions
    cannot break them, because the flags (and the migration cost they carry) are derived here
    from the placements. Returns (moved, retooled, relocated), sorted; a class split between
    another platform and another cluster of its own is both moved and relocated.
    """
    people = data.people
    if people is None:
        return (), (), ()
    pools = {p.name: p for p in data.pools}
    moved: list[str] = []
    retooled: list[str] = []
    relocated: list[str] = []
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
        if any(data.relocates(w, p) for p in targets):
            relocated.append(w)
    return tuple(moved), tuple(retooled), tuple(relocated)


def check_burst_cap(data: ModelData, burst: Mapping[tuple[str, str], np.ndarray]) -> list[str]:
    """On-demand GPUs rented in any hour stay within the GPU type's cap, summed over pools."""
    v = []
    for g, cap in data.burst_cap_units.items():
        rented = sum((b for (_p, gg), b in burst.items() if gg == g), np.zeros(HOURS_PER_WEEK))
        if rented.max(initial=0) > cap:
            t = int(np.argmax(rented))
            v.append(
                f"burst_cap[{g},t={t}]: {rented[t] / DEMAND_UNITS_PER_GPU:.1f} on-demand GPUs in hour "
                f"{t}, more than the {cap / DEMAND_UNITS_PER_GPU:.0f} one can count on renting"
            )
    return v


def check_budget(data: ModelData, cash_cents: int) -> list[str]:
    """The monthly cash spend stays within the budget (when one is set)."""
    if data.budget_cents is not None and cash_cents > data.budget_cents:
        return [
            f"budget: cash spend ${cash_cents / 100:,.0f}/month exceeds the budget "
            f"${data.budget_cents / 100:,.0f}"
        ]
    return []


def check_policy(data: ModelData, dec: Decisions) -> list[str]:
    """Per-class platform policy, a forced archetype and a limit on pools hold."""
    v = _blocked(data, dec, ("policy",))
    scn = data.scenario
    pools = {p.name for p in data.pools}
    open_pools = dec.open_pools()
    arch = archetype_of({data.pool(p).platform for p in open_pools if p in pools})
    forced = scn.policy.archetype
    if forced != "any" and arch != forced:
        v.append(f"policy[archetype]: the plan is {arch}, but the scenario forces {forced}")
    if scn.policy.max_pools is not None and len(open_pools) > scn.policy.max_pools:
        v.append(
            f"policy[max_pools]: {len(open_pools)} pools open, at most {scn.policy.max_pools} allowed"
        )
    return v


def check_dominance(data: ModelData, dec: Decisions) -> list[str]:
    """Pairs of open pools of which one could take the other's work for no more money or effort.

    Not a violation: such a plan is feasible, and the model's ``dominance`` rows only keep the
    search from the twin plans that are never cheaper (``build.dominated_pairs``). The findings
    go to ``Evaluation.dominated`` so a hand-written plan learns it can drop a pool.
    """
    # Imported here: the model builder loads CP-SAT, which scoring a plan does not otherwise need.
    from cluster_decide.model.build import dominated_pairs

    open_pools = set(dec.open_pools())
    return [
        f"dominance[{a},{b}]: {b} could take all of {a}'s work for no more money or effort"
        for a, b in dominated_pairs(data)
        if a in open_pools and b in open_pools
    ]


def _costs(
    data: ModelData,
    dec: Decisions,
    burst: Mapping[tuple[str, str], np.ndarray],
    hires: Mapping[str, int],
    retrained: Mapping[tuple[str, str], int],
    transition: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]],
) -> dict[str, int]:
    """Monthly cents of every cost component (``COST_COMPONENTS``) of a plan.

    ``transition``: the workloads moved, retooled and relocated (``check_transition``).
    """
    moved, retooled, relocated = transition
    pools = {p.name for p in data.pools}
    people = data.people
    assert people is not None, "model data without people tables"
    open_pools = dec.open_pools()
    nodes_of = {p: sum(n for (pp, _g), n in dec.nodes.items() if pp == p) for p in open_pools}
    managed = {p for p in dec.managed if p in nodes_of}
    # Every class counts once (even unplaced), so each extra piece costs one split.
    classes = {w.name for w in data.workloads}
    return {
        "gpu_capacity": sum(
            data.nodes_cents(p, g, n) for (p, g), n in dec.nodes.items() if p in pools
        ),
        "leases": data.lease_cents,
        "burst": sum(int(data.burst_cost(p, g) * b.sum()) for (p, g), b in burst.items()),
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
        "migration": sum(
            mv.cents(w in moved, w in retooled, w in relocated) for w, mv in people.moves.items()
        ),
        "capability_gaps": sum(
            data.combos[k].gap_cents_per_pct * s for k, s in dec.shares.items() if k in data.combos
        ),
        "interface_friction": sum(
            data.combos[k].friction_cents_per_pct * s
            for k, s in dec.shares.items()
            if k in data.combos
        ),
        "split_overhead": data.split_cents
        * (sum(1 for s in dec.shares.values() if s > 0) - len(classes)),
    }


def check_service_levels(levels: pl.DataFrame) -> list[str]:
    """One violation per predicted service level that misses its target."""
    if levels.is_empty() or levels["met"].all():
        return []  # the common case, without building a filtered frame
    return [
        f"service_levels[{r['workload']},{r['pool']},{r['gpu_type']}]: predicted {r['metric']} "
        f"{r['predicted']:.4g} exceeds the target {r['target']:g}"
        for r in levels.filter(~pl.col("met")).iter_rows(named=True)
    ]


def check_spot(data: ModelData, dec: Decisions) -> list[str]:
    """Spot only where it is open, never above the share placed, and within the cap per class."""
    v = []
    for (w, p, g), pct in dec.spot.items():
        if pct <= 0:
            continue
        if (w, p, g) not in data.spot_cents:
            v.append(
                f"spot[{w},{p},{g}]: {w} may not run on spot there (not interruptible, a pool that "
                "cannot replace reclaimed nodes, no spot offer that fits its jobs, or no spot "
                "share whose own nodes meet its wait target)"
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


class Decided(Protocol):
    """Anything that states its decisions: a :class:`~cluster_decide.planning.plan.Plan` above all.

    Naming the one method :func:`evaluate` reads keeps this module below the plan module, which
    imports it (no import cycle, not even for types).
    """

    def decisions(self) -> Decisions:
        """The shares, nodes and spot placements a person could write down."""
        ...


def evaluate(scn: Scenario, plan: Decided) -> Evaluation:
    """Cost and feasibility of any plan for ``scn``, recomputed without the solver."""
    return evaluate_decisions(prepare(scn), plan.decisions())
