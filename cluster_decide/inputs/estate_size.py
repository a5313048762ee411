"""An upper bound on an estate's size from a scenario's figures alone, before any model is built.

Values each in range can still combine into an estate no one runs. The model counts money in
cents and GPUs in integers; a billion GPUs at a hundred times list price would overflow its
arithmetic and be reported as "infeasible". The bound here is each workload's peak GPUs on its
slowest allowed type, each priced at the dearest of its types (rented on demand or bought over
the horizon). It reads plain workload mappings (scenario keys), so the scenario check and
`ingest`'s check of derived workloads (which never loads the scenario model) share it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cluster_decide.base.constants import DEADLINE_KINDS
from cluster_decide.inputs.catalog import Catalog, GpuType

__all__ = ["MAX_ESTATE_GPUS", "MAX_ESTATE_USD_PER_MONTH", "size_problem"]

MAX_ESTATE_GPUS = 5_000_000
"""The most GPUs an estate may need at peak: fifty times the largest estates of 100,000 GPUs."""
MAX_ESTATE_USD_PER_MONTH = 1e12
"""The most an estate may cost a month ($1 trillion): the model counts cents in 64-bit integers
and weighs them against tie-breaks, so this keeps its objective far from overflowing."""

_HOURS = 730.0
_GANG_KINDS = ("distributed_training", "fine_tuning", *DEADLINE_KINDS)


def _peak_gpus(w: Mapping[str, Any], types: Sequence[GpuType], catalog: Catalog) -> float:
    """A workload's GPUs at its profile's peak, on the slowest of its GPU types."""
    profile = w.get("profile", "flat")
    shape = np.asarray(
        catalog.profile(profile) if isinstance(profile, str) else profile, dtype=float
    )
    peak = float(shape.max() / shape.mean())
    if w["kind"] in _GANG_KINDS:
        slowest = min(g.training_speed for g in types)
        return max(w["gpu_hours_per_month"] / _HOURS * peak / slowest, w["gpus_per_job"])
    if w["kind"] == "experimentation":
        return float(w["concurrent_users"] * w["gpus_per_user"])
    slowest = min(g.inference_speed for g in types)
    return float(w["peak_requests_per_second"] * w["gpu_seconds_per_request"] / slowest)


def size_problem(
    workloads: Sequence[Mapping[str, Any]],
    catalog: Catalog,
    *,
    price_scale: float = 1.0,
    horizon_months: float = 36,
) -> tuple[str, str, str] | None:
    """(key, problem, fix) when the estate is too large for the model to count; else None.

    `workloads` hold scenario keys, each value already in its range.
    """

    def month_usd(g: GpuType) -> float:
        rent = max(g.usd_per_gpu_hour_on_demand, g.usd_per_gpu_hour_reserved) * _HOURS
        return max(rent, g.node_capex_usd / horizon_months / g.gpus_per_node) * price_scale

    total_gpus = total_usd = 0.0
    for w in workloads:
        types = [catalog.gpus[g] for g in w["gpu_types"]]
        gpus = _peak_gpus(w, types, catalog)
        total_gpus += gpus
        total_usd += gpus * max(month_usd(g) for g in types)
    if total_gpus > MAX_ESTATE_GPUS:
        return (
            "workloads",
            f"together they need up to about {total_gpus:,.0f} GPUs at peak, more than the "
            f"{MAX_ESTATE_GPUS:,} an estate may plan",
            "check the demand figures and their units: GPU-hours a month, users, requests a second",
        )
    if total_usd > MAX_ESTATE_USD_PER_MONTH:
        return (
            "",
            f"the estate could cost up to about ${total_usd:,.0f} a month, more than the "
            f"${MAX_ESTATE_USD_PER_MONTH:,.0f} the model can count exactly",
            "check the GPU prices, procurement.gpu_price_scale and horizon_months",
        )
    return None
