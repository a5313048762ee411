"""Fast, reproducible solves for analyses that run many scenarios, and a way to run them in parallel.

An analysis asks the same model hundreds of questions, so it needs a solve that is cheap and
repeatable rather than a full :class:`~cluster_decide.planning.plan.Plan`: :func:`quick_solve` builds the
model of ``model/build.py``, lets a caller add constraints or replace the objective (the hook
near-optimal alternatives and the Pareto front need), and runs CP-SAT on one worker with a
*deterministic* time limit, so the answer never depends on the machine's load or on how many
processes share it. It runs the same solve loop as ``solve`` (:mod:`cluster_decide.planning.loop`),
so statuses and service levels mean the same everywhere. Infeasible answers are reported, not
diagnosed (that is ``solve``'s job).
:func:`run_all` maps it over scenarios with any ``concurrent.futures.Executor``.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any

from tqdm.auto import tqdm

from cluster_decide.inputs.scenario import Scenario, parse_scenario
from cluster_decide.model.data import ModelData, prepare
from cluster_decide.planning.evaluation import Decisions, Evaluation, evaluate_decisions
from cluster_decide.planning.loop import Constrain, Learned, Objective, SolveResult, run

__all__ = [
    "DETERMINISTIC_LIMIT",
    "RECHECK_WORK",
    "Outcome",
    "outcome_of",
    "quick_solve",
    "run_all",
    "solve_model",
    "solve_with_forced",
]

DETERMINISTIC_LIMIT = 5.0
"""CP-SAT's deterministic time budget per analysis solve (machine-independent "seconds").

The default scenario is proved optimal in well under 1; the limit only stops a runaway solve,
and, unlike a wall-clock limit, stops it at the same point on every run.
"""
RECHECK_WORK = 4.0
"""A solve that finds another architecture than the plan's without proving it cheapest is solved
again with this many times :data:`DETERMINISTIC_LIMIT` before a flip search or a break-even
counts it (near-equal twins trade places when a search is cut short)."""


@dataclass(frozen=True)
class Outcome:
    """What an analysis needs from one solve: status, shape, cost and the decisions."""

    status: str
    archetype: str | None
    total_monthly_usd: float
    cash_monthly_usd: float
    open_pools: tuple[str, ...] = ()
    decisions: Decisions = field(default_factory=lambda: Decisions({}, {}))
    hires: int = 0
    wall_time_s: float = 0.0

    @property
    def feasible(self) -> bool:
        """Whether a plan was found (a time-limited search without one is not infeasible)."""
        return self.status in ("optimal", "feasible")

    @property
    def proven(self) -> bool:
        """Whether the solver proved its answer: the cheapest plan, or that none exists."""
        return self.status in ("optimal", "infeasible")

    def unproven_other(self, archetype: str | None) -> bool:
        """Another architecture than ``archetype``, not proved cheapest: worth :data:`RECHECK_WORK`."""
        return self.archetype != archetype and not self.proven


def _infeasible(wall: float = 0.0, status: str = "infeasible") -> Outcome:
    return Outcome(status, None, math.nan, math.nan, wall_time_s=wall)


def solve_model(
    data: ModelData,
    *,
    seed: int = 0,
    constrain: Constrain | None = None,
    objective: Objective | None = None,
    deterministic_limit: float = DETERMINISTIC_LIMIT,
    hint: Decisions | None = None,
    learned: Learned | None = None,
) -> SolveResult:
    """Solve ``data`` with the shared loop: one worker, a deterministic limit, the hooks.

    The result's status is optimal, feasible, infeasible or time_limit; its decisions are None
    unless a plan was found, and every service level of a returned plan holds, as in
    ``solve``. ``learned`` starts the loop with another solve's cuts of the same data.
    """
    return run(
        data,
        time_limit_s=None,
        deterministic_limit=deterministic_limit,
        workers=1,
        seed=seed,
        hint=hint,
        constrain=constrain,
        objective=objective,
        learned=learned,
    )


def outcome_of(
    data: ModelData, status: str, dec: Decisions, wall: float = 0.0, ev: Evaluation | None = None
) -> Outcome:
    """An :class:`Outcome` costed by the independent evaluator (``ev``, if already run)."""
    ev = ev if ev is not None else evaluate_decisions(data, dec)
    return Outcome(
        status,
        ev.archetype,
        ev.total_cents / 100.0,
        ev.cash_cents / 100.0,
        ev.open_pools,
        dec,
        sum(ev.hires.values()),
        wall,
    )


def quick_solve(
    scn: Scenario,
    seed: int = 0,
    constrain: Constrain | None = None,
    objective: Objective | None = None,
    deterministic_limit: float = DETERMINISTIC_LIMIT,
) -> Outcome:
    """Solve ``scn`` for an analysis: one worker, deterministic limit, no infeasibility diagnosis."""
    start = time.perf_counter()
    data = prepare(scn)
    if data.unplaceable:
        return _infeasible(time.perf_counter() - start)
    res = solve_model(
        data,
        seed=seed,
        constrain=constrain,
        objective=objective,
        deterministic_limit=deterministic_limit,
    )
    return _outcome(data, res, start)


def _outcome(data: ModelData, res: SolveResult, start: float) -> Outcome:
    if res.decisions is None:
        return _infeasible(time.perf_counter() - start, res.status.value)
    return outcome_of(data, res.status.value, res.decisions, time.perf_counter() - start)


def solve_with_forced(
    scn: Scenario, archetypes: Sequence[str], seed: int = 0
) -> tuple[Outcome, dict[str, Outcome]]:
    """:func:`quick_solve` of ``scn``, and of ``scn`` with each of ``archetypes`` forced.

    A forced archetype changes the model's policy rows and nothing else: the data are the same,
    and so are the queueing tables every service-level cut is read from. So each forced solve
    reuses the free solve's data and starts from the cuts that hold for every plan and the
    hourly rows the free solve ended with (:class:`~cluster_decide.planning.loop.Learned`)
    instead of finding them again round by round; the answers are those of cold solves
    (``tests/test_analysis.py`` compares them). An archetype the free optimum already has is
    not solved again.
    """
    start = time.perf_counter()
    data = prepare(scn)
    if data.unplaceable:
        unplaceable = _infeasible(time.perf_counter() - start)
        return unplaceable, {a: unplaceable for a in archetypes}
    res = solve_model(data, seed=seed)
    free = _outcome(data, res, start)
    forced = {}
    for a in archetypes:
        if free.archetype == a:
            forced[a] = free
            continue
        tick = time.perf_counter()
        same = replace(data, scenario=scn.force_archetype(a))
        forced[a] = _outcome(same, solve_model(same, seed=seed, learned=res.learned), tick)
    return free, forced


def _solve_chunk(
    payloads: Sequence[tuple[dict[str, Any], str]],
    seed: int,
    deterministic_limit: float = DETERMINISTIC_LIMIT,
) -> list[Outcome]:
    """Solve scenarios sent as plain data (a Scenario's resolved catalog does not pickle)."""
    return [
        quick_solve(
            parse_scenario(data, source=source), seed, deterministic_limit=deterministic_limit
        )
        for data, source in payloads
    ]


def _chunks(n: int, size: int) -> Iterator[range]:
    for start in range(0, n, size):
        yield range(start, min(n, start + size))


def run_all(
    scenarios: Sequence[Scenario],
    executor: Executor | None = None,
    max_workers: int | None = None,
    seed: int = 0,
    chunk_size: int = 4,
    progress: bool | str = False,
    deterministic_limit: float = DETERMINISTIC_LIMIT,
) -> list[Outcome]:
    """Solve every scenario (in order) with ``executor``; by default a local process pool.

    ``max_workers`` sizes the default pool (1 solves in this process, with no pool at all).
    Work goes out in chunks of ``chunk_size`` scenarios, as plain data re-validated by the
    worker against the shipped catalog (the scenario's own overrides travel with it); each solve is
    deterministic, so the results do not depend on the executor or the number of workers.
    ``progress`` shows a tqdm bar (a string labels it). ``deterministic_limit`` is each
    solve's work limit (:data:`DETERMINISTIC_LIMIT`).
    """
    n = len(scenarios)
    label = progress if isinstance(progress, str) else "solving"
    bar = tqdm(total=n, desc=label, disable=not progress, unit="scenario")
    results: list[Outcome | None] = [None] * n
    workers = max_workers if max_workers is not None else min(2, os.cpu_count() or 1)
    if executor is None and workers <= 1:
        for i, s in enumerate(scenarios):
            results[i] = quick_solve(s, seed, deterministic_limit=deterministic_limit)
            bar.update(1)
        bar.close()
        return [r for r in results if r is not None]
    own = executor is None
    # Spawned, not forked: the parent has already used polars (service levels are frames),
    # and a forked child that touches polars' thread pool can deadlock.
    pool: Executor = (
        executor
        if executor is not None
        else ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    )
    try:
        futures: dict[Future[list[Outcome]], range] = {
            pool.submit(
                _solve_chunk,
                [(scenarios[i].to_dict(), scenarios[i].source) for i in idx],
                seed,
                deterministic_limit,
            ): idx
            for idx in _chunks(n, max(1, chunk_size))
        }
        for fut in as_completed(futures):
            for i, out in zip(futures[fut], fut.result(), strict=True):
                results[i] = out
            bar.update(len(futures[fut]))
    finally:
        bar.close()
        if own:
            pool.shutdown(cancel_futures=True)  # after --max-time, queued work is dropped
    return [r for r in results if r is not None]
