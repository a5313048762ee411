"""Markets: where each GPU type is bought, on what term, at what price, and what owning it costs.

The catalog lists offers per GPU type, provider class (hyperscaler, GPU cloud, marketplace) and
term (on-demand, 1- or 3-year commitment, spot), each with its source. A scenario's
``[procurement]`` picks the classes (and, if it says, the companies) it may rent from, the
longest commitment it accepts and whether the baseline is rented, owned, or whichever is
cheaper. :func:`resolve_markets` turns that into one :class:`Market` per GPU type: the baseline
offer nodes are bought on, the on-demand offer bursts are rented from, the spot offer
interruptible work may use, and for owned nodes the investment (up-front outlay, cost of
capital, horizon-dependent resale, support, power, space).

Owned hardware is costed as an equivalent monthly charge: the outlay less the discounted resale
value at the end of the horizon, spread as an annuity at the scenario's discount rate, plus
running costs. Hardware is replaced after its useful life, so a horizon beyond it costs what one
life costs: a longer horizon never raises the monthly cost of an owned GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

import polars as pl

from cluster_decide.base.constants import HOURS_PER_MONTH
from cluster_decide.inputs.offers import Offer, OnPremNode

if TYPE_CHECKING:
    from cluster_decide.inputs.catalog import Catalog, CostParameters, GpuType
    from cluster_decide.inputs.scenario import Scenario

__all__ = [
    "CASH_FLOW_SCHEMA",
    "COMMITMENT_MONTHS",
    "PROVIDER_WORDS",
    "TERM_WORDS",
    "Market",
    "OnPremCost",
    "annuity_factor",
    "cash_flow",
    "onprem_cost",
    "residual_fraction",
    "resolve_markets",
    "spot_overhead",
]

COMMITMENT_MONTHS: Final = {"none": 0, "1y": 12, "3y": 36}
"""A scenario's ``procurement.commitment`` and the months it binds."""
TERM_MONTHS: Final = {"on_demand": 0, "commit_1y": 12, "commit_3y": 36, "owned": 0}
PROVIDER_WORDS: Final = {
    "on_prem": "owned (on-prem)",
    "hyperscaler": "a hyperscaler",
    "gpu_cloud": "a GPU cloud",
    "marketplace": "a GPU marketplace",
    "scenario": "the scenario's own price",
}
"""Provider classes in plain words, for sentences."""
TERM_WORDS: Final = {
    "on_demand": "on demand",
    "commit_1y": "on a 1-year commitment",
    "commit_3y": "on a 3-year commitment",
    "spot": "as spot",
    "owned": "bought outright",
}
"""Terms in plain words, for sentences."""
CASH_FLOW_SCHEMA: Final = {
    "month": pl.Int64,
    "upfront_usd": pl.Float64,
    "monthly_usd": pl.Float64,
    "resale_usd": pl.Float64,
    "cash_usd": pl.Float64,
    "cumulative_usd": pl.Float64,
}
"""Columns of the cumulative-cash frame: one row per month, month 0 is the purchase."""


@dataclass(frozen=True)
class OnPremCost:
    """An owned node's investment and its equivalent monthly cost, in USD."""

    server_usd: float
    fabric_usd: float
    storage_usd: float
    life_months: int
    residual_fraction: float
    capital_usd_per_month: float
    support_usd_per_month: float
    power_usd_per_month: float
    facility_usd_per_month: float

    @property
    def upfront_usd(self) -> float:
        """Cash out on day one: server, fabric share and storage share."""
        return self.server_usd + self.fabric_usd + self.storage_usd

    @property
    def resale_usd(self) -> float:
        """What the node fetches when sold at the end of its life (or the horizon)."""
        return self.upfront_usd * self.residual_fraction

    @property
    def running_usd_per_month(self) -> float:
        """Support, power and space: cash every month the node runs."""
        return self.support_usd_per_month + self.power_usd_per_month + self.facility_usd_per_month

    @property
    def usd_per_month(self) -> float:
        """Equivalent monthly cost: capital charge plus running costs."""
        return self.capital_usd_per_month + self.running_usd_per_month


@dataclass(frozen=True)
class Market:
    """Where one GPU type is bought in a scenario.

    ``baseline`` is the offer the pools' nodes are bought on (provider class ``on_prem`` and term
    ``owned`` for owned nodes); ``burst`` the on-demand offer above the baseline; ``spots`` the
    allowed spot offers, of which each class gets the cheapest its jobs fit (:meth:`spot_for`).
    ``bought`` is the same market with owned hardware as its baseline, where the scenario may buy
    (``procurement.mode = "cheapest"``) but renting is the cheaper baseline: what an owned
    cluster of today grows by, since a cloud node is no part of its fabric.
    """

    gpu: str
    baseline: Offer | None
    node_usd_per_month: float
    onprem: OnPremCost | None
    burst: Offer | None
    spots: tuple[Offer, ...]
    burst_cap_gpus: int | None
    bought: Market | None = None

    @property
    def upfront_usd_per_node(self) -> float:
        """Up-front outlay per node (zero when rented)."""
        return self.onprem.upfront_usd if self.onprem is not None else 0.0

    def spot_for(self, job_gpus: int, gpus_per_node: int) -> Offer | None:
        """The spot offer a class's jobs of ``job_gpus`` GPUs run on: the cheapest that holds one.

        An instance as large as a job (an 8-GPU job does not run on AWS's single-L40S g6e.xlarge),
        or whole nodes on a fabric when it spans nodes (:meth:`Offer.holds`); None when no spot
        offer does. The spot price (``ModelData.spot_cents``), the plan's words and the
        assumptions appendix all read this one choice.
        """
        return _cheapest([o for o in self.spots if o.holds(job_gpus, gpus_per_node)])


def residual_fraction(curve: Sequence[tuple[int, float]], months: float) -> float:
    """Resale value after ``months`` as a fraction of the outlay.

    Linear between the curve's points, 1.0 when new, and flat after the last point.
    """
    previous = (0, 1.0)
    for point in curve:
        if months <= point[0]:
            (m0, f0), (m1, f1) = previous, point
            return f0 + (f1 - f0) * (months - m0) / (m1 - m0)
        previous = point
    return previous[1]


def annuity_factor(monthly_rate: float, months: int) -> float:
    """Level monthly payment that repays 1 over ``months`` at ``monthly_rate``."""
    if monthly_rate <= 0:
        return 1.0 / months
    return monthly_rate / (1.0 - (1.0 + monthly_rate) ** -months)


def onprem_cost(
    gpu: GpuType,
    node: OnPremNode,
    costs: CostParameters,
    curve: Sequence[tuple[int, float]],
    horizon_months: int,
    discount_rate: float,
    price_scale: float = 1.0,
    residual_override: float | None = None,
) -> OnPremCost:
    """The investment in one owned node and its equivalent monthly cost.

    Capital: (outlay − resale × v^L) × annuity(r, L), where L = min(horizon, useful life), r the
    monthly rate of ``discount_rate`` and v = 1/(1+r). Support is a yearly fraction of the outlay;
    power is node kW × average draw × PUE × price; space is billed per provisioned kW.
    """
    life = max(1, min(int(horizon_months), int(costs.useful_life_months)))
    rate = (1.0 + discount_rate) ** (1.0 / 12.0) - 1.0
    server = gpu.node_capex_usd * price_scale
    upfront = server + (node.fabric_usd + node.storage_usd) * price_scale
    residual = (
        residual_override if residual_override is not None else residual_fraction(curve, life)
    )
    present_resale = upfront * residual / (1.0 + rate) ** life
    return OnPremCost(
        server_usd=server,
        fabric_usd=node.fabric_usd * price_scale,
        storage_usd=node.storage_usd * price_scale,
        life_months=life,
        residual_fraction=residual,
        capital_usd_per_month=(upfront - present_resale) * annuity_factor(rate, life),
        support_usd_per_month=upfront * costs.support_fraction_per_year / 12.0,
        power_usd_per_month=gpu.node_power_kw
        * costs.average_power_fraction
        * costs.pue
        * costs.power_usd_per_kwh
        * HOURS_PER_MONTH,
        facility_usd_per_month=gpu.node_power_kw * costs.facility_usd_per_kw_month,
    )


def spot_overhead(costs: CostParameters, nodes: int) -> float:
    """Extra work a spot-run job does, as a fraction of its run time.

    Interruptions per node-hour × nodes the job spans × (half a checkpoint interval of lost work
    + restart time): one reclaimed node stops the whole gang.
    """
    per_hour = costs.spot_interruptions_per_node_month / HOURS_PER_MONTH
    lost = costs.checkpoint_interval_hours / 2.0 + costs.spot_restart_hours
    return per_hour * max(1, nodes) * lost


def _offers_for(
    scn: Scenario, catalog: Catalog, gpu: str, any_seller: bool, seller: str | None = None
) -> list[Offer]:
    """Catalog offers for ``gpu``, or the scenario's own prices where it sets them.

    Offers of the allowed provider classes, from the companies ``procurement.providers`` names
    unless ``any_seller``; only ``seller``'s, of any class, when it is given.
    """
    listed = [o for o in catalog.offers if o.gpu == gpu]
    if scn.sets_gpu_prices(gpu) or not listed:
        g = catalog.gpus[gpu]
        return [
            Offer(
                gpu, "scenario", "scenario file", "on_demand", g.usd_per_gpu_hour_on_demand, True
            ),
            Offer(gpu, "scenario", "scenario file", "commit_1y", g.usd_per_gpu_hour_reserved, True),
            Offer(gpu, "scenario", "scenario file", "commit_3y", g.usd_per_gpu_hour_reserved, True),
        ]
    if seller is not None:
        return [o for o in listed if o.seller == seller]
    classes = set(scn.procurement.provider_classes)
    sellers = None if any_seller else scn.procurement.providers
    return [
        o
        for o in listed
        if o.provider_class in classes and (sellers is None or o.seller in sellers)
    ]


def _cheapest(offers: Sequence[Offer]) -> Offer | None:
    """The lowest price; ties go to the offer listed first (deterministic)."""
    return min(offers, key=lambda o: o.usd_per_gpu_hour) if offers else None


def resolve_markets(
    scn: Scenario,
    gpus: Sequence[str],
    any_seller: bool = False,
    seller: str | None = None,
    leased: bool = False,
) -> dict[str, Market]:
    """One :class:`Market` per GPU type, prices scaled by ``procurement.gpu_price_scale``.

    ``any_seller`` prices a listed cluster of today's nodes: it stands at a provider the
    scenario does not name, so ``procurement.providers`` (the companies new capacity is rented
    from) does not apply to them. ``seller`` prices a leased cluster of today that names its
    provider (``current.clusters[].provider``): that company's offers alone, rented whatever
    ``procurement.mode`` says, since the cluster grows where it stands. ``leased`` prices one
    that names none: the allowed sellers' offers, rented whatever the mode (an estate that buys
    its new GPUs still leases this cluster's).
    """
    proc = scn.procurement
    catalog = scn.catalog
    costs = catalog.costs
    commit = COMMITMENT_MONTHS[proc.commitment_term]
    discount = proc.discount_rate if proc.discount_rate is not None else costs.discount_rate
    residual_override = scn.costs.residual_value_fraction
    markets = {}
    by_type = proc.gpu_price_scale_by_type or {}
    for name in gpus:
        gpu = catalog.gpus[name]
        scale = proc.gpu_price_scale * by_type.get(name, 1.0)
        offers = [
            Offer(
                o.gpu,
                o.provider_class,
                o.provider,
                o.term,
                o.usd_per_gpu_hour * scale,
                o.multi_node,
                o.gpus_per_instance,
            )
            for o in _offers_for(scn, catalog, name, any_seller, seller)
        ]
        rentable = [
            o for o in offers if o.term != "spot" and TERM_MONTHS[o.term] <= commit and o.multi_node
        ]
        rented = _cheapest(rentable)
        rented_usd = (
            rented.usd_per_gpu_hour * gpu.gpus_per_node * HOURS_PER_MONTH if rented else math.inf
        )
        owned = None
        node = catalog.onprem.get(name)
        if proc.mode != "cloud" and seller is None and not leased:
            node = node or OnPremNode(0.0, 0.0)
            owned = onprem_cost(
                gpu,
                node,
                costs,
                catalog.resale,
                proc.horizon_months,
                discount,
                scale,
                residual_override,
            )
        spots = [o for o in offers if o.term == "spot"] if proc.spot_allowed else []
        rented_market = Market(
            gpu=name,
            baseline=rented,
            node_usd_per_month=rented_usd,
            onprem=None,
            burst=_cheapest([o for o in offers if o.term == "on_demand"]),
            spots=tuple(spots),
            burst_cap_gpus=(proc.burst_cap_gpus or {}).get(name, catalog.burst_caps.get(name)),
        )
        if owned is None:
            markets[name] = rented_market
            continue
        per_gpu = owned.usd_per_month / gpu.gpus_per_node / HOURS_PER_MONTH
        owned_market = replace(
            rented_market,
            baseline=Offer(name, "on_prem", "owned", "owned", per_gpu, True),
            node_usd_per_month=owned.usd_per_month,
            onprem=owned,
        )
        use_owned = proc.mode == "on_prem" or owned.usd_per_month < rented_usd
        markets[name] = owned_market if use_owned else replace(rented_market, bought=owned_market)
    return markets


def cash_flow(
    upfront_usd: float,
    monthly_usd: float,
    horizon_months: int,
    life_months: int,
    resale_at: Callable[[int], float],
    adjust: Callable[[int], float] | None = None,
) -> pl.DataFrame:
    """Cumulative cash over the horizon, one row per month (month 0 is the purchase).

    The outlay is paid in month 0 and again at the start of each new useful life; the monthly
    cash spend (rent, people, support, power: no capital charge) each month, plus
    ``adjust(month)`` where a cost is not level (a lease paid until it ends); the hardware is
    sold at the end of each life and at the horizon, ``resale_at(age)`` times the outlay.
    """
    rows = []
    total = 0.0
    life = max(1, life_months)
    for month in range(horizon_months + 1):
        up = upfront_usd if month < horizon_months and month % life == 0 else 0.0
        run = monthly_usd + (adjust(month) if adjust is not None else 0.0) if month > 0 else 0.0
        age = life if month % life == 0 else month % life
        sold = month > 0 and (month % life == 0 or month == horizon_months)
        back = upfront_usd * resale_at(age) if sold else 0.0
        cash = up + run - back
        total += cash
        rows.append(
            {
                "month": month,
                "upfront_usd": round(up, 2),
                "monthly_usd": round(run, 2),
                "resale_usd": round(back, 2),
                "cash_usd": round(cash, 2),
                "cumulative_usd": round(total, 2),
            }
        )
    return pl.DataFrame(rows, schema=CASH_FLOW_SCHEMA)
