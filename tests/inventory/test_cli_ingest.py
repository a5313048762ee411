"""`cluster-decide ingest`: reports, the written scenario, and exit status 2 on bad input."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

from cluster_decide.cli import main
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.ingest import RowProgress, load_column_map
from cluster_decide.inventory.synthetic import generate_sacct

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ingest") / "em.sacct.txt.gz"
    text = generate_sacct("enterprise-mixed", days=21, seed=2, scale=0.1)
    path.write_bytes(gzip.compress(text.encode(), mtime=0))
    return path


def test_ingest_prints_reports_and_writes_a_loadable_scenario(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "derived.toml"
    status = main(["ingest", str(export), "--tz", "America/Chicago", "--out", str(out)])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    assert "rows read" in printed.out and "step rows folded" in printed.out
    assert "multi-node-training" in printed.out and "(unclassified)" in printed.out
    doc = tomllib.loads(out.read_text())
    kinds = {w["kind"] for w in doc["workloads"]}
    assert {"distributed_training", "realtime_inference"} <= kinds
    assert f"to {out}" in printed.out
    from cluster_decide.inputs.scenario import load_scenario

    assert len(load_scenario(out).workloads) == len(doc["workloads"])
    # The same export gives the same scenario file, byte for byte.
    again = tmp_path / "again.toml"
    assert main(["ingest", str(export), "--tz", "America/Chicago", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_a_log_shorter_than_a_week_is_cautioned_not_refused(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A public trace of two jobs spans an hour; its GPU-hours a month are that hour scaled,
    and its weekly profile a few hours seen: said once, the scenario still written."""
    short = tmp_path / "two-days.sacct.txt"
    short.write_text(generate_sacct("enterprise-mixed", days=2, seed=3, scale=0.1))
    assert main(["ingest", str(short), "--out", str(tmp_path / "short.toml")]) == 0
    err = capsys.readouterr().err
    assert err.count("note: the records span") == 1
    assert "an hour-of-week profile needs 7 days or more (90 are recommended)" in err
    assert (tmp_path / "short.toml").exists()
    # Three weeks of records: no caution.
    assert main(["ingest", str(export), "--out", str(tmp_path / "long.toml")]) == 0
    assert "note: the records span" not in capsys.readouterr().err


def test_ingest_merges_several_files(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = tmp_path / "later.sacct.txt"
    second.write_text(generate_sacct("enterprise-mixed", days=7, seed=4, scale=0.05))
    out = tmp_path / "both.toml"
    assert main(["ingest", str(export), str(second), "--out", str(out)]) == 0
    assert f"{export}, {second}" in capsys.readouterr().out
    assert out.exists()


def test_bad_lines_are_reported_with_their_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = generate_sacct("research-lab", days=14, seed=1, scale=0.1).splitlines()
    lines[5] = "12345|broken"
    path = tmp_path / "one-bad.txt"
    path.write_text("\n".join(lines) + "\n")
    assert main(["ingest", str(path), "--out", str(tmp_path / "s.toml")]) == 0
    out = capsys.readouterr().out
    assert "skipped 1: wrong number of fields" in out
    assert "line 6: wrong number of fields" in out


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (b"", [], "file is empty"),
        (b"JobID|State\n1|COMPLETED\n", ["--format", "swf"], "does not look like SWF"),
        (b"JobID|State\n1|COMPLETED\n", ["--format", "nope"], "unknown format 'nope'"),
        (gzip.compress(generate_sacct("research-lab", days=3).encode())[:2000], [], "truncated"),
        (b"id,gpus\n1,2\n", ["--format", "csv"], "needs a column map"),
    ],
)
def test_bad_input_exits_2_with_the_message_and_no_traceback(
    content: bytes,
    extra: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    out = tmp_path / "never.toml"
    assert main(["ingest", str(path), *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert not out.exists()


def test_column_map_file_reads_a_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "jobs.csv"
    rows = [
        f"{i},team{i % 2},{8 if i % 3 else 1},{3600 * (1 + i % 5)},{i * 600}" for i in range(60)
    ]
    csv.write_text("id,grp,num_gpus,secs,t0\n" + "\n".join(rows) + "\n")
    cmap = tmp_path / "map.toml"
    cmap.write_text(
        '[columns]\njob_id = "id"\naccount = "grp"\ngpus = "num_gpus"\n'
        'elapsed_s = "secs"\nstart = "t0"\nsubmit = "t0"\n'
    )
    out = tmp_path / "csv.toml"
    assert main(["ingest", str(csv), "--column-map", str(cmap), "--out", str(out)]) == 0
    assert "60 rows read" in capsys.readouterr().out
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"job_id": "id", "gpus": "gpu_count", "elapsed_s": "secs"}')
    assert main(["ingest", str(csv), "--column-map", str(wrong), "--out", str(out)]) == 2
    assert "absent from the file: ['gpu_count']" in capsys.readouterr().err


def test_load_column_map_rejects_what_is_not_a_map(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("job_id = 3\n")
    with pytest.raises(InventoryError, match="table of job-table column"):
        load_column_map(bad)
    with pytest.raises(InventoryError, match="no such column map file"):
        load_column_map(tmp_path / "absent.toml")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(InventoryError, match="invalid column map"):
        load_column_map(broken)


class _Bar:
    def __init__(self) -> None:
        self.total: int | None = None
        self.n = 0

    def update(self, k: int) -> None:
        self.n += k

    def refresh(self) -> None:
        pass


def test_row_progress_adds_each_files_rows_to_one_bar() -> None:
    bar = _Bar()
    progress = RowProgress(bar)
    for done, total in [(10, 25), (20, 25), (25, 25), (7, 7), (4, 10), (10, 10)]:
        progress(done, total)
    assert bar.total == 42 and bar.n == 42


def _swf(jobs: int = 40) -> bytes:
    """An HPC log of one-processor nodes: jobs of an hour, one every 6 hours, no GPUs."""
    lines = ["; UnixStartTime: 1700000000", "; TimeZoneString: UTC"]
    lines += ["; MaxNodes: 64", "; MaxProcs: 64"]
    for i in range(1, jobs + 1):
        fields = [i, (i - 1) * 21600, 60, 3600, 1, -1, -1, 1, 7200, -1, 1, 3, 1, -1, 1, -1, -1, -1]
        lines.append(" ".join(str(f) for f in fields))
    return ("\n".join(lines) + "\n").encode()


def test_an_hpc_log_needs_gpus_per_proc_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hpc.swf"
    path.write_bytes(_swf())
    out = tmp_path / "hpc.toml"
    assert main(["ingest", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: no GPU jobs") and "gpus_per_proc" in err
    assert not out.exists()
    assert main(["ingest", str(path), "--gpus-per-proc", "2", "--out", str(out)]) == 0
    assert "Wrote 1 workload to" in capsys.readouterr().out
    (workload,) = tomllib.loads(out.read_text())["workloads"]
    assert workload["gpus_per_job"] == 2
    # 40 jobs x 2 GPUs x 1 hour over the log's 9.8 days, as a 730-hour month.
    assert workload["gpu_hours_per_month"] == pytest.approx(80 / (9.79 * 24 / 730), rel=0.01)
    sacct = tmp_path / "x.sacct.txt"
    sacct.write_text(generate_sacct("research-lab", days=2, seed=1, scale=0.05))
    assert main(["ingest", str(sacct), "--gpus-per-proc", "1", "--out", str(out)]) == 2
    assert "gpus_per_proc applies to SWF logs only" in capsys.readouterr().err
    for flag, value, expected in (
        ("--gpus-per-proc", "-1", "argument --gpus-per-proc: expected a number above 0 to 64"),
        ("--window-days", "0", "argument --window-days: expected a number 0.04–36,500 days, got 0"),
        ("--window-days", "1e-9", "expected a number 0.04–36,500 days, got 1e-9"),
        ("--window-days", "nan", "got nan"),
    ):
        assert main(["ingest", str(path), flag, value, "--out", str(out)]) == 2
        assert expected in capsys.readouterr().err


def test_no_workload_means_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A runtime-only trace has no start times, so no GPU-hours: exit 2, no empty scenario."""
    path = tmp_path / "runtime.csv"
    path.write_text("runtime\n" + "\n".join(str(60 * i) for i in range(1, 50)) + "\n")
    out = tmp_path / "empty.toml"
    assert main(["ingest", str(path), "--window-days", "30", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "Workloads (30.0 days observed)" in captured.out
    assert "no class holds a GPU-hour a month" in captured.err and "0 of 49 jobs" in captured.err
    assert not out.exists()
    assert main(["ingest", str(path), "--out", str(out)]) == 2
    assert "--window-days" in capsys.readouterr().err
