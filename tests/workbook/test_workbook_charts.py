"""Charts: one palette, offline SVG/PNG, and a readable answer for every kind of plan."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import cluster_decide as cd
from cluster_decide import charts
from cluster_decide.base.vocabulary import PLATFORM_LABELS
from cluster_decide.widgets import PlanCache


def test_every_chart_renders_offline_as_svg(plan_cache: PlanCache) -> None:
    plan = plan_cache.solve(cd.load_scenario())
    for make in (
        charts.architecture,
        charts.cost_breakdown,
        charts.placements,
        charts.service_levels,
        charts.staffing,
    ):
        svg = charts.to_svg(make(plan))
        assert svg.startswith("<svg") and "</svg>" in svg


def test_architecture_names_every_pool_gpu_type_and_workload(plan_cache: PlanCache) -> None:
    plan = plan_cache.solve(cd.load_scenario())
    svg = charts.to_svg(charts.architecture(plan))
    for platform in plan.pools["platform"].unique():
        # Each block by its platform's name; a pool id only where two pools share a platform.
        assert f">{PLATFORM_LABELS[platform]}<" in svg
    assert "k8s-batch" not in svg and "GPU-h burst" not in svg
    for gpu in plan.pools.filter(pl.col("gpus") > 0)["gpu_type"].unique():
        assert f"× {gpu}" in svg
    for workload in plan.placements["workload"].unique():
        assert workload in svg


def test_platform_colours_are_the_palette_and_distinct() -> None:
    colours = list(charts.PLATFORM_COLORS.values())
    assert len(set(colours)) == len(colours) == 4
    assert set(colours) <= set(charts.PALETTE.values())
    assert set(PLATFORM_LABELS) == set(charts.PLATFORM_COLORS)


def test_png_is_scaled(plan_cache: PlanCache) -> None:
    plan = plan_cache.solve(cd.load_scenario())
    png = charts.to_png(charts.staffing(plan), scale=2)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width > 2 * 500


def test_infeasible_plan_charts_say_so(plan_cache: PlanCache) -> None:
    plan = plan_cache.solve(cd.load_scenario().set_budget(500_000))
    assert not plan.feasible
    assert "No feasible plan" in charts.to_svg(charts.architecture(plan))
    assert "No feasible plan" in charts.to_svg(charts.cost_breakdown(plan))


def test_compare_chart_marks_cheapest_and_infeasible() -> None:
    frame = pl.DataFrame(
        {
            "archetype": ["hybrid_separate", "kubernetes_batch", "slurm_only"],
            "status": ["optimal", "optimal", "infeasible"],
            "total_monthly_usd": [1.2e6, 1.25e6, float("nan")],
            "delta_usd": [0.0, 5e4, float("nan")],
            "note": ["", "", "needs autoscaling"],
        }
    )
    svg = charts.to_svg(charts.compare_archetypes(frame))
    assert "(cheapest)" in svg and "infeasible" in svg and "+$50k" in svg


def test_staffing_marks_the_staff_with_the_people_the_plan_hires_or_retrains(
    plan_cache: PlanCache,
) -> None:
    # The hospital has no Kubernetes engineer and needs one: it hires one and retrains one.
    # Against today's tick alone (0 FTE) the need read as a shortfall nothing covered.
    hospital = Path(__file__).parents[1] / "data" / "hospital-institute.toml"
    plan = plan_cache.solve(cd.load_scenario(hospital))
    k8s = plan.staffing.filter(pl.col("skill") == "kubernetes").row(0, named=True)
    assert k8s["available_fte"] == 0 and k8s["hires"] + k8s["retrained_in"] >= 1
    spec = charts.staffing(plan).to_dict()
    ticks = [
        layer["data"]["values"]
        for layer in spec["layer"]
        if layer["mark"].get("color") == charts.PALETTE["grey"]
    ]
    assert ticks and [(r["skill"], r["grown"]) for r in ticks[0]] == [
        ("Kubernetes", k8s["hires"] + k8s["retrained_in"])
    ]
    assert "grey tick: with the people it hires or retrains" in charts.to_svg(charts.staffing(plan))
    # A plan that neither hires nor retrains draws today's tick only.
    default = plan_cache.solve(cd.load_scenario())
    assert default.staffing["hires"].sum() == default.staffing["retrained_in"].sum() == 0
    assert "grey tick" not in charts.to_svg(charts.staffing(default))
