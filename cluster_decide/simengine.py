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
import heapq
import math
import time
from collections.abc import Sequence
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

    # Event loops -----------------------------------------------------------------------

    def run(
        self,
        submit: list[float],
        gpus: list[int],
        dur: list[float],
        prio: list[int],
        service: list[bool],
    ) -> tuple[list[float | None], list[float | None]]:
        """Replay the pool's jobs (sorted by submit time); return first starts and ends."""
        if self.pool.policy == "kubernetes":
            return self._run_pods(submit, gpus, dur, prio)
        return self._run_queue(submit, gpus, dur, prio, service)

    def _run_queue(
        self,
        submit: list[float],
        gpus: list[int],
        dur: list[float],
        prio: list[int],
        service: list[bool],
    ) -> tuple[list[float | None], list[float | None]]:
        """Whole-allocation policies: slurm (EASY backfill), gang (strict FIFO), shared."""
        policy = self.pool.policy
        backfill = policy in ("slurm", "shared")
        preempt = policy == "shared"
        depth = self.opts.backfill_depth
        restart = self.opts.checkpoint_restart_h
        n = len(submit)
        alloc = [self._alloc_size(g) for g in gpus]
        key = [(-math.inf if (preempt and service[j]) else -prio[j], j, j) for j in range(n)]
        remaining = list(dur)
        start: list[float | None] = [None] * n
        end: list[float | None] = [None] * n
        seg_start = [0.0] * n
        epoch = [0] * n
        placed: dict[int, list[int]] = {}
        running: dict[int, float] = {}
        queue: list[tuple[float, int, int]] = []
        heap: list[tuple[float, int, int]] = []
        res_head = -1
        shadow = math.inf
        extra = 0
        ai = 0
        events = 0
        place = self._place
        release = self._release
        heappush, heappop = heapq.heappush, heapq.heappop

        def begin(j: int, t: float, nodes: list[int]) -> None:
            placed[j] = nodes
            if start[j] is None:
                start[j] = t
            seg_start[j] = t
            e = t + remaining[j]
            running[j] = e
            heappush(heap, (e, j, epoch[j]))

        while ai < n or heap:
            t = heap[0][0] if heap else math.inf
            if ai < n and submit[ai] < t:
                t = submit[ai]
            while heap and heap[0][0] <= t:
                e, j, ep = heappop(heap)
                events += 1
                if ep != epoch[j]:
                    continue
                release(placed.pop(j), gpus[j])
                del running[j]
                end[j] = e
                self._account_busy(gpus[j], seg_start[j], e)
            while ai < n and submit[ai] <= t:
                bisect.insort(queue, key[ai])
                ai += 1
                events += 1
            # Start jobs from the head while they fit.
            while queue:
                j = queue[0][2]
                nodes = place(gpus[j])
                if nodes is None and preempt and service[j]:
                    nodes = self._preempt_for(
                        j,
                        t,
                        gpus,
                        alloc,
                        service,
                        placed,
                        running,
                        remaining,
                        seg_start,
                        epoch,
                        key,
                        queue,
                        restart,
                    )
                if nodes is None:
                    break
                del queue[0]
                begin(j, t, nodes)
            if not (backfill and len(queue) > 1 and self.free_total > 0):
                continue
            head = queue[0][2]
            if head != res_head or t >= shadow:
                res_head = head
                shadow, extra = self._shadow(gpus[head], alloc[head], running, placed, gpus)
            i = 1
            while i < len(queue) and i <= depth and self.free_total > 0:
                j = queue[i][2]
                a = alloc[j]
                if a <= self.free_total and (t + remaining[j] <= shadow or a <= extra):
                    nodes = place(gpus[j])
                    if nodes is not None:
                        if t + remaining[j] > shadow:
                            extra -= a
                        del queue[i]
                        begin(j, t, nodes)
                        continue
                i += 1
        self.events = events
        return start, end

    def _shadow(
        self,
        g: int,
        a: int,
        running: dict[int, float],
        placed: dict[int, list[int]],
        gpus: list[int],
    ) -> tuple[float, int]:
        """EASY reservation for a head job of ``g`` GPUs: its start time and spare GPUs.

        Running jobs are released in order of end time on a copy of the node state until
        the head fits; the GPUs free at that moment beyond the head's allocation may be
        used by backfilled jobs that outlive the reservation.
        """
        gpn = self.gpn
        free: dict[int, int] = {}
        whole = len(self.level[gpn])
        need_whole = -(-g // gpn) if g > gpn else 0
        fits_now = any(self.level[k] for k in range(g, gpn + 1)) if g <= gpn else False
        free_total = self.free_total
        if fits_now:
            return math.inf, 0
        order = sorted(running.items(), key=lambda kv: kv[1])
        shadow = math.inf
        for j, e in order:
            if e > shadow:
                break
            gj = gpus[j]
            per_node = gj if gj <= gpn else gpn
            for node in placed[j]:
                f = free.get(node, self.node_free[node]) + per_node
                free[node] = f
                if f == gpn:
                    whole += 1
                if shadow == math.inf and (
                    (g <= gpn and f >= g) or (g > gpn and whole >= need_whole)
                ):
                    shadow = e
            free_total += self._alloc_size(gj)
        return shadow, max(free_total - a, 0)

    def _preempt_for(
        self,
        j: int,
        t: float,
        gpus: list[int],
        alloc: list[int],
        service: list[bool],
        placed: dict[int, list[int]],
        running: dict[int, float],
        remaining: list[float],
        seg_start: list[float],
        epoch: list[int],
        key: list[tuple[float, int, int]],
        queue: list[tuple[float, int, int]],
        restart: float,
    ) -> list[int] | None:
        """Preempt training jobs, most recently started first, until service ``j`` fits.

        Nothing is preempted when even all training GPUs would not make room.
        """
        victims = sorted(
            (v for v in running if not service[v]), key=lambda v: seg_start[v], reverse=True
        )
        if self.free_total + sum(alloc[v] for v in victims) < alloc[j]:
            return None
        for v in victims:
            self._release(placed.pop(v), gpus[v])
            e = running.pop(v)
            epoch[v] += 1
            self._account_busy(gpus[v], seg_start[v], t)
            remaining[v] = e - t + restart
            self.preempt_waste += alloc[v] * restart
            self.preemptions += 1
            bisect.insort(queue, key[v])
            nodes = self._place(gpus[j])
            if nodes is not None:
                return nodes
        return None

    def _run_pods(
        self,
        submit: list[float],
        gpus: list[int],
        dur: list[float],
        prio: list[int],
    ) -> tuple[list[float | None], list[float | None]]:
        """Kubernetes default scheduler: pods placed one at a time, partial jobs hold GPUs."""
        gpn = self.gpn
        timeout = self.opts.deadlock_timeout_h
        n = len(submit)
        start: list[float | None] = [None] * n
        end: list[float | None] = [None] * n
        pod_sizes = [
            [g] if g <= gpn else [gpn] * (g // gpn) + ([g % gpn] if g % gpn else []) for g in gpus
        ]
        # Pods a job holds: (node, gpus, time placed); partial jobs by time of first pod.
        pods_held: list[list[tuple[int, int, float]]] = [[] for _ in range(n)]
        partial: dict[int, float] = {}
        pending: list[tuple[int, int, int, int]] = []
        heap: list[tuple[float, int, int]] = []
        held_partial = 0
        running = 0
        seq = n
        ai = 0
        events = 0
        episode = 0
        deadlocked_since: float | None = None
        heappush, heappop = heapq.heappush, heapq.heappop

        def enqueue(j: int, order: int, last: bool = False) -> None:
            rank = _LAST if last else -prio[j]
            for p in range(len(pod_sizes[j])):
                bisect.insort(pending, (rank, order, j, p))

        def stuck() -> bool:
            # No partly placed job can finish: nothing runs that could free GPUs, or even
            # if every running job ended no partial job would find the GPUs it lacks.
            if not partial:
                return False
            if running == 0:
                return True
            free_for_partial = self.pool.gpus - held_partial
            return all(
                gpus[j] - sum(size for _, size, _ in pods_held[j]) > free_for_partial
                for j in partial
            )

        while ai < n or heap:
            t = heap[0][0] if heap else math.inf
            if ai < n and submit[ai] < t:
                t = submit[ai]
            if deadlocked_since is not None:
                self.deadlock_hours += t - deadlocked_since
                deadlocked_since = t
            while heap and heap[0][0] <= t:
                e, j, ep = heappop(heap)
                events += 1
                if j >= 0:
                    running -= 1
                    for node, size, _ in pods_held[j]:
                        self._give(node, size)
                    pods_held[j] = []
                    end[j] = e
                    began = start[j]
                    self._account_busy(gpus[j], e if began is None else began, e)
                    continue
                if ep != episode or deadlocked_since is None:
                    continue
                # Deadlock breaker: release the youngest partial jobs (requeued behind every
                # pending pod) and move the oldest one's missing pods to the front, so it is
                # the next job to complete its placement.
                while len(partial) > 1 and stuck():
                    v = max(partial, key=lambda x: (partial[x], x))
                    del partial[v]
                    for node, size, tp in pods_held[v]:
                        self._give(node, size)
                        self.partial_waste += size * (e - tp)
                        held_partial -= size
                    pods_held[v] = []
                    self.partial_releases += 1
                    pending = [k for k in pending if k[2] != v]
                    enqueue(v, seq, last=True)
                    seq += 1
                if partial:
                    survivor = min(partial, key=lambda x: (partial[x], x))
                    mine = [k for k in pending if k[2] == survivor]
                    pending = [k for k in pending if k[2] != survivor]
                    pending[:0] = [(-_LAST, o, jj, p) for _, o, jj, p in mine]
                deadlocked_since = None
            while ai < n and submit[ai] <= t:
                enqueue(ai, ai)
                ai += 1
                events += 1
            i = 0
            while i < len(pending) and self.free_total > 0:
                _, _, j, p = pending[i]
                size = pod_sizes[j][p]
                pod_node = self._place_pod(size)
                if pod_node is None:
                    i += 1
                    continue
                del pending[i]
                held = pods_held[j]
                held.append((pod_node, size, t))
                if len(held) < len(pod_sizes[j]):
                    if len(held) == 1:
                        partial[j] = t
                    held_partial += size
                    continue
                if j in partial:
                    del partial[j]
                    for _, s, tp in held[:-1]:
                        self.partial_waste += s * (t - tp)
                        held_partial -= s
                start[j] = t
                heappush(heap, (t + dur[j], j, 0))
                running += 1
            if partial and stuck():
                if deadlocked_since is None:
                    self.deadlocks += 1
                    episode += 1
                    deadlocked_since = t
                    heappush(heap, (t + timeout, -1, episode))
            else:
                deadlocked_since = None
        self.events = events
        return start, end

    def _place_pod(self, size: int) -> int | None:
        """Best-fit one pod of ``size <= gpus_per_node`` GPUs; its node, or None."""
        if size > self.free_total:
            return None
        level = self.level
        for k in range(size, self.gpn + 1):
            if level[k]:
                node = level[k].pop()
                self.node_free[node] = k - size
                level[k - size].add(node)
                self.free_total -= size
                return node
        return None
