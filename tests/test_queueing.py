"""Tests of the queueing formulas: published values, exact arithmetic, invariants, simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cluster_decide.demand import queueing as q
from cluster_decide.simulation import engine as se


def erlang_c_exact(c: int, a: Fraction) -> Fraction:
    """Erlang C by its defining sum in exact rational arithmetic ([GH])."""
    top = a**c / math.factorial(c) * Fraction(c) / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def erlang_b_exact(c: int, a: Fraction) -> Fraction:
    return (a**c / math.factorial(c)) / sum(a**k / math.factorial(k) for k in range(c + 1))


def sig4(x: float) -> str:
    return f"{x:.4g}"


# Published cases. The 4-significant-figure literals are derived here in exact rational
# arithmetic from the defining sums, independently of the code under test; the sources give
# the cases (and, where noted, their rounded results).
# - Wolfram Language reference, ErlangC, basic example: c = 3, a = 2 (exactly 4/9).
# - Call Centre Helper, "Erlang C Formula - Made Simple with an Easy Worked Example":
#   100 calls per 30 minutes, 180 s handling time (A = 10 Erlangs), 14 agents, 20 s target.
# - M/M/2 at rho = 1/2 (Kleinrock vol. 1; [GH]): P(wait) = 2 rho^2 / (1 + rho).
# - Erlang B, 10 circuits and 5 Erlangs: 0.01838 in standard Erlang B tables.
ERLANG_C_CASES = [
    (3, Fraction(2), "0.4444"),
    (14, Fraction(10), "0.1741"),
    (2, Fraction(1), "0.3333"),
]


@pytest.mark.parametrize(("c", "a", "published"), ERLANG_C_CASES)
def test_erlang_c_matches_published_values(c: int, a: Fraction, published: str) -> None:
    assert sig4(float(erlang_c_exact(c, a))) == published
    assert sig4(q.erlang_c(c, float(a))) == published


def test_erlang_b_matches_table_and_exact_sum() -> None:
    assert sig4(float(erlang_b_exact(10, Fraction(5)))) == "0.01838"
    assert sig4(q.erlang_b(10, 5.0)) == "0.01838"
    for c, a in [(1, Fraction(1)), (7, Fraction(9, 2)), (40, Fraction(30))]:
        assert q.erlang_b(c, float(a)) == pytest.approx(float(erlang_b_exact(c, a)), rel=1e-12)


def test_call_centre_service_level_and_wait_percentile() -> None:
    # Share answered within 20 s: 1 - C exp(-(c - A) t / AHT).
    c, a, aht = 14, 10.0, 180.0
    rate = a / aht
    exact = 1 - float(erlang_c_exact(c, Fraction(10))) * math.exp(-(c - a) * 20 / aht)
    assert sig4(exact) == "0.8884"
    # The 88.84% quantile of the wait is therefore 20 s.
    assert q.wait_quantile_mmc(c, rate, aht, exact) == pytest.approx(20.0, rel=1e-9)
    # Below the probability of not waiting, the quantile is zero.
    assert q.wait_quantile_mmc(c, rate, aht, 0.5) == 0.0


def test_erlang_functions_are_stable_for_thousands_of_servers() -> None:
    b = q.erlang_b(5000, 4900.0)
    c = q.erlang_c(5000, 4900.0)
    assert 0.0 < b < c < 1.0
    for load, slots in ((10.0, np.arange(11, 60)), (4900.0, np.arange(4901, 5100))):
        vec = q._erlang_c_vec(slots, load)
        ref = np.array([q.erlang_c(int(s), load) for s in slots])
        np.testing.assert_allclose(vec, ref, rtol=1e-9)
    assert q.erlang_c(100, 100.0) == 1.0
    assert q.erlang_c(100, 150.0) == 1.0
    assert q.erlang_c(10, 0.0) == 0.0


def test_unstable_queue_has_infinite_wait() -> None:
    assert q.wait_quantile_mmc(10, 20.0, 0.5, 0.99) == math.inf
    assert q.latency_quantile(2, 20.0, 0.25, 0.99, concurrency=2) == math.inf


def test_latency_adds_service_time_and_uses_concurrency_slots() -> None:
    lat = q.latency_quantile(5, 30.0, 0.25, 0.99, concurrency=2)
    assert lat == pytest.approx(q.wait_quantile_mmc(10, 30.0, 0.25, 0.99) + 0.25)


@settings(max_examples=150, deadline=None)
@given(
    load=st.floats(0.05, 3000.0),
    service=st.floats(0.01, 2.0),
    slack=st.floats(0.01, 5.0),
    qq=st.sampled_from([0.9, 0.95, 0.99, 0.999]),
    conc=st.integers(1, 8),
)
def test_min_gpus_for_latency_is_the_smallest_feasible(
    load: float, service: float, slack: float, qq: float, conc: int
) -> None:
    rate = load / service
    target = service * (1.0 + slack)
    n = q.min_gpus_for_latency(rate, service, target, qq, conc)
    assert n >= 1
    assert q.latency_quantile(n, rate, service, qq, conc) <= target * (1 + 1e-9)
    assert q.latency_quantile(n - 1, rate, service, qq, conc) > target * (1 - 1e-9) or n == 1


def test_min_gpus_for_latency_edge_cases() -> None:
    assert q.min_gpus_for_latency(0.0, 0.25, 1.0) == 0
    with pytest.raises(ValueError, match="not above the service time"):
        q.min_gpus_for_latency(10.0, 0.25, 0.25)
    # A target barely above the service time forces the wide-range bisection path.
    n = q.min_gpus_for_latency(100.0, 1.0, 1.0001, 0.99)
    assert q.latency_quantile(n, 100.0, 1.0, 0.99) <= 1.0001
    assert q.latency_quantile(n - 1, 100.0, 1.0, 0.99) > 1.0001


def test_autoscaled_rates_take_the_max_over_the_cyclic_lag_window() -> None:
    rates = np.array([1.0, 2.0, 3.0, 1.0, 0.0, 5.0])
    np.testing.assert_array_equal(q.autoscaled_rates(rates, 0), rates)
    np.testing.assert_array_equal(q.autoscaled_rates(rates, 1), [2, 3, 3, 1, 5, 5])
    np.testing.assert_array_equal(q.autoscaled_rates(rates, 1.5), [3, 3, 3, 5, 5, 5])
    np.testing.assert_array_equal(q.autoscaled_rates(rates, 168), np.full(6, 5.0))


@settings(max_examples=50, deadline=None)
@given(
    rates=st.lists(st.floats(0, 1e4), min_size=2, max_size=168),
    lag=st.floats(0, 200),
)
def test_autoscaled_rates_cover_the_profile_and_grow_with_lag(
    rates: list[float], lag: float
) -> None:
    out = q.autoscaled_rates(rates, lag)
    more = q.autoscaled_rates(rates, lag + 1)
    assert np.all(out >= np.asarray(rates))
    assert np.all(more >= out)
    assert out.max() == max(rates)


def test_single_class_batch_wait_is_exact_for_mmc_and_mg1() -> None:
    # Exponential durations: Allen-Cunneen with phi = 1 is the M/M/c wait C D / (c - A).
    est = q.batch_waits(128, [q.BatchClass(3.2, 8, 4.0)], 8)[0]
    assert est.slots == 16
    assert est.mean == pytest.approx(q.erlang_c(16, 12.8) * 4.0 / (16 - 12.8))
    # One slot, SCV 2: Pollaczek-Khinchine, Wq = lambda E[S^2] / (2 (1 - rho)).
    lam, d, scv = 0.1, 6.0, 2.0
    est = q.batch_waits(64, [q.BatchClass(lam, 64, d, scv)], 8)[0]
    pk = lam * d**2 * (1 + scv) / (2 * (1 - lam * d))
    assert est.mean == pytest.approx(pk, rel=1e-12)


def test_gang_slots_use_whole_nodes() -> None:
    assert q.gang_slots(64, 1) == 64
    assert q.gang_slots(64, 3) == 16  # two per 8-GPU node
    assert q.gang_slots(64, 12) == 4  # two whole nodes each
    assert q.gang_slots(70, 8) == 8  # the partial node is not usable


def test_batch_waits_fifo_gives_everyone_the_largest_wait() -> None:
    classes = [q.BatchClass(4.0, 8, 4.0, 2.0), q.BatchClass(0.1, 64, 8.0, 2.0)]
    back = q.batch_waits(256, classes, 8)
    fifo = q.batch_waits(256, classes, 8, order="fifo")
    assert back[1].mean > back[0].mean
    assert fifo[0].mean == fifo[1].mean >= max(e.mean for e in back)
    assert all(e.quantile >= e.mean or e.quantile == 0.0 for e in back)


def test_min_gpus_for_wait_is_minimal_in_whole_nodes() -> None:
    classes = [q.BatchClass(2.0, 8, 4.0, 2.0), q.BatchClass(0.05, 64, 12.0, 2.0)]
    for stat_q in (None, 0.95):
        gpus = q.min_gpus_for_wait(classes, 2.0, 8, q=stat_q)
        assert gpus % 8 == 0

        def worst(n: int, sq: float | None = stat_q) -> float:
            est = q.batch_waits(n, classes, 8, sq or 0.95)
            return max(e.mean if sq is None else e.quantile for e in est)

        assert worst(gpus) <= 2.0 < worst(gpus - 8)
    assert q.min_gpus_for_wait([q.BatchClass(0.0, 8, 1.0)], 1.0) == 0


def test_achievable_utilization_counts_packing_on_whole_nodes() -> None:
    assert q.achievable_utilization([8], [1.0], 1024) == 1.0
    assert q.achievable_utilization([1, 2, 64], [0.2, 0.3, 0.5], 1024) == 1.0
    assert q.achievable_utilization([3], [1.0], 64) == pytest.approx(0.75)
    # Half the work in 12-GPU jobs that hold 16 GPUs: 1 / (0.5 / 0.75 + 0.5).
    assert q.achievable_utilization([12, 8], [1.0, 1.0], 256) == pytest.approx(
        1 / (0.5 / 0.75 + 0.5)
    )
    assert q.achievable_utilization([64], [1.0], 32) == 0.0


def test_deadline_class_fills_troughs() -> None:
    other = np.array([10.0] * 12 + [2.0] * 12)
    work = np.full(24, 4.0)  # 4 GPU-hours submitted every hour, 96 per day
    # Without slack the pool needs 10 + 4 at the peak; with a day's window the troughs
    # absorb the work: total (10*12 + 2*12 + 96) / 24 = 10 GPUs.
    assert q.deadline_gpus(other, work, 1.0) == pytest.approx(14.0, abs=0.02)
    assert q.deadline_gpus(other, work, 24.0) == pytest.approx(10.0, abs=0.02)
    assert q.deadline_gpus(other, np.zeros(24), 4.0) == 10.0


def test_deadline_window_is_the_converse_of_deadline_gpus() -> None:
    assert q.deadline_window(np.full(24, 4.0), np.full(24, 4.0)) == 1.0
    assert q.deadline_window(np.full(24, 4.0), np.array([8.0, 0.0] * 12)) == 2.0
    assert q.deadline_window(np.full(24, 1.0), np.full(24, 2.0)) == math.inf
    other = np.array([10.0] * 12 + [2.0] * 12)
    work = np.full(24, 4.0)
    for hours in (2.0, 6.0, 24.0):
        cap = q.deadline_gpus(other, work, hours)
        assert q.deadline_window(cap - other, work) <= hours


def test_mmc_simulation_agrees_with_erlang_c_within_its_confidence_interval() -> None:
    # The Call Centre Helper case in hours: A = 10, c = 14, AHT = 180 s = 0.05 h.
    aht = 0.05
    rate = 10.0 / aht
    jobs = se.generate_jobs([se.JobClass("calls", "agents", rate, 1, aht)], 2000.0, seed=7)
    res = se.run([se.Pool("agents", "slurm", 1, 14)], jobs, se.SimOptions(warmup_h=20.0))
    w = res.jobs.filter(pl.col("submit_h") >= 20.0)["wait_h"].to_numpy()
    batches = np.array([b.mean() for b in np.array_split(w, 30)])
    half = stats.t.ppf(0.995, 29) * batches.std(ddof=1) / math.sqrt(30)
    analytic = q.erlang_c(14, 10.0) * aht / (14 - 10.0)
    assert abs(batches.mean() - analytic) < half
    assert half < 0.12 * analytic
    # P(W > 20 s) against 1 - 0.8884, with the same batch-means interval.
    late = np.array([(b > 20 / 3600).mean() for b in np.array_split(w, 30)])
    half_p = stats.t.ppf(0.995, 29) * late.std(ddof=1) / math.sqrt(30)
    assert abs(late.mean() - q.erlang_c(14, 10.0) * math.exp(-4 * 20 / 180)) < half_p


def test_grid_reduced_single_class_within_15_percent() -> None:
    # Four cases of the benchmark grid (benchmarks/queueing_grid.py), exponential and
    # lognormal durations, slots from 1 to 16, waits above 5 minutes.
    cases = [
        (64, 64, 0.7, "lognormal"),
        (128, 8, 0.8, "exponential"),
        (256, 64, 0.9, "exponential"),
        (64, 4, 0.9, "lognormal"),
    ]
    for gpus, g, rho, dist in cases:
        hours = 4.0
        rate = rho * gpus / (g * hours)
        scv = 2.0 if dist == "lognormal" else 1.0
        est = q.batch_waits(gpus, [q.BatchClass(rate, g, hours, scv)], 8)[0]
        jobs = se.generate_jobs(
            [se.JobClass("w", "p", rate, g, hours, dist, scv)], 60_000 / rate, seed=g
        )
        res = se.run(
            [se.Pool("p", "slurm", 8, gpus // 8)], jobs, se.SimOptions(warmup_h=3000 / rate)
        )
        sim = res.waits["mean_wait_h"][0]
        assert sim > 5 / 60
        assert abs(est.mean - sim) / sim < 0.15, (gpus, g, rho, dist, est.mean, sim)


def _simulated_wait(cls: se.JobClass, pool: se.Pool, hours: float, seeds: int = 3) -> float:
    """Median over seeds of the simulated mean wait of one class alone in one pool."""
    waits = []
    for seed in range(seeds):
        jobs = se.generate_jobs([cls], hours, seed=seed)
        res = se.run([pool], jobs, se.SimOptions(warmup_h=168.0, horizon_h=hours))
        waits.append(float(res.waits["mean_wait_h"][0]))
    return float(np.median(waits))


@pytest.mark.parametrize(("rate", "hours", "nodes"), [(0.25, 4.0, 3), (0.3, 6.0, 4), (0.3, 2.0, 3)])
def test_a_business_hours_stream_is_predicted_from_the_load_it_arrives_into(
    rate: float, hours: float, nodes: int
) -> None:
    """8-GPU jobs submitted in business hours: scaled by the arrival load factor, within 25%.

    At the weekly average rate the stationary formula says less than half the simulated wait
    (jobs arrive when the pool is busiest); the factor brings it within the goal.
    """
    from cluster_decide.inputs.catalog import load_catalog

    shape = load_catalog().profile("business_hours")
    cls = se.JobClass("ft", "p", rate, 8, hours, "exponential", 1.0, profile=tuple(shape.tolist()))
    sim = _simulated_wait(cls, se.Pool("p", "gang", 8, nodes), 30_000.0)
    factor = q.arrival_load_factor(shape, shape, hours)
    new = q.batch_waits(8 * nodes, [q.BatchClass(rate * factor, 8, hours)], 8, order="fifo")[0]
    old = q.batch_waits(8 * nodes, [q.BatchClass(rate, 8, hours)], 8, order="fifo")[0]
    assert factor > 1.1
    assert abs(new.mean - sim) <= 0.25 * sim, (new.mean, sim)
    assert old.mean < 0.6 * sim, (old.mean, sim)


def test_arrival_load_factor_limits() -> None:
    """1 for a flat profile or very long jobs; the peak seen by arrivals for very short jobs."""
    w = np.r_[np.full(8, 0.2), np.full(16, 1.0)]
    flat = np.ones(24)
    assert q.arrival_load_factor(flat, flat, 3.0) == pytest.approx(1.0)
    assert q.arrival_load_factor(w, w, 1e4) == pytest.approx(1.0, abs=1e-3)
    palm = float((w * w).sum() / w.sum() / w.mean())
    assert q.arrival_load_factor(w, w, 1e-3) == pytest.approx(palm, rel=1e-3)
    # Night work seen by day arrivals weighs less than its average.
    assert q.arrival_load_factor(w, w[::-1], 1.0) < 1.0


def test_regular_submissions_in_one_slot_take_the_gi_g_1_correction() -> None:
    """A pool-sized gang submitted regularly (arrival SCV 0.25): within 10% of the simulator.

    Allen-Cunneen without a correction (what one slot used) says 27% more than simulated
    (6,000 jobs a seed: a long-job queue at 80% needs thousands to settle).
    """
    rate, gpus, hours = 0.0334, 256, 24.0
    cls = se.JobClass("pre", "p", rate, gpus, hours, "gamma", 0.1, arrival_scv=0.25)
    sim = _simulated_wait(cls, se.Pool("p", "slurm", 8, 32), 200_000.0)
    est = q.batch_waits(256, [q.BatchClass(rate, gpus, hours, 0.1, 0.25)], 8)[0]
    assert abs(est.mean - sim) <= 0.10 * sim, (est.mean, sim)
    plain = 0.35 / 2 * est.utilization / (1 - est.utilization) * hours  # no correction
    assert plain > 1.2 * sim
    # Poisson arrivals keep the exact Pollaczek-Khinchine wait.
    pk = q.batch_waits(256, [q.BatchClass(rate, gpus, hours, 0.1, 1.0)], 8)[0]
    rho = rate * hours
    assert pk.mean == pytest.approx(rho / (1 - rho) * 1.1 / 2 * hours)


def test_renewal_arrivals_have_the_stated_gap_spread() -> None:
    cls = se.JobClass("a", "p", 2.0, 1, 1.0, arrival_scv=0.25)
    gaps = np.diff(se.generate_jobs([cls], 20_000.0, seed=3)["submit_h"].to_numpy())
    assert gaps.mean() == pytest.approx(0.5, rel=0.02)
    assert gaps.var() / gaps.mean() ** 2 == pytest.approx(0.25, rel=0.05)
    with pytest.raises(ValueError, match="arrival_scv"):
        se.JobClass("a", "p", 2.0, 1, 1.0, arrival_scv=0.5, profile=(1.0, 2.0))


def test_the_drain_is_the_last_small_job_to_end_when_a_gang_needs_every_node() -> None:
    """A 64-GPU gang in an 8-node pool waits for every running 8-GPU job to end.

    With ``J ~ Poisson(λD)`` one-node jobs and exponential residual lives of mean ``D``, the
    drain is the largest of ``J`` exponentials: mean ``D H_J``, second moment
    ``D² (Σ_{j≤J} 1/j² + H_J²)``, averaged over ``J``.
    """
    small = q.BatchClass(0.5, 8, 4.0)  # two jobs running on average
    d1, d2 = q._drain_moments(8, 8, 1, 0.3, (small,), 8)
    js = np.arange(1, 80)
    pmf = stats.poisson.pmf(js, 2.0)
    harmonic = np.cumsum(1.0 / js)
    squares = np.cumsum(1.0 / js**2)
    assert d1 == pytest.approx(4.0 * float(pmf @ harmonic), rel=1e-2)
    assert d2 == pytest.approx(16.0 * float(pmf @ (squares + harmonic**2)), rel=2e-2)


def test_small_jobs_wait_for_a_whole_node_gang_to_end() -> None:
    """One node: 8-GPU, 24-hour jobs hold it a fifth of the time; 1-GPU jobs that arrive then wait.

    The pooled stream said the 1-GPU jobs hardly wait (eight one-GPU slots); they wait for the
    running gang's residual life a fifth of the time, about 0.2 × 24 h.
    """
    big = q.BatchClass(0.2 / 24.0, 8, 24.0)
    small = q.BatchClass(0.5, 1, 1.0)
    est = q.batch_waits(8, [big, small], 8)
    assert 0.15 * 24.0 < est[1].mean < 0.3 * 24.0


def test_slots_the_small_jobs_keep_are_taken_from_the_large_gang() -> None:
    """Four 64-GPU slots in 33 nodes beside 8-GPU jobs holding 7.5 nodes on average.

    Only one node lies outside the large slots, so 6.5 nodes' worth of small work sits in
    them: about 3.2 slots are left to the large class on time average, and its wait is at
    least what the continued Erlang C gives there. In 39 nodes, 5 nodes of small work fit in
    the 7 beside the slots and nothing is taken.
    """
    small = (q.BatchClass(60.0 / 32.0, 8, 4.0),)
    big = q.BatchClass(100.0 / (64 * 24.0), 64, 24.0)
    load = big.arrival_rate * big.mean_duration
    own = q.batch_waits(32 * 8, [big], 8)[0].mean
    floor = q._lost_slots_wait(33, 8, 4, load, 24.0, 1.0, 1.0, small, 8)
    three = q.batch_waits(24 * 8, [big], 8)[0].mean
    assert own < floor < three
    fits = (q.BatchClass(40.0 / 32.0, 8, 4.0),)
    assert q._lost_slots_wait(39, 8, 4, load, 24.0, 1.0, 1.0, fits, 8) == 0.0
    assert q.batch_waits(33 * 8, [big, *small], 8)[0].mean >= floor


def _periodic_stepped(monkeypatch: pytest.MonkeyPatch, **constants: float) -> None:
    """Periodic waits with the given module constants, computed afresh (the cache cleared)."""
    for name, value in constants.items():
        monkeypatch.setattr(q, name, value)
    q.periodic_waits.cache_clear()


def test_a_periodic_wait_on_idle_slots_is_bounded_by_mmc_on_the_fewest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slots = tuple([40] * 12 + [56] * 12) * 7  # never fewer than 40 slots for a load of 10
    bound = q.erlang_c(40, 10.0) * 5.0 / (40 - 10.0)
    _periodic_stepped(monkeypatch)
    quick = q.periodic_waits(2.0, 5.0, slots)
    assert quick.first_start == quick.delay == pytest.approx(bound, rel=1e-12)
    assert bound < q.NEGLIGIBLE_WAIT_HOURS
    _periodic_stepped(monkeypatch, NEGLIGIBLE_WAIT_HOURS=0.0)  # step the chain instead
    stepped = q.periodic_waits(2.0, 5.0, slots)
    assert 0.0 < stepped.first_start <= stepped.delay <= bound
    q.periodic_waits.cache_clear()


def test_a_periodic_wait_is_stepped_only_where_the_probability_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A load of 7.5 on 9-14 slots: 428 states, not the 558 a week of arrivals could fill.
    slots = tuple([9] * 12 + [14] * 12) * 7
    _periodic_stepped(monkeypatch)
    trimmed = q.periodic_waits(3.0, 2.5, slots)
    _periodic_stepped(monkeypatch, NEGLIGIBLE_TAIL=1e-300)  # every one of them
    full = q.periodic_waits(3.0, 2.5, slots)
    assert trimmed.first_start > 0.1
    assert trimmed.first_start == pytest.approx(full.first_start, rel=1e-12)
    assert trimmed.delay == pytest.approx(full.delay, rel=1e-12)
    q.periodic_waits.cache_clear()


def test_a_long_periodic_week_recomputes_its_steps_to_the_same_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Slots that fall to zero every night: the queue fills, so the week has 21 steps an hour of
    # 451 states (1.6 M probabilities). Kept whole or recomputed hour by hour from each hour's
    # first step, the steps are the same numbers, so the waits agree (the delay is summed in
    # another order).
    slots = tuple([24] * 8 + [16] * 8 + [0] * 8) * 7
    _periodic_stepped(monkeypatch, KEPT_STEP_VALUES=10**9)
    kept = q.periodic_waits(2.3, 3.0, slots)
    _periodic_stepped(monkeypatch, KEPT_STEP_VALUES=0)
    recomputed = q.periodic_waits(2.3, 3.0, slots)
    assert kept.first_start > 1.0  # the night's queue: hours, not seconds
    assert recomputed.first_start == kept.first_start
    assert recomputed.delay == pytest.approx(kept.delay, rel=1e-12)
    q.periodic_waits.cache_clear()


def test_a_small_periodic_queue_is_solved_for_the_week_it_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 40-hour jobs, a load of 2.2 on 2 slots by day and 3 by night: the queue forgets its start
    # so slowly that 60 weeks stepped from empty leave its wait 0.4% low. Solved for directly,
    # the wait is that of stepping until the week truly repeats.
    slots = tuple([2] * 12 + [3] * 12) * 7
    _periodic_stepped(monkeypatch)
    direct = q.periodic_waits(0.055, 40.0, slots)
    _periodic_stepped(monkeypatch, DIRECT_STATES=0)
    sixty = q.periodic_waits(0.055, 40.0, slots)
    _periodic_stepped(monkeypatch, DIRECT_STATES=0, MAX_PERIODS=3000)
    repeating = q.periodic_waits(0.055, 40.0, slots)
    assert direct.first_start == pytest.approx(repeating.first_start, rel=1e-6)
    assert direct.delay == pytest.approx(repeating.delay, rel=1e-6)
    assert sixty.first_start < repeating.first_start * (1 - 1e-3)
    # A queue that repeats within a few weeks: the two ways agree to the stepping's tolerance.
    _periodic_stepped(monkeypatch)
    light = q.periodic_waits(0.2, 6.0, slots)
    _periodic_stepped(monkeypatch, DIRECT_STATES=0)
    stepped = q.periodic_waits(0.2, 6.0, slots)
    assert light.first_start > 0.1
    assert light.first_start == pytest.approx(stepped.first_start, rel=1e-8)
    assert light.delay == pytest.approx(stepped.delay, rel=1e-8)
    # Slots that never change: the M/M/c queue, whose wait Erlang C gives.
    _periodic_stepped(monkeypatch)
    constant = q.periodic_waits(0.3, 5.0, (2,) * 168)
    erlang = q.erlang_c(2, 1.5) * 5.0 / (2 - 1.5)
    assert constant.first_start == pytest.approx(erlang, rel=1e-6)
    assert constant.delay == pytest.approx(erlang, rel=1e-6)
    q.periodic_waits.cache_clear()


@settings(max_examples=12, deadline=None)
@given(
    day=st.lists(st.integers(0, 5), min_size=24, max_size=24),
    hours=st.floats(0.5, 40.0),
    busy=st.floats(0.05, 0.9),
)
def test_a_periodic_queue_solved_for_is_the_one_stepped_until_it_repeats(
    day: list[int], hours: float, busy: float
) -> None:
    """Any day of 0-5 slots an hour, repeated for a week, and any load below its mean slots."""
    slots = tuple(day) * 7
    mean_slots = sum(day) / 24
    if mean_slots == 0:
        return
    rate = busy * mean_slots / hours
    q.periodic_waits.cache_clear()
    solved = q.periodic_waits(rate, hours, slots)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(q, "DIRECT_STATES", 0)
        patch.setattr(q, "MAX_PERIODS", 5000)
        q.periodic_waits.cache_clear()
        stepped = q.periodic_waits(rate, hours, slots)
    q.periodic_waits.cache_clear()
    assert solved.first_start == pytest.approx(stepped.first_start, rel=1e-6, abs=1e-9)
    assert solved.delay == pytest.approx(stepped.delay, rel=1e-6, abs=1e-9)


def test_the_share_of_slow_requests_follows_the_stated_spread_of_request_times() -> None:
    # Exponential request times (cv 1): e^(-t/s) exceed t; fixed ones (cv 0) none below s.
    assert q.service_time_exceedance(0.010, 1.0, 0.030) == pytest.approx(math.exp(-3.0))
    assert q.service_time_exceedance(0.010, 0.0, 0.030) == 0.0
    assert q.service_time_exceedance(0.040, 0.0, 0.030) == 1.0
    # More spread, more slow requests past the same multiple of the mean (gamma, mean kept).
    shares = [q.service_time_exceedance(0.4, cv, 2.0) for cv in (0.5, 1.0, 1.5, 2.0)]
    assert shares == sorted(shares) and shares[0] < 1e-3 < 0.01 < shares[2]
    # The mean is the mean: by simulation, a gamma sample with that cv has it.
    draws = stats.gamma(1 / 1.5**2, scale=0.4 * 1.5**2).rvs(200_000, random_state=1)
    assert draws.mean() == pytest.approx(0.4, rel=0.01)
    assert (draws > 2.0).mean() == pytest.approx(shares[2], rel=0.05)
