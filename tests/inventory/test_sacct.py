"""sacct text reader: real exports checked against independent parsing, quirks, errors, fuzz."""

from __future__ import annotations

import csv
import gzip
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cluster_decide.inventory.detect as detect
from cluster_decide.inventory import InventoryError
from cluster_decide.inventory.jobs import gpu_hours, job_schema
from cluster_decide.inventory.sacct import AWS_FIELDS, expand_array_spec, read_sacct

HEADER = (
    "JobID|User|Account|Partition|State|Submit|Start|End|Elapsed|NNodes|NCPUS|AllocTRES|JobName"
)


def _psv(*rows: str, header: str = HEADER) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def _aws_rows(path: Path) -> list[list[str]]:
    """Data rows of an AWS-layout file, parsed with the csv module (not the reader)."""
    with path.open(newline="") as fh:
        rows = csv.reader(fh, delimiter="|")
        return [r for r in rows if r and r[0].strip() and not r[0].startswith("#")]


def _seconds(text: str) -> float:
    days, _, rest = text.rpartition("-")
    parts = [float(p) for p in rest.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    return (int(days) if days else 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def test_aws_v1_export_matches_independent_counts(traces: Path) -> None:
    path = traces / "sacct/aws-hpc-cost-simulator/sacct-output-v1.txt"
    rows = _aws_rows(path)
    allocs = [r for r in rows if "." not in r[1]]
    steps = [r for r in rows if "." in r[1]]
    result = read_sacct(path)
    jobs, report = result.jobs, result.report
    assert (len(rows), len(allocs), len(steps)) == (878, 483, 395)
    assert report.rows_read == 878
    assert jobs.height == report.jobs_kept == 483
    assert report.steps_collapsed == 395
    assert report.rows_read == report.rows_used + sum(report.skipped.values())
    expected_states = Counter(r[0].split()[0] for r in allocs)
    assert dict(jobs["state"].value_counts().iter_rows()) == dict(expected_states)
    cpu_hours = sum(int(r[15]) * _seconds(r[9]) for r in allocs) / 3600
    got = jobs.select((pl.col("cpus") * pl.col("elapsed_s")).sum()).item() / 3600
    assert got == pytest.approx(cpu_hours)
    assert gpu_hours(jobs) == 0.0
    assert jobs.schema == job_schema("UTC")


@pytest.mark.parametrize(
    ("name", "jobs", "states"),
    [
        ("array_sacct-output.txt", 8, {"OUT_OF_MEMORY": 8}),
        ("issue-17_sacct-output.txt", 3, {"COMPLETED": 2, "CANCELLED": 1}),
        ("issue-5_sacct-output.txt", 1, {"PENDING": 1}),
        ("issue-59_sacct-output.txt", 1, {"NODE_FAIL": 1}),
        ("issue-61_sacct-output.txt", 1, {"CANCELLED": 1}),
        ("issue-63_sacct-output.txt", 1, {"COMPLETED": 1}),
        ("multi-node_sacct-output.txt", 1, {"OUT_OF_MEMORY": 1}),
    ],
)
def test_aws_quirk_files(traces: Path, name: str, jobs: int, states: dict[str, int]) -> None:
    path = traces / "sacct/aws-hpc-cost-simulator" / name
    # issue-61 repeats a job with the state INVALID, which Slurm never writes: a bad row.
    bad = 1.0 if name.startswith("issue-61") else 0.05
    result = read_sacct(path, tz="America/New_York", max_bad_fraction=bad)
    rows = _aws_rows(path)
    assert result.report.rows_read == len(rows)
    assert result.jobs.height == jobs
    assert dict(result.jobs["state"].value_counts().iter_rows()) == states
    report = result.report
    assert report.rows_read == report.rows_used + sum(report.skipped.values())


def test_aws_quirks_details(traces: Path) -> None:
    base = traces / "sacct/aws-hpc-cost-simulator"
    arrays = read_sacct(base / "array_sacct-output.txt").jobs
    assert arrays["array_parent"].to_list() == ["846"] * 8
    assert arrays["job_id"].to_list() == [f"846_{i}" for i in range(8)]
    cancelled = read_sacct(base / "issue-17_sacct-output.txt").jobs.filter(pl.col("job_id") == "39")
    assert cancelled["start"].to_list() == [None]
    assert cancelled["elapsed_s"].to_list() == [0.0]
    pending = read_sacct(base / "issue-5_sacct-output.txt").jobs
    assert pending["start"].to_list() == [None] and pending["end"].to_list() == [None]
    interactive = read_sacct(base / "issue-63_sacct-output.txt")
    assert interactive.jobs["interactive"].to_list() == [True]
    assert "no allocation row" in interactive.report.notes[0]
    with pytest.raises(InventoryError, match="first at line 4: unknown State: expected a Slurm"):
        read_sacct(base / "issue-61_sacct-output.txt")
    dup = read_sacct(base / "issue-61_sacct-output.txt", max_bad_fraction=1.0).report
    assert dup.skipped == {"unknown State": 1}
    multi = read_sacct(base / "multi-node_sacct-output.txt").jobs
    assert multi.select("nodes", "cpus", "elapsed_s").row(0) == (4, 4, 301.0)
    partition = read_sacct(base / "issue-59_sacct-output.txt").jobs["partition"]
    assert partition.to_list() == ["us-east-1a_all"]


def test_aws_truncated_lines_are_reported_with_line_numbers(traces: Path) -> None:
    path = traces / "sacct/aws-hpc-cost-simulator/issue-gl-20_sacct-output.txt"
    lines = path.read_text().splitlines()
    short = [
        i
        for i, ln in enumerate(lines, 1)
        if ln.strip() and not ln.startswith("#") and len(ln.split("|")) < 25
    ]
    with pytest.raises(InventoryError) as err:
        read_sacct(path)
    assert str(err.value) == (
        f"{path}: 2 of 21 rows are malformed (9.5% > max_bad_fraction 5.0%); first at line "
        f"{short[0]}: wrong number of fields: expected 26, got 24"
    )
    result = read_sacct(path, max_bad_fraction=0.2)
    assert [b.line for b in result.report.bad_lines] == short
    # A truncated allocation row takes its step row with it: no job is rebuilt from a step.
    assert result.report.skipped == {
        "wrong number of fields": 2,
        "step row of a rejected job row": 1,
    }
    assert result.report.rows_read == result.report.rows_used + 3


def test_triton_header_export(traces: Path) -> None:
    path = traces / "sacct/slurm2sql_triton_test-data1.psv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="|"))
    allocs = [r for r in rows if "." not in r["JobID"]]
    jobs = read_sacct(path, tz="Europe/Helsinki").jobs
    assert jobs.height == len(allocs) == 2
    assert jobs["state"].to_list() == ["CANCELLED", "CANCELLED"]
    assert jobs["elapsed_s"].to_list() == [_seconds(r["Elapsed"]) for r in allocs]
    assert jobs["end"].to_list()[1] is None
    assert jobs["account"].to_list() == ["cs", "cs"]
    assert jobs["partition"].to_list() == ["jupyter-long", "interactive"]
    assert str(jobs.schema["submit"].time_zone) == "Europe/Helsinki"


def test_gpus_from_tres_typed_and_untyped_not_double_counted() -> None:
    data = _psv(
        "1|u|a|gpu|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|1|8|billing=8,cpu=8,gres/gpu:h100=8,gres/gpu=8,mem=10G,node=1|train",
        "2|u|a|gpu|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|2|8|cpu=8,gres/gpu:a100=4,gres/gpu:v100=2,node=2|mixed",
        "3|u|a|gpu|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|1|8|cpu=8,gres/gpu=2,gres/gpumem=80G|untyped",
        "4|u|a|cpu|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|1|8|cpu=8,mem=1G|cpu",
    )
    jobs = read_sacct(data).jobs
    assert jobs["gpus"].to_list() == [8, 6, 2, 0]
    assert jobs["gpu_type"].to_list() == ["H100", "A100", None, None]
    assert gpu_hours(jobs) == 16.0


def test_gpus_from_gres_and_req_tres_fallbacks() -> None:
    header = "JobID|State|Submit|Elapsed|AllocTRES|ReqTRES|AllocGRES"
    data = _psv(
        "1|PENDING|2024-01-01T00:00:00|00:00:00||cpu=4,gres/gpu:l40s=4|",
        "2|COMPLETED|2024-01-01T00:00:00|00:10:00|cpu=4||gpu:tesla:2(IDX:0-1)",
        "3|COMPLETED|2024-01-01T00:00:00|00:10:00|cpu=4||gpu:3",
        header=header,
    )
    jobs = read_sacct(data).jobs
    assert jobs["gpus"].to_list() == [4, 2, 3]
    assert jobs["gpu_type"].to_list() == ["L40S", "TESLA", None]


def test_elapsed_formats_states_and_unknown_times() -> None:
    data = _psv(
        "10|u|a|p|CANCELLED by 123|2024-01-01T00:00:00|None|2024-01-01T00:01:00|00:00:00|1|1||x",
        "11|u|a|p|RUNNING|2024-01-01T00:00:00|2024-01-01T00:00:00|Unknown|1-02:03:04|1|1||x",
        "12|u|a|p|TIMEOUT|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:15|00:15.057"
        "|1|1||x",
        "13|u|a|p|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:15|"
        "100-00:00:00|1|1||x",
    )
    jobs = read_sacct(data).jobs
    assert jobs["state"].to_list() == ["CANCELLED", "RUNNING", "TIMEOUT", "NODE_FAIL"]
    assert jobs["elapsed_s"].to_list() == [0.0, 93784.0, 15.057, 8640000.0]
    assert jobs["start"].to_list()[0] is None
    assert jobs["end"].to_list()[1] is None


def test_steps_collapse_and_arrays_expand_or_stay() -> None:
    rows = [
        "20|u|a|p|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|2|16|cpu=16,gres/gpu=16|job",
        "20.batch|||||2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|1|8||",
        "20.extern|||||2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|2|16||",
        "20.0|||||2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|2|16||",
        "21_3|u|a|p|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|"
        "00:01:00|1|1||arr",
        "21_[4-8%2]|u|a|p|PENDING|2024-01-01T00:00:00|Unknown|Unknown|00:00:00|1|1||arr",
    ]
    kept = read_sacct(_psv(*rows))
    assert kept.jobs["job_id"].to_list() == ["20", "21_3", "21_[4-8%2]"]
    assert kept.jobs["array_parent"].to_list() == [None, "21", "21"]
    assert kept.report.steps_collapsed == 3
    expanded = read_sacct(_psv(*rows), expand_arrays=True)
    assert expanded.jobs["job_id"].to_list() == ["20", "21_3"] + [f"21_{i}" for i in range(4, 9)]
    assert expanded.report.rows_read == expanded.report.rows_used == 6
    assert expand_array_spec("1,3,7-9%4") == [1, 3, 7, 8, 9]


@pytest.mark.parametrize("batch_bytes", [None, 60])
def test_steps_fill_what_the_allocation_row_leaves_open(
    batch_bytes: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GPUs and GPU type come from steps only where the allocation row lacks them, also when
    the steps land in another batch than their allocation row (a line per batch)."""
    t = "2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|1|8"
    data = _psv(
        f"30|u|a|p|COMPLETED|{t}|cpu=8,mem=1G|no-gpu-on-alloc",
        f"30.0|||||{t}|cpu=8,gres/gpu=4|",
        f"31|u|a|p|COMPLETED|{t}|cpu=8,gres/gpu=8|untyped-alloc",
        f"31.0|||||{t}|cpu=8,gres/gpu:h100=8|",
        f"32|u|a|p|COMPLETED|{t}|cpu=8,gres/gpu:a100=2|alloc-wins",
        f"32.0|||||{t}|cpu=8,gres/gpu:h100=8|",
        f"33.interactive|||||{t}|cpu=8,gres/gpu:l4=1|",
        f"34|u|a|p|COMPLETED|{t}|cpu=8,mem=1G|cpu-only",
        f"34.batch|||||{t}|cpu=8,mem=1G|",
    )
    path = tmp_path / "steps.txt"
    path.write_bytes(data)
    if batch_bytes:
        monkeypatch.setattr(detect, "BATCH_BYTES", batch_bytes)
    result = read_sacct(path)
    jobs = result.jobs
    assert jobs["job_id"].to_list() == ["30", "31", "32", "33", "34"]
    assert jobs["gpus"].to_list() == [4, 8, 2, 1, 0]
    assert jobs["gpu_type"].to_list() == [None, "H100", "A100", "L4", None]
    assert jobs["interactive"].to_list() == [False, False, False, True, False]
    assert result.report.steps_collapsed == 4
    assert any("1 jobs had step rows but no allocation row" in n for n in result.report.notes)


@pytest.mark.parametrize("split", [False, True])
def test_a_repeated_record_keeps_the_step_evidence_of_its_copies(
    split: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also when the first copy and its step share a batch and the kept copy is in the next."""
    t = "2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|1|8"
    data = _psv(
        f"40|u|a|p|COMPLETED|{t}|cpu=8|first-copy",
        f"40.0|||||{t}|cpu=8,gres/gpu:h100=4|",
        f"41|u|a|p|COMPLETED|{t}|cpu=8,gres/gpu:l4=1|other",
        f"40|u|a|p|COMPLETED|{t}|cpu=8|last-copy",
    )
    path = tmp_path / "dup.txt"
    path.write_bytes(data)
    if split:  # header, first copy and its step in one batch; the rest in the next
        monkeypatch.setattr(detect, "BATCH_BYTES", len(b"\n".join(data.split(b"\n")[:3])) + 1)
    result = read_sacct(path)
    jobs = result.jobs
    assert jobs["job_id"].to_list() == ["41", "40"]
    assert jobs["name"].to_list() == ["other", "last-copy"]
    assert jobs["gpus"].to_list() == [1, 4] and jobs["gpu_type"].to_list() == ["L4", "H100"]
    assert result.report.skipped == {"duplicate job record (the last one is kept)": 1}


def test_parsable_trailing_delimiter_field_subset_and_order() -> None:
    data = b"State|Elapsed|JobID|\nCOMPLETED|00:10:00|5|\nFAILED|00:20:00|6|\n"
    jobs = read_sacct(data).jobs
    assert jobs.select("job_id", "state", "elapsed_s").rows() == [
        ("5", "COMPLETED", 600.0),
        ("6", "FAILED", 1200.0),
    ]


def test_no_header_needs_fields_unless_aws_layout() -> None:
    data = b"5|COMPLETED|00:10:00\n"
    with pytest.raises(InventoryError) as err:
        read_sacct(data)
    assert str(err.value) == (
        "<bytes>: no header line and no field list (3 fields per line, delimiter '|'); the "
        "values look like JobID,State,Elapsed (expected the sacct -o fields in order: "
        "cluster-decide ingest FILE --fields JobID,State,Elapsed --delimiter '|'; in Python "
        "fields='JobID,State,Elapsed', delimiter='|')"
    )
    jobs = read_sacct(data, fields="JobID,State,Elapsed").jobs
    assert jobs.row(0, named=True)["elapsed_s"] == 600.0
    aws = "|".join(
        [
            "COMPLETED",
            "7",
            "1",
            "1G",
            "1",
            "",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00",
            "00:01:00",
            "00:00:00",
            "2024-01-01T00:01:00",
            "0:0",
            "0:0",
            "1",
            "2",
            *[""] * 9,
        ]
    )
    assert len(aws.split("|")) == len(AWS_FIELDS)
    assert read_sacct(aws.encode()).jobs["cpus"].to_list() == [2]


def test_multibyte_delimiter() -> None:
    data = "JobID¦State¦Elapsed\n9¦COMPLETED¦00:00:30\n".encode()
    jobs = read_sacct(data, delimiter="¦").jobs
    assert jobs.select("job_id", "elapsed_s").row(0) == ("9", 30.0)


def test_dst_ambiguous_and_nonexistent_times_are_counted() -> None:
    data = _psv(
        "30|u|a|p|COMPLETED|2024-11-03T01:30:00|2024-11-03T01:30:00|2024-11-03T03:00:00|"
        "02:30:00|1|1||x",
        "31|u|a|p|COMPLETED|2024-03-10T02:30:00|2024-03-10T03:30:00|2024-03-10T04:00:00|"
        "00:30:00|1|1||x",
    )
    result = read_sacct(data, tz="America/New_York")
    assert result.report.ambiguous_times == 2
    assert result.report.nonexistent_times == 1
    submit = result.jobs["submit"].dt.convert_time_zone("UTC").dt.strftime("%H:%M").to_list()
    assert submit == ["05:30", "07:30"]


def test_gzip_input_and_truncated_gzip(tmp_path: Path) -> None:
    data = _psv(
        "40|u|a|p|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|1|1|cpu=1,gres/gpu=1|x"
    )
    packed = gzip.compress(data)
    path = tmp_path / "export.txt.gz"
    path.write_bytes(packed)
    assert read_sacct(path).jobs["gpus"].to_list() == [1]
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InventoryError, match=r"cut\.txt\.gz: truncated or corrupt gzip stream"):
        read_sacct(cut)


def test_empty_and_foreign_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InventoryError) as err:
        read_sacct(empty)
    assert str(err.value) == f"{empty}: file is empty (expected sacct --parsable2 rows)"
    with pytest.raises(InventoryError) as err:
        read_sacct(b'{"jobs": []}')
    assert str(err.value) == (
        "<bytes>, line 1: this is JSON, not sacct text (expected format='sacct_json')"
    )
    with pytest.raises(InventoryError) as err:
        read_sacct(b"a,b,c\n1,2,3\n")
    assert "does not look like a sacct export: no header, and no field holds job ids" in str(
        err.value
    )
    with pytest.raises(InventoryError) as err:
        read_sacct(b"a b c\n1 2 3\n")
    assert "first data line has no '|' separator" in str(err.value)
    with pytest.raises(InventoryError) as err:
        read_sacct(HEADER.encode() + b"\n")
    assert str(err.value) == "<bytes>: header but no job rows (expected sacct rows)"


def test_bad_values_are_quoted_with_reasons() -> None:
    good = (
        "|u|a|p|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        "01:00:00|1|1||x"
    )
    rows = [f"{i}{good}" for i in range(100, 140)]
    rows[3] = rows[3].replace("2024-01-01T00:00:00|2024", "yesterday|2024", 1)
    rows[5] = "x5" + good
    result = read_sacct(_psv(*rows))
    bad = result.report.bad_lines
    assert [(b.line, b.reason) for b in bad] == [
        (5, "bad Submit: expected YYYY-MM-DDTHH:MM:SS, got 'yesterday'"),
        (7, "bad JobID: expected 123, 123_4, 123_[1-5] or 123.batch, got 'x5'"),
    ]
    assert result.report.skipped == {"bad Submit": 1, "bad JobID": 1}
    assert result.jobs.height == 38


_FIELD = st.sampled_from(
    [
        "",
        "Unknown",
        "None",
        "COMPLETED",
        "CANCELLED by 5",
        "123",
        "123.batch",
        "7_[1-3]",
        "2024-01-01T00:00:00",
        "1-02:03:04",
        "00:15.057",
        "gres/gpu=2",
        "gpu:h100:1",
        "|",
        "\t",
        "é",
        "-1",
        "99999999999999999999",
    ]
) | st.text(max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_FIELD, min_size=0, max_size=15), min_size=0, max_size=12), st.booleans())
def test_fuzz_sacct_never_crashes_and_counts_every_row(
    rows: list[list[str]], with_header: bool
) -> None:
    lines = ["|".join(r) for r in rows]
    if with_header:
        lines.insert(0, HEADER)
    data = "\n".join(lines).encode()
    try:
        result = read_sacct(data, max_bad_fraction=1.0)
    except InventoryError:
        return
    rep = result.report
    assert rep.rows_read == rep.rows_used + sum(rep.skipped.values())
    assert rep.jobs_kept == result.jobs.height
    assert len(rep.bad_lines) <= 20


def test_progress_callback_reports_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import cluster_decide.inventory.sacct as sacct_module

    monkeypatch.setattr(sacct_module, "CHUNK_ROWS", 2)
    rows = [
        f"{i}|u|a|p|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|"
        f"01:00:00|1|1||x"
        for i in range(5)
    ]
    # The step of job 1 lands in the next chunk: it must still fold into job 1.
    rows.insert(
        2, "1.batch|||||2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|1|1||"
    )
    seen: list[tuple[int, int]] = []
    result = sacct_module.read_sacct(_psv(*rows), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(2, 6), (4, 6), (6, 6)]
    assert result.jobs.height == 5 and result.report.steps_collapsed == 1
    assert result.report.notes == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_fuzz_sacct_raw_bytes(data: bytes) -> None:
    try:
        result = read_sacct(HEADER.encode() + b"\n" + data, max_bad_fraction=1.0)
    except InventoryError:
        return
    rep = result.report
    assert rep.rows_read == rep.rows_used + sum(rep.skipped.values())
