"""The Plan: what the optimizer recommends, as frozen tidy frames, sentences and stable JSON.

Frames and their columns (units in the names):

- ``placements``: workload, kind, pool, platform, gpu_type, share (0-1), gpus (peak GPUs this
  share needs, SLO headroom included), gpu_hours_per_month (capacity it takes).
- ``pools``: pool, platform, gpu_type, nodes, gpus (baseline), burst_gpu_hours (per month),
  peak_gpus (largest hourly need), utilization (busy GPU-hours over provisioned GPU-hours, 0-1:
  what an operator's dashboard shows), sizing_ratio (average sized need over provisioned
  capacity, 0-1: how much of what is paid for the targets call for; the rest is whole nodes).
- ``staffing``: skill, available_fte, required_fte, hires, idle_fte.
- ``costs``: component, monthly_usd, cash (counts against a budget), meaning.
- ``service_levels``: workload, pool, gpu_type, metric, predicted, target, met (one row per
  placed share; see :mod:`cluster_decide.service`).
- ``relaxations`` (infeasible plans): change, amount, unit, monthly_usd, sentence.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from cluster_decide.constants import HOURS_PER_MONTH, HOURS_PER_WEEK, SKILLS
from cluster_decide.evaluate import Decisions, Evaluation
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, ModelData
from cluster_decide.service import SERVICE_LEVEL_SCHEMA, busy_gpus_by_pool

if TYPE_CHECKING:
    from cluster_decide.scenario import Scenario

__all__ = ["RELAXATION_SCHEMA", "SERVICE_LEVEL_SCHEMA", "Plan", "Status", "build_frames"]

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
}


class Status(str, Enum):
    """How the solve ended."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"
    """No plan was found within the time limit: not a verdict on the scenario (give it more time)."""

    def __str__(self) -> str:
        return self.value


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
    inputs: Scenario | None = field(default=None, repr=False, compare=False)
    """The scenario this plan answers (not part of the JSON), so the plan can be simulated or exported."""

    @property
    def feasible(self) -> bool:
        """Whether the plan can be carried out (optimal or feasible)."""
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)

    def decisions(self) -> Decisions:
        """The decisions this plan stands for, for :func:`cluster_decide.evaluate`."""
        shares = {
            (r["workload"], r["pool"], r["gpu_type"]): round(r["share"] * 100)
            for r in self.placements.iter_rows(named=True)
        }
        nodes = {
            (r["pool"], r["gpu_type"]): int(r["nodes"]) for r in self.pools.iter_rows(named=True)
        }
        return Decisions(shares=shares, nodes=nodes)

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
            "explanations": list(self.explanations),
        }

    def to_json(self) -> str:
        """Stable, deterministic JSON (sorted keys, rounded numbers, no timestamps)."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


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
    units = DEMAND_UNITS_PER_GPU * 100
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
            }
        )
    pools = pl.DataFrame(pool_rows, schema=_POOL_SCHEMA)
    staffing = pl.DataFrame(
        {
            "skill": list(SKILLS),
            "available_fte": [data.available_milli[s] / MILLI for s in SKILLS],
            "required_fte": [ev.required_milli[s] / MILLI for s in SKILLS],
            "hires": [ev.hires[s] for s in SKILLS],
            "idle_fte": [
                max(
                    0.0,
                    (data.available_milli[s] + MILLI * ev.hires[s] - ev.required_milli[s]) / MILLI,
                )
                for s in SKILLS
            ],
        },
        schema={
            "skill": pl.String,
            "available_fte": pl.Float64,
            "required_fte": pl.Float64,
            "hires": pl.Int64,
            "idle_fte": pl.Float64,
        },
    )
    return {
        "placements": placements,
        "pools": pools,
        "staffing": staffing,
        "costs": ev.costs_frame(),
    }
