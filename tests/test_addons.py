"""A Kubernetes cluster of today gains a batch scheduler add-on instead of being replaced.

A start-up runs its chat service on a leased EKS cluster of 4 H100 nodes and starts
post-training in 16-GPU gangs that need gang scheduling. A platform architect installs Kueue (or
Volcano, or KAI) on the cluster it has and grows it; building a second Kubernetes cluster for
the batch scheduler, and handing back the lease of the first, is the answer an expert rejects.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import chat_service, small_scenario, training

import cluster_decide as cd
from cluster_decide.export import gather, sections
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions


def startup(post_training: bool = True, gang: int = 16, **cluster: Any) -> cd.Scenario:
    """A chat service on a leased EKS cluster; gang-scheduled post-training if asked."""
    workloads = [chat_service()]
    if post_training:
        workloads.append(
            training(
                "post-train",
                interface="containers",
                gpus_per_job=gang,
                gpu_hours_per_month=8000.0 * gang / 16,
            )
        )
    eks = {
        "name": "eks",
        "platform": "kubernetes",
        "gpu_type": "H100",
        "nodes": 4,
        "managed": True,
        "ownership": "leased",
        "leased_until": "2027-12",
    } | cluster
    return small_scenario(
        workloads,
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 3.0}},
        procurement={"mode": "cloud"},
        current={
            "as_of": "2026-12",
            "workloads": {"chat": {"platform": "kubernetes", "users": 4}},
            "clusters": [eks],
        },
    )


def test_the_cluster_of_today_gains_the_add_on_rather_than_a_new_cluster() -> None:
    plan = cd.solve(startup())
    assert plan.status == "optimal"
    assert plan.pools["pool"].to_list() == ["eks+batch"]
    assert plan.pools["existing"].to_list() == [True]
    assert set(plan.placements["pool"].to_list()) == {"eks+batch"}
    # The one-time cost is the add-on's install (the self-managed kinds' build weeks apart, run
    # managed or not: two weeks of a Kubernetes engineer), not a cluster's build.
    scn = startup()
    people = prepare(scn).people
    assert people is not None
    catalog = scn.catalog.people
    assert catalog is not None
    weeks = catalog.build_weeks("kubernetes_batch") - catalog.build_weeks("kubernetes")
    assert weeks == 2
    week = weeks * scn.loaded_cost_usd_per_year("kubernetes") / 52.0
    horizon = scn.procurement.horizon_months
    assert people.managed["eks+batch"].build_cents * horizon / 100.0 == pytest.approx(
        week, rel=0.01
    )
    text = " ".join(plan.explanations)
    assert (
        "The eks cluster of today is kept and gains a batch scheduler add-on (Kueue, Volcano or "
        "KAI) for gang scheduling (post-train): " in text
    )
    assert "New cluster" not in text
    # The lease is used by the cluster with its add-on, not left idle.
    assert "the plan uses all of its nodes" in text
    assert "leaves the cluster unused" not in text
    # The deck's today slide: the new work starts on the cluster of today; nothing is built.
    story = {s.key: s for s in sections(gather(plan, startup(), run_compare=False))}
    assert story["today"].title == (
        "Nothing moves: 1 new workload starts on the clusters of today, the rest stay where "
        "they run"
    )


def test_a_cluster_that_needs_no_add_on_stays_as_it_is() -> None:
    plan = cd.solve(startup(post_training=False))
    assert plan.status == "optimal"
    assert plan.pools["pool"].to_list() == ["eks"]
    assert "batch scheduler add-on" not in " ".join(plan.explanations)


def test_the_cluster_runs_with_its_add_on_or_without_never_both() -> None:
    data = prepare(startup())
    both = Decisions(
        shares={("chat", "eks", "H100"): 100, ("post-train", "eks+batch", "H100"): 100},
        nodes={("eks", "H100"): 4, ("eks+batch", "H100"): 4},
    )
    violations = evaluate_decisions(data, both).violations
    assert any(v.startswith("linking[cluster eks]") for v in violations), violations


def test_a_policy_without_plain_kubernetes_still_keeps_the_cluster() -> None:
    plan = cd.solve(startup().restrict_platforms(["slurm", "kubernetes_batch", "shared"]))
    assert plan.feasible
    assert plan.pools["pool"].to_list() == ["eks+batch"]


def test_an_owned_cluster_is_used_for_new_gang_work_rather_than_buying_a_second() -> None:
    # A retailer's owned on-premises Kubernetes cluster of 12 H100 nodes, a few of them busy
    # with a service: new 32-GPU training belongs on its idle nodes, with the add-on. Before
    # the add-on pool existed the plan bought 8 new nodes ($2.9M up front) for a new
    # Kubernetes cluster with the add-on and left 9 owned nodes idle.
    scn = startup(gang=32, ownership="owned", managed=False, leased_until=None, nodes=12).update(
        {"procurement": {"mode": "on_prem"}}
    )
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert plan.pools["pool"].to_list() == ["eks+batch"]
    assert plan.pools["upfront_usd"].sum() == 0


def test_a_cluster_implied_by_today_pays_the_add_on_unless_work_runs_on_it_today(
    default_scenario: cd.Scenario, default_plan: cd.Plan
) -> None:
    # The default names no Kubernetes cluster, only workloads on Kubernetes: that cluster is
    # `k8s`, and the add-on pool its add-on, installed for fine-tuning's fair-share queues.
    text = " ".join(default_plan.explanations)
    assert (
        "The Kubernetes cluster of today is kept and gains a batch scheduler add-on (Kueue, "
        "Volcano or KAI) for fair-share queues (model-finetuning) and queues that pack batch "
        "work into fewer GPUs (feature-pipeline, model-finetuning and nightly-eval): $8.8k of "
        "engineering once"
    ) in text
    assert set(default_plan.pools["pool"].to_list()) >= {"k8s-batch"}
    people = prepare(default_scenario).people
    assert people is not None and people.build_cents["k8s-batch"] > 0
    # Fine-tuning queued by the add-on today: it is installed, and costs nothing more.
    running = default_scenario.update(
        {"current": {"workloads": {"model-finetuning": {"platform": "kubernetes_batch"}}}}
    )
    people = prepare(running).people
    assert people is not None and people.build_cents["k8s-batch"] == 0
    plan = cd.solve(running)
    assert "batch scheduler add-on (Kueue" not in " ".join(plan.explanations)
    assert plan.total_monthly_usd < default_plan.total_monthly_usd


def test_the_add_on_sentence_says_what_it_gains_where_no_workload_asks_for_it() -> None:
    """The inference platform asks for no capability the add-on has, yet its plan installs it:
    queued admission packs its batch classes into about 10% fewer GPUs (utilization.csv). The
    sentence said only what the install costs, and a meeting would ask why."""
    plan = cd.solve(cd.load_scenario("inference-platform"))
    text = " ".join(plan.explanations)
    assert (
        "gains a batch scheduler add-on (Kueue, Volcano or KAI) for queues that pack batch work "
        "into fewer GPUs (adapter-finetuning and nightly-scoring): $9.2k of engineering once"
    ) in text


def test_a_listed_cluster_runs_its_add_on_when_work_runs_on_it_today() -> None:
    # Post-training is queued by Kueue today and the one Kubernetes cluster listed is plain:
    # the add-on is on that cluster, so it is not installed (and paid for) again.
    scn = startup().update(
        {"current": {"workloads": {"post-train": {"platform": "kubernetes_batch", "users": 3}}}}
    )
    data = prepare(scn)
    eks = data.pool("eks")
    assert eks.platform == "kubernetes_batch" and not eks.adds_on
    assert "eks+batch" not in {p.name for p in data.pools}
    assert data.people is not None and data.people.build_cents["eks"] == 0
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert plan.pools["pool"].to_list() == ["eks"]
    assert plan.one_time_usd == 0.0
    assert "gains a batch scheduler add-on" not in " ".join(plan.explanations)
    # With two plain Kubernetes clusters listed, which one has it is unknown: each may gain it.
    second = {"name": "gke", "platform": "kubernetes", "gpu_type": "L40S", "nodes": 2}
    both = scn.update({"current": {"clusters": [*scn.to_dict()["current"]["clusters"], second]}})
    names = {p.name for p in prepare(both).pools}
    assert {"eks", "eks+batch", "gke", "gke+batch"} <= names
