"""Today's clusters may grow: nodes beyond those they have are bought as any new node is.

A lab owns a Slurm cluster of 8 H100 nodes (64 GPUs) and runs pre-training in 64-GPU gangs of
24-hour jobs, queued at most 12 hours. Once the work needs a second gang slot, a head of
platform buys 8 more nodes for the cluster the team already runs, rather than stand up a new
16-node cluster beside it and leave the 8 owned nodes idle. Until 2026-12-02 a cluster of today
could not grow: the research-lab preset at 1.25× its pre-training demand built a new 256-GPU
cluster ($476k a month, against $321k growing the owned one) and the default's verdict named a
9% rise in pre-training demand as a flip that was the same cliff.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from builders import component_usd, small_scenario, training, two_clusters
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_leases import NODES, bank

import cluster_decide as cd
from cluster_decide import charts
from cluster_decide.export import gather, sections
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions

OWNED = 8


def lab(gpu_hours: float, mode: str = "on_prem", **cluster: Any) -> cd.Scenario:
    """Pre-training in 64-GPU gangs on an owned Slurm cluster of 8 H100 nodes, bought on-prem."""
    pretrain = training(
        "pretrain",
        gpus_per_job=64,
        gpu_hours_per_month=gpu_hours,
        mean_job_hours=24.0,
        max_queue_wait_hours=12.0,
        divisible=False,
        requires=["gang_scheduling", "topology_aware"],
    )
    today = {"name": "lab", "platform": "slurm", "gpu_type": "H100", "nodes": OWNED} | cluster
    return small_scenario(
        [pretrain],
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 1.0}},
        procurement={"mode": mode},
        current={
            "as_of": "2026-12",
            "workloads": {"pretrain": {"platform": "slurm", "users": 10}},
            "clusters": [today],
        },
    )


def _nodes(plan: cd.Plan) -> dict[str, tuple[int, int]]:
    return {r["pool"]: (r["nodes"], r["nodes_added"]) for r in plan.pools.iter_rows(named=True)}


def test_an_owned_cluster_grows_rather_than_being_replaced() -> None:
    scn = lab(20_000)
    data = prepare(scn)
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert _nodes(plan) == {"lab": (16, 8)}  # a second 8-node gang slot, on the same cluster
    # Its own 8 nodes cost their running costs, the 8 it grows by what a new node costs.
    own, added = data.node_cost("lab", "H100"), data.added_node_cost("lab", "H100")
    assert 0 < own < added == data.node_cents["H100"]
    assert component_usd(plan, "gpu_capacity") == pytest.approx((8 * own + 8 * added) / 100)
    # Only the added nodes are bought up front.
    per_node = data.markets["H100"].upfront_usd_per_node
    assert plan.upfront_usd == pytest.approx(8 * per_node)
    assert plan.pools["upfront_usd"].to_list() == [pytest.approx(8 * per_node)]
    assert "The lab cluster grows from 8 to 16 H100 nodes" in " ".join(plan.explanations)
    assert "128 × H100 (16 nodes, 8 added)" in charts.architecture_svg(plan, 900)
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    assert ev.total_cents / 100 == pytest.approx(plan.total_monthly_usd, abs=0.01)

    # Frozen at its size, the same work needs a new cluster of 16 nodes: dearer by the 8 owned
    # nodes bought again and a cluster to stand up.
    frozen = cd.solve(lab(20_000, max_nodes=OWNED))
    assert frozen.status == "optimal"
    assert _nodes(frozen) == {"slurm": (16, 0)}
    assert frozen.total_monthly_usd > plan.total_monthly_usd + 8 * (added - own) / 100


def test_the_deck_says_which_cluster_grows_and_what_the_outlay_buys() -> None:
    # The deck's estate slide said "Up front: $2.88M for the nodes we buy" and nothing of
    # which nodes: an executive approving the outlay is told the cluster grows.
    scn = lab(20_000)
    story = {s.key: s for s in sections(gather(cd.solve(scn), scn, run_compare=False))}
    today = story["today"]  # beside the transition table, its facts are the lead
    assert today.lead == (
        "The lab cluster grows from 8 to 16 H100 nodes to hold work that does not fit in the "
        "nodes it has; the 8 added nodes cost what a new node costs. Up front: $2.88M for the "
        "nodes we buy, before the first month."
    )


def test_a_cluster_that_has_room_does_not_grow() -> None:
    plan = cd.solve(lab(4_000))
    assert plan.status == "optimal"
    nodes, added = _nodes(plan)["lab"]
    assert nodes <= OWNED and added == 0
    assert plan.upfront_usd == 0.0
    assert not any("grows" in s for s in plan.explanations)


def test_a_leased_cluster_of_today_is_not_bought_up_front() -> None:
    # A rolling lease under on-prem procurement: its own nodes are rented at the market's price
    # a month, never bought. The deck said "Up front: $2.88M for the nodes we buy" for a leased
    # cluster the plan kept as it was, and the cash flow bought it in month 0.
    kept = cd.solve(lab(4_000, ownership="leased"))
    assert kept.status == "optimal"
    assert _nodes(kept)["lab"][1] == 0
    assert kept.upfront_usd == 0.0
    assert kept.pools["upfront_usd"].to_list() == [0.0]
    flow = kept.cash_flow
    assert flow["upfront_usd"].sum() == 0.0 and flow["resale_usd"].sum() == 0.0
    assert flow.filter(pl.col("month") > 0)["monthly_usd"].to_list() == pytest.approx(
        [kept.total_monthly_usd] * (flow.height - 1)
    )
    # Grown, the nodes it adds are rented too: a leased cluster stands in a company's cloud,
    # whatever the estate buys for itself (they were bought, $2.88M up front, until 2026-12-07).
    scn = lab(20_000, ownership="leased")
    grown = cd.solve(scn)
    assert _nodes(grown) == {"lab": (16, 8)}
    assert prepare(scn).markets["H100"].upfront_usd_per_node > 0  # new pools would buy
    assert grown.upfront_usd == 0.0
    assert grown.pools["term"].to_list() != ["owned"], grown.pools


def test_max_nodes_caps_how_far_a_cluster_grows() -> None:
    # Room for 4 more nodes, not the 8 a second gang slot needs: a new cluster after all.
    plan = cd.solve(lab(20_000, max_nodes=12))
    assert plan.status == "optimal"
    assert _nodes(plan).get("lab", (0, 0))[0] <= 12
    assert _nodes(plan)["slurm"] == (16, 0)


def test_an_owned_cluster_grows_only_by_bought_hardware() -> None:
    # Renting from now on (mode = "cloud"), the lab buys no hardware, and a cloud node is no part
    # of its cluster's fabric: the second gang slot needs a cluster of its own.
    plan = cd.solve(lab(20_000, mode="cloud"))
    assert plan.status == "optimal"
    assert _nodes(plan).get("lab", (0, 0))[1] == 0
    assert prepare(lab(20_000, mode="cloud")).pool("lab").node_limit("H100") == OWNED


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(owned=st.integers(1, 12), gpu_hours=st.sampled_from([3_000, 12_000, 20_000, 30_000]))
def test_growing_never_costs_more_and_more_owned_nodes_never_cost_more(
    owned: int, gpu_hours: int
) -> None:
    # Growth only adds choices, and an owned node is cheaper than a bought one: the optimum
    # with growth is at most the frozen cluster's, and three more owned nodes never raise it.
    grows = cd.solve(lab(gpu_hours, nodes=owned))
    frozen = cd.solve(lab(gpu_hours, nodes=owned, max_nodes=owned))
    more = cd.solve(lab(gpu_hours, nodes=owned + 3))
    assert grows.status == frozen.status == more.status == "optimal"
    assert grows.total_monthly_usd <= frozen.total_monthly_usd + 0.01
    assert more.total_monthly_usd <= grows.total_monthly_usd + 0.01
    nodes, added = _nodes(grows).get("lab", (0, 0))
    assert added == max(0, nodes - owned)


def test_max_nodes_below_the_nodes_of_today_is_an_error() -> None:
    with pytest.raises(cd.ScenarioError, match=r"current\.clusters\[0\]\.max_nodes.*8 nodes"):
        lab(20_000, max_nodes=6)


def test_a_leased_cluster_grows_at_the_market_price_every_month() -> None:
    # Three times the fine-tuning: the leased cluster grows. Its 8 leased nodes are paid under
    # the lease, then at the market price; the added nodes at the market price from month 1,
    # so with every leased node in use the cash is the same in the lease's months and after.
    scn = bank().scale_demand("fine_tuning", 3.0)
    data = prepare(scn)
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    row = plan.pools.filter(pl.col("pool") == "hpc-a").row(0, named=True)
    assert row["nodes"] > NODES and row["nodes_added"] == row["nodes"] - NODES
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    flow = plan.cash_flow["monthly_usd"]
    assert flow[1] == pytest.approx(flow[36], abs=1.0)
    assert float(flow.sum()) == pytest.approx(ev.cash_cents / 100.0 * 36, rel=1e-6)
    price = data.node_cents["H100"]
    assert data.nodes_cents("hpc-a", "H100", NODES + 3) == (
        NODES * data.node_cost("hpc-a", "H100") + 3 * price
    )


def test_a_cluster_of_today_the_plan_needs_less_of_says_what_it_leaves_out() -> None:
    """The plan counts running costs only for the nodes it uses: a sentence says how many of a
    cluster's nodes that leaves out, and that the saving needs them powered down, lent or sold."""
    lab = cd.solve(cd.load_scenario("research-lab"), workers=1)
    assert (
        "The lab-h100 cluster needs 22 of its 24 H100 nodes: no running costs are counted for "
        "the other 2 H100 nodes ($7.6k a month of support, power and space), which holds only "
        "if they are powered down, lent or sold."
    ) in lab.explanations
    unused = cd.solve(two_clusters(10_000.0), workers=1)
    assert unused.pools.filter(pl.col("pool") == "k8s-a").is_empty()
    assert any(
        s.startswith("The plan leaves the k8s-a cluster (1 H100 node) unused: no running costs")
        and s.endswith("which holds only if it is powered down, lent or sold.")
        for s in unused.explanations
    ), unused.explanations


def refresh(**cluster: Any) -> cd.Scenario:
    """An owned 8-node A100 Slurm cluster running its climate gangs; new H100-only pre-training."""
    climate = training("climate", gpu_types=["A100"], gpu_hours_per_month=3_000.0)
    pretrain = training(
        "pretrain", gpus_per_job=32, gpu_hours_per_month=12_000.0, max_queue_wait_hours=24.0
    )
    today = {"name": "hpc", "platform": "slurm", "gpu_type": "A100", "nodes": OWNED} | cluster
    return small_scenario(
        [climate, pretrain],
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 0.0}},
        procurement={"mode": "on_prem"},
        policy={"platforms": ["slurm"]},
        current={
            "as_of": "2026-12",
            "workloads": {"climate": {"platform": "slurm", "users": 10}},
            "clusters": [today],
        },
    )


def test_a_cluster_of_today_gains_a_partition_of_a_gpu_type_it_lacks() -> None:
    # New work needs H100 and the A100 cluster has none: a head of platform adds an H100
    # partition to the Slurm cluster the team runs. Until 2026-12-06 a cluster of today held only
    # its own GPU type, so the plan built a second Slurm cluster beside it (engineer-weeks to
    # stand up, a second control plane to run).
    scn = refresh()
    data = prepare(scn)
    assert data.pool("hpc").gpu_types == ("A100", "H100")
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    h100 = plan.pools.filter(pl.col("gpu_type") == "H100").row(0, named=True)
    assert h100["pool"] == "hpc" and h100["existing"]
    assert h100["nodes"] >= 4 and h100["nodes_added"] == h100["nodes"]
    assert set(plan.pools["pool"]) == {"hpc"}
    assert component_usd(plan, "cluster_build") == 0.0
    # The H100 nodes are bought at the market's price, up front; the A100 nodes are paid for.
    per_node = data.markets["H100"].upfront_usd_per_node
    assert plan.upfront_usd == pytest.approx(h100["nodes"] * per_node)
    assert data.node_cost("hpc", "H100") == data.node_cents["H100"]
    assert data.node_cost("hpc", "A100") < data.node_cents["A100"]
    assert h100["provider"] != "today" and h100["upfront_usd"] == pytest.approx(
        h100["nodes"] * per_node
    )
    words = " ".join(plan.explanations)
    assert (
        f"The hpc cluster gains a partition of {h100['nodes']} H100 nodes rather than a second "
        "cluster being built for them" in words
    )
    assert "runs on hpc on H100" in words
    assert f"({h100['nodes']} nodes, new partition)" in charts.architecture_svg(plan, 900)
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    assert ev.total_cents / 100 == pytest.approx(plan.total_monthly_usd, abs=0.01)
    story = {s.key: s for s in sections(gather(plan, scn, run_compare=False))}
    assert story["today"].lead.startswith(
        f"The hpc cluster gains a partition of {h100['nodes']} H100 nodes rather than a second "
        "cluster being built for them"
    )


def test_max_nodes_caps_a_cluster_s_node_groups_together() -> None:
    # Room for 4 more nodes in all: an H100 partition of 4 or fewer, the rest elsewhere.
    scn = refresh(max_nodes=OWNED + 4)
    data = prepare(scn)
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert plan.pools.filter(pl.col("pool") == "hpc")["nodes"].sum() <= OWNED + 4
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    # The evaluator counts the groups together: 8 A100 and 5 H100 nodes break the limit of 12,
    # though each fits it alone.
    over = evaluate_decisions(
        data,
        Decisions(
            {("climate", "hpc", "A100"): 100, ("pretrain", "hpc", "H100"): 100},
            {("hpc", "A100"): OWNED, ("hpc", "H100"): 5},
        ),
    )
    assert "capacity[hpc]: 13 nodes of all its GPU types exceed the pool's limit of 12" in (
        over.violations
    )


def test_a_cluster_gains_only_node_groups_that_fit_it() -> None:
    # Renting from now on, an owned cluster gains no cloud nodes (no part of its fabric); a
    # leased one gains the market's baseline nodes of any GPU type its work may use.
    assert prepare(refresh()).pool("hpc").gpu_types == ("A100", "H100")
    cloud = refresh().update({"procurement": {"mode": "cloud"}})
    assert prepare(cloud).pool("hpc").gpu_types == ("A100",)
    leased = prepare(refresh(ownership="leased").update({"procurement": {"mode": "cloud"}}))
    assert leased.pool("hpc").gpu_types == ("A100", "H100")
    assert leased.node_cost("hpc", "H100") == leased.node_cents["H100"]


def test_a_lease_whose_nodes_the_plan_leaves_while_its_cluster_gains_a_group_says_so() -> None:
    # A leased A100 cluster, paid until 2027-12; the only work needs H100, so the cluster gains
    # an H100 partition and none of the leased A100 nodes is used. The lease sentence said
    # "the plan leaves the cluster unused" of a cluster the plan runs.
    pretrain = training(
        "pretrain", gpus_per_job=32, gpu_hours_per_month=12_000.0, max_queue_wait_hours=24.0
    )
    today = {
        "name": "hpc",
        "platform": "slurm",
        "gpu_type": "A100",
        "nodes": OWNED,
        "ownership": "leased",
        "leased_until": "2027-12",
    }
    scn = small_scenario(
        [pretrain],
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 0.0}},
        procurement={"mode": "cloud"},
        policy={"platforms": ["slurm"]},
        current={"as_of": "2026-12", "clusters": [today]},
    )
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert _nodes(plan)["hpc"][0] == _nodes(plan)["hpc"][1] > 0  # H100 nodes, all added
    words = " ".join(plan.explanations)
    assert "The hpc cluster gains a partition of" in words
    assert "the plan uses none of its A100 nodes, so that money buys nothing" in words
    assert "leaves the cluster unused" not in words


def test_spare_nodes_that_hold_the_room_the_plan_needs_must_leave_the_racks() -> None:
    # Room for 10 nodes: the plan runs 2 A100 and 4 new H100 nodes, so 2 of the 6 idle A100
    # nodes must go for the H100 partition to fit; powered down, they still fill the racks.
    crowded = cd.solve(refresh(max_nodes=10))
    assert crowded.pools.filter(pl.col("pool") == "hpc")["nodes"].to_list() == [2, 4]
    words = " ".join(crowded.explanations)
    assert (
        "which holds only if they are powered down, lent or sold, and 2 of them leave the "
        "racks: the cluster has room for 10 nodes and the plan runs 6."
    ) in words
    roomy = " ".join(cd.solve(refresh(max_nodes=12)).explanations)
    assert "leave the racks" not in roomy and "powered down, lent or sold." in roomy
