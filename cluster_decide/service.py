"""Predicted service levels of a plan beside each workload's SLO.

Real-time inference: the p99 latency (Erlang-C queue wait + service time) at the busiest hour
with the replicas the plan provides for it. Batch classes are sized by the documented
utilization bound for now (``docs/model.md``), so their waits are not predicted here yet.
"""

from __future__ import annotations

import math

import polars as pl

from cluster_decide.evaluate import Decisions
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, ModelData
from cluster_decide.plan import SERVICE_LEVEL_SCHEMA
from cluster_decide.queueing import latency_quantile
from cluster_decide.scenario import RealtimeWorkload

__all__ = ["service_levels"]


def service_levels(data: ModelData, dec: Decisions) -> pl.DataFrame:
    """One row per placed real-time workload: workload, metric, predicted, target, met."""
    cat = data.scenario.catalog
    workloads = {w.name: w for w in data.workloads}
    rows: list[dict[str, object]] = []
    for (w_name, p, g), s in sorted(dec.shares.items()):
        w = workloads[w_name]
        if s <= 0 or not isinstance(w, RealtimeWorkload):
            continue
        ratio = cat.gpus[w.gpu_types[0]].inference_speed / cat.gpus[g].inference_speed
        util = data.platform(p).utilization[w.kind]
        peak_units = float(data.combos[(w_name, p, g)].demand.max())
        replicas = max(1, math.floor(peak_units / DEMAND_UNITS_PER_GPU * util * s / 100.0 + 1e-6))
        rate = w.peak_requests_per_second * s / 100.0
        p99_ms = 1000.0 * latency_quantile(
            replicas, rate, w.gpu_seconds_per_request * ratio, 0.99, w.concurrency_per_gpu
        )
        rows.append(
            {
                "workload": w_name,
                "metric": "p99_latency_ms",
                "predicted": p99_ms,
                "target": w.p99_latency_ms,
                "met": bool(p99_ms <= w.p99_latency_ms * (1 + 1e-9)),
            }
        )
    return pl.DataFrame(rows, schema=SERVICE_LEVEL_SCHEMA)
