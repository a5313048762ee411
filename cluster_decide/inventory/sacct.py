"""Slurm `sacct --parsable2` / `--parsable` text exports into the job table.

The bulk path is polars' native CSV parser over batches of whole lines, once a cheap check
shows every line it takes has the expected number of fields (two byte counts for a clean
batch, numpy over the raw bytes otherwise); fields are then parsed by vectorized polars
expressions (regex extract, strptime), TRES and GRES once per distinct string. Other lines
(wrong field counts, comments, blank lines) are split and checked one by one. Millions of
rows read in seconds in bounded memory; messages are formatted only for the malformed
lines, which the report quotes with their line numbers.
Any field order or subset works, with or without a header line; without one, pass the `-o`
field list, or the reader recognizes the 25-column layout of AWS's HPC cost simulator.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl

from cluster_decide.inventory.detect import (
    LineBatch,
    Source,
    count_byte,
    line_batches,
    source_name,
)
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
from cluster_decide.inventory.sanity import gpu_check, state_check, time_checks
from cluster_decide.inventory.sniff import fields_command, guess_fields, sniff_delimiter

__all__ = [
    "AWS_FIELDS",
    "USED_FIELDS",
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
USED_FIELDS = frozenset(
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
"""The sacct fields the reader takes (lower case); an export's other fields are skipped."""


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

    Counts are floats, so a count too large for an integer is seen (and refused) as such.

    The untyped `gres/gpu=N` is the total; typed entries are only summed when it is absent,
    so a job listed both ways is not counted twice. Null when the string names no GPU.
    """
    untyped = expr.str.extract(r"(?:^|,)gres/gpu=(\d+)", 1).cast(pl.Float64, strict=False)
    typed = expr.str.extract_all(r"(?:^|,)gres/gpu:[^=,]+=\d+")
    typed_sum = typed.list.eval(
        pl.element().str.extract(r"=(\d+)$", 1).cast(pl.Float64, strict=False)
    ).list.sum()
    typed_sum = pl.when(typed.list.len() > 0).then(typed_sum).otherwise(None)
    gtype = expr.str.extract(r"(?:^|,)gres/gpu:([^=,]+)=", 1)
    return pl.coalesce(untyped, typed_sum), gtype


def gres_gpus(expr: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(GPU count, GPU type) from an older GRES string: `gpu:2`, `gpu:v100:2(IDX:0-1)`."""
    groups = expr.str.extract_groups(r"(?:^|,)gpu(?::([A-Za-z][^:,()]*))?:(\d+)")
    count = groups.struct.field("2").cast(pl.Float64, strict=False)
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
        total.struct.field("2").cast(pl.Float64, strict=False),
        gres.struct.field("2").cast(pl.Float64, strict=False),
        per_node.struct.field("2").cast(pl.Float64, strict=False) * n_nodes,
        per_other.struct.field("2").cast(pl.Float64, strict=False),
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
    head: list[str],
    delimiter: str,
    fields: Sequence[str] | str | None,
    header: bool | None,
) -> tuple[list[str], int, bool]:
    """(field names, how many trailing fields may be missing, first line is a header).

    `head` is the export's first content lines: the first is the header, if any; the others
    feed the guess shown when a header-less export comes without its field list.
    """
    first = head[0]
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
            expected="sacct --parsable2 output (pass format= if this is another format, or "
            "delimiter= / --delimiter for sacct --delimiter=X)",
        )
    raw = first.split(delimiter)
    if len(raw) in (25, 26) and raw[1][:1].isdigit() and raw[0][:1].isupper():
        return [*AWS_FIELDS, "Partition"], 1, False
    guess = guess_fields(head, delimiter)
    if "JobID" not in guess:
        raise InventoryError(
            name,
            f"does not look like a sacct export: no header, and no field holds job ids "
            f"({len(guess)} fields per line, delimiter {delimiter!r})",
            expected="sacct --parsable2 output (pass format= if this is another format, or "
            "fields= / --fields naming the sacct -o fields in order)",
        )
    trailing = " and a trailing delimiter (--parsable)" if len(raw) > len(guess) else ""
    unnamed = [g for g in guess if g.startswith("X")]
    hint = (
        f"; name the {', '.join(unnamed)} field{'s' if len(unnamed) > 1 else ''} from your "
        "sacct -o list (User, Account, Partition, JobName, NCPUS, ...) or leave them, and they "
        "are skipped"
        if unnamed
        else ""
    )
    raise InventoryError(
        name,
        f"no header line and no field list ({len(guess)} fields per line{trailing}, "
        f"delimiter {delimiter!r}); the values look like {','.join(guess)}",
        expected=f"the sacct -o fields in order: {fields_command(name, guess, delimiter)}{hint}",
    )


def read_sacct(
    source: Source,
    *,
    tz: str = "UTC",
    fields: Sequence[str] | str | None = None,
    delimiter: str | None = None,
    header: bool | None = None,
    expand_arrays: bool = False,
    max_bad_fraction: float = 0.05,
    progress: Callable[[int, int], None] | None = None,
) -> ReadResult:
    """Read a `sacct --parsable2` (or `--parsable`) export into the job table.

    `tz` is the zone of the host that ran sacct (its times carry no offset). `fields` names
    the `-o` fields when the export has no header (a list, or the `-o` string). `delimiter`
    is sacct's `--delimiter` (default: the character that splits the first lines alike, else
    `|`); a trailing one (`--parsable`) is accepted. Step rows (`.batch`, `.extern`, `.0`,
    `.interactive`) are folded into their allocation; `expand_arrays` turns a pending array
    `123_[1-5%2]` into one pending row per task. Raises InventoryError when more than
    `max_bad_fraction` of the rows are malformed, or on an empty or foreign file.
    The file streams: it is split in batches of `detect.BATCH_BYTES`, PIPELINE of them parsed
    at once in chunks of CHUNK_ROWS lines, so memory follows the jobs kept, not the file's size.
    `progress(rows_done, rows_total)` is called after each chunk; the total is projected
    from the bytes read until the last batch, where it is exact (the CLI feeds a tqdm bar).
    """
    name = source_name(source)
    report = ReadReport(source=name, format="sacct")
    layout: _Layout | None = None
    after = 0  # line number of the header, or of the line before the first record
    parts: list[_Chunk] = []

    def take(batch: LineBatch, chunks: list[tuple[int, _Chunk]]) -> None:
        """Account for one parsed batch, in file order."""
        done = report.rows_read
        report.rows_read += sum(rows for rows, _ in chunks)
        # Rows of the whole file: exact in the last batch, projected from the bytes before it
        # (and always above the rows done, so a progress bar never looks finished too early).
        total = (
            report.rows_read
            if batch.last
            else max(report.rows_read + 1, round(report.rows_read / max(batch.fraction, 1e-9)))
        )
        for rows, chunk in chunks:
            parts.append(chunk)
            done += rows
            if progress is not None:
                progress(done, total)

    # Batches are parsed on PIPELINE threads while the next one is read: polars releases the
    # GIL, and one batch alone keeps only about one core busy. At most PIPELINE batches are in
    # flight, so memory stays bounded.
    with ThreadPoolExecutor(max_workers=PIPELINE) as pool:
        in_flight: deque[tuple[LineBatch, Future[list[tuple[int, _Chunk]]]]] = deque()
        for batch in line_batches(source):
            if layout is None:
                head = batch.head_content(_SNIFF_LINES)
                if not head:
                    continue
                layout, has_header = _layout_of(name, head, delimiter, fields, header)
                layout.tz = tz
                after = head[0][0] - (0 if has_header else 1)
            in_flight.append((batch, pool.submit(_read_batch, batch, layout, after)))
            if len(in_flight) >= PIPELINE:
                oldest, future = in_flight.popleft()
                take(oldest, future.result())
        while in_flight:
            oldest, future = in_flight.popleft()
            take(oldest, future.result())
    if layout is None:
        raise InventoryError(name, "file is empty", expected="sacct --parsable2 rows")
    if report.rows_read == 0:
        raise InventoryError(name, "header but no job rows", expected="sacct rows")
    record_bad(report, pl.concat([p.bad for p in parts]))
    _enforce_early(report, max_bad_fraction)
    jobs = _combine(parts, layout, report, expand_arrays)
    _check_elapsed(name, jobs, layout)
    jobs = localize(jobs, ["submit", "start", "end"], tz, report)
    jobs = conform(jobs, tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)


def _check_elapsed(name: str, jobs: pl.DataFrame, layout: _Layout) -> None:
    """Refuse an export whose Elapsed disagrees with End - Start for most jobs that ran.

    Elapsed is the duration every GPU-hour is computed from; when another field sits in its
    place (a Timelimit, a CPU time), most jobs disagree with their own start and end. A few
    may (suspended jobs, a DST fold in wall-clock times), so only a majority of 20 or more
    jobs refuses the file.
    """
    if not {"start", "end"} <= layout.present or not {"elapsed", "elapsedraw"} & layout.present:
        return
    span = (pl.col("end") - pl.col("start")).dt.total_seconds()
    ran = jobs.filter(span > 0)
    if ran.height < 20:
        return
    off = ran.select(
        ((pl.col("elapsed_s") - span).abs() > pl.max_horizontal(span * 0.05, pl.lit(120))).sum()
    ).item()
    if off * 2 > ran.height:
        label = layout.labels.get("elapsed") or layout.labels["elapsedraw"]
        raise InventoryError(
            name,
            f"{label} looks mislabelled: it differs from End - Start by more than 5% in "
            f"{off:,} of the {ran.height:,} jobs that ran",
            expected=f"{label} as the job's wall-clock duration; check the header or the "
            "--fields order",
        )


_SNIFF_LINES = 50
"""Content lines the delimiter and a field guess are read from."""


def _layout_of(
    name: str,
    head: list[tuple[int, str]],
    delimiter: str | None,
    fields: Sequence[str] | str | None,
    header: bool | None,
) -> tuple[_Layout, bool]:
    """The export's layout from its first content lines, and whether the first is a header."""
    first_line, first = head[0]
    if first.lstrip().startswith(("{", "[")):
        raise InventoryError(
            name, "this is JSON, not sacct text", line=first_line, expected="format='sacct_json'"
        )
    texts = [text for _, text in head]
    if delimiter is None:
        delimiter = sniff_delimiter(texts) or "|"
    elif not delimiter or delimiter in ("\n", "\r"):
        raise InventoryError(name, f"bad delimiter {delimiter!r}", expected="sacct's --delimiter")
    names, optional_tail, has_header = _resolve_layout(name, texts, delimiter, fields, header)
    keys = [n.lower() for n in names]
    if "jobid" not in keys and "jobidraw" not in keys:
        raise InventoryError(name, f"fields {names} lack JobID", expected="JobID or JobIDRaw")
    return _Layout(names, keys, delimiter, optional_tail), has_header


PIPELINE = 2
"""Batches parsed at once (each on its own thread)."""


def _read_batch(batch: LineBatch, layout: _Layout, after: int) -> list[tuple[int, _Chunk]]:
    """One batch's records parsed: (rows, chunk) per chunk of at most CHUNK_ROWS lines."""
    return [
        (piece.height, _parse(piece, layout, quote))
        for piece, quote in _batch_pieces(batch, layout, after)
    ]


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
        self.present = {k for k in self.first_index if k in USED_FIELDS}
        self.labels = {k: names[i] for k, i in self.first_index.items()}
        self.tz = "UTC"  # the zone of the export's wall-clock times

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
    the slice), malformed lines, the ids of rejected allocation rows, and how many step
    rows each job whose allocation row is not in the slice has (`far_steps`).
    """

    allocs: pl.DataFrame
    steps: pl.DataFrame
    candidates: pl.DataFrame
    bad: pl.DataFrame
    n_steps: int
    rejected: pl.Series
    far_steps: pl.DataFrame


def _content(lines: pl.DataFrame) -> pl.DataFrame:
    """The lines that hold a record or a header: not blank, not a `#` comment."""
    return lines.filter(pl.col("text").str.contains(r"\S") & ~pl.col("text").str.starts_with("#"))


def _batch_pieces(
    batch: LineBatch, layout: _Layout, after: int
) -> list[tuple[pl.DataFrame, Callable[[list[int]], list[str]] | None]]:
    """One batch's record lines as frames of fields, at most CHUNK_ROWS rows each.

    Lines with the usual field count go through polars' native CSV parser in one call (the
    fast path); the rest (wrong field counts, comments, blank lines, carriage returns, NUL
    bytes) are split one by one and checked as before. Each frame comes with a function that
    quotes its lines' text by line number, or None when the frame carries a `text` column.
    """
    if not _fast_capable(layout):
        slow, fast, quote = batch.lines, None, None
    else:
        index = _LineIndex(batch, layout)
        fast = index.read_uniform(after)
        if fast is None:
            index.classify(after)
            slow, fast = index.slow_lines(), index.read_fast()
        else:
            slow = pl.DataFrame(schema={"line_no": pl.Int64, "text": pl.String})
        quote = index.quote
    pieces: list[tuple[pl.DataFrame, Callable[[list[int]], list[str]] | None]] = []
    slow = _content(slow.filter(pl.col("line_no") > after))
    for i in range(0, slow.height, CHUNK_ROWS):
        pieces.append((_fields(slow.slice(i, CHUNK_ROWS), layout), None))
    if fast is not None:
        for i in range(0, fast.height, CHUNK_ROWS):
            pieces.append((fast.slice(i, CHUNK_ROWS), quote))
    return pieces


def _fast_capable(layout: _Layout) -> bool:
    """Whether polars' CSV parser can split this layout: a one-byte delimiter, 2+ fields."""
    return len(layout.delimiter.encode()) == 1 and len(layout.names) >= 2


class _LineIndex:
    """Which lines of a batch take the fast path, and where each line starts and ends.

    A line takes it when it has the batch's most common valid field count (so one CSV parse
    gives a rectangular frame), no carriage return or NUL byte, does not start with `#`, and
    comes after the header. Most batches are proven uniform from two byte counts
    (`read_uniform`); the others are classified line by line with numpy (`classify`).
    """

    def __init__(self, batch: LineBatch, layout: _Layout) -> None:
        self.batch, self.layout = batch, layout
        self.delim = layout.delimiter.encode()
        n_fields = len(layout.names)
        self.allowed = range(n_fields - 1 - layout.optional_tail, n_fields + 1)
        self.ok = np.zeros(0, dtype=bool)
        self.k = 0
        self._bounds: tuple[np.ndarray, np.ndarray] | None = None

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) byte offsets of every line, end excluding the newline."""
        if self._bounds is None:
            body = self.batch.body
            ends = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == 10)
            if body and not body.endswith(b"\n"):
                ends = np.append(ends, len(body))
            starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
            self._bounds = starts, ends
        return self._bounds

    def read_uniform(self, after: int) -> pl.DataFrame | None:
        """The whole batch parsed at once, or None unless every line is a plain record.

        The batch qualifies when it holds no header, comment, carriage return or NUL byte
        and its delimiters number exactly k per line on average for a valid k; since the
        parser rejects any line with more than k, every line then has exactly k.
        """
        batch, delim = self.batch, self.delim
        body, n_lines = batch.body, batch.n_lines
        if (
            not n_lines
            or after > batch.offset
            or b"\r" in body
            or b"\x00" in body
            # One-byte searches are cheap; the two-byte one runs only when a '#' appears.
            or (b"#" in body and (body.startswith(b"#") or b"\n#" in body))
        ):
            return None
        k, rest = divmod(count_byte(body, delim), n_lines)
        if rest or k not in self.allowed:
            return None
        if k == len(self.layout.names):  # --parsable: every line must end with the delimiter
            unterminated = not body.endswith(b"\n") and body.endswith(delim)
            if body.count(delim + b"\n") + unterminated != n_lines:
                return None
        self.k, self.ok = k, np.ones(n_lines, dtype=bool)
        try:
            frame = self._read(body, np.arange(n_lines), "utf8")
        except pl.exceptions.PolarsError:  # a line with more fields than the first, bad UTF-8
            return None
        return frame if frame.height == n_lines else None

    def classify(self, after: int) -> None:
        """Mark the fast lines one by one: counts of delimiters per line, with numpy."""
        body, offset = self.batch.body, self.batch.offset
        buf = np.frombuffer(body, dtype=np.uint8)
        starts, ends = self.bounds()
        if not len(ends):
            self.ok = np.zeros(0, dtype=bool)
            return
        delim = self.delim[0]
        n_delims = np.diff(np.searchsorted(np.flatnonzero(buf == delim), ends), prepend=0)
        top = self.allowed[-1]
        counts = np.bincount(np.clip(n_delims, 0, top + 1), minlength=top + 2)
        self.k = max(self.allowed, key=lambda k: (counts[k], -k))
        nonempty = ends > starts
        first = np.where(nonempty, buf[np.minimum(starts, len(buf) - 1)], 0)
        ok = (n_delims == self.k) & (first != ord("#"))
        if self.k == len(self.layout.names):  # --parsable: a trailing delimiter
            ok &= np.where(nonempty, buf[np.maximum(ends - 1, 0)], 0) == delim
        ok &= np.arange(len(ends)) + offset + 1 > after
        if b"\r" in body or b"\x00" in body:
            ok[np.searchsorted(ends, np.flatnonzero((buf == 13) | (buf == 0)))] = False
        self.ok = ok

    def read_fast(self) -> pl.DataFrame:
        """The fast lines that `classify` marked, parsed by polars in one call."""
        index = np.flatnonzero(self.ok)
        body = self.batch.body
        if len(index) < len(self.ok):
            starts, _ = self.bounds()
            spans = np.append(starts[1:], len(body)) - starts
            body = np.frombuffer(body, dtype=np.uint8)[np.repeat(self.ok, spans)].tobytes()
        return self._read(body, index, "utf8-lossy")

    def _read(self, body: bytes, index: np.ndarray, encoding: str) -> pl.DataFrame:
        """Parse lines with k delimiters each: `line_no` and the used fields, as strings."""
        layout = self.layout
        keys = sorted(layout.present)
        if not len(index):
            return pl.DataFrame(schema={"line_no": pl.Int64, **dict.fromkeys(keys, pl.String)})
        read = sorted((layout.first_index[k], k) for k in keys if layout.first_index[k] <= self.k)
        frame = pl.read_csv(
            body,
            has_header=False,
            separator=layout.delimiter,
            quote_char=None,
            columns=[i for i, _ in read],
            infer_schema=False,
            empty_string_is_null=False,
            truncate_ragged_lines=False,
            encoding=encoding,
        )
        frame.columns = [k for _, k in read]
        return frame.select(
            pl.Series("line_no", index + self.batch.offset + 1, dtype=pl.Int64),
            *[
                pl.col(k) if k in frame.columns else pl.lit(None, dtype=pl.String).alias(k)
                for k in keys
            ],
        )

    def slow_lines(self) -> pl.DataFrame:
        """The lines `classify` left out, as numbered text (decoded one by one when few)."""
        index = np.flatnonzero(~self.ok)
        if len(index) * 4 > len(self.ok):
            return self.batch.lines.filter(pl.Series(~self.ok))
        line_nos = index + self.batch.offset + 1
        return pl.DataFrame(
            {"line_no": line_nos, "text": self.quote(line_nos.tolist())},
            schema={"line_no": pl.Int64, "text": pl.String},
        )

    def quote(self, line_nos: list[int]) -> list[str]:
        """The text of lines of this batch, by line number."""
        body, offset = self.batch.body, self.batch.offset
        starts, ends = self.bounds()
        return [
            body[starts[n - offset - 1] : ends[n - offset - 1]]
            .decode("utf-8", errors="replace")
            .rstrip("\r\n")
            for n in line_nos
        ]


def _fields(content: pl.DataFrame, layout: _Layout) -> pl.DataFrame:
    """Split lines into the used fields, flagging lines with a wrong field count."""
    n_fields = len(layout.names)
    delimiter = layout.delimiter
    text = pl.col("text")
    n_delims = text.str.count_matches(delimiter, literal=True)
    trailing = (n_delims == n_fields) & text.str.ends_with(delimiter)
    count_ok = n_delims.is_between(n_fields - 1 - layout.optional_tail, n_fields - 1) | trailing
    split = text.str.split_exact(delimiter, n_fields - 1)
    return content.select(
        "line_no",
        *[
            split.struct.field(f"field_{layout.first_index[k]}").alias(k)
            for k in sorted(layout.present)
        ],
        "text",
        count_ok.alias("_count_ok"),
        n_delims.alias("_n"),
    )


def _parse(
    frame: pl.DataFrame, layout: _Layout, quote: Callable[[list[int]], list[str]] | None
) -> _Chunk:
    """Validate and parse one frame of fields (the vectorized stage) into a `_Chunk`.

    `quote` gives the text of malformed lines when the frame has no `text` column.
    """
    n_fields = len(layout.names)
    col = layout.col
    ids = col("jobid", "jobidraw").str.extract_groups(_JOBID)
    frame = frame.with_columns(
        ids.struct.field("1").alias("_alloc"), ids.struct.field("2").alias("_step")
    )
    count_check = (
        [
            (
                ~pl.col("_count_ok"),
                pl.format(
                    f"wrong number of fields: expected {n_fields}, got {{}}", pl.col("_n") + 1
                ),
            )
        ]
        if "_count_ok" in frame.columns
        else []
    )
    if "text" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias("text"))
    frame, early_bad = split_bad(
        frame,
        [
            *count_check,
            (
                pl.col("_alloc").is_null(),
                pl.format(
                    "bad JobID: expected 123, 123_4, 123_[1-5] or 123.batch, got '{}'",
                    col("jobid", "jobidraw").fill_null(""),
                ),
            ),
        ],
    )
    frame = frame.drop("_count_ok", "_n", strict=False)
    is_step = pl.col("_step").is_not_null()
    parsed, checks = _parse_allocations(frame.filter(~is_step), layout)
    allocs, bad_allocs = split_bad(parsed, checks)
    jobs, bad_jobs = split_bad(_columns(allocs.drop("text"), layout), _sanity_checks(layout))
    if not bad_jobs.is_empty() and layout.tz != "UTC":
        # Wall-clock times out of order by up to an hour in a DST fold are no error: checked
        # again with that allowance, on the few rows that failed.
        again, bad_jobs = split_bad(bad_jobs.drop("reason"), _sanity_checks(layout, fold=True))
        if not again.is_empty():
            jobs = pl.concat([jobs, again]).sort("line_no")
    jobs = jobs.drop("_gpu_unread")
    # The steps of a rejected allocation row go with it (in `_combine`, which sees every
    # chunk), rather than rebuild the job.
    rejected = pl.concat(
        [
            early_bad.filter(pl.col("_step").is_null())["_alloc"].drop_nulls(),
            bad_allocs["_alloc"],
            bad_jobs["job_id"],
        ]
    )
    n_steps = frame.height - parsed.height
    # Steps matter only where the allocation row leaves something open: its GPUs or GPU type
    # are unknown, its allocation row is elsewhere (another chunk, or none: an orphan), or
    # the step is an `.interactive` one. Most exports name GPUs on the allocation row, so
    # this keeps a small share of the step rows.
    alloc_ids = jobs["job_id"].implode()
    open_ids = jobs.filter(pl.col("_gpus").is_null() | pl.col("_gtype").is_null())["job_id"]
    frame = frame.with_columns((is_step & ~pl.col("_alloc").is_in(alloc_ids)).alias("_far"))
    elsewhere = pl.col("_far")
    interactive_step = pl.col("_step") == "interactive"
    gpu_step = col("alloctres").str.contains("gres/gpu", literal=True)
    candidates = (
        frame.filter(elsewhere).drop("text").unique("_alloc", keep="first", maintain_order=True)
    )
    steps = frame.select(
        "line_no", "_alloc", "_step", "_far", col("alloctres").alias("alloctres")
    ).filter(
        elsewhere
        | (is_step & (interactive_step | (gpu_step & pl.col("_alloc").is_in(open_ids.implode()))))
    )
    with_gpu, bad_steps = split_bad(
        _by_distinct(steps.filter(gpu_step), col("alloctres"), tres_gpus, "_s"),
        [gpu_check(pl.col("_s_n"), "a step's AllocTRES")],
    )
    n_steps -= bad_steps.height
    interactive = (
        steps.filter(interactive_step)
        .select("_alloc", pl.lit(True).alias("_istep"))
        .unique("_alloc")
    )
    summary = with_gpu.group_by("_alloc").agg(
        pl.col("_s_n").max().alias("_sgpus"),
        pl.col("_s_t").first().alias("_stype"),
        pl.col("line_no").first().alias("_sline"),
    )
    summary = summary.join(interactive, on="_alloc", how="full", coalesce=True).select(
        "_alloc", "_istep", "_sgpus", "_stype", "_sline"
    )
    # What steps tell about this chunk's own jobs is joined here, on a chunk-sized frame;
    # only steps whose allocation row is elsewhere go on to the whole-file combine.
    here = pl.col("_alloc").is_in(alloc_ids)
    jobs = jobs.join(
        summary.filter(here).drop("_sline"),
        left_on="job_id",
        right_on="_alloc",
        how="left",
        maintain_order="left",
    )
    bad_jobs = bad_jobs.select("line_no", "reason").join(
        allocs.select("line_no", "text"), on="line_no", how="left"
    )
    bad = pl.concat(
        [
            early_bad.select("line_no", "text", "reason"),
            bad_allocs.select("line_no", "text", "reason"),
            bad_jobs.select("line_no", "text", "reason"),
            bad_steps.select("line_no", "reason")
            .join(frame.select("line_no", "text"), on="line_no", how="left")
            .select("line_no", "text", "reason"),
        ]
    )
    if quote is not None and not bad.is_empty():
        bad = bad.with_columns(pl.Series("text", quote(bad["line_no"].to_list()), pl.String))
    far = (
        elsewhere
        if bad_steps.is_empty()
        else elsewhere & ~pl.col("line_no").is_in(bad_steps["line_no"].implode())
    )
    far_steps = frame.filter(far).group_by("_alloc").len()  # bad steps are counted already
    return _Chunk(jobs, summary.filter(~here), candidates, bad, n_steps, rejected, far_steps)


def _enforce_early(report: ReadReport, max_bad_fraction: float) -> None:
    """Fail before the costly part when the malformed share is already over the limit."""
    if report.rows_read and report.malformed_rows / report.rows_read > max_bad_fraction:
        enforce_threshold(report, max_bad_fraction)


_HMS = r"^(?:(\d+)-)?(\d\d):(\d\d):(\d\d)$"
"""The common sacct duration, `[D-]HH:MM:SS`, read with one regex."""


def _elapsed_seconds(frame: pl.DataFrame, expr: pl.Expr) -> pl.Series:
    """`parse_elapsed` of `expr`, with the common `[D-]HH:MM:SS` read by one regex.

    Only the rows that regex misses go through the general parser, which costs several
    times more per row.
    """
    values = frame.select("line_no", expr.alias("_v"))["_v"]
    parts = pl.col("_v").str.extract_groups(_HMS)
    days, hours, minutes, seconds = (
        parts.struct.field(str(i)).cast(pl.Float64) for i in range(1, 5)
    )
    fast = days.fill_null(0.0) * 86400.0 + hours * 3600.0 + minutes * 60.0 + seconds
    secs = values.to_frame().select(fast.alias("_v"))["_v"]
    miss = (secs.is_null() & values.is_not_null()).arg_true()
    if miss.len():
        rest = values.gather(miss).to_frame().select(parse_elapsed(pl.col("_v")).alias("_v"))["_v"]
        secs = secs.scatter(miss, rest)
    return secs


def _parse_allocations(
    allocs: pl.DataFrame, layout: _Layout
) -> tuple[pl.DataFrame, list[tuple[pl.Expr, pl.Expr]]]:
    """Parse allocation rows once (times, durations, counts); return them and their checks."""
    col, present, labels = layout.col, layout.present, layout.labels
    parsed = {
        f"_{k}": col(k).str.strptime(pl.Datetime("us"), _TIME_FORMAT, strict=False)
        for k in ("submit", "start", "end")
    }
    for key in _INT_FIELDS:
        parsed[f"_{key}"] = col(key).str.extract(r"^(\d+)", 1).cast(pl.Int64, strict=False)
    out = allocs.with_columns(v.alias(k) for k, v in parsed.items())
    out = out.with_columns(_elapsed_seconds(out, col("elapsed")).alias("_elapsed"))
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
    unreadable = []
    for key, parse, prefix in (
        ("alloctres", tres_gpus, "_a"),
        ("reqtres", tres_gpus, "_r"),
        ("allocgres", gres_gpus, "_ag"),
        ("reqgres", gres_gpus, "_rg"),
    ):
        if key in present:
            allocs = _by_distinct(allocs, col(key), parse, prefix)
            unreadable.append(
                pl.when(pl.col(f"{prefix}_x")).then(
                    pl.format(f"{layout.labels[key]} '{{}}'", col(key))
                )
            )
        else:
            allocs = allocs.with_columns(
                pl.lit(None, dtype=pl.Float64).alias(f"{prefix}_n"),
                pl.lit(None, dtype=pl.String).alias(f"{prefix}_t"),
            )
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
        pl.coalesce("_a_n", "_r_n", "_ag_n", "_rg_n", s_n).alias("_gpus"),
        pl.coalesce(*unreadable, pl.lit(None, dtype=pl.String)).alias("_gpu_unread"),
        pl.coalesce("_a_t", "_r_t", "_ag_t", "_rg_t", s_t).alias("_gtype"),
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


def _sanity_checks(layout: _Layout, *, fold: bool = False) -> list[tuple[pl.Expr, pl.Expr]]:
    """The `sanity` checks on `_columns` output: time order and dates, GPUs, state, counts.

    `fold` allows times out of order by up to an hour in the export zone's DST fold (costly:
    for the rows that failed without it).
    """
    labels: dict[str, str] = {
        k: layout.labels[k] for k in ("submit", "start", "end") if k in layout.present
    }
    checks = time_checks(labels, fold_zone=layout.tz if fold else None)
    checks.append(gpu_check(pl.col("_gpus"), "TRES/GRES"))
    checks.append(
        (
            pl.col("_gpu_unread").is_not_null(),
            pl.format("bad GPU count: cannot read the GPUs in {}", pl.col("_gpu_unread")),
        )
    )
    if "state" in layout.present:
        checks.append(state_check(pl.col("state"), pl.col("state"), layout.labels["state"]))
    checks.append(
        (
            (pl.col("cpus") > 0) & (pl.col("nodes") > pl.col("cpus")),
            pl.format(
                "impossible counts (more nodes than CPUs): {} nodes, {} CPUs",
                pl.col("nodes"),
                pl.col("cpus"),
            ),
        )
    )
    return checks


def _by_distinct(
    frame: pl.DataFrame,
    source: pl.Expr,
    parse: Callable[[pl.Expr], tuple[pl.Expr, pl.Expr]],
    prefix: str,
) -> pl.DataFrame:
    """Add `{prefix}_n` and `{prefix}_t`, `parse(source)` computed once per distinct value.

    TRES and GRES strings repeat across jobs (thousands of distinct values in millions of
    rows), so the regexes run on the distinct values and a hash lookup maps them back.
    `{prefix}_x` is true where the string names GPUs (`gres/gpu=`, `gpu:`) whose count
    cannot be read.
    """
    values = frame.select("line_no", source.alias("_v"))["_v"]  # a literal broadcasts
    count, gtype = parse(pl.col("_v"))
    table = (
        values.drop_nulls()
        .unique()
        .to_frame()
        .select(
            "_v",
            count.cast(pl.Float64).alias("n"),
            gtype.cast(pl.String).alias("t"),
            (pl.col("_v").str.contains(_NAMES_GPUS) & count.is_null()).alias("x"),
        )
    )
    unread = table.filter("x")["_v"]  # usually none: then no third lookup per row
    return frame.with_columns(
        *[
            values.replace_strict(table["_v"], table[c], default=None, return_dtype=dtype).alias(
                f"{prefix}_{c}"
            )
            for c, dtype in (("n", pl.Float64), ("t", pl.String))
        ],
        (values.is_in(unread.implode()) if unread.len() else pl.lit(False)).alias(f"{prefix}_x"),
    )


_NAMES_GPUS = r"(?:^|,)(?:gres/gpu[=:]|gpu(?:[:(,]|$))"
"""A TRES or GRES string that names GPUs: `gres/gpu=4`, `gres/gpu:a100=4`, `gpu:2`, `gpu`."""


def _combine(
    parts: list[_Chunk], layout: _Layout, report: ReadReport, expand_arrays: bool
) -> pl.DataFrame:
    """Fold steps into allocations across chunks: duplicates, orphans, step evidence."""
    allocs = pl.concat([p.allocs for p in parts])
    if not allocs["line_no"].is_sorted():  # fast and slow pieces of a batch interleave
        allocs = allocs.sort("line_no")
    n_steps = sum(p.n_steps for p in parts)
    report.rows_used = allocs.height + n_steps
    # Distinct 64-bit hashes prove distinct ids; only a (rare) repeat needs the exact count.
    if allocs.select(pl.col("job_id").hash().n_unique()).item() < allocs.height:
        dup = allocs.height - allocs.select(pl.col("job_id").n_unique()).item()
        if dup:
            # The kept record takes the step evidence merged into any copy of it.
            evidence = (
                allocs.filter(pl.col("job_id").is_duplicated())
                .group_by("job_id")
                .agg(
                    pl.col("_istep").any(),
                    pl.col("_sgpus").max(),
                    pl.col("_stype").drop_nulls().first(),
                )
            )
            allocs = allocs.unique("job_id", keep="last", maintain_order=True)
            allocs = allocs.update(evidence, on="job_id", how="left")
            report.skip("duplicate job record (the last one is kept)", dup)
            report.rows_used -= dup
    candidates = pl.concat([p.candidates for p in parts]).sort("line_no")
    # Steps of a job whose allocation row was rejected (and has no good copy) are dropped
    # with it, counted, rather than rebuild the job from a step.
    rejected = pl.concat([p.rejected for p in parts]).unique()
    if rejected.len():
        rejected = rejected.filter(~rejected.is_in(allocs["job_id"].implode()))
        far_steps = pl.concat([p.far_steps for p in parts])
        dropped = int(far_steps.filter(pl.col("_alloc").is_in(rejected.implode()))["len"].sum())
        report.skip("step row of a rejected job row", dropped)
        report.rows_used -= dropped
        n_steps -= dropped
        candidates = candidates.filter(~pl.col("_alloc").is_in(rejected.implode()))
    # Look the few candidate ids up among the jobs, not the jobs among the candidates.
    known = allocs.filter(pl.col("job_id").is_in(candidates["_alloc"].unique().implode()))
    promoted = candidates.filter(~pl.col("_alloc").is_in(known["job_id"].implode())).unique(
        "_alloc", keep="first", maintain_order=True
    )
    if not promoted.is_empty():
        report.notes.append(
            f"{promoted.height} jobs had step rows but no allocation row; each was built "
            "from its first step"
        )
        parsed, checks = _parse_allocations(promoted, layout)
        parsed, bad_parsed = split_bad(parsed, checks)
        found, bad_found = split_bad(_columns(parsed, layout), _sanity_checks(layout))
        bad = pl.concat(
            [bad_parsed.select("line_no", "reason"), bad_found.select("line_no", "reason")]
        )
        record_bad(report, bad.with_columns(pl.lit("(a step row)").alias("text")))
        report.rows_used -= bad.height
        found = found.drop("_gpu_unread").with_columns(
            pl.lit(None, dtype=pl.Boolean).alias("_istep"),
            pl.lit(None, dtype=pl.Float64).alias("_sgpus"),
            pl.lit(None, dtype=pl.String).alias("_stype"),
        )
        allocs = pl.concat([allocs, found]).sort("line_no")
    report.steps_collapsed = n_steps - promoted.height
    # Steps in another chunk than their allocation row (few): merged with the chunk's own.
    far = (
        pl.concat([p.steps for p in parts])
        .group_by("_alloc")
        .agg(
            pl.col("_istep").any().alias("_fistep"),
            pl.col("_sgpus").max().alias("_fgpus"),
            pl.col("_stype").sort_by("_sline").drop_nulls().first().alias("_ftype"),
        )
    )
    jid = pl.col("job_id")
    has_evidence = bool(n_steps) or "submitline" in layout.present
    out = allocs.join(
        far, left_on="job_id", right_on="_alloc", how="left", maintain_order="left"
    ).select(
        "job_id",
        pl.when(jid.str.contains("_", literal=True))
        .then(jid.str.splitn("_", 2).struct.field("field_0"))
        .alias("array_parent"),
        "user",
        "account",
        "partition",
        "submit",
        "start",
        "end",
        "elapsed_s",
        pl.coalesce("_gpus", pl.max_horizontal("_sgpus", "_fgpus"), pl.lit(0))
        .cast(pl.Int64)
        .alias("gpus"),
        pl.coalesce("_gtype", "_stype", "_ftype").alias("gpu_type"),
        "nodes",
        "cpus",
        "state",
        "exit_code",
        "name",
        (
            pl.col("_istep").fill_null(False)
            | pl.col("_fistep").fill_null(False)
            | pl.col("_salloc").fill_null(False)
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
    pending = out.filter(pl.col("job_id").str.ends_with("]")).filter(spec.is_not_null())
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
