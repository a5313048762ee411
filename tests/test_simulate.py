"""Replaying a plan: the adapter from plans to the simulator, and its CLI."""

from __future__ import annotations

import polars as pl
import pytest
from builders import small_scenario, training

import cluster_decide as cd
from cluster_decide.cli import main
from cluster_decide.simulation.replay import POLICY_OF, simulate, simulated_pools


@pytest.fixture(scope="module")
def lab_plan() -> cd.Plan:
    return cd.solve(cd.load_scenario("research-lab"))


def test_pools_follow_the_plan(lab_plan: cd.Plan) -> None:
    from cluster_decide.model.data import prepare

    pools = simulated_pools(lab_plan, prepare(lab_plan.inputs))  # type: ignore[arg-type]
    assert {p.name for p in pools} == {
        f"{r['pool']}/{r['gpu_type']}" for r in lab_plan.pools.iter_rows(named=True)
    }
    assert {p.policy for p in pools} == {POLICY_OF["slurm"]}
    assert sum(p.gpus for p in pools) >= int(lab_plan.pools["gpus"].sum())


def test_simulation_is_reproducible_and_compares_every_batch_class(lab_plan: cd.Plan) -> None:
    a = simulate(lab_plan, days=14, seed=3)
    b = simulate(lab_plan, days=14, seed=3)
    assert a.waits.equals(b.waits)
    predicted = set(
        lab_plan.service_levels.filter(pl.col("metric") == "queue_wait_hours")["workload"]
    )
    assert set(a.comparison["workload"]) == predicted
    assert a.comparison["simulated_h"].is_not_null().all()
    assert (a.pools["partial_alloc_gpu_hours"] == 0).all(), "Slurm allocates whole jobs"


def test_a_given_job_table_is_replayed(lab_plan: cd.Plan) -> None:
    jobs = pl.DataFrame(
        {
            "workload": ["foundation-pretraining", "ablation-finetuning"] * 3,
            "submit_h": [0.0, 0.5, 30.0, 30.5, 60.0, 60.5],
            "gpus": [128, 16] * 3,
            "duration_h": [10.0, 2.0] * 3,
        }
    )
    sim = simulate(lab_plan, jobs=jobs, days=4)
    assert sim.jobs.height == 6
    assert set(sim.jobs["pool"]) <= {"lab-h100/H100", "lab-a100/A100"}


def test_unknown_workloads_in_a_job_table_are_named(lab_plan: cd.Plan) -> None:
    jobs = pl.DataFrame({"workload": ["nope"], "submit_h": [0.0], "gpus": [1], "duration_h": [1.0]})
    with pytest.raises(ValueError, match="nope"):
        simulate(lab_plan, jobs=jobs)


def test_an_infeasible_plan_cannot_be_simulated() -> None:
    plan = cd.solve(
        small_scenario([training()], team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.0}})
    )
    with pytest.raises(ValueError, match="feasible plan"):
        simulate(plan)


def test_cli_simulate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "research-lab", "--days", "7"]) == 0
    out = capsys.readouterr().out
    assert "predicted vs simulated" in out
    assert "foundation-pretraining" in out


def test_predicted_vs_simulated_chart(lab_plan: cd.Plan, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cluster_decide import charts

    sim = simulate(lab_plan, days=7)
    svg = charts.to_svg(charts.simulated_waits(sim.comparison))
    assert "predicted (queueing formula)" in svg and "simulated (replay)" in svg
    assert (
        main(["simulate", "research-lab", "--days", "7", "--chart", str(tmp_path / "w.svg")]) == 0
    )
    assert (tmp_path / "w.svg").read_text().startswith("<svg")
