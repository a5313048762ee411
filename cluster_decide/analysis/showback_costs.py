"""Showback: a plan's monthly cost allocated to the workloads and teams that drive it.

The figure Slurm's ``sreport`` and OpenCost give after the fact, here before the money is
spent. The keys, stated so a review can argue with them:

- **Capacity** (baseline nodes and burst of each pool and GPU type) by the GPU-hours each
  placement takes there (SLO headroom and utilization included, as the plan sizes it). What no
  placement takes is **idle capacity**, its own line: the price of peaks, whole nodes and gangs.
- **People** (payroll, new hires, hiring fees and retraining) follow each pool's operations
  effort per skill; payroll no pool's effort takes is **capacity to redeploy**, an idle line of
  its own. Within a pool, ``staff_key`` splits them: ``gpu_hours`` (default) like the capacity a
  workload takes in the pool, ``equal`` evenly between the pool's workloads. A pool's
  **managed-service fee** and **build** follow the same key.
- **Committed leases** of today's clusters follow the GPU-hours each workload takes in the leased
  cluster; a lease the plan leaves unused is idle capacity.
- **Moves** (migration and users' retraining) go straight to the workload that moves.
- **Capability gaps, interface friction and split overhead** belong to the placement that
  causes them, so go straight to its workload.

The lines add up to the plan's total monthly cost.
"""

from __future__ import annotations

from collections import defaultdict

import polars as pl

from cluster_decide.base.constants import HOURS_PER_WEEK, SKILLS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, ModelData, prepare
from cluster_decide.planning.evaluation import evaluate_decisions
from cluster_decide.planning.plan import Plan

__all__ = ["IDLE", "SHOWBACK_SCHEMA", "STAFF_KEYS", "showback", "showback_by_team"]

IDLE = "(idle capacity)"
"""The workload and team name of capacity no placement takes."""
STAFF_KEYS = ("gpu_hours", "equal")
SHOWBACK_SCHEMA = {
    "workload": pl.String,
    "team": pl.String,
    "pool": pl.String,
    "component": pl.String,
    "key": pl.String,
    "monthly_usd": pl.Float64,
}
"""Columns of :func:`showback`: one row per workload, pool and cost component; ``key`` says how
the amount was allocated (``gpu_hours``, ``equal``, ``direct`` or ``idle``)."""


def _pool_effort_milli(data: ModelData, pool: str, nodes: int, managed: bool) -> dict[str, int]:
    """Thousandths of an FTE of each skill one open pool takes."""
    people = data.people
    out = {}
    for skill in SKILLS:
        fixed = data.base_milli[(pool, skill)] + data.addon_milli[(pool, skill)]
        if managed and people is not None and pool in people.managed:
            fixed = people.managed[pool].base_milli[skill]
        out[skill] = fixed + data.per_node_milli[(pool, skill)] * nodes
    return out


def showback(scn: Scenario, plan: Plan, staff_key: str = "gpu_hours") -> pl.DataFrame:
    """Allocate ``plan``'s monthly cost to workloads and teams (see the module docstring)."""
    if staff_key not in STAFF_KEYS:
        raise ValueError(f"unknown staff_key '{staff_key}' (expected one of {STAFF_KEYS})")
    if not plan.feasible:
        return pl.DataFrame(schema=SHOWBACK_SCHEMA)
    data = prepare(scn)
    dec = plan.decisions()
    ev = evaluate_decisions(data, dec)
    teams = {w.name: w.team or "(no team)" for w in data.workloads}
    rows: list[dict[str, object]] = []

    def add(workload: str, pool: str, component: str, key: str, cents: float) -> None:
        if cents:
            team = IDLE if workload == IDLE else teams[workload]
            rows.append(
                {
                    "workload": workload,
                    "team": team,
                    "pool": pool,
                    "component": component,
                    "key": key,
                    "monthly_usd": cents / 100.0,
                }
            )

    # Capacity of each (pool, GPU type), by GPU-hours; the rest is idle.
    used: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for (w, p, g), s in dec.shares.items():
        own = s - dec.spot.get((w, p, g), 0)
        if own > 0:
            used[(p, g)][w] = float(data.combos[(w, p, g)].load(own).sum())
    # Spot is bought for one workload's own need: it goes to that workload directly.
    for (w, p, _g), pct in sorted(dec.spot.items()):
        if pct > 0:
            add(w, p, "spot", "direct", float(data.spot_cents[(w, p, _g)] * pct))
    # People, fees and builds follow all the work a pool hosts, its spot share included.
    used_units: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for (w, p, g), s in dec.shares.items():
        if s > 0:
            used_units[(p, g)][w] = float(data.combos[(w, p, g)].load(s).sum())
    for p, g in sorted(set(used) | {k for k, n in dec.nodes.items() if n}):
        burst = ev.burst.get((p, g))
        burst_units = float(burst.sum()) if burst is not None else 0.0
        node_cents = float(data.nodes_cents(p, g, dec.nodes.get((p, g), 0)))
        burst_cents = float(int(data.burst_cost(p, g) * burst_units))
        # share-percent × tenths of a GPU × hours of the week, like ``used``
        baseline = (
            data.gpus_per_node[g]
            * dec.nodes.get((p, g), 0)
            * HOURS_PER_WEEK
            * DEMAND_UNITS_PER_GPU
            * 100
        )
        taken = sum(used[(p, g)].values())
        # Burst is bought only for load above the baseline, so idle hours are baseline hours.
        idle_units = min(baseline, max(0.0, baseline + 100 * burst_units - taken))
        idle_cents = node_cents * idle_units / baseline if baseline else 0.0
        add(IDLE, p, "gpu_capacity", "idle", idle_cents)
        for w, units in sorted(used[(p, g)].items()):
            add(w, p, "gpu_capacity", "gpu_hours", (node_cents - idle_cents) * units / taken)
            add(w, p, "burst", "gpu_hours", burst_cents * units / taken)

    # A committed lease follows the work its cluster hosts; a lease the plan leaves unused is idle.
    # The cluster runs as one pool, with its batch add-on or without: the one that hosts work.
    for lease in data.leases:
        pool, hosted = lease.pool, {}
        for (p, _g), by_w in used.items():
            if data.pool(p).cluster == lease.pool and by_w:
                pool, hosted = p, by_w
        total_units = sum(hosted.values())
        if not total_units:
            add(IDLE, pool, "leases", "idle", float(lease.committed_cents))
        for w, units in sorted(hosted.items()):
            add(w, pool, "leases", "gpu_hours", lease.committed_cents * units / total_units)

    # People follow each pool's effort per skill; what no pool takes is capacity to redeploy.
    people = data.people
    assert people is not None
    effort: dict[str, dict[str, int]] = {}
    for p in ev.open_pools:
        nodes = sum(n for (pp, _g), n in dec.nodes.items() if pp == p)
        effort[p] = _pool_effort_milli(data, p, nodes, p in dec.managed)
    people_cents = {
        skill: people.payroll_cents[skill]
        + (people.salary_cents[skill] + people.hire_fee_cents) * ev.hires[skill]
        + sum(
            people.retrain_cents.get((skill, t), 0) * r
            for (ss, t), r in ev.retrained.items()
            if ss == skill
        )
        for skill in SKILLS
    }
    component_cents = {
        skill: {
            "staff": people.payroll_cents[skill],
            "new_hires": people.salary_cents[skill] * ev.hires[skill],
            "hiring": people.hire_fee_cents * ev.hires[skill],
            "retraining": sum(
                people.retrain_cents.get((a, b), 0) * r
                for (a, b), r in ev.retrained.items()
                if a == skill
            ),
        }
        for skill in SKILLS
    }
    # A retrained engineer'skill time counts where it is spent: cover each skill'skill shortfall first.
    have = {skill: data.available_milli[skill] + 1000 * ev.hires[skill] for skill in SKILLS}
    capacity = {skill: max(have[skill], ev.required_milli[skill]) for skill in SKILLS}
    for skill in SKILLS:
        total_cents = sum(component_cents[skill].values())
        assert total_cents == people_cents[skill]
        if not capacity[skill]:
            continue
        spent = 0
        for p, by_skill in sorted(effort.items()):
            milli = by_skill[skill]
            if not milli:
                continue
            spent += milli
            weights = _hosted(used_units, p, staff_key)
            total = sum(weights.values())
            for comp, cents in component_cents[skill].items():
                part = cents * milli / capacity[skill]
                for w, weight in sorted(weights.items()):
                    add(w, p, comp, staff_key, part * weight / total if total else 0.0)
        idle = capacity[skill] - spent
        if idle > 0:
            for comp, cents in component_cents[skill].items():
                add(IDLE, "", comp, "idle", cents * idle / capacity[skill])
    for p in sorted(effort):
        weights = _hosted(used_units, p, staff_key)
        total = sum(weights.values())
        fee = people.managed[p].cluster_cents if p in dec.managed and p in people.managed else 0
        build = (
            people.managed[p].build_cents
            if p in dec.managed and p in people.managed
            else people.build_cents.get(p, 0)
        )
        for w, weight in sorted(weights.items()):
            share = weight / total if total else 0.0
            add(w, p, "managed_fees", staff_key, fee * share)
            add(w, p, "cluster_build", staff_key, build * share)
    for w in sorted(set(ev.moved) | set(ev.relocated)):
        cents = people.moves[w].cents(w in ev.moved, w in ev.retooled, w in ev.relocated)
        add(w, "", "migration", "direct", float(cents))

    # Estimates caused by one placement go straight to its workload.
    parts: dict[str, int] = defaultdict(int)
    for (w, p, g), pct in sorted(dec.shares.items()):
        if pct > 0:
            combo = data.combos[(w, p, g)]
            add(w, p, "capability_gaps", "direct", float(combo.gap_cents_per_pct * pct))
            add(w, p, "interface_friction", "direct", float(combo.friction_cents_per_pct * pct))
            parts[w] += 1
    for w, n in sorted(parts.items()):
        add(w, "", "split_overhead", "direct", float(data.split_cents * (n - 1)))
    return pl.DataFrame(rows, schema=SHOWBACK_SCHEMA)


def _hosted(
    used: dict[tuple[str, str], dict[str, float]], pool: str, staff_key: str
) -> dict[str, float]:
    """Weights of the workloads a pool hosts: their GPU-hours there, or 1 each (``equal``)."""
    hosted: dict[str, float] = defaultdict(float)
    for (p, _g), by_w in used.items():
        if p == pool:
            for w, units in by_w.items():
                hosted[w] += units
    if staff_key == "equal":
        return dict.fromkeys(hosted, 1.0)
    return dict(hosted)


def showback_by_team(frame: pl.DataFrame) -> pl.DataFrame:
    """A :func:`showback` frame summed per team: team, monthly_usd, share (0-1), largest first."""
    out = frame.group_by("team").agg(pl.col("monthly_usd").sum())
    total = out["monthly_usd"].sum()
    return out.with_columns((pl.col("monthly_usd") / total).alias("share")).sort(
        "monthly_usd", "team", descending=[True, False]
    )
