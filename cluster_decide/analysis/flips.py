"""The nearest changes of an input that flip the recommended architecture.

A meeting argues about a handful of inputs (demand per workload kind, staff per skill, GPU
prices, the budget) and wants to know which of them could change the answer, and by how much.
:func:`nearest_flips` answers with solves, never extrapolation: it widens a search level by level
(by default ±10%, ±25%, ±50% of each input's base value), solving every input in both
directions at each level, and stops at the first level where some input flips the architecture.
Each input that flipped there is then bisected, all together, between the last level where it
did not and the one where it did, down to ``step`` (1 percentage point). So the nearest flip is
found with a few solves per input, and the frame says which inputs were searched how far.

Only proven answers count: a solve that stops at its work limit with a plan of another
architecture has not shown that architecture to be cheaper (near-equal twins trade places
when the search is cut short), so it is not a flip; the input is searched on, and the frame
keeps the first such value (``unproven_value``), which the sentence states.

Like :func:`~cluster_decide.analysis.sensitivity.break_even`, every bracket is two real solves;
a flip that reverts between two levels can be missed (the grid is coarse where nothing
changes). A budget only binds once it falls below the plan's cash spend, so budget levels above
that are not solved (a tighter constraint the optimum already meets leaves it optimal); a budget
is raised only when it binds. Staff of a skill the team does not have cannot change by a
percentage, and is left to the hiring lever.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import polars as pl

from cluster_decide.analysis.core import DETERMINISTIC_LIMIT, RECHECK_WORK, Outcome, run_all
from cluster_decide.analysis.inputs import apply_inputs, base_value, input_label, input_unit
from cluster_decide.base.constants import SKILLS, WORKLOAD_KINDS
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import ARCHETYPE_SHORT, money

__all__ = [
    "FLIPS_SCHEMA",
    "LEVELS",
    "Flip",
    "change_pct_words",
    "flip_inputs",
    "flips_frame",
    "nearest_flips",
]

LEVELS = (0.10, 0.25, 0.50)
"""Relative changes searched, nearest first (±10% covers most forecast errors; ±25% is the
verdict's "clear" threshold; ±50% says how far a clear answer holds)."""

FLIPS_SCHEMA = {
    "input": pl.String,
    "label": pl.String,
    "unit": pl.String,
    "direction": pl.String,
    "base_value": pl.Float64,
    "searched_pct": pl.Float64,
    "found": pl.Boolean,
    "change_pct": pl.Float64,
    "same_value": pl.Float64,
    "changed_value": pl.Float64,
    "flips_to": pl.String,
    "flips_to_monthly_usd": pl.Float64,
    "unproven_value": pl.Float64,
    "sentence": pl.String,
}
"""Columns of :attr:`~cluster_decide.analysis.recommendation.Recommendation.flips`, one row per input
and direction (``up`` or ``down``), nearest flip first. ``searched_pct``: how far the input was
searched (a fraction of its base value; the frame stops at the first level where anything
flips). When ``found``: ``change_pct`` is the signed change (fraction of the base value) of the
solved value ``changed_value`` where the architecture is ``flips_to`` (null when no plan is
feasible there) at ``flips_to_monthly_usd``; ``same_value`` is the solved value nearest to it
that still gives the plan's architecture. ``unproven_value``: the first value searched whose
solve stopped at its work limit with a plan of another architecture (not counted as a flip;
null when none). Values in the input's ``unit``."""


@dataclass(frozen=True)
class Flip:
    """One input and direction: how far it was searched and where the architecture changed."""

    input: str
    direction: str
    base_value: float
    searched_pct: float
    found: bool
    same_value: float
    changed_value: float
    changed: Outcome | None
    unproven: float = math.nan
    """The first value whose solve found another architecture without proving it cheapest."""

    @property
    def change_pct(self) -> float:
        """The signed change of ``changed_value`` from the base, as a fraction (NaN if none)."""
        if not self.found or not self.base_value:
            return math.nan
        return self.changed_value / self.base_value - 1.0

    @property
    def flips_to(self) -> str | None:
        """The architecture at the flip (None when none was found or no plan is feasible)."""
        return self.changed.archetype if self.changed is not None and self.found else None

    @property
    def architecture_flip(self) -> bool:
        """Whether another architecture (not infeasibility) takes over at the flip."""
        return self.found and self.flips_to is not None

    @property
    def change_words(self) -> str:
        """``a 9% rise in distributed training demand`` (or ``a 4% fall in …``)."""
        return self._words(self.change_pct)

    @property
    def unproven_words(self) -> str:
        """The first change whose solve proved nothing, in words (empty when there is none)."""
        if math.isnan(self.unproven) or not self.base_value:
            return ""
        return self._words(self.unproven / self.base_value - 1.0)

    def _words(self, change: float) -> str:
        shown = change_pct_words(abs(change))
        article = "an" if _said_with_a_vowel(shown) else "a"
        return (
            f"{article} {shown} {'rise' if self.direction == 'up' else 'fall'} in "
            f"{input_label(self.input)}"
        )

    def sentence(self, base_archetype: str | None) -> str:
        """The flip, or how far the input was searched without one, in words."""
        label = input_label(self.input)
        if not self.found:
            said = f"No change of {label} within {self.searched_pct:.0%} {self.direction} flips it"
            if math.isnan(self.unproven):
                return said + "."
            return (
                f"{said} for certain: at {_fmt(self.input, self.unproven)} the solver ran out of "
                "time before proving which architecture is cheapest."
            )
        to = self.flips_to
        value = _fmt(self.input, self.changed_value)
        if to is None:
            return f"{_cap(self.change_words)} ({value}) leaves no feasible plan."
        cost = self.changed.total_monthly_usd if self.changed is not None else math.nan
        return (
            f"{_cap(self.change_words)} ({value}) flips it from {ARCHETYPE_SHORT[base_archetype or '']} "
            f"to {ARCHETYPE_SHORT[to]} ({money(cost)} a month)."
        )


def change_pct_words(pct: float) -> str:
    """A change as a percentage never smaller than the change itself: ``9%``, ``2.5%``, ``9.4%``.

    A flip is a solved value, and the change said must reach it: rounded to the nearest whole
    percent, a flip found at +2.5% read "a 2% rise" (half to even), and at +2% the plan had not
    flipped (a Slurm shop's verdict). A whole percent is said as one; anything else is rounded
    up to a tenth.
    """
    whole = round(pct * 100)
    if whole >= 1 and abs(pct * 100 - whole) < 1e-6:
        return f"{whole}%"
    return f"{math.ceil(pct * 1000 - 1e-6) / 10:g}%"


def _said_with_a_vowel(shown: str) -> bool:
    """Whether a percentage such as ``11%`` or ``8.5%`` is read aloud starting with a vowel.

    Then it takes "an": "an 11% rise" (eleven), "an 8.5% fall" (eight), "an 80% rise".
    """
    whole = shown.rstrip("%").partition(".")[0]
    return whole.startswith("8") or whole in ("11", "18")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fmt(name: str, value: float) -> str:
    unit = input_unit(name)
    if unit == "FTE":
        return f"{value:.2f} FTE"
    if unit == "USD/month":
        return f"{money(value)} a month"
    return f"×{value:.2f}"


def flip_inputs(scn: Scenario) -> list[str]:
    """The inputs a meeting argues about, present in ``scn``.

    Demand per kind present, staff per skill the team has, GPU prices and the budget (when
    there is one).
    """
    names = [f"demand:{k}" for k in WORKLOAD_KINDS if any(w.kind == k for w in scn.workloads)]
    names += [f"fte:{s}" for s in SKILLS if getattr(scn.team, s).fte > 0]
    names.append("gpu_price")
    if scn.policy.budget_usd_per_month is not None:
        names.append("budget")
    return names


@dataclass
class _Search:
    """The search state of one input and direction."""

    input: str
    direction: str
    base: float
    same: float
    changed: float = math.nan
    outcome: Outcome | None = None
    searched: float = 0.0
    unproven: float = math.nan

    def takes(self, v: float, out: Outcome, base_archetype: str | None) -> bool:
        """Record the solve at ``v``; False when it proves nothing (a time-limited other plan)."""
        if out.archetype == base_archetype:
            self.same = v
        elif out.proven:
            self.changed, self.outcome = v, out
        else:
            if math.isnan(self.unproven):
                self.unproven = v
            return False
        return True

    def value(self, level: float) -> float:
        return self.base * (1 + level if self.direction == "up" else 1 - level)


def nearest_flips(
    scn: Scenario,
    base_archetype: str | None,
    cash_monthly_usd: float,
    inputs: Sequence[str] | None = None,
    levels: Sequence[float] = LEVELS,
    step: float = 0.01,
    seed: int = 0,
    executor: Executor | None = None,
    max_workers: int | None = 1,
) -> list[Flip]:
    """Search each input up and down, level by level, for the nearest change of architecture.

    ``base_archetype`` is the plan's architecture (what must change) and
    ``cash_monthly_usd`` the plan's cash spend (where a budget starts to bind). Returns one
    :class:`Flip` per input and direction, nearest flip first. Solves run through
    :func:`~cluster_decide.analysis.core.run_all` (``executor``, ``max_workers``), and are
    deterministic, so the result does not depend on them.
    """
    names = list(inputs) if inputs is not None else flip_inputs(scn)
    searches: list[_Search] = []
    for name in names:
        b = base_value(scn, name)
        if b <= 0:
            continue
        for direction in ("up", "down"):
            if name == "budget" and direction == "up" and cash_monthly_usd < 0.999 * b:
                continue  # raising a budget that does not bind changes nothing
            searches.append(_Search(name, direction, b, b))

    def solve(points: list[tuple[_Search, float]]) -> list[Outcome]:
        scenarios = [apply_inputs(scn, {s.input: v}) for s, v in points]
        outs = run_all(scenarios, executor, max_workers, seed) if scenarios else []
        # Another architecture without a proof is solved again with more work before it counts.
        again = [i for i, o in enumerate(outs) if o.unproven_other(base_archetype)]
        if again:
            limit = RECHECK_WORK * DETERMINISTIC_LIMIT
            redone = run_all(
                [scenarios[i] for i in again],
                executor,
                max_workers,
                seed,
                deterministic_limit=limit,
            )
            for i, o in zip(again, redone, strict=True):
                outs[i] = o
        return outs

    for level in levels:
        todo = [s for s in searches if s.outcome is None]
        points = []
        for s in todo:
            v = s.value(level)
            if s.input == "budget" and v >= cash_monthly_usd:
                s.same, s.searched = v, level  # the plan still fits: no solve needed
                continue
            points.append((s, v))
        for (s, v), out in zip(points, solve(points), strict=True):
            s.searched = level
            s.takes(v, out, base_archetype)
        if any(s.outcome is not None and s.outcome.feasible for s in todo):
            break
    flipped = [s for s in searches if s.outcome is not None]
    # Bisect every flipped input between its last "same" value and its first "changed" one; a
    # midpoint that proves nothing ends that input's bisection (its bracket stays as it was).
    while True:
        wide = [s for s in flipped if abs(s.changed - s.same) > step * s.base * (1 + 1e-9)]
        if not wide:
            break
        points = [(s, (s.same + s.changed) / 2) for s in wide]
        for (s, v), out in zip(points, solve(points), strict=True):
            if not s.takes(v, out, base_archetype):
                flipped.remove(s)
    flips = [
        Flip(
            s.input,
            s.direction,
            s.base,
            s.searched,
            s.outcome is not None,
            s.same,
            s.changed if s.outcome is not None else s.value(s.searched),
            s.outcome,
            s.unproven,
        )
        for s in searches
    ]
    return sorted(
        flips,
        key=lambda f: (
            not f.architecture_flip,
            not f.found,
            abs(f.change_pct) if f.found else -f.searched_pct,
            f.input,
            f.direction,
        ),
    )


def flips_frame(flips: Sequence[Flip], base_archetype: str | None) -> pl.DataFrame:
    """The flips as a tidy frame (:data:`FLIPS_SCHEMA`)."""
    rows = [
        {
            "input": f.input,
            "label": input_label(f.input),
            "unit": input_unit(f.input),
            "direction": f.direction,
            "base_value": f.base_value,
            "searched_pct": f.searched_pct,
            "found": f.found,
            "change_pct": f.change_pct,
            "same_value": f.same_value,
            "changed_value": f.changed_value if f.found else math.nan,
            "flips_to": f.flips_to,
            "flips_to_monthly_usd": f.changed.total_monthly_usd
            if f.found and f.changed is not None
            else math.nan,
            "unproven_value": None if math.isnan(f.unproven) else f.unproven,
            "sentence": f.sentence(base_archetype),
        }
        for f in flips
    ]
    return pl.DataFrame(rows, schema=FLIPS_SCHEMA)
