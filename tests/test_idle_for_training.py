"""Idle own GPUs that checkpointed training could use, where the model does not count it.

Found on a Slurm lab growing an inference product: the plan kept its owned cluster's two
128-GPU slots for pre-training (busy 59%, standing by between runs) and rented 96 cloud GPUs
for checkpointed fine-tuning that a preemptible QOS would run between the runs. The model lets
training fill only the quiet hours of services and interactive work, and only in pools that do not
rent their peaks, so the verdict now says where GPUs stand idle that such training could use.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import cluster_decide as cd
from cluster_decide.base.constants import HOURS_PER_MONTH
from cluster_decide.model.data import prepare
from cluster_decide.planning.explain_idle import IdleRoom, idle_caveat, idle_rooms

DATA = Path(__file__).parent / "data"
PRESETS = Path(__file__).parents[1] / "data" / "scenarios"


def _rooms(scn: cd.Scenario, plan: cd.Plan) -> list[IdleRoom]:
    return idle_rooms(prepare(scn), plan.decisions())


def _idle_gpu_hours(plan: cd.Plan, pool: str, gpu: str) -> float:
    """A month's idle GPU-hours of a pool's own nodes, from its utilization column."""
    row = plan.pools.filter((plan.pools["pool"] == pool) & (plan.pools["gpu_type"] == gpu))
    return row["gpus"][0] * HOURS_PER_MONTH * (1 - row["utilization"][0])


def test_standby_between_runs_is_named_with_the_training_that_could_use_it() -> None:
    scn = cd.load_scenario(DATA / "hpc-centre.toml")
    plan = cd.solve(scn)
    rooms = _rooms(scn, plan)
    assert [(r.pool, r.gpu_type, r.why, r.owners) for r in rooms] == [
        ("slurm", "H100", "standby", ("climate-mpi",))
    ]
    room = rooms[0]
    # The MPI runs are the pool's only work, so all its idle GPUs are their headroom.
    assert set(plan.placements.filter(plan.placements["pool"] == "slurm")["workload"]) == {
        "climate-mpi"
    }
    assert room.idle_gpu_hours == pytest.approx(_idle_gpu_hours(plan, "slurm", "H100"), rel=1e-3)
    bio = plan.placements.filter(plan.placements["workload"] == "bio-sims")
    assert [name for name, _h in room.trainers] == ["bio-sims"]
    assert room.trainers[0][1] == pytest.approx(bio["gpu_hours_per_month"].sum(), abs=1)
    words = idle_caveat(rooms)
    assert words.startswith("Between climate-mpi's runs the slurm pool's own H100 GPUs stand idle")
    assert f"about {round(room.idle_gpu_hours, -2):,.0f} GPU-hours a month" in words
    assert "bio-sims" in words and "a cheaper plan may exist" in words


def test_quiet_hours_of_a_pool_that_rents_its_peaks_reach_the_verdict() -> None:
    scn = cd.load_scenario(DATA / "chat-finetune.toml")
    plan = cd.solve(scn)
    (room,) = _rooms(scn, plan)
    assert (room.pool, room.why, room.owners) == ("k8s-batch", "quiet_hours", ("chat-api",))
    assert plan.pools.filter(plan.pools["pool"] == "k8s-batch")["burst_gpu_hours"][0] > 0
    # The fine-tuning's own even block is busy; what is idle lies within the pool's idle GPUs.
    assert 0 < room.idle_gpu_hours <= _idle_gpu_hours(plan, "k8s-batch", "H100") + 1
    rec = cd.recommend(scn, plan=plan, inputs=())
    assert idle_caveat([room]) in rec.caveats
    assert "when chat-api is quiet, while it rents its peaks" in rec.sentence
    assert "model-finetune" in rec.to_dict()["caveats"][-1]


def test_a_class_is_not_offered_its_own_headroom() -> None:
    # The inference platform holds two H100 nodes for its checkpointed adapter fine-tuning
    # alone: their idle hours are that class's own wait headroom, not room for it to fill.
    scn = cd.load_scenario(PRESETS / "inference-platform.toml")
    plan = cd.solve(scn)
    h100 = plan.placements.filter(
        (plan.placements["pool"] == "k8s-batch") & (plan.placements["gpu_type"] == "H100")
    )
    assert h100["workload"].to_list() == ["adapter-finetuning"]
    assert _idle_gpu_hours(plan, "k8s-batch", "H100") > 4 * HOURS_PER_MONTH
    assert _rooms(scn, plan) == []


def test_the_default_and_a_pool_filling_its_troughs_say_nothing(
    default_scenario: cd.Scenario, default_plan: cd.Plan
) -> None:
    assert _rooms(default_scenario, default_plan) == []
    assert idle_caveat([]) == ""
    # The train-and-serve preset's shared pool already fills its services' troughs (the model
    # counts them), and its training does not stand by for a gang of another class.
    scn = cd.load_scenario(PRESETS / "train-and-serve.toml")
    assert _rooms(scn, cd.solve(scn)) == []
