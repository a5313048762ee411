"""The raw CP-SAT solve: solver parameters, the result code as a Status, the answer as Decisions.

Everything here is below the plan: it knows the built model and CP-SAT, nothing about costs,
service levels or sentences. The solve loop (:mod:`cluster_decide.planning.loop`) runs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ortools.sat.python import cp_model

from cluster_decide.model.build import Model
from cluster_decide.model.decisions import Decisions, Status
from cluster_decide.model.stopping import new_solver

__all__ = [
    "ModelInvalidError",
    "deterministic_work",
    "read_decisions",
    "solver_for",
    "status_of",
]


class ModelInvalidError(RuntimeError):
    """CP-SAT rejected the model as invalid: a defect in the model builder, not in the scenario."""


def read_decisions(m: Model, solver: cp_model.CpSolver) -> Decisions:
    """Shares and node counts from a solved model, keyed by the data's names."""
    shares = {k: int(solver.value(s)) for k, s in m.share.items()}
    nodes = {k: int(solver.value(n)) for k, n in m.nodes.items()}
    spot = {k: int(solver.value(s)) for k, s in m.spot.items()}
    return Decisions(
        shares={k: v for k, v in sorted(shares.items()) if v},
        nodes={k: v for k, v in sorted(nodes.items()) if v},
        spot={k: v for k, v in sorted(spot.items()) if v},
        managed=frozenset(p for p, z in m.managed.items() if solver.value(z)),
    )


_WORK_LIMIT: ContextVar[float | None] = ContextVar("work_limit", default=None)


@contextmanager
def deterministic_work(limit: float) -> Iterator[None]:
    """Within this block (in this thread), solves stop on CP-SAT's deterministic time, not the clock.

    CP-SAT runs on one worker (whatever ``workers`` says): a single search is reproducible, and
    with ``max_deterministic_time`` it stops after the same amount of work however busy the
    machine is, so the same scenario gives the same plan. (Two workers with
    ``interleave_search`` are deterministic too, but proved the default scenario 15× slower.)
    The wall-clock limit passed to ``solve`` stays as a safety net only. The limit holds for
    each CP-SAT run of the loop (each round of service-level cuts).
    """
    token = _WORK_LIMIT.set(limit)
    try:
        yield
    finally:
        _WORK_LIMIT.reset(token)


LINEARIZATION_LEVEL = 2
"""CP-SAT's linear relaxation includes every constraint, the reified ones too (default 1)."""
CUT_LEVEL = 0
"""CP-SAT adds no cutting planes of its own (default 1).

The two settings were chosen by measurement (``benchmarks/solve_scale.py``, same run, one
worker, CPU seconds to a proof for the presets, the test estates and the default at ×1.1,
×1.3 and ×2 distributed-training demand): 33.2 s with CP-SAT's defaults, 19.7 s without its
cuts, 5.5–6.2 s with the full relaxation as well; the hard instances (a second pre-training
gang slot, fine-tuning split between today's Slurm cluster and Kubernetes with spot) went
from 10–11 s to 1.3–2.0 s, the default scenario from 0.29 to 0.11 s, and every optimum is
the same. The service-level cuts and the reified placement rows are what the LP needs to see
(the default relaxation leaves them out); CP-SAT's own cuts cost more rounds of LP than they
save on models this size. With its defaults, the full relaxation alone was 2× slower on the
default scenario.
"""

PROBING_LEVEL = 0
"""CP-SAT does not probe literals in presolve or search (default 2)."""
SAT_INPROCESSING = False
"""CP-SAT does not simplify its clause database between restarts (default on).

Chosen by measurement on the models this project builds (one worker, the same run): the
workbook's slider steps (training demand ×1.05–×1.5, Kubernetes engineers 0.5–4.5), the
presets and the test estates took 3.4–4.0 s of CP-SAT wall time and 1.41 of its deterministic
time with both on, 2.2–2.4 s and 0.88 with both off, and every optimum is the same; a
Kubernetes-engineers step went from about 105 to 50 ms, the training slider's median step from
about 120 to 85 ms. The models are small (a few hundred variables, a few hundred rows), so
probing and inprocessing cost more per solve than the search they save. Either one off alone
saved about half as much.
"""


def solver_for(
    time_limit_s: float | None,
    deterministic_limit: float | None,
    workers: int,
    seed: int,
    presolve: bool = True,
) -> cp_model.CpSolver:
    """A CP-SAT solver with every parameter set explicitly (and the deterministic limit, if set).

    ``presolve`` False skips CP-SAT's presolve: on models of the default scenario's size it
    costs more than it saves (``docs/decisions.md``; the solve loop decides by the model's size).
    """
    solver = new_solver()  # stoppable from another thread inside ``stoppable``
    solver.parameters.cp_model_presolve = presolve
    solver.parameters.linearization_level = LINEARIZATION_LEVEL
    solver.parameters.cut_level = CUT_LEVEL
    solver.parameters.cp_model_probing_level = PROBING_LEVEL
    solver.parameters.use_sat_inprocessing = SAT_INPROCESSING
    if time_limit_s is not None:
        solver.parameters.max_time_in_seconds = float(time_limit_s)
    if deterministic_limit is not None:
        solver.parameters.max_deterministic_time = float(deterministic_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    work = _WORK_LIMIT.get()
    if work is not None:
        limit = work if deterministic_limit is None else min(work, deterministic_limit)
        solver.parameters.max_deterministic_time = float(limit)
        solver.parameters.num_workers = 1
    return solver


def status_of(code: Any, m: Model) -> Status:
    """The Status a CP-SAT result code means; an invalid model is an internal error, not a verdict."""
    if code == cp_model.OPTIMAL:
        return Status.OPTIMAL
    if code == cp_model.FEASIBLE:
        return Status.FEASIBLE
    if code == cp_model.INFEASIBLE:
        return Status.INFEASIBLE
    if code == cp_model.MODEL_INVALID:
        raise ModelInvalidError(
            "internal error: CP-SAT rejected the model as invalid "
            f"({m.cp.validate() or 'no detail'}); this is a defect in cluster_decide, not in "
            "the scenario: please report it with the scenario file"
        )
    return Status.TIME_LIMIT
