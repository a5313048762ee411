"""Break-even points (bisection over solves) and tornado sensitivity of cost and archetype.

A break-even is bracketed, never interpolated: the report names two solved values of the input,
one where the recommended archetype is still the base one and one where it has changed, within
a stated tolerance of each other. The archetype need not change monotonically in an input;
bisection then finds *a* change point between the base and the far end of the range, and the
bracket is still true.
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass

import polars as pl

from cluster_decide.analysis.core import (
    DETERMINISTIC_LIMIT,
    RECHECK_WORK,
    Outcome,
    quick_solve,
    run_all,
)
from cluster_decide.analysis.inputs import (
    apply_inputs,
    base_value,
    default_inputs,
    input_label,
    input_unit,
)
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import ARCHETYPE_WORDS

__all__ = [
    "BREAK_EVEN_SCHEMA",
    "TORNADO_SCHEMA",
    "BreakEven",
    "break_even",
    "break_evens",
    "tornado",
]

TORNADO_SCHEMA = {
    "input": pl.String,
    "label": pl.String,
    "unit": pl.String,
    "base_value": pl.Float64,
    "low_value": pl.Float64,
    "high_value": pl.Float64,
    "base_monthly_usd": pl.Float64,
    "low_monthly_usd": pl.Float64,
    "high_monthly_usd": pl.Float64,
    "low_delta_usd": pl.Float64,
    "high_delta_usd": pl.Float64,
    "swing_usd": pl.Float64,
    "base_archetype": pl.String,
    "low_archetype": pl.String,
    "high_archetype": pl.String,
    "archetype_changes": pl.Boolean,
}
"""Columns of :func:`tornado` (money in USD per month; ``swing_usd`` = |high − low|)."""

BREAK_EVEN_SCHEMA = {
    "input": pl.String,
    "label": pl.String,
    "unit": pl.String,
    "base_value": pl.Float64,
    "base_archetype": pl.String,
    "found": pl.Boolean,
    "value": pl.Float64,
    "same_value": pl.Float64,
    "same_monthly_usd": pl.Float64,
    "changed_value": pl.Float64,
    "changed_archetype": pl.String,
    "changed_monthly_usd": pl.Float64,
    "solves": pl.Int64,
    "sentence": pl.String,
}
"""Columns of :func:`break_evens`: ``same_*`` is the solved value nearest the break-even that
still gives the base archetype, ``changed_*`` the one beyond it; ``value`` their midpoint."""


def _fmt(name: str, value: float, base: float) -> str:
    unit = input_unit(name)
    if unit == "x":
        return f"{value / base:.2g}×" if base else f"{value:.3g}"
    if unit == "FTE":
        return f"{value:.2f} FTE"
    if unit == "USD/year":
        return f"${value:,.0f} a year"
    if unit == "USD/month":
        return f"${value:,.0f} a month"
    return "on" if value >= 0.5 else "off"


@dataclass(frozen=True)
class BreakEven:
    """Where the recommended archetype changes along one input, bracketed by two solves."""

    input: str
    base_value: float
    base_archetype: str | None
    found: bool
    same_value: float
    same: Outcome
    changed_value: float
    changed: Outcome
    solves: int

    @property
    def value(self) -> float:
        """The midpoint of the bracket (NaN when no change was found)."""
        return (self.same_value + self.changed_value) / 2 if self.found else math.nan

    @property
    def sentence(self) -> str:
        """The break-even in words: "hybrid stays best up to 2.3× real-time inference demand"."""
        words = ARCHETYPE_WORDS.get(self.base_archetype or "", str(self.base_archetype))
        label = input_label(self.input)
        if not self.found:
            return (
                f"{words[0].upper()}{words[1:]} stays best for {label} from "
                f"{_fmt(self.input, self.base_value, self.base_value)} to "
                f"{_fmt(self.input, self.changed_value, self.base_value)}."
            )
        where = "up to" if self.changed_value > self.base_value else "down to"
        then = (
            f"{ARCHETYPE_WORDS.get(self.changed.archetype or '', '')} ({self.changed.archetype}) "
            "is best"
            if self.changed.feasible
            else "no plan is feasible"
        )
        return (
            f"{words[0].upper()}{words[1:]} stays best {where} "
            f"{_fmt(self.input, self.same_value, self.base_value)} {label}; at "
            f"{_fmt(self.input, self.changed_value, self.base_value)}, {then}."
        )


def break_even(
    scn: Scenario,
    name: str,
    limit: float,
    rel_tol: float = 0.02,
    max_solves: int = 12,
    seed: int = 0,
) -> BreakEven:
    """Bisect ``name`` between its base value and ``limit`` for a change of archetype.

    Stops when the bracket is narrower than ``rel_tol`` of the larger of |base| and |limit|, or
    after ``max_solves`` solves. When the archetype at ``limit`` is still the base one, returns
    ``found=False`` with ``changed_value = limit``.
    """
    base_v = base_value(scn, name)
    base = quick_solve(scn, seed)

    def at(v: float) -> Outcome:
        # Another architecture without a proof is solved again with more work before it counts
        # (as in the flip search: near-equal twins trade places when a search is cut short).
        changed = apply_inputs(scn, {name: v})
        out = quick_solve(changed, seed)
        if out.unproven_other(base.archetype):
            out = quick_solve(changed, seed, deterministic_limit=RECHECK_WORK * DETERMINISTIC_LIMIT)
        return out

    lo_v, lo = base_v, base
    hi_v, hi = limit, at(limit)
    solves = 2
    if hi.archetype == base.archetype:
        return BreakEven(name, base_v, base.archetype, False, limit, hi, limit, hi, solves)
    tol = rel_tol * max(abs(base_v), abs(limit))
    while abs(hi_v - lo_v) > tol and solves < max_solves:
        mid_v = (lo_v + hi_v) / 2
        mid = at(mid_v)
        solves += 1
        if mid.archetype == base.archetype:
            lo_v, lo = mid_v, mid
        else:
            hi_v, hi = mid_v, mid
    return BreakEven(name, base_v, base.archetype, True, lo_v, lo, hi_v, hi, solves)


def break_evens(
    scn: Scenario,
    inputs: list[str] | None = None,
    down: float = 0.25,
    up: float = 4.0,
    rel_tol: float = 0.02,
    max_solves: int = 10,
    seed: int = 0,
) -> pl.DataFrame:
    """Break-evens of each input (default: demand per kind, staff, GPU price) in both directions.

    Each input is searched from its base value up to ``up`` × base and down to ``down`` × base
    (for staff with none available: up to ``up`` FTE). One row per direction.
    """
    names = inputs if inputs is not None else default_inputs(scn, slo=False)
    rows = []
    for name in names:
        b = base_value(scn, name)
        limits = [b * up, b * down] if b else [up]
        for limit in limits:
            be = break_even(scn, name, limit, rel_tol, max_solves, seed)
            rows.append(
                {
                    "input": name,
                    "label": input_label(name),
                    "unit": input_unit(name),
                    "base_value": be.base_value,
                    "base_archetype": be.base_archetype,
                    "found": be.found,
                    "value": be.value,
                    "same_value": be.same_value,
                    "same_monthly_usd": be.same.total_monthly_usd,
                    "changed_value": be.changed_value,
                    "changed_archetype": be.changed.archetype,
                    "changed_monthly_usd": be.changed.total_monthly_usd,
                    "solves": be.solves,
                    "sentence": be.sentence,
                }
            )
    return pl.DataFrame(rows, schema=BREAK_EVEN_SCHEMA)


def tornado(
    scn: Scenario,
    pct: float = 0.2,
    inputs: list[str] | None = None,
    seed: int = 0,
    executor: Executor | None = None,
    max_workers: int | None = None,
    progress: bool | str = False,
) -> pl.DataFrame:
    """Monthly cost and archetype with each input at −``pct`` and +``pct`` of its base value.

    One row per input, largest swing first. An input whose base value is 0 (no staff of a skill)
    moves by ±1 instead, floored at 0. Solves run on ``executor`` (default: a local process pool
    of ``max_workers``).
    """
    if not 0 < pct < 1:
        raise ValueError(f"pct must be between 0 and 1, got {pct}")
    names = inputs if inputs is not None else default_inputs(scn)
    base = quick_solve(scn, seed)
    points: list[tuple[str, float, float, float]] = []
    scenarios = []
    for name in names:
        b = base_value(scn, name)
        low, high = (b * (1 - pct), b * (1 + pct)) if b else (0.0, 1.0)
        if input_unit(name) == "on/off":
            low, high = 0.0, 1.0
        points.append((name, b, low, high))
        scenarios += [apply_inputs(scn, {name: low}), apply_inputs(scn, {name: high})]
    outs = run_all(scenarios, executor, max_workers, seed, progress=progress)
    rows = []
    for i, (name, b, low, high) in enumerate(points):
        lo, hi = outs[2 * i], outs[2 * i + 1]
        rows.append(
            {
                "input": name,
                "label": input_label(name),
                "unit": input_unit(name),
                "base_value": b,
                "low_value": low,
                "high_value": high,
                "base_monthly_usd": base.total_monthly_usd,
                "low_monthly_usd": lo.total_monthly_usd,
                "high_monthly_usd": hi.total_monthly_usd,
                "low_delta_usd": lo.total_monthly_usd - base.total_monthly_usd,
                "high_delta_usd": hi.total_monthly_usd - base.total_monthly_usd,
                "swing_usd": abs(hi.total_monthly_usd - lo.total_monthly_usd),
                "base_archetype": base.archetype,
                "low_archetype": lo.archetype,
                "high_archetype": hi.archetype,
                "archetype_changes": lo.archetype != base.archetype
                or hi.archetype != base.archetype,
            }
        )
    frame = pl.DataFrame(rows, schema=TORNADO_SCHEMA)
    return frame.sort(pl.col("swing_usd").fill_nan(math.inf), "input", descending=[True, False])
