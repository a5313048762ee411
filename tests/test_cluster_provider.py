"""A leased cluster of today stands at one company, and grows only there.

The start-up of ``tests/data/startup-leased.toml`` leases 16 H100 nodes on Kubernetes; its
pre-training has outgrown them. Without ``current.clusters[].provider`` the cluster's nodes are
priced at each GPU type's cheapest offer: it grew by CoreWeave H100 nodes and gained a node
pool of Nebius H200 nodes, one Kubernetes cluster in two clouds, and nothing said so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import cluster_decide as cd
from cluster_decide.base.errors import ScenarioError

ESTATE = Path(__file__).parent / "data" / "startup-leased.toml"


def _estate(**cluster: object) -> cd.Scenario:
    scn = cd.load_scenario(ESTATE)
    assert scn.current is not None
    today = scn.current.clusters[0].model_dump(exclude_none=True)
    return scn.update({"current": {"clusters": [{**today, **cluster}]}})


def _rows(plan: cd.Plan, pool: str) -> dict[str, dict[str, object]]:
    return {
        r["gpu_type"]: r
        for r in plan.pools.iter_rows(named=True)
        if r["pool"] == pool and r["nodes"] > 0
    }


def test_a_cluster_without_its_provider_says_which_companies_its_added_nodes_were_priced_at() -> (
    None
):
    plan = cd.solve(_estate())
    assert plan.status == "optimal"
    rows = _rows(plan, "cw-h100")
    assert rows["H100"]["nodes_added"] == 24 and rows["H200"]["nodes_added"] == 1, rows
    assert (rows["H100"]["provider"], rows["H200"]["provider"]) == ("CoreWeave", "Nebius")
    text = " ".join(plan.explanations)
    assert (
        "The cw-h100 cluster's added nodes are priced at the cheapest offer of their GPU type "
        "(H100 from CoreWeave and H200 from Nebius); a leased cluster grows only at the company "
        'it is leased from, so name it with provider = "…" in its [[current.clusters]] entry'
    ) in text, text
    # One H200 node is "it", beside the 24 H100 nodes of the sentence before.
    assert "gains a node pool of 1 H200 node rather than a second cluster being built for it;" in (
        text
    )


def test_a_cluster_at_coreweave_grows_there_and_gains_no_node_group_coreweave_rents_dearly() -> (
    None
):
    """CoreWeave rents H200 on demand only ($6.31 a GPU-hour in the catalog): the API goes to a
    cluster of its own at Nebius' committed price instead of a node pool in the CoreWeave one."""
    scn = _estate(provider="CoreWeave")
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    rows = _rows(plan, "cw-h100")
    assert set(rows) == {"H100"} and rows["H100"]["nodes_added"] == 24, rows
    assert rows["H100"]["provider"] == "CoreWeave"
    text = " ".join(plan.explanations)
    assert "cluster's added nodes are priced" not in text
    assert "The 24 H100 nodes are rented from a GPU cloud (CoreWeave)" in text, text
    ev = cd.evaluate(scn, plan)
    assert ev.feasible and ev.total_cents == round(plan.total_monthly_usd * 100)
    assert plan.total_monthly_usd > cd.solve(_estate()).total_monthly_usd


def test_a_lease_is_priced_at_its_named_provider() -> None:
    """Nebius sells H100 on demand only in the catalog ($2.95): the lease's 7 months of 24 cost
    16 nodes at that price, where the cheapest offer (CoreWeave, 1 year, $2.25) priced it before;
    kept after the lease a node would cost $2.95 too, so the plan moves to CoreWeave, and says
    the lease buys nothing."""
    by_provider = {}
    for provider in (None, "Nebius"):
        plan = cd.solve(_estate() if provider is None else _estate(provider=provider))
        costs = dict(zip(plan.costs["component"], plan.costs["monthly_usd"], strict=True))
        by_provider[provider] = (plan, costs["leases"])
    node_month = 8 * 730
    assert by_provider[None][1] == pytest.approx(16 * 2.25 * node_month * 7 / 24, abs=1)
    plan, lease = by_provider["Nebius"]
    assert lease == pytest.approx(16 * 2.95 * node_month * 7 / 24, abs=1)
    assert "cw-h100" not in set(plan.pools["pool"]), plan.pools
    assert "the plan leaves the cluster unused, so that money buys nothing" in " ".join(
        plan.explanations
    )


@pytest.mark.parametrize("mode", ["on_prem", "cheapest"])
def test_a_leased_cluster_grows_by_rented_nodes_in_an_estate_that_buys(mode: str) -> None:
    """An estate that buys its hardware still leases a cloud cluster, and grows it where it
    stands: rented, no up-front outlay. Without the provider the leased cluster's own 16 nodes
    and the ones it added were "bought outright" (and said to stand in the machine room); now
    they are rented from the cheapest allowed seller, and the plan says to name the company."""
    estate = {"procurement": {"mode": mode}}
    plan = cd.solve(_estate(provider="CoreWeave").update(estate))
    rows = _rows(plan, "cw-h100")
    assert rows["H100"]["nodes_added"] > 0 and rows["H100"]["term"] == "commit_1y", rows
    assert plan.upfront_usd == 0.0
    unnamed = cd.solve(_estate().update(estate))
    rows = _rows(unnamed, "cw-h100")
    assert rows["H100"]["nodes_added"] > 0 and rows["H100"]["term"] != "owned", rows
    assert unnamed.upfront_usd == 0.0
    said = " ".join(unnamed.explanations)
    assert "bought outright" not in said and "machine room" not in said, said
    assert 'name it with provider = "…"' in said


@pytest.mark.parametrize(
    ("cluster", "where", "says"),
    [
        ({"provider": "Coreweave"}, "current.clusters[0].provider", "did you mean 'CoreWeave'?"),
        ({"provider": "Lambda"}, "current.clusters[0].provider", "unknown provider 'Lambda'"),
        (
            {"provider": "Azure"},
            "current.clusters[0].provider",
            "'Azure' rents out no H100 nodes for a cluster in the catalog (data/catalog/offers.csv)"
            ", so the cluster's nodes could not be priced there (a seller of H100 nodes: AWS, "
            "CoreWeave, Nebius; or set H100's prices under [gpus.H100])",
        ),
        (
            {"provider": "CoreWeave", "ownership": "owned", "leased_until": None},
            "current.clusters[0].provider",
            "so no company rents it out",
        ),
    ],
)
def test_a_wrong_provider_is_refused_by_key(
    cluster: dict[str, object], where: str, says: str
) -> None:
    scn = cd.load_scenario(ESTATE)
    assert scn.current is not None
    today = scn.current.clusters[0].model_dump(exclude_none=True)
    today = {k: v for k, v in {**today, **cluster}.items() if v is not None}
    with pytest.raises(ScenarioError) as err:
        scn.update({"current": {"clusters": [today]}})
    assert where in str(err.value) and says in str(err.value), str(err.value)


def test_a_named_provider_cluster_rents_its_peaks_and_spot_there_too() -> None:
    """A managed EKS cluster at AWS kept no nodes and rented its service's every GPU-hour on
    demand from Nebius at $2.95 (the cheapest H100 on demand anywhere), a cluster in two clouds
    again. Its peaks and spot now come from AWS ($6.88 on demand), so the plan moves the
    service to a new cluster rather than rent Nebius GPUs into an AWS one."""
    from cluster_decide.model.data import prepare
    from cluster_decide.planning.evaluation import evaluate_decisions
    from cluster_decide.planning.explain import pool_sellers

    scn = cd.load_scenario(Path(__file__).parent / "data" / "saas-eks.toml")
    data = prepare(scn)
    market = data.rental_market("eks-prod", "H100")
    assert market is not None and market.burst is not None
    assert (market.burst.seller, market.burst.usd_per_gpu_hour) == ("AWS", 6.88)
    assert data.burst_cost("eks-prod", "H100") > data.burst_cents["H100"]
    assert data.rental_market("k8s", "H100") is data.markets["H100"]
    plan = cd.solve(scn)
    sellers = pool_sellers(data, plan.decisions(), evaluate_decisions(data, plan.decisions()))
    assert set(sellers.get("eks-prod", {})) <= {"AWS"}, sellers
    ev = cd.evaluate(scn, plan)
    assert ev.feasible and ev.total_cents == round(plan.total_monthly_usd * 100)
