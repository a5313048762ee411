"""The verdict prices a plan bought from one company when a cluster of it spans clouds.

Each GPU type is bought where it is cheapest, the same for every pool, so the default's one
Kubernetes cluster held CoreWeave's H100, Nebius's H200 and AWS's L4 nodes. The plan said so
but not what it was worth: one cluster does not span clouds, and a meeting needs the price of
the real choice. ``cd.recommend`` now solves the estate once per company it may rent from
(``procurement.providers`` naming it alone) and says the cheapest. A cluster of the estate's
own machine room that rents from a cloud spans the two the same way: it is priced renting from
no cloud at all.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from builders import embeddings, small_scenario, training

import cluster_decide as cd
from cluster_decide import analysis as an
from cluster_decide.analysis.recommendation import CLEAR_MARGIN, _no_cloud
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import evaluate_decisions
from cluster_decide.planning.explain import money, pool_sellers

EMBEDDING = Path(__file__).parent / "data" / "embedding-shop.toml"
CENTRE = Path(__file__).parent / "data" / "hpc-centre.toml"


@pytest.fixture(scope="module")
def embedding() -> cd.Recommendation:
    # No flip search: the plan from one company is the property here.
    return cd.recommend(cd.load_scenario(EMBEDDING), inputs=())


def test_a_cluster_that_spans_clouds_is_priced_from_one_company(
    embedding: cd.Recommendation,
) -> None:
    rec = embedding
    sellers = {p.split()[0] for p in rec.plan.pools["provider"]}
    assert sellers == {"AWS", "CoreWeave"}
    single = rec.single
    assert rec.one_provider == "AWS" and single is not None and single.status == "optimal"
    # Checked without the solver: bought from AWS alone it meets every target at that cost,
    # which a restriction of the plan's market can never bring below the plan's.
    alone = cd.load_scenario(EMBEDDING).update({"procurement": {"providers": ["AWS"]}})
    ev = evaluate_decisions(prepare(alone), single.decisions)
    assert ev.feasible, ev.violations
    assert ev.total_cents / 100 == pytest.approx(single.total_monthly_usd, abs=0.01)
    margin = rec.single_margin_usd
    assert 0 <= margin < 0.01 * rec.plan.total_monthly_usd
    # The verdict's runner-up is solved from AWS alone too: the margin holds there.
    assert rec.runner_up is not None
    rival = an.quick_solve(alone.force_archetype(rec.runner_up))
    gap = rival.total_monthly_usd - single.total_monthly_usd
    assert rec.single_words == (
        "The k8s-batch cluster rents from AWS and CoreWeave, each GPU type where it is cheapest, "
        "but a cluster does not span clouds: bought from AWS alone, the best plan costs "
        f"{money(margin)} (0.1%) more a month, and there it still beats Kubernetes only by "
        f"{money(gap)} ({gap / single.total_monthly_usd:.1%})."
    )
    assert rec.single_words in rec.sentence  # the sentence's first line of lines(), said once
    assert sum(rec.single_words in line for line in rec.lines()) == 1
    data = rec.to_dict()["one_provider"]
    assert data["provider"] == "AWS"
    assert data["margin_usd"] == pytest.approx(margin, abs=1e-3)


def test_the_default_from_one_company_costs_more_and_its_verdict_is_checked_there() -> None:
    """CoreWeave alone (its on-demand H100 for the peaks, L40S for the L4 pipeline) is 9% dearer,
    far more than the verdict's 0.1% margin: so the runner-up is solved from CoreWeave alone too,
    and the sentence says by how much the plan still beats it there."""
    scn = cd.load_scenario()
    rec = cd.recommend(scn, inputs=())
    assert rec.one_provider == "CoreWeave" and rec.single is not None
    share = rec.single_margin_usd / rec.plan.total_monthly_usd
    assert 0.05 < share < 0.15
    assert rec.single_margin_usd > rec.margin_usd
    assert rec.single.archetype == rec.archetype and rec.runner_up is not None
    one = scn.update({"procurement": {"providers": ["CoreWeave"]}})
    rival = an.quick_solve(one.force_archetype(rec.runner_up))
    gap = rival.total_monthly_usd - rec.single.total_monthly_usd
    assert gap >= 0  # the free optimum there can never cost more than a forced one
    assert rec.sentence.endswith(
        f"bought from CoreWeave alone, the best plan costs {money(rec.single_margin_usd)} "
        f"({share:.1%}) more a month, and there it still beats a shared Slurm-on-Kubernetes pool "
        f"by {money(gap)} ({gap / rec.single.total_monthly_usd:.1%})."
    )
    kept = {p for (p, _g), n in rec.single.decisions.nodes.items() if n}
    assert "hpc-a" in kept  # today's clusters stay
    # The sentence ends with its caveats, which a view may list apart: one cluster fewer and one
    # company (none of whole nodes: the shared pool rents as much more counted so).
    assert len(rec.caveats) == 2 and rec.caveats[-1] == rec.single_words
    assert rec.caveats[0].startswith("With two clusters instead of three")
    assert rec.sentence.endswith(" " + " ".join(rec.caveats))
    assert rec.to_dict()["caveats"] == list(rec.caveats)


def test_a_plan_whose_clusters_each_rent_from_one_company_says_nothing() -> None:
    scn = small_scenario([training()], procurement={"provider_classes": ["gpu_cloud"]})
    rec = cd.recommend(scn, inputs=())
    assert {p.split()[0] for p in rec.plan.pools["provider"]} == {"CoreWeave"}
    assert rec.one_provider is None and rec.single is None and rec.single_words == ""
    assert math.isnan(rec.single_margin_usd)
    assert rec.to_dict()["one_provider"] is None
    assert "span clouds" not in rec.sentence


def test_one_company_far_dearer_says_a_cluster_per_company_lies_between() -> None:
    """H200 training (cheapest at Nebius) beside an L4 service (sold by AWS alone) on one
    Kubernetes cluster: AWS alone is a third dearer. A cluster per company (Nebius for the
    training, AWS for the service) is what an architect would weigh; the model does not choose
    it, but its cost lies between the plan's and the one company's, and the words say so."""
    scn = small_scenario(
        [
            training(
                gpu_types=["H200"],
                interface="containers",
                gpus_per_job=16,
                gpu_hours_per_month=20000.0,
            ),
            embeddings(),
        ],
        policy={"platforms": ["kubernetes_batch"]},
    )
    rec = cd.recommend(scn, inputs=())
    assert {p.split()[0] for p in rec.plan.pools["provider"]} == {"AWS", "Nebius"}
    assert rec.one_provider == "AWS" and rec.runner_up is None
    share = rec.single_margin_usd / rec.plan.total_monthly_usd
    assert share >= CLEAR_MARGIN
    assert rec.single_words.endswith(
        f"bought from AWS alone, the best plan costs {money(rec.single_margin_usd)} "
        f"({share:.0%}) more a month (a cluster per company, which the model does not choose, "
        "costs between the two)."
    )


def test_a_plan_that_rents_nothing_is_not_bought_from_a_company() -> None:
    """An on-prem estate that owns its nodes and bursts nowhere rents nothing: a one-company
    plan of that kind is said as renting from no cloud at all (``pool_sellers`` is empty)."""
    owned = small_scenario([training()], procurement={"mode": "on_prem", "on_demand_burst": False})
    plan = cd.solve(owned)
    assert plan.feasible and set(plan.pools["term"]) == {"owned"}
    data = prepare(owned)
    assert pool_sellers(data, plan.decisions(), cd.evaluate(owned, plan)) == {}
    rented = small_scenario([training()])
    plan = cd.solve(rented)
    assert pool_sellers(prepare(rented), plan.decisions(), cd.evaluate(rented, plan))


def test_from_one_company_the_inference_platform_changes_its_verdict() -> None:
    """The inference preset's one Kubernetes cluster holds CoreWeave's H100 and L40S, Nebius's
    H200 and AWS's L4 nodes. Bought from CoreWeave alone a shared pool is the cheaper
    architecture: the sentence says so, and by how much (both solved there)."""
    scn = cd.load_scenario("inference-platform")
    rec = cd.recommend(scn, inputs=())
    single = rec.single
    assert rec.one_provider == "CoreWeave" and single is not None and rec.archetype is not None
    assert single.archetype != rec.archetype
    one = scn.update({"procurement": {"providers": ["CoreWeave"]}})
    mine = an.quick_solve(one.force_archetype(rec.archetype))
    gap = mine.total_monthly_usd - single.total_monthly_usd
    assert gap > 0
    assert rec.sentence.endswith(
        f"and is a shared Slurm-on-Kubernetes pool, {money(gap)} "
        f"({gap / mine.total_monthly_usd:.1%}) a month less there than Kubernetes with a batch "
        "add-on, so the verdict changes there."
    )


@pytest.fixture(scope="module")
def centre() -> tuple[cd.Scenario, cd.Plan]:
    scn = cd.load_scenario(CENTRE)
    return scn, cd.solve(scn)


def test_a_machine_room_cluster_that_rents_from_clouds_says_so(
    centre: tuple[cd.Scenario, cd.Plan],
) -> None:
    """A university HPC centre buys its nodes outright; its new Kubernetes cluster rents peaks
    from AWS and Nebius and spot from Nebius. The plan said "The k8s-batch pool's GPUs come from
    two cloud providers", as if the cluster were in the cloud; it stands in the machine room."""
    _scn, plan = centre
    assert plan.status == "optimal"
    k8s = plan.pools.filter(pl.col("pool") == "k8s-batch")
    assert set(k8s["provider_class"]) == {"on_prem"}
    assert k8s["burst_gpu_hours"].sum() > 0 and k8s["spot_gpu_hours"].sum() > 0
    said = [s for s in plan.explanations if "machine room" in s]
    assert said == [
        "The k8s-batch pool's H100 and L40S nodes stand in your machine room and it rents from "
        "AWS (L40S peaks) and Nebius (H100 peaks, H100 spot), but a cluster does not span a "
        "machine room and a cloud: in practice the rented GPUs run as a cluster in the cloud "
        "beside it, whose build and upkeep are not counted here."
    ]
    assert not any("cloud providers, each bought" in s for s in plan.explanations)


def test_the_verdict_prices_a_machine_room_estate_renting_from_no_cloud(
    centre: tuple[cd.Scenario, cd.Plan],
) -> None:
    """Renting nothing, the centre's best plan is a shared Slurm-on-Kubernetes pool, 2% dearer:
    the verdict, measured where the cluster rents from two clouds, changes there."""
    scn, plan = centre
    none = scn.update({"procurement": {"mode": "on_prem", "on_demand_burst": False, "spot": False}})
    alone = cd.solve(none)  # solved apart from the verdict's own analysis solves
    assert alone.status == "optimal"
    assert alone.pools["burst_gpu_hours"].sum() == 0 and alone.pools["spot_gpu_hours"].sum() == 0
    delta = alone.total_monthly_usd - plan.total_monthly_usd
    assert 0 < delta < CLEAR_MARGIN * plan.total_monthly_usd
    assert alone.archetype == "hybrid_shared" != plan.archetype
    mine = cd.solve(none.force_archetype(str(plan.archetype)))
    gap = mine.total_monthly_usd - alone.total_monthly_usd
    data = prepare(scn)
    out, words = _no_cloud(
        scn, data, plan, evaluate_decisions(data, plan.decisions()), "hybrid_shared", 0
    )
    assert out is not None and out.total_monthly_usd == pytest.approx(alone.total_monthly_usd)
    assert words == (
        "The k8s-batch cluster's H100 and L40S nodes stand in your machine room and it rents "
        "from AWS and Nebius, but a cluster does not span a machine room and a cloud: renting "
        "from no cloud at all, the best "
        f"plan costs {money(delta)} ({delta / plan.total_monthly_usd:.1%}) more a month and is a "
        f"shared Slurm-on-Kubernetes pool, {money(gap)} ({gap / mine.total_monthly_usd:.1%}) a "
        "month less there than separate Slurm and Kubernetes clusters, so the verdict changes "
        "there."
    )
