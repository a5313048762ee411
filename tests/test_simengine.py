"""Tests of the discrete-event engine: policies on hand-checked cases, the cost of partial gangs, inputs."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_decide.simulation import engine as se


def table(rows: list[tuple[float, int, float, int, bool]], pool: str = "p") -> pl.DataFrame:
    """Jobs from (submit_h, gpus, duration_h, priority, service) tuples, in order."""
    return pl.DataFrame(
        {
            "job_id": list(range(len(rows))),
            "workload": [f"j{i}" for i in range(len(rows))],
            "pool": [pool] * len(rows),
            "submit_h": [r[0] for r in rows],
            "gpus": [r[1] for r in rows],
            "duration_h": [r[2] for r in rows],
            "priority": [r[3] for r in rows],
            "service": [r[4] for r in rows],
        }
    )


def starts(res: se.SimResult) -> list[float | None]:
    return res.jobs.sort("job_id")["start_h"].to_list()


def test_easy_backfill_lets_short_jobs_pass_without_delaying_the_head() -> None:
    jobs = table(
        [
            (0.0, 8, 10.0, 0, False),  # runs on one node until 10
            (1.0, 16, 5.0, 0, False),  # needs both nodes: reservation at 10
            (2.0, 8, 5.0, 0, False),  # ends at 7 < 10: backfills now
            (3.0, 8, 20.0, 0, False),  # would delay the head: waits for it
        ]
    )
    slurm = se.run([se.Pool("p", "slurm", 8, 2)], jobs)
    assert starts(slurm) == [0.0, 10.0, 2.0, 15.0]
    gang = se.run([se.Pool("p", "gang", 8, 2)], jobs)
    assert starts(gang) == [0.0, 10.0, 15.0, 15.0]
    for res in (slurm, gang):
        assert res.pools["partial_alloc_gpu_hours"][0] == 0.0


def test_priority_order_and_whole_node_allocation() -> None:
    jobs = table([(0.0, 12, 4.0, 0, False), (1.0, 8, 1.0, 0, False), (1.0, 8, 1.0, 5, False)])
    res = se.run([se.Pool("p", "gang", 8, 3)], jobs)
    # The 12-GPU job takes two whole nodes; the priority-5 job goes first at t=1.
    assert starts(res) == [0.0, 2.0, 1.0]


def test_kubernetes_partial_placement_deadlock_is_counted_and_broken() -> None:
    jobs = table(
        [
            (0.0, 8, 5.0, 0, False),
            (0.0, 8, 5.0, 0, False),
            (1.0, 24, 10.0, 0, False),  # A: 2 of 3 pods placed at t=1
            (2.0, 24, 10.0, 1, False),  # B: higher priority, takes the 2 nodes freed at t=5
        ]
    )
    k8s = se.run([se.Pool("p", "kubernetes", 8, 4)], jobs, se.SimOptions(deadlock_timeout_h=1.0))
    pool = k8s.pools.row(0, named=True)
    # Deadlock at t=5 (A and B each hold 16 GPUs and need 8 more); at t=6 the breaker
    # releases B (the younger); A completes its placement and runs 6-16; B, requeued,
    # holds one node from 6 and starts at 16.
    assert starts(k8s) == [0.0, 0.0, 6.0, 16.0]
    assert pool["deadlocks"] == 1
    assert pool["deadlock_hours"] == pytest.approx(1.0)
    assert pool["partial_releases"] == 1
    assert pool["partial_alloc_gpu_hours"] == pytest.approx(16 * 5 + 16 * 1 + 8 * 10)
    slurm = se.run([se.Pool("p", "slurm", 8, 4)], jobs)
    assert starts(slurm) == [0.0, 0.0, 15.0, 5.0]
    assert slurm.pools["partial_alloc_gpu_hours"][0] == 0.0
    assert slurm.pools["deadlocks"][0] == 0


def test_kubernetes_places_smaller_pods_past_ones_that_do_not_fit() -> None:
    jobs = table(
        [
            (0.0, 5, 10.0, 0, False),  # leaves 3 of the node's 8 GPUs
            (1.0, 4, 1.0, 0, False),  # does not fit until t=10
            (1.0, 4, 1.0, 0, False),  # as large: skipped in the same pass
            (1.0, 2, 1.0, 0, False),  # fits behind them
            (1.0, 1, 1.0, 0, False),  # and so does this one, on the last free GPU
        ]
    )
    res = se.run([se.Pool("p", "kubernetes", 8, 1)], jobs)
    assert starts(res) == [0.0, 10.0, 10.0, 1.0, 1.0]


def test_seed_claim_kubernetes_default_wastes_gpu_hours_slurm_and_gang_do_not() -> None:
    # 60 days of a mixed estate on 128 GPUs at ~60% utilization: 64-GPU pretraining,
    # 16-GPU fine-tuning and 2-GPU notebooks.
    classes = [
        se.JobClass("pretrain", "p", 0.08, 64, 8.0, "lognormal", 2.0),
        se.JobClass("finetune", "p", 0.6, 16, 3.0, "lognormal", 2.0),
        se.JobClass("notebooks", "p", 4.0, 2, 1.0, "lognormal", 2.0),
    ]
    jobs = se.generate_jobs(classes, 24 * 60, seed=3)
    rows = {}
    for policy in ("kubernetes", "slurm", "gang"):
        res = se.run([se.Pool("p", policy, 8, 16)], jobs)
        rows[policy] = res.pools.row(0, named=True)
        assert res.jobs["end_h"].null_count() == 0
    assert rows["slurm"]["partial_alloc_gpu_hours"] == 0.0
    assert rows["gang"]["partial_alloc_gpu_hours"] == 0.0
    k8s = rows["kubernetes"]
    assert k8s["partial_alloc_gpu_hours"] > 0.1 * k8s["busy_gpu_hours"]


def test_shared_pool_services_preempt_training_with_restart_cost() -> None:
    jobs = table([(0.0, 8, 10.0, 0, False), (2.0, 4, 3.0, 0, True)])
    res = se.run([se.Pool("p", "shared", 8, 1)], jobs, se.SimOptions(checkpoint_restart_h=0.25))
    out = res.jobs.sort("job_id")
    assert out["start_h"].to_list() == [0.0, 2.0]
    assert out["end_h"].to_list() == [pytest.approx(13.25), 5.0]
    pool = res.pools.row(0, named=True)
    assert pool["preemptions"] == 1
    assert pool["preempted_gpu_hours"] == pytest.approx(8 * 0.25)


def test_utilization_and_events_are_counted_in_the_window() -> None:
    jobs = table([(0.0, 8, 4.0, 0, False), (1.0, 8, 4.0, 0, False)])
    res = se.run([se.Pool("p", "slurm", 8, 2)], jobs, se.SimOptions(warmup_h=0.0, horizon_h=4.0))
    # Busy GPU-hours inside [0, 4]: 8*4 + 8*3 = 56 of 16*4 = 64.
    assert res.pools["utilization"][0] == pytest.approx(56 / 64)
    assert res.events == 4
    assert res.events_per_s > 0


def test_wait_summary_per_workload() -> None:
    jobs = table([(0.0, 8, 2.0, 0, False), (0.0, 8, 2.0, 0, False), (0.0, 8, 2.0, 0, False)])
    jobs = jobs.with_columns(pl.lit("w").alias("workload"))
    res = se.run([se.Pool("p", "slurm", 8, 1)], jobs)
    row = res.waits.row(0, named=True)
    assert row["jobs"] == 3
    assert row["mean_wait_h"] == pytest.approx(2.0)
    assert row["p50_wait_h"] == pytest.approx(2.0)
    assert row["p99_wait_h"] == pytest.approx(3.96)


@pytest.mark.parametrize(
    ("dist", "scv"),
    [("exponential", 1.0), ("lognormal", 2.0), ("gamma", 0.5), ("deterministic", 0.0)],
)
def test_generated_jobs_follow_their_class(dist: str, scv: float) -> None:
    k = se.JobClass("w", "p", 50.0, 4, 3.0, dist, scv)  # type: ignore[arg-type]
    a = se.generate_jobs([k], 1000.0, seed=1)
    b = se.generate_jobs([k], 1000.0, seed=1)
    assert a.equals(b)
    assert abs(a.height - 50_000) < 4 * math.sqrt(50_000)
    d = a["duration_h"].to_numpy()
    assert d.mean() == pytest.approx(3.0, rel=0.03)
    assert d.var() / d.mean() ** 2 == pytest.approx(scv, abs=0.15 * max(scv, 0.1))
    gaps = np.diff(a["submit_h"].to_numpy())
    assert gaps.min() >= 0
    assert gaps.mean() == pytest.approx(1 / 50.0, rel=0.03)
    assert a["job_id"].to_list() == list(range(a.height))


def test_invalid_inputs_are_reported_together() -> None:
    jobs = table([(0.0, 64, 1.0, 0, False), (0.0, 4, 1.0, 0, False)])
    jobs = jobs.with_columns(pl.Series("pool", ["p", "nowhere"]))
    with pytest.raises(ValueError) as err:
        se.run([se.Pool("p", "slurm", 8, 4)], jobs)
    msg = str(err.value)
    assert "unknown pools ['nowhere']" in msg
    assert "need more GPUs than pool 'p' has (32)" in msg
    with pytest.raises(ValueError, match="policy 'yarn'"):
        se.Pool("p", "yarn", 8, 4)
    with pytest.raises(ValueError, match="missing columns"):
        se.run([se.Pool("p", "slurm", 8, 4)], jobs.drop("duration_h"))


def test_optional_columns_default_and_pools_run_independently() -> None:
    jobs = table([(0.0, 8, 1.0, 0, False), (0.0, 8, 1.0, 0, False)]).drop("priority", "service")
    jobs = jobs.with_columns(pl.Series("pool", ["a", "b"]))
    res = se.run([se.Pool("a", "slurm", 8, 1), se.Pool("b", "kubernetes", 8, 1)], jobs)
    assert starts(res) == [0.0, 0.0]
    assert res.pools["pool"].to_list() == ["a", "b"]


job_rows = st.lists(
    st.tuples(
        st.floats(0, 50, allow_nan=False),
        st.sampled_from([1, 2, 3, 4, 8, 12, 16, 24, 32]),
        st.floats(0.01, 20, allow_nan=False),
        st.integers(0, 2),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(rows=job_rows, policy=st.sampled_from(se.POLICIES))
def test_every_policy_finishes_every_job_within_capacity(
    rows: list[tuple[float, int, float, int, bool]], policy: str
) -> None:
    rows = sorted(rows, key=lambda r: r[0])
    jobs = table(rows)
    res = se.run([se.Pool("p", policy, 8, 4)], jobs)
    out = res.jobs.sort("job_id")
    assert out["end_h"].null_count() == 0
    assert (out["wait_h"] >= 0).all()
    pool = res.pools.row(0, named=True)
    if policy != "kubernetes":
        assert pool["partial_alloc_gpu_hours"] == 0.0
    if policy != "shared" or pool["preemptions"] == 0:
        # Without preemption a job runs once, for exactly its duration.
        np.testing.assert_allclose(
            (out["end_h"] - out["start_h"]).to_numpy(), jobs["duration_h"].to_numpy(), atol=1e-9
        )
        # GPUs in use never exceed the pool (whole-node allocations; pods hold just g).
        alloc = [g if g <= 8 or policy == "kubernetes" else -(-g // 8) * 8 for g in out["gpus"]]
        for t in out["start_h"]:
            running = (out["start_h"] <= t) & (out["end_h"] > t)
            assert sum(a for a, r in zip(alloc, running, strict=True) if r) <= 32
    if policy == "gang" and len({r[3] for r in rows}) == 1:
        # Strict FIFO: equal-priority jobs start in submission order.
        s = out["start_h"].to_numpy()
        assert np.all(np.diff(s) >= -1e-12)


def test_services_do_not_preempt_training_when_it_cannot_make_room() -> None:
    jobs = table([(0.0, 4, 10.0, 0, True), (0.0, 4, 10.0, 0, False), (1.0, 8, 1.0, 0, True)])
    res = se.run([se.Pool("p", "shared", 8, 1)], jobs)
    assert res.pools["preemptions"][0] == 0
    assert starts(res) == [0.0, 0.0, 10.0]


def test_profiled_arrivals_follow_the_weekly_shape() -> None:
    profile = tuple([0.0] * 12 + [2.0] * 12)  # nights empty, days at twice the mean
    k = se.JobClass("w", "p", 10.0, 1, 1.0, profile=profile)
    jobs = se.generate_jobs([k], 24 * 200 + 6.5, seed=2)
    hour = (jobs["submit_h"].to_numpy() % 24).astype(int)
    assert (hour < 12).sum() == 0
    assert jobs.height == pytest.approx(10.0 * 24 * 200, rel=0.03)
    assert jobs["submit_h"].max() < 24 * 200 + 6.5
    with pytest.raises(ValueError, match="profile"):
        se.JobClass("w", "p", 1.0, 1, 1.0, profile=(0.0, 0.0))


_MIXED = [
    se.JobClass("small", "p", 3.0, 2, 1.5, "lognormal", 2.0),
    se.JobClass("node", "p", 0.8, 8, 4.0, "gamma", 1.5, priority=1),
    se.JobClass("gang", "p", 0.25, 24, 6.0),
    se.JobClass("big", "p", 0.08, 40, 10.0, "deterministic"),
    se.JobClass("svc", "p", 0.6, 4, 2.0, service=True, priority=5),
]
"""Two weeks of one-GPU to five-node jobs with services: backfill, preemption, partial pods."""
_REPLAYS = {
    ("slurm", 0): "45e243c0f9715313",
    ("slurm", 1): "e79106e107a199f1",
    ("kubernetes", 0): "16cb159eff895ae0",
    ("kubernetes", 1): "85b76e8bca967aa1",
    ("gang", 0): "fc58ab3cf376a162",
    ("gang", 1): "5fa6a551144b00d9",
    ("shared", 0): "04f73190314cec67",
    ("shared", 1): "6f4be64baf2e722c",
}
"""Fingerprints of each replay as the engine gave them before its event loops were split into
named steps (starts, ends, the pool row and the event count, every float to the last bit)."""


def _fingerprint(res: se.SimResult) -> str:
    body = json.dumps(
        [
            res.jobs["start_h"].to_list(),
            res.jobs["end_h"].to_list(),
            res.pools.to_dicts(),
            res.events,
        ],
        sort_keys=True,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


@pytest.mark.parametrize(("policy", "seed"), list(_REPLAYS))
def test_the_same_seed_replays_to_the_same_bits(policy: str, seed: int) -> None:
    jobs = se.generate_jobs(_MIXED, 24 * 14, seed=seed)
    options = se.SimOptions(backfill_depth=20, warmup_h=24)
    res = se.run([se.Pool("p", policy, 8, 8)], jobs, options)
    assert _fingerprint(res) == _REPLAYS[(policy, seed)]


def test_thirty_deadlocks_replay_to_the_same_bits() -> None:
    rows = []
    for cycle in range(30):  # the hand-checked deadlock above, every 40 hours
        t = 40.0 * cycle
        rows += [(t, 8, 5.0, 0, False), (t, 8, 5.0, 0, False)]
        rows += [(t + 1.0, 24, 10.0, 0, False), (t + 2.0, 24, 10.0, 1, False)]
    res = se.run([se.Pool("p", "kubernetes", 8, 4)], table(rows))
    assert res.pools["deadlocks"][0] == res.pools["partial_releases"][0] == 30
    assert _fingerprint(res) == "e5dfb4d9a99dfbfb"
