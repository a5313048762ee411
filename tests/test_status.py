"""Honest statuses: a solve cut short by its time limit is never called infeasible.

CP-SAT's UNKNOWN (no solution within the limit) is ``time_limit``, with no relaxation search, a
sentence that says how long it ran and how to give it more time, and CLI exit code 3.
MODEL_INVALID is an internal error. The workbook's cache never keeps a time-limit result.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from builders import chat_service, fine_tuning, small_scenario, training
from ortools.sat.python import cp_model

import cluster_decide as cd
from cluster_decide.cli import main
from cluster_decide.inputs.scenario import save_scenario
from cluster_decide.model import cpsat
from cluster_decide.model.build import build_model
from cluster_decide.model.data import prepare
from cluster_decide.planning.plan import Status
from cluster_decide.planning.solve import no_answer_plan
from cluster_decide.widgets.cache import PlanCache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from solve_scale import large_scenario


def test_unknown_is_time_limit_and_model_invalid_is_an_error(
    default_scenario: cd.Scenario,
) -> None:
    m = build_model(prepare(default_scenario))
    assert cpsat.status_of(cp_model.UNKNOWN, m) is Status.TIME_LIMIT
    assert cpsat.status_of(cp_model.OPTIMAL, m) is Status.OPTIMAL
    assert cpsat.status_of(cp_model.INFEASIBLE, m) is Status.INFEASIBLE
    with pytest.raises(cpsat.ModelInvalidError, match="internal error"):
        cpsat.status_of(cp_model.MODEL_INVALID, m)


@pytest.fixture(scope="module")
def large() -> cd.Scenario:
    return large_scenario()


@pytest.mark.parametrize("limit_s", [0.01, 0.5])
def test_a_tiny_time_limit_on_the_200_class_estate_never_says_infeasible(
    large: cd.Scenario, limit_s: float
) -> None:
    plan = cd.solve(large, time_limit_s=limit_s)
    assert plan.status in (Status.TIME_LIMIT, Status.FEASIBLE, Status.OPTIMAL)
    if plan.status is Status.TIME_LIMIT:
        assert not plan.feasible
        assert plan.relaxations.is_empty(), "no relaxation search on a time limit"
        words = " ".join(plan.explanations)
        assert "time limit" in words and "--time-limit" in words and " s" in words
        assert "conflict" not in words and "infeasible" not in words.lower()


@pytest.mark.slow
def test_the_200_class_estate_gets_a_plan_that_meets_every_target_near_its_limit(
    large: cd.Scenario,
) -> None:
    # Before: no plan, after 17-33 s. A check of one plan's pooled waits takes seconds here, so
    # the search leaves time for it; the first plan found may still run past the limit by one.
    plan = cd.solve(large, time_limit_s=10.0)
    assert plan.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert plan.service_levels["met"].all()
    assert not cd.evaluate(large, plan).violations
    assert plan.wall_time_s < 20.0
    assert 0.0 <= plan.gap < 0.1  # against the LP floor when the search proved nothing better


def test_cli_exits_3_on_a_time_limit(
    tmp_path: Path, large: cd.Scenario, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "large.toml"
    save_scenario(large, path)
    code = main(["solve", str(path), "--time-limit", "0.01"])
    out = capsys.readouterr().out
    assert code in (0, 3)
    if code == 3:
        assert "time_limit" in out and "--time-limit" in out


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0  # main returns argparse's exit status, never raises
    out = capsys.readouterr().out
    assert "3  no answer within the time limit" in out and "1  infeasible" in out


def test_the_cache_never_keeps_a_time_limit_result(
    default_scenario: cd.Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cluster_decide.widgets import cache

    calls = []

    def cut_short(scn: cd.Scenario, **_kw: object) -> cd.Plan:
        calls.append(scn)
        return no_answer_plan(scn, ["No plan found within the time limit."], 0.1)

    monkeypatch.setattr(cache, "solve", cut_short)
    plans = PlanCache()
    assert plans.solve(default_scenario).status is Status.TIME_LIMIT
    assert default_scenario not in plans
    plans.solve(default_scenario)
    assert len(calls) == 2, "a time-limit result is solved again, not served from the cache"


def _shop(
    finetune_gpu_hours: float,
    gang: int,
    pretrain_gpu_hours: float,
    pretrain_wait_hours: float,
    clusters: dict[str, tuple[str, int]],
    **sections: Any,
) -> cd.Scenario:
    """Generated estates of 2026-12-02: owned H100 clusters of today, gang pre-training on
    Slurm, 8-GPU fine-tuning that may move to containers (and spot), a chat service."""
    return small_scenario(
        [
            training(
                "pretrain",
                gpus_per_job=gang,
                gpu_hours_per_month=pretrain_gpu_hours,
                mean_job_hours=12.0,
                max_queue_wait_hours=pretrain_wait_hours,
                divisible=False,
            ),
            fine_tuning(gpu_hours_per_month=finetune_gpu_hours),
            chat_service(**sections.pop("chat", {})),
        ],
        current={
            "as_of": "2026-12",
            "workloads": {"pretrain": {"platform": "slurm", "users": 10}}
            | ({"chat": {"platform": "kubernetes"}} if "k8s-a" in clusters else {}),
            "clusters": [
                {"name": n, "platform": platform, "gpu_type": "H100", "nodes": nodes}
                for n, (platform, nodes) in clusters.items()
            ],
        },
        **sections,
    )


def _slurm_shop(finetune_gpu_hours: float) -> cd.Scenario:
    """One 12-node Slurm cluster, two HPC engineers, cloud or owned, whichever is cheaper
    (seed 134)."""
    return _shop(
        finetune_gpu_hours,
        64,
        15_000.0,
        6.0,
        {"hpc-a": ("slurm", 12)},
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 0.0}},
        procurement={"mode": "cheapest"},
    )


def _two_clusters(finetune_gpu_hours: float) -> cd.Scenario:
    """16-node Slurm and 1-node Kubernetes clusters, 128-GPU pre-training, a 10 req/s chat
    service; one HPC engineer, cloud from now on (seed 42)."""
    return _shop(
        finetune_gpu_hours,
        128,
        5_000.0,
        24.0,
        {"hpc-a": ("slurm", 16), "k8s-a": ("kubernetes", 1)},
        team={"hpc": {"fte": 1.0}, "kubernetes": {"fte": 0.0}},
        procurement={"mode": "cloud"},
        chat={"peak_requests_per_second": 10.0},
    )


def _optimum_and_neighbour(
    make: Callable[[float], cd.Scenario], hours: float, neighbour_hours: float
) -> tuple[cd.Plan, float]:
    """The plan solved at ``hours`` and what the plan solved at ``neighbour_hours`` costs
    there (it meets every target there: a bound on the optimum)."""
    scn = make(hours)
    ev = cd.evaluate(scn, cd.solve(make(neighbour_hours), workers=1))
    assert ev.feasible, ev.violations
    return cd.solve(scn, workers=1), ev.total_cents / 100


def test_an_optimal_plan_is_never_dearer_than_another_that_meets_every_target() -> None:
    """The plan solved for 20,000 fine-tuning GPU-hours a month also meets every target at
    15,000, at $108,405 a month (two thirds of fine-tuning on the owned Slurm cluster); the
    solve at 15,000 returned $108,960 as optimal (half of it on spot beside the chat service on
    Kubernetes). A service-level cut on "all of fine-tuning and pre-training" on the Slurm
    cluster was stated as "any of fine-tuning": the premise of a divisible class at 100% read
    its placement, not its share. Found by a demand scan of generated estates."""
    plan, bound = _optimum_and_neighbour(_slurm_shop, 15_000.0, 20_000.0)
    assert plan.status == "optimal"
    assert plan.total_monthly_usd <= bound + 0.01


@pytest.mark.xfail(
    strict=True,
    reason="known: a pool cut in a pool that bursts holds for every larger share (docs/model.md, "
    "'a known approximation'); bounding it above where the whole shares need fewer nodes "
    "fixes this estate but doubled the default scenario's solve (111 -> 211 ms), not landed",
)
def test_a_cut_in_a_pool_that_bursts_removes_no_cheaper_plan_that_meets_every_target() -> None:
    """The plan solved at 7,500 fine-tuning GPU-hours also meets every target at 10,000, at
    $114,816 a month; the solve at 10,000 returned $120,764 as optimal, 4.9% dearer. A pool cut
    (chat 100%, fine-tuning 90% on Kubernetes => 4 nodes) was stated for every larger share,
    and all of fine-tuning there rents enough on demand to meet its wait on 3."""
    plan, bound = _optimum_and_neighbour(_two_clusters, 10_000.0, 7_500.0)
    assert plan.status == "optimal"
    assert plan.total_monthly_usd <= bound + 0.01
