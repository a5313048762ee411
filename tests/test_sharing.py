"""Shared pools that share: services scale by the hour and checkpointed training fills the troughs.

Before solving, what an experienced platform architect expects of the test estate (on-prem, no
burst, a diurnal chat service peaking near 130 H100s and idling near a fifth of that at night,
beside ~50 GPUs of flat checkpointed training; both teams staffed):

- Separate pools pay for the service's peak all week plus a second block for training.
- One pool where the service autoscales and training is preempted for it needs little more
  than the service's peak: the night and weekend troughs hold the training's 30,000 GPU-hours.
  The ~50 GPUs saved (about $50-60k a month on-prem) outweigh the shared pool's extra people
  (integration, about 1.5 FTE, $20-30k a month), so shared beats separate.
- A flat service leaves no trough: sharing saves nothing and the integration effort makes the
  shared pool dearer.
- Training that cannot be preempted keeps its own flat block, wherever it runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from builders import service, small_scenario, training

import cluster_decide as cd
from cluster_decide.base.constants import HOURS_PER_WEEK
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions, pool_meets_targets
from cluster_decide.planning.explain import architecture_words
from cluster_decide.planning.explain_sharing import sharing_sentence
from cluster_decide.planning.loop import sharing_short
from cluster_decide.planning.sharing import Sharing

ON_PREM = {"mode": "on_prem", "on_demand_burst": False}
TEAM = {"hpc": {"fte": 3.0}, "kubernetes": {"fte": 4.0}}


def chat(profile: str | list[float] = "diurnal") -> dict[str, Any]:
    return {
        "name": "chat-api",
        "kind": "realtime_inference",
        "interface": "containers",
        "gpu_types": ["H100"],
        "peak_requests_per_second": 600.0,
        "gpu_seconds_per_request": 0.2,
        "p99_latency_ms": 1200.0,
        "profile": profile,
        "requires": ["autoscaling", "self_healing", "rolling_updates", "service_networking"],
    }


def checkpointed(interruptible: bool = True) -> dict[str, Any]:
    return {
        "name": "model-training",
        "kind": "distributed_training",
        "interface": "slurm",
        "gpu_types": ["H100"],
        "gpus_per_job": 8,
        "gpu_hours_per_month": 30000.0,
        "mean_job_hours": 12.0,
        "max_queue_wait_hours": 24.0,
        "interruptible": interruptible,
        "requires": ["gang_scheduling"],
    }


def estate(
    archetype: str, profile: str | list[float] = "diurnal", interruptible: bool = True
) -> cd.Scenario:
    return small_scenario(
        [chat(profile), checkpointed(interruptible)],
        team=TEAM,
        procurement=ON_PREM,
        policy={"archetype": archetype},
    )


def shallower(depth: float) -> list[float]:
    """The diurnal profile with its trough filled: depth 1 is the catalog's, 0 is flat."""
    shape = np.asarray(cd.load_scenario().catalog.profile("diurnal"), dtype=float)
    return (1.0 - depth * (1.0 - shape / shape.max())).round(4).tolist()


@pytest.fixture(scope="module")
def shared_plan() -> cd.Plan:
    return cd.solve(estate("hybrid_shared"))


def test_a_deep_trough_makes_the_shared_pool_cheaper_than_separate(shared_plan: cd.Plan) -> None:
    separate = cd.solve(estate("hybrid_separate"))
    assert shared_plan.archetype == "hybrid_shared"
    assert shared_plan.total_monthly_usd < 0.92 * separate.total_monthly_usd
    # The shared pool is about the service's peak: the training lives in its troughs.
    peak = float(shared_plan.pools["peak_gpus"][0])
    assert shared_plan.pools["gpus"].sum() < separate.pools["gpus"].sum() - 32
    assert peak <= shared_plan.pools["gpus"][0]


def test_without_a_trough_sharing_has_no_advantage() -> None:
    flat_shared = cd.solve(estate("hybrid_shared", profile="flat"))
    flat_separate = cd.solve(estate("hybrid_separate", profile="flat"))
    # Staff are paid whatever the plan does, so the shared pool's integration effort costs
    # nothing while the teams have time; what sharing could save is GPUs, and a flat service
    # leaves none to save. Only building one cluster rather than two still differs.
    assert flat_shared.pools["gpus"].sum() >= flat_separate.pools["gpus"].sum()
    assert _without_build(flat_shared) >= _without_build(flat_separate)
    # Depth 0 of the diurnal shape is the flat service: same answer, same advantage (none).
    zero = cd.solve(estate("hybrid_shared", profile=shallower(0.0)))
    assert zero.total_monthly_usd == pytest.approx(flat_shared.total_monthly_usd, rel=1e-6)


def _without_build(plan: cd.Plan) -> float:
    """Monthly cost less the cluster builds (one cluster is built for less than two)."""
    build = plan.costs.filter(pl.col("component") == "cluster_build")["monthly_usd"].sum()
    return plan.total_monthly_usd - build


def test_training_that_cannot_be_preempted_never_fills_troughs() -> None:
    scn = estate("hybrid_shared", interruptible=False)
    data = prepare(scn)
    assert not data.flexible
    plan = cd.solve(scn)
    ev = cd.evaluate(scn, plan)
    assert not ev.sharing and ev.feasible
    # Its own flat block sits beside the service's peak.
    service_peak = (
        max(
            s.services_units.max()
            for s in cd.evaluate(
                estate("hybrid_shared"), cd.solve(estate("hybrid_shared"))
            ).sharing.values()
        )
        / 1000
    )
    assert plan.pools["gpus"][0] >= service_peak + 40


def campus(interruptible: bool) -> cd.Scenario:
    """Slurm alone: business-hours notebooks beside checkpointed 1-GPU fine-tuning, on-prem.

    Expected before solving: Slurm preempts a scavenger QOS for interactive sessions, so the
    fine-tuning's 5,000 GPU-hours fit in the notebooks' nights and weekends (16 L40S nodes do
    not idle there), and the cluster is little more than the notebooks' peak; fine-tuning that
    cannot be preempted needs its own block beside that peak.
    """
    notebooks = {
        "name": "student-notebooks",
        "kind": "experimentation",
        "interface": "slurm",
        "gpu_types": ["L40S"],
        "concurrent_users": 60,
        "gpus_per_user": 1,
        "mean_session_hours": 3.0,
        "max_queue_wait_hours": 0.5,
        "profile": "business_hours",
        "requires": ["interactive_shell"],
    }
    finetune = {
        "name": "course-finetune",
        "kind": "fine_tuning",
        "interface": "slurm",
        "gpu_types": ["L40S"],
        "gpus_per_job": 1,
        "gpu_hours_per_month": 5000.0,
        "mean_job_hours": 4.0,
        "max_queue_wait_hours": 24.0,
        "interruptible": interruptible,
    }
    return small_scenario(
        [notebooks, finetune],
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 0.0}},
        procurement=ON_PREM,
        policy={"archetype": "slurm_only"},
    )


def test_slurm_fills_its_notebooks_nights_with_preemptible_training() -> None:
    sharing = cd.solve(campus(interruptible=True))
    flat = cd.solve(campus(interruptible=False))
    assert sharing.status is flat.status is cd.Status.OPTIMAL
    ev = cd.evaluate(sharing.inputs, sharing)  # type: ignore[arg-type]
    assert ev.feasible and set(ev.sharing) == {("slurm", "L40S")}
    assert sharing.service_levels["met"].all()
    # The fine-tuning's ~7 busy GPUs come out of the notebooks' troughs, not a block of its own.
    assert sharing.pools["gpus"].sum() <= flat.pools["gpus"].sum() - 8
    assert any(
        "Training uses" in s and "of the notebooks' L40S GPUs in slurm from" in s
        for s in sharing.explanations
    )


def test_the_shared_plan_meets_every_service_level_and_the_evaluator_agrees(
    shared_plan: cd.Plan,
) -> None:
    scn = shared_plan.inputs
    assert scn is not None
    ev = cd.evaluate(scn, shared_plan)
    assert ev.feasible, ev.violations
    assert shared_plan.service_levels["met"].all()
    (sharing,) = ev.sharing.values()
    assert sharing.steady and sharing.training_units.min() < sharing.training_units.max() / 4
    # One node fewer and the troughs no longer hold the training (or the service's peak).
    dec = shared_plan.decisions()
    fewer = Decisions(dec.shares, {k: n - 1 for k, n in dec.nodes.items()})
    assert not evaluate_decisions(prepare(scn), fewer).feasible


def test_sizing_one_pool_reads_the_same_verdict_as_the_whole_evaluation(
    shared_plan: cd.Plan,
) -> None:
    """The solve loop's quick check of one pool agrees with the evaluator, node count by count.

    Around the shared pool's size its troughs stop holding the training before the service's
    own target breaks, so both halves of the check (service levels, trough-filling) decide.
    """
    scn = shared_plan.inputs
    assert scn is not None
    data = prepare(scn)
    dec = shared_plan.decisions()
    ((pool, gpu), size) = next(iter(dec.nodes.items()))
    seen = set()
    for nodes in range(max(0, size - 6), size + 3):
        trial = Decisions(dec.shares, {**dec.nodes, (pool, gpu): nodes}, dec.spot)
        ev = evaluate_decisions(data, trial, service_pools={(pool, gpu)})
        levels_met = bool(ev.service_levels["met"].all())
        short = (pool, gpu) in sharing_short(ev)
        assert pool_meets_targets(data, trial, pool, gpu) == levels_met, nodes
        assert pool_meets_targets(data, trial, pool, gpu, sharing=True) == (
            levels_met and not short
        ), nodes
        seen.add((levels_met, short))
    assert {(True, True), (True, False)} <= seen  # both the troughs and the size decided


def test_capabilities_follow_the_side_work_is_submitted_through() -> None:
    scn = estate("any")
    data = prepare(scn)
    assert not data.combos[("chat-api", "shared", "H100")].blocked
    # A service submitted through Slurm keeps Slurm's capabilities: no autoscaling.
    slurm_side = small_scenario([{**chat(), "interface": "slurm"}], team=TEAM, procurement=ON_PREM)
    blocked = prepare(slurm_side).combos[("chat-api", "shared", "H100")]
    assert blocked.blocked_family == "capability" and "autoscaling" in blocked.blocked


def test_the_service_follows_its_profile_in_the_shared_pool() -> None:
    data = prepare(estate("any"))
    demand = data.combos[("chat-api", "shared", "H100")].demand
    assert demand.min() < demand.max() / 3


def test_the_plan_splits_the_shared_pool_hour_by_hour(shared_plan: cd.Plan) -> None:
    split = shared_plan.hourly_split()
    assert split.columns == [
        "hour",
        "pool",
        "gpu_type",
        "services_gpus",
        "training_gpus",
        "idle_gpus",
    ]
    assert split.height == 168 and split["hour"].to_list() == list(range(168))
    gpus = float(shared_plan.pools["gpus"][0])
    totals = split["services_gpus"] + split["training_gpus"] + split["idle_gpus"]
    assert (totals - gpus).abs().max() < 0.05
    # Night: the training holds most of the pool; the service's peak leaves it little.
    night, noon = (
        split.filter(pl.col("hour") == 27).row(0, named=True),
        split.filter(pl.col("hour") == 13).row(0, named=True),
    )
    assert night["training_gpus"] > 2 * noon["training_gpus"]
    # Over the week the training gets its GPU-hours, restarts included.
    weekly = 30000.0 / 730.0 * 168.0
    assert split["training_gpus"].sum() >= weekly


def test_the_explanation_says_what_is_shared_and_what_it_saves(shared_plan: cd.Plan) -> None:
    (sentence,) = [s for s in shared_plan.explanations if s.startswith("Training uses")]
    assert "of the services' H100 GPUs in shared from" in sentence
    assert "at their peak the services need" in sentence and "runs in GPUs the services" in sentence


def _week(services_gpus: list[float], training_gpus: float, nodes: int) -> Sharing:
    """A replayed week: the services' GPUs by day (9:00-21:00) and by night, flat training."""
    day = np.array([9 <= t % 24 < 21 for t in range(HOURS_PER_WEEK)])
    units = DEMAND_UNITS_PER_GPU_PERCENT
    held = np.where(day, services_gpus[0], services_gpus[1]) * units
    supply = nodes * 8 * units
    return Sharing(
        services_units=held.astype(np.int64),
        training_units=np.minimum(supply - held, training_gpus * 2 * units) * ~day,
        backlog_steps=np.zeros(HOURS_PER_WEEK, dtype=np.int64),
        arriving_units=int(training_gpus * units * HOURS_PER_WEEK),
        supply_units=supply,
        steady=True,
    )


def test_the_sharing_sentence_counts_the_nodes_the_training_borrows() -> None:
    # Services at 20 GPUs by day (3 nodes), 4 by night; training's flat need 12 GPUs (2 nodes)
    # in a pool of 4 nodes: beyond the 1 node the services leave free, 1 node's worth borrowed.
    sentence = sharing_sentence("shared", "H100", _week([20, 4], 12, 4), 8, 10_000.0)
    assert sentence == (
        "Training uses 16 of the services' H100 GPUs in shared from 21:00 to 09:00: at their "
        "peak the services need 3 of the pool's 4 nodes and the training's weekly work would "
        "fill 2 nodes on its own, so 1 node's worth of it ($10k a month) runs in GPUs the "
        "services leave idle."
    )


def test_borrowing_gpus_is_not_called_a_saving_when_the_pool_holds_both_needs() -> None:
    # The same week in 5 nodes (sized for something else, a gang or a wait): GPUs are
    # borrowed, but the pool has the training's 2 nodes beside the services' 3.
    sentence = sharing_sentence("shared", "L40S", _week([20, 4], 12, 5), 8, 10_000.0, "notebooks'")
    assert sentence is not None and "of the notebooks' L40S GPUs" in sentence
    assert ", but that saves no nodes: at their peak the notebooks need 3 of the pool's 5 " in (
        sentence
    )
    assert sentence.endswith("which the pool has beside them.") and "$" not in sentence


def test_the_week_chart_draws_services_and_training() -> None:
    pytest.importorskip("altair")
    from cluster_decide.charts import sharing_week, to_svg

    plan = cd.solve(estate("hybrid_shared"))
    svg = to_svg(sharing_week(plan))
    assert "Training in the troughs" in svg and "Services" in svg


def test_the_train_and_serve_preset_chooses_the_shared_pool() -> None:
    scn = cd.load_scenario("train-and-serve")
    plan = cd.solve(scn)
    separate = cd.solve(scn.update({"policy": {"archetype": "hybrid_separate"}}))
    assert plan.archetype == "hybrid_shared"
    assert plan.total_monthly_usd < 0.9 * separate.total_monthly_usd
    assert plan.service_levels["met"].all() and cd.evaluate(scn, plan).feasible


@pytest.mark.slow
@pytest.mark.parametrize("depth", [1.0, 0.5])
def test_the_simulator_agrees_with_the_predicted_training_wait_and_completion(
    depth: float,
) -> None:
    """Predicted first-start wait and completion of the training within 25% of the replay.

    The replay runs the service's replicas hour by hour at top priority and preempts the
    training for them (requeued, losing half a checkpoint interval and a restart); simulated
    figures are means over 3 seeds of 90 days, jobs submitted after the first day and at least
    a week before the end (so they complete).
    """
    from cluster_decide.model.data import batch_class, job_stretch
    from cluster_decide.planning.sharing import trough_waits

    scn = estate("hybrid_shared", profile=shallower(depth))
    plan = cd.solve(scn)
    (sharing,) = cd.evaluate(scn, plan).sharing.values()
    w = scn.workload("model-training")
    cat = scn.catalog
    stretch = job_stretch(w, cat.platforms["shared"], cat.gpus["H100"], cat)
    cls = batch_class(w, stretch)  # type: ignore[arg-type]
    predicted = trough_waits(sharing, {"model-training": cls}, 8)["model-training"]
    row = plan.service_levels.filter(pl.col("workload") == "model-training").row(0, named=True)
    assert row["predicted"] == pytest.approx(predicted.wait_hours)
    days = 90
    waits, completions = [], []
    for seed in range(3):
        jobs = cd.simulate(plan, days=days, seed=seed).jobs.filter(
            (pl.col("workload") == "model-training")
            & pl.col("submit_h").is_between(24.0, days * 24.0 - 168.0)
        )
        assert jobs["end_h"].null_count() == 0
        waits.append(float(jobs["wait_h"].mean()))  # type: ignore[arg-type]
        completions.append(float((jobs["end_h"] - jobs["submit_h"]).mean()))  # type: ignore[arg-type]
    assert predicted.wait_hours == pytest.approx(np.mean(waits), rel=0.25)
    assert predicted.completion_hours == pytest.approx(np.mean(completions), rel=0.25)


def test_the_apps_show_the_week_of_a_plan_that_shares(shared_plan: cd.Plan) -> None:
    pytest.importorskip("ipywidgets")
    from cluster_decide.widgets.answer import CHARTS

    def draw(part: str, plan: cd.Plan) -> str:
        return CHARTS[part][1](plan, 600)

    # The dashboard's tab draws the week; the executive app shows it only where a pool shares.
    assert 'data-chart="sharing"' in draw("sharing", shared_plan)
    assert "Training in the troughs" in draw("sharing_if_any", shared_plan)
    separate = cd.solve(estate("hybrid_separate"))
    assert draw("sharing_if_any", separate) == ""
    assert "No pool in this plan fills its troughs" in draw("sharing", separate)


def test_whether_training_may_fill_troughs_does_not_saw_tooth_with_demand() -> None:
    """train-and-serve's checkpointed training (32-GPU gangs, 12 h jobs, 24 h wait): sized alone
    at two slots at x1.25 it waits over 12 h, which once barred it from the troughs while x1.5
    (three slots, more room) was let in, so more training cost less. A target of a job's length
    or more is what counts; the room left is what the hourly rows then hold it to."""
    scn = cd.load_scenario("train-and-serve")
    key = ("model-training", "shared", "H100")
    slack = {
        f: prepare(scn.scale_demand("distributed_training", f)).flexible.get(key)
        for f in (1.25, 1.5)
    }
    assert slack[1.25] is not None and slack[1.5] is not None
    assert 0 <= slack[1.25] < 100 * 12 <= slack[1.5]  # less room at x1.25, in hundredths of an hour
    short = scn.model_copy(
        update={
            "workloads": tuple(
                w.model_copy(update={"max_queue_wait_hours": 10.0})
                if w.name == "model-training"
                else w
                for w in scn.workloads
            )
        }
    )
    assert key not in prepare(short).flexible  # pushed out at a peak, a 12 h job waits too long


def test_a_shared_pool_beside_other_clusters_is_not_called_one_pool() -> None:
    # Every plan with a shared pool is hybrid_shared; the words say what runs beside it.
    assert architecture_words("hybrid_shared", ["shared"]) == (
        "one shared GPU pool (Slurm on Kubernetes)"
    )
    assert architecture_words("hybrid_shared", ["shared", "slurm", "kubernetes_batch"]) == (
        "a shared GPU pool (Slurm on Kubernetes) beside a Slurm cluster and a Kubernetes "
        "cluster with a batch add-on"
    )
    assert architecture_words("hybrid_shared", ["shared", "shared", "slurm", "slurm"]) == (
        "2 shared GPU pools (Slurm on Kubernetes) beside 2 Slurm clusters"
    )
    assert architecture_words("slurm_only", ["slurm", "slurm"]) == "Slurm only"


def test_a_slurm_shop_adding_a_service_in_a_shared_pool_keeps_its_cluster_in_the_words() -> None:
    # An owned Slurm cluster keeps its MPI training; the new service goes to a shared pool.
    scn = small_scenario(
        [
            training(
                "protein",
                gpus_per_job=64,
                gpu_hours_per_month=20000.0,
                mean_job_hours=24.0,
                max_queue_wait_hours=48.0,
                requires=["gang_scheduling", "mpi"],
            ),
            service("assistant", gpu_types=["L40S"], profile="business_hours"),
        ],
        procurement={"mode": "on_prem", "on_demand_burst": False},
        policy={"archetype": "hybrid_shared"},
        current={
            "workloads": {"protein": {"platform": "slurm"}},
            "clusters": [{"name": "hpc", "platform": "slurm", "gpu_type": "H100", "nodes": 8}],
        },
    )
    plan = cd.solve(scn)
    assert plan.archetype == "hybrid_shared"
    assert set(plan.placements["platform"]) == {"slurm", "shared"}
    words = "a shared GPU pool (Slurm on Kubernetes) beside a Slurm cluster"
    assert plan.architecture_words == words
    assert plan.explanations[0].startswith(f"Recommended: {words}, at ")
