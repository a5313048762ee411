"""A discrete-event simulator of GPU jobs on abstract pools, to check the queueing formulas.

The engine knows pools (a scheduling policy, nodes of ``gpus_per_node`` GPUs) and a table of
jobs; it knows nothing of scenarios or plans, so the optimizer and the simulator stay
independent and one can check the other. Pools do not interact, so each pool is simulated
on its own with a heap of timed events (completions, deadlock breaks) merged with the sorted
arrivals.

Placement is node-aware. A job of ``g <= gpus_per_node`` GPUs lives on one node (best fit:
the fullest node that still has room, so whole nodes stay free for large jobs); a larger
job takes ``ceil(g / gpus_per_node)`` whole free nodes.

Policies:

``slurm``
    Priority FIFO with EASY backfill (Lifka 1995; Slurm ``sched/backfill``): the head job
    gets a reservation at the earliest time enough GPUs free up (its *shadow time*); later
    jobs start now if they fit and either end before the shadow time or use only GPUs the
    head will not need. Runtimes are the true durations (a perfect-estimate upper bound on
    backfill's benefit) and at most ``backfill_depth`` queued jobs are tried per pass, as
    Slurm's ``bf_max_job_test``. Allocations are whole: no GPU is held idle while waiting.
``gang``
    All-or-nothing admission in strict FIFO order (Kueue ``StrictFIFO``, Volcano gang
    plugin, KAI): whole allocations, no backfill, so a blocked head job blocks the queue.
``kubernetes``
    The default scheduler: each job is split into pods (one per node for multi-node jobs)
    placed one at a time in priority/FIFO order as GPUs free up. A partly placed job holds
    its GPUs idle until its last pod is placed; those GPU-hours are reported as lost to
    partial allocation. Real Kubernetes never gives them back, so large jobs can deadlock
    each other. The engine counts each deadlock (no partly placed job can complete: nothing
    is running, or even if every running job ended none would find the GPUs it lacks) and
    its hours; to keep the replay going, a deadlock still
    present ``deadlock_timeout_h`` after it began is broken by releasing the youngest
    partly placed jobs, requeueing their pods behind every pending pod, and moving the oldest
    partial job's missing pods to the front of the queue, as an operator or a job controller
    with a start timeout would; each break lets at least one job start, so replays end. Only real deadlocks are broken: a partial job
    that can still complete keeps holding its GPUs, which is the waste being measured.
``shared``
    One pool for services and training (Slurm on Kubernetes): service jobs (inference
    replicas) go first; when one does not fit, running training jobs are preempted, most
    recently started first, and requeued in their original place with their remaining time
    plus ``checkpoint_restart_h`` (reload and lost work since the last checkpoint), which is
    reported as GPU-hours lost to preemption; nothing is preempted when even all training
    GPUs would not make room. Training is otherwise scheduled as ``slurm``.
"""

from __future__ import annotations

import bisect
import gc
import heapq
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

__all__ = [
    "POLICIES",
    "JobClass",
    "Pool",
    "SimOptions",
    "SimResult",
    "generate_jobs",
    "run",
    "wait_stats",
]

_LAST = 1 << 62
"""Queue rank below every priority: where the deadlock breaker requeues released pods."""

POLICIES = ("slurm", "kubernetes", "gang", "shared")
"""Scheduling policies a simulated pool can follow."""

Distribution = Literal["exponential", "lognormal", "gamma", "deterministic"]


@dataclass(frozen=True)
class Pool:
    """A pool of identical nodes under one scheduling policy."""

    name: str
    policy: str
    gpus_per_node: int
    nodes: int

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"pool {self.name!r}: policy {self.policy!r} is not one of {POLICIES}")
        if self.gpus_per_node < 1 or self.nodes < 1:
            raise ValueError(f"pool {self.name!r}: gpus_per_node and nodes must be >= 1")

    @property
    def gpus(self) -> int:
        """Total GPUs of the pool."""
        return self.gpus_per_node * self.nodes


@dataclass(frozen=True)
class SimOptions:
    """Engine parameters; the defaults are documented in the module docstring."""

    backfill_depth: int = 100
    deadlock_timeout_h: float = 1.0
    checkpoint_restart_h: float = 0.25
    warmup_h: float = 0.0
    horizon_h: float | None = None


@dataclass(frozen=True)
class JobClass:
    """Parameters of a stream of jobs for :func:`generate_jobs`.

    Arrivals are Poisson at ``rate_per_h``, or, with ``profile`` (hourly weights of a cyclic
    period such as the 168 hours of a week, rescaled to mean 1), at ``rate_per_h * w[t]`` in
    hour ``t``; durations have mean ``mean_duration_h`` and, for the lognormal and gamma
    shapes, squared coefficient of variation ``duration_scv``.
    """

    workload: str
    pool: str
    rate_per_h: float
    gpus: int
    mean_duration_h: float
    distribution: Distribution = "exponential"
    duration_scv: float = 1.0
    priority: int = 0
    service: bool = False
    profile: tuple[float, ...] | None = None
    arrival_scv: float = 1.0
    """SCV of the gaps between arrivals of a homogeneous stream: 1 is Poisson; below 1, gamma
    gaps (regular, planned submissions, as a scenario's ``arrival_scv`` states)."""

    def __post_init__(self) -> None:
        if self.rate_per_h < 0 or self.gpus < 1 or self.mean_duration_h < 0:
            raise ValueError(f"job class {self.workload!r}: needs rate >= 0, gpus >= 1, mean >= 0")
        if self.arrival_scv <= 0 or (self.arrival_scv != 1.0 and self.profile is not None):
            raise ValueError(
                f"job class {self.workload!r}: arrival_scv must be > 0, and 1 (Poisson) with a profile"
            )
        if self.profile is not None and (
            not self.profile or min(self.profile) < 0 or sum(self.profile) <= 0
        ):
            raise ValueError(
                f"job class {self.workload!r}: profile needs non-negative weights, not all zero"
            )


@dataclass(frozen=True)
class SimResult:
    """What a replay measured.

    ``jobs``: job_id, workload, pool, submit_h, start_h, end_h, wait_h, gpus, service
    (start_h is the first start; null if the job never started).
    ``waits``: workload, jobs, mean_wait_h, p50_wait_h, p95_wait_h, p99_wait_h over jobs
    submitted after ``warmup_h``.
    ``pools``: pool, policy, gpus, utilization (GPU-hours of running jobs, counting the GPUs
    they asked for, over capacity in the window ``[warmup_h, horizon_h]``; GPUs idled by
    whole-node rounding or held by partly placed jobs are not busy), busy_gpu_hours,
    partial_alloc_gpu_hours,
    preempted_gpu_hours, preemptions, partial_releases, deadlocks, deadlock_hours.
    """

    jobs: pl.DataFrame
    waits: pl.DataFrame
    pools: pl.DataFrame
    events: int
    wall_s: float

    @property
    def events_per_s(self) -> float:
        """Events processed per second of wall time."""
        return self.events / self.wall_s if self.wall_s > 0 else math.inf


def generate_jobs(classes: Sequence[JobClass], hours: float, seed: int = 0) -> pl.DataFrame:
    """Draw a job table from class parameters: Poisson arrivals over ``[0, hours)``.

    Each class's arrivals are homogeneous, or follow its hourly ``profile`` (a Poisson count
    per hour at the profiled rate, times uniform within the hour). A homogeneous class with
    ``arrival_scv`` below or above 1 has gamma-distributed gaps instead (a renewal stream).

    Durations: ``exponential`` (SCV 1), ``deterministic`` (SCV 0), ``lognormal`` with
    ``sigma^2 = ln(1 + scv)``, ``mu = ln(mean) - sigma^2 / 2``, or ``gamma`` with shape
    ``1/scv`` and scale ``mean * scv``. The same seed gives the same table.
    """
    rng = np.random.default_rng(seed)
    frames = []
    for k in classes:
        if k.profile is None and k.arrival_scv != 1.0:
            submit = _renewal_arrivals(rng, k.rate_per_h, k.arrival_scv, hours)
            n = submit.size
        elif k.profile is None:
            n = int(rng.poisson(k.rate_per_h * hours))
            submit = np.sort(rng.uniform(0.0, hours, n))
        else:
            submit = _profiled_arrivals(rng, k.rate_per_h, k.profile, hours)
            n = submit.size
        frames.append(
            pl.DataFrame(
                {
                    "workload": [k.workload] * n,
                    "pool": [k.pool] * n,
                    "submit_h": submit,
                    "gpus": np.full(n, k.gpus, dtype=np.int64),
                    "duration_h": _durations(rng, k, n),
                    "priority": np.full(n, k.priority, dtype=np.int64),
                    "service": np.full(n, k.service, dtype=bool),
                },
                schema=_JOB_SCHEMA,
            )
        )
    jobs = pl.concat(frames) if frames else pl.DataFrame(schema=_JOB_SCHEMA)
    jobs = jobs.sort("submit_h", maintain_order=True)
    return jobs.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("job_id")).select(
        "job_id", *_JOB_SCHEMA
    )


def _renewal_arrivals(
    rng: np.random.Generator, rate: float, scv: float, hours: float
) -> np.ndarray:
    """Arrivals whose gaps are gamma with mean ``1/rate`` and SCV ``scv``, over ``[0, hours)``.

    The first arrival falls uniformly within a first gap, so the stream has no special start.
    """
    if rate <= 0:
        return np.zeros(0)
    shape = 1.0 / scv
    n = int(rate * hours + 6.0 * math.sqrt(rate * hours * scv) + 10)
    gaps = rng.gamma(shape, 1.0 / (rate * shape), n)
    times = np.cumsum(gaps) - gaps[0] * rng.uniform(0.0, 1.0)
    while times[-1] < hours:  # extend in the (rare) case the draw fell short
        more = rng.gamma(shape, 1.0 / (rate * shape), n)
        times = np.concatenate([times, times[-1] + np.cumsum(more)])
    return times[times < hours]


def _profiled_arrivals(
    rng: np.random.Generator, rate: float, profile: tuple[float, ...], hours: float
) -> np.ndarray:
    """Non-homogeneous Poisson arrivals: a Poisson count per hour, uniform within it."""
    w = np.asarray(profile, dtype=float)
    w = w / w.mean()
    n_buckets = math.ceil(hours)
    starts = np.arange(n_buckets, dtype=float)
    width = np.minimum(1.0, hours - starts)
    counts = rng.poisson(rate * w[np.arange(n_buckets) % w.size] * width)
    base = np.repeat(starts, counts)
    return np.sort(base + rng.uniform(0.0, 1.0, base.size) * np.repeat(width, counts))


_JOB_SCHEMA = {
    "workload": pl.String,
    "pool": pl.String,
    "submit_h": pl.Float64,
    "gpus": pl.Int64,
    "duration_h": pl.Float64,
    "priority": pl.Int64,
    "service": pl.Boolean,
}


def _durations(rng: np.random.Generator, k: JobClass, n: int) -> np.ndarray:
    m = k.mean_duration_h
    if k.distribution == "exponential":
        return rng.exponential(m, n)
    if k.distribution == "deterministic":
        return np.full(n, m)
    if k.distribution == "lognormal":
        s2 = math.log1p(k.duration_scv)
        return rng.lognormal(math.log(m) - s2 / 2.0, math.sqrt(s2), n)
    if k.distribution == "gamma":
        return rng.gamma(1.0 / k.duration_scv, m * k.duration_scv, n)
    raise ValueError(f"unknown duration distribution {k.distribution!r}")


def run(pools: Sequence[Pool], jobs: pl.DataFrame, options: SimOptions | None = None) -> SimResult:
    """Replay ``jobs`` on ``pools`` and measure waits, utilization and lost GPU-hours.

    ``events`` counts arrivals, completions and deadlock breaks (two per job in practice);
    ``wall_s`` is the whole call, validation and result frames included.

    ``jobs`` needs job_id, workload, pool, submit_h, gpus, duration_h; priority (higher runs
    first, default 0) and service (default false) are optional. The replay is deterministic:
    randomness lives in :func:`generate_jobs`.
    """
    t0 = time.perf_counter()
    opts = options or SimOptions()
    jobs = _validated(pools, jobs)
    horizon = opts.horizon_h
    if horizon is None:
        horizon = float(jobs.get_column("submit_h").to_numpy().max()) if jobs.height else 0.0
    events = 0
    starts, ends, pool_rows, frames = [], [], [], []
    with _no_cycle_collection():
        for pool in pools:
            sub = jobs.filter(pl.col("pool") == pool.name).sort(
                ["submit_h", "job_id"], maintain_order=True
            )
            sim = _PoolSim(pool, opts, opts.warmup_h, horizon)
            start, end = sim.run(
                sub["submit_h"].to_list(),
                sub["gpus"].to_list(),
                sub["duration_h"].to_list(),
                sub["priority"].to_list(),
                sub["service"].to_list(),
            )
            events += sim.events
            frames.append(sub)
            starts.extend(start)
            ends.extend(end)
            pool_rows.append(sim.summary())
    out = pl.concat(frames) if frames else jobs.clear()
    out = out.with_columns(
        pl.Series("start_h", starts, dtype=pl.Float64),
        pl.Series("end_h", ends, dtype=pl.Float64),
    ).with_columns((pl.col("start_h") - pl.col("submit_h")).alias("wait_h"))
    out = out.select(
        "job_id", "workload", "pool", "submit_h", "start_h", "end_h", "wait_h", "gpus", "service"
    ).sort("job_id")
    waits = wait_stats(out.filter(pl.col("submit_h") >= opts.warmup_h), ["workload"])
    return SimResult(out, waits, pl.DataFrame(pool_rows), events, time.perf_counter() - t0)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector while a replay runs, and restore it after.

    A replay makes millions of small tuples and lists (events, queue keys, allocations) and no
    reference cycles, so the collector's passes over them find nothing: about a tenth of a
    million-job replay (``benchmarks/sim_speed.py``). Reference counting still frees
    everything as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def wait_stats(jobs: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Jobs and mean, p50, p95 and p99 of `wait_h` per group of `by`, sorted by `by`."""
    return (
        jobs.group_by(*by)
        .agg(
            pl.len().alias("jobs"),
            pl.col("wait_h").mean().alias("mean_wait_h"),
            pl.col("wait_h").quantile(0.50, "linear").alias("p50_wait_h"),
            pl.col("wait_h").quantile(0.95, "linear").alias("p95_wait_h"),
            pl.col("wait_h").quantile(0.99, "linear").alias("p99_wait_h"),
        )
        .sort(*by)
    )


def _validated(pools: Sequence[Pool], jobs: pl.DataFrame) -> pl.DataFrame:
    """Check the job table against the pools; raise once with every problem."""
    problems = []
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        problems.append(f"pools: duplicate names in {names}")
    required = ("job_id", "workload", "pool", "submit_h", "gpus", "duration_h")
    missing = [c for c in required if c not in jobs.columns]
    if missing:
        raise ValueError(f"jobs: missing columns {missing} | add them to the job table")
    if "priority" not in jobs.columns:
        jobs = jobs.with_columns(pl.lit(0, dtype=pl.Int64).alias("priority"))
    if "service" not in jobs.columns:
        jobs = jobs.with_columns(pl.lit(False).alias("service"))
    jobs = jobs.with_columns(
        pl.col("submit_h").cast(pl.Float64),
        pl.col("duration_h").cast(pl.Float64),
        pl.col("gpus").cast(pl.Int64),
        pl.col("priority").cast(pl.Int64),
        pl.col("service").cast(pl.Boolean),
    )
    unknown = jobs.filter(~pl.col("pool").is_in(names))
    if unknown.height:
        problems.append(
            f"jobs: {unknown.height} rows name unknown pools "
            f"{sorted(set(unknown['pool'].to_list()))[:5]} | use one of {names}"
        )
    bad = jobs.filter((pl.col("gpus") < 1) | (pl.col("duration_h") < 0))
    if bad.height:
        problems.append(
            f"jobs: job_id {bad['job_id'].to_list()[:5]} have gpus < 1 or duration_h < 0"
        )
    for p in pools:
        big = jobs.filter(
            (pl.col("pool") == p.name)
            & (
                (pl.col("gpus") > p.gpus)
                | ((pl.col("gpus") + p.gpus_per_node - 1) // p.gpus_per_node > p.nodes)
            )
        )
        if big.height:
            problems.append(
                f"jobs: job_id {big['job_id'].to_list()[:5]} need more GPUs than pool "
                f"{p.name!r} has ({p.gpus}) | enlarge the pool or split the jobs"
            )
    if problems:
        raise ValueError("invalid simulation input:\n  " + "\n  ".join(problems))
    return jobs


class _PoolSim:
    """Event loop of one pool; arrays are plain lists indexed by the pool's job order."""

    def __init__(self, pool: Pool, opts: SimOptions, window_start: float, window_end: float):
        self.pool = pool
        self.opts = opts
        gpn = pool.gpus_per_node
        self.gpn = gpn
        self.node_free = [gpn] * pool.nodes
        self.level: list[set[int]] = [set() for _ in range(gpn + 1)]
        self.level[gpn] = set(range(pool.nodes))
        self.free_total = pool.gpus
        self.w0, self.w1 = window_start, window_end
        self.events = 0
        self.busy = 0.0
        self.partial_waste = 0.0
        self.preempt_waste = 0.0
        self.preemptions = 0
        self.partial_releases = 0
        self.deadlocks = 0
        self.deadlock_hours = 0.0

    def summary(self) -> dict[str, object]:
        """One row of :attr:`SimResult.pools`."""
        span = max(self.w1 - self.w0, 0.0)
        cap = self.pool.gpus * span
        return {
            "pool": self.pool.name,
            "policy": self.pool.policy,
            "gpus": self.pool.gpus,
            "utilization": self.busy / cap if cap > 0 else 0.0,
            "busy_gpu_hours": self.busy,
            "partial_alloc_gpu_hours": self.partial_waste,
            "preempted_gpu_hours": self.preempt_waste,
            "preemptions": self.preemptions,
            "partial_releases": self.partial_releases,
            "deadlocks": self.deadlocks,
            "deadlock_hours": self.deadlock_hours,
        }

    # Node placement --------------------------------------------------------------------

    def _give(self, node: int, amount: int) -> None:
        f = self.node_free[node]
        self.level[f].discard(node)
        self.node_free[node] = f + amount
        self.level[f + amount].add(node)
        self.free_total += amount

    def _place(self, g: int) -> list[int] | None:
        """Allocate ``g`` GPUs (best fit on one node, or whole nodes); None if no room."""
        gpn = self.gpn
        if g > self.free_total:
            return None
        if g <= gpn:
            level = self.level
            for k in range(g, gpn + 1):
                if level[k]:
                    node = level[k].pop()
                    self.node_free[node] = k - g
                    level[k - g].add(node)
                    self.free_total -= g
                    return [node]
            return None
        m = -(-g // gpn)
        whole = self.level[gpn]
        if len(whole) < m:
            return None
        nodes = [whole.pop() for _ in range(m)]
        zero = self.level[0]
        for node in nodes:
            self.node_free[node] = 0
            zero.add(node)
        self.free_total -= m * gpn
        return nodes

    def _release(self, nodes: list[int], g: int) -> None:
        if g <= self.gpn:
            self._give(nodes[0], g)
        else:
            for node in nodes:
                self._give(node, self.gpn)

    def _alloc_size(self, g: int) -> int:
        return g if g <= self.gpn else -(-g // self.gpn) * self.gpn

    def _account_busy(self, gpus: int, t_start: float, t_end: float) -> None:
        lo = max(t_start, self.w0)
        hi = min(t_end, self.w1)
        if hi > lo:
            self.busy += gpus * (hi - lo)

    # Replay ---------------------------------------------------------------------------

    def run(
        self,
        submit: list[float],
        gpus: list[int],
        dur: list[float],
        prio: list[int],
        service: list[bool],
    ) -> tuple[list[float | None], list[float | None]]:
        """Replay the pool's jobs (sorted by submit time); return first starts and ends."""
        replay: _Replay
        if self.pool.policy == "kubernetes":
            replay = _PodReplay(self, submit, gpus, dur, prio)
        else:
            replay = _QueueReplay(self, submit, gpus, dur, prio, service)
        replay.run()
        self.events = replay.events
        return replay.start, replay.end


class _Replay(ABC):
    """The state every event loop shares.

    The jobs in submit order, the heap of timed events, the next arrival, the events counted
    and each job's first start and end.
    """

    def __init__(self, sim: _PoolSim, submit: list[float], gpus: list[int]) -> None:
        self.sim = sim
        self.submit = submit
        self.gpus = gpus
        self.n = len(submit)
        self.start: list[float | None] = [None] * self.n
        self.end: list[float | None] = [None] * self.n
        self.heap: list[tuple[float, int, int]] = []
        self.ai = 0
        self.events = 0

    @abstractmethod
    def run(self) -> None:
        """Process events until every job has arrived and every event has happened."""


class _QueueReplay(_Replay):
    """Whole-allocation policies: slurm (EASY backfill), gang (strict FIFO), shared.

    Each event time: finish the jobs that end, queue the arrivals, start jobs from the head of
    the queue while they fit (a service job on a shared pool preempts training to fit), then
    backfill behind the head's reservation.
    """

    def __init__(
        self,
        sim: _PoolSim,
        submit: list[float],
        gpus: list[int],
        dur: list[float],
        prio: list[int],
        service: list[bool],
    ) -> None:
        super().__init__(sim, submit, gpus)
        policy = sim.pool.policy
        self.backfill = policy in ("slurm", "shared")
        self.preempt = policy == "shared"
        self.depth = sim.opts.backfill_depth
        self.restart = sim.opts.checkpoint_restart_h
        self.service = service
        n = self.n
        gpn = sim.gpn
        self.alloc = [g if g <= gpn else -(-g // gpn) * gpn for g in gpus]  # as _alloc_size
        self.key = (
            [
                (-math.inf if s else -p, j, j)
                for j, (p, s) in enumerate(zip(prio, service, strict=True))
            ]
            if self.preempt
            else [(-p, j, j) for j, p in enumerate(prio)]
        )
        self.remaining = list(dur)
        self.seg_start = [0.0] * n
        self.epoch = [0] * n
        self.placed: dict[int, list[int]] = {}
        self.running: dict[int, float] = {}
        self.queue: list[tuple[float, int, int]] = []
        self.res_head = -1
        self.shadow = math.inf
        self.extra = 0

    def run(self) -> None:
        """Replay the pool's jobs, one event time at a time.

        Each event time: finish the jobs that end by ``t`` (ends of preempted runs are stale:
        skipped), queue the arrivals in priority, then submit, order, start jobs from the head
        of the queue while they fit, then backfill. These lines are most of the simulator's
        time (``benchmarks/sim_speed.py``), so the common steps (releasing a job's GPUs and
        counting its busy hours, starting a job as :meth:`begin` does) are written out here:
        a method call costs as much as its body.
        """
        heap, submit, n, queue, sim = self.heap, self.submit, self.n, self.queue, self.sim
        gpus, key, epoch, remaining = self.gpus, self.key, self.epoch, self.remaining
        placed, running, start, end, seg_start = (
            self.placed,
            self.running,
            self.start,
            self.end,
            self.seg_start,
        )
        node_free, level, gpn, w0, w1 = sim.node_free, sim.level, sim.gpn, sim.w0, sim.w1
        place, heappop, heappush, insort = sim._place, heapq.heappop, heapq.heappush, bisect.insort
        backfill, preempt, service = self.backfill, self.preempt, self.service
        inf = math.inf
        ai, events = self.ai, self.events
        while ai < n or heap:
            t = heap[0][0] if heap else inf
            if ai < n and submit[ai] < t:
                t = submit[ai]
            while heap and heap[0][0] <= t:  # the jobs that end
                e, j, ep = heappop(heap)
                events += 1
                if ep != epoch[j]:
                    continue
                g = gpus[j]
                share = g if g <= gpn else gpn  # as _PoolSim._release: one node, or whole ones
                for node in placed.pop(j):
                    f = node_free[node]
                    level[f].discard(node)
                    node_free[node] = f + share
                    level[f + share].add(node)
                    sim.free_total += share
                del running[j]
                end[j] = e
                lo = seg_start[j]  # as _PoolSim._account_busy
                lo = lo if lo > w0 else w0
                hi = e if e < w1 else w1
                if hi > lo:
                    sim.busy += g * (hi - lo)
            while ai < n and submit[ai] <= t:  # the arrivals
                insort(queue, key[ai])
                ai += 1
                events += 1
            while queue:  # the head of the queue, while it fits
                j = queue[0][2]
                nodes = place(gpus[j])
                if nodes is None and preempt and service[j]:
                    nodes = self.preempt_for(j, t)
                if nodes is None:
                    break
                del queue[0]
                placed[j] = nodes  # as begin()
                if start[j] is None:
                    start[j] = t
                seg_start[j] = t
                e = t + remaining[j]
                running[j] = e
                heappush(heap, (e, j, epoch[j]))
            if backfill and len(queue) > 1 and sim.free_total > 0:
                self.backfill_behind_head(t)
        self.ai, self.events = ai, events

    def begin(self, j: int, t: float, nodes: list[int]) -> None:
        """Start (or restart after preemption) job ``j`` at ``t`` on ``nodes``."""
        self.placed[j] = nodes
        if self.start[j] is None:
            self.start[j] = t
        self.seg_start[j] = t
        e = t + self.remaining[j]
        self.running[j] = e
        heapq.heappush(self.heap, (e, j, self.epoch[j]))

    def backfill_behind_head(self, t: float) -> None:
        """EASY backfill behind the head's reservation (at most ``backfill_depth`` tried).

        A later job starts now if it ends before the reservation or uses only GPUs the head
        will not need.
        """
        sim, queue, alloc, remaining = self.sim, self.queue, self.alloc, self.remaining
        head = queue[0][2]
        if head != self.res_head or t >= self.shadow:
            self.res_head = head
            self.shadow, self.extra = self.reservation(self.gpus[head], alloc[head])
        i = 1
        while i < len(queue) and i <= self.depth and sim.free_total > 0:
            j = queue[i][2]
            a = alloc[j]
            if a <= sim.free_total and (t + remaining[j] <= self.shadow or a <= self.extra):
                nodes = sim._place(self.gpus[j])
                if nodes is not None:
                    if t + remaining[j] > self.shadow:
                        self.extra -= a
                    del queue[i]
                    self.begin(j, t, nodes)
                    continue
            i += 1

    def reservation(self, g: int, a: int) -> tuple[float, int]:
        """EASY reservation for a head job of ``g`` GPUs: its start time and spare GPUs.

        Running jobs are released in order of end time on a copy of the node state until
        the head fits; the GPUs free at that moment beyond the head's allocation may be
        used by backfilled jobs that outlive the reservation.
        """
        sim = self.sim
        gpn = sim.gpn
        free: dict[int, int] = {}
        whole = len(sim.level[gpn])
        need_whole = -(-g // gpn) if g > gpn else 0
        fits_now = any(sim.level[k] for k in range(g, gpn + 1)) if g <= gpn else False
        free_total = sim.free_total
        if fits_now:
            return math.inf, 0
        order = sorted(self.running.items(), key=lambda kv: kv[1])
        shadow = math.inf
        for j, e in order:
            if e > shadow:
                break
            gj = self.gpus[j]
            per_node = gj if gj <= gpn else gpn
            for node in self.placed[j]:
                f = free.get(node, sim.node_free[node]) + per_node
                free[node] = f
                if f == gpn:
                    whole += 1
                if shadow == math.inf and (
                    (g <= gpn and f >= g) or (g > gpn and whole >= need_whole)
                ):
                    shadow = e
            free_total += sim._alloc_size(gj)
        return shadow, max(free_total - a, 0)

    def preempt_for(self, j: int, t: float) -> list[int] | None:
        """Preempt training jobs, most recently started first, until service ``j`` fits.

        Nothing is preempted when even all training GPUs would not make room.
        """
        sim, alloc, gpus = self.sim, self.alloc, self.gpus
        victims = sorted(
            (v for v in self.running if not self.service[v]),
            key=lambda v: self.seg_start[v],
            reverse=True,
        )
        if sim.free_total + sum(alloc[v] for v in victims) < alloc[j]:
            return None
        for v in victims:
            sim._release(self.placed.pop(v), gpus[v])
            e = self.running.pop(v)
            self.epoch[v] += 1
            sim._account_busy(gpus[v], self.seg_start[v], t)
            self.remaining[v] = e - t + self.restart
            sim.preempt_waste += alloc[v] * self.restart
            sim.preemptions += 1
            bisect.insort(self.queue, self.key[v])
            nodes = sim._place(gpus[j])
            if nodes is not None:
                return nodes
        return None


class _PodReplay(_Replay):
    """Kubernetes default scheduler: pods placed one at a time, partial jobs hold GPUs.

    Each event time: count deadlock hours, finish the jobs that end (and break a deadlock that
    outlived its timeout), queue the arrivals' pods, place pending pods while GPUs are free,
    then watch for a new deadlock.
    """

    def __init__(
        self, sim: _PoolSim, submit: list[float], gpus: list[int], dur: list[float], prio: list[int]
    ) -> None:
        super().__init__(sim, submit, gpus)
        gpn = sim.gpn
        self.dur = dur
        self.prio = prio
        self.timeout = sim.opts.deadlock_timeout_h
        self.pod_sizes = [
            [g] if g <= gpn else [gpn] * (g // gpn) + ([g % gpn] if g % gpn else []) for g in gpus
        ]
        # Pods a job holds: (node, gpus, time placed); partial jobs by time of first pod.
        self.pods_held: list[list[tuple[int, int, float]]] = [[] for _ in range(self.n)]
        self.partial: dict[int, float] = {}
        self.pending: list[tuple[int, int, int, int]] = []
        self.held_partial = 0
        self.running = 0
        self.seq = self.n
        self.episode = 0
        self.deadlocked_since: float | None = None

    def run(self) -> None:
        """Replay the pool's jobs, one event time at a time.

        Each event time: count deadlock hours, finish the jobs that end (and break a deadlock
        that outlived its timeout), queue the arrivals' pods, place pending pods while GPUs are
        free, then watch for a new deadlock. As in :meth:`_QueueReplay.run`, the common steps
        (a job's end, an arrival, placing a pod) are written out here: a method call costs as
        much as its body. A pass over the pending pods skips, without trying, every pod at
        least as large as one that found no node in that pass: placing pods only takes GPUs,
        so it would find none either.
        """
        heap, submit, n, sim = self.heap, self.submit, self.n, self.sim
        gpus, dur, prio, start, end = self.gpus, self.dur, self.prio, self.start, self.end
        pending, pod_sizes, pods_held, partial = (
            self.pending,
            self.pod_sizes,
            self.pods_held,
            self.partial,
        )
        node_free, level, gpn, w0, w1 = sim.node_free, sim.level, sim.gpn, sim.w0, sim.w1
        heappop, heappush, insort = heapq.heappop, heapq.heappush, bisect.insort
        inf = math.inf
        ai, events = self.ai, self.events
        while ai < n or heap:
            t = heap[0][0] if heap else inf
            if ai < n and submit[ai] < t:
                t = submit[ai]
            if self.deadlocked_since is not None:
                sim.deadlock_hours += t - self.deadlocked_since
                self.deadlocked_since = t
            while heap and heap[0][0] <= t:  # the jobs that end, and a deadlock's timeout
                e, j, ep = heappop(heap)
                events += 1
                if j < 0:
                    if ep == self.episode and self.deadlocked_since is not None:
                        self.break_deadlock(e)
                    continue
                self.running -= 1
                for node, size, _ in pods_held[j]:  # as _PoolSim._give
                    f = node_free[node]
                    level[f].discard(node)
                    node_free[node] = f + size
                    level[f + size].add(node)
                    sim.free_total += size
                pods_held[j] = []
                end[j] = e
                lo = start[j]  # as _PoolSim._account_busy
                lo = e if lo is None else lo if lo > w0 else w0
                hi = e if e < w1 else w1
                if hi > lo:
                    sim.busy += gpus[j] * (hi - lo)
            while ai < n and submit[ai] <= t:  # the arrivals' pods, as enqueue()
                rank = -prio[ai]
                for p in range(len(pod_sizes[ai])):
                    insort(pending, (rank, ai, ai, p))
                ai += 1
                events += 1
            i = 0
            too_big = gpn + 1  # the smallest pod that found no node in this pass
            while i < len(pending) and sim.free_total > 0 and too_big > 1:
                j, p = pending[i][2], pending[i][3]
                size = pod_sizes[j][p]
                node = -1
                if size < too_big and size <= sim.free_total:  # best fit: the fullest node it fits
                    for k in range(size, gpn + 1):
                        if level[k]:
                            node = level[k].pop()
                            node_free[node] = k - size
                            level[k - size].add(node)
                            sim.free_total -= size
                            break
                if node < 0:
                    too_big = min(too_big, size)
                    i += 1
                    continue
                del pending[i]
                held = pods_held[j]
                held.append((node, size, t))
                if len(held) < len(pod_sizes[j]):
                    if len(held) == 1:
                        partial[j] = t
                    self.held_partial += size
                    continue
                if j in partial:  # its earlier pods' idle GPU-hours are lost
                    del partial[j]
                    for _, s, tp in held[:-1]:
                        sim.partial_waste += s * (t - tp)
                        self.held_partial -= s
                start[j] = t
                heappush(heap, (t + dur[j], j, 0))
                self.running += 1
            if partial and self.stuck():  # a new deadlock: count it, schedule its break
                if self.deadlocked_since is None:
                    sim.deadlocks += 1
                    self.episode += 1
                    self.deadlocked_since = t
                    heappush(heap, (t + self.timeout, -1, self.episode))
            else:
                self.deadlocked_since = None
        self.ai, self.events = ai, events

    def enqueue(self, j: int, order: int, last: bool = False) -> None:
        """Queue every pod of job ``j`` at its priority (or behind every pod, ``last``)."""
        rank = _LAST if last else -self.prio[j]
        for p in range(len(self.pod_sizes[j])):
            bisect.insort(self.pending, (rank, order, j, p))

    def stuck(self) -> bool:
        """No partly placed job can finish.

        Nothing runs that could free GPUs, or even if every running job ended no partial job
        would find the GPUs it lacks.
        """
        if not self.partial:
            return False
        if self.running == 0:
            return True
        free_for_partial = self.sim.pool.gpus - self.held_partial
        return all(
            self.gpus[j] - sum(size for _, size, _ in self.pods_held[j]) > free_for_partial
            for j in self.partial
        )

    def break_deadlock(self, e: float) -> None:
        """Break a deadlock at ``e``, as an operator or a job controller with a timeout would.

        Release the youngest partial jobs (requeued behind every pending pod) and move the
        oldest one's missing pods to the front, so it is the next job to complete its placement.
        """
        sim, partial, pods_held = self.sim, self.partial, self.pods_held
        while len(partial) > 1 and self.stuck():
            v = max(partial, key=lambda x: (partial[x], x))
            del partial[v]
            for node, size, tp in pods_held[v]:
                sim._give(node, size)
                sim.partial_waste += size * (e - tp)
                self.held_partial -= size
            pods_held[v] = []
            sim.partial_releases += 1
            self.pending[:] = [k for k in self.pending if k[2] != v]  # in place: run() holds it
            self.enqueue(v, self.seq, last=True)
            self.seq += 1
        if partial:
            survivor = min(partial, key=lambda x: (partial[x], x))
            mine = [k for k in self.pending if k[2] == survivor]
            self.pending[:] = [k for k in self.pending if k[2] != survivor]
            self.pending[:0] = [(-_LAST, o, jj, p) for _, o, jj, p in mine]
        self.deadlocked_since = None
