"""Uncertainty sweeps: sample the inputs, solve every sample, and say how often each answer wins.

Each uncertain input (names as in :mod:`cluster_decide.analysis.inputs`) has a scipy.stats
distribution of a *multiplier* on its base value: demand growth per workload kind, the GPU
price scale, the share of each team's FTE actually available, and whether a hire succeeds
(hiring stays allowed with that probability). All samples are drawn up front from one seeded
generator, then solved in parallel with any ``concurrent.futures.Executor``; every solve is
deterministic (one CP-SAT worker, a deterministic time limit), so the same seed gives the same
results with one worker or many, on one machine or a cluster.

For each sample the free optimum says which archetype wins; the ``archetypes`` tracked are also
solved with that archetype forced (the forced solve is skipped when the archetype already wins),
which gives each one's expected cost and its regret: what committing to that archetype now
costs, on average, over the best plan chosen once the sample is known. A forced solve starts
from the service-level cuts its sample's free solve found (``core.solve_with_forced``): the same
answers as a cold solve, without the rounds that found them.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import stats
from tqdm.auto import tqdm

from cluster_decide.analysis.core import Outcome, solve_with_forced
from cluster_decide.analysis.inputs import apply_inputs, base_value, input_label
from cluster_decide.base.constants import ARCHETYPES, SKILLS, WORKLOAD_KINDS
from cluster_decide.inputs.scenario import Scenario, parse_scenario
from cluster_decide.planning.explain import ARCHETYPE_WORDS, money

__all__ = [
    "COSTS_SCHEMA",
    "SUMMARY_SCHEMA",
    "UncertaintyResult",
    "default_distributions",
    "describe_inputs",
    "draw_samples",
    "uncertainty",
]

SUMMARY_SCHEMA = {
    "archetype": pl.String,
    "p_optimal": pl.Float64,
    "tracked": pl.Boolean,
    "p_feasible": pl.Float64,
    "expected_monthly_usd": pl.Float64,
    "expected_regret_usd": pl.Float64,
    "p95_regret_usd": pl.Float64,
}
"""Columns of :attr:`UncertaintyResult.summary`, one row per archetype. ``p_optimal``: share of
samples it wins; for tracked archetypes, ``p_feasible`` (share of samples it can be built),
``expected_monthly_usd`` (mean over those), ``expected_regret_usd`` and ``p95_regret_usd`` (its
cost above each sample's optimum, over samples where both exist). Money in USD per month."""

COSTS_SCHEMA = {
    "sample": pl.Int64,
    "archetype": pl.String,
    "feasible": pl.Boolean,
    "monthly_usd": pl.Float64,
    "regret_usd": pl.Float64,
}
"""Columns of :attr:`UncertaintyResult.costs`: each tracked archetype's cost per sample."""

Distribution = Any
"""A frozen scipy.stats distribution (``rv_frozen``; scipy ships no public type for it)."""


def default_distributions(scn: Scenario) -> dict[str, Distribution]:
    """Multipliers on the base values: an assumption to replace with the estate's own evidence.

    Demand growth per kind present: lognormal with median 1 (σ = 0.35 for real-time inference,
    whose traffic is least predictable, 0.25 otherwise); GPU prices: uniform 0.8–1.2; staff
    availability per skill with staff: beta(38, 2), mean 0.95; hiring success (when allowed):
    Bernoulli 0.8.
    """
    dists: dict[str, Distribution] = {}
    for kind in WORKLOAD_KINDS:
        if any(w.kind == kind for w in scn.workloads):
            sigma = 0.35 if kind == "realtime_inference" else 0.25
            dists[f"demand:{kind}"] = stats.lognorm(s=sigma, scale=1.0)
    dists["gpu_price"] = stats.uniform(loc=0.8, scale=0.4)
    for skill in SKILLS:
        if getattr(scn.team, skill).fte > 0:
            dists[f"fte:{skill}"] = stats.beta(38, 2)
    if scn.hiring.allowed:
        dists["hiring"] = stats.bernoulli(0.8)
    return dists


def draw_samples(
    scn: Scenario, n: int, seed: int, distributions: Mapping[str, Distribution]
) -> pl.DataFrame:
    """``n`` rows of input values (base × multiplier), one column per input, from ``seed``."""
    rng = np.random.default_rng(seed)
    cols: dict[str, Any] = {"sample": np.arange(n, dtype=np.int64)}
    for name in sorted(distributions):
        draws = np.asarray(distributions[name].rvs(size=n, random_state=rng), dtype=float)
        cols[name] = base_value(scn, name) * draws
    return pl.DataFrame(cols)


def _solve_samples(
    base: tuple[dict[str, Any], str],
    rows: Sequence[dict[str, float]],
    archetypes: Sequence[str],
    seed: int,
) -> list[tuple[Outcome, dict[str, Outcome]]]:
    """Solve each sample freely and with each tracked archetype forced (a worker's task)."""
    scn = parse_scenario(base[0], source=base[1])
    out = []
    for row in rows:
        free, forced = solve_with_forced(apply_inputs(scn, row), archetypes, seed)
        # A free search stopped at its work limit may miss a plan a forced one found: the
        # sample's optimum is the cheapest plan found, so no regret is negative.
        found = [o for o in forced.values() if o.feasible]
        best = min(found, key=lambda o: o.total_monthly_usd, default=free)
        if best.feasible and (not free.feasible or best.total_monthly_usd < free.total_monthly_usd):
            free = best
        out.append((free, forced))
    return out


@dataclass(frozen=True)
class UncertaintyResult:
    """The sweep: samples with their optimum, tracked archetypes' costs, and the summary."""

    samples: pl.DataFrame
    """sample, one column per input (its sampled value), status, archetype, total_monthly_usd."""
    costs: pl.DataFrame
    summary: pl.DataFrame
    seed: int

    @property
    def p_infeasible(self) -> float:
        """Share of samples with no feasible plan."""
        return float((self.samples["status"] == "infeasible").mean())  # type: ignore[arg-type]

    def distribution(
        self, quantiles: Sequence[float] = (0.05, 0.25, 0.5, 0.75, 0.95)
    ) -> pl.DataFrame:
        """Quantiles and mean of the optimal monthly cost over feasible samples.

        Columns: statistic (``mean`` or ``p5`` …), monthly_usd.
        """
        cost = self.samples.filter(pl.col("status") != "infeasible")["total_monthly_usd"]
        names = ["mean", *[f"p{round(q * 100)}" for q in quantiles]]
        values = [cost.mean(), *[cost.quantile(q, "linear") for q in quantiles]]
        return pl.DataFrame(
            {
                "statistic": names,
                "monthly_usd": [
                    float(v) if isinstance(v, int | float) else math.nan for v in values
                ],
            },
            schema={"statistic": pl.String, "monthly_usd": pl.Float64},
        )

    def sentences(self) -> list[str]:
        """The sweep in words: who wins how often, the cost range, each tracked regret."""
        n = self.samples.height
        out = []
        for r in self.summary.filter(pl.col("p_optimal") > 0).iter_rows(named=True):
            out.append(
                f"{ARCHETYPE_WORDS[r['archetype']][0].upper()}{ARCHETYPE_WORDS[r['archetype']][1:]} "
                f"is optimal in {r['p_optimal']:.0%} of {n} samples."
            )
        if self.p_infeasible:
            out.append(f"No plan is feasible in {self.p_infeasible:.0%} of samples.")
        d = dict(self.distribution((0.05, 0.95)).iter_rows())
        if not math.isnan(d["mean"]):
            out.append(
                f"The optimal monthly cost averages {money(d['mean'])} "
                f"(90% of samples between {money(d['p5'])} and {money(d['p95'])})."
            )
        for r in self.summary.filter(pl.col("tracked")).iter_rows(named=True):
            if r["p_feasible"] and not math.isnan(r["expected_regret_usd"]):
                regret = r["expected_regret_usd"]
                # Under a dollar: the best choice in every sample it can be built in.
                costs = (
                    "costs nothing on average against choosing after the fact"
                    if regret < 1.0
                    else f"costs {money(regret)} a month more on average than choosing after "
                    "the fact"
                )
                out.append(
                    f"Committing to {ARCHETYPE_WORDS[r['archetype']]} now {costs}"
                    + (
                        f"; it cannot be built in {1 - r['p_feasible']:.0%} of samples."
                        if r["p_feasible"] < 1
                        else "."
                    )
                )
        return out


def _tracked(scn: Scenario, seed: int) -> list[str]:
    """The base optimum's archetype and the cheapest other feasible one."""
    _free, outs = solve_with_forced(scn, ARCHETYPES, seed)
    ranked = sorted((o.total_monthly_usd, a) for a, o in outs.items() if o.feasible)
    return [a for _, a in ranked[:2]]


def uncertainty(
    scn: Scenario,
    n: int = 200,
    seed: int = 0,
    distributions: Mapping[str, Distribution] | None = None,
    archetypes: Sequence[str] | None = None,
    executor: Executor | None = None,
    max_workers: int | None = None,
    chunk_size: int = 5,
    progress: bool = True,
) -> UncertaintyResult:
    """Solve ``n`` sampled scenarios and summarize which archetype wins, at what cost and regret.

    ``distributions`` maps input names to multipliers (default :func:`default_distributions`);
    ``archetypes`` to track (default: the base optimum's and the runner-up's); ``executor``
    runs the solves (default: a process pool of ``max_workers``, 2 or the CPU count if lower;
    ``max_workers=1`` solves in this process). Results depend only on ``scn``, ``n``, ``seed``
    and the distributions.
    """
    dists = dict(distributions) if distributions is not None else default_distributions(scn)
    tracked = list(archetypes) if archetypes is not None else _tracked(scn, seed)
    unknown = [a for a in tracked if a not in ARCHETYPES]
    if unknown:
        raise ValueError(f"unknown archetypes {unknown} (expected some of {', '.join(ARCHETYPES)})")
    samples = draw_samples(scn, n, seed, dists)
    inputs = [c for c in samples.columns if c != "sample"]
    rows = [{k: float(r[k]) for k in inputs} for r in samples.iter_rows(named=True)]
    base = (scn.to_dict(), scn.source)
    results: list[tuple[Outcome, dict[str, Outcome]] | None] = [None] * n
    chunks = [range(i, min(n, i + max(1, chunk_size))) for i in range(0, n, max(1, chunk_size))]
    workers = max_workers if max_workers is not None else min(2, os.cpu_count() or 1)
    bar = tqdm(total=n, desc="uncertainty", disable=not progress, unit="sample")
    try:
        if executor is None and workers <= 1:
            for idx in chunks:
                for i, res in zip(
                    idx, _solve_samples(base, [rows[i] for i in idx], tracked, seed), strict=True
                ):
                    results[i] = res
                bar.update(len(idx))
        else:
            own = executor is None
            # Spawned, not forked (see ``core.run_all``): polars' thread pool and fork deadlock.
            pool: Executor = (
                executor
                if executor is not None
                else ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            )
            try:
                futures: dict[Future[list[tuple[Outcome, dict[str, Outcome]]]], range] = {
                    pool.submit(_solve_samples, base, [rows[i] for i in idx], tracked, seed): idx
                    for idx in chunks
                }
                for fut in as_completed(futures):
                    for i, res in zip(futures[fut], fut.result(), strict=True):
                        results[i] = res
                    bar.update(len(futures[fut]))
            finally:
                if own:
                    pool.shutdown()
    finally:
        bar.close()
    done = [r for r in results if r is not None]
    samples = samples.with_columns(
        pl.Series("status", [f.status for f, _ in done], dtype=pl.String),
        pl.Series("archetype", [f.archetype for f, _ in done], dtype=pl.String),
        pl.Series("total_monthly_usd", [f.total_monthly_usd for f, _ in done], dtype=pl.Float64),
    )
    cost_rows = [
        {
            "sample": i,
            "archetype": a,
            "feasible": o.feasible,
            "monthly_usd": o.total_monthly_usd,
            "regret_usd": o.total_monthly_usd - free.total_monthly_usd,
        }
        for i, (free, forced) in enumerate(done)
        for a, o in forced.items()
    ]
    costs = pl.DataFrame(cost_rows, schema=COSTS_SCHEMA)
    summary_rows = []
    for a in ARCHETYPES:
        mine = costs.filter(pl.col("archetype") == a)
        ok = mine.filter(pl.col("feasible"))
        regret = ok["regret_usd"].drop_nans()
        summary_rows.append(
            {
                "archetype": a,
                "p_optimal": float((samples["archetype"] == a).sum()) / n if n else math.nan,
                "tracked": a in tracked,
                "p_feasible": ok.height / mine.height if mine.height else math.nan,
                "expected_monthly_usd": _mean(ok["monthly_usd"]),
                "expected_regret_usd": _mean(regret),
                "p95_regret_usd": float(regret.quantile(0.95, "linear"))  # type: ignore[arg-type]
                if regret.len()
                else math.nan,
            }
        )
    summary = pl.DataFrame(summary_rows, schema=SUMMARY_SCHEMA).sort(
        "p_optimal", "archetype", descending=[True, False]
    )
    return UncertaintyResult(samples, costs, summary, seed)


def _mean(series: pl.Series) -> float:
    value = series.mean()
    return float(value) if isinstance(value, int | float) and series.len() else math.nan


def describe_inputs(distributions: Mapping[str, Distribution]) -> list[str]:
    """One line per uncertain input: its label and distribution."""
    out = []
    for name in sorted(distributions):
        d = distributions[name]
        args = ", ".join(f"{v:g}" for v in d.args) if d.args else ""
        kw = ", ".join(f"{k}={v:g}" for k, v in d.kwds.items())
        out.append(f"{input_label(name)}: {d.dist.name}({', '.join(x for x in (args, kw) if x)})")
    return out
