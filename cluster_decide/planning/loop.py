"""The one solve loop: build the model, run CP-SAT, read the answer, enforce service levels.

Every path that solves (``cd.solve``, the relaxation search, every analysis) runs
:func:`run`, so every path shares the same status handling:

- CP-SAT ``OPTIMAL``/``FEASIBLE`` become :class:`~cluster_decide.planning.plan.Status` ``optimal`` /
  ``feasible`` (with the bound, so the gap can be shown);
- ``INFEASIBLE`` is ``infeasible`` (proved: only then is a relaxation searched for);
- ``UNKNOWN`` (no solution within the limit) is ``time_limit``, never ``infeasible``;
- ``MODEL_INVALID`` is an internal error (:class:`ModelInvalidError`), never ``infeasible``.

Service levels that depend on several classes at once (pooled gang waits, deadline windows,
everything the plan's pools share) are enforced by lazy constraint generation: solve, check
the plan's service levels with the queueing formulas (:mod:`cluster_decide.planning.service`), and for
each pool that misses one add a cut "if this pool hosts at least these shares of these classes,
it has at least N nodes", N being the fewest nodes with which that pool meets every target;
solve again (hinted with the repaired plan) until every target holds. The warm start's plan
is checked the same way before the first solve and its cuts are added up front
(:func:`cut_up_front`): the first round would most often find the very same ones. A cut in
a pool that rents on demand holds from its shares upward only approximately (its waits are
saw-toothed in the work placed), so before a plan is called optimal each such cut is tried at
its whole shares (:func:`whole_share_escape`): a cheaper plan there that meets every target
exempts the cut and the loop solves again. Training
that fills the troughs of a sharing pool is treated the same way: the model starts with one
weekly row per pool, and where a plan's training waits too long hour by hour (the
evaluator's replay, :mod:`cluster_decide.planning.sharing`) the loop states that pool's hourly rows and
solves again. Analyses add their own constraints and objective through the ``constrain`` and
``objective`` hooks.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from cluster_decide.inputs.scenario import DeadlineWorkload, TrainingWorkload
from cluster_decide.model.build import (
    Model,
    ServiceCut,
    add_service_levels,
    add_sharing_hours,
    build_model,
    exempt_whole_shares,
    tie_break_scale,
)
from cluster_decide.model.cpsat import (
    ModelInvalidError,
    deterministic_work,
    read_decisions,
    solver_for,
    status_of,
)
from cluster_decide.model.data import ModelData
from cluster_decide.model.decisions import Status
from cluster_decide.model.stopping import check_stopped
from cluster_decide.planning.evaluation import (
    Decisions,
    Evaluation,
    evaluate_decisions,
    pool_inputs,
    pool_meets_targets,
    sharing_place,
)
from cluster_decide.planning.warmstart import add_hints, lp_relaxation, rounded_plan

__all__ = [
    "HOOKED_ROUND_SHARE",
    "LARGE_MODEL_WORKERS",
    "MAX_CUT_ROUNDS",
    "Constrain",
    "ModelInvalidError",
    "Objective",
    "SolveResult",
    "cut_up_front",
    "deterministic_work",
    "exempt_escapes",
    "nodes_to_meet",
    "piece_cuts",
    "read_decisions",
    "repair",
    "restricted",
    "run",
    "sharing_short",
    "solve_data",
    "whole_share_escape",
    "workers_for",
]

Constrain = Callable[[Model], None]
"""A hook that adds constraints to the built model (forced archetype, a cost cap, ...)."""
Objective = Callable[[Model], Any]
"""A hook that returns the expression to minimize instead of cost with its tie-break."""

RESTRICTED_SHARE = 0.45
"""Share of the remaining time limit the restricted model gets."""
MAX_CUT_ROUNDS = 24
"""Rounds of service-level cuts before the loop settles for the repaired plan (``feasible``).

A bursting pool's cuts hold only near the plan's share and at 1% (see ``_point_cuts``), so a
class split between pools can move a few percent a round before every escape is cut: the
media-lab test estate at ×1.1 fine-tuning or API demand took 16 and 14 CP-SAT runs (0.4–0.8 s)
to its optimum, $68.4k, and with 12 rounds the loop settled for a repaired $78.1k plan (9 and
12 runs since the cuts below the plan's share). Of 138 solves (the presets and the test
estates, today and with each kind's demand ×1.1, ×1.25 and ×1.5), 126 take one or two runs and
all but the media lab's at most 7. The wall-clock and deterministic limits still bound the
loop."""
LARGE_MODEL_WORKERS = 2
"""CP-SAT workers for a large model (``Model.large``) when none are asked for.

A smaller model gets one worker: it is proved optimal in a few hundredths of CP-SAT's
deterministic time, and a second worker's portfolio only adds presolve and synchronisation
(the default scenario: 0.02 against 0.11 deterministic seconds, 2-3x the wall time on this
2-core machine), and one worker's search is reproducible on any machine load.
"""
WORK_PER_SECOND = 0.2
"""CP-SAT deterministic time a one-worker solve given ``time_limit_s`` may spend, per second.

A search that proves its answer well within the limit ends the same on any machine load; one
that the clock stopped ended wherever the machine's speed left it (the hospital test estate with
1.3× its fine-tuning and batch work: $131k–$150k a month from one run to the next). So a one-worker solve given
``time_limit_s`` runs its loop on ``time_limit_s × WORK_PER_SECOND`` of CP-SAT's deterministic
time instead, and the same scenario gives the same plan. Measured on this project's 2-core
reference machine, quiet: CP-SAT does 0.42–0.5 deterministic seconds a second on one worker,
and with the loop's checks of each plan the hospital estate spent its 2.0 in 8.8 s; so 0.2
keeps a 10 s solve near 10 s there. Two workers (large estates) are not reproducible anyway,
and keep the clock.
"""
CLOCK_NET = 3.0
"""The wall clock a one-worker solve's work budget runs under, as a multiple of ``time_limit_s``:
a safety net that stops a runaway on a busy machine (where the same work takes longer, and only
there can the answer depend on the load), never the limit that decides on a quiet one."""
HOOKED_ROUND_SHARE = 0.5
"""Share of the remaining deterministic budget one round of a hooked search (an analysis's own
constraints or objective) may use, so that rounds of service-level cuts can follow it."""


@dataclass(frozen=True)
class Learned:
    """The service-level cuts and hourly sharing rows of a solve that hold for every plan.

    They read the queueing tables only, so they hold in any model of the same data, whatever its
    hooks or forced archetype: a solve started from them skips the rounds that found them and
    reaches the same optimum, since they remove no plan that meets its targets. Only the cuts of
    pools that do not burst are kept, none exempted at whole shares: a bursting pool's cut holds
    from its shares upward, which its saw-toothed waits do not guarantee (``docs/model.md``,
    family 13), so each solve finds its own there.
    """

    cuts: tuple[ServiceCut, ...] = ()
    sharing_hours: frozenset[tuple[str, str]] = frozenset()


def _learned(m: Model, exempt: set[ServiceCut]) -> Learned:
    valid = [c for c in m.service_rows if c not in exempt and not m.data.bursts(c.pool, c.gpu_type)]
    return Learned(tuple(valid), m.exact_sharing)


@dataclass(frozen=True)
class SolveResult:
    """The outcome of the solve loop, before it becomes a Plan.

    ``objective`` is in cents for the default objective (``objective_cents`` is kept as its
    name); ``bound`` is a valid lower bound on it. ``decisions`` is None unless the status is
    optimal or feasible. ``cuts`` counts the service-level cuts added; ``message`` says why the
    loop stopped when it is not optimal.
    """

    status: Status
    decisions: Decisions | None
    objective_cents: float
    bound_cents: float
    wall_time_s: float
    model: Model
    slack: dict[str, int]
    cuts: int = 0
    message: str = ""
    evaluation: Evaluation | None = None
    """The evaluator's verdict on ``decisions`` when the loop computed it (so the plan built
    from them need not evaluate them again)."""
    check_s: float = 0.0
    """Wall time of the slowest check of a plan's service levels (with its repair): what a
    search under a time limit leaves for checking the plan it finds."""
    learned: Learned = Learned()
    """The cuts and hourly rows the loop ended with (see :class:`Learned`)."""


def restricted(data: ModelData, m: Model, lp_values: list[float], top: int = 2) -> ModelData:
    """``data`` with each workload limited to its ``top`` places by LP share (and any the LP uses).

    A relax-and-fix style narrowing: the restricted model is far smaller, so CP-SAT finds a
    good plan of it quickly; that plan is a feasible start for the full model, which may still
    move anything.
    """
    ranked: dict[str, list[tuple[float, tuple[str, str, str]]]] = {}
    for key, z in m.place.items():
        if not data.combos[key].blocked:
            ranked.setdefault(key[0], []).append((lp_values[z.index], key))
    keep: set[tuple[str, str, str]] = set()
    for options in ranked.values():
        options.sort(key=lambda o: (-o[0], o[1]))
        keep.update(k for i, (v, k) in enumerate(options) if i < top or v > 1e-6)
    combos = {
        k: c
        if k in keep or c.blocked
        else replace(c, blocked="outside the restricted search", blocked_family="policy")
        for k, c in data.combos.items()
    }
    # Spot likewise only where the LP uses it: most spot variables of a large estate stay at 0.
    spot = {
        k: cents
        for k, cents in data.spot_cents.items()
        if k in keep and k in m.spot_on and lp_values[m.spot_on[k].index] > 1e-6
    }
    return replace(data, combos=combos, spot_cents=spot)


def _no_dearer(data: ModelData, found: Evaluation, start: Decisions) -> bool:
    """Whether the plan evaluated as ``found`` is no dearer than ``start`` (or ``start`` fails).

    ``start`` is costed first and checked against every target only when it is the cheaper:
    the check of a large estate's plan takes seconds.
    """
    cost = found.total_cents
    quick = evaluate_decisions(data, start, service_pools=set())
    return (
        not quick.feasible
        or cost <= quick.total_cents
        or not evaluate_decisions(data, start).feasible
    )


def _failing_pools(ev: Evaluation) -> list[tuple[str, str]]:
    """The (pool, GPU type) pairs with a service level the plan misses, sorted."""
    if ev.service_levels.is_empty() or ev.service_levels["met"].all():
        return []
    bad = ev.service_levels.filter(~ev.service_levels["met"])
    return sorted(set(zip(bad["pool"].to_list(), bad["gpu_type"].to_list(), strict=True)))


def sharing_short(ev: Evaluation) -> frozenset[tuple[str, str]]:
    """The (pool, GPU type) pairs whose trough-filling training the evaluator finds short.

    Read from the evaluator's ``sharing[...]`` violations (see ``sharing_place``).
    """
    return frozenset(p for p in map(sharing_place, ev.violations) if p is not None)


def _pool_meets(
    data: ModelData,
    m: Model,
    dec: Decisions,
    pool: str,
    gpu: str,
    nodes: int,
    sharing: bool = False,
) -> bool:
    """``pool_meets_targets`` of ``dec`` on ``nodes`` there, asked once a solve for each input.

    A staircase asks about the same pieces alone on the same node counts in every round and in
    every place it is restated (on the research lab's samples, 56% of a solve's checks were
    repeats). The verdict depends on the pool's own inputs only (``pool_inputs``), so it is kept in
    ``m.pool_verdicts`` under them.
    """
    trial = replace(dec, nodes={**dec.nodes, (pool, gpu): nodes})
    key = (pool, gpu, sharing, *pool_inputs(trial, pool, gpu))
    verdict = m.pool_verdicts.get(key)
    if verdict is None:
        verdict = m.pool_verdicts[key] = pool_meets_targets(data, trial, pool, gpu, sharing)
    else:
        check_stopped()  # as the check itself does: a stale solve stops between checks
    return verdict


def nodes_to_meet(
    data: ModelData,
    m: Model,
    dec: Decisions,
    pool: str,
    gpu: str,
    limit: int,
    sharing: bool = False,
) -> int | None:
    """Fewest nodes of ``gpu`` in ``pool`` with which its service levels all hold, shares fixed.

    With ``sharing``, the training that fills the pool's troughs must also keep to its wait.
    More nodes never lengthen a wait (they add free capacity in every hour), so the answer is
    found by doubling and bisection. None when even ``limit`` nodes are not enough.
    """
    lo = dec.nodes.get((pool, gpu), 0)
    if _pool_meets(data, m, dec, pool, gpu, lo, sharing):
        return lo
    hi = max(lo + 1, 1)
    if hi > limit:
        return None  # already at the limit (until 2026-12-04 it tried one node past it)
    while not _pool_meets(data, m, dec, pool, gpu, hi, sharing):
        if hi >= limit:
            return None
        lo, hi = hi, min(limit, hi * 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _pool_meets(data, m, dec, pool, gpu, mid, sharing):
            hi = mid
        else:
            lo = mid
    return hi


def _node_limit(data: ModelData, m: Model, pool: str, gpu: str) -> int:
    cap = data.pool(pool).node_limit(gpu)
    return cap if cap is not None else m.node_ub[(pool, gpu)]


def repair(
    data: ModelData, m: Model, dec: Decisions, ev: Evaluation | None = None
) -> tuple[Decisions, dict[tuple[str, str], int]]:
    """``dec`` with every pool that misses a service level grown until it meets them.

    Returns the repaired decisions and the node count each failing pool needs (-1 when no
    count within the pool's limit is enough). ``ev`` is ``dec``'s evaluation when known. A pool
    whose trough-filling training waits too long is grown too, so that the repaired plan is
    one the loop can fall back on, but it has no need of its own: the loop states that pool's
    hourly rows instead of a cut.
    """
    if ev is None:
        ev = evaluate_decisions(data, dec)
    needs: dict[tuple[str, str], int] = {}
    nodes = dict(dec.nodes)
    for p, g in _failing_pools(ev):
        n = nodes_to_meet(data, m, dec, p, g, _node_limit(data, m, p, g))
        needs[(p, g)] = -1 if n is None else n
        if n is not None:
            nodes[(p, g)] = n
    grown = replace(dec, nodes=nodes)
    for p, g in sorted(sharing_short(ev)):
        n = nodes_to_meet(data, m, grown, p, g, _node_limit(data, m, p, g), sharing=True)
        if n is not None:
            nodes[(p, g)] = n
    return replace(dec, nodes=dict(sorted(nodes.items()))), needs


def _cut(dec: Decisions, pool: str, gpu: str, need: int) -> ServiceCut:
    """The cut that holds ``pool`` to ``need`` nodes while it hosts at least today's shares.

    Shares are on the pool's own capacity (spot percent excluded: it waits on its own spot
    nodes). When no size is enough (``need = -1``) the spot percents are part of the premise
    too, since a spot share that misses its target is not helped by the pool's nodes.
    """
    here = sorted((k, s) for k, s in dec.shares.items() if k[1] == pool and k[2] == gpu and s > 0)
    shares = tuple((w, s - dec.spot.get((w, p, g), 0)) for (w, p, g), s in here)
    spot = tuple((w, dec.spot[(w, p, g)]) for (w, p, g), _s in here if dec.spot.get((w, p, g)))
    return ServiceCut(
        pool,
        gpu,
        tuple((w, s) for w, s in shares if s > 0),
        need,
        spot if need < 0 else (),
    )


STAIRCASE_STEP = 10
"""Percent between the share levels of a piece cut's staircase (see :func:`piece_cuts`)."""


def _pieces_alone(
    dec: Decisions, pool: str, gpu: str, pieces: dict[str, int], nodes: int
) -> Decisions:
    """``dec`` with ``pieces`` (percent on own capacity) the only work in the pool, of ``nodes``."""
    shares = {k: s for k, s in dec.shares.items() if (k[1], k[2]) != (pool, gpu)}
    shares.update({(w, pool, gpu): s for w, s in pieces.items()})
    spot = {k: s for k, s in dec.spot.items() if (k[1], k[2]) != (pool, gpu)}
    return replace(dec, shares=shares, spot=spot, nodes={**dec.nodes, (pool, gpu): nodes})


def _staircase(
    data: ModelData,
    m: Model,
    dec: Decisions,
    place: tuple[str, str],
    name: str,
    top: int,
    others: tuple[tuple[str, int], ...] = (),
) -> list[ServiceCut]:
    """Cuts ``name ≥ s ∧ others ⇒ nodes ≥ N(s)`` at ``place`` for s from 1% up to ``top``.

    N(s) is the fewest nodes with which ``name``'s piece of s percent, beside ``others`` and
    nothing else, meets every target there. In a pool that does not burst a wait only grows
    with the work placed, so N rises with s and each step holds for every plan that places at
    least that much: one staircase covers the shares between the plan's and 1%, which a single
    cut at the plan's share left open (the next plan moved a few percent away and missed the
    same target). Steps every :data:`STAIRCASE_STEP` percent; a step is kept only where N
    rises above the fewest nodes the pieces' largest jobs force anyway (the gang fit), and the
    first share no size serves forbids every larger one. A pool that bursts has none: its
    on-demand nodes follow the work, so more work can mean more whole nodes and a shorter wait
    (see :func:`_point_cuts`). Since N rises with s, a span of levels whose ends need the same
    N is flat: N is solved at 1% and at the top, then only inside spans whose ends differ,
    halving them, each sized up from the N below it (the steps are those of solving every
    level in turn, ``tests/test_service_levels.py``).
    """
    pool, gpu = place
    combos = [data.combos.get((w, pool, gpu)) for w in (name, *(o for o, _s in others))]
    if data.bursts(pool, gpu) or any(c is None or c.blocked for c in combos):
        return []
    gpn = data.gpus_per_node[gpu]
    floor = max(1, *(-(-c.gang_gpus // gpn) for c in combos if c is not None))
    limit = _node_limit(data, m, pool, gpu)
    levels = sorted({1, *range(STAIRCASE_STEP, top, STAIRCASE_STEP), top})
    known: dict[int, float] = {}

    def need(i: int, start: float) -> float:
        """N at level ``i``, sized up from ``start`` nodes (N at a lower level, or the floor)."""
        if i in known:
            return known[i]
        if math.isinf(start):  # no size serves less of the piece: none serves this much
            known[i] = math.inf
        else:
            pieces = dict(others) | {name: levels[i]}
            alone = _pieces_alone(dec, pool, gpu, pieces, int(start))
            n = nodes_to_meet(data, m, alone, pool, gpu, limit)
            known[i] = math.inf if n is None else n
        return known[i]

    def between(lo: int, hi: int) -> None:
        """Find every level where N rises between levels ``lo`` and ``hi``, halving the span."""
        if hi - lo > 1 and known[lo] != known[hi]:
            mid = (lo + hi) // 2
            need(mid, known[lo])
            between(lo, mid)
            between(mid, hi)

    need(len(levels) - 1, need(0, floor))
    between(0, len(levels) - 1)
    cuts: list[ServiceCut] = []
    last: float = floor
    for i, share in enumerate(levels):
        n = known.get(i, last)  # a level not solved lies on a flat stretch: N as below it
        premise = tuple(sorted((dict(others) | {name: share}).items()))
        if math.isinf(n):
            cuts.append(ServiceCut(pool, gpu, premise, -1))
            break
        if n > last:
            cuts.append(ServiceCut(pool, gpu, premise, int(n)))
            last = n
    return cuts


def _point_cuts(
    data: ModelData, m: Model, dec: Decisions, name: str, place: tuple[str, str]
) -> list[ServiceCut]:
    """The piece cuts of a failing class in a pool that bursts: at its share, below it, at 1%.

    Waits there are not monotone in the work placed (on-demand nodes follow it in whole nodes),
    so no staircase holds; the piece alone is cut at its share and at 1% (any piece at all: a
    sliver of a class of long gang jobs still needs whole job slots), and from
    :data:`STAIRCASE_STEP` percent below its share at the fewest nodes any share in between
    needs (the next plan otherwise took the share 1% below, a round each: 16 CP-SAT runs for
    the media-lab test estate, 9 with this cut). When alone it is fine, each neighbour that
    breaks a target beside it at its share gets a cut on the pair.
    """
    p, g = place
    own = dec.shares.get((name, p, g), 0) - dec.spot.get((name, p, g), 0)
    have = dec.nodes.get(place, 0)
    limit = _node_limit(data, m, p, g)

    @cache
    def need_at(share: int) -> float:
        need = nodes_to_meet(data, m, _pieces_alone(dec, p, g, {name: share}, have), p, g, limit)
        return math.inf if need is None else need

    cuts = [
        ServiceCut(p, g, ((name, share),), _nodes_of(need_at(share)))
        for share in sorted({own, 1})
        if need_at(share) > have
    ]
    low = own - STAIRCASE_STEP
    if low > 1 and need_at(own) > have:
        # The shares just below fail too, as a rule, and the next plan took them one a round:
        # the fewest nodes any of them needs holds from the lowest up (above ``own`` as the
        # point cut itself does).
        window = min(need_at(s) for s in range(low, own + 1))
        if window > have:
            cuts.append(ServiceCut(p, g, ((name, low),), _nodes_of(window)))
    if cuts:
        return cuts
    for (o, pp, gg), s in sorted(dec.shares.items()):
        o_own = s - dec.spot.get((o, pp, gg), 0)
        if (pp, gg) != place or o == name or o_own <= 0:
            continue
        pair = _pieces_alone(dec, p, g, {name: own, o: o_own}, have)
        need = nodes_to_meet(data, m, pair, p, g, limit)
        if need is None or need > have:
            pieces = tuple(sorted({name: own, o: o_own}.items()))
            cuts.append(ServiceCut(p, g, pieces, -1 if need is None else need))
    return cuts


def _nodes_of(need: float) -> int:
    """A cut's node count: -1 when no size is enough."""
    return -1 if math.isinf(need) else int(need)


def _on_twins(data: ModelData, m: Model, dec: Decisions, cut: ServiceCut) -> list[ServiceCut]:
    """A bursting pool's point cut restated at every other bursting pool of its GPU type.

    The same pieces alone there, their own node count: a sliver cut on Kubernetes with a batch
    add-on was escaped by moving it to plain Kubernetes (a round for each twin), at the
    training slider's hardest steps two rounds of five. The same approximation as the point
    cut itself (:func:`_point_cuts`), at the twin's own size.
    """
    out = []
    for q, g in sorted({(k[1], k[2]) for k in m.place}):
        if g != cut.gpu_type or q == cut.pool or not data.bursts(q, g):
            continue
        combos = [data.combos.get((w, q, g)) for w, _s in cut.shares]
        if any(c is None or c.blocked for c in combos):
            continue
        have = dec.nodes.get((q, g), 0)
        alone = _pieces_alone(dec, q, g, dict(cut.shares), have)
        need = nodes_to_meet(data, m, alone, q, g, _node_limit(data, m, q, g))
        if need is None or need > have:
            out.append(ServiceCut(q, g, cut.shares, -1 if need is None else need))
    return out


def piece_cuts(
    data: ModelData,
    m: Model,
    dec: Decisions,
    ev: Evaluation | None = None,
    deadline: float | None = None,
) -> list[ServiceCut]:
    """Cuts that hold whatever else a pool hosts: each failing class's piece alone needs N nodes.

    A pool cut (``_cut``) applies only while the pool hosts at least all of today's shares, so a
    search that moves one of the other classes away escapes it, and a search that seeks distant
    plans (near-optimal alternatives) does exactly that, round after round. Work the class
    shares its pool with only lengthens its wait, so the fewest nodes with which its piece meets
    its target *alone* bound every plan that places at least that piece there:
    (share − spot)[w,p,g] ≥ s ⇒ nodes[p,g] ≥ N_alone(s), stated as a staircase of shares
    (:func:`_staircase`). When the piece alone is not the reason (its staircase does not bind
    the plan at hand), each neighbour that breaks a target beside it gets a staircase on the
    pair: the pool cut's premise (every share) was escaped by lowering any third share by 1%.
    Each staircase is stated for every other pool and GPU type that may host its classes too
    (the same pieces alone there, their own N): a cut on one pool was escaped by moving the
    piece to its twin (Kubernetes with and without a batch add-on, the shared pool, another GPU
    type with room to spare), a round for each twin. Pools that burst get point cuts instead
    (:func:`_point_cuts`), restated on their bursting twins (:func:`_on_twins`). ``ev`` is the
    plan's evaluation when the caller has it already (the loop does), so it is not computed
    twice. Past ``deadline`` (a ``time.perf_counter`` value) no further class is looked at: on
    a large estate each class's staircases on every place take seconds, and the cuts found so
    far hold on their own.
    """
    cuts: list[ServiceCut] = []
    if ev is None:
        ev = evaluate_decisions(data, dec)
    if ev.service_levels.is_empty():
        return cuts
    bad = ev.service_levels.filter(~ev.service_levels["met"])
    failing = sorted(set(bad.select("workload", "pool", "gpu_type").iter_rows()))
    places = sorted({(k[1], k[2]) for k in m.place})
    for name, p, g in failing:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        own = dec.shares.get((name, p, g), 0) - dec.spot.get((name, p, g), 0)
        if own <= 0:
            continue
        if data.bursts(p, g):
            point = _point_cuts(data, m, dec, name, (p, g))
            cuts += point + [c for cut in point for c in _on_twins(data, m, dec, cut)]
            continue
        have = dec.nodes.get((p, g), 0)
        alone = _staircase(data, m, dec, (p, g), name, own)
        cuts += alone
        cuts += [c for q in places if q != (p, g) for c in _staircase(data, m, dec, q, name, own)]
        if alone and (alone[-1].nodes < 0 or alone[-1].nodes > have):
            continue
        for (o, pp, gg), s in sorted(dec.shares.items()):
            o_own = s - dec.spot.get((o, pp, gg), 0)
            if (pp, gg) != (p, g) or o == name or o_own <= 0:
                continue
            for q in places:
                cuts += _staircase(data, m, dec, q, name, own, ((o, o_own),))
                if _queued_beside(data, name, o, q):
                    # And over the neighbour's share beside the whole piece: a plan that took
                    # 1% of it elsewhere escaped the staircase above, a round a percent.
                    cuts += _staircase(data, m, dec, q, o, o_own, ((name, own),))
    return list(dict.fromkeys(cuts))


def _queued_beside(data: ModelData, name: str, other: str, place: tuple[str, str]) -> bool:
    """Whether a staircase over ``other``'s share beside ``name`` holds at ``place``.

    Both must queue there as batch work, neither filling troughs, and ``other`` must be
    divisible (else its share has one value): only then does each one's wait grow with the
    other's share (more jobs in the same queue). A service's share sets the capacity that
    trough-filling training gets hour by hour, and on the train-and-serve preset at 1.25×
    training a staircase over the service's share forbade the shared pool outright, where its
    whole share beside the training met every target on 19 nodes.
    """
    workloads = {w.name: w for w in data.workloads}
    return workloads[other].is_divisible and all(
        isinstance(workloads[n], TrainingWorkload | DeadlineWorkload)
        and (n, *place) not in data.flexible
        for n in (name, other)
    )


def _add_cuts(
    data: ModelData,
    m: Model,
    dec: Decisions,
    ev: Evaluation,
    needs: dict[tuple[str, str], int],
    deadline: float | None = None,
) -> int:
    """Add the cuts that ``dec`` (evaluated as ``ev``, pools short by ``needs``) calls for.

    The pool cuts of every pool that misses a target and the piece cuts of its failing
    classes (those found by ``deadline``, a ``time.perf_counter`` value), each stated once.
    Returns how many cuts were added.
    """
    pool_cuts = [_cut(dec, p, g, need) for (p, g), need in needs.items()]
    pieces = piece_cuts(data, m, dec, ev, deadline)
    add_service_levels(m, list(dict.fromkeys(pool_cuts + pieces)))
    return len(needs) + len(pieces)


def cut_up_front(data: ModelData, m: Model, start: Decisions) -> tuple[Decisions, int]:
    """The cuts the starting plan calls for, added before the first solve; the plan, repaired.

    The warm start (the rounded LP plan) puts work where CP-SAT's first answer will too, so
    where it misses a pooled service level the first round would miss it the same way and pay
    a whole second round for the cut. The cuts hold for every plan (see
    :func:`add_service_levels`), so adding them early removes no plan that meets its targets
    and leaves the optimum as it was; the hint becomes the repaired plan (its short pools
    grown). Returns the plan to hint and the number of cuts added.
    """
    if any(k not in m.spot for k in start.spot):
        # Spot the model cannot state (a restricted model drops most spot variables) runs on the
        # pool's own capacity, as the hint will say: the cuts are those of that plan.
        start = replace(start, spot={k: v for k, v in start.spot.items() if k in m.spot})
    ev = evaluate_decisions(data, start)
    fixed, needs = repair(data, m, start, ev)
    if not needs:
        return start, 0
    return fixed, _add_cuts(data, m, start, ev, needs)


def _at_whole(dec: Decisions, cut: ServiceCut, nodes: int) -> Decisions:
    """``dec`` with each of ``cut``'s classes wholly in its pool, on its own capacity, of ``nodes``.

    A pool the classes leave empty keeps no nodes (a pool that hosts nothing buys none, and
    one cluster of today runs as one pool: the move may close its other one).
    """
    names = {w for w, _s in cut.shares}
    place = (cut.pool, cut.gpu_type)
    shares = {k: s for k, s in dec.shares.items() if k[0] not in names}
    shares.update({(w, *place): 100 for w in names})
    spot = {k: s for k, s in dec.spot.items() if k[0] not in names}
    hosts = {k[1] for k, s in shares.items() if s}
    kept = {k: n for k, n in dec.nodes.items() if k[0] in hosts}
    return replace(dec, shares=shares, spot=spot, nodes={**kept, place: nodes})


def _holds(ev: Evaluation, relax: frozenset[str]) -> bool:
    """Whether ``ev``'s plan breaks nothing but the staff or budget a ``relax`` search adds."""
    return all(v.split(":")[0] in relax for v in ev.violations)


def _trimmed(
    dec: Decisions,
    ev: Evaluation,
    place: tuple[str, str],
    relax: frozenset[str],
    costed: Callable[[Decisions], Evaluation],
) -> tuple[Decisions, Evaluation] | None:
    """``dec`` with the fewest nodes at ``place`` down to which each node less is cheaper.

    Fewer nodes rent more on demand (or free a node someone pays for): the walk stops at the
    first count that breaks a constraint or costs more, each count evaluated by ``costed``.
    None when ``dec`` itself breaks one (with ``relax``, anything but staff or budget).
    """
    if not _holds(ev, relax):
        return None
    best = (dec, ev)
    for n in range(dec.nodes.get(place, 0) - 1, -1, -1):
        trial = replace(dec, nodes={**dec.nodes, place: n})
        tev = costed(trial)
        if not _holds(tev, relax) or tev.total_cents >= best[1].total_cents:
            break
        best = (trial, tev)
    return best


def whole_share_escape(
    data: ModelData,
    m: Model,
    dec: Decisions,
    ceiling_cents: float,
    exempt: set[ServiceCut],
    deadline: float | None = None,
    relax: frozenset[str] = frozenset(),
) -> tuple[list[tuple[ServiceCut, int]], Decisions, Evaluation] | None:
    """A plan near ``dec``, cheaper than ``ceiling_cents``, that a cut in a bursting pool removed.

    A cut there holds from its shares upward, which the pool's saw-toothed waits do not
    guarantee (see ``docs/model.md``, "service levels"): with all of the work in the pool, more
    of it is rented on demand and the queue may meet its target on fewer nodes. For each such
    cut not yet ``exempt``, the plan with every piece at its whole share there is tried on one
    node fewer than the cut asks (one check of that pool; cuts on the same classes and count
    share it). Where that meets the pool's targets, the evaluator costs it with each node fewer
    there, and in the pools the pieces left, while it gets cheaper. Returns the cuts such plans
    escape (each with its whole shares' node count) and the cheapest plan that meets every
    target, or None when no cut removed a cheaper plan this way (or ``deadline``, a
    ``time.perf_counter`` value, came first). The loop asks with ``dec``'s own cost before it
    calls ``dec`` optimal, and with no ceiling (``math.inf``) before it calls the model
    infeasible after cuts (``dec`` being the last plan it found); in a search with ``relax``
    slack, a plan short only of staff or budget counts as meeting its constraints.
    """
    found: list[tuple[ServiceCut, int]] = []
    best: tuple[Decisions, Evaluation] | None = None
    tried: dict[tuple[str, str, frozenset[str], int], tuple[Decisions, Evaluation] | None] = {}
    for cut in m.service_rows:
        place = (cut.pool, cut.gpu_type)
        if cut in exempt or cut.spot or not data.bursts(cut.pool, cut.gpu_type):
            continue
        limit = _node_limit(data, m, *place)
        fewer = limit if cut.nodes < 0 else min(limit, cut.nodes - 1)
        names = frozenset(w for w, _s in cut.shares)
        key = (*place, names, fewer)
        if key not in tried:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            tried[key] = _cheaper_at_whole(data, m, dec, ceiling_cents, cut, fewer, relax)
        cheaper = tried[key]
        if cheaper is None:
            continue
        found.append((cut, cheaper[0].nodes[place]))
        if best is None or cheaper[1].total_cents < best[1].total_cents:
            best = cheaper
    if best is None:
        return None
    return found, best[0], best[1]


def _cheaper_at_whole(
    data: ModelData,
    m: Model,
    dec: Decisions,
    ceiling_cents: float,
    cut: ServiceCut,
    fewer: int,
    relax: frozenset[str],
) -> tuple[Decisions, Evaluation] | None:
    """``dec`` with ``cut``'s pieces whole in its pool on at most ``fewer`` nodes, if cheaper.

    Costs come first, without service levels (which change no cost): the walk down the node
    counts, there and in the pools the pieces left, bounds what any such plan costs, and only a
    bound below ``ceiling_cents`` is checked against the pool's targets at ``fewer`` nodes and
    then walked again with every target (on the uncertainty samples of the default, most
    whole-share plans meet the pool's targets on fewer nodes but cost more: checking each in
    full took 22 ms a solve).
    """
    place = (cut.pool, cut.gpu_type)
    if fewer < 0:
        return None
    trial = _at_whole(dec, cut, fewer)
    names = {w for w, _s in cut.shares}
    left = sorted({(k[1], k[2]) for k in dec.shares if k[0] in names} - {place})

    def walk(costed: Callable[[Decisions], Evaluation]) -> tuple[Decisions, Evaluation] | None:
        cheapest = _trimmed(trial, costed(trial), place, relax, costed)
        if cheapest is None:
            return None
        for q in left:
            cheapest = _trimmed(cheapest[0], cheapest[1], q, relax, costed) or cheapest
        return cheapest

    bound = walk(lambda d: evaluate_decisions(data, d, service_pools=set()))
    if bound is None or bound[1].total_cents >= ceiling_cents:
        return None
    if not _pool_meets(data, m, trial, *place, fewer):
        return None  # the cut holds at the whole shares too
    cheapest = walk(lambda d: evaluate_decisions(data, d))
    return cheapest if cheapest is not None and cheapest[1].total_cents < ceiling_cents else None


def exempt_escapes(m: Model, escapes: list[tuple[ServiceCut, int]], exempt: set[ServiceCut]) -> int:
    """Cut the whole shares out of each escaped cut and state their own node count instead."""
    for cut, _need in escapes:
        exempt_whole_shares(m, cut)
        exempt.add(cut)
    whole = [
        ServiceCut(c.pool, c.gpu_type, tuple((w, 100) for w, _s in c.shares), need)
        for c, need in escapes
    ]
    fresh = [c for c in dict.fromkeys(whole) if c not in m.service_rows]
    add_service_levels(m, fresh)
    exempt.update(fresh)
    return len(escapes) + len(fresh)


def workers_for(m: Model, workers: int | None) -> int:
    """CP-SAT workers for ``m``: as asked, else 1 below the large-model size, 2 above it."""
    if workers is not None:
        return workers
    return LARGE_MODEL_WORKERS if m.large else 1


def time_limit_message(wall_s: float, time_limit_s: float | None) -> str:
    """What to say when no plan was found in time."""
    limit = f" (limit {time_limit_s:g} s)" if time_limit_s is not None else ""
    return (
        f"No plan found within the time limit: the solver ran {wall_s:.2f} s{limit} without "
        "finding one. This says nothing about whether a plan exists. Give it more time "
        "(`--time-limit` on the command line, `time_limit_s` in `cd.solve`)."
    )


def run(
    data: ModelData,
    *,
    time_limit_s: float | None = 10.0,
    deterministic_limit: float | None = None,
    workers: int | None = None,
    seed: int = 0,
    relax: frozenset[str] = frozenset(),
    warm_start: bool = True,
    hint: Decisions | None = None,
    constrain: Constrain | None = None,
    objective: Objective | None = None,
    cut_first: bool = True,
    learned: Learned | None = None,
) -> SolveResult:
    """Build and solve the model of ``data`` until every service level holds.

    ``time_limit_s`` caps the wall time of the whole loop (None: no wall limit);
    ``deterministic_limit`` caps the loop's CP-SAT runs together in CP-SAT's machine-independent
    time (what analyses use, so answers do not depend on load). A one-worker solve given only
    ``time_limit_s`` gets :data:`WORK_PER_SECOND` of that per second instead, under a wall clock
    of :data:`CLOCK_NET` times the limit. With ``relax``, the staffing or budget
    slack is minimized first. ``warm_start`` hints CP-SAT with the rounded LP relaxation, or
    with ``hint`` when given, after adding the cuts the hint calls for (:func:`cut_up_front`)
    unless ``cut_first`` is off. ``constrain`` and ``objective`` are the analyses' hooks.
    ``workers`` None: :func:`workers_for` chooses by the model's size. Under a time limit each
    CP-SAT run leaves time for checking the plan it finds, as long as the slowest check so far.
    """
    start = time.perf_counter()
    m = build_model(data, relax)
    workers = workers_for(m, workers)
    clock_s = time_limit_s  # the wall-clock cap
    if deterministic_limit is None and time_limit_s is not None and workers == 1:
        # One worker: the work ends the search, the same on any load; the clock only a runaway.
        deterministic_limit = time_limit_s * WORK_PER_SECOND
        clock_s = time_limit_s * CLOCK_NET
    deadline = None if clock_s is None else start + clock_s
    check_s = 0.0  # wall time of the slowest check of a plan's service levels so far

    def remaining(reserve: float = 0.0) -> float | None:
        if clock_s is None:
            return None
        return max(0.05, clock_s - (time.perf_counter() - start) - reserve)

    if constrain is not None:
        constrain(m)
    scale = tie_break_scale(m)
    lp_bound = -math.inf
    cuts = 0
    # A repaired plan (grown pools) is a valid answer only to the plain cost model: a hook's
    # own constraints (a cost cap, a forced distance) may not hold for it.
    may_repair = constrain is None and objective is None
    # The best plan that meets every target so far, with its evaluation (a grown pool's plan,
    # or a large estate's restricted answer): what a search cut short reports.
    fallback: tuple[Decisions, Evaluation] | None = None
    last: Decisions | None = None  # the last plan found (or started from): where cuts came from
    if not relax and hint is not None:
        if cut_first:
            tick = time.perf_counter()
            hint, cuts = cut_up_front(data, m, hint)
            last = hint
            check_s = time.perf_counter() - tick
        add_hints(m, hint)
    elif not relax and warm_start:
        m.cp.minimize(m.cost_cents)
        relaxed = lp_relaxation(m.cp)
        if relaxed is not None:
            if objective is None:
                lp_bound = relaxed[0]
            start_from = rounded_plan(m, relaxed[1])
            if m.large and clock_s is not None:
                # Large estates: first solve the model restricted to each workload's likeliest
                # places (by the LP) for part of the time, then start the full search there.
                narrow = run(
                    restricted(data, m, relaxed[1]),
                    time_limit_s=RESTRICTED_SHARE * (remaining() or 0.0),
                    workers=workers,
                    seed=seed,
                    hint=start_from,
                    constrain=constrain,
                    # Its checks of pools of dozens of classes take seconds: its time is
                    # better spent searching than on the cuts that save it a round.
                    cut_first=False,
                )
                check_s = narrow.check_s
                if (
                    narrow.decisions is not None
                    and narrow.evaluation is not None
                    and _no_dearer(data, narrow.evaluation, start_from)
                ):
                    start_from = narrow.decisions
                    if may_repair:
                        # It meets every target: the answer if the full search finds none.
                        fallback = (narrow.decisions, narrow.evaluation)
            tick = time.perf_counter()
            start_from, cuts = cut_up_front(data, m, start_from)
            last = start_from
            check_s = max(check_s, time.perf_counter() - tick)
            add_hints(m, start_from)
    if learned is not None and not relax:
        # What a solve of the same data found: its rounds need not be searched again.
        known = [c for c in learned.cuts if c not in m.service_rows]
        add_service_levels(m, known)
        add_sharing_hours(m, learned.sharing_hours)
        cuts += len(known)
    if relax:
        # Fewest extra FTE first (a thousandth of an FTE outweighs any cost); a budget slack
        # needs no weight: the cheapest plan's overspend is the smallest budget increase.
        extra_staff = sum(m.staff_slack.values())
        budget = m.budget_slack if m.budget_slack is not None else 0
        goal = extra_staff * 10**9 + budget + m.cost_cents
        div = 1
    elif objective is not None:
        goal = objective(m)
        div = 1
    else:
        goal = m.cost_cents * scale + m.tie_break
        div = scale
    m.cp.minimize(goal)
    bound = lp_bound
    unproven = "The plan meets every service level but was not proven optimal within the limit."
    exempt: set[ServiceCut] = set()  # cuts whose whole shares were found cheaper (see below)
    spent = 0.0  # CP-SAT deterministic time used so far: the limit covers the whole loop
    for _round in range(MAX_CUT_ROUNDS + 1):
        left = None if deterministic_limit is None else max(0.01, deterministic_limit - spent)
        if left is not None and not may_repair and _round < MAX_CUT_ROUNDS:
            # A hooked search cannot fall back on a repaired plan, so a round that spends the
            # whole budget on a plan that misses a target ends with nothing: each round gets
            # half of what is left, and the rest stays for the rounds of cuts after it.
            left = max(0.01, left * HOOKED_ROUND_SHARE)
        # The plan found must still be checked within the limit: the search leaves time for it.
        solver = solver_for(
            remaining(check_s),
            left,
            workers,
            seed,
            # A few hundred variables: presolve costs more than it saves (docs/decisions.md).
            presolve=m.large,
        )
        code = solver.solve(m.cp)
        spent += solver.response_proto.deterministic_time
        status = status_of(code, m)
        wall = time.perf_counter() - start
        if status is Status.INFEASIBLE:
            escape = None
            if cuts and last is not None and may_repair:
                # The cuts alone may be why: a plan that meets every target may escape one.
                escape = whole_share_escape(data, m, last, math.inf, exempt, deadline, relax)
            if escape is not None:
                cuts += exempt_escapes(m, escape[0], exempt)
                bound = lp_bound
                if not relax:  # a relaxed search's plans need their slack: none falls back
                    fallback = (escape[1], escape[2])
                m.cp.clear_hints()
                add_hints(m, escape[1])
                continue
            if fallback is not None:
                # A plan that meets every target exists, so the cuts removed it: not infeasible.
                unproven = "The plan meets every service level but was not proven optimal."
                break
            return SolveResult(status, None, math.nan, math.nan, wall, m, {}, cuts)
        if status is Status.TIME_LIMIT:
            if fallback is not None:
                break  # a plan that meets every target exists: report it, not proven optimal
            return SolveResult(
                status,
                None,
                math.nan,
                math.nan,
                wall,
                m,
                {},
                cuts,
                time_limit_message(wall, time_limit_s),
            )
        dec = read_decisions(m, solver)
        last = dec
        bound = max(solver.best_objective_bound / div, bound)
        tick = time.perf_counter()
        ev = evaluate_decisions(data, dec)
        hourly = sharing_short(ev) - m.exact_sharing
        fixed, needs = repair(data, m, dec, ev)
        check_s = max(check_s, time.perf_counter() - tick)
        escape = None
        if not needs and not hourly and may_repair and not relax:
            escape = whole_share_escape(data, m, dec, ev.total_cents, exempt, deadline)
            check_s = max(check_s, time.perf_counter() - tick)
        if not needs and not hourly and escape is None:
            slack = {f"staffing:{s}": int(solver.value(v)) for s, v in m.staff_slack.items()}
            if m.budget_slack is not None:
                slack["budget"] = int(solver.value(m.budget_slack))
            return SolveResult(
                status,
                dec,
                solver.objective_value / div,
                bound,
                wall,
                m,
                slack,
                cuts,
                "",
                ev,
                check_s,
                _learned(m, exempt),
            )
        if escape is not None:
            # A cut removed a cheaper plan that meets every target: it is the answer so far.
            fixed = escape[1]
            fallback = (fixed, escape[2])
        elif may_repair and all(n >= 0 for n in needs.values()):
            fixed_ev = evaluate_decisions(data, fixed)
            if fixed_ev.feasible:
                fallback = (fixed, fixed_ev)
        if clock_s is not None and time.perf_counter() - start >= clock_s:
            break
        if deterministic_limit is not None and spent >= deterministic_limit:
            break
        if escape is not None:
            cuts += exempt_escapes(m, escape[0], exempt)
            # The exemption gives plans back, so the rounds' bounds no longer hold; the LP
            # relaxation's, taken before any cut, still does.
            bound = lp_bound
        else:
            cuts += _add_cuts(data, m, dec, ev, needs, deadline)
        # Training in the troughs waits too long hour by hour: state those pools' hourly rows.
        add_sharing_hours(m, hourly)
        # Cuts and hourly rows only remove plans (an exemption aside), so the last round's bound holds
        # (``bound`` keeps the best of the rounds). It is not added to the model as
        # ``goal >= bound``: that dense row over the whole objective made each later round
        # 2-10x slower to prove (the inference-platform preset: 1.2 s against 0.3 s a round),
        # for the same optimum.
        m.cp.clear_hints()
        add_hints(m, fallback[0] if fallback is not None else fixed)
    wall = time.perf_counter() - start
    if fallback is None:
        return SolveResult(
            Status.TIME_LIMIT,
            None,
            math.nan,
            math.nan,
            wall,
            m,
            {},
            cuts,
            f"No plan meeting every service level was found after {cuts} service-level cuts "
            f"({wall:.2f} s). Give it more time (`--time-limit`, `time_limit_s`).",
        )
    repaired, ev = fallback
    return SolveResult(
        Status.FEASIBLE,
        repaired,
        float(ev.total_cents),
        bound,
        wall,
        m,
        {},
        cuts,
        unproven,
        ev,
        check_s,
        _learned(m, exempt),
    )


def solve_data(
    data: ModelData,
    time_limit_s: float = 10.0,
    workers: int | None = None,
    seed: int = 0,
    relax: frozenset[str] = frozenset(),
    warm_start: bool = True,
    hint: Decisions | None = None,
) -> SolveResult:
    """:func:`run` with a wall-clock limit and positional arguments (``solve``, relaxations)."""
    return run(
        data,
        time_limit_s=time_limit_s,
        workers=workers,
        seed=seed,
        relax=relax,
        warm_start=warm_start,
        hint=hint,
    )
