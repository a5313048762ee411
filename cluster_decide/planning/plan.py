"""The Plan: what the optimizer recommends, as frozen tidy frames, sentences and stable JSON.

Frames and their columns (units in the names):

- ``placements``: workload, kind, pool, platform, gpu_type, share (0-1), gpus (peak GPUs this
  share needs, SLO headroom included), gpu_hours_per_month (capacity it takes), spot_share
  (0-share: the part of ``share`` run on spot capacity rather than the pool's own).
- ``pools``: pool, platform, gpu_type, nodes, gpus (baseline), burst_gpu_hours (per month),
  peak_gpus (largest hourly need), utilization (busy GPU-hours over provisioned GPU-hours, 0-1:
  what an operator's dashboard shows; spot excluded), sizing_ratio (average sized need over provisioned
  capacity, 0-1: how much of what is paid for the targets call for; the rest is whole nodes),
  provider_class (on_prem | hyperscaler | gpu_cloud | marketplace | scenario), provider, term
  (owned | on_demand | commit_1y | commit_3y), usd_per_gpu_hour (baseline, equivalent monthly
  cost per GPU-hour for owned nodes), spot_gpu_hours (per month), upfront_usd (nodes × (server +
  fabric share + storage share) for bought nodes, 0 when rented; a cluster of today, owned or
  leased, buys only the nodes it grows by), managed (runs as a managed service), existing (a cluster that exists today; its owned
  nodes cost their running costs only, provider ``today``).
- ``cash_flow``: month (0 = purchase), upfront_usd, monthly_usd (cash spend without the capital
  charge of bought nodes), resale_usd, cash_usd, cumulative_usd; one row per month of the horizon.
- ``staffing``: skill, available_fte, required_fte, hires, retrained_in (people trained into
  this skill from the other), idle_fte (capacity to redeploy), payroll_usd_per_month (staff on
  the payroll today plus hires).
- ``costs``: component, monthly_usd, cash (counts against a budget), meaning, one_time_usd
  (the one-off amount a spread component stands for).
- ``transition``: workload, today (platform it runs on today, empty without ``[current]``),
  planned (platforms it runs on in the plan), today_cluster (the cluster of today it runs on,
  where ``[current]`` names it, else empty), planned_clusters (the clusters it runs on in the
  plan: a cluster of today by its name, add-on or not, a new one by its pool's), action (keep |
  move | relocate | new: relocate is a move to another cluster of the same platform family,
  known only where ``[current]`` names its cluster), users, retool (users must change tools),
  one_time_usd, monthly_usd (spread over the horizon).
- ``service_levels``: workload, pool, gpu_type, metric, predicted, target, met (one row per
  placed share; see :mod:`cluster_decide.planning.service`).
- ``relaxations`` (infeasible plans): change, amount, unit, monthly_usd, sentence.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from cluster_decide.base.constants import HOURS_PER_MONTH, HOURS_PER_WEEK, SKILLS
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT
from cluster_decide.inputs.market import CASH_FLOW_SCHEMA, cash_flow, residual_fraction
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, ModelData
from cluster_decide.model.decisions import Status
from cluster_decide.planning.evaluation import Decisions, Evaluation
from cluster_decide.planning.explain import architecture_words
from cluster_decide.planning.service import SERVICE_LEVEL_SCHEMA, busy_gpus_by_pool

if TYPE_CHECKING:
    from cluster_decide.inputs.scenario import Scenario

__all__ = [
    "RELAXATION_SCHEMA",
    "SERVICE_LEVEL_SCHEMA",
    "TRANSITION_SCHEMA",
    "Plan",
    "Status",
    "build_frames",
    "investment",
]

WEEKS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_WEEK
RELAXATION_SCHEMA = {
    "change": pl.String,
    "amount": pl.Float64,
    "unit": pl.String,
    "monthly_usd": pl.Float64,
    "sentence": pl.String,
}
_PLACEMENT_SCHEMA = {
    "workload": pl.String,
    "kind": pl.String,
    "pool": pl.String,
    "platform": pl.String,
    "gpu_type": pl.String,
    "share": pl.Float64,
    "gpus": pl.Float64,
    "gpu_hours_per_month": pl.Float64,
    "spot_share": pl.Float64,
}
_POOL_SCHEMA = {
    "pool": pl.String,
    "platform": pl.String,
    "gpu_type": pl.String,
    "nodes": pl.Int64,
    "gpus": pl.Int64,
    "burst_gpu_hours": pl.Float64,
    "peak_gpus": pl.Float64,
    "utilization": pl.Float64,
    "sizing_ratio": pl.Float64,
    "provider_class": pl.String,
    "provider": pl.String,
    "term": pl.String,
    "usd_per_gpu_hour": pl.Float64,
    "spot_gpu_hours": pl.Float64,
    "upfront_usd": pl.Float64,
    "managed": pl.Boolean,
    "existing": pl.Boolean,
    "nodes_added": pl.Int64,
}
TRANSITION_SCHEMA = {
    "workload": pl.String,
    "today": pl.String,
    "planned": pl.String,
    "today_cluster": pl.String,
    "planned_clusters": pl.String,
    "action": pl.String,
    "users": pl.Int64,
    "retool": pl.Boolean,
    "one_time_usd": pl.Float64,
    "monthly_usd": pl.Float64,
}
"""Columns of ``Plan.transition``: what each workload keeps or moves and what a move costs."""


@dataclass(frozen=True)
class Plan:
    """A recommended (or explained infeasible) architecture for one scenario."""

    scenario: str
    status: Status
    archetype: str | None
    total_monthly_usd: float
    cash_monthly_usd: float
    placements: pl.DataFrame
    pools: pl.DataFrame
    staffing: pl.DataFrame
    costs: pl.DataFrame
    service_levels: pl.DataFrame
    explanations: list[str]
    relaxations: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=RELAXATION_SCHEMA)
    )
    gap: float = 0.0
    wall_time_s: float = 0.0
    upfront_usd: float = 0.0
    """Cash out before the first month: owned nodes × (server + fabric share + storage share)."""
    cash_flow: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=CASH_FLOW_SCHEMA))
    """Cumulative cash over the horizon, one row per month (see the module docstring)."""
    transition: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TRANSITION_SCHEMA))
    """What each workload keeps or moves compared with today (see the module docstring)."""
    inputs: Scenario | None = field(default=None, repr=False, compare=False)
    """The scenario this plan answers (not part of the JSON), so the plan can be simulated or exported."""
    hourly: pl.DataFrame | None = field(default=None, repr=False, compare=False)
    """:meth:`hourly_split`, kept when the plan is built from an evaluation that has it (not part
    of the JSON): the apps draw it at every answer, and evaluating the plan again to get it
    cost a fifth of a slider step."""

    @property
    def feasible(self) -> bool:
        """Whether the plan can be carried out (optimal or feasible)."""
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)

    @property
    def architecture_words(self) -> str:
        """The architecture in words: the archetype's, and what a shared pool runs beside.

        Empty without an archetype (no plan). See
        :func:`~cluster_decide.planning.explain.architecture_words`.
        """
        used = pl.concat(
            [
                self.placements.select("pool", "platform"),
                self.pools.filter(pl.col("nodes") > 0).select("pool", "platform"),
            ]
        ).unique()
        return architecture_words(self.archetype, used["platform"].to_list())

    def decisions(self) -> Decisions:
        """The decisions this plan stands for, for :func:`cluster_decide.evaluate`."""
        shares = {
            (r["workload"], r["pool"], r["gpu_type"]): round(r["share"] * 100)
            for r in self.placements.iter_rows(named=True)
        }
        nodes = {
            (r["pool"], r["gpu_type"]): int(r["nodes"]) for r in self.pools.iter_rows(named=True)
        }
        spot = {
            (r["workload"], r["pool"], r["gpu_type"]): round(r["spot_share"] * 100)
            for r in self.placements.iter_rows(named=True)
            if r["spot_share"]
        }
        managed = frozenset(r["pool"] for r in self.pools.iter_rows(named=True) if r.get("managed"))
        return Decisions(shares=shares, nodes=nodes, spot=spot, managed=managed)

    @property
    def one_time_usd(self) -> float:
        """One-off costs of the plan (hires, retraining, new clusters, moves) before spreading."""
        if "one_time_usd" not in self.costs.columns or not self.feasible:
            return 0.0
        return float(self.costs["one_time_usd"].fill_null(0.0).sum())

    def hourly_split(self) -> pl.DataFrame:
        """Hour by hour, each sharing pool's GPUs: services, trough-filling training, idle.

        Columns (:data:`cluster_decide.planning.sharing.HOURLY_SPLIT_SCHEMA`): ``hour`` (0 = Monday
        00:00), ``pool``, ``gpu_type``, ``services_gpus``, ``training_gpus``, ``idle_gpus``; one
        row per hour of the week and pool where preemptible training fills the troughs, none
        when no pool does (or the plan has no scenario). Drawn as a week of stacked areas.
        """
        from cluster_decide.planning.evaluation import evaluate
        from cluster_decide.planning.sharing import HOURLY_SPLIT_SCHEMA, hourly_split

        if self.inputs is None or not self.feasible:
            return pl.DataFrame(schema=HOURLY_SPLIT_SCHEMA)
        if self.hourly is not None:
            return self.hourly
        return hourly_split(evaluate(self.inputs, self).sharing)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: rounded numbers, no timing, so equal plans give equal bytes."""
        return {
            "scenario": self.scenario,
            "status": self.status.value,
            "archetype": self.archetype,
            "total_monthly_usd": round(self.total_monthly_usd, 2),
            "cash_monthly_usd": round(self.cash_monthly_usd, 2),
            "placements": _rows(self.placements),
            "pools": _rows(self.pools),
            "staffing": _rows(self.staffing),
            "costs": _rows(self.costs),
            "service_levels": _rows(self.service_levels),
            "relaxations": _rows(self.relaxations),
            "transition": _rows(self.transition),
            "explanations": list(self.explanations),
            "upfront_usd": round(self.upfront_usd, 2),
            "cash_flow": _rows(self.cash_flow),
        }

    def to_json(self) -> str:
        """Stable, deterministic JSON (sorted keys, rounded numbers, no timestamps)."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    def __eq__(self, other: object) -> bool:
        """Plans are equal when their JSON is: the same decisions, costs and explanations.

        Timing (``wall_time_s``), the optimality ``gap`` and the ``inputs`` are left out, as in
        :meth:`to_dict`, so the same answer found twice compares equal.
        """
        if not isinstance(other, Plan):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __hash__(self) -> int:
        """Consistent with ``==``: the hash of the JSON form."""
        return hash(self.to_json())


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return None
        return round(value, 4)
    return value


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def build_frames(data: ModelData, dec: Decisions, ev: Evaluation) -> dict[str, pl.DataFrame]:
    """The placements, pools, staffing and costs frames of a set of decisions."""
    kinds = {w.name: w.kind for w in data.workloads}
    units = DEMAND_UNITS_PER_GPU_PERCENT
    rows = []
    for (w, p, g), s in sorted(dec.shares.items()):
        if s <= 0:
            continue
        demand = data.combos[(w, p, g)].load(s)
        rows.append(
            {
                "workload": w,
                "kind": kinds[w],
                "pool": p,
                "platform": data.pool(p).platform,
                "gpu_type": g,
                "share": s / 100.0,
                "gpus": round(float(demand.max()) / units, 1),
                "gpu_hours_per_month": round(float(demand.mean()) / units * HOURS_PER_MONTH, 1),
                "spot_share": dec.spot.get((w, p, g), 0) / 100.0,
            }
        )
    placements = pl.DataFrame(rows, schema=_PLACEMENT_SCHEMA)
    keys = sorted({k for k, n in dec.nodes.items() if n > 0} | set(ev.placed_units))
    busy_by_pool = busy_gpus_by_pool(data, dec)
    pool_rows = []
    for p, g in keys:
        nodes = dec.nodes.get((p, g), 0)
        gpus = nodes * data.gpus_per_node[g]
        load = ev.placed_units.get((p, g), np.zeros(HOURS_PER_WEEK, dtype=np.int64)) / units
        burst = (
            ev.burst.get((p, g), np.zeros(HOURS_PER_WEEK, dtype=np.int64)) / DEMAND_UNITS_PER_GPU
        )
        provided = gpus + burst.mean()
        market = data.market(p, g)
        offer = market.baseline if market is not None else None
        owned = data.pool(p).owns(g)  # a cluster of today's own nodes: their capex is spent
        added = data.nodes_added(p, g, nodes)  # nodes it adds are bought as new ones are
        upfront_per_node = market.upfront_usd_per_node if market is not None else 0.0
        node_cents = data.nodes_cents(p, g, nodes) / nodes if nodes else data.node_cost(p, g)
        usd_per_gpu_hour = (
            node_cents / 100.0 / data.gpus_per_node[g] / HOURS_PER_MONTH
            if owned
            else (offer.usd_per_gpu_hour if offer else 0.0)
        )
        spot_units = sum(
            pct * float(data.combos[k].demand.mean())
            for k, pct in dec.spot.items()
            if k[1] == p and k[2] == g
        )
        pool_rows.append(
            {
                "pool": p,
                "platform": data.pool(p).platform,
                "gpu_type": g,
                "nodes": nodes,
                "gpus": gpus,
                "burst_gpu_hours": round(float(burst.sum()) * WEEKS_PER_MONTH, 1),
                "peak_gpus": round(float(load.max()), 1),
                "utilization": round(
                    float(busy_by_pool.get((p, g), np.zeros(1)).mean()) / provided, 4
                )
                if provided
                else 0.0,
                "sizing_ratio": round(float(load.mean()) / provided, 4) if provided else 0.0,
                "provider_class": "on_prem" if owned else (offer.provider_class if offer else ""),
                "provider": "today" if owned else (offer.provider if offer else ""),
                "term": "owned" if owned else (offer.term if offer else ""),
                "usd_per_gpu_hour": round(usd_per_gpu_hour, 4),
                "spot_gpu_hours": round(spot_units / units * HOURS_PER_MONTH, 1),
                "upfront_usd": data.nodes_bought(p, g, nodes) * upfront_per_node,
                "managed": p in dec.managed,
                "existing": data.pool(p).existing,
                "nodes_added": added,
            }
        )
    pools = pl.DataFrame(pool_rows, schema=_POOL_SCHEMA)
    staffing = staffing_frame(data, ev)
    return {
        "placements": placements,
        "pools": pools,
        "staffing": staffing,
        "costs": ev.costs_frame(),
        "transition": transition_frame(data, dec, ev),
    }


def staffing_frame(data: ModelData, ev: Evaluation) -> pl.DataFrame:
    """Per skill: staff, need, hires, people retrained in, time free to redeploy, payroll."""
    people = data.people
    have = {s: data.available_milli[s] + MILLI * ev.hires[s] for s in SKILLS}
    short = {s: max(0, ev.required_milli[s] - have[s]) for s in SKILLS}
    other = {a: b for a in SKILLS for b in SKILLS if a != b}
    idle = {s: max(0, have[s] - ev.required_milli[s] - short[other[s]]) / MILLI for s in SKILLS}
    return pl.DataFrame(
        {
            "skill": list(SKILLS),
            "available_fte": [data.available_milli[s] / MILLI for s in SKILLS],
            "required_fte": [ev.required_milli[s] / MILLI for s in SKILLS],
            "hires": [ev.hires[s] for s in SKILLS],
            "retrained_in": [ev.retrained.get((other[s], s), 0) for s in SKILLS],
            "idle_fte": [idle[s] for s in SKILLS],
            "payroll_usd_per_month": [
                (people.payroll_cents[s] + people.salary_cents[s] * ev.hires[s]) / 100.0
                if people is not None
                else 0.0
                for s in SKILLS
            ],
        },
        schema={
            "skill": pl.String,
            "available_fte": pl.Float64,
            "required_fte": pl.Float64,
            "hires": pl.Int64,
            "retrained_in": pl.Int64,
            "idle_fte": pl.Float64,
            "payroll_usd_per_month": pl.Float64,
        },
    )


def transition_frame(data: ModelData, dec: Decisions, ev: Evaluation) -> pl.DataFrame:
    """One row per workload: where it runs today, where the plan puts it, what a move costs."""
    people = data.people
    moves = people.moves if people is not None else {}
    horizon = people.horizon_months if people is not None else 0
    rows = []
    for w in data.workloads:
        pools = {data.pool(p) for (ww, p, _g), s in dec.shares.items() if ww == w.name and s}
        planned = sorted({pool.platform for pool in pools})
        mv = moves.get(w.name)
        moved = w.name in ev.moved
        retool = w.name in ev.retooled
        relocated = w.name in ev.relocated
        cents = mv.cents(moved, retool, relocated) if mv is not None else 0
        action = "move" if moved else ("relocate" if relocated else "keep")
        rows.append(
            {
                "workload": w.name,
                "today": mv.today if mv else "",
                "planned": ", ".join(planned),
                "today_cluster": (mv.cluster or "") if mv else "",
                "planned_clusters": ", ".join(sorted({p.cluster or p.name for p in pools})),
                "action": "new" if mv is None else action,
                "users": mv.users if mv else None,
                "retool": retool,
                "one_time_usd": cents * horizon / 100.0,
                "monthly_usd": cents / 100.0,
            }
        )
    return pl.DataFrame(rows, schema=TRANSITION_SCHEMA)


def investment(data: ModelData, dec: Decisions, ev: Evaluation) -> tuple[float, pl.DataFrame]:
    """The up-front outlay of a plan and its cumulative cash over the horizon.

    Outlay: Σ over the nodes bought (``ModelData.nodes_bought``) × (server + fabric share +
    storage share). Monthly cash is the evaluator's cash spend less the capital charge of the
    bought nodes (that charge stands for the outlay and resale, which the frame shows as they
    happen); a rolling lease's nodes keep theirs, the stand-in for the lease's monthly payment.
    A lease of today's cluster with an end date is paid in full until it ends and the nodes the
    plan keeps at market price after it; the evaluator's figure averages the two over the
    horizon.
    """
    upfront = capital = 0.0
    life = data.scenario.procurement.horizon_months
    for (p, g), nodes in dec.nodes.items():
        market = data.market(p, g)
        # Today's clusters are paid for or rented: only the nodes they grow by are bought.
        n = data.nodes_bought(p, g, nodes)
        if n <= 0 or market is None or market.onprem is None:
            continue
        upfront += n * market.onprem.upfront_usd
        capital += n * market.onprem.capital_usd_per_month
        life = market.onprem.life_months
    override = data.scenario.costs.residual_value_fraction
    curve = data.scenario.catalog.resale

    def resale_at(age: int) -> float:
        return override if override is not None else residual_fraction(curve, age)

    frame = cash_flow(
        upfront,
        ev.cash_cents / 100.0 - capital,
        data.scenario.procurement.horizon_months,
        life,
        resale_at,
        partial(_lease_adjustment, data, dec) if data.leases else None,
    )
    return upfront, frame


def _lease_adjustment(data: ModelData, dec: Decisions, month: int) -> float:
    """USD to add to the level monthly cash in ``month`` so that leases fall when they are paid."""
    cents = 0
    for lease in data.leases:
        # Nodes beyond the lease are bought at the market's price every month: no adjustment.
        used = min(data.cluster_nodes(dec.nodes, lease.pool, lease.gpu_type), lease.nodes)
        level = lease.committed_cents + used * lease.node_after_cents
        actual = (
            lease.nodes * lease.node_cents if month <= lease.months else used * lease.node_cents
        )
        cents += actual - level
    return cents / 100.0
