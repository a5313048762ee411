"""Inventory charts: each builds from a synthetic sample, stays small, and renders offline."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from cluster_decide.charts import inventory as charts
from cluster_decide.inventory.classification import classify
from cluster_decide.inventory.demand import Demand, derive_workloads
from cluster_decide.inventory.sacct import read_sacct
from cluster_decide.inventory.synthetic import ESTATES

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples"


@pytest.fixture(scope="module")
def sample() -> tuple[pl.DataFrame, Demand]:
    path = SAMPLE / "enterprise-mixed-90d.sacct.txt.gz"
    jobs = read_sacct(path, tz=ESTATES["enterprise-mixed"].tz).jobs
    classified = classify(jobs).jobs
    return classified, derive_workloads(classified, capacity_gpus=400)


def _build(name: str, classified: pl.DataFrame, demand: Demand) -> object:
    return {
        "gpu_hours_by_class": lambda: charts.gpu_hours_by_class(classified),
        "hour_of_week": lambda: charts.hour_of_week(demand.busy),
        "gang_sizes": lambda: charts.gang_sizes(classified),
        "queue_wait_cdf": lambda: charts.queue_wait_cdf(classified),
        "utilization": lambda: charts.utilization(demand.busy, capacity_gpus=400),
        "busy_gpus": lambda: charts.utilization(demand.busy),
    }[name]()


@pytest.mark.parametrize(
    "name",
    [
        "gpu_hours_by_class",
        "hour_of_week",
        "gang_sizes",
        "queue_wait_cdf",
        "utilization",
        "busy_gpus",
    ],
)
def test_chart_renders_to_svg(name: str, sample: tuple[pl.DataFrame, Demand]) -> None:
    classified, demand = sample
    chart = _build(name, classified, demand)
    spec = chart.to_dict(validate=True)  # type: ignore[attr-defined]
    assert len(json.dumps(spec)) < 200_000, "charts embed aggregates, not jobs"
    svg = charts.to_svg(chart)
    assert svg.lstrip().startswith("<svg") and "</svg>" in svg
    assert spec["title"]["text"].split()[0] in svg


def test_gpu_hours_chart_adds_up_to_the_classified_total(
    sample: tuple[pl.DataFrame, Demand],
) -> None:
    classified, _ = sample
    spec = charts.gpu_hours_by_class(classified).to_dict()
    drawn = sum(r["gpu_hours"] for r in spec["data"]["values"])
    gpu = classified.filter(pl.col("kind").is_not_null() & (pl.col("kind") != "excluded"))
    total = gpu.select((pl.col("gpus") * pl.col("elapsed_s")).sum() / 3600).item()
    assert drawn == pytest.approx(total)


def test_gang_sizes_shares_sum_to_one(sample: tuple[pl.DataFrame, Demand]) -> None:
    classified, _ = sample
    values = charts.gang_sizes(classified).to_dict()["data"]["values"]
    for measure in ("jobs", "GPU-hours"):
        assert sum(v["share"] for v in values if v["m"] == measure) == pytest.approx(1.0)
    assert {v["size"] for v in values} >= {"1", "8", "256"}


def test_charts_of_an_empty_log_still_render() -> None:
    from cluster_decide.inventory.demand import busy_gpus
    from cluster_decide.inventory.jobs import empty_jobs

    classified = classify(empty_jobs()).jobs
    busy = busy_gpus(empty_jobs())
    for chart in (
        charts.gpu_hours_by_class(classified),
        charts.gang_sizes(classified),
        charts.queue_wait_cdf(classified),
        charts.hour_of_week(busy),
        charts.utilization(busy, capacity_gpus=8),
    ):
        assert "</svg>" in charts.to_svg(chart)
