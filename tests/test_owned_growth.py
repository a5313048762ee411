"""An owned cluster of today grows by bought hardware, and a rented pool may run managed, where
the estate buys where cheapest.

In ``procurement.mode = "cheapest"`` a GPU type's new nodes are bought or rented, whichever
costs less a month. Where renting won, an owned cluster of today could not grow at all (a cloud
node is no part of its fabric, and buying was not on offer), so an HPC centre one node short
for its MPI training moved the training to a new rented cluster and left 19 of its 24 owned
nodes idle: $321k a month against $201k growing the cluster by one bought node. And managed
services were offered only in ``cloud`` mode, so a new pool of rented nodes in ``cheapest`` mode
paid a self-managed build and floor that the same estate in the cloud did not.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from builders import chat_service, embeddings, small_scenario

import cluster_decide as cd
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import evaluate_decisions

DATA = Path(__file__).parent / "data"
OUTGROWN = DATA / "hpc-outgrown.toml"


@pytest.fixture(scope="module")
def outgrown() -> cd.Plan:
    return cd.solve(cd.load_scenario(OUTGROWN))


def test_an_owned_cluster_grows_by_bought_nodes_where_renting_is_the_cheaper_baseline(
    outgrown: cd.Plan,
) -> None:
    scn = cd.load_scenario(OUTGROWN)
    data = prepare(scn)
    market = data.markets["H100"]
    assert market.baseline is not None and market.baseline.term != "owned"  # new pools rent
    assert market.bought is not None and market.bought.onprem is not None
    assert outgrown.status == "optimal"
    cluster = outgrown.pools.filter(pl.col("pool") == "hpc-h100").row(0, named=True)
    # The training stays whole on the cluster it runs on, grown by bought nodes.
    assert cluster["nodes"] > 24 and cluster["nodes_added"] == cluster["nodes"] - 24
    train = outgrown.placements.filter(pl.col("workload") == "mpi-train")
    assert train["pool"].to_list() == ["hpc-h100"]
    # The added nodes are priced as bought hardware: their outlay up front, and the plan's cost
    # recomputed from its decisions alone is the same.
    assert outgrown.upfront_usd == pytest.approx(
        cluster["nodes_added"] * market.bought.onprem.upfront_usd
    )
    again = evaluate_decisions(data, outgrown.decisions())
    assert again.feasible and again.total_cents / 100 == pytest.approx(
        outgrown.total_monthly_usd, abs=0.01
    )
    words = " ".join(outgrown.explanations)
    owned = market.bought.baseline
    assert owned is not None
    assert (
        f"The hpc-h100 cluster grows from 24 to {cluster['nodes']} H100 nodes to hold work that "
        "does not fit in the nodes it has; "
    ) in words
    assert (
        f"bought hardware, the only kind that joins its fabric (${owned.usd_per_gpu_hour:.2f} per "
        f"H100 GPU-hour against ${market.baseline.usd_per_gpu_hour:.2f} to rent)"
    ) in words
    # Its machine room rents nothing: the cloud's nodes are another pool's, not this cluster's.
    assert "stand in your machine room" not in words


def test_in_the_cloud_the_owned_cluster_keeps_its_size(outgrown: cd.Plan) -> None:
    """Buying nothing, the cluster may not grow: the training leaves for a rented cluster, the
    dearer plan the centre got in every mode before."""
    scn = cd.load_scenario(OUTGROWN).update({"procurement": {"mode": "cloud"}})
    plan = cd.solve(scn)
    assert prepare(scn).pool("hpc-h100").node_limit("H100") == 24
    cluster = plan.pools.filter(pl.col("pool") == "hpc-h100")
    assert cluster["nodes_added"].to_list() == [0]
    assert plan.total_monthly_usd > outgrown.total_monthly_usd * 1.2


def test_a_pool_of_rented_nodes_may_run_managed_in_cheapest_mode() -> None:
    """The train-and-serve estate, buying where cheapest, rents its H100s: its shared pool may
    now run as a vendor's managed Slurm on Kubernetes, as it could in ``cloud`` mode (a
    self-managed build before, $898 a month more)."""
    scn = cd.load_scenario("train-and-serve").update({"procurement": {"mode": "cheapest"}})
    assert not prepare(scn).bought_outright("H100")
    plan = cd.solve(scn)
    assert plan.status == "optimal" and plan.decisions().managed == frozenset({"shared"})
    unmanaged = cd.solve(scn.update({"policy": {"managed": False}}))
    assert unmanaged.decisions().managed == frozenset()
    assert plan.total_monthly_usd < unmanaged.total_monthly_usd - 500


def eks_today() -> cd.Scenario:
    """A leased, managed EKS cluster of 2 H100 nodes (room for 8) with its chat service, and an
    embedding service that runs on L40S only; one Kubernetes engineer; buys where cheapest."""
    cluster = {
        "name": "eks",
        "platform": "kubernetes",
        "gpu_type": "H100",
        "nodes": 2,
        "max_nodes": 8,
        "ownership": "leased",
        "managed": True,
    }
    return small_scenario(
        [
            chat_service(gpu_seconds_per_request=0.4, p99_latency_ms=4000.0, profile="diurnal"),
            embeddings(
                gpu_types=["L40S"],
                gpu_seconds_per_request=0.05,
                p99_latency_ms=1000.0,
                profile="diurnal",
                requires=["autoscaling", "rolling_updates", "self_healing"],
            ),
        ],
        team={"kubernetes": {"fte": 1.0}},
        hiring={"allowed": False},
        procurement={"mode": "cheapest"},
        current={
            "workloads": {"chat": {"platform": "kubernetes", "cluster": "eks"}},
            "clusters": [cluster],
        },
    )


def test_a_managed_cluster_holds_no_owned_hardware() -> None:
    """A leased EKS cluster of today, buying where cheapest: L40S nodes are cheapest bought
    outright, and the cluster gained a node group of one owned L40S node ($39.2k a month), which
    no managed service runs. Now its L40S come from the cloud, and the evaluator rejects a
    managed pool holding owned nodes."""
    scn = eks_today()
    data = prepare(scn)
    assert data.bought_outright("L40S") and not data.bought_outright("H100")
    plan = cd.solve(scn)
    assert plan.status == "optimal" and plan.decisions().managed == frozenset({"eks"})
    owned = plan.pools.filter((pl.col("gpu_type") == "L40S") & (pl.col("nodes") > 0))
    assert owned.is_empty()
    dec = plan.decisions()
    nodes = {**dec.nodes, ("eks", "L40S"): 1}
    ev = evaluate_decisions(data, replace(dec, nodes=nodes))
    assert "staffing[managed,eks,L40S,owned]: a managed service holds no owned nodes" in (
        ev.violations
    )


def test_today_keeps_work_on_the_hardware_its_cluster_has() -> None:
    """The pharma group's notebooks run on its 12 owned A100 nodes today; the plan gives them a
    new L40S partition ($1.7k a month cheaper than a 13th A100 node). "Today" re-planned the
    estate as it is, and gave it the same L40S nodes it does not have: its column read
    "104 (88 A100, 16 L40S)", the plan's own figure."""
    from cluster_decide.analysis.today import today_plan, today_vs_plan

    scn = cd.load_scenario(DATA / "pharma-research.toml")
    plan = cd.solve(scn)
    today = today_plan(scn)
    assert today.status == "optimal"
    gpus = {g: int(n) for g, n in plan.pools.group_by("gpu_type").agg(pl.col("gpus").sum()).rows()}
    assert gpus.get("L40S", 0) == 16, plan.pools
    held = today.pools.filter(pl.col("pool") == "hpc-a100")
    assert set(held.filter(pl.col("nodes") > 0)["gpu_type"]) == {"A100"}, today.pools
    assert today.total_monthly_usd > plan.total_monthly_usd
    rows = {r["item"]: r for r in today_vs_plan(scn, plan, today).iter_rows(named=True)}
    assert rows["baseline GPUs"]["today"] == "104 (104 A100)", rows
    assert rows["baseline GPUs"]["plan"] == "104 (88 A100, 16 L40S)", rows
