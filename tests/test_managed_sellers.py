"""A managed platform runs only on nodes rented from a company that sells it as a service.

A hospital renting from Azure alone was planned as a shared Slurm-on-Kubernetes pool "run as a
vendor's managed Slurm on Kubernetes (CoreWeave SUNK or Nebius Soperator class) for no fee"
beside AKS: those services are sold with CoreWeave's and Nebius's GPUs, and Azure sells none
(``data/catalog/managed.csv``, sellers). Without it the shared pool pays its own operations, and
separate Slurm and Kubernetes clusters are the cheaper plan.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cluster_decide as cd
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import evaluate_decisions

HOSPITAL = Path(__file__).parent / "data" / "hospital-azure.toml"


def test_the_catalog_says_who_runs_each_platform_as_a_service() -> None:
    managed = cd.load_scenario(HOSPITAL).catalog.managed
    assert managed["shared"].sellers == {"CoreWeave", "Nebius"}
    assert "Azure" in managed["kubernetes"].sellers
    # PCS on AWS; SUNK and Soperator run Slurm-only clusters too. CycleCloud is the team's.
    assert managed["slurm"].sellers == {"AWS", "CoreWeave", "Nebius"}


def test_an_azure_estate_runs_no_vendor_slurm_on_kubernetes() -> None:
    scn = cd.load_scenario(HOSPITAL)
    data = prepare(scn)
    assert (
        data.managed_bar("shared", "A100") == "seller" and data.managed_bar("k8s", "A100") is None
    )
    plan = cd.solve(scn)
    assert plan.status == "optimal" and plan.archetype == "hybrid_separate", plan.explanations
    assert plan.decisions().managed == frozenset({"k8s"})
    assert not [s for s in plan.explanations if "SUNK" in s]


def test_the_evaluator_refuses_a_managed_pool_its_seller_does_not_run() -> None:
    scn = cd.load_scenario(HOSPITAL)
    data = prepare(scn)
    dec = cd.solve(scn).decisions()
    shares = {("research-notebooks", "shared", "A100"): 100}
    shared = replace(
        dec,
        shares={**{k: v for k, v in dec.shares.items() if k[0] != "research-notebooks"}, **shares},
        nodes={**dec.nodes, ("shared", "A100"): 4},
        managed=dec.managed | {"shared"},
    )
    violations = evaluate_decisions(data, shared).violations
    assert (
        "staffing[managed,shared,A100,seller]: Azure, where its A100 nodes are rented, runs no "
        "managed Shared (Slurm on Kubernetes)"
    ) in violations
    assert not [v for v in evaluate_decisions(data, dec).violations if "managed" in v]


def test_half_an_engineer_cannot_run_a_slurm_azure_does_not_manage() -> None:
    """Azure runs no managed Slurm, so half an HPC engineer falls short of a self-managed
    cluster by 0.04 FTE; the reason said "needs 0.5 HPC (Slurm) FTE, 0.5 are on staff"."""
    plan = cd.solve(cd.load_scenario(Path(__file__).parent / "data" / "azure-half-engineers.toml"))
    assert plan.status == "infeasible"
    text = " ".join(plan.explanations)
    assert "the leanest plan needs 0.54 HPC (Slurm) FTE, 0.5 are on staff" in text, text
    assert "Hire 1 HPC (Slurm) engineer (0.54 FTE needed, 0.5 on staff)" in text, text
