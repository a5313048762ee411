"""Slurm `sacct --parsable2` / `--parsable` text exports into the job table.

The bulk path is vectorized polars (split, regex extract, strptime) over chunks of lines, so
millions of rows read in seconds in bounded memory; messages are formatted only for the
malformed lines, which the report quotes with their line numbers.
Any field order or subset works, with or without a header line; without one, pass the `-o`
field list, or the reader recognizes the 25-column layout of AWS's HPC cost simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from cluster_decide.inventory.detect import Source, lines_frame, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import (
    ReadReport,
    ReadResult,
    conform,
    enforce_threshold,
    localize,
    normalize_state,
    record_bad,
    split_bad,
)

__all__ = [
    "AWS_FIELDS",
    "expand_array_spec",
    "gres_gpus",
    "parse_elapsed",
    "read_sacct",
    "submit_line_gpus",
    "tres_gpus",
]

AWS_FIELDS = (
    "State",
    "JobID",
    "ReqCPUS",
    "ReqMem",
    "ReqNodes",
    "Constraints",
    "Submit",
    "Eligible",
    "Start",
    "Elapsed",
    "Suspended",
    "End",
    "ExitCode",
    "DerivedExitCode",
    "AllocNodes",
    "NCPUS",
    "MaxDiskRead",
    "MaxDiskWrite",
    "MaxPages",
    "MaxRSS",
    "MaxVMSize",
    "CPUTime",
    "UserCPU",
    "SystemCPU",
    "TotalCPU",
)
"""The `--noheader` layout of aws-samples/hpc-cost-simulator (an optional 26th: Partition)."""

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
_NO_TIME = ("", "Unknown", "None", "N/A")
_JOBID = r"^(\d+(?:_(?:\d+|\[[0-9,\-%:]+\]))?(?:\+\d+)?)(?:\.([A-Za-z0-9_\-]+))?$"
_STATE = r"^[A-Z_]+( by \d+)?$"
_INT_FIELDS = ("nnodes", "allocnodes", "reqnodes", "ncpus", "alloccpus", "reqcpus", "elapsedraw")
_USED = frozenset(
    {
        "jobid",
        "jobidraw",
        "state",
        "user",
        "account",
        "partition",
        "jobname",
        "submit",
        "start",
        "end",
        "elapsed",
        "elapsedraw",
        "alloctres",
        "reqtres",
        "allocgres",
        "reqgres",
        "exitcode",
        "submitline",
        *_INT_FIELDS,
    }
)


def parse_elapsed(expr: pl.Expr) -> pl.Expr:
    """Seconds from sacct durations: `[D-]HH:MM:SS`, `MM:SS.mmm`; null when unparsable.

    Plain string splits rather than one regex: this runs on every row of large exports.
    """
    has_day = expr.str.contains("-", literal=True)
    day_parts = expr.str.split_exact("-", 1)
    days = pl.when(has_day).then(day_parts.struct.field("field_0")).otherwise(pl.lit("0"))
    rest = pl.when(has_day).then(day_parts.struct.field("field_1")).otherwise(expr)
    colons = rest.str.count_matches(":", literal=True)
    hms = rest.str.split_exact(":", 2)
    f0, f1, f2 = (hms.struct.field(f"field_{i}").cast(pl.Float64, strict=False) for i in range(3))
    base = days.cast(pl.Float64, strict=False) * 86400.0
    valid = ~rest.str.contains(r"[^0-9:.]") & ~days.str.contains(r"[^0-9]")
    secs = (
        pl.when(colons == 2)
        .then(base + f0 * 3600.0 + f1 * 60.0 + f2)
        .when(colons == 1)
        .then(base + f0 * 60.0 + f1)
    )
    return pl.when(valid).then(secs)


def tres_gpus(expr: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(GPU count, GPU type) from a TRES string such as `cpu=8,gres/gpu:h100=8,gres/gpu=8`.

    The untyped `gres/gpu=N` is the total; typed entries are only summed when it is absent,
    so a job listed both ways is not counted twice. Null when the string names no GPU.
    """
    untyped = expr.str.extract(r"(?:^|,)gres/gpu=(\d+)", 1).cast(pl.Int64, strict=False)
    typed = expr.str.extract_all(r"(?:^|,)gres/gpu:[^=,]+=\d+")
    typed_sum = typed.list.eval(
        pl.element().str.extract(r"=(\d+)$", 1).cast(pl.Int64, strict=False)
    ).list.sum()
    typed_sum = pl.when(typed.list.len() > 0).then(typed_sum).otherwise(None)
    gtype = expr.str.extract(r"(?:^|,)gres/gpu:([^=,]+)=", 1)
    return pl.coalesce(untyped, typed_sum), gtype


def gres_gpus(expr: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(GPU count, GPU type) from an older GRES string: `gpu:2`, `gpu:v100:2(IDX:0-1)`."""
    groups = expr.str.extract_groups(r"(?:^|,)gpu(?::([A-Za-z][^:,()]*))?:(\d+)")
    count = groups.struct.field("2").cast(pl.Int64, strict=False)
    return count, groups.struct.field("1")


def submit_line_gpus(line: pl.Expr, nodes: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(GPU count, GPU type) from a submit line: `--gpus N`, `--gres gpu:N`, per-node x nodes.

    A fallback for exports whose TRES lacks the GPU (seen in slurmdbd JSON); `--gpus-per-task`
    and `--gpus-per-socket` are not multiplied out, because the task or socket count is not
    in the record, so they give a lower bound.
    """
    opt = r"(?:^|\s)--{name}[ =](?:([A-Za-z][\w.\-]*):)?(\d+)"
    total = line.str.extract_groups(opt.format(name="gpus"))
    gres = line.str.extract_groups(r"(?:^|\s)--gres[ =]gpu(?::([A-Za-z][\w.\-]*))?:(\d+)")
    per_node = line.str.extract_groups(opt.format(name="gpus-per-node"))
    per_other = line.str.extract_groups(opt.format(name="gpus-per-(?:task|socket)"))
    n_nodes = nodes.fill_null(1).clip(lower_bound=1)
    count = pl.coalesce(
        total.struct.field("2").cast(pl.Int64, strict=False),
        gres.struct.field("2").cast(pl.Int64, strict=False),
        per_node.struct.field("2").cast(pl.Int64, strict=False) * n_nodes,
        per_other.struct.field("2").cast(pl.Int64, strict=False),
    )
    gtype = pl.coalesce(
        total.struct.field("1"),
        gres.struct.field("1"),
        per_node.struct.field("1"),
        per_other.struct.field("1"),
    )
    return count, gtype


def expand_array_spec(spec: str) -> list[int]:
    """Task ids of a pending array spec: `1-5%2` -> [1..5], `1,3,7-9` -> [1,3,7,8,9]."""
    ids: list[int] = []
    body = spec.split("%")[0]
    for part in body.split(","):
        part = part.split(":")[0] if ":" not in part else part
        if "-" in part:
            lo, _, rest = part.partition("-")
            hi, _, step = rest.partition(":")
            ids.extend(range(int(lo), int(hi) + 1, int(step) if step else 1))
        elif part:
            ids.append(int(part))
    return ids


def _split_fields(fields: Sequence[str] | str) -> list[str]:
    if isinstance(fields, str):
        for sep in ("|", ","):
            if sep in fields:
                return [f.strip() for f in fields.split(sep) if f.strip()]
        return [fields.strip()]
    return [f.strip() for f in fields]


def _resolve_layout(
    name: str,
    first: str,
    delimiter: str,
    fields: Sequence[str] | str | None,
    header: bool | None,
) -> tuple[list[str], int, bool]:
    """(field names, how many trailing fields may be missing, first line is a header)."""
    tokens = [t.strip() for t in first.split(delimiter)]
    if tokens and tokens[-1] == "":
        tokens.pop()
    looks_header = any(t.lower() in ("jobid", "jobidraw") for t in tokens)
    is_header = looks_header if header is None else header
    if is_header:
        if fields is not None:
            return _split_fields(fields), 0, True
        return tokens, 0, True
    if fields is not None:
        return _split_fields(fields), 0, False
    if delimiter not in first:
        raise InventoryError(
            name,
            f"first data line has no {delimiter!r} separator",
            line=None,
            expected="sacct --parsable2 output (pass format= if this is another format)",
        )
    raw = first.split(delimiter)
    if len(raw) in (25, 26) and raw[1][:1].isdigit() and raw[0][:1].isupper():
        return [*AWS_FIELDS, "Partition"], 1, False
    raise InventoryError(
        name,
        f"no header line and no field list ({len(raw)} fields per line)",
        expected="a header with JobID, or fields=[...] naming the sacct -o fields in order",
    )


def read_sacct(
    source: Source,
    *,
    tz: str = "UTC",
    fields: Sequence[str] | str | None = None,
    delimiter: str = "|",
    header: bool | None = None,
    expand_arrays: bool = False,
    max_bad_fraction: float = 0.05,
    progress: Callable[[int, int], None] | None = None,
) -> ReadResult:
    """Read a `sacct --parsable2` (or `--parsable`) export into the job table.

    `tz` is the zone of the host that ran sacct (its times carry no offset). `fields` names
    the `-o` fields when the export has no header. Step rows (`.batch`, `.extern`, `.0`,
    `.interactive`) are folded into their allocation; `expand_arrays` turns a pending array
    `123_[1-5%2]` into one pending row per task. Raises InventoryError when more than
    `max_bad_fraction` of the rows are malformed, or on an empty or foreign file.
    `progress(rows_done, rows_total)` is called after each chunk of CHUNK_ROWS lines (the
    CLI passes a tqdm bar's update).
    """
    name = source_name(source)
    report = ReadReport(source=name, format="sacct")
    lines = lines_frame(source)
    content = lines.filter(
        pl.col("text").str.contains(r"\S") & ~pl.col("text").str.starts_with("#")
    )
    del lines
    if content.is_empty():
        raise InventoryError(name, "file is empty", expected="sacct --parsable2 rows")
    first_line, first = content.row(0)
    if first.lstrip().startswith(("{", "[")):
        raise InventoryError(
            name, "this is JSON, not sacct text", line=first_line, expected="format='sacct_json'"
        )
    names, optional_tail, has_header = _resolve_layout(name, first, delimiter, fields, header)
    if has_header:
        content = content.slice(1)
    keys = [n.lower() for n in names]
    if "jobid" not in keys and "jobidraw" not in keys:
        raise InventoryError(name, f"fields {names} lack JobID", expected="JobID or JobIDRaw")
    report.rows_read = content.height
    if content.is_empty():
        raise InventoryError(name, "header but no job rows", expected="sacct rows")

    layout = _Layout(names, keys, delimiter, optional_tail)
    parts = []
    for i in range(0, content.height, CHUNK_ROWS):
        parts.append(_chunk(content.slice(i, CHUNK_ROWS), layout))
        if progress is not None:
            progress(min(i + CHUNK_ROWS, content.height), content.height)
    del content
    record_bad(report, pl.concat([p.bad for p in parts]))
    _enforce_early(report, max_bad_fraction)
    jobs = _combine(parts, layout, report, expand_arrays)
    jobs = localize(jobs, ["submit", "start", "end"], tz, report)
    jobs = conform(jobs, tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)


CHUNK_ROWS = 1_000_000
"""Lines parsed at a time: bounds the memory of the per-line stage on very large exports."""


class _Layout:
    """The field layout of one export: names as written, lower-case keys, which are used."""

    def __init__(
        self, names: list[str], keys: list[str], delimiter: str, optional_tail: int
    ) -> None:
        self.names = names
        self.delimiter = delimiter
        self.optional_tail = optional_tail
        self.first_index = {k: i for i, k in reversed(list(enumerate(keys)))}
        self.present = {k for k in self.first_index if k in _USED}
        self.labels = {k: names[i] for k, i in self.first_index.items()}

    def col(self, *options: str) -> pl.Expr:
        """The first non-empty of the named fields (null when none is in the export)."""
        found = [pl.col(o) for o in options if o in self.present]
        if not found:
            return pl.lit(None, dtype=pl.String)
        return pl.coalesce([pl.when(c != "").then(c) for c in found])


@dataclass(frozen=True)
class _Chunk:
    """What one slice of lines gives, to be combined with the other slices.

    Parsed allocations, step summaries, orphan candidates (steps whose allocation is not in
    the slice) and malformed lines.
    """

    allocs: pl.DataFrame
    steps: pl.DataFrame
    candidates: pl.DataFrame
    bad: pl.DataFrame
    n_steps: int


def _chunk(content: pl.DataFrame, layout: _Layout) -> _Chunk:
    """Split, validate and parse one slice of lines (the per-line, vectorized stage)."""
    n_fields = len(layout.names)
    delimiter = layout.delimiter
    text = pl.col("text")
    n_delims = text.str.count_matches(delimiter, literal=True)
    trailing = (n_delims == n_fields) & text.str.ends_with(delimiter)
    count_ok = n_delims.is_between(n_fields - 1 - layout.optional_tail, n_fields - 1) | trailing
    split = text.str.split_exact(delimiter, n_fields - 1)
    col = layout.col
    frame = content.select(
        "line_no",
        "text",
        count_ok.alias("_count_ok"),
        n_delims.alias("_n"),
        *[
            split.struct.field(f"field_{layout.first_index[k]}").alias(k)
            for k in sorted(layout.present)
        ],
    )
    ids = col("jobid", "jobidraw").str.extract_groups(_JOBID)
    frame = frame.with_columns(
        ids.struct.field("1").alias("_alloc"), ids.struct.field("2").alias("_step")
    )
    frame, early_bad = split_bad(
        frame,
        [
            (
                ~pl.col("_count_ok"),
                pl.format(
                    f"wrong number of fields: expected {n_fields}, got {{}}", pl.col("_n") + 1
                ),
            ),
            (
                pl.col("_alloc").is_null(),
                pl.format(
                    "bad JobID: expected 123, 123_4, 123_[1-5] or 123.batch, got '{}'",
                    col("jobid", "jobidraw").fill_null(""),
                ),
            ),
        ],
    )
    is_step = pl.col("_step").is_not_null()
    parsed, checks = _parse_allocations(frame.filter(~is_step), layout)
    allocs, bad_allocs = split_bad(parsed, checks)
    steps = frame.filter(is_step).drop("text")
    alloc_ids = allocs["_alloc"].implode()
    candidates = steps.filter(~pl.col("_alloc").is_in(alloc_ids)).unique(
        "_alloc", keep="first", maintain_order=True
    )
    s_n, s_t = tres_gpus(col("alloctres"))
    with_gpu = steps.filter(col("alloctres").str.contains("gres/gpu", literal=True))
    summary = (
        steps.group_by("_alloc")
        .agg((pl.col("_step") == "interactive").any().alias("_istep"))
        .join(
            with_gpu.group_by("_alloc").agg(s_n.max().alias("_sgpus"), s_t.first().alias("_stype")),
            on="_alloc",
            how="left",
        )
    )
    bad = pl.concat(
        [
            early_bad.select("line_no", "text", "reason"),
            bad_allocs.select("line_no", "text", "reason"),
        ]
    )
    return _Chunk(_columns(allocs.drop("text"), layout), summary, candidates, bad, steps.height)


def _enforce_early(report: ReadReport, max_bad_fraction: float) -> None:
    """Fail before the costly part when the malformed share is already over the limit."""
    if report.rows_read and report.malformed_rows / report.rows_read > max_bad_fraction:
        enforce_threshold(report, max_bad_fraction)


def _parse_allocations(
    allocs: pl.DataFrame, layout: _Layout
) -> tuple[pl.DataFrame, list[tuple[pl.Expr, pl.Expr]]]:
    """Parse allocation rows once (times, durations, counts); return them and their checks."""
    col, present, labels = layout.col, layout.present, layout.labels
    parsed = {
        f"_{k}": col(k).str.strptime(pl.Datetime("us"), _TIME_FORMAT, strict=False)
        for k in ("submit", "start", "end")
    }
    parsed["_elapsed"] = parse_elapsed(col("elapsed"))
    for key in _INT_FIELDS:
        parsed[f"_{key}"] = col(key).str.extract(r"^(\d+)", 1).cast(pl.Int64, strict=False)
    out = allocs.with_columns(v.alias(k) for k, v in parsed.items())
    checks: list[tuple[pl.Expr, pl.Expr]] = []
    if "state" in present:
        checks.append(
            (
                (pl.col("state") != "") & ~pl.col("state").str.contains(_STATE),
                pl.format("bad State: expected an upper-case state, got '{}'", pl.col("state")),
            )
        )
    for key in ("submit", "start", "end"):
        if key in present:
            raw = pl.col(key)
            checks.append(
                (
                    ~raw.is_in(_NO_TIME) & pl.col(f"_{key}").is_null(),
                    pl.format(f"bad {labels[key]}: expected YYYY-MM-DDTHH:MM:SS, got '{{}}'", raw),
                )
            )
    if "elapsed" in present:
        checks.append(
            (
                (pl.col("elapsed") != "") & pl.col("_elapsed").is_null(),
                pl.format("bad Elapsed: expected [D-]HH:MM:SS, got '{}'", pl.col("elapsed")),
            )
        )
    for key in _INT_FIELDS:
        if key in present:
            checks.append(
                (
                    (pl.col(key) != "") & pl.col(f"_{key}").is_null(),
                    pl.format(f"bad {labels[key]}: expected an integer, got '{{}}'", pl.col(key)),
                )
            )
    return out, checks


def _columns(allocs: pl.DataFrame, layout: _Layout) -> pl.DataFrame:
    """Job-table columns of parsed allocation rows, before steps are folded in."""
    col, present = layout.col, layout.present

    def parsed_int(*options: str) -> pl.Expr:
        found = [pl.col(f"_{k}") for k in options if k in present]
        return pl.coalesce(*found, pl.lit(None, dtype=pl.Int64))

    nodes, req_nodes = parsed_int("nnodes", "allocnodes"), parsed_int("reqnodes")
    cpus, req_cpus = parsed_int("ncpus", "alloccpus"), parsed_int("reqcpus")
    nodes_out = (
        pl.when(nodes.is_null() | (nodes == 0)).then(pl.coalesce(req_nodes, nodes)).otherwise(nodes)
    )
    a_n, a_t = tres_gpus(col("alloctres"))
    r_n, r_t = tres_gpus(col("reqtres"))
    ag_n, ag_t = gres_gpus(col("allocgres"))
    rg_n, rg_t = gres_gpus(col("reqgres"))
    s_n, s_t = submit_line_gpus(col("submitline"), nodes_out)
    raw_secs = parsed_int("elapsedraw").cast(pl.Float64)
    span = (pl.col("_end") - pl.col("_start")).dt.total_seconds().cast(pl.Float64)
    return allocs.select(
        "line_no",
        pl.col("_alloc").alias("job_id"),
        col("user").alias("user"),
        col("account").alias("account"),
        col("partition").alias("partition"),
        pl.col("_submit").alias("submit"),
        pl.col("_start").alias("start"),
        pl.col("_end").alias("end"),
        pl.coalesce("_elapsed", raw_secs, span, pl.lit(0.0)).alias("elapsed_s"),
        pl.coalesce(a_n, r_n, ag_n, rg_n, s_n).alias("_gpus"),
        pl.coalesce(a_t, r_t, ag_t, rg_t, s_t).alias("_gtype"),
        nodes_out.alias("nodes"),
        pl.when(cpus.is_null() | (cpus == 0))
        .then(pl.coalesce(req_cpus, cpus))
        .otherwise(cpus)
        .alias("cpus"),
        normalize_state(col("state")).alias("state"),
        col("exitcode").str.extract(r"^(-?\d+)", 1).cast(pl.Int64, strict=False).alias("exit_code"),
        col("jobname").alias("name"),
        col("submitline").str.contains(r"^\s*salloc\b|--pty\b").alias("_salloc"),
    )


def _combine(
    parts: list[_Chunk], layout: _Layout, report: ReadReport, expand_arrays: bool
) -> pl.DataFrame:
    """Fold steps into allocations across chunks: duplicates, orphans, step evidence."""
    allocs = pl.concat([p.allocs for p in parts])
    n_steps = sum(p.n_steps for p in parts)
    report.rows_used = allocs.height + n_steps
    dup = allocs.height - allocs.select(pl.col("job_id").n_unique()).item()
    if dup:
        allocs = allocs.unique("job_id", keep="last", maintain_order=True)
        report.skip("duplicate job record (the last one is kept)", dup)
        report.rows_used -= dup
    candidates = pl.concat([p.candidates for p in parts])
    promoted = candidates.filter(~pl.col("_alloc").is_in(allocs["job_id"].implode())).unique(
        "_alloc", keep="first", maintain_order=True
    )
    if not promoted.is_empty():
        report.notes.append(
            f"{promoted.height} jobs had step rows but no allocation row; each was built "
            "from its first step"
        )
        parsed, _ = _parse_allocations(promoted, layout)
        allocs = pl.concat([allocs, _columns(parsed, layout)]).sort("line_no")
    report.steps_collapsed = n_steps - promoted.height
    steps = (
        pl.concat([p.steps for p in parts])
        .group_by("_alloc")
        .agg(pl.col("_istep").any(), pl.col("_sgpus").max(), pl.col("_stype").drop_nulls().first())
    )
    has_evidence = bool(n_steps) or "submitline" in layout.present
    out = allocs.join(steps, left_on="job_id", right_on="_alloc", how="left").select(
        "job_id",
        pl.col("job_id").str.extract(r"^(\d+)_", 1).alias("array_parent"),
        "user",
        "account",
        "partition",
        "submit",
        "start",
        "end",
        "elapsed_s",
        pl.coalesce("_gpus", "_sgpus", pl.lit(0)).cast(pl.Int64).alias("gpus"),
        pl.coalesce("_gtype", "_stype").alias("gpu_type"),
        "nodes",
        "cpus",
        "state",
        "exit_code",
        "name",
        (
            pl.col("_istep").fill_null(False) | pl.col("_salloc").fill_null(False)
            if has_evidence
            else pl.lit(None, dtype=pl.Boolean)
        ).alias("interactive"),
    )
    if "submit" not in layout.present:
        report.notes.append("no Submit field: submit times are null")
    return _arrays(out, report, expand_arrays)


def _arrays(out: pl.DataFrame, report: ReadReport, expand: bool) -> pl.DataFrame:
    """Give pending arrays (`123_[1-5]`) their parent id, and expand them when asked."""
    spec = pl.col("job_id").str.extract(r"^\d+_\[([^\]]*)\]$", 1)
    pending = out.filter(spec.is_not_null())
    if pending.is_empty():
        return out
    if not expand:
        report.notes.append(f"{pending.height} pending array records kept unexpanded")
        return out
    specs = pending.select(spec.unique()).to_series().to_list()
    table = pl.DataFrame(
        {"_spec": specs, "_task": [expand_array_spec(s) for s in specs]},
        schema={"_spec": pl.String, "_task": pl.List(pl.Int64)},
    )
    expanded = (
        pending.with_columns(spec.alias("_spec"))
        .join(table, on="_spec", how="left")
        .explode("_task")
        .with_columns(pl.format("{}_{}", pl.col("array_parent"), pl.col("_task")).alias("job_id"))
        .drop("_spec", "_task")
    )
    report.notes.append(
        f"{pending.height} pending array records expanded into {expanded.height} tasks"
    )
    return pl.concat([out.filter(spec.is_null()), expanded])
