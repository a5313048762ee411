"""Multi-node jobs run on a pool's own nodes, never on GPUs it rents by the hour.

A team training 16-GPU jobs on Kubernetes with a batch add-on, every GPU rented on demand from
one GPU cloud, was planned as 2 H100 nodes (the least that holds one job) and "peaks" of 48
on-demand GPUs in every hour of the week: three quarters of the training on burst GPUs, whose
nodes arrive one at a time from whatever the market has that hour. A 16-GPU job needs both its
nodes at once on one fabric, so the plan now rents 8 nodes and bursts none of it.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import service, small_scenario, training

import cluster_decide as cd
from cluster_decide.base.vocabulary import DEMAND_UNITS_PER_GPU_PERCENT
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions
from cluster_decide.planning.service import _rented_slot, batch_waits_by_pool


def _team_on_demand(*workloads: dict) -> cd.Scenario:
    return small_scenario(
        list(workloads),
        policy={"platforms": ["kubernetes_batch"]},
        procurement={"mode": "cloud", "commitment": "none", "spot": False},
    )


def test_sixteen_gpu_training_rents_its_nodes_not_burst_gpus() -> None:
    scn = _team_on_demand(training(gpu_hours_per_month=26_000.0, gpus_per_job=16))
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    data = prepare(scn)
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    assert not any(b.any() for b in ev.burst.values()), "no training GPU is rented by the hour"
    [nodes] = plan.pools["nodes"].to_list()
    load = data.combos[("train", "k8s-batch", "H100")].load(100)
    assert nodes * 8 * DEMAND_UNITS_PER_GPU_PERCENT >= int(load.max())
    assert not [s for s in plan.explanations if s.startswith("Peaks of H100")]


def test_the_evaluator_refuses_gang_work_carried_by_burst_gpus() -> None:
    scn = _team_on_demand(training(gpu_hours_per_month=26_000.0, gpus_per_job=16))
    data = prepare(scn)
    # The plan the model made before: two nodes hold one job, burst GPUs the rest.
    ev = evaluate_decisions(
        data, Decisions({("train", "k8s-batch", "H100"): 100}, {("k8s-batch", "H100"): 2})
    )
    assert not ev.feasible
    assert any(v.startswith("gang_fit[k8s-batch,H100,t=") for v in ev.violations), ev.violations


def test_single_node_work_beside_the_training_still_bursts() -> None:
    """The service's business-hours peak is rented by the hour; the training keeps its nodes."""
    scn = _team_on_demand(
        training(gpu_hours_per_month=26_000.0, gpus_per_job=16),
        service(gpu_types=["H100"], peak_requests_per_second=60.0),
    )
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    data = prepare(scn)
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    pool = plan.pools.filter(plan.pools["gpu_type"] == "H100")
    [(name, nodes)] = pool.select("pool", "nodes").rows()
    train = data.combos[("train", name, "H100")].load(100)
    assert nodes * 8 * DEMAND_UNITS_PER_GPU_PERCENT >= int(train.max())
    rented = ev.burst[(name, "H100")]
    assert rented.any() and not np.all(rented == rented[0]), "the service's peaks are rented"


def test_a_waiting_multi_node_job_is_not_given_a_rented_slot() -> None:
    """Pooled waits in a bursting pool give a job that finds no node free a rented one: a job
    of one node, not one that spans two (it runs on the pool's own nodes alone)."""
    scn = _team_on_demand(
        training(gpu_hours_per_month=26_000.0, gpus_per_job=16),
        training("ft", gpu_hours_per_month=2_000.0, gpus_per_job=8),
    )
    data = prepare(scn)
    assert _rented_slot(data, "H100", [("ft", "k8s-batch", "H100")]) == 8
    assert _rented_slot(data, "H100", [("train", "k8s-batch", "H100")]) == 0
    assert (
        _rented_slot(data, "H100", [("ft", "k8s-batch", "H100"), ("train", "k8s-batch", "H100")])
        == 0
    )


def test_gangs_wait_on_the_pools_own_nodes_not_on_rented_gpus() -> None:
    """Fine-tuning's business-hours peaks are rented by the hour; the 16-GPU training beside it
    waits on the pool's own nodes alone. Its predicted wait was 0.45 h beside the fine-tuning
    and 1.58 h alone on the same 8 nodes: the rented GPUs counted as slots its jobs could use."""
    scn = _team_on_demand(
        training(gpu_hours_per_month=26_000.0, gpus_per_job=16, max_queue_wait_hours=4.0),
        training(
            "ft",
            gpu_hours_per_month=12_000.0,
            gpus_per_job=8,
            mean_job_hours=4.0,
            profile="business_hours",
        ),
    )
    data = prepare(scn)
    nodes = {("k8s-batch", "H100"): 8}
    both = Decisions({("train", "k8s-batch", "H100"): 100, ("ft", "k8s-batch", "H100"): 100}, nodes)
    alone = Decisions({("train", "k8s-batch", "H100"): 100}, nodes)
    ev = evaluate_decisions(data, both)
    assert ev.feasible, ev.violations
    assert ev.burst[("k8s-batch", "H100")].any(), "the fine-tuning's peaks are rented"
    key = ("train", "k8s-batch", "H100")
    beside = batch_waits_by_pool(data, both, ev)[key]
    by_itself = batch_waits_by_pool(data, alone, evaluate_decisions(data, alone))[key]
    assert beside >= by_itself > 1.0
    plan = cd.solve(scn)
    levels = plan.service_levels.filter(plan.service_levels["workload"] == "train")
    assert levels["predicted"].to_list() == [pytest.approx(beside)]
