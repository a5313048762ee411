"""Showback: a plan's monthly cost allocated to the workloads and teams that drive it.

The figure Slurm's ``sreport`` and OpenCost give after the fact, here before the money is
spent. The keys, stated so a review can argue with them:

- **Capacity** (baseline nodes and burst of each pool and GPU type) by the GPU-hours each
  placement takes there (SLO headroom and utilization included, as the plan sizes it). What no
  placement takes is **idle capacity**, its own line: the price of peaks, whole nodes and gangs.
- **Staff and add-ons** of each pool (its base, add-on and per-node effort at the skill's loaded
  cost) by ``staff_key``: ``gpu_hours`` (default) splits them like the capacity a workload takes
  in the pool, ``equal`` splits them evenly between the pool's workloads. **Hiring** follows each
  skill's staff cost.
- **Capability gaps, interface friction and split overhead** belong to the placement that
  causes them, so go straight to its workload.

The lines add up to the plan's total monthly cost.
"""

from __future__ import annotations

from collections import defaultdict

import polars as pl

from cluster_decide.constants import HOURS_PER_WEEK, SKILLS
from cluster_decide.evaluate import evaluate_decisions
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, ModelData, prepare
from cluster_decide.plan import Plan
from cluster_decide.scenario import Scenario

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


def _pool_staff_cents(data: ModelData, pool: str, nodes: int) -> dict[str, float]:
    """Cents a month of each skill's effort for one open pool."""
    return {
        s: data.staff_cents_per_milli[s]
        * (
            data.base_milli[(pool, s)]
            + data.addon_milli[(pool, s)]
            + data.per_node_milli[(pool, s)] * nodes
        )
        for s in SKILLS
    }


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
        if s > 0:
            used[(p, g)][w] = float(data.combos[(w, p, g)].load(s).sum())
    for p, g in sorted(set(used) | {k for k, n in dec.nodes.items() if n}):
        burst = ev.burst.get((p, g))
        burst_units = float(burst.sum()) if burst is not None else 0.0
        node_cents = float(data.node_cents[g] * dec.nodes.get((p, g), 0))
        burst_cents = float(int(data.burst_cents[g] * burst_units))
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

    # Staff and add-ons of each open pool, by the stated key; hiring by each skill's staff cost.
    staff_by_skill: dict[str, float] = defaultdict(float)
    per_pool: dict[str, dict[str, float]] = {}
    for p in ev.open_pools:
        nodes = sum(n for (pp, _g), n in dec.nodes.items() if pp == p)
        per_pool[p] = _pool_staff_cents(data, p, nodes)
        for skill, cents in per_pool[p].items():
            staff_by_skill[skill] += cents
    hires_by_skill = {skill: data.hire_cents * ev.hires[skill] for skill in SKILLS}
    for p, by_skill in sorted(per_pool.items()):
        hosted: dict[str, float] = defaultdict(float)
        for (p2, _g), by_w in used.items():
            if p2 == p:
                for w, units in by_w.items():
                    hosted[w] += units
        if staff_key == "equal":
            hosted = defaultdict(float, dict.fromkeys(hosted, 1.0))
        total = sum(hosted.values())
        for skill, cents in by_skill.items():
            addon = data.staff_cents_per_milli[skill] * data.addon_milli[(p, skill)]
            hire = (
                hires_by_skill[skill] * cents / staff_by_skill[skill]
                if staff_by_skill[skill]
                else 0.0
            )
            for w, weight in sorted(hosted.items()):
                share = weight / total if total else 0.0
                add(w, p, "staff", staff_key, (cents - addon) * share)
                add(w, p, "addon_integration", staff_key, addon * share)
                add(w, p, "hiring", staff_key, hire * share)

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


def showback_by_team(frame: pl.DataFrame) -> pl.DataFrame:
    """A :func:`showback` frame summed per team: team, monthly_usd, share (0-1), largest first."""
    out = frame.group_by("team").agg(pl.col("monthly_usd").sum())
    total = out["monthly_usd"].sum()
    return out.with_columns((pl.col("monthly_usd") / total).alias("share")).sort(
        "monthly_usd", "team", descending=[True, False]
    )
