"""The figures that drive a plan's cost, each with its source, date and confidence.

Values are the ones the model used (the scenario's where it overrides the catalog, marked
"scenario file"), formatted by the exports' formatters so the assumptions slide and the rest
of the deck print a figure alike.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

import polars as pl

from cluster_decide.charts import PLATFORM_LABELS
from cluster_decide.datasources import load_facts
from cluster_decide.export.words import effort, skill, usd
from cluster_decide.plan import Plan
from cluster_decide.scenario import Scenario

__all__ = ["key_assumptions"]

_COMPONENT_WORDS: Final = {
    "base": "base team",
    "per_100_nodes": "per 100 nodes",
    "addon": "batch add-on upkeep",
    "integration": "integration",
}


def _platform(platform: str) -> str:
    return PLATFORM_LABELS.get(platform, platform)


@lru_cache(maxsize=1)
def _facts() -> dict[str, dict[str, str]]:
    return {r["key"]: r for r in load_facts().iter_rows(named=True)}


def _price(value: float) -> str:
    return f"${value:,.2f}"


def _fact_row(key: str, label: str, value: float, unit: str, fmt: Any = _price) -> dict[str, Any]:
    fact = _facts().get(key, {})
    shipped = fact.get("value", "")
    try:
        same = shipped != "" and abs(float(shipped) - value) < 1e-9
    except ValueError:
        same = False
    return {
        "figure": label,
        "value": fmt(value),
        "unit": unit,
        "source": fact.get("source", "") if same else "scenario file",
        "date": fact.get("date", "") if same else "",
        "confidence": fact.get("confidence", "") if same else "scenario",
        "note": fact.get("note", "") if same else "Set in the scenario, overriding the catalog.",
        "key": key,
    }


def key_assumptions(plan: Plan, scenario: Scenario | None = None) -> pl.DataFrame:
    """The figures that drive this plan's cost most, each with its source, date and confidence.

    Staff effort for the platforms the plan opens, what staff cost, and the GPU prices of the
    types it buys (reserved or capex per node, on-demand where it bursts). Values are the ones
    the model used: the scenario's where it overrides the catalog (source "scenario file").
    Columns: figure, value, unit, source, date, confidence, note, key.
    """
    from cluster_decide.catalog import load_catalog

    catalog = scenario.catalog if scenario is not None else load_catalog()
    rows: list[dict[str, Any]] = []
    for skill_key in ("hpc", "kubernetes"):
        if plan.staffing.filter(pl.col("skill") == skill_key)["required_fte"].sum() <= 0:
            continue
        label = skill(skill_key)
        key = f"costs:{skill_key}_loaded_cost_usd_per_year"
        cost = (
            scenario.loaded_cost_usd_per_year(skill_key)
            if scenario is not None
            else float(getattr(catalog.costs, f"{skill_key}_loaded_cost_usd_per_year"))
        )
        rows.append(_fact_row(key, f"Loaded cost, {label} engineer", cost, "a year", usd))
    platforms = plan.pools["platform"].unique().sort().to_list()
    for platform in platforms:
        kind = catalog.platforms[platform]
        for (skill_key, component), amount in sorted(kind.staffing.items()):
            if amount <= 0:
                continue
            label = (
                f"{_platform(platform)}: {skill(skill_key)} staff, "
                f"{_COMPONENT_WORDS.get(component, component)}"
            )
            key = f"staffing:{platform}:{skill_key}:{component}"
            rows.append(_fact_row(key, label, amount, "FTE", effort))
    on_prem = scenario is not None and scenario.procurement.mode == "on_prem"
    scale = scenario.procurement.gpu_price_scale if scenario is not None else 1.0
    for r in (
        plan.pools.group_by("gpu_type")
        .agg(pl.col("gpus").sum(), pl.col("burst_gpu_hours").sum())
        .sort("gpu_type")
        .iter_rows(named=True)
    ):
        g = r["gpu_type"]
        gpu = catalog.gpus[g]
        if r["gpus"] > 0 and on_prem:
            rows.append(
                _fact_row(
                    f"gpus:{g}:node_capex_usd",
                    f"{g} node price",
                    gpu.node_capex_usd * scale,
                    "per node",
                    usd,
                )
            )
        elif r["gpus"] > 0:
            rows.append(
                _fact_row(
                    f"gpus:{g}:usd_per_gpu_hour_reserved",
                    f"{g} reserved price",
                    gpu.usd_per_gpu_hour_reserved * scale,
                    "per GPU-hour",
                )
            )
        if r["burst_gpu_hours"] > 0:
            rows.append(
                _fact_row(
                    f"gpus:{g}:usd_per_gpu_hour_on_demand",
                    f"{g} on-demand price",
                    gpu.usd_per_gpu_hour_on_demand * scale,
                    "per GPU-hour",
                )
            )
    if plan.staffing.height and plan.staffing["hires"].sum() > 0:
        cost = (
            scenario.hire_one_time_cost_usd
            if scenario is not None
            else catalog.costs.hire_one_time_cost_usd
        )
        rows.append(
            _fact_row("costs:hire_one_time_cost_usd", "One-off cost of a hire", cost, "once", usd)
        )
    schema = dict.fromkeys(
        ("figure", "value", "unit", "source", "date", "confidence", "note", "key"), pl.String
    )
    return pl.DataFrame(rows, schema=schema)
