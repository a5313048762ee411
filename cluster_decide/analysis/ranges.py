"""How far each uncertain input may plausibly be off, from the catalog's own confidence.

The uncertainty sweep of :func:`cluster_decide.analysis.uncertainty_samples.default_distributions`
moves every input by a similar amount. A recommendation should instead move each input by what
is actually known about it:

- **GPU prices** by the confidence the catalog records for the price rows the scenario can
  pay (reserved hourly prices in the cloud, node capex on premises), the widest among the GPU
  types its workloads may use. A price the scenario overrides is the estate's own quote.
- **Demand** per workload kind by how far a one-year forecast of that kind typically strays
  (an assumption, reasoned per kind below: the scenario's demand is the estate's forecast, so
  the catalog has no confidence for it).
- **Staff** by availability (leave, sickness, vacancies) and **hiring** by its success rate
  (assumptions, as in the default sweep).

:func:`input_ranges` lists them as a tidy frame (what a review reads);
:func:`catalog_distributions` gives the same ranges as scipy.stats multipliers for
:func:`~cluster_decide.analysis.uncertainty_samples.uncertainty`.
"""

from __future__ import annotations

import math
from typing import Final

import polars as pl
from scipy import stats

from cluster_decide.analysis.inputs import input_label
from cluster_decide.analysis.uncertainty_samples import Distribution
from cluster_decide.base.constants import SKILLS, WORKLOAD_KINDS
from cluster_decide.inputs.datasources import CONFIDENCE_LEVELS, load_facts
from cluster_decide.inputs.scenario import Scenario

__all__ = [
    "DEMAND_P95",
    "PRICE_HALF_WIDTH",
    "RANGES_SCHEMA",
    "catalog_distributions",
    "input_ranges",
]

PRICE_HALF_WIDTH: Final = {"high": 0.05, "medium": 0.10, "low": 0.20, "assumption": 0.35}
"""Half-width of the uniform GPU-price multiplier for each catalog confidence level.

Calibrated on the catalog's own notes: *high* rows are published list prices (a negotiated
discount moves them a few percent); *medium* rows are secondary sources or quotes that agree
within about 10% (the H100 node quotes span $270-317k); *low* rows are derived with a stated
band (reserved = on-demand less a 30-50% discount, i.e. 0.5-0.7 × on-demand, ±17% around 0.6);
*assumption* rows are estimates whose notes give ±20-40% (the H200 node).
"""

OVERRIDE_CONFIDENCE: Final = "medium"
"""Confidence given to a GPU price the scenario overrides: the estate's own quote."""

DEMAND_P95: Final = {
    "distributed_training": 1.4,
    "fine_tuning": 1.5,
    "experimentation": 1.25,
    "batch_inference": 1.4,
    "pipeline": 1.3,
    "realtime_inference": 1.8,
}
"""The 95th-percentile demand multiplier a year ahead, per kind (an assumption; the 5th is its
reciprocal, so the range is symmetric in ratio). Pre-training follows a research roadmap but
moves in steps when a model size changes (×1.4); fine-tuning follows product teams' requests
(×1.5); experimentation follows headcount, which is planned a year out (×1.25); batch
inference and pipelines follow data volumes, which grow steadily (×1.4, ×1.3); real-time
inference follows product adoption, the least predictable (×1.8)."""

_Z95: Final = 1.6448536269514722
"""The standard normal's 95th percentile: a lognormal with σ = ln(p95) / z95 puts 90% of its
mass between 1/p95 and p95."""

STAFF_AVAILABILITY: Final = (38.0, 2.0)
"""Beta(a, b) of the share of each team's FTE actually available: mean 0.95 (an assumption: about
5% of the year lost to leave, sickness and vacancies beyond what the FTE figure already nets)."""

HIRING_SUCCESS: Final = 0.8
"""Probability a planned hire arrives within the plan's horizon (an assumption)."""

RANGES_SCHEMA = {
    "input": pl.String,
    "label": pl.String,
    "distribution": pl.String,
    "p5_multiplier": pl.Float64,
    "p95_multiplier": pl.Float64,
    "confidence": pl.String,
    "basis": pl.String,
}
"""Columns of :func:`input_ranges`: the input (names of ``analysis/inputs.py``), its label, the
scipy.stats distribution of its multiplier, the multiplier's 5th and 95th percentiles, the
catalog confidence it comes from (``assumption`` for the reasoned ranges) and its basis."""


def _price_rows(scn: Scenario) -> tuple[str, list[tuple[str, str]]]:
    """The price attribute the scenario pays for capacity, and (GPU, confidence) of each type."""
    attribute = (
        "node_capex_usd" if scn.procurement.mode == "on_prem" else "usd_per_gpu_hour_reserved"
    )
    facts = load_facts()
    confidence = dict(
        facts.filter(pl.col("file") == "gpus").select("key", "confidence").iter_rows()
    )
    gpus = sorted({g for w in scn.workloads for g in w.gpu_types})
    rows = []
    for g in gpus:
        override = scn.gpus.get(g)
        if override is not None and getattr(override, attribute) is not None:
            rows.append((g, OVERRIDE_CONFIDENCE))
        else:
            rows.append((g, str(confidence.get(f"gpus:{g}:{attribute}", "assumption"))))
    return attribute, rows


def _widest(levels: list[str]) -> str:
    """The weakest confidence level among ``levels`` (``assumption`` when empty)."""
    order = {c: i for i, c in enumerate(CONFIDENCE_LEVELS)}
    return max(levels, key=lambda c: order.get(c, len(order)), default="assumption")


def catalog_distributions(scn: Scenario) -> dict[str, Distribution]:
    """Multipliers on each uncertain input's base value, sized by what the catalog knows.

    Demand per kind present: lognormal, median 1, 90% between ``1/DEMAND_P95`` and
    ``DEMAND_P95``; GPU prices: uniform ±``PRICE_HALF_WIDTH`` of the weakest price row the
    scenario may pay; staff availability per skill with staff: beta(38, 2); hiring success
    (when allowed): Bernoulli 0.8.
    """
    dists: dict[str, Distribution] = {}
    for kind in WORKLOAD_KINDS:
        if any(w.kind == kind for w in scn.workloads):
            sigma = math.log(DEMAND_P95[kind]) / _Z95
            dists[f"demand:{kind}"] = stats.lognorm(s=sigma, scale=1.0)
    _attribute, rows = _price_rows(scn)
    half = PRICE_HALF_WIDTH[_widest([c for _g, c in rows])]
    dists["gpu_price"] = stats.uniform(loc=1.0 - half, scale=2 * half)
    for skill in SKILLS:
        if getattr(scn.team, skill).fte > 0:
            dists[f"fte:{skill}"] = stats.beta(*STAFF_AVAILABILITY)
    if scn.hiring.allowed:
        dists["hiring"] = stats.bernoulli(HIRING_SUCCESS)
    return dists


def input_ranges(scn: Scenario) -> pl.DataFrame:
    """The ranges of :func:`catalog_distributions`, one row per input (see :data:`RANGES_SCHEMA`)."""
    attribute, price_rows = _price_rows(scn)
    price_level = _widest([c for _g, c in price_rows])
    rows = []
    for name, dist in catalog_distributions(scn).items():
        head = name.partition(":")[0]
        if head == "demand":
            confidence, basis = "assumption", "one-year forecast error of this kind (DEMAND_P95)"
        elif head == "gpu_price":
            confidence = price_level
            basis = f"{attribute} rows: " + ", ".join(f"{g} {c}" for g, c in price_rows)
        elif head == "fte":
            confidence, basis = "assumption", "availability after leave and vacancies, mean 0.95"
        else:
            confidence, basis = (
                "assumption",
                f"a planned hire arrives with probability {HIRING_SUCCESS}",
            )
        args = ", ".join(f"{v:g}" for v in dist.args)
        kw = ", ".join(f"{k}={v:.3g}" for k, v in dist.kwds.items())
        rows.append(
            {
                "input": name,
                "label": input_label(name),
                "distribution": f"{dist.dist.name}({', '.join(x for x in (args, kw) if x)})",
                "p5_multiplier": float(dist.ppf(0.05)),
                "p95_multiplier": float(dist.ppf(0.95)),
                "confidence": confidence,
                "basis": basis,
            }
        )
    return pl.DataFrame(rows, schema=RANGES_SCHEMA)
