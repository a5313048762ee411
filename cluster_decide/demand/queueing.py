"""Queueing mathematics: from a service level to the GPUs that meet it.

Two families of workloads need two families of formulas.

* Real-time inference is a stream of short requests served by GPU slots: the M/M/c queue
  (Erlang C) gives the probability of waiting and the wait distribution, hence the p99
  latency and the smallest number of GPUs that meets a latency SLO.
* Training, fine-tuning, batch inference and pipelines are gang jobs that hold ``g`` GPUs for
  hours: a pool of ``N`` GPUs is a multi-server queue over *job slots*, and the Allen-Cunneen
  G/G/c approximation corrects the M/M/c wait for the variability of job durations.

All functions are pure. Times may be in any unit as long as rates use its inverse (requests
per second with seconds, jobs per hour with hours). The formulas, their sources and their
validity ranges are collected in ``docs/queueing.md``; the simulator in
``cluster_decide.simulation.engine`` checks them.

Sources:
  [GH]  Gross, Shortle, Thompson & Harris, *Fundamentals of Queueing Theory*, 4th ed., Wiley
        2008 (the M/M/c queue; G/G/c approximations).
  [K]   Kleinrock, *Queueing Systems, Vol. 1*, Wiley 1975 (Erlang B and C).
  [AC]  Allen, *Probability, Statistics and Queueing Theory*, 2nd ed., Academic Press 1990,
        (the Allen-Cunneen approximation).
  [W]   Whitt, "Approximations for the GI/G/m queue", Production and Operations Management
        2(2):114-161, 1993 (the correction factor phi, validity, exponential wait tails).
  [KLB] Kraemer & Langenbach-Belz, "Approximate formulae for the delay in the queueing system
        GI/G/1", Proc. 8th International Teletraffic Congress, Melbourne 1976 (the factor g).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import integrate, special

from cluster_decide.base.ranges import WAIT_HOURS

__all__ = [
    "BatchClass",
    "PeriodicWait",
    "WaitEstimate",
    "achievable_utilization",
    "arrival_load_factor",
    "autoscaled_rates",
    "batch_waits",
    "deadline_gpus",
    "deadline_window",
    "erlang_b",
    "erlang_c",
    "gang_slots",
    "latency_quantile",
    "mean_wait_mmc",
    "min_gpus_for_latency",
    "min_gpus_for_wait",
    "min_servers_for_mean_wait",
    "periodic_waits",
    "service_time_exceedance",
    "wait_quantile_mmc",
]


@lru_cache(maxsize=65536)
def erlang_b(servers: int, offered_load: float) -> float:
    """Blocking probability of the M/M/c/c loss system (Erlang B).

    Uses the recursion ``1/B(0) = 1``, ``1/B(k) = 1 + (k/A) / B(k-1)`` in its inverse form,
    which is numerically stable for any number of servers ([K], [GH]). It costs
    O(servers) and never forms ``A^c / c!``; the pooled waits of a large pool ask for the same
    pairs thousands of times, so results are kept.
    """
    if servers < 0:
        raise ValueError(f"servers must be >= 0, got {servers}")
    if offered_load < 0:
        raise ValueError(f"offered_load must be >= 0, got {offered_load}")
    if offered_load == 0:
        return 1.0 if servers == 0 else 0.0
    inv = 1.0
    for k in range(1, servers + 1):
        inv = 1.0 + inv * k / offered_load
        if inv > 1e300:
            return 0.0
    return 1.0 / inv


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability that an arrival waits in the M/M/c queue (Erlang C).

    ``C(c, A) = c B(c, A) / (c - A (1 - B(c, A)))`` with ``B`` the Erlang B blocking
    probability ([GH], [K]). Returns 1.0 when ``A >= c`` (the queue is
    unstable and every arrival eventually waits).
    """
    if servers < 0:
        raise ValueError(f"servers must be >= 0, got {servers}")
    if offered_load < 0:
        raise ValueError(f"offered_load must be >= 0, got {offered_load}")
    if offered_load >= servers:
        return 1.0
    if offered_load == 0:
        return 0.0
    b = erlang_b(servers, offered_load)
    return servers * b / (servers - offered_load * (1.0 - b))


def _erlang_c_vec(servers: np.ndarray, offered_load: float) -> np.ndarray:
    """Erlang C for an array of server counts, all above ``offered_load``.

    Erlang B is the Poisson ratio ``B(c, A) = p(c; A) / P(X <= c)`` with ``X ~ Poisson(A)``
    ([K]); both terms come from vectorized special functions (``gammaln`` for the pmf in
    logs, ``gammaincc`` for the cdf), so a whole search range costs one numpy call. Agrees
    with the recursion in :func:`erlang_b` to ~1e-11 relative (the tests require 1e-9).
    """
    c = servers.astype(float)
    log_pmf = c * math.log(offered_load) - offered_load - special.gammaln(c + 1.0)
    cdf = special.gammaincc(c + 1.0, offered_load)
    b = np.exp(log_pmf) / cdf
    return c * b / (c - offered_load * (1.0 - b))


def wait_quantile_mmc(servers: int, arrival_rate: float, service_time: float, q: float) -> float:
    """The q-quantile of the queue wait in M/M/c.

    ``P(W > t) = C(c, A) exp(-(c mu - lambda) t)`` with ``mu = 1/service_time`` and
    ``A = lambda / mu`` ([GH]), so ``t_q = ln(C / (1 - q)) / (c mu - lambda)`` when
    ``C > 1 - q`` and 0 otherwise. Returns ``inf`` when ``A >= c``.
    """
    _check_q(q)
    if arrival_rate < 0 or service_time <= 0:
        raise ValueError("arrival_rate must be >= 0 and service_time > 0")
    load = arrival_rate * service_time
    if load >= servers:
        return math.inf
    c_prob = erlang_c(servers, load)
    if c_prob <= 1.0 - q:
        return 0.0
    return math.log(c_prob / (1.0 - q)) * service_time / (servers - load)


def mean_wait_mmc(servers: int, offered_load: float, service_time: float) -> float:
    """Mean queue wait in M/M/c: ``C(c, A) * service_time / (c - A)`` ([GH]); ``inf`` if ``A >= c``.

    Used for interactive sessions: ``c`` seats (a user's GPUs each), ``A`` sessions in
    progress on average, ``service_time`` the mean session length.
    """
    if servers < 0 or offered_load < 0 or service_time <= 0:
        raise ValueError("servers and offered_load must be >= 0 and service_time > 0")
    if offered_load == 0:
        return 0.0
    if offered_load >= servers:
        return math.inf
    return erlang_c(servers, offered_load) * service_time / (servers - offered_load)


@lru_cache(maxsize=65536)
def min_servers_for_mean_wait(offered_load: float, service_time: float, max_wait: float) -> int:
    """Smallest ``c`` whose M/M/c mean wait (:func:`mean_wait_mmc`) is at most ``max_wait``.

    The wait falls as servers are added, so the first feasible count above the stability
    bound ``floor(A) + 1`` is the answer; 0 when nothing arrives.
    """
    if offered_load <= 0:
        return 0
    c = math.floor(offered_load) + 1
    while mean_wait_mmc(c, offered_load, service_time) > max_wait:
        c += 1
    return c


def latency_quantile(
    servers: int,
    arrival_rate: float,
    service_time: float,
    q: float = 0.99,
    concurrency: int = 1,
    service_cv: float = 1.0,
) -> float:
    """The design's latency: the q-quantile of the queue wait plus the mean service time.

    ``servers`` GPUs each run ``concurrency`` requests at once, so the queue has
    ``servers * concurrency`` slots, each taking ``service_time`` per request (the service
    time measured at that concurrency). Latency ``= t_q + service_time``; adding the mean
    rather than the quantile of service is the design's convention (``docs/queueing.md``)
    and is exact for deterministic service.

    ``service_cv`` is the coefficient of variation of request times. With ``cv = 1`` (the
    default) ``t_q`` is the exact M/M/c quantile. Otherwise it is the M/G/c approximation of
    Allen-Cunneen applied to the whole conditional wait ([AC], [W]): the wait is exponential
    given that it is positive, with its mean scaled by ``(1 + cv^2) / 2``, so
    ``t_q(M/G/c) = t_q(M/M/c) * (1 + cv^2) / 2``. Long LLM generations (cv above 1) lengthen
    the tail; fixed-length work (cv 0) halves it.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if service_cv < 0:
        raise ValueError(f"service_cv must be >= 0, got {service_cv}")
    wait = wait_quantile_mmc(servers * concurrency, arrival_rate, service_time, q)
    return wait * (1.0 + service_cv**2) / 2.0 + service_time


def service_time_exceedance(service_time: float, service_cv: float, t: float) -> float:
    """Share of requests whose own GPU time exceeds ``t``, queueing aside.

    :func:`latency_quantile` adds the *mean* service time to the queue's quantile, which is
    exact only for fixed-length requests. How far that convention is from a request's real
    tail is this share: the request times taken as a gamma distribution with mean
    ``service_time`` and coefficient of variation ``service_cv`` (exponential at 1, fixed at
    0). Where it is above 1 − q, no number of GPUs brings the q-quantile of the latency a
    request sees (wait plus its own time) under ``t``.
    """
    if service_time <= 0 or service_cv < 0:
        raise ValueError("service_time must be > 0 and service_cv >= 0")
    if service_cv == 0:
        return 1.0 if service_time > t else 0.0
    shape = 1.0 / service_cv**2
    # The gamma survival function as the regularized upper incomplete gamma (as scipy.stats
    # computes it, without building a distribution on each call).
    return float(special.gammaincc(shape, t * shape / service_time))


def min_gpus_for_latency(
    arrival_rate: float,
    service_time: float,
    target: float,
    q: float = 0.99,
    concurrency: int = 1,
    service_cv: float = 1.0,
) -> int:
    """Smallest number of GPUs whose :func:`latency_quantile` is at most ``target``.

    0 when there is no traffic. The latency falls as GPUs are added (Erlang C decreases in
    ``c`` and the decay rate ``c mu - lambda`` grows), so the answer is the first feasible
    count between the stability bound ``floor(A/k) + 1`` and the bound that ignores Erlang C
    (``C <= 1``): ``c k >= A + ln(1/(1-q)) service_time / (target - service_time)``. The
    range is evaluated in one vectorized call (bisection when it is wide) and results are
    cached on inputs rounded to 12 significant digits.
    """
    if arrival_rate < 0 or service_time <= 0:
        raise ValueError("arrival_rate must be >= 0 and service_time > 0")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    _check_q(q)
    if arrival_rate == 0:
        return 0
    if target <= service_time:
        raise ValueError(
            f"latency target {target} is not above the service time {service_time}: no number "
            "of GPUs can meet it (latency = queue wait + service time); raise the target or "
            "shorten the service time"
        )
    return _min_gpus_cached(
        _round12(arrival_rate),
        _round12(service_time),
        _round12(target),
        q,
        concurrency,
        _round12((1.0 + service_cv**2) / 2.0),
    )


def _round12(x: float) -> float:
    return float(f"{x:.12g}")


@lru_cache(maxsize=65536)
def _min_gpus_cached(
    arrival_rate: float,
    service_time: float,
    target: float,
    q: float,
    concurrency: int,
    wait_factor: float = 1.0,
) -> int:
    load = arrival_rate * service_time
    slack = (target - service_time) / wait_factor
    log_tail = math.log(1.0 / (1.0 - q))
    lo = math.floor(load / concurrency) + 1
    hi = max(lo, math.ceil((load + log_tail * service_time / slack) / concurrency) + 1)

    def meets(n: np.ndarray) -> np.ndarray:
        slots = n * concurrency
        c_prob = _erlang_c_vec(slots, load)
        rate = (slots - load) / service_time
        with np.errstate(divide="ignore"):
            wait = np.where(c_prob > 1.0 - q, np.log(c_prob / (1.0 - q)) / rate, 0.0)
        return wait <= slack

    while hi - lo > 2048:
        mid = (lo + hi) // 2
        if meets(np.array([mid]))[0]:
            hi = mid
        else:
            lo = mid + 1
    candidates = np.arange(lo, hi + 1)
    ok = meets(candidates)
    return int(candidates[int(np.argmax(ok))]) if ok.any() else hi


def autoscaled_rates(rates: Sequence[float] | np.ndarray, lag_hours: float) -> np.ndarray:
    """The rate to provision in each hourly bucket when capacity takes ``lag_hours`` to arrive.

    An autoscaler that sees demand rise at hour ``t`` has capacity only at ``t + lag``, so the
    capacity present in bucket ``t`` must already cover the highest rate in the window
    ``[t, t + lag]``: ``r'(t) = max_{0 <= k <= ceil(lag)} r((t + k) mod T)``. The week is
    cyclic (hour 167 is followed by hour 0). ``lag_hours = 0`` returns the profile itself; a
    lag of a whole week or more (a static pool) returns the peak in every bucket.
    """
    r = np.asarray(rates, dtype=float)
    if r.ndim != 1 or r.size == 0:
        raise ValueError("rates must be a non-empty 1-D sequence of hourly rates")
    if lag_hours < 0:
        raise ValueError(f"lag_hours must be >= 0, got {lag_hours}")
    steps = math.ceil(lag_hours)
    if steps >= r.size - 1:
        return np.full_like(r, r.max())
    out = r.copy()
    for k in range(1, steps + 1):
        np.maximum(out, np.roll(r, -k), out=out)
    return out


def arrival_load_factor(
    seen_by: Sequence[float] | np.ndarray,
    profile: Sequence[float] | np.ndarray,
    mean_duration: float,
    duration_scv: float = 1.0,
) -> float:
    """How much busier a class with ``profile`` makes a pool look to arrivals shaped by ``seen_by``.

    The stationary formulas take one arrival rate. A stream that submits mostly in business
    hours meets, on arrival, the work of the hours just before it, not the weekly average: the
    offered load at time ``t`` is ``m(t) = E[S] · E[λ(t − S_e)]`` with ``S_e`` the stationary
    excess of the duration (the infinite-server load of a time-varying Poisson stream, as in
    the modified-offered-load approximation of Jennings, Mandelbaum, Massey & Whitt,
    Management Science 42(10), 1996). Averaged over the arrivals of ``seen_by``, that load is
    the mean load times this factor:
    ``Σ_t a(t) · Σ_k λ(t − k) P(S_e ∈ [k, k+1)) / (Σ_t a(t) · mean λ)`` over the cyclic hours
    (``S_e`` taken exponential with its mean ``D (1 + cs²) / 2``). It is 1 for a flat profile
    or very long jobs, and tends to the peak-to-mean ratio seen by arrivals for short jobs.
    Scale the rate by it before a stationary formula (used on its own ``profile`` as
    ``seen_by`` for a class alone).
    """
    a = np.asarray(seen_by, dtype=float)
    lam = np.asarray(profile, dtype=float)
    if a.shape != lam.shape or a.ndim != 1 or a.size == 0 or a.sum() <= 0 or lam.sum() <= 0:
        raise ValueError("seen_by and profile must be 1-D hourly weights of equal length")
    if mean_duration <= 0 or duration_scv < 0:
        raise ValueError("mean_duration must be > 0 and duration_scv >= 0")
    return _load_factor(
        tuple(np.round(a / a.mean(), 12).tolist()),
        tuple(np.round(lam / lam.mean(), 12).tolist()),
        _round12(mean_duration * (1.0 + duration_scv) / 2.0),
    )


@lru_cache(maxsize=4096)
def _load_factor(seen_by: tuple[float, ...], profile: tuple[float, ...], excess: float) -> float:
    a, lam = np.asarray(seen_by), np.asarray(profile)
    n = lam.size
    lags = np.arange(n)
    # P(S_e in [k, k+1)) for exponential S_e, folded onto the cycle (sums to 1).
    kernel = (
        np.exp(-lags / excess) * (1.0 - math.exp(-1.0 / excess)) / (1.0 - math.exp(-n / excess))
    )
    smoothed = np.real(np.fft.ifft(np.fft.fft(lam) * np.fft.fft(kernel)))
    return float((a * smoothed).sum() / a.sum())


@dataclass(frozen=True)
class BatchClass:
    """A stream of gang jobs: Poisson arrivals, each holding ``gpus`` GPUs for a random time.

    ``arrival_rate`` is in jobs per hour, ``mean_duration`` in hours; ``duration_scv`` is the
    squared coefficient of variation of the duration (1 for exponential, 0 for fixed-length
    jobs, 2-5 for typical HPC job logs).
    """

    arrival_rate: float
    gpus: int
    mean_duration: float
    duration_scv: float = 1.0
    arrival_scv: float = 1.0
    """SCV of the gaps between arrivals: 1 for Poisson, below 1 for planned, regular submissions."""

    def __post_init__(self) -> None:
        if self.arrival_rate < 0 or self.gpus < 1 or self.mean_duration <= 0:
            raise ValueError(
                f"BatchClass needs arrival_rate >= 0, gpus >= 1, mean_duration > 0; got {self}"
            )
        if self.duration_scv < 0 or self.arrival_scv < 0:
            raise ValueError(f"duration_scv and arrival_scv must be >= 0, got {self}")

    @property
    def gpu_load(self) -> float:
        """Offered load in GPUs (busy GPUs on average): ``lambda g D``."""
        return self.arrival_rate * self.gpus * self.mean_duration


@dataclass(frozen=True)
class WaitEstimate:
    """Predicted queue wait of one batch class (hours), with the quantities behind it."""

    mean: float
    quantile: float
    prob_wait: float
    utilization: float
    slots: float


def gang_slots(pool_gpus: int, gpus: int, gpus_per_node: int = 8) -> int:
    """How many jobs of gang size ``gpus`` a pool runs at once, placed on whole nodes.

    A job no larger than a node shares a node with others (``floor(gpn/g)`` per node); a
    larger job takes ``ceil(g/gpn)`` whole nodes, as Slurm ``--exclusive`` multi-node jobs
    and Kubernetes gang pods of one node each do. ``pool_gpus`` is rounded down to nodes.
    """
    if gpus < 1 or gpus_per_node < 1 or pool_gpus < 0:
        raise ValueError("gpus and gpus_per_node must be >= 1 and pool_gpus >= 0")
    nodes = pool_gpus // gpus_per_node
    if gpus <= gpus_per_node:
        return nodes * (gpus_per_node // gpus)
    return nodes // math.ceil(gpus / gpus_per_node)


def batch_waits(
    pool_gpus: int,
    classes: Sequence[BatchClass],
    gpus_per_node: int = 8,
    q: float = 0.95,
    order: Literal["backfill", "fifo"] = "backfill",
) -> list[WaitEstimate]:
    """Mean and q-quantile queue wait of each gang class sharing a pool (hours).

    *One class* (gang ``g``, duration ``D``, rate ``lambda``): the pool is an M/G/c queue
    with ``c = gang_slots(N, g)`` servers and load ``A = lambda D``. The mean wait is the
    Allen-Cunneen approximation ([AC], [GH]) with Whitt's correction factor
    ``phi(rho, ca^2, cs^2, c)`` ([W]):
    ``Wq = phi * (ca^2 + cs^2) / 2 * C(c, A) D / (c - A)``, ``ca^2`` the arrival SCV (1 for
    Poisson, the default), ``cs^2`` the duration SCV. ``phi = 1`` for exponential durations (exact M/M/c); for ``cs^2 > 1``
    it trims the Allen-Cunneen overestimate at light load and many servers. With one slot
    the formula is used with ``phi = 1``, which is the exact Pollaczek-Khinchine M/G/1 wait
    (Whitt's ``phi`` is not 1 there and measured 7% low in the grid).

    *Several classes* (pooled work in own-slot units): class ``k`` sees the pool as
    ``c_k = gang_slots(N, g_k)`` slots of its own size, and every job ``j`` of any class as
    ``g_j D_j / g_k`` slot-hours of work. The pooled stream has rate ``Lambda = sum lambda_j``,
    mean service ``rho c_k / Lambda`` (``rho = sum lambda_j g_j D_j / N``) and the SCV of
    the mixture of ``g_j D_j`` over jobs, to which the formula above is applied. Large gangs
    get few slots and long waits. That is the estimate where every class holds the same
    allocation. Gangs of different sizes take :func:`_size_class_waits` (the largest apart,
    with the drain before it starts; the smaller classes on the nodes it leaves): in place of
    the pooled stream under ``order="backfill"`` (Slurm EASY), the larger of the two under
    ``order="fifo"`` (strict FIFO gang admission), which then gives every class the largest
    wait, since all jobs queue behind the same head (measured in ``docs/queueing.md``).

    The quantile uses the exponential conditional-wait tail ([W]):
    ``P(W > t) = P_w exp(-t P_w / Wq)`` with ``P_w = C(c, A)``. ``inf`` when ``rho >= 1`` or a
    class fits no slot.
    """
    _check_q(q)
    if order not in ("backfill", "fifo"):
        raise ValueError(f"order must be 'backfill' or 'fifo', got {order!r}")
    if not classes:
        return []
    total_load = sum(k.gpu_load for k in classes)
    n_gpus = (pool_gpus // gpus_per_node) * gpus_per_node
    rho = total_load / n_gpus if n_gpus > 0 else math.inf
    if len(classes) == 1:
        k = classes[0]
        slots = gang_slots(pool_gpus, k.gpus, gpus_per_node)
        load = k.arrival_rate * k.mean_duration
        return [_mgc_wait(slots, load, k.mean_duration, k.duration_scv, q, rho, k.arrival_scv)]
    if len({_alloc(k.gpus, gpus_per_node) for k in classes}) > 1:
        split = _size_class_waits(n_gpus, tuple(classes), gpus_per_node, q, order)
        # Backfill: the decomposition replaces the pooled stream. Strict FIFO: the larger of
        # the two, so the drain term only ever adds to what the pooled stream says.
        pooled = (
            split
            if order == "backfill"
            else [
                max(a, b, key=lambda e: e.mean)
                for a, b in zip(
                    _pooled_waits(n_gpus, classes, gpus_per_node, q, rho), split, strict=True
                )
            ]
        )
    else:
        pooled = _pooled_waits(n_gpus, classes, gpus_per_node, q, rho)
    if order == "fifo":
        worst = max(pooled, key=lambda e: e.mean)
        pooled = [worst for _ in classes]
    return pooled


def _pooled_waits(
    n_gpus: int, classes: Sequence[BatchClass], gpus_per_node: int, q: float, rho: float
) -> list[WaitEstimate]:
    """The pooled-stream estimate of :func:`batch_waits` (every job in own-slot units)."""
    total_load = sum(k.gpu_load for k in classes)
    rate = sum(k.arrival_rate for k in classes)
    # Job sizes X_j = g_j D_j (GPU-hours): E[X] and E[X^2] over the pooled job stream.
    m1 = total_load / rate if rate > 0 else 1.0
    m2 = (
        sum(
            k.arrival_rate * (k.gpus * k.mean_duration) ** 2 * (1.0 + k.duration_scv)
            for k in classes
        )
        / rate
        if rate > 0
        else 1.0
    )
    scv = m2 / m1**2 - 1.0
    # Superposed streams: the rate-weighted arrival SCV (a superposition tends to Poisson).
    ca2 = sum(k.arrival_rate * k.arrival_scv for k in classes) / rate if rate > 0 else 1.0
    out = []
    for k in classes:
        slots = gang_slots(n_gpus, k.gpus, gpus_per_node)
        load = rho * slots
        service = load / rate if rate > 0 else 1.0
        out.append(_mgc_wait(slots, load, service, scv, q, rho, ca2))
    return out


FIXED_POINT_ROUNDS = 30
"""Rounds of the drain's fixed point (:func:`_size_class_waits`) before a pool is unstable."""


def _alloc(gpus: int, gpus_per_node: int) -> int:
    """GPUs a gang holds: its own count on one node, whole nodes beyond one."""
    return gpus if gpus <= gpus_per_node else math.ceil(gpus / gpus_per_node) * gpus_per_node


@lru_cache(maxsize=16384)
def _size_class_waits(
    n_gpus: int,
    classes: tuple[BatchClass, ...],
    gpus_per_node: int,
    q: float,
    order: Literal["backfill", "fifo"],
) -> list[WaitEstimate]:
    """Waits of gangs of different sizes, the largest apart from the rest (``docs/queueing.md``).

    *The largest allocation* (``m`` whole nodes a job, ``c_L`` slots) is an M/G/c_L queue of
    its own jobs. A job that finds a slot free (probability ``1 - C(c_L, A_L)``) must first
    wait for the smaller jobs on the nodes it needs to end: the drain, of mean ``E[Δ]``
    (:func:`_drain_moments`). It reserves its slot from then on, so the slot is held for
    the drain and the run: the queue's load is ``A' = A_L + λ_L (1 - C) E[Δ]``, and the wait
    is that queue's plus the job's own drain, ``W_L = W(c_L, A') + (1 - C) E[Δ]`` (the setup
    time of the first job of a busy period, as in Welch's M/G/1 with exceptional first
    service, Operations Research 12(5), 1964, spread over the slots).

    *The smaller classes* are served by the nodes the large jobs leave: with ``i`` large jobs
    holding slots (M/M/c_L's distribution at load ``A'``, ``i = c_L`` with Erlang C's
    probability) they are the same problem on ``N - i m gpn`` GPUs, and their wait is the mean
    over ``i`` (quasi-static: large jobs run much longer than small ones). A state where the
    smaller classes cannot keep up waits at most for one of the ``i`` large jobs to end.

    The drain counts the smaller jobs ahead of a large one, ``sum λ_s W_s`` by Little's law,
    which depend on ``A'``: the fixed point is found by iterating from no queue. Under strict
    FIFO every class waits the common wait, so ``W_s`` is the largest class's.
    """
    gpn = gpus_per_node
    big = max((_alloc(k.gpus, gpn) for k in classes if k.arrival_rate > 0), default=0)
    if big < gpn or n_gpus < big:
        rho = sum(k.gpu_load for k in classes) / n_gpus if n_gpus else math.inf
        return _pooled_waits(n_gpus, classes, gpn, q, rho)
    large = tuple(k for k in classes if _alloc(k.gpus, gpn) == big)
    small = tuple(k for k in classes if _alloc(k.gpus, gpn) < big)
    nodes, m = n_gpus // gpn, big // gpn
    slots = nodes // m
    rate = sum(k.arrival_rate for k in large)
    load = sum(k.arrival_rate * k.mean_duration for k in large)
    second = sum(k.arrival_rate * k.mean_duration**2 * (1.0 + k.duration_scv) for k in large)
    ca2 = sum(k.arrival_rate * k.arrival_scv for k in large) / rate
    service = load / rate
    scv = second / rate / service**2 - 1.0
    residual = service * (1.0 + scv) / 2.0
    fresh = 1.0 - erlang_c(slots, load) if slots > 0 and load < slots else 0.0
    small_rate = sum(k.arrival_rate for k in small)

    def estimate(queued: float) -> tuple[WaitEstimate, list[WaitEstimate]]:
        """The large class's and the smaller classes' waits with ``queued`` smaller jobs ahead."""
        if not queued <= small_rate * WAIT_HOURS.hi or slots < 1:
            # The smaller jobs wait longer on average than any target may allow: the queue is
            # as good as unstable. (Beyond that the drain, which counts the jobs in progress one
            # by one, asked for petabytes where the property test of service levels found
            # classes waiting 10^13 hours on a nearly saturated pool.)
            none = WaitEstimate(math.inf, math.inf, 1.0, 1.0, float(slots))
            return none, [none for _ in small]
        d1, _d2 = _drain_moments(nodes, m, slots, load, small, gpn, queued)
        # A large job holds its slot from its reservation: the drain, then its run.
        held = load + rate * fresh * d1
        own = _mgc_wait(slots, held, held / rate, scv, q, held / slots, ca2)
        extra = fresh * d1
        mean = own.mean + extra
        tail = extra * math.log(1.0 / (1.0 - q))
        big_wait = replace(own, mean=mean, quantile=max(own.quantile + tail, mean))
        return big_wait, _beside_large(nodes, m, slots, held, residual, small, gpn, q, order)

    # The smaller jobs ahead of a large one hold nodes when it reaches the head: those running
    # and, by Little's law, sum λ_s W_s more that waited.
    big_wait, small_waits = estimate(0.0)
    for _ in range(FIXED_POINT_ROUNDS):
        waits = [e.mean for e in small_waits]
        if order == "fifo":
            waits = [max([big_wait.mean, *waits])] * len(small)
        queued = sum(k.arrival_rate * w for k, w in zip(small, waits, strict=True))
        nxt, small_waits = estimate(queued)
        done = not math.isfinite(nxt.mean) or nxt.mean <= big_wait.mean * 1.01
        big_wait = nxt
        if done:
            break
    else:
        big_wait = replace(big_wait, mean=math.inf, quantile=math.inf)
    floor = _lost_slots_wait(nodes, m, slots, load, service, scv, ca2, small, gpn)
    if floor > big_wait.mean:
        big_wait = replace(big_wait, mean=floor, quantile=max(big_wait.quantile, floor))
    # Classes larger still submit nothing (zero rate): the pooled stream speaks for them.
    allocs = [_alloc(k.gpus, gpn) for k in classes]
    rho = sum(k.gpu_load for k in classes) / n_gpus
    larger = _pooled_waits(n_gpus, classes, gpn, q, rho) if max(allocs) > big else []
    it = iter(small_waits)
    return [
        big_wait if a == big else next(it) if a < big else larger[i] for i, a in enumerate(allocs)
    ]


def _lost_slots_wait(
    nodes: int,
    m: int,
    slots: int,
    load: float,
    service: float,
    scv: float,
    ca2: float,
    small: tuple[BatchClass, ...],
    gpn: int,
) -> float:
    """The large class's wait with the slots the smaller classes hold on average taken away.

    The smaller classes keep ``U = sum λ_s D_s a_s / gpn`` nodes busy on average; what does not
    fit in the nodes no large slot uses (``n - c_L m``) is taken from the large slots, so they
    number ``c' = c_L - max(0, U - (n - c_L m)) / m`` on time average. The wait rises by the
    difference of the Allen-Cunneen M/G/c waits at ``c'`` and ``c_L`` servers, with Erlang C
    continued to a fractional number of servers through the incomplete gamma function
    (Jagers & van Doorn, "On the continued Erlang loss function", Operations Research Letters
    5(1), 1986). A floor under the drain's estimate where long drains make the last slot
    unusable most of the time (four 64-GPU slots beside 8-GPU jobs), ``0`` where nothing is lost.
    """
    used = sum(k.arrival_rate * k.mean_duration * _alloc(k.gpus, gpn) for k in small) / gpn
    lost = max(0.0, used - (nodes - slots * m)) / m
    if lost <= 0 or slots < 1 or load >= slots:
        return 0.0
    kept = slots - lost
    if kept <= load:
        return math.inf
    own = _mgc_wait(slots, load, service, scv, q=0.5, rho=load / slots, ca2=ca2).mean

    def ac(c: float) -> float:
        c_prob = float(_erlang_c_vec(np.array([c]), load)[0])
        return (ca2 + scv) / 2.0 * c_prob * service / (c - load)

    return own + max(0.0, ac(kept) - ac(float(slots)))


def _beside_large(
    nodes: int,
    m: int,
    slots: int,
    load: float,
    residual: float,
    small: tuple[BatchClass, ...],
    gpn: int,
    q: float,
    order: Literal["backfill", "fifo"],
) -> list[WaitEstimate]:
    """Waits of the smaller classes, averaged over the number of large jobs running."""
    if not small:
        return []
    if slots < 1 or load >= slots:
        return [WaitEstimate(math.inf, math.inf, 1.0, 1.0, 0.0) for _ in small]
    busy = erlang_c(slots, load)
    probs = [*((1.0 - busy) * _free_slot_states(slots, load)), busy]
    mean = np.zeros(len(small))
    pw = np.zeros(len(small))
    for p, (means, waits) in zip(
        probs, _small_states(nodes, m, slots, residual, small, gpn, q, order), strict=True
    ):
        mean += p * means
        pw += p * waits
    rho = sum(k.gpu_load for k in small) / (nodes * gpn)
    # The quantile of the mixture from its mean and P(wait), with the exponential tail ([W]).
    return [
        WaitEstimate(
            float(a),
            0.0 if c <= 1.0 - q else float(a / c * math.log(c / (1.0 - q))),
            float(c),
            rho,
            float(gang_slots(nodes * gpn, k.gpus, gpn)),
        )
        for a, c, k in zip(mean, pw, small, strict=True)
    ]


@lru_cache(maxsize=4096)
def _small_states(
    nodes: int,
    m: int,
    slots: int,
    residual: float,
    small: tuple[BatchClass, ...],
    gpn: int,
    q: float,
    order: Literal["backfill", "fifo"],
) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The smaller classes' mean waits and P(wait) with ``i = 0..slots`` large jobs running.

    Independent of the large class's load, which only weighs the states: the drain's fixed
    point (:func:`_size_class_waits`) asks for the same states at every round.
    """
    out = []
    before: list[WaitEstimate] = []
    for i in range(slots + 1):
        est = batch_waits((nodes - i * m) * gpn, small, gpn, q, order)
        if i > 0:
            # Cannot keep up with i large jobs running: wait for one of them to end.
            est = [
                e
                if e.mean <= residual / i + b.mean
                else replace(
                    e, mean=residual / i + b.mean, quantile=max(b.quantile, residual / i + b.mean)
                )
                for e, b in zip(est, before, strict=True)
            ]
        before = est
        out.append((np.array([e.mean for e in est]), np.array([e.prob_wait for e in est])))
    return tuple(out)


def _free_slot_states(slots: int, load: float) -> np.ndarray:
    """P(i of ``slots`` busy | one is free) in M/M/c, ``i = 0..slots-1``: Poisson(A) truncated."""
    i = np.arange(slots)
    log_w = (
        i * math.log(load) - special.gammaln(i + 1.0)
        if load > 0
        else np.where(i == 0, 0.0, -np.inf)
    )
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def _drain_moments(
    nodes: int,
    m: int,
    slots: int,
    load: float,
    small: tuple[BatchClass, ...],
    gpn: int,
    queued: float = 0.0,
) -> tuple[float, float]:
    """First two moments of the drain: hours until ``m`` whole nodes are free for a large job.

    When a large job may start (a slot is free: ``i < c_L`` others run, M/M/c_L's distribution
    given a free slot), the smaller classes' jobs in progress are ``J ~ Poisson(sum λ_s D_s +
    queued)`` (the M/G/∞ count, plus the jobs queued ahead of it under strict FIFO). Best fit
    packs them: ``k = gpn // g`` to a node, or ``w`` whole nodes each beyond a node (``g`` the
    running-work-weighted gang). So ``ceil(J / k)`` groups of ``w`` nodes are held, and
    ``r`` groups must clear before ``m`` nodes are free. A group clears when its last job
    ends; each job ends after its residual life, exponential with the equilibrium-excess mean
    ``μ_e = E[D²] / (2 E[D])``, so a group's clearing time has the CDF
    ``F(t) = (1 - exp(-t/μ_e))^k``. The drain is the ``r``-th order statistic of the groups'
    clearing times: ``P(T > t) = P(Binomial(n, F(t)) < r)``, integrated numerically.
    """
    jobs = sum(k.arrival_rate * k.mean_duration for k in small) + queued
    if jobs <= 0 or slots < 1:
        return 0.0, 0.0
    running = sum(k.arrival_rate * k.mean_duration for k in small)
    gang = sum(k.arrival_rate * k.mean_duration * k.gpus for k in small) / running
    per_node = max(1, gpn // max(1, round(gang)))
    width = max(1, math.ceil(gang / gpn))
    excess = sum(k.arrival_rate * k.mean_duration**2 * (1.0 + k.duration_scv) for k in small) / (
        2.0 * running
    )
    others = _free_slot_states(slots, load)
    top = int(jobs + 10.0 * math.sqrt(jobs) + 20)
    count = np.arange(top + 1)
    pmf = np.exp(count * math.log(jobs) - jobs - special.gammaln(count + 1.0))
    # Clearing times on a grid out to where the last of all jobs has surely ended.
    t = np.linspace(0.0, excess * (math.log(top + 1.0) + 12.0), 241)
    survive = 1.0 - (1.0 - np.exp(-t / excess)) ** per_node
    # Many (others running, jobs in progress) states share (groups held, groups to clear): their
    # probabilities are summed per pair, state by state in order.
    held, clear, prob = [], [], []
    likely = pmf > 1e-12
    for i, p_i in enumerate(others):
        if p_i < 1e-9:
            continue
        room = (nodes - i * m) // width
        groups = np.minimum(np.ceil(count / per_node), room).astype(int)
        need = np.maximum(0, math.ceil(m / width) - (room - groups))
        keep = (need > 0) & likely
        held.append(groups[keep])
        clear.append(need[keep])
        prob.append(p_i * pmf[keep])
    to_clear = np.concatenate(clear) if clear else np.empty(0, dtype=int)
    if not to_clear.size:
        return 0.0, 0.0
    radix = int(to_clear.max()) + 1  # one integer per (groups held, groups to clear) pair
    keys, at = np.unique(np.concatenate(held) * radix + to_clear, return_inverse=True)
    w = np.zeros(len(keys))
    np.add.at(w, at, np.concatenate(prob))
    pairs = np.stack(np.divmod(keys, radix), axis=1).astype(float)
    # P(fewer than r of n groups cleared by t) = I_{1-F(t)}(n - r + 1, r).
    tail = special.betainc(pairs[:, :1] - pairs[:, 1:] + 1, pairs[:, 1:], survive[None, :])
    d1 = float(w @ integrate.trapezoid(tail, t, axis=1))
    d2 = float(w @ integrate.trapezoid(2.0 * tail * t[None, :], t, axis=1))
    return d1, d2


def _mgc_wait(
    slots: int, load: float, service: float, scv: float, q: float, rho: float, ca2: float = 1.0
) -> WaitEstimate:
    """Allen-Cunneen M/G/c wait with Whitt's correction and an exponential tail."""
    if slots < 1 or load >= slots or rho >= 1.0:
        return WaitEstimate(math.inf, math.inf, 1.0, rho, float(slots))
    if load == 0:
        return WaitEstimate(0.0, 0.0, 0.0, rho, float(slots))
    p_wait = erlang_c(slots, load)
    # One slot: Pollaczek-Khinchine is exact for M/G/1; other arrival SCVs take the GI/G/1
    # correction of Kraemer & Langenbach-Belz ([KLB]), which is 1 for Poisson arrivals.
    phi = _klb_g(load, ca2, scv) if slots == 1 else _whitt_phi(load / slots, slots, ca2, scv)
    factor = phi * (ca2 + scv) / 2.0
    mean = factor * p_wait * service / (slots - load)
    quantile = 0.0 if p_wait <= 1.0 - q else mean / p_wait * math.log(p_wait / (1.0 - q))
    return WaitEstimate(mean, quantile, p_wait, rho, float(slots))


def _klb_g(rho: float, ca2: float, cs2: float) -> float:
    """Kraemer & Langenbach-Belz's factor ``g`` to the Allen-Cunneen GI/G/1 wait ([KLB]).

    ``g = exp(-2 (1 - rho) (1 - ca²)² / (3 rho (ca² + cs²)))`` for ``ca² < 1`` (regular
    arrivals wait less than heavy traffic says at moderate load) and
    ``g = exp(-(1 - rho) (ca² - 1) / (ca² + 4 cs²))`` for ``ca² >= 1``; ``g = 1`` for Poisson.
    """
    if ca2 == 1.0 or rho <= 0.0 or ca2 + cs2 <= 0.0:
        return 1.0
    if ca2 < 1.0:
        return math.exp(-2.0 * (1.0 - rho) * (1.0 - ca2) ** 2 / (3.0 * rho * (ca2 + cs2)))
    return math.exp(-(1.0 - rho) * (ca2 - 1.0) / (ca2 + 4.0 * cs2))


def _whitt_phi(rho: float, servers: int, ca2: float, cs2: float) -> float:
    """Whitt's correction ``phi`` to the Allen-Cunneen GI/G/m wait ([W])."""
    m = servers
    gamma = min(0.24, (1.0 - rho) * (m - 1) * (math.sqrt(4.0 + 5.0 * m) - 2.0) / (16.0 * m * rho))
    phi1 = 1.0 + gamma
    phi3 = (1.0 - 4.0 * gamma) * math.exp(-2.0 * (1.0 - rho) / (3.0 * rho))
    phi4 = min(1.0, (phi1 + phi3) / 2.0)
    scv = (ca2 + cs2) / 2.0
    psi = 1.0 if scv >= 1.0 else phi4 ** (2.0 * (1.0 - scv))
    if ca2 == cs2:
        return psi
    if ca2 > cs2:
        d = 4.0 * ca2 - 3.0 * cs2
        return 4.0 * (ca2 - cs2) / d * phi1 + cs2 / d * psi
    d = 2.0 * (ca2 + cs2)
    return (cs2 - ca2) / d * phi3 + (cs2 + 3.0 * ca2) / d * psi


def min_gpus_for_wait(
    classes: Sequence[BatchClass],
    max_wait: float,
    gpus_per_node: int = 8,
    q: float | None = None,
    order: Literal["backfill", "fifo"] = "backfill",
) -> int:
    """Smallest pool, in whole nodes of ``gpus_per_node``, whose waits all meet ``max_wait``.

    The statistic is the mean wait of every class (``q=None``) or its q-quantile, under the
    queue ``order`` of :func:`batch_waits`. Waits fall as nodes are added, so the answer is
    found by doubling from the stability bound (``sum lambda g D`` and the largest gang),
    then bisection. Returns GPUs (a multiple of ``gpus_per_node``); 0 when nothing arrives.
    """
    if max_wait < 0:
        raise ValueError(f"max_wait must be >= 0, got {max_wait}")
    if not classes or all(k.arrival_rate == 0 for k in classes):
        return 0
    total_load = sum(k.gpu_load for k in classes)
    min_nodes = max(
        math.floor(total_load / gpus_per_node) + 1,
        max(math.ceil(k.gpus / gpus_per_node) for k in classes),
    )

    def meets(nodes: int) -> bool:
        est = batch_waits(nodes * gpus_per_node, classes, gpus_per_node, q or 0.95, order)
        return all((e.mean if q is None else e.quantile) <= max_wait for e in est)

    lo, hi = min_nodes, min_nodes
    while not meets(hi):
        lo, hi = hi + 1, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi * gpus_per_node


def deadline_gpus(
    other_gpus: Sequence[float] | np.ndarray,
    deadline_gpu_hours: Sequence[float] | np.ndarray,
    max_completion_hours: float,
) -> float:
    """Smallest flat capacity (GPUs) that serves other classes and meets a deadline class.

    ``other_gpus[t]`` is the GPU demand of the pool's other classes in hourly bucket ``t`` of
    a cyclic period (a week); ``deadline_gpu_hours[t]`` is the deadline work submitted in
    bucket ``t``, which must be done within ``H = max_completion_hours``, i.e. in buckets
    ``t .. t + floor(H) - 1``. Deadline work may run in any bucket of its window, so it fills
    the troughs the other classes leave. Work is treated as fluid (divisible across hours
    and GPUs) and scheduled earliest deadline first, which is optimal for one fluid resource
    (Horn, "Some simple scheduling algorithms", Naval Res. Logist. Q. 21, 1974). The fluid
    view ignores gang granularity and job length, so it is optimistic when jobs are long
    compared with ``H``; pair it with :func:`batch_waits` for the queueing delay. The result
    is found by bisection to 0.01 GPU between the other classes' peak and that peak plus the
    largest hourly deadline work.
    """
    other = np.asarray(other_gpus, dtype=float)
    work = np.asarray(deadline_gpu_hours, dtype=float)
    if other.shape != work.shape or other.ndim != 1 or other.size == 0:
        raise ValueError("other_gpus and deadline_gpu_hours must be 1-D of equal, non-zero length")
    if max_completion_hours < 1:
        raise ValueError(
            f"max_completion_hours must be at least one hourly bucket, got {max_completion_hours}"
        )
    window = min(math.floor(max_completion_hours), other.size)
    lo = float(other.max())
    hi = lo + float(work.max())
    if _edf_feasible(other, work, window, lo):
        return lo
    while hi - lo > 0.01:
        mid = 0.5 * (lo + hi)
        if _edf_feasible(other, work, window, mid):
            hi = mid
        else:
            lo = mid
    return hi


def deadline_window(
    free_gpus: Sequence[float] | np.ndarray, work: Sequence[float] | np.ndarray
) -> float:
    """Shortest window (whole hours) in which fluid EDF finishes every hour's deadline work.

    ``free_gpus[t]`` is what the pool has left for the class in hourly bucket ``t`` of a cyclic
    week, ``work[t]`` the GPU-hours it submits then. The answer is the smallest ``H`` for which
    no work submitted in ``t`` is still unfinished at ``t + H`` (``inf`` when the free capacity
    cannot carry the work at all). It predicts a deadline class's completion time on a plan,
    the converse of :func:`deadline_gpus`.
    """
    free = np.asarray(free_gpus, dtype=float)
    load = np.asarray(work, dtype=float)
    if free.shape != load.shape or free.ndim != 1 or free.size == 0:
        raise ValueError("free_gpus and work must be 1-D of equal, non-zero length")
    return _deadline_window(free.tobytes(), load.tobytes())


@lru_cache(maxsize=4096)
def _deadline_window(free_bytes: bytes, work_bytes: bytes) -> float:
    """:func:`deadline_window` of the arrays these bytes hold, remembered.

    A solve asks for the same pool's window many times (every candidate of the warm start,
    every round of service-level cuts, every redraw of a slider back to a value seen before),
    and each answer is a binary search over O(n^2) array checks; the answer depends only on
    the two arrays, so it is kept (about 2.7 kB a week-long entry, 11 MB at most).
    """
    free = np.frombuffer(free_bytes, dtype=float)
    load = np.frombuffer(work_bytes, dtype=float)
    if load.sum() > np.maximum(free, 0).sum() + 1e-9:
        return math.inf
    lo, hi = 1, free.size
    if not _edf_feasible(-free, load, hi, 0.0):
        return math.inf
    while lo < hi:
        mid = (lo + hi) // 2
        if _edf_feasible(-free, load, mid, 0.0):
            hi = mid
        else:
            lo = mid + 1
    return float(lo)


def _edf_feasible(other: np.ndarray, work: np.ndarray, window: int, capacity: float) -> bool:
    """Whether fluid EDF meets every deadline in the cyclic steady state (Horn's condition).

    Work submitted in bucket ``t`` is due at the end of bucket ``t + window - 1``. One
    resource with free capacity ``f_t = max(capacity - other_t, 0)`` serves it all iff, for
    every run of ``m`` consecutive submission buckets starting at ``s``, the work submitted in
    it fits the free capacity from ``s`` to its last deadline,
    ``sum_{t=s}^{s+m-1} work_t <= sum_{t=s}^{s+m+window-2} f_t``, and over a whole period the
    work fits at all (otherwise a backlog grows lap after lap). Exact for fluid work, and
    vectorized over ``s``: O(n^2) array operations for a period of ``n`` buckets.
    """
    n = other.size
    free = np.maximum(capacity - other, 0.0)
    if work.sum() > free.sum() + 1e-9:
        return False
    laps = 2 + (window + n - 1) // n
    cum_work = np.concatenate([[0.0], np.cumsum(np.tile(work, laps))])
    cum_free = np.concatenate([[0.0], np.cumsum(np.tile(free, laps))])
    # Every start s (rows) and run length m (columns) at once: one n x n comparison.
    starts = np.arange(n)[:, None]
    runs = np.arange(1, n + 1)[None, :]
    submitted = cum_work[starts + runs] - cum_work[starts]
    available = cum_free[starts + runs + window - 1] - cum_free[starts]
    return not bool(np.any(submitted > available + 1e-9))


def achievable_utilization(
    gang_sizes: Sequence[int],
    work_shares: Sequence[float],
    pool_gpus: int,
    gpus_per_node: int = 8,
) -> float:
    """The GPU utilization a saturated pool can reach for a mix of gang sizes (0-1).

    Packing on whole nodes: a gang of ``g`` GPUs alone fills ``e_g = g gang_slots(N, g) / N``
    of the pool (a 3-GPU job leaves 2 of 8 GPUs of a node idle, a 12-GPU job takes two whole
    8-GPU nodes), so each GPU-hour of its work holds ``1 / e_g`` GPU-hours of capacity and a
    mix with work shares ``w_g`` reaches ``1 / sum_g (w_g / e_g)``. This is what EASY backfill
    achieves at saturation: the simulator measures 97-100% of it for mixes of 1-64 GPU gangs
    on 256-1024 GPUs (``docs/queueing.md``). Strict FIFO gang admission loses more to
    head-of-line blocking, and the loss depends on how long whole nodes take to drain (78%
    measured for equal work of 1- and 64-GPU jobs on 256 GPUs, 98% for 8- and 64-GPU jobs);
    no closed form is offered for it: simulate the mix with ``simengine`` policy ``gang``.
    """
    if len(gang_sizes) != len(work_shares) or not gang_sizes:
        raise ValueError("gang_sizes and work_shares must be non-empty and of equal length")
    total = float(sum(work_shares))
    if total <= 0 or any(w < 0 for w in work_shares):
        raise ValueError("work_shares must be non-negative with a positive sum")
    n_gpus = (pool_gpus // gpus_per_node) * gpus_per_node
    held = 0.0
    for g, w in zip(gang_sizes, work_shares, strict=True):
        if w == 0:
            continue
        fill = g * gang_slots(n_gpus, g, gpus_per_node) / n_gpus if n_gpus else 0.0
        if fill == 0:
            return 0.0
        held += (w / total) / fill
    return 1.0 / held


def _check_q(q: float) -> None:
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile q must be in (0, 1), got {q}")


@dataclass(frozen=True)
class PeriodicWait:
    """Waits of a job stream on capacity that repeats every week (hours)."""

    first_start: float
    """Mean wait from submission to the job's first start (what a queue-wait target bounds)."""
    delay: float
    """Mean time a job spends not running before it completes: the first wait plus the time it
    waits again after each preemption (completion = run time + delay)."""


NEGLIGIBLE_WAIT_HOURS = 1e-9
"""A periodic wait bounded below this (3.6 µs) is given as its bound, not stepped week by week:
a light load on many slots, where the steps cost most (a second or more on a large estate)."""
NEGLIGIBLE_TAIL = 1e-30
"""Probability of the states a periodic queue is not stepped through (see :func:`periodic_waits`)."""
MAX_PERIODS = 60
"""Weeks iterated at most to reach the repeating state (an emptying queue needs a few)."""
DIRECT_STATES = 160
"""A periodic queue of at most this many states gets its repeating state solved for directly
(:func:`_repeating_state`), not by stepping weeks until it repeats (see :func:`periodic_waits`).

Solving costs a matrix product per run of equal slots in the week: 3 ms at 50 states, up to 80
ms at 160 with slots that change every hour, where stepping a queue that repeats within a few
weeks costs 20–35 ms. Stepping first and solving only where a queue had not repeated after 2, 4
or 8 weeks was measured too, on the queues three estates' solves ask for (the hospital at 1.3×
demand, 30 train-and-serve uncertainty samples, a 200-class estate): 0.24, 0.91 and 1.89 s
solved directly, 0.51–1.30, 2.17–2.93 and 1.80–1.91 s stepped first, 2.25, 5.85 and 1.86 s
stepped to the end as before. Most queues of a trough are small and slow to repeat."""
KEPT_STEP_VALUES = 1_000_000
"""Probabilities of a periodic queue's whole week of steps kept at most (8 MB); a longer week
keeps each hour's first step only and recomputes the others (see :func:`periodic_waits`)."""


@lru_cache(maxsize=256)
def periodic_waits(rate: float, mean_duration: float, slots: tuple[int, ...]) -> PeriodicWait:
    """Waits of Poisson jobs on ``slots[t]`` servers in hour ``t`` of a repeating period.

    The periodic M/M/c(t) queue with preemptive resume: when the slots fall below the jobs
    running, the most recent are pushed out and wait, ahead of later arrivals (FIFO by
    submission), for a slot to free. The number of jobs ``N`` is a birth-death chain with
    birth rate ``rate`` and death rate ``min(N, c(t)) / mean_duration``; it is stepped with
    uniformization over the period until its distribution repeats. ``delay`` is Little's law
    on the jobs not running, ``E[(N − c(t))+]``, over the arrival rate. ``first_start`` follows
    a tagged job: arriving at ``u`` behind ``n`` jobs (PASTA), it starts once fewer than
    ``c`` of those are left, and they leave at ``min(n, c(t)) / mean_duration``; its mean
    time to start is found by the same steps backwards. Durations are taken as exponential
    (the chain needs it); capacity that swings by the hour dominates the wait, which is what
    the replay in ``docs/queueing.md`` measures. Infinite when the period's slots cannot carry
    the load.

    Never fewer than ``c_min`` slots, the chain holds no more jobs than an M/M/c_min queue of
    the same load (its departures are never slower), so that queue bounds both waits: where
    the bound is below :data:`NEGLIGIBLE_WAIT_HOURS` it is the answer, and the chain is
    stepped only through the states that bound leaves more than :data:`NEGLIGIBLE_TAIL` of
    probability (a light load on a large pool: seconds of steps on a large estate).
    """
    c = np.asarray(slots, dtype=np.int64)
    hours = c.size
    if rate <= 0:
        return PeriodicWait(0.0, 0.0)
    if rate * mean_duration >= c.mean() - 1e-9:
        return PeriodicWait(math.inf, math.inf)
    size = int(c.max()) + math.ceil(rate * hours) + 40
    fewest, load = int(c.min()), rate * mean_duration
    if load < fewest:
        # Never fewer than ``fewest`` slots: the M/M/c queue on that many bounds both waits
        # (the chain's departures are never slower, so it never holds more jobs), and holds
        # ``c + k`` jobs or more with probability under ``(A/c)^k``: states beyond that tail
        # carry nothing the waits can show.
        bound = erlang_c(fewest, load) * mean_duration / (fewest - load)
        if bound < NEGLIGIBLE_WAIT_HOURS:
            return PeriodicWait(bound, bound)
        tail = math.ceil(math.log(NEGLIGIBLE_TAIL) / math.log(load / fewest))
        size = min(size, max(int(c.max()), fewest + tail) + 40)
    mu = 1.0 / mean_duration
    steps = max(1, math.ceil((rate + mu * int(c.max())) / 0.5))
    dt = 1.0 / steps
    n = np.arange(size)
    ks = sorted(set(c.tolist()))
    leave = {k: mu * np.minimum(n, k) * dt for k in ks}
    # Per slot count, what every step reuses (the same arithmetic as written out in full).
    stay = {k: 1.0 - rate * dt - leave[k] for k in ks}
    keep = {k: 1.0 - leave[k][1:] for k in ks}
    idle = {k: n < k for k in ks}
    buf = np.empty(size - 1)

    def forward(p: np.ndarray, k: int, nxt: np.ndarray) -> None:
        """One step of the distribution of the number of jobs, ``k`` slots, into ``nxt``."""
        np.multiply(p, stay[k], out=nxt)
        np.multiply(p[:-1], rate, out=buf)
        np.multiply(buf, dt, out=buf)
        nxt[1:] += buf
        np.multiply(p[1:], leave[k][1:], out=buf)
        nxt[:-1] += buf
        nxt[-1] += p[-1] * rate * dt  # truncation: the last state keeps its arrivals

    def backward(e: np.ndarray, k: int, nxt: np.ndarray) -> None:
        """One step back of the expected time to start with ``n`` jobs ahead, into ``nxt``."""
        np.multiply(leave[k][1:], e[:-1], out=nxt[1:])
        np.multiply(keep[k], e[1:], out=buf)
        nxt[1:] += buf
        nxt[0] = e[0]
        nxt += dt
        nxt[idle[k]] = 0.0

    # Forwards, hour by hour, until the distribution at the week's start repeats. Each hour's
    # first distribution is kept (``starts``); so is every step of the week when that is small,
    # else an hour's steps are recomputed from its first when the backward pass needs them, bit
    # for bit the same (a week of every step was hundreds of MB for a pool whose slots fall to
    # zero, and seconds of memory traffic).
    starts = np.empty((hours, size))
    kept = hours * steps * size <= KEPT_STEP_VALUES
    rows = np.empty((hours if kept else 1, steps, size))

    def hour(h: int, again: bool = False) -> np.ndarray:
        """The distributions at each step of hour ``h``, from ``starts[h]``."""
        here = rows[h if kept else 0]
        if again and kept:
            return here
        here[0] = starts[h]
        for j in range(steps - 1):
            forward(here[j], int(c[h]), here[j + 1])
        return here

    p, ahead = np.zeros(size), np.zeros(size)
    p[0] = 1.0
    periods = MAX_PERIODS
    if size <= DIRECT_STATES:
        # The week's repeating distribution and expected times, solved for: one week from them
        # is the answer (a heavily loaded queue is still far from repeating after 60 weeks).
        p, ahead = _repeating_state(c, steps, rate * dt, leave, stay, idle, dt)
        periods = 1
    queued = 0.0  # Σ over the week's steps of E[(N − c)+], summed hour by hour if not kept
    for _ in range(periods):
        week_start = p.copy()
        queued = 0.0
        for h in range(hours):
            starts[h] = p
            here = hour(h)
            if not kept:
                queued += float(here.sum(axis=0) @ np.maximum(n - c[h], 0))
            forward(here[-1], int(c[h]), p)
        if np.abs(p - week_start).sum() < 1e-9:
            break
    if kept:
        waiting = np.maximum(n[None, :] - np.repeat(c, steps)[:, None], 0)
        queued = float((rows.reshape(hours * steps, size) * waiting).sum())
    delay = queued * dt / (rate * hours)
    # Backwards likewise; arrivals see the last week's steps (PASTA) and wait ``ahead`` for
    # their start.
    spare = np.empty(size)
    first = 0.0
    for _ in range(periods):
        before = ahead.copy()
        acc = 0.0
        for h in reversed(range(hours)):
            here = hour(h, again=True)
            for j in reversed(range(steps)):
                backward(ahead, int(c[h]), spare)
                ahead, spare = spare, ahead
                acc += float(np.dot(here[j], ahead))
        first = acc * dt / hours
        if np.abs(ahead - before).max() < 1e-6:
            break
    return PeriodicWait(first, max(delay, first))


def _repeating_state(
    c: np.ndarray,
    steps: int,
    arrive: float,
    leave: dict[int, np.ndarray],
    stay: dict[int, np.ndarray],
    idle: dict[int, np.ndarray],
    dt: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The week's repeating state: the distribution and the expected times to start it returns to.

    The distribution is the one at the week's start that a week of steps gives back; the times
    are those at the week's end that a week of steps back gives back. The steps of
    :func:`periodic_waits` as matrices, one per slot count (``forward``: arrivals up, departures
    down, the last state keeping its arrivals; ``backward``: affine, so one more row and column
    carry its constant ``dt``), raised to an hour's steps and multiplied over the week's runs of
    equal slots. The distribution is the week's stationary one (its equation with
    the probabilities summing to one in place of one row); the times are the fixed point of the
    week's affine map. Stepping weeks from an empty queue reaches the same two only as fast as
    the queue forgets its start: 40-hour jobs at a load of 2.3 on 2 slots by day and 3 by night
    had not in 60 weeks, and their wait came out 169.2 h against the repeating week's 174.1 h.
    """
    size = stay[int(c[0])].size
    down = np.arange(size - 1)
    forward: dict[int, np.ndarray] = {}
    backward: dict[int, np.ndarray] = {}
    for k in sorted(set(c.tolist())):
        one = np.diag(stay[k])
        one[down + 1, down] += arrive
        one[down, down + 1] += leave[k][1:]
        one[-1, -1] += arrive
        forward[k] = np.linalg.matrix_power(one, steps)
        back = np.zeros((size + 1, size + 1))
        back[0, 0] = 1.0
        back[down + 1, down] = leave[k][1:]
        back[down + 1, down + 1] = 1.0 - leave[k][1:]
        back[:size, size] = dt
        back[size, size] = 1.0
        back[:size][idle[k]] = 0.0
        backward[k] = np.linalg.matrix_power(back, steps)
    runs: list[list[int]] = []  # [slots, hours] in the week's order
    for k in c.tolist():
        if runs and runs[-1][0] == k:
            runs[-1][1] += 1
        else:
            runs.append([k, 1])
    week, back_week = np.eye(size), np.eye(size + 1)
    for k, n in runs:
        week = np.linalg.matrix_power(forward[k], n) @ week
    for k, n in reversed(runs):  # backwards: the week's last hour first
        back_week = np.linalg.matrix_power(backward[k], n) @ back_week
    repeat = week - np.eye(size)
    repeat[-1] = 1.0
    start = np.zeros(size)
    start[-1] = 1.0
    p = np.linalg.solve(repeat, start)
    ahead = np.linalg.solve(np.eye(size) - back_week[:size, :size], back_week[:size, size])
    return p, ahead
