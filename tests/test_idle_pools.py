"""A mostly idle pool says what sizes it, and the reasons a plan gives are ones that hold.

A 90-day export of a research lab (the project's own sample, ingested with cloud defaults)
holds ten 256-GPU training runs of about 19 hours. The plan commits 34 H100 nodes for three
years, busy 9% of the time, and said only that the pool "is sized for its busiest hours and for
its wait and latency targets": an architect would ask what sizes it, and whether renting the
runs by the booking would cost less.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from builders import small_scenario, training

import cluster_decide as cd
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, Combo, prepare
from cluster_decide.planning.explain import _cost_driver


def rare_gangs(mode: str = "cloud") -> cd.Scenario:
    """Ten 256-GPU runs a quarter, each about 19 hours, on Slurm."""
    runs = training(
        "big-runs",
        gpus_per_job=256,
        gpu_hours_per_month=15_000.0,
        mean_job_hours=19.0,
        max_queue_wait_hours=8.0,
        divisible=False,
    )
    return small_scenario([runs], procurement={"mode": mode}, policy={"platforms": ["slurm"]})


def _idle_sentence(plan: cd.Plan, pool: str) -> str:
    (said,) = [s for s in plan.explanations if s.startswith(f"The {pool} pool's")]
    return said


def test_a_pool_held_for_rare_whole_machine_jobs_says_so_and_what_to_price() -> None:
    scn = rare_gangs()
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    row = plan.pools.filter(pl.col("gpus") > 0).row(0, named=True)
    assert row["nodes"] == 32 and row["utilization"] < 0.2
    market = prepare(scn).markets["H100"]
    assert market.baseline is not None and market.burst is not None
    said = _idle_sentence(plan, "slurm")
    assert (
        "big-runs's 256-GPU jobs need all 32 of its nodes at once, standing by between runs. "
        "Renting only the hours they are busy, even at the "
        f"on-demand price (${market.burst.usd_per_gpu_hour:.2f} per GPU-hour against "
        f"${market.baseline.usd_per_gpu_hour:.2f}), would cost less"
    ) in said
    assert "short-term reservations such as cloud capacity blocks" in said


def test_owned_nodes_held_for_whole_machine_jobs_are_not_told_to_rent() -> None:
    # The research lab owns its cluster: what sizes it is said, and no renting is weighed.
    plan = cd.solve(cd.load_scenario("research-lab"), workers=1)
    said = _idle_sentence(plan, "lab-h100")
    assert "foundation-pretraining's 128-GPU jobs need 16 of its 22 nodes at once" in said
    assert "Renting" not in said


def test_a_pool_sized_by_its_waits_keeps_the_general_sentence() -> None:
    # Single-node jobs with a one-hour wait target: several nodes stand by, none for one job.
    quick = training(gpus_per_job=8, gpu_hours_per_month=1_500.0, max_queue_wait_hours=1.0)
    plan = cd.solve(rare_gangs().update({"workloads": [quick]}))
    said = _idle_sentence(plan, "slurm")
    assert "of the time on average: it is sized for its busiest hours" in said
    assert "at once" not in said


def test_a_peak_no_larger_once_rounded_is_not_given_as_why_work_stays() -> None:
    # "$2.4k more because it needs more GPUs there (24 vs 24 at peak)": a reason a meeting
    # would laugh at. Only a peak at least 5% larger (rounded) is said.
    data = prepare(rare_gangs().update({"workloads": [training(gpus_per_job=8)]}))
    units = DEMAND_UNITS_PER_GPU

    def combo(pool: str, peak: float) -> Combo:
        demand = np.full(168, round(peak * units), dtype=np.int64)
        return Combo("train", pool, "H100", demand, 8, "", "", 0, 0)

    here = combo("slurm", 24.0)
    assert _cost_driver(data, here, combo("k8s", 24.4)) == ""
    assert _cost_driver(data, here, combo("k8s", 25.0)) == ""
    assert _cost_driver(data, here, combo("k8s", 26.0)) == (
        " because it needs more GPUs there (26 vs 24 at peak)"
    )


def test_a_cluster_under_lease_is_not_told_to_rent_by_the_run() -> None:
    # Its lease is paid until it ends whatever the plan does: renting the runs instead saves
    # nothing in those months, so the sentence says what sizes the pool and no more.
    lease = {
        "name": "hpc",
        "platform": "slurm",
        "gpu_type": "H100",
        "nodes": 32,
        "ownership": "leased",
        "leased_until": "2027-12",
    }
    scn = rare_gangs().update({"current": {"as_of": "2026-12", "clusters": [lease]}})
    plan = cd.solve(scn)
    said = _idle_sentence(plan, "hpc")
    assert "big-runs's 256-GPU jobs need all 32 of its nodes at once" in said
    assert "Renting" not in said


def test_a_pool_of_whole_slots_of_one_gang_class_says_so() -> None:
    """A sovereign lab's pre-training (256-GPU jobs of 120 hours, started within 72 h) takes 96
    H100 nodes bought for $34.6M, busy 45% of the time: three jobs' slots, since two would make
    them wait about 96 h. The pool said only that it "is sized for its busiest hours and for its
    wait and latency targets": one job needs a third of the nodes, under the half that made the
    sentence say what sizes it."""
    runs = training(
        "pretrain",
        gpus_per_job=256,
        gpu_hours_per_month=250_000.0,
        mean_job_hours=120.0,
        max_queue_wait_hours=72.0,
        divisible=False,
    )
    scn = small_scenario([runs], procurement={"mode": "on_prem"}, policy={"platforms": ["slurm"]})
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    row = plan.pools.filter(pl.col("gpus") > 0).row(0, named=True)
    assert row["nodes"] == 96 and row["utilization"] < 0.5, row
    said = _idle_sentence(plan, "slurm")
    assert (
        "its 96 nodes hold 3 of pretrain's 256-GPU jobs (32 nodes each) at once, so that they "
        "start within 72 h, standing by between runs."
    ) in said, said
    # A hospital's 6 A100 nodes are its imaging training's 2 slots and room for notebooks: not
    # slots alone, so what sizes them stays the general sentence.
    hospital = cd.solve(
        cd.load_scenario(Path(__file__).parent / "data" / "hospital-institute.toml")
    )
    assert "it is sized for its busiest hours" in _idle_sentence(hospital, "hpc")


def test_a_gang_pool_names_the_batch_work_it_could_backfill_and_what_that_work_costs_apart() -> (
    None
):
    """A sovereign lab's 96 H100 nodes stand by 55% of the time for three pre-training jobs,
    while its 8-GPU evaluations of 3 hours (started within a day) run on a Kubernetes pool of
    their own: a Slurm scheduler would backfill them into the idle slots, which the model, whose
    capacity rows add each class's own need, does not; the plan now says so and what the
    evaluations cost apart."""
    scn = cd.load_scenario(Path(__file__).parent / "data" / "sovereign-lab.toml")
    plan = cd.solve(scn)
    where = {r["workload"]: r["pool"] for r in plan.placements.iter_rows(named=True)}
    assert where["pretrain"] == "slurm" and where["evals"] == "k8s-batch", where
    said = _idle_sentence(plan, "slurm")
    assert "its 96 nodes hold 3 of pretrain's 256-GPU jobs (32 nodes each)" in said, said
    assert (
        "A scheduler can backfill short jobs into those nodes between runs: evals fits a slot and "
        "ends within pretrain's 72 h wait, and about 310,000 GPU-hours a month stand idle here; "
        "the model sizes it apart (on k8s-batch, about $"
    ) in said, said
    # Work that cannot run there (a service Slurm lacks the capabilities for) is not named.
    assert "public-chat" not in said
