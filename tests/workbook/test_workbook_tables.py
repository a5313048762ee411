"""Notebook tables: display names, units, separators, percentages, and every row."""

from __future__ import annotations

import polars as pl
import pytest

from cluster_decide.widgets.tables import readable, styled


def test_ids_become_display_names() -> None:
    frame = pl.DataFrame(
        {
            "archetype": ["kubernetes_batch", "slurm_only"],
            "kind": ["distributed_training", "realtime_inference"],
            "status": ["optimal", "infeasible"],
            "reason": ["", "the forced archetype slurm_only cannot host every workload"],
        }
    )
    out = readable(frame)
    assert out["archetype"].to_list() == ["Kubernetes + batch add-on", "Slurm only"]
    assert out["kind"].to_list() == ["Distributed training", "Real-time inference"]
    assert out["status"][1] == "cannot work"
    assert "slurm_only" not in out["reason"][1] and "Slurm only" in out["reason"][1]


def test_styled_table_formats_and_shows_every_row() -> None:
    n = 60
    frame = pl.DataFrame(
        {
            "workload": [f"w{i:02d}" for i in range(n)],
            "monthly_usd": [1250563.04 + i for i in range(n)],
            "share": [0.125] * n,
            "gpus": [1234] * n,
        }
    )
    html = styled(
        frame,
        {
            "workload": ("Workload", "text"),
            "monthly_usd": ("Monthly cost (USD)", "usd"),
            "share": ("Share of GPU-hours", "pct"),
            "gpus": ("GPUs", "int"),
        },
    ).as_raw_html()
    assert "$1,250,563" in html and "12.5%" in html and "1,234" in html
    assert "Monthly cost (USD)" in html
    assert all(f"w{i:02d}" in html for i in range(n))  # no row hidden
    assert "shape:" not in html


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown formats"):
        styled(pl.DataFrame({"a": [1]}), {"a": ("A", "money")})
