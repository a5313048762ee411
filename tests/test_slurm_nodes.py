"""Slurm pools whose Slurm adds nodes for waiting work rent, as Kubernetes pools do.

Slurm's power saving starts powered-down or cloud nodes when jobs queue for them, and the
clouds' Slurm services do it by default (AWS ParallelCluster and PCS launch dynamic nodes for
pending jobs and end them when idle). Most clusters run a fixed node list, so the catalog says
``partial`` and a scenario says where its Slurm adds nodes: ``[platforms.slurm]
node_autoscaling = "native"``. Such a pool may rent its peaks on demand and run interruptible
work on spot. Until 2026-12-08 no Slurm pool could: a university's business-hours notebooks,
Slurm users with 1.5 HPC engineers, were sent to managed Kubernetes with a retrained engineer
($60.5k a month) even where its Slurm could rent its daytime peak for $55.3k
(``tests/data/university-teaching.toml``).
"""

from __future__ import annotations

from pathlib import Path

from builders import fine_tuning, small_scenario

import cluster_decide as cd
from cluster_decide.model.data import prepare
from cluster_decide.planning.explain import money

UNIVERSITY = Path(__file__).parent / "data" / "university-teaching.toml"


def _adds_nodes(scn: cd.Scenario, adds: bool = True) -> cd.Scenario:
    out = scn.set_slurm_adds_nodes(adds)
    assert out.catalog.platforms["slurm"].node_autoscaling == ("native" if adds else "partial")
    return out


def _burst_hours(plan: cd.Plan, pool: str) -> float:
    return float(plan.pools.filter(plan.pools["pool"] == pool)["burst_gpu_hours"].sum())


def test_slurm_adds_no_nodes_unless_the_scenario_says_so() -> None:
    scn = cd.load_scenario(UNIVERSITY)
    assert scn.catalog.platforms["slurm"].node_autoscaling == "partial"
    assert not prepare(scn).pool("slurm").bursts
    assert prepare(_adds_nodes(scn)).pool("slurm").bursts


def test_a_slurm_teaching_cluster_that_adds_nodes_rents_its_daytime_peak() -> None:
    scn = cd.load_scenario(UNIVERSITY)
    plan = cd.solve(_adds_nodes(scn))
    assert plan.status == "optimal" and plan.archetype == "slurm_only", plan.explanations
    assert _burst_hours(plan, "slurm") > 10_000
    assert any(s.startswith("Peaks of L4 are rented on demand") for s in plan.explanations)
    assert not plan.staffing["retrained_in"].sum()
    # Its Slurm a fixed cluster (the catalog's default): Kubernetes rents the peak instead,
    # with an engineer retrained, and the estate pays more.
    static = cd.solve(scn)
    assert static.status == "optimal" and static.archetype != "slurm_only"
    assert static.total_monthly_usd > plan.total_monthly_usd * 1.05


def _lab(**finetune: object) -> cd.Scenario:
    notebooks = {
        "name": "notebooks",
        "kind": "experimentation",
        "interface": "slurm",
        "gpu_types": ["H100"],
        "concurrent_users": 40,
        "gpus_per_user": 1,
        "max_queue_wait_hours": 0.25,
        "mean_session_hours": 2.0,
        "profile": "business_hours",
    }
    return _adds_nodes(
        small_scenario(
            [notebooks, fine_tuning(mean_job_hours=4.0, **finetune)],
            policy={"platforms": ["slurm"]},
            procurement={"mode": "cloud", "horizon_months": 36},
        )
    )


def test_a_slurm_pool_lends_its_troughs_or_rents_its_peaks() -> None:
    """Preemptible fine-tuning fills the notebooks' nights: the pool keeps its nodes for it and
    rents nothing; fine-tuning that may not be preempted leaves it renting its peaks."""
    lends = prepare(_lab(interruptible=True))
    assert any(k[1] == "slurm" for k in lends.flexible)
    assert not lends.pool("slurm").bursts
    rents = prepare(_lab(interruptible=False))
    assert not rents.flexible and rents.pool("slurm").bursts
    plan = cd.solve(_lab(interruptible=False))
    assert plan.status == "optimal" and _burst_hours(plan, "slurm") > 0


def test_interruptible_work_in_a_slurm_pool_that_adds_nodes_may_run_on_spot() -> None:
    data = prepare(_lab(interruptible=True))
    assert any(k[1] == "slurm" for k in data.spot_cents), "a reclaimed node is restarted"
    static = prepare(_adds_nodes(_lab(interruptible=True), False))
    assert not any(k[1] == "slurm" for k in static.spot_cents)


def test_the_verdict_says_what_a_slurm_that_adds_nodes_would_save() -> None:
    """Where the scenario has not said its Slurm adds nodes, the verdict prices it once."""
    scn = cd.load_scenario(UNIVERSITY)
    rec = cd.recommend(scn)
    assert rec.archetype == "kubernetes_only"
    elastic = rec.slurm_adds_nodes
    assert elastic is not None and elastic.archetype == "slurm_only"
    assert elastic.total_monthly_usd == cd.solve(_adds_nodes(scn)).total_monthly_usd
    saving = rec.plan.total_monthly_usd - elastic.total_monthly_usd
    [words] = [c for c in rec.caveats if c.startswith("Slurm clusters are taken to keep")]
    assert f"Slurm only at {money(elastic.total_monthly_usd)} a month, {money(saving)}" in words
    assert words in rec.sentence
    # Said once the scenario says so: nothing more to price.
    assert cd.recommend(_adds_nodes(scn)).slurm_adds_nodes is None


def test_a_machine_rooms_slurm_renting_from_a_cloud_is_no_saving_to_claim() -> None:
    """The HPC centre's owned cluster would rent peaks and spot from a cloud, a second cluster
    there whose cost the model does not count: the verdict says nothing of it."""
    scn = cd.load_scenario(Path(__file__).parent / "data" / "hpc-outgrown.toml")
    elastic = cd.solve(_adds_nodes(scn))
    assert elastic.total_monthly_usd < cd.solve(scn).total_monthly_usd
    rec = cd.recommend(scn)
    assert rec.slurm_adds_nodes is None
    assert not [c for c in rec.caveats if c.startswith("Slurm clusters are taken")]


def test_a_slurm_renting_from_a_second_cloud_says_so() -> None:
    """With such a Slurm a frontier lab's evaluations join the pre-training cluster on H200
    nodes and spot from Nebius beside CoreWeave's H100 nodes: one cluster across two clouds,
    whose second cluster the saving does not count, so the sentence names both companies."""
    rec = cd.recommend(cd.load_scenario(Path(__file__).parent / "data" / "frontier-lab.toml"))
    elastic = rec.slurm_adds_nodes
    assert elastic is not None and elastic.archetype != rec.archetype
    [words] = [c for c in rec.caveats if c.startswith("Slurm clusters are taken to keep")]
    assert "though its slurm cluster would rent from CoreWeave and Nebius" in words
