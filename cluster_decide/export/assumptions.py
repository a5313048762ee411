"""The figures that drive a plan's cost, each with its source, date and confidence.

Values are the ones the model used (the scenario's where it overrides the catalog, marked
"scenario file"), formatted by the exports' formatters so the assumptions slide and the rest
of the deck print a figure alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

import polars as pl

from cluster_decide.export.words import effort, skill, text_table, usd
from cluster_decide.export.words import platform as platform_label
from cluster_decide.inputs.datasources import load_facts
from cluster_decide.inputs.market import TERM_WORDS, Market, resolve_markets
from cluster_decide.inputs.offers import Offer
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan

__all__ = ["ASSUMPTION_COLUMNS", "key_assumptions"]

ASSUMPTION_COLUMNS: Final = (
    "figure",
    "value",
    "unit",
    "source",
    "date",
    "confidence",
    "note",
    "key",
)
"""Columns of :func:`key_assumptions`."""

_COMPONENT_WORDS: Final = {
    "base": "base team",
    "per_100_nodes": "per 100 nodes",
    "addon": "batch add-on upkeep",
    "integration": "integration",
}


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


def _offer_row(offer: Offer, what: str) -> dict[str, Any]:
    """A GPU price the plan pays, cited from ``offers.csv``.

    The fact's key names the GPU, seller class, seller and term; ``what`` is the label, with
    ``{gpu}``, ``{provider}`` and ``{term}`` filled in.
    """
    o = offer
    return _fact_row(
        f"offers:{o.gpu}:{o.provider_class}:{o.provider}:{o.term}",
        what.format(gpu=o.gpu, provider=o.provider, term=TERM_WORDS.get(o.term, o.term)),
        o.usd_per_gpu_hour,
        "per GPU-hour",
    )


def _pool_offer(pool: Mapping[str, Any]) -> Offer:
    """The offer a pool row (``plan.pools``) is rented on, at the price the plan pays."""
    return Offer(
        pool["gpu_type"],
        pool["provider_class"],
        pool["provider"],
        pool["term"],
        float(pool["usd_per_gpu_hour"]),
        True,
    )


def _price_rows(plan: Plan, scenario: Scenario | None) -> list[dict[str, Any]]:
    """The GPU prices behind the plan, each cited once.

    Per pool GPU type: the offer its nodes are rented on (or the node price of owned nodes),
    the on-demand offer it bursts on and the spot offers its spot capacity uses.
    """
    rows: list[dict[str, Any]] = []
    gpu_types = plan.pools.filter(pl.col("gpus") > 0)["gpu_type"].unique().sort().to_list()
    markets = resolve_markets(scenario, gpu_types) if scenario is not None else {}
    scale = scenario.procurement.gpu_price_scale if scenario is not None else 1.0
    for r in plan.pools.sort(["gpu_type", "pool"]).iter_rows(named=True):
        g = r["gpu_type"]
        if r["gpus"] > 0 and r["term"] == "owned" and scenario is not None:
            node = scenario.catalog.gpus[g].node_capex_usd * scale
            rows.append(
                _fact_row(f"gpus:{g}:node_capex_usd", f"{g} node price", node, "per node", usd)
            )
        elif r["gpus"] > 0:
            rows.append(_offer_row(_pool_offer(r), "{gpu} from {provider}, {term}"))
        market = markets.get(g)
        if market is None:
            continue
        if r["burst_gpu_hours"] > 0 and market.burst is not None:
            rows.append(_offer_row(market.burst, "{gpu} bursts from {provider}, {term}"))
        if r["spot_gpu_hours"] > 0:
            rows += [
                _offer_row(o, "{gpu} spot from {provider}")
                for o in _spot_offers(plan, scenario, market)
            ]
    unique = {row["key"]: row for row in rows}
    return list(unique.values())


def _spot_offers(plan: Plan, scenario: Scenario | None, market: Market) -> list[Offer]:
    """The spot offers the plan's spot work on ``market``'s GPU type uses.

    Multi-node gangs take the cheapest multi-node offer, single-node work the cheapest of all,
    as the model prices them.
    """
    if scenario is None:
        return []
    gpn = scenario.catalog.gpus[market.gpu].gpus_per_node
    spot = plan.placements.filter((pl.col("gpu_type") == market.gpu) & (pl.col("spot_share") > 0))
    out: list[Offer] = []
    for name in spot["workload"].unique().sort():
        w = scenario.workload(name)
        gang = int(getattr(w, "gpus_per_job", getattr(w, "gpus_per_user", 1)))
        offer = market.spot_for(gang, gpn)
        if offer is not None and offer not in out:
            out.append(offer)
    return out


def key_assumptions(plan: Plan, scenario: Scenario | None = None) -> pl.DataFrame:
    """The figures that drive this plan's cost most, each with its source, date and confidence.

    Staff effort for the platforms the plan opens, what staff cost, and the GPU prices it pays:
    the offer each pool's nodes are rented on (seller and term) or the node price of owned
    nodes, the on-demand offer where it bursts and the spot offers where it runs spot. Values
    are the ones the model used: the scenario's where it overrides the catalog (source
    "scenario file").
    Columns: figure, value, unit, source, date, confidence, note, key.
    """
    from cluster_decide.inputs.catalog import load_catalog

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
                f"{platform_label(platform)}: {skill(skill_key)} staff, "
                f"{_COMPONENT_WORDS.get(component, component)}"
            )
            key = f"staffing:{platform}:{skill_key}:{component}"
            rows.append(_fact_row(key, label, amount, "FTE", effort))
    rows += _price_rows(plan, scenario)
    if plan.staffing.height and plan.staffing["hires"].sum() > 0:
        cost = (
            scenario.hire_one_time_cost_usd
            if scenario is not None
            else catalog.costs.hire_one_time_cost_usd
        )
        rows.append(
            _fact_row("costs:hire_one_time_cost_usd", "One-off cost of a hire", cost, "once", usd)
        )
    return text_table(rows, ASSUMPTION_COLUMNS)
