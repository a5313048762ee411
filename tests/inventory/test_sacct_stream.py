"""The sacct reader streams: small batches give the same table and report as one big read."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import cluster_decide.inventory.detect as detect
import cluster_decide.inventory.sacct as sacct_module
from cluster_decide.inventory.detect import line_batches
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.sacct import read_sacct
from cluster_decide.inventory.synthetic import ESTATES, generate_sacct

TZ = ESTATES["enterprise-mixed"].tz


@pytest.fixture(scope="module")
def text() -> str:
    lines = generate_sacct("enterprise-mixed", days=14, seed=6, scale=0.1).splitlines()
    lines[40] = "999|broken"
    lines[900] = ""
    lines[-30] = "# a comment line"
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("gz", [False, True])
def test_small_batches_read_the_same_as_one(
    text: str, gz: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = read_sacct(text.encode(), tz=TZ)
    path = tmp_path / ("x.txt.gz" if gz else "x.txt")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    monkeypatch.setattr(detect, "BATCH_BYTES", 20_000)
    seen: list[tuple[int, int]] = []
    streamed = read_sacct(path, tz=TZ, progress=lambda d, t: seen.append((d, t)))
    assert len(seen) > 5
    assert_frame_equal(streamed.jobs, whole.jobs)
    a, b = streamed.report, whole.report
    assert (a.rows_read, a.rows_used, a.jobs_kept, a.steps_collapsed, a.skipped) == (
        b.rows_read,
        b.rows_used,
        b.jobs_kept,
        b.steps_collapsed,
        b.skipped,
    )
    assert [x.line for x in a.bad_lines] == [41]
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and seen[-1] == (a.rows_read, a.rows_read)
    # Projected totals stay above the rows done until the end; for plain text they land near
    # the truth (gzip reads compressed input 128 KB ahead, coarse for a file this small).
    assert all(d < t for d, t in seen[:-1])
    if not gz:
        assert all(abs(t - a.rows_read) < 0.2 * a.rows_read for _, t in seen[len(seen) // 2 :])


def test_batches_hold_whole_numbered_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    rows = [f"line {i} " + "x" * (i % 37) for i in range(2000)]
    path.write_text("\n".join(rows))  # no final newline
    batches = list(line_batches(path, batch_bytes=1000))
    assert len(batches) > 20 and batches[-1].last and not batches[0].last
    lines = pl.concat([b.lines for b in batches])
    assert lines["line_no"].to_list() == list(range(1, 2001))
    assert lines["text"].to_list() == rows
    assert all(b.lines.height for b in batches)


@pytest.mark.parametrize("gz", [False, True])
def test_a_line_longer_than_a_batch_stays_whole(gz: bool, tmp_path: Path) -> None:
    rows = ["short", "y" * 5000, "after", "z" * 130_000, "end"]
    text = "\n".join(rows) + "\n"
    path = tmp_path / ("long.txt.gz" if gz else "long.txt")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    batches = list(line_batches(path, batch_bytes=1000))
    lines = pl.concat([b.lines for b in batches])
    assert lines["text"].to_list() == rows
    assert lines["line_no"].to_list() == [1, 2, 3, 4, 5]
    assert batches[-1].last and not any(b.last for b in batches[:-1])


def test_a_truncated_gzip_fails_where_the_stream_ends(text: str, tmp_path: Path) -> None:
    packed = gzip.compress((text * 3).encode())
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InventoryError, match=r"cut\.txt\.gz: truncated or corrupt gzip stream"):
        list(line_batches(cut, batch_bytes=10_000))
    with pytest.raises(InventoryError, match="truncated or corrupt gzip"):
        read_sacct(cut)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="no such file"):
        read_sacct(tmp_path / "absent.txt")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InventoryError, match="file is empty"):
        read_sacct(empty)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n# only comments\n")
    with pytest.raises(InventoryError, match="file is empty"):
        read_sacct(blank)


@pytest.mark.parametrize("trailing", [False, True])
def test_fast_path_reads_as_the_per_line_path(
    text: str, trailing: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polars' CSV fast path gives the same table and report as splitting every line."""
    lines = text.splitlines()
    lines[120] += "|extra"
    lines[300] = lines[300] + "\r"
    lines[301] = "|".join(lines[301].split("|")[:-2])
    lines[302] = lines[302].replace("2024-", "20x4-", 1)
    lines[len(lines) // 2] = "   "
    if trailing:  # sacct --parsable: a delimiter after the last field
        lines = [ln + "|" if ln.strip() and not ln.startswith("#") else ln for ln in lines]
    path = tmp_path / "x.txt"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(detect, "BATCH_BYTES", 30_000)
    fast = read_sacct(path, tz=TZ, max_bad_fraction=0.5)
    monkeypatch.setattr(sacct_module, "_fast_capable", lambda layout: False)
    slow = read_sacct(path, tz=TZ, max_bad_fraction=0.5)
    assert_frame_equal(fast.jobs, slow.jobs)
    assert fast.report == slow.report
    assert {41, 121, 302} <= {b.line for b in fast.report.bad_lines}
