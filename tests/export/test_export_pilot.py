"""The pilot's templates: data with their reasoning, rendered by a small, strict rule."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cluster_decide.base.resources import ENV, data_dir
from cluster_decide.export import pilot
from cluster_decide.export.words import Names


def test_a_conditional_part_shows_only_with_its_facts() -> None:
    text = [
        "Queue wait",
        {"text": " against the {wait} h target"},
        {"text": ", split.", "when": "split", "else": "."},
    ]
    assert (
        pilot.render(text, {"wait": "4.9", "split": True})
        == "Queue wait against the 4.9 h target, split."
    )
    assert pilot.render(text, {"wait": None, "split": False}) == "Queue wait."
    with pytest.raises(KeyError):
        pilot.render("A day of {workload} jobs", {})  # an unconditional fact must be there


def test_every_test_has_its_words_and_every_figure_its_reason() -> None:
    words = pilot.templates()
    assert [t["workload"] for t in words["tests"]] == [
        *("multi_node", "fine_tuning", "batch", "serving"),
        *("none",) * 4,
    ]
    for t in words["tests"]:
        texts = [str(t[k]) for k in t if k.startswith(("run", "measure", "why"))]
        # A figure is a number in the words (not a placeholder, a metric's name or a unit).
        plain = [re.sub(r"\{[^}]*\}|p99|per 100 nodes", "", x) for x in texts]
        if any(re.search(r"\d", x) for x in plain):
            assert t.get("notes", "").startswith(("assumption:", "source:")), t["test"]
    assert set(words["platforms"]) == {
        "slurm",
        "kubernetes",
        "kubernetes_batch",
        "shared",
        "fallback",
    }


def test_a_broken_template_file_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(data_dir(), tmp_path / "data")
    path = tmp_path / "data" / pilot.TEMPLATES
    path.write_text(
        path.read_text(encoding="utf-8").replace('workload = "batch"', 'workload = "nightly"'),
        encoding="utf-8",
    )
    monkeypatch.setenv(ENV, str(tmp_path / "data"))
    pilot.templates.cache_clear()
    try:
        with pytest.raises(
            ValueError, match=r"pilot\.toml \| tests #3 workload 'nightly' \| use one of"
        ):
            pilot.templates()
    finally:
        pilot.templates.cache_clear()


def test_node_care_reads_as_a_figure_per_platform(bundle: Any) -> None:
    """The replacement test quoted "1.2 on Kubernetes + batch add-on and 1 on Slurm FTE per
    100 nodes"; each figure now carries its unit once, then its platform."""
    frame = pilot.pilot_plan(bundle.plan, bundle.scenario)
    measure = frame.filter(pl.col("test") == "GPU node replacement")["measure"][0]
    assert re.search(r"assumes [\d.]+ FTE per 100 nodes on [^;)]+ and [\d.]+ on ", measure)
    assert "FTE per 100 nodes)" not in measure


def test_a_workload_split_within_one_cluster_names_the_cluster_once(bundle: Any) -> None:
    """Nightly scoring on L40S and L4 in one cluster read "the Kubernetes + batch add-on cluster
    (L40S, 87%) and Kubernetes + batch add-on cluster (L4, 13%)"."""
    plan = bundle.plan
    row = plan.placements.row(0, named=True)
    halves = pl.concat(
        [
            plan.placements.head(1).with_columns(pl.lit(0.87).alias("share")),
            plan.placements.head(1).with_columns(
                pl.lit(0.13).alias("share"), pl.lit("L4").alias("gpu_type")
            ),
        ]
    )
    names = Names.of(plan, bundle.scenario)
    where = pilot._where(halves, names)
    assert where == f"{names.pool(row['pool'])} ({row['gpu_type']} 87%, L4 13%)"
