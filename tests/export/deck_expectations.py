"""What the default deck should say, computed from the bundle it is made from: the export
tests check the deck's words against these, so they follow whatever the answer is."""

from __future__ import annotations

from typing import Any

import polars as pl

import cluster_decide as cd
from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, SKILL_LABELS
from cluster_decide.export import Bundle
from cluster_decide.export.assumptions import key_assumptions
from cluster_decide.planning.explain import ARCHETYPE_WORDS, money

_MID_SENTENCE = {
    "slurm_only": "Slurm only",
    "kubernetes_only": "Kubernetes only",
    "kubernetes_batch": "Kubernetes + batch add-on",
    "hybrid_separate": "separate Slurm and Kubernetes",
    "hybrid_shared": "shared pool (Slurm on Kubernetes)",
}
"""Each architecture's label as it reads inside a sentence (product names keep capitals)."""
_COUNT = ["One cluster", "Two clusters", "Three clusters", "Four clusters"]


def runner_up(bundle: Bundle) -> dict[str, Any] | None:
    """The cheapest feasible archetype other than the plan's, from the bundle's comparison."""
    assert bundle.alternatives is not None
    others = bundle.alternatives.filter(
        (pl.col("status") != "infeasible") & (pl.col("archetype") != bundle.plan.archetype)
    ).sort("total_monthly_usd")
    return others.row(0, named=True) if others.height else None


def mid_sentence(archetype: str) -> str:
    return _MID_SENTENCE[archetype]


def hire_words(plan: cd.Plan) -> str:
    """The plan's hires as the deck words them, or that none are needed."""
    hires = [(r["skill"], r["hires"]) for r in plan.staffing.iter_rows(named=True) if r["hires"]]
    if not hires:
        return "no new hires"
    return " and ".join(
        f"{'one' if n == 1 else n} new {SKILL_LABELS[s]} engineer{'s' if n > 1 else ''}"
        for s, n in hires
    )


def _today(plan: cd.Plan) -> list[str]:
    """The today-against-proposal slide's title start, when the plan carries today's cost or
    a transition (the current-estate inputs)."""
    current = getattr(plan, "current_monthly_usd", None)
    transition = getattr(plan, "transition", None)
    if current is not None:
        return ["The proposal "]
    if isinstance(transition, pl.DataFrame) and transition.height:
        moves = int((transition["action"] == "move").sum())
        new = int((transition["action"] == "new").sum())
        if moves == 0 and new == transition.height:
            return ["Nothing runs today"]
        if moves == 0:
            return ["Nothing moves" if new else "Every workload stays"]
        return ["One workload moves" if moves == 1 else f"{moves} workloads move"]
    return []


def story_order(bundle: Bundle) -> list[str]:
    """The story's slides by the start of their action titles, in order, computed from the
    bundle's plan, comparison and assumptions (so they follow whatever the answer is)."""
    plan, scn = bundle.plan, bundle.scenario
    assert plan.archetype is not None and scn is not None
    n_clusters = plan.pools["pool"].n_unique()
    runner = runner_up(bundle)
    sl = plan.service_levels.select("workload", "metric", "met").unique()
    missed = sl.filter(~pl.col("met")).height
    staff = " and ".join(
        f"{r['required_fte']:.1f} {SKILL_LABELS[r['skill']]} FTE"
        for r in plan.staffing.iter_rows(named=True)
        if r["required_fte"] > 0
    )
    figures = key_assumptions(plan, scn)
    guessed = figures.filter(pl.col("confidence").is_in(["assumption", "low"])).height
    return [
        f"Run {ARCHETYPE_WORDS[plan.archetype]} for {money(plan.total_monthly_usd)} a month",
        f"{ARCHETYPE_LABELS[plan.archetype]} is the cheapest design",
        # "Two clusters: what each runs", or "Two clusters with N GPUs" when that runs long.
        f"{_COUNT[n_clusters - 1]}",
        f"{money(plan.total_monthly_usd)} a month",
        "The runner-up," if runner else "No other architecture meets every requirement",
        "The answer holds unless costs shift by "
        f"{money(runner['total_monthly_usd'] - plan.total_monthly_usd)} a month"
        if runner
        else "The tightest spot is",
        {1: "The one service target is met", 2: "Both service targets are met"}.get(
            sl.height, f"All {sl.height} service targets are met"
        )
        if not missed
        else f"{missed} of {sl.height} service targets are missed",
        f"{staff[0].upper()}{staff[1:]} run it, with {hire_words(plan)}",
        *_today(plan),
        "Pilot: prove four real workloads",
        "Pilot: break things on purpose",
        f"Decision: approve {money(plan.cash_monthly_usd)} a month",
        "Appendix: where each workload runs",
        f"Appendix: {guessed} of the {figures.height} key figures are our estimates",
        "Appendix: the few technical terms",
    ]
