"""Provider classes: a hyperscaler sells L40S, and a fix may allow a provider class.

An enterprise that rents only from hyperscalers serves a model on L40S. An architect expects a
feasible plan on AWS's L40S instances (g6e), and, when the scenario allows only a class that
sells no L40S, the fix "allow a GPU cloud (or a hyperscaler)" checked by solving again.
"""

from __future__ import annotations

import polars as pl
from builders import service, small_scenario

import cluster_decide as cd


def l40s_estate(*classes: str) -> cd.Scenario:
    """One L40S inference service on Kubernetes, renting only from ``classes``."""
    return small_scenario(
        [service("assistant", peak_requests_per_second=40.0)],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 3.0}},
        procurement={"mode": "cloud", "provider_classes": list(classes)},
    )


def test_a_hyperscaler_only_estate_can_serve_on_l40s() -> None:
    plan = cd.solve(l40s_estate("hyperscaler"))
    assert plan.feasible, plan.explanations
    bought = plan.pools.filter((pl.col("nodes") > 0) | (pl.col("burst_gpu_hours") > 0))
    assert set(bought["gpu_type"]) == {"L40S"}
    assert set(bought.filter(pl.col("nodes") > 0)["provider_class"]) <= {"hyperscaler"}
    # A small daytime service rents single-GPU g6e instances by the hour rather than a whole
    # 8-GPU node around the clock.
    assert any("from a hyperscaler (AWS g6e" in s for s in plan.explanations), plan.explanations


def test_a_provider_restriction_gets_the_fix_allow_a_provider_class() -> None:
    scn = l40s_estate("marketplace")  # no marketplace offer of L40S is in the catalog
    plan = cd.solve(scn)
    assert not plan.feasible
    fixes = plan.relaxations.filter(pl.col("change").str.starts_with("provider_class:"))
    assert fixes.height == 1, plan.relaxations
    cls = fixes["change"][0].split(":", 1)[1]
    assert cls in ("hyperscaler", "gpu_cloud")
    assert "provider class" in fixes["sentence"][0] and "L40S" in fixes["sentence"][0]
    fixed = cd.solve(scn.update({"procurement": {"provider_classes": ["marketplace", cls]}}))
    assert fixed.feasible
    assert fixed.total_monthly_usd == fixes["monthly_usd"][0]
