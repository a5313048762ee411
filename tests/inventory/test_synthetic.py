"""The synthetic sacct generator: determinism, realism markers, samples, ground truth."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from cluster_decide.inventory.sacct import read_sacct
from cluster_decide.inventory.synthetic import (
    ESTATES,
    SAMPLES,
    generate_jobs,
    generate_sacct,
    write_samples,
)

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "samples"


def test_same_seed_same_bytes_and_different_seed_differs() -> None:
    a = generate_sacct("research-lab", days=10, seed=3)
    assert a == generate_sacct("research-lab", days=10, seed=3)
    assert a != generate_sacct("research-lab", days=10, seed=4)


@pytest.mark.parametrize("estate", list(ESTATES))
def test_export_has_the_quirks_of_real_ones(estate: str) -> None:
    text = generate_sacct(estate, days=90, seed=5)
    lines = text.splitlines()
    ids = [ln.split("|", 1)[0] for ln in lines[1:]]
    states = Counter(
        ln.split("|")[5].split(" ")[0] for ln in lines[1:] if "." not in ln.split("|", 1)[0]
    )
    assert any(i.endswith(".batch") for i in ids) and any(i.endswith(".extern") for i in ids)
    assert any("_[" in i for i in ids) and any("_" in i and "[" not in i for i in ids)
    assert {"COMPLETED", "CANCELLED", "RUNNING"} <= set(states)
    assert any("CANCELLED by " in ln for ln in lines)
    assert any("|None|" in ln for ln in lines) and any("|Unknown|" in ln for ln in lines)
    assert any("gres/gpu:" in ln and ",gres/gpu=" in ln for ln in lines)
    result = read_sacct(text.encode(), tz=ESTATES[estate].tz)
    assert result.report.ambiguous_times > 0, "a DST change falls inside the 90 days"
    assert result.report.malformed_rows == 0
    allocations = [i for i in ids if "." not in i]
    assert result.jobs.height == len(allocations)


def test_read_back_matches_ground_truth() -> None:
    spec = ESTATES["research-lab"]
    truth = generate_jobs(spec, days=30, seed=9)
    jobs = read_sacct(generate_sacct(spec, days=30, seed=9).encode(), tz=spec.tz).jobs
    window = truth.filter(pl.col("submit_s") < 30 * 86400)
    gpu_truth = window.select(pl.col("gpus").sum()).item()
    pending_array = jobs.filter(pl.col("job_id").str.contains(r"\[")).height
    assert jobs.height == window.height + pending_array
    assert jobs.filter(~pl.col("job_id").str.contains(r"\["))["gpus"].sum() == gpu_truth
    interactive = jobs.filter(pl.col("interactive"))
    started = window.filter(
        pl.col("interactive")
        & ~pl.col("never_started")
        & (pl.col("submit_s") + pl.col("wait_s") < 30 * 86400)
    )
    assert interactive.height == started.height


def test_shipped_samples_are_small_readable_and_reproducible(tmp_path: Path) -> None:
    for name in SAMPLES:
        path = SAMPLE_DIR / name
        assert path.stat().st_size < 200_000, name
        result = read_sacct(path, tz=ESTATES[SAMPLES[name][0]].tz)
        assert result.report.malformed_rows == 0 and result.jobs.height > 100
    for path in write_samples(tmp_path):
        shipped = (SAMPLE_DIR / path.name).read_bytes()
        fresh = path.read_bytes()
        if path.suffix == ".gz":
            shipped, fresh = gzip.decompress(shipped), gzip.decompress(fresh)
        assert shipped == fresh, path.name
