"""Buy versus rent over time: the recommended plan's cumulative cash when owned or rented.

A finance partner asks two things of a GPU plan: when does owning pay back, and what would have
to change for the other way of buying to win. :func:`buy_vs_rent` keeps the recommended plan's
decisions (what runs where, how many nodes) and costs them three ways with the independent
evaluator: owned on-prem nodes, cloud nodes on the longest commitment that fits the horizon, and
cloud nodes on demand. It returns the cumulative cash month by month and the month each way
overtakes another. :func:`procurement_break_evens` finds the discount rate and the horizon at
which owning and committed renting cost the same, and what each step of spot share is worth.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from cluster_decide.inputs.scenario import Scenario, parse_scenario
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions
from cluster_decide.planning.explain import money
from cluster_decide.planning.plan import Plan, investment
from cluster_decide.planning.solve import solve

__all__ = [
    "BUY_VS_RENT_SCHEMA",
    "PROCUREMENTS",
    "PROCUREMENT_BREAK_EVEN_SCHEMA",
    "BuyVsRent",
    "buy_vs_rent",
    "procurement_break_evens",
]

PROCUREMENTS: dict[str, dict[str, str | None]] = {
    "on_prem": {"mode": "on_prem"},
    "committed_cloud": {"mode": "cloud", "commitment": None},
    "on_demand_cloud": {"mode": "cloud", "commitment": "none"},
}
"""The three ways of buying the same plan, as ``[procurement]`` changes."""
BUY_VS_RENT_SCHEMA = {
    "month": pl.Int64,
    "on_prem_usd": pl.Float64,
    "committed_cloud_usd": pl.Float64,
    "on_demand_cloud_usd": pl.Float64,
}
"""Cumulative cash (USD) of the plan bought each way, month 0 being the purchase."""
PROCUREMENT_BREAK_EVEN_SCHEMA = {
    "question": pl.String,
    "value": pl.Float64,
    "unit": pl.String,
    "sentence": pl.String,
}


@dataclass(frozen=True)
class BuyVsRent:
    """Cumulative cash per way of buying, and when one overtakes another."""

    cumulative: pl.DataFrame
    """Columns of ``BUY_VS_RENT_SCHEMA``, one row per month of the horizon."""
    upfront_usd: dict[str, float]
    monthly_usd: dict[str, float]
    crossovers: dict[tuple[str, str], int | None]
    """Month from which the first way's cumulative cash stays at or below the second's."""
    sentences: list[str]


def _variant(scn: Scenario, name: str) -> Scenario:
    """``scn`` bought the named way (a commitment of None means the longest that fits)."""
    data = scn.to_dict()
    proc = {k: v for k, v in data.get("procurement", {}).items() if k != "commitment"}
    proc.update({k: v for k, v in PROCUREMENTS[name].items() if v is not None})
    data["procurement"] = proc
    return parse_scenario(data, source=scn.source)


def _costed(scn: Scenario, dec: Decisions) -> tuple[float, float, pl.DataFrame]:
    """Up-front outlay, monthly cash and the cumulative-cash frame of ``dec`` under ``scn``."""
    data = prepare(scn)
    ev = evaluate_decisions(data, dec)
    upfront, frame = investment(data, dec, ev)
    return upfront, ev.cash_cents / 100.0, frame


def _crossover(a: list[float], b: list[float]) -> int | None:
    """First month from which ``a`` stays at or below ``b`` (None if it never does)."""
    month = None
    for m, (x, y) in enumerate(zip(a, b, strict=True)):
        month = (m if month is None else month) if x <= y else None
    return month


def buy_vs_rent(scn: Scenario, plan: Plan | None = None) -> BuyVsRent:
    """The recommended plan's cumulative cash when owned, rented on commitment, or on demand."""
    plan = plan if plan is not None else solve(scn)
    dec = plan.decisions()
    columns: dict[str, list[float]] = {}
    upfront: dict[str, float] = {}
    monthly: dict[str, float] = {}
    months: list[int] = []
    for name in PROCUREMENTS:
        up, cash, frame = _costed(_variant(scn, name), dec)
        upfront[name], monthly[name] = up, cash
        columns[f"{name}_usd"] = frame["cumulative_usd"].to_list()
        months = frame["month"].to_list()
    cumulative = pl.DataFrame({"month": months, **columns}, schema=BUY_VS_RENT_SCHEMA)
    names = list(PROCUREMENTS)
    crossovers = {
        (a, b): _crossover(columns[f"{a}_usd"], columns[f"{b}_usd"])
        for a in names
        for b in names
        if a != b
    }
    words = {
        "on_prem": "owning",
        "committed_cloud": "renting on commitment",
        "on_demand_cloud": "renting on demand",
    }
    sentences = [
        f"Owning this plan's nodes costs {money(upfront['on_prem'])} up front and "
        f"{money(monthly['on_prem'] - _capital(scn, dec))} a month to run; renting them costs "
        f"{money(monthly['committed_cloud'])} a month on commitment or "
        f"{money(monthly['on_demand_cloud'])} on demand."
    ]
    for other in ("committed_cloud", "on_demand_cloud"):
        month = crossovers[("on_prem", other)]
        if month is None:
            sentences.append(
                f"Over {scn.procurement.horizon_months} months owning never catches up with "
                f"{words[other]}."
            )
        elif month == 0:
            sentences.append(f"Owning is cheaper than {words[other]} from the start.")
        else:
            sentences.append(f"Owning overtakes {words[other]} in month {month}.")
    return BuyVsRent(cumulative, upfront, monthly, crossovers, sentences)


def _capital(scn: Scenario, dec: Decisions) -> float:
    """The monthly capital charge of the plan's nodes when owned."""
    data = prepare(_variant(scn, "on_prem"))
    total = 0.0
    for (_p, g), n in dec.nodes.items():
        owned = data.markets[g].onprem
        if n and owned is not None:
            total += n * owned.capital_usd_per_month
    return total


def _gap(scn: Scenario, dec: Decisions, **change: object) -> float:
    """Monthly cost of owning minus renting on commitment, for the plan, after ``change``."""
    changed = scn.update({"procurement": dict(change)})
    owned = evaluate_decisions(prepare(_variant(changed, "on_prem")), dec).cash_cents
    rented = evaluate_decisions(prepare(_variant(changed, "committed_cloud")), dec).cash_cents
    return (owned - rented) / 100.0


def procurement_break_evens(scn: Scenario, plan: Plan | None = None) -> pl.DataFrame:
    """Break-evens a finance review argues about, each with a sentence.

    - discount rate at which owning the plan's nodes costs what renting them on commitment does
      (owning wins below it), by bisection on 0-50%;
    - the shortest horizon (months, 6-120) from which owning costs no more than renting;
    - the spot share: the plan's monthly cost with spot capped at 0%, 25%, 50%, 75% and 100% of
      each pool's GPU-hours, and the cap beyond which more spot saves under 1%.
    """
    plan = plan if plan is not None else solve(scn)
    dec = plan.decisions()
    rows: list[tuple[str, float | None, str, str]] = []
    lo, hi = 0.0, 0.5
    if _gap(scn, dec, discount_rate=lo) > 0:
        rows.append(
            (
                "discount rate at which owning pays",
                None,
                "per year",
                "Owning costs more than renting on commitment even with free capital.",
            )
        )
    elif _gap(scn, dec, discount_rate=hi) <= 0:
        rows.append(
            (
                "discount rate at which owning pays",
                hi,
                "per year",
                "Owning stays cheaper than renting on commitment up to a 50% cost of capital.",
            )
        )
    else:
        for _ in range(20):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gap(scn, dec, discount_rate=mid) <= 0 else (lo, mid)
        rows.append(
            (
                "discount rate at which owning pays",
                round(lo, 4),
                "per year",
                f"Owning this plan's nodes is cheaper than renting them on commitment while "
                f"capital costs less than {lo:.1%} a year.",
            )
        )
    owning_wins = [_gap(scn, dec, horizon_months=h, commitment=None) <= 0 for h in range(6, 121)]
    horizon = next((6 + i for i in range(len(owning_wins)) if all(owning_wins[i:])), None)
    rows.append(
        (
            "horizon from which owning pays",
            None if horizon is None else float(horizon),
            "months",
            f"Owning costs no more than renting on commitment for any horizon of {horizon} "
            "months or longer (up to 10 years)."
            if horizon is not None
            else "Renting on commitment stays cheaper than owning at a 10-year horizon.",
        )
    )
    costs = {
        share: solve(scn.update({"procurement": {"max_spot_share": share}})).cash_monthly_usd
        for share in (0.0, 0.25, 0.5, 0.75, 1.0)
    }
    enough = next((s for s in costs if costs[s] - costs[1.0] <= 0.01 * costs[1.0]), 1.0)
    rows.append(
        (
            "spot share beyond which more spot saves under 1%",
            enough,
            "fraction of a pool's GPU-hours",
            f"Allowing no spot costs {money(costs[0.0] - costs[1.0])} a month more than "
            f"unlimited spot; beyond {enough:.0%} of a pool on spot, more saves under 1%.",
        )
    )
    for share, cash in costs.items():
        rows.append(
            (
                f"monthly cash with spot capped at {share:.0%}",
                cash,
                "USD/month",
                f"With at most {share:.0%} of each pool on spot the plan costs {money(cash)} a month.",
            )
        )
    return pl.DataFrame(rows, schema=PROCUREMENT_BREAK_EVEN_SCHEMA, orient="row")
