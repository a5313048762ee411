"""SWF reader: the archive logs checked against plain parsing, header handling, fuzz."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_decide.inventory import InventoryError
from cluster_decide.inventory.ingest import ingest
from cluster_decide.inventory.jobs import gpu_hours
from cluster_decide.inventory.swf import SWF_STATUS, parse_swf_header, read_swf


def _records(text: str) -> list[list[float]]:
    return [
        [float(x) for x in ln.split()]
        for ln in text.splitlines()
        if ln.strip() and not ln.lstrip().startswith(";")
    ]


@pytest.mark.parametrize(
    ("name", "jobs", "zone"),
    [
        ("NASA-iPSC-1993-3.1-cln.first1000.swf.gz", 1000, "US/Pacific"),
        ("alea_hpc2n_subset.first500.swf", 500, "Europe/Stockholm"),
        ("accasim_workload_headerless.swf", 25, "UTC"),
    ],
)
def test_archive_logs_match_independent_parsing(
    traces: Path, name: str, jobs: int, zone: str
) -> None:
    path = traces / "swf" / name
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if name.endswith(".gz") else raw).decode()
    recs = _records(text)
    assert len(recs) == jobs
    result = read_swf(path)
    assert result.jobs.height == jobs
    assert str(result.jobs.schema["submit"].time_zone) == zone
    proc_hours = sum(max(r[3], 0) * (r[4] if r[4] > 0 else r[7]) for r in recs) / 3600
    got = result.jobs.select((result.jobs["cpus"] * result.jobs["elapsed_s"]).sum()).item()
    assert got / 3600 == pytest.approx(proc_hours)
    states = Counter(SWF_STATUS.get(int(r[10]), "UNKNOWN") for r in recs)
    assert dict(result.jobs["state"].value_counts().iter_rows()) == dict(states)
    assert gpu_hours(result.jobs) == 0.0
    with_gpus = read_swf(path, gpus_per_proc=1.0)
    assert gpu_hours(with_gpus.jobs) == pytest.approx(proc_hours)


def test_nasa_header_and_unknown_waits(traces: Path) -> None:
    result = read_swf(traces / "swf/NASA-iPSC-1993-3.1-cln.first1000.swf.gz")
    first = result.jobs.row(0, named=True)
    assert first["submit"].isoformat() == "1993-10-01T00:00:03-07:00"
    assert first["start"] is None
    assert first["nodes"] == 128
    assert any(
        n.startswith(
            "1000 jobs with unknown wait (-1): start and end null; their waits are "
            "unknown, not zero"
        )
        for n in result.report.notes
    )
    # The header's StartTime and EndTime: October to December 1993.
    assert result.report.span_days == pytest.approx(92.0, abs=0.05)


@pytest.mark.parametrize(
    ("name", "stated", "covered"),
    [
        ("NASA-iPSC-1993-3.1-cln.first1000.swf.gz", 92.0, 6.74),
        ("alea_hpc2n_subset.first500.swf", 1268.5, 25.72),
    ],
)
def test_an_excerpt_is_not_given_the_whole_logs_window(
    traces: Path, name: str, stated: float, covered: float
) -> None:
    """The first thousand jobs of a 92-day log cover 6.7 days: their GPU-hours a month.

    The header (kept by the excerpt) states the whole log's span; dividing the excerpt's
    GPU-hours by it once made the demand 13 (NASA) and 49 (HPC2N) times too small.
    """
    path = traces / "swf" / name
    assert read_swf(path).report.span_days == pytest.approx(stated, abs=0.05)
    done = ingest([path], gpus_per_proc=1)
    assert done.demand.window_days == pytest.approx(covered, abs=0.01)
    assert any(
        f"not the {stated:.1f} days the header states" in n and "excerpt" in n
        for n in done.read.report.notes
    )
    # The monthly rate is the jobs' GPU-hours over the days they cover.
    total = gpu_hours(
        done.classification.jobs.filter(done.classification.jobs["kind"].is_not_null())
    )
    monthly = sum(ev for ev in done.demand.evidence["gpu_hours_per_month"])
    assert monthly == pytest.approx(total / (covered * 24 / 730.0), rel=0.01)
    # A whole log's window is still the header's (the 10-day case: test_site_exports).
    assert ingest([path], gpus_per_proc=1, window_days=stated).demand.window_days == stated


def test_hpc2n_waits_and_float_fields(traces: Path) -> None:
    jobs = read_swf(traces / "swf/alea_hpc2n_subset.first500.swf").jobs
    row = jobs.row(0, named=True)
    assert (row["start"] - row["submit"]).total_seconds() == 308434
    assert row["elapsed_s"] == 31405


def test_header_parsing() -> None:
    header = parse_swf_header(
        [
            "; UnixStartTime: 1000",
            "; TimeZoneString: Europe/Paris",
            "; MaxNodes: 64",
            "; MaxProcs: 128",
            "; Queue:  1  batch",
            "; Note: x: y",
        ]
    )
    assert (header.unix_start_time, header.time_zone, header.max_nodes, header.max_procs) == (
        1000,
        "Europe/Paris",
        64,
        128,
    )
    assert header.queues == {1: "batch"}


def test_crlf_no_final_newline_and_procs_per_node() -> None:
    line = "1 0 10 3600 16 -1 -1 16 7200 -1 1 3 1 -1 1 -1 -1 -1"
    data = ("; UnixStartTime: 0\r\n; Queue: 1 interactive\r\n" + line + "\r\n" + line).encode()
    result = read_swf(data, procs_per_node=8, gpus_per_proc=0.5)
    assert result.jobs["nodes"].to_list() == [2, 2]
    assert result.jobs["gpus"].to_list() == [8, 8]
    assert result.jobs["interactive"].to_list() == [True, True]
    assert result.jobs["partition"].to_list() == ["interactive", "interactive"]


def test_swf_errors() -> None:
    with pytest.raises(InventoryError) as err:
        read_swf(b"; Version: 2.2\n")
    assert str(err.value) == "<bytes>: no job lines (expected SWF: 18 numbers per line)"
    with pytest.raises(InventoryError) as err:
        read_swf(b"JobID|State\n1|COMPLETED\n")
    assert str(err.value) == (
        "<bytes>, line 1: does not look like SWF: 'JobID|State' (expected 18 "
        "whitespace-separated numbers per line)"
    )
    lines = ["1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1"] * 9 + ["2 0 0 10 1 x"]
    with pytest.raises(InventoryError) as err:
        read_swf("\n".join(lines).encode())
    assert str(err.value) == (
        "<bytes>: 1 of 10 rows are malformed (10.0% > max_bad_fraction 5.0%); first at line "
        "10: wrong number of fields: expected 18, got 6"
    )


_NUM = st.one_of(
    st.integers(-2, 10**9).map(str),
    st.floats(-5, 1e6, allow_nan=False).map(lambda f: f"{f:.2f}"),
    st.sampled_from(["-1", "x", "", ";", "1e3", "nan"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_NUM, min_size=0, max_size=20), max_size=12), st.booleans())
def test_fuzz_swf_never_crashes_and_counts_every_row(rows: list[list[str]], crlf: bool) -> None:
    sep = "\r\n" if crlf else "\n"
    data = ("; UnixStartTime: 0" + sep + sep.join(" ".join(r) for r in rows)).encode()
    try:
        result = read_swf(data, max_bad_fraction=1.0)
    except InventoryError:
        return
    rep = result.report
    assert rep.rows_read == rep.rows_used + sum(rep.skipped.values())
    assert rep.jobs_kept == result.jobs.height


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_fuzz_swf_raw_bytes(data: bytes) -> None:
    try:
        result = read_swf(
            b"1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n" + data, max_bad_fraction=1.0
        )
    except InventoryError:
        return
    rep = result.report
    assert rep.rows_read == rep.rows_used + sum(rep.skipped.values())
