"""A recommendation that knows its margin: the plan, the runner-up, what flips it, and a verdict.

An optimal plan is stated as plainly whether it wins by 20% or by 2%. :func:`recommend` adds
what a meeting needs to know how sure to be:

- the **runner-up**: every other archetype solved with it forced (:func:`~cluster_decide.
  analysis.compare.compare`), and the margin in dollars and percent to the cheapest of them;
- the **nearest flips**: the smallest changes of demand per kind, staff per skill, GPU prices or
  the budget that change the architecture (:func:`~cluster_decide.analysis.flips.nearest_flips`);
- with ``samples=N``, the **robust choice**: each archetype's win rate and expected and worst
  regret over inputs sampled from the catalog's own ranges (:mod:`~cluster_decide.analysis.
  ranges`), and the archetype with the least worst-case regret;
- a **verdict** — ``clear``, ``close`` or ``fragile`` (``none`` when there is no plan to judge) —
  and one sentence an executive can repeat;
- where the decision should wait for data, the **measurement that would settle it** (the input
  with the nearest flip), written as a step to lead the pilot;
- the **plan with one cluster fewer** (one more solve with ``policy.max_pools`` one below the
  plan's clusters): three clusters where two cost 0.1% more is a near-tie the archetype
  comparison cannot see, both plans being one archetype, and a meeting would take the simpler.
  The sentence says it when it costs less than :data:`CLEAR_MARGIN` more;
- the **plan bought from one company**, when a cluster of the plan rents its GPUs from several
  clouds (each GPU type where it is cheapest, which one cluster cannot do): one more solve per
  company the scenario may rent from, with ``procurement.providers`` naming it alone, and the
  cheapest of them said beside the plan's cost;
- the **plan with a Slurm that adds nodes**, where the scenario has not said its Slurm starts
  cloud nodes for queued jobs (the catalog takes it to keep a fixed set): one more solve as if
  it did, said when it changes the architecture or saves :data:`SLURM_NODES_SAVING`.

Thresholds (justified in ``docs/analysis.md``): ``clear`` needs a margin of at least
:data:`CLEAR_MARGIN` and no flip within :data:`CLEAR_FLIP` of any input (or no other feasible
architecture at all); ``fragile`` is a point optimum that wins fewer than
:data:`FRAGILE_WIN_RATE` of the sampled futures; anything else is ``close``.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from cluster_decide.analysis.comparison import compare
from cluster_decide.analysis.core import Outcome, outcome_of, quick_solve, solve_model
from cluster_decide.analysis.flips import LEVELS, Flip, flips_frame, nearest_flips
from cluster_decide.analysis.inputs import input_label
from cluster_decide.analysis.ranges import RANGES_SCHEMA, catalog_distributions, input_ranges
from cluster_decide.analysis.uncertainty_samples import UncertaintyResult, uncertainty
from cluster_decide.inputs.scenario import DEMAND_KEYS, Scenario
from cluster_decide.model.data import ModelData, prepare
from cluster_decide.model.decisions import Decisions
from cluster_decide.model.people import ADDON_SUFFIX
from cluster_decide.planning.evaluation import Evaluation, evaluate_decisions, whole_node_usd
from cluster_decide.planning.explain import (
    ARCHETYPE_SHORT,
    machine_room,
    machine_room_rents,
    mixed_sellers,
    money,
    pool_sellers,
)
from cluster_decide.planning.explain_idle import idle_caveat, idle_rooms
from cluster_decide.planning.explain_people import and_list, number_words
from cluster_decide.planning.plan import Plan
from cluster_decide.planning.solve import solve

__all__ = [
    "CLEAR_FLIP",
    "CLEAR_MARGIN",
    "FRAGILE_WIN_RATE",
    "PILOT_STEP_COLUMNS",
    "ROBUST_SCHEMA",
    "RUNNER_UPS_SCHEMA",
    "VERDICTS",
    "Recommendation",
    "recommend",
]

VERDICTS: Final = ("clear", "close", "fragile", "none")
"""The verdicts, surest first; ``none`` when there is no plan to judge."""

CLEAR_MARGIN: Final = 0.10
"""A clear answer beats the runner-up by at least this share of its own monthly cost."""

CLEAR_FLIP: Final = 0.25
"""…and no single input a meeting argues about flips it within ±this share of its value."""

FRAGILE_WIN_RATE: Final = 0.5
"""A point optimum that wins fewer than this share of the sampled futures is fragile."""

SLURM_NODES_SAVING: Final = 0.01
"""A Slurm that added nodes is said when its best plan costs at least this share less (or is of
another architecture): below it the difference is within what one GPU price moves a plan."""

RUNNER_UPS_SCHEMA = {
    "archetype": pl.String,
    "status": pl.String,
    "total_monthly_usd": pl.Float64,
    "margin_usd": pl.Float64,
    "margin_pct": pl.Float64,
    "slo_met": pl.String,
    "note": pl.String,
    "whole_node_usd": pl.Float64,
}
"""Columns of :attr:`Recommendation.runner_ups`, one row per archetype (the plan's own first,
then the others cheapest first, infeasible last): each solved with that archetype forced;
``margin_usd`` = its cost − the plan's (USD per month), ``margin_pct`` = that over the plan's
cost (a fraction); ``slo_met`` predicted service levels met (``met/total``); ``note`` why it
costs what it does, or why it is infeasible and the cheapest fix; ``whole_node_usd`` what it
rents beyond its cost when whole-node jobs get whole nodes (``cd.compare``)."""

ROBUST_SCHEMA = {
    "archetype": pl.String,
    "win_rate": pl.Float64,
    "p_feasible": pl.Float64,
    "expected_monthly_usd": pl.Float64,
    "expected_regret_usd": pl.Float64,
    "worst_regret_usd": pl.Float64,
    "least_worst_regret": pl.Boolean,
}
"""Columns of :attr:`Recommendation.robust`, one row per archetype feasible at the base
figures: ``win_rate`` share of samples where it is the optimum; ``p_feasible`` share of samples
(with any feasible plan) where it can be built; ``expected_monthly_usd`` its mean cost there;
``expected_regret_usd`` and ``worst_regret_usd`` the mean and largest of its cost above each
sample's optimum (infinite when it cannot be built in some sample that has a plan);
``least_worst_regret`` marks the robust choice. Money in USD per month."""

PILOT_STEP_COLUMNS: Final = ("test", "workload", "where", "run", "measure", "why")
"""Columns of :attr:`Recommendation.pilot_step`: the pilot plan's own columns, so the step can
lead it."""

_PILOT_TEST: Final = {
    "distributed_training": "Multi-node training",
    "fine_tuning": "Fine-tuning",
    "batch_inference": "Batch pipeline",
    "pipeline": "Batch pipeline",
    "realtime_inference": "Inference endpoint",
    "fte": "GPU node replacement",
    "gpu_price": "Cost reporting",
    "budget": "Cost reporting",
}
"""The pilot test whose measurements bear on each input (the pilot plan of the reports)."""

_HOW: Final = {
    "distributed_training": "the GPU-hours a month of the pre-training runs planned for the "
    "next year (run sizes × runs), checked against 90 days of job records "
    "(`cluster-decide ingest`)",
    "fine_tuning": "the fine-tuning GPU-hours a month the product teams will request, checked "
    "against 90 days of job records (`cluster-decide ingest`)",
    "experimentation": "the number of concurrent notebook users next year, from the hiring plan "
    "and today's peak sessions",
    "batch_inference": "the nightly batch GPU-hours a month, from the data volumes planned for "
    "next year and 90 days of job records",
    "pipeline": "the pipeline GPU-hours a month, from the data volumes planned for next year and "
    "90 days of job records",
    "realtime_inference": "the peak requests per second the services will see next year, from "
    "the serving metrics and the product's growth plan",
    "fte": "the staff who will really run the platform (named people, not headcount) and the "
    "hiring plan's dates",
    "gpu_price": "binding quotes for the capacity the plan buys (reserved GPU-hours, or node "
    "prices on premises)",
    "budget": "the budget with finance",
}
"""How to measure each input well enough to settle a close call."""


_INPUT_WORDS: Final = {
    "demand": "demand",
    "fte": "staff",
    "gpu_price": "GPU prices",
    "budget": "the budget",
}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _name(archetype: str | None) -> str:
    return ARCHETYPE_SHORT.get(archetype or "", str(archetype))


def _verb(archetype: str | None, singular: str, plural: str) -> str:
    """The verb agreeing with the archetype's words (separate clusters *beat*)."""
    return plural if archetype == "hybrid_separate" else singular


def _beats(archetype: str | None) -> str:
    return _verb(archetype, "beats", "beat")


def _pct(x: float) -> str:
    return f"{abs(x):.1%}" if abs(x) < 0.1 else f"{abs(x):.0%}"


@dataclass(frozen=True, eq=False)
class Recommendation:
    """The plan with its margin, what flips it, a verdict and one sentence to repeat.

    Compared by identity (its frames have no single truth value); compare ``to_dict()``.
    """

    plan: Plan
    verdict: str
    """``clear``, ``close``, ``fragile`` or ``none`` (no plan to judge); see :data:`VERDICTS`."""
    sentence: str
    """What an executive can repeat: the verdict, the margin and what flips it."""
    runner_up: str | None
    """The cheapest other archetype that can be built (None when no other can)."""
    runner_up_monthly_usd: float
    margin_usd: float
    """The runner-up's monthly cost minus the plan's (NaN when there is no runner-up)."""
    margin_pct: float
    """``margin_usd`` over the plan's monthly cost, as a fraction (0.019 is 1.9%)."""
    runner_ups: pl.DataFrame
    """Every archetype solved forced (:data:`RUNNER_UPS_SCHEMA`)."""
    flips: pl.DataFrame
    """The nearest flip of each input and direction (:data:`~cluster_decide.analysis.flips.
    FLIPS_SCHEMA`), nearest first."""
    robust: pl.DataFrame
    """Win rates and regrets over the samples (:data:`ROBUST_SCHEMA`; empty without samples)."""
    robust_choice: str | None
    """The archetype with the least worst-case regret (None without samples)."""
    samples: int
    seed: int
    settle: str
    """The measurement that would settle a close call, tied to the pilot ("" when clear)."""
    pilot_step: pl.DataFrame
    """That measurement as a pilot step (:data:`PILOT_STEP_COLUMNS`; empty when clear)."""
    ranges: pl.DataFrame = field(default_factory=pl.DataFrame)
    """The sampled inputs' ranges (:data:`~cluster_decide.analysis.ranges.RANGES_SCHEMA`)."""
    sweep: UncertaintyResult | None = field(default=None, repr=False, compare=False)
    """The raw sweep behind :attr:`robust` (samples, per-sample costs)."""
    fewer: Outcome | None = field(default=None, repr=False, compare=False)
    """The best plan on fewer clusters than :attr:`plan` (None when the plan runs one)."""
    fewer_words: str = ""
    """What :attr:`fewer` changes and costs, in one sentence ("" when there is none)."""
    one_provider: str | None = None
    """The company the cheapest plan bought from one company rents from (None when the plan's
    clusters each rent from one already, or no one company can serve the estate)."""
    single: Outcome | None = field(default=None, repr=False, compare=False)
    """That plan; where instead a cluster of the estate's machine room rents from a cloud, the
    best plan renting from no cloud at all (:attr:`one_provider` None then); else None."""
    single_words: str = ""
    """Which clusters span clouds (or a machine room and a cloud) and what buying from one
    company (or renting nothing) costs ("" when none does)."""
    caveats: tuple[str, ...] = ()
    """The sentences :attr:`sentence` ends with that qualify the plan's cost, in order: the plan
    on one cluster fewer, what whole nodes add, what one company costs, idle GPUs training
    could use, a Slurm that adds nodes. A view may set them apart from the verdict they follow
    (the workbook lists them under it)."""
    slurm_adds_nodes: Outcome | None = field(default=None, repr=False, compare=False)
    """The best plan if the estate's Slurm started cloud nodes for queued jobs, where that is
    said among :attr:`caveats` (None otherwise)."""

    @property
    def single_margin_usd(self) -> float:
        """:attr:`single`'s monthly cost minus the plan's (NaN when there is none)."""
        if self.single is None or not self.single.feasible:
            return math.nan
        return self.single.total_monthly_usd - self.plan.total_monthly_usd

    @property
    def fewer_margin_usd(self) -> float:
        """:attr:`fewer`'s monthly cost minus the plan's (NaN when it has no plan)."""
        if self.fewer is None or not self.fewer.feasible:
            return math.nan
        return self.fewer.total_monthly_usd - self.plan.total_monthly_usd

    @property
    def archetype(self) -> str | None:
        """The recommended archetype."""
        return self.plan.archetype

    def lines(self) -> list[str]:
        """The verdict for a "How sure is this" page: sentence, margin, flips, win rates, data."""
        out = [self.sentence]
        for r in self.runner_ups.iter_rows(named=True):
            if r["archetype"] == self.archetype:
                continue
            if math.isnan(r["total_monthly_usd"]):
                out.append(f"{_cap(_name(r['archetype']))} cannot meet the requirements.")
            else:
                out.append(
                    f"{_cap(_name(r['archetype']))} {_verb(r['archetype'], 'costs', 'cost')} "
                    f"{money(r['margin_usd'])} ({_pct(r['margin_pct'])}) more a month (service "
                    f"levels met: {r['slo_met']})."
                )
        if self.fewer_words:
            out.append(self.fewer_words)
        out += [s for s in self.flips.filter(pl.col("found"))["sentence"].head(3)]
        for r in self.robust.iter_rows(named=True):
            out.append(
                f"{_cap(_name(r['archetype']))} wins {r['win_rate']:.0%} of {self.samples} "
                f"sampled futures; its regret averages {money(r['expected_regret_usd'])} and "
                + (
                    f"is at worst {money(r['worst_regret_usd'])} a month."
                    if math.isfinite(r["worst_regret_usd"])
                    else f"it cannot be built in {1 - r['p_feasible']:.0%} of them."
                )
            )
        if self.settle:
            out.append(self.settle)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (rounded numbers, NaN as null), stable for equal inputs."""
        return {
            "verdict": self.verdict,
            "sentence": self.sentence,
            "runner_up": self.runner_up,
            "runner_up_monthly_usd": _clean(self.runner_up_monthly_usd),
            "margin_usd": _clean(self.margin_usd),
            "margin_pct": _clean(self.margin_pct),
            "runner_ups": _rows(self.runner_ups),
            "flips": _rows(self.flips),
            "robust": _rows(self.robust),
            "robust_choice": self.robust_choice,
            "samples": self.samples,
            "seed": self.seed,
            "settle": self.settle,
            "lines": self.lines(),
            "caveats": list(self.caveats),
            "one_cluster_fewer": None
            if self.fewer is None
            else {
                "status": self.fewer.status,
                "clusters": [_cluster(p) for p in self.fewer.open_pools],
                "total_monthly_usd": _clean(self.fewer.total_monthly_usd),
                "margin_usd": _clean(self.fewer_margin_usd),
                "sentence": self.fewer_words,
            },
            "one_provider": None
            if not self.single_words
            else {
                "provider": self.one_provider,
                "total_monthly_usd": _clean(
                    self.single.total_monthly_usd if self.single is not None else math.nan
                ),
                "margin_usd": _clean(self.single_margin_usd),
                "sentence": self.single_words,
            },
        }


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, 4)
    return value


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]


def _has_plan(plan: Plan) -> bool:
    return plan.feasible and plan.archetype is not None and math.isfinite(plan.total_monthly_usd)


def _runner_ups(
    scn: Scenario,
    plan: Plan,
    time_limit_s: float,
    workers: int | None,
    seed: int,
    alternatives: pl.DataFrame | None = None,
) -> pl.DataFrame:
    frame = (
        alternatives
        if alternatives is not None
        else compare(scn, time_limit_s=time_limit_s, workers=workers, seed=seed)
    )
    feasible = (pl.col("status") != "infeasible") & pl.col("total_monthly_usd").is_finite()
    rows = frame.with_columns(
        pl.when(feasible).then(pl.col("total_monthly_usd")).otherwise(float("nan")),
        (pl.col("archetype") != plan.archetype).alias("_other"),
        feasible.alias("_feasible"),
    ).with_columns(
        (pl.col("total_monthly_usd") - plan.total_monthly_usd).alias("margin_usd"),
        ((pl.col("total_monthly_usd") - plan.total_monthly_usd) / plan.total_monthly_usd).alias(
            "margin_pct"
        ),
    )
    rows = rows.sort(
        ["_other", "_feasible", "total_monthly_usd", "archetype"],
        descending=[False, True, False, False],
    )
    return rows.select(list(RUNNER_UPS_SCHEMA)).cast(RUNNER_UPS_SCHEMA)  # type: ignore[arg-type]


def _robust(sweep: UncertaintyResult, tracked: Sequence[str]) -> pl.DataFrame:
    """Win rate, expected and worst regret per tracked archetype over the samples with a plan."""
    has_plan = sweep.samples.filter(pl.col("status") != "infeasible")["sample"]
    costs = sweep.costs.filter(pl.col("sample").is_in(has_plan.implode()))
    wins = dict(sweep.summary.select("archetype", "p_optimal").iter_rows())
    rows = []
    for a in tracked:
        mine = costs.filter(pl.col("archetype") == a)
        ok = mine.filter(pl.col("feasible"))
        regret = ok["regret_usd"]
        all_built = ok.height == mine.height and mine.height > 0
        rows.append(
            {
                "archetype": a,
                "win_rate": float(wins.get(a, 0.0)),
                "p_feasible": ok.height / mine.height if mine.height else math.nan,
                "expected_monthly_usd": float(ok["monthly_usd"].mean()) if ok.height else math.nan,  # type: ignore[arg-type]
                "expected_regret_usd": float(regret.mean()) if ok.height else math.nan,  # type: ignore[arg-type]
                "worst_regret_usd": float(regret.max()) if all_built else math.inf,  # type: ignore[arg-type]
                "least_worst_regret": False,
            }
        )
    frame = pl.DataFrame(rows, schema=ROBUST_SCHEMA)
    if frame.height:
        best = frame.sort(["worst_regret_usd", "expected_regret_usd", "archetype"]).row(
            0, named=True
        )["archetype"]
        frame = frame.with_columns((pl.col("archetype") == best).alias("least_worst_regret"))
    return frame.sort(["win_rate", "archetype"], descending=[True, False])


_DEMAND_UNITS: Final = {
    "gpu_hours_per_month": "GPU-hours a month",
    "concurrent_users": "concurrent users",
    "peak_requests_per_second": "requests a second at peak",
}


def _quantity(scn: Scenario, name: str, value: float) -> str:
    """An input's value in the unit a measurement gives (``145,300 GPU-hours a month``)."""
    head, _, arg = name.partition(":")
    if head == "demand":
        key = DEMAND_KEYS[arg]
        total = sum(float(getattr(w, key)) for w in scn.workloads if w.kind == arg)
        return f"{total * value:,.0f} {_DEMAND_UNITS.get(key, key)}"
    if head == "fte":
        return f"{value:.2f} FTE"
    if head == "budget":
        return f"{money(value)} a month"
    return f"{value:.2f}× the catalog's GPU prices"


def _settle(
    scn: Scenario, plan: Plan, flip: Flip, flips: Sequence[Flip]
) -> tuple[str, pl.DataFrame]:
    """The measurement of the input nearest to flipping, as a sentence and a pilot step."""
    head, _, arg = flip.input.partition(":")
    key = arg if head == "demand" else head
    test = _PILOT_TEST.get(key)
    workload, where = "–", "–"
    if head == "demand":
        rows = plan.placements.filter(pl.col("kind") == arg)
        if rows.height:
            top = rows.group_by("workload").agg(pl.col("gpus").sum())
            workload = top.sort(["gpus", "workload"], descending=[True, False])["workload"][0]
            where = ", ".join(
                f"{r['pool']} ({r['gpu_type']})"
                for r in rows.filter(pl.col("workload") == workload).iter_rows(named=True)
            )
    elif plan.pools.height:
        where = ", ".join(plan.pools["pool"].unique(maintain_order=True).to_list())
    label = input_label(flip.input)
    to = _name(flip.flips_to)
    tie = (
        f"make it the pilot's first step, before the "
        f"{test if test[:3].isupper() else test[:1].lower() + test[1:]} test"
        if test
        else "make it the pilot's first step"
    )
    sentence = (
        f"Before committing, measure {label}: {_HOW[key]}. It is the input nearest to changing "
        f"the answer ({flip.change_words} makes {to} the better choice), so {tie}."
    )
    base = flip.base_value
    scale = 1.0 if head in ("fte", "budget", "gpu_price") else 1.0 / base
    points = [
        f"{_quantity(scn, f.input, f.changed_value * scale)} ({f.change_pct:+.0%})"
        for f in flips
        if f.input == flip.input and f.architecture_flip
    ]
    measure = (
        f"{_cap(label)}: {_quantity(scn, flip.input, base * scale)} today; {to} becomes the "
        f"better choice at {' or '.join(points)}."
    )
    step = pl.DataFrame(
        [
            {
                "test": "Settle the decision",
                "workload": workload,
                "where": where,
                "run": f"Measure {_HOW[key]}.",
                "measure": measure,
                "why": "The recommendation is a close call and this is the input nearest to "
                "flipping it; the pilot's other tests assume the architecture is settled.",
            }
        ],
        schema=dict.fromkeys(PILOT_STEP_COLUMNS, pl.String),
    )
    return sentence, step


def _settle_without_flip(plan: Plan, searched: float) -> tuple[str, pl.DataFrame]:
    """What settles a close margin no single input flips, and its pilot step.

    Such a margin rests on the catalog's cost of running each platform, which the pilot's node
    replacement test measures.
    """
    where = ", ".join(plan.pools["pool"].unique(maintain_order=True).to_list()) or "–"
    sentence = (
        f"No single input flips it within ±{searched:.0%}: the margin rests on the catalog's "
        "estimates of what each platform takes to run (staff per cluster, per node and per "
        "add-on, assumption-grade figures), so make the pilot's GPU node replacement test, "
        "which measures hands-on hours, its first step."
    )
    step = pl.DataFrame(
        [
            {
                "test": "Settle the decision",
                "workload": "–",
                "where": where,
                "run": "Drain, replace and re-admit one GPU node in each pool; log every "
                "hands-on hour, and the upkeep of any batch add-on, for a month.",
                "measure": "Hands-on hours per node and per cluster against the catalog's "
                "staffing estimates, which decide the margin.",
                "why": "The recommendation is a close call that no single input flips; the "
                "running costs behind it are the least certain figures.",
            }
        ],
        schema=dict.fromkeys(PILOT_STEP_COLUMNS, pl.String),
    )
    return sentence, step


def _flip_words(nearest: Flip, flips: Sequence[Flip]) -> str:
    """The nearest flip's change in words, and the same input's other direction if it also flips.

    ``a 3% fall or a 6% rise in distributed training demand`` (the other direction only when it
    flips within the clear threshold).
    """
    other = next(
        (
            f
            for f in flips
            if f.input == nearest.input
            and f.direction != nearest.direction
            and f.architecture_flip
            and abs(f.change_pct) <= CLEAR_FLIP + 1e-9
        ),
        None,
    )
    if other is None:
        return nearest.change_words
    first, _, label = nearest.change_words.partition(" in ")
    second = other.change_words.partition(" in ")[0]
    return f"{first} or {second} in {label}"


def _no_flip_words(searched: float, flips: Sequence[Flip]) -> str:
    """``no single change of up to 50% in demand, … flips it``, qualified when a solve proved nothing.

    A search that met a time-limited plan of another architecture did not count it as a flip
    (:func:`~cluster_decide.analysis.flips.nearest_flips`); the sentence then names the first
    such change, so a meeting does not hear "nothing flips it" where the solver could not tell.
    With no input searched (``inputs=()``) it says so.
    """
    if searched <= 0.0:
        return "what would flip it was not searched"
    said = f"no single change of up to {searched:.0%} in {_searched_words(flips)}"
    unsure = [f for f in flips if not f.found and f.unproven_words]
    if not unsure:
        return f"{said} flips it"
    first = min(unsure, key=lambda f: abs(f.unproven / f.base_value - 1.0))
    return (
        f"{said} is proven to flip it (the solver ran out of time on {first.unproven_words} "
        "before proving which architecture is cheapest)"
    )


def _searched_words(flips: Sequence[Flip]) -> str:
    """The kinds of input searched, in words: ``demand, staff, GPU prices or the budget``."""
    heads = {f.input.partition(":")[0] for f in flips}
    words = [w for h, w in _INPUT_WORDS.items() if h in heads]
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)


def _verdict(
    proven: bool,
    margin_pct: float,
    alternatives: bool,
    nearest: Flip | None,
    win_rate: float,
) -> str:
    """The verdict from the margin, the nearest flip and (when sampled) the win rate."""
    if not math.isnan(win_rate) and win_rate < FRAGILE_WIN_RATE:
        return "fragile"
    if not proven:
        return "close"
    if not alternatives:
        return "clear"
    near = nearest is not None and abs(nearest.change_pct) <= CLEAR_FLIP + 1e-9
    return "clear" if margin_pct >= CLEAR_MARGIN and not near else "close"


def _sentence(
    rec_plan: Plan,
    verdict: str,
    runner_up: str | None,
    margin_usd: float,
    margin_pct: float,
    nearest: Flip | None,
    flips: Sequence[Flip],
    searched: float,
    robust: pl.DataFrame,
    robust_choice: str | None,
    samples: int,
) -> str:
    a = rec_plan.archetype
    flip = (
        f"{_flip_words(nearest, flips)} flips it to {_name(nearest.flips_to)}"
        if nearest is not None
        else _no_flip_words(searched, flips)
    )
    if runner_up is None:
        text = (
            f"Clear: {_name(a)} is the only architecture that can meet the requirements; every "
            "other one is infeasible" + (f" (though {flip})" if nearest is not None else "") + "."
        )
    else:
        margin = f"by {_pct(margin_pct)} ({money(margin_usd)} a month)"
        if verdict == "fragile":
            wins = dict(robust.select("archetype", "win_rate").iter_rows())
            top = max(wins, key=lambda k: (wins[k], k != a, k)) if wins else a
            text = (
                f"Fragile: {_name(a)} {_verb(a, 'is', 'are')} cheapest at today's figures, "
                f"{margin} over {_name(runner_up)}, but {_verb(a, 'wins', 'win')} only "
                f"{wins.get(a, 0):.0%} of {samples} sampled futures"
                + (f" against {wins.get(top, 0):.0%} for {_name(top)}" if top != a else "")
                + f"; {flip}."
            )
        elif margin_usd < 0:
            text = (
                f"Close call (unproven): {_name(runner_up)} solved on its own costs "
                f"{money(-margin_usd)} a month ({_pct(margin_pct)}) less than this plan's "
                f"{_name(a)}; {flip}."
            )
        elif verdict == "clear":
            text = f"Clear: {_name(a)} {_beats(a)} {_name(runner_up)} {margin}, and " + (
                f"it takes {_flip_words(nearest, flips)} to flip it to {_name(nearest.flips_to)}."
                if nearest is not None
                else f"{flip}."
            )
        else:
            lead = "Close call" if rec_plan.status.value == "optimal" else "Close call (unproven)"
            text = f"{lead}: {_name(a)} {_beats(a)} {_name(runner_up)} {margin}"
            near = nearest is not None and abs(nearest.change_pct) <= CLEAR_FLIP + 1e-9
            if margin_pct < CLEAR_MARGIN and not near:
                # A small margin that nothing near reverses: say both halves, and what they mean
                # (a far flip is no reason for the call, so it reads as the distance it is).
                reach = (
                    f"it takes {_flip_words(nearest, flips)} to flip it to "
                    f"{_name(nearest.flips_to)}"
                    if nearest is not None
                    else flip
                )
                text += (
                    f", less than the {CLEAR_MARGIN:.0%} a clear answer needs; {reach}, so on "
                    "cost either is a sound choice."
                )
            elif margin_pct >= CLEAR_MARGIN and near:
                text += f", but {flip}."  # a wide margin today that a near change reverses
            else:
                text += f"; {flip}."
    if samples and verdict != "fragile" and robust.height:
        wins = dict(robust.select("archetype", "win_rate").iter_rows())
        text += (
            f" {_cap(_name(a))} {_verb(a, 'wins', 'win')} {wins.get(a, 0.0):.0%} of {samples} "
            "sampled futures."
        )
    if rec_plan.status.value != "optimal":
        text += (
            " The solver stopped before proving this plan the cheapest, so the margin is "
            "indicative."
        )
    if robust_choice is not None and robust_choice != a:
        r = {row["archetype"]: row for row in robust.iter_rows(named=True)}
        mine, safe = r.get(a), r[robust_choice]
        if mine is None or not math.isfinite(mine["worst_regret_usd"]):
            risk = f"cannot be built in {1 - mine['p_feasible']:.0%} of them" if mine else ""
        else:
            risk = f"can be {money(mine['worst_regret_usd'])} above it"
        bound = (
            f"never more than {money(safe['worst_regret_usd'])} a month above the best plan"
            if safe["worst_regret_usd"] >= 0.5
            else "the cheapest plan in every one of them"
        )
        text += (
            f" Over {samples} sampled futures, {_name(robust_choice)} "
            f"{_verb(robust_choice, 'is', 'are')} the safer commitment: {bound}, while "
            f"{_name(a)} {risk}."
        )
    return text


def _one_provider(
    scn: Scenario, data: ModelData, plan: Plan, ev: Evaluation, runner_up: str | None, seed: int
) -> tuple[str | None, Outcome | None, str]:
    """The cheapest plan bought from one company, when a cluster of ``plan`` spans clouds.

    (company, its plan, the words), or ``(None, None, "")`` when every cluster rents from one
    company already. Each company the scenario may rent from (``procurement.providers``, or every
    catalog seller of the allowed classes) is tried alone with
    :func:`~cluster_decide.analysis.core.quick_solve`; ties go to the name first in order. A
    listed cluster of today keeps its own nodes (``docs/scenario.md``), so this prices what the
    plan rents anew. The runner-up is solved from that company too, so the sentence can say
    whether the verdict holds there: its margin was measured where a cluster spans clouds.
    Where instead a cluster of the estate's own machine room rents from a cloud, the estate is
    priced renting nothing (:func:`_no_cloud`): ``(None, that plan, the words)``.
    """
    mixed = mixed_sellers(data, plan.decisions(), ev)
    if not mixed:
        return (None, *_no_cloud(scn, data, plan, ev, runner_up, seed))
    proc = scn.procurement
    names = proc.providers or sorted(
        {o.seller for o in scn.catalog.offers if o.provider_class in proc.provider_classes}
    )
    best: tuple[str, Scenario, Outcome] | None = None
    for name in names:
        one = scn.update({"procurement": {"providers": [name]}})
        out = quick_solve(one, seed)
        if out.feasible and (best is None or out.total_monthly_usd < best[2].total_monthly_usd):
            best = (name, one, out)
    spans = and_list(
        [
            f"the {pool} cluster rents from {and_list(list(by_seller))}"
            for pool, by_seller in mixed.items()
        ]
    )
    lead = f"{_cap(spans)}, each GPU type where it is cheapest, but a cluster does not span clouds"
    if best is None:
        words = (
            f"{lead}, and no one company sells everything this estate needs: in practice that "
            "is a cluster per company, whose added staff and builds this cost does not count."
        )
        return None, None, words
    name, one, out = best
    there = prepare(one)
    rents = pool_sellers(there, out.decisions, evaluate_decisions(there, out.decisions))
    bought = f"bought from {name} alone" if rents else "renting from no cloud at all"
    # One company for everything bounds the real choice from above: a cluster per company (the
    # one-company plan is one such) costs no more, and no less than the plan.
    between = "a cluster per company, which the model does not choose, costs between the two"
    return (
        name,
        out,
        _priced_there(
            f"{lead}: {bought}", one, out, plan, runner_up, seed, between, f"from {name} alone"
        ),
    )


def _no_cloud(
    scn: Scenario, data: ModelData, plan: Plan, ev: Evaluation, runner_up: str | None, seed: int
) -> tuple[Outcome | None, str]:
    """The estate renting nothing, when a cluster of its own machine room rents from a cloud.

    Such a cluster's rented GPUs run, in practice, as a second cluster in that cloud, whose build
    and upkeep the plan does not count (``explain.machine_room_rents``): the estate renting
    nothing (every node its own, no on-demand or spot GPUs) bounds the real choice from above,
    the plan from below. Its best plan and the words; ``(None, "")`` when no such cluster rents.
    """
    rents = machine_room_rents(data, plan.decisions(), ev)
    if not rents:
        return None, ""
    room = machine_room(data, plan.decisions())
    spans = and_list(
        [
            f"the {pool} cluster's {and_list(room[pool])} nodes stand in your machine room and it "
            f"rents from {and_list(list(by))}"
            for pool, by in rents.items()
        ]
    )
    lead = f"{_cap(spans)}, but a cluster does not span a machine room and a cloud"
    none = scn.update({"procurement": {"mode": "on_prem", "on_demand_burst": False, "spot": False}})
    out = quick_solve(none, seed)
    if not out.feasible:
        return None, (
            f"{lead}, and renting from no cloud at all no plan meets this estate: in practice the "
            "rented GPUs run as a cluster in the cloud, whose build and upkeep this cost does not "
            "count."
        )
    between = "a cloud cluster beside it, which the model does not build, costs between the two"
    return out, _priced_there(
        f"{lead}: renting from no cloud at all",
        none,
        out,
        plan,
        runner_up,
        seed,
        between,
        "without renting",
    )


def _priced_there(
    words: str,
    there: Scenario,
    out: Outcome,
    plan: Plan,
    runner_up: str | None,
    seed: int,
    between: str,
    where: str,
) -> str:
    """``words`` (what the estate is priced as) with the best plan ``out`` of ``there``, said.

    What it costs beside ``plan``, from 10% more that the real choice lies ``between`` the two,
    and whether the verdict holds there: the runner-up (or, where the archetype changes, the
    plan's own) is solved in ``there`` too, since the margin was measured where ``plan`` rents
    as it does. ``where`` says how the runner-up could not be built ("from AWS alone").
    """
    delta = out.total_monthly_usd - plan.total_monthly_usd
    words = f"{words}, the best plan {_costs_more(delta, plan.total_monthly_usd)}"
    if delta >= CLEAR_MARGIN * plan.total_monthly_usd:
        words += f" ({between})"
    if out.archetype != plan.archetype:
        words += f" and is {_name(out.archetype)}"
        mine = quick_solve(there.force_archetype(plan.archetype), seed) if plan.archetype else None
        if mine is not None and mine.feasible:
            gap = mine.total_monthly_usd - out.total_monthly_usd
            words += (
                f", {money(gap)} ({_pct(gap / mine.total_monthly_usd)}) a month less there than "
                f"{_name(plan.archetype)}"
            )
        return words + ", so the verdict changes there."
    if runner_up is None:
        return words + "."
    rival = quick_solve(there.force_archetype(runner_up), seed)
    if not rival.feasible:
        return f"{words}; {_name(runner_up)} cannot be built {where}."
    gap = rival.total_monthly_usd - out.total_monthly_usd
    return (
        f"{words}, and there it still beats {_name(runner_up)} by {money(gap)} "
        f"({_pct(gap / out.total_monthly_usd)})."
    )


def _costs_more(delta: float, total: float, only: bool = False) -> str:
    """A monthly difference beside ``total`` in words: "costs $8.3k (1.3%) more a month".

    "costs the same a month" under 50 cents, "under 0.1%" below that share; ``only`` adds
    "only" before a rise (the executive sentence's near-tie).
    """
    if abs(delta) < 0.5:
        return "costs the same a month"
    share = delta / total if total else math.nan
    size = "under 0.1%" if abs(share) < 0.0005 else _pct(share)
    more = "more" if delta > 0 else "less"
    return (
        f"costs {'only ' if only and delta > 0 else ''}{money(abs(delta))} ({size}) {more} a month"
    )


def _whole_node_caveat(
    plan_usd: float, margin_usd: float, runner_up: str | None, extra: float, other: float
) -> str:
    """The margin with both plans counted in whole nodes, when that moves it by at least itself.

    A plan's cost is a floor where whole-node jobs share a renting pool with other work:
    ``extra`` is what this plan (costing ``plan_usd``) rents beyond it when such jobs get whole
    nodes, ``other`` what the runner-up rents beyond its own. Counted so, the margin is
    ``margin_usd - extra + other``; said (from $100) when that differs from the margin by at
    least the margin: the order may change, or the margin may be more than twice as wide.
    """
    shift = extra - other
    if not (math.isfinite(margin_usd) and math.isfinite(shift)):
        return ""
    if abs(shift) < max(100.0, margin_usd):
        return ""
    rival = _name(runner_up)
    mine = f"up to {money(extra)} a month more" if extra >= 0.5 else "nothing more"
    theirs = f"up to {money(other)} more" if other >= 0.5 else "nothing more"
    counted = margin_usd - shift
    lead = (
        f"Counted in whole nodes, this plan rents {mine} than its cost says and {rival} {theirs}: "
        "counted so, "
    )
    if counted < 0:
        return (
            f"{lead}{rival} {_verb(runner_up, 'costs', 'cost')} {money(-counted)} a month less, "
            "so the order may change."
        )
    return f"{lead}this plan costs {money(counted)} ({_pct(counted / (plan_usd + extra))}) a month less."


def _slurm_adds_nodes(scn: Scenario, plan: Plan, seed: int) -> tuple[Outcome | None, str]:
    """The estate's best plan if its Slurm started cloud nodes for queued jobs, and the words.

    The catalog takes Slurm clusters to run a fixed node list (``node_autoscaling`` partial:
    most do), though the clouds' Slurm services start nodes for waiting jobs and end them when
    idle, so a Slurm pool could rent its peaks and run interruptible work on spot. Where the
    scenario has not said, and a Slurm pool could rent so, the estate is solved once as if its
    Slurm did; said when that is :data:`SLURM_NODES_SAVING` cheaper or another architecture,
    with the clouds a Slurm cluster of that plan would rent from where they are more than one
    (each GPU type, spot and peaks are bought where cheapest, which one cluster does not do:
    ``explain.mixed_sellers``). ``(None, "")`` when no Slurm pool could rent, it changes too
    little to say, or the saving would come from a machine room's Slurm renting from a cloud (a
    second cluster there, uncosted: an HPC centre's owned cluster renting from Nebius).
    """
    if scn.catalog.platforms["slurm"].adds_nodes or "slurm" not in scn.policy.platforms:
        return None, ""
    elastic = scn.set_slurm_adds_nodes(True)
    data = prepare(elastic)
    slurm = {p.name for p in data.pools if p.platform == "slurm"}
    if data.unplaceable or (
        not any(p.bursts for p in data.pools if p.name in slurm)
        and not any(k[1] in slurm for k in data.spot_cents)
    ):
        return None, ""
    res = solve_model(data, seed=seed)  # ``quick_solve``, from the data prepared above
    dec = res.decisions
    if dec is None:
        return None, ""
    ev = evaluate_decisions(data, dec)
    out = outcome_of(data, res.status.value, dec, ev=ev)
    if set(machine_room_rents(data, dec, ev)) & slurm:
        return None, ""
    saving = plan.total_monthly_usd - out.total_monthly_usd
    other = out.archetype != plan.archetype
    if saving < 0.5 or (not other and saving < SLURM_NODES_SAVING * plan.total_monthly_usd):
        return None, ""
    lead = (
        "Slurm clusters are taken to keep a fixed set of nodes; one that starts cloud nodes for "
        "queued jobs (AWS ParallelCluster or PCS, Azure CycleCloud, Slurm's power saving with "
        "cloud nodes) could rent its peaks and run interruptible work on spot"
    )
    what = f"{_name(out.archetype)} at " if other else ""
    words = (
        f"{lead}: with such a Slurm the best plan is {what}{money(out.total_monthly_usd)} a month, "
        f"{money(saving)} ({_pct(saving / plan.total_monthly_usd)}) less"
    )
    spans = [
        f"its {pool} cluster would rent from {and_list(sorted(by))}"
        for pool, by in sorted(mixed_sellers(data, dec, ev).items())
        if pool in slurm
    ]
    if spans:
        words += f", though {and_list(spans)}, and a cluster does not span clouds"
    return out, f'{words}; if yours can, say node_autoscaling = "native" under [platforms.slurm].'


def _one_cluster_fewer(scn: Scenario, plan: Plan, seed: int) -> Outcome | None:
    """The best plan on fewer clusters than ``plan`` (None when it runs one cluster).

    Solved as every analysis solve is (:func:`~cluster_decide.analysis.core.quick_solve`: a
    deterministic limit, no infeasibility diagnosis), so the same inputs give the same words.
    """
    clusters = plan.decisions().open_pools()
    if len(clusters) < 2:
        return None
    return quick_solve(scn.update({"policy": {"max_pools": len(clusters) - 1}}), seed)


def _simpler_and_close(plan: Plan, fewer: Outcome | None, whole_nodes: float = 0.0) -> bool:
    """Whether the executive sentence names the plan on fewer clusters.

    It does when that plan is of the same archetype (another archetype is the runner-up's
    business) and costs less than :data:`CLEAR_MARGIN` more, as the model counts or counted in
    whole nodes (``whole_nodes``: what it gains there, see :func:`_fewer_words`): on cost
    alone, not a clear loser.
    """
    if fewer is None or not fewer.feasible or fewer.archetype != plan.archetype:
        return False
    delta = fewer.total_monthly_usd - plan.total_monthly_usd
    return min(delta, delta - whole_nodes) < CLEAR_MARGIN * plan.total_monthly_usd


def _fewer_words(
    plan: Plan, fewer: Outcome | None, short: bool = False, whole_nodes: float = 0.0
) -> str:
    """What the plan on fewer clusters costs beside ``plan`` and, unless ``short``, what moves.

    ``short`` is the clause of the executive sentence ("With two clusters instead of three, the
    best plan costs only $13 (under 0.1%) more a month."). ``whole_nodes`` is how much more the
    fewer-cluster plan gains than this plan when both are counted in whole nodes (what each
    rents beyond its cost, ``evaluation.whole_node_extra``): said from $100, it can reverse the
    order ("…, and counted in whole nodes $5.4k less").
    """
    if fewer is None:
        return ""
    n = len(plan.decisions().open_pools())
    if not fewer.feasible:
        if fewer.status == "infeasible":
            return f"No plan on fewer than {_clusters(n)} meets the requirements."
        return f"No plan on fewer than {_clusters(n)} was found within the solver's time limit."
    kept = [_cluster(p) for p in fewer.open_pools]
    delta = fewer.total_monthly_usd - plan.total_monthly_usd
    cost = _costs_more(delta, plan.total_monthly_usd, only=short)
    with_ = f"With {_clusters(len(kept))} instead of {number_words(n)}"
    if abs(whole_nodes) >= 100.0:
        counted = delta - whole_nodes
        cost += (
            f", and counted in whole nodes {money(abs(counted))} "
            f"{'more' if counted > 0 else 'less'}"
        )
    if short:
        return f"{with_}, the best plan {cost}."
    which = and_list(kept)
    if fewer.archetype != plan.archetype:
        which += f": {_name(fewer.archetype)}"
    moves = _moves(plan, fewer)
    return f"{with_} ({which}), the best plan {cost}" + (f"; {moves}." if moves else ".")


def _clusters(n: int) -> str:
    return f"{number_words(n)} cluster" + ("" if n == 1 else "s")


def _cluster(pool: str) -> str:
    """The cluster a pool is: a cluster of today with a batch add-on is still that cluster."""
    return pool.removesuffix(ADDON_SUFFIX)


def _moves(plan: Plan, fewer: Outcome, most: int = 3) -> str:
    """The workloads whose clusters differ between the two plans, in words.

    "X moves from A to B"; a split workload that gathers on one of its clusters "leaves A", and
    one that spreads "also runs on B".
    """

    def where(dec: Decisions) -> dict[str, set[str]]:
        pools: dict[str, set[str]] = {}
        for (w, pool, _g), share in dec.shares.items():
            if share > 0:
                pools.setdefault(w, set()).add(_cluster(pool))
        return pools

    def words(w: str, a: set[str], b: set[str]) -> str:
        if b < a:
            return f"{w} leaves {and_list(sorted(a - b))}"
        if a < b:
            return f"{w} also runs on {and_list(sorted(b - a))}"
        return f"{w} moves from {and_list(sorted(a))} to {and_list(sorted(b))}"

    before, after = where(plan.decisions()), where(fewer.decisions)
    moved = [
        words(w, before[w], after[w])
        for w in sorted(before)
        if w in after and before[w] != after[w]
    ]
    extra = f", and {len(moved) - most} more move" if len(moved) > most else ""
    return "; ".join(moved[:most]) + extra


def _feasible(runner_ups: pl.DataFrame) -> list[str]:
    """The archetypes that can be built at the base figures (the plan's first)."""
    return list(runner_ups.filter(pl.col("total_monthly_usd").is_not_nan())["archetype"])


def _searches(
    scn: Scenario,
    plan: Plan,
    runner_ups: pl.DataFrame,
    samples: int,
    seed: int,
    inputs: Sequence[str] | None,
    levels: Sequence[float],
    executor: Executor | None,
    progress: bool = False,
) -> tuple[list[Flip], UncertaintyResult | None]:
    """The flip search and, with samples, the sweep, on ``executor`` (None: in this process)."""
    flips = nearest_flips(
        scn,
        plan.archetype,
        plan.cash_monthly_usd,
        inputs,
        levels,
        seed=seed,
        executor=executor,
        max_workers=1,
    )
    if not samples:
        return flips, None
    sweep = uncertainty(
        scn,
        samples,
        seed,
        distributions=catalog_distributions(scn),
        archetypes=_feasible(runner_ups),
        executor=executor,
        max_workers=1,
        progress=progress,
    )
    return flips, sweep


def recommend(
    scn: Scenario,
    *,
    plan: Plan | None = None,
    samples: int = 0,
    seed: int = 0,
    time_limit_s: float = 10.0,
    workers: int | None = None,
    executor: Executor | None = None,
    max_workers: int | None = 1,
    inputs: Sequence[str] | None = None,
    levels: Sequence[float] = LEVELS,
    progress: bool = False,
    alternatives: pl.DataFrame | None = None,
) -> Recommendation:
    """The recommendation for ``scn`` with its margin, nearest flips and verdict.

    ``plan`` is ``cd.solve(scn, time_limit_s, workers, seed)`` unless given. Every other
    archetype is solved forced (``cd.compare``); the flips search ``inputs`` (default: demand
    per kind, staff per skill, GPU prices, budget) level by level over ``levels``. With
    ``samples`` > 0, that many input sets are drawn from the catalog's ranges
    (:func:`~cluster_decide.analysis.ranges.catalog_distributions`, seeded by ``seed``) and solved
    freely and with each feasible archetype forced, on ``executor`` (any
    ``concurrent.futures.Executor``: a thread pool, a process pool, Dask's
    ``client.get_executor()``) or one local process pool of ``max_workers`` (None: 2 or the CPU
    count if lower; 1, the default: in this process) that the flip search shares. Every
    analysis solve is deterministic, so the numbers do not depend on the executor.
    ``alternatives``: a ``cd.compare(scn)`` frame already computed for this scenario (an export
    shows one beside the verdict); it is used instead of solving every archetype again, so the
    runner-up and margin are the very figures the alternatives slide shows.
    """
    if samples < 0:
        raise ValueError(f"samples must be 0 or more, got {samples}")
    plan = plan if plan is not None else solve(scn, time_limit_s, workers, seed)
    empty_flips = flips_frame([], plan.archetype)
    empty_robust = pl.DataFrame(schema=ROBUST_SCHEMA)
    empty_step = pl.DataFrame(schema=dict.fromkeys(PILOT_STEP_COLUMNS, pl.String))
    if not _has_plan(plan):
        why = (
            "no plan meets the requirements; the plan lists why and the cheapest fixes"
            if plan.status.value == "infeasible"
            else "the solver found no plan within its time limit; give it more time"
        )
        return Recommendation(
            plan,
            "none",
            f"No recommendation: {why}.",
            None,
            math.nan,
            math.nan,
            math.nan,
            pl.DataFrame(schema=RUNNER_UPS_SCHEMA),
            empty_flips,
            empty_robust,
            None,
            samples,
            seed,
            "",
            empty_step,
        )
    runner_ups = _runner_ups(scn, plan, time_limit_s, workers, seed, alternatives)
    others = runner_ups.filter(
        (pl.col("archetype") != plan.archetype) & pl.col("total_monthly_usd").is_not_nan()
    )
    runner_up = others["archetype"][0] if others.height else None
    runner_cost = float(others["total_monthly_usd"][0]) if others.height else math.nan
    margin_usd = runner_cost - plan.total_monthly_usd
    margin_pct = margin_usd / plan.total_monthly_usd if plan.total_monthly_usd else math.nan
    local = max_workers if max_workers is not None else min(2, os.cpu_count() or 1)
    with ExitStack() as stack:
        if executor is None and local > 1:  # one local pool for the flips and the samples
            # Spawned, not forked: a forked child can deadlock on polars' thread pool.
            spawn = multiprocessing.get_context("spawn")
            executor = stack.enter_context(ProcessPoolExecutor(local, mp_context=spawn))
        flips, sweep = _searches(
            scn, plan, runner_ups, samples, seed, inputs, levels, executor, progress
        )
    nearest = next((f for f in flips if f.architecture_flip), None)
    searched = max((f.searched_pct for f in flips), default=0.0)
    robust, robust_choice = empty_robust, None
    ranges = pl.DataFrame(schema=RANGES_SCHEMA)
    win_rate = math.nan
    if sweep is not None:
        robust = _robust(sweep, _feasible(runner_ups))
        robust_choice = robust.filter(pl.col("least_worst_regret"))["archetype"][0]
        win_rate = float(dict(robust.select("archetype", "win_rate").iter_rows())[plan.archetype])
        ranges = input_ranges(scn)
    verdict = _verdict(
        plan.status.value == "optimal", margin_pct, runner_up is not None, nearest, win_rate
    )
    sentence = _sentence(
        plan,
        verdict,
        runner_up,
        margin_usd,
        margin_pct,
        nearest,
        flips,
        searched,
        robust,
        robust_choice,
        samples,
    )
    fewer = _one_cluster_fewer(scn, plan, seed)
    data = prepare(scn)
    dec = plan.decisions()  # rebuilt from the plan's frames at each call: once here
    ev = evaluate_decisions(data, dec)
    extra = whole_node_usd(data, dec, ev)
    gained = 0.0  # what the fewer-cluster plan gains on this one, counted in whole nodes
    if fewer is not None and fewer.feasible:
        gained = extra - whole_node_usd(data, fewer.decisions)
    caveats = []
    if _simpler_and_close(plan, fewer, gained):
        caveats.append(_fewer_words(plan, fewer, short=True, whole_nodes=gained))
    other = float(others["whole_node_usd"][0]) if others.height else math.nan
    caveats.append(_whole_node_caveat(plan.total_monthly_usd, margin_usd, runner_up, extra, other))
    provider, single, single_words = _one_provider(scn, data, plan, ev, runner_up, seed)
    caveats.append(single_words)
    caveats.append(idle_caveat(idle_rooms(data, dec)))
    elastic, elastic_words = _slurm_adds_nodes(scn, plan, seed)
    caveats.append(elastic_words)
    caveats = [c for c in caveats if c]
    sentence = " ".join([sentence, *caveats])
    settle, step = "", empty_step
    if verdict != "clear" and nearest is not None and abs(nearest.change_pct) <= CLEAR_FLIP:
        settle, step = _settle(scn, plan, nearest, flips)
    elif verdict != "clear" and runner_up is not None:
        settle, step = _settle_without_flip(plan, CLEAR_FLIP if nearest else searched)
    return Recommendation(
        plan,
        verdict,
        sentence,
        runner_up,
        runner_cost,
        margin_usd,
        margin_pct,
        runner_ups,
        flips_frame(flips, plan.archetype),
        robust,
        robust_choice,
        samples,
        seed,
        settle,
        step,
        ranges,
        sweep,
        fewer,
        _fewer_words(plan, fewer, whole_nodes=gained),
        provider,
        single,
        single_words,
        tuple(caveats),
        elastic,
    )
