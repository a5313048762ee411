"""Slurm `sacct --json` / slurmdbd REST responses into the job table.

Handles the data_parser drift from v0.0.37 to v0.0.44: `state.current` as a string or a list,
numbers as plain ints or `{set, infinite, number}`, epoch 0 for unset times. GPUs come from
the allocated TRES, then the requested TRES, then the steps' TRES, then the submit line
(`--gpus N`, `--gres gpu:N`, `--gpus-per-node h100:1` x nodes), because slurmdbd often
records GPU jobs without a GPU TRES.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from cluster_decide.inventory.detect import Source, read_bytes, source_name
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.jobs import (
    ReadReport,
    ReadResult,
    conform,
    enforce_threshold,
    normalize_gpu_type,
    normalize_state,
    record_bad,
    split_bad,
)
from cluster_decide.inventory.sacct import submit_line_gpus
from cluster_decide.inventory.sanity import gpu_check, job_problem

__all__ = ["number", "read_sacct_json", "tres_gpu_count"]


def number(value: Any) -> int | None:
    """A slurmdbd number: plain int, or `{set, infinite, number}` (unset/infinite -> None)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        return number(value.get("number"))
    return None


def tres_gpu_count(entries: Any) -> tuple[int | None, str | None]:
    """(GPU count, GPU type) from a TRES list of `{type, name, count}`; (None, None) if none.

    An untyped `gpu` entry is the total; typed `gpu:a100` entries are summed only without it.
    """
    if not isinstance(entries, list):
        return None, None
    untyped: int | None = None
    typed = 0
    gtype: str | None = None
    found_typed = False
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "gres":
            continue
        tname = str(entry.get("name") or "")
        count = number(entry.get("count"))
        if count is None or count < 0:
            continue
        if tname == "gpu":
            untyped = count
        elif tname.startswith("gpu:"):
            found_typed = True
            typed += count
            gtype = gtype or tname.split(":", 1)[1]
    if untyped is not None:
        return untyped, gtype
    return (typed, gtype) if found_typed else (None, None)


def _obj(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (shapes drift between versions)."""
    return value if isinstance(value, dict) else {}


def _time(value: Any) -> int | None:
    secs = number(value)
    return secs if secs else None


def _state(job: dict) -> str | None:
    state = job.get("state")
    current = state.get("current") if isinstance(state, dict) else state
    if isinstance(current, list):
        current = current[0] if current else None
    return str(current) if current is not None else None


def _job_id(job: dict) -> tuple[str, str | None]:
    jid = number(job.get("job_id"))
    if jid is None:
        raise ValueError("job_id missing or not a number")
    array = _obj(job.get("array"))
    parent = number(array.get("job_id"))
    task = number(array.get("task_id"))
    if parent and task is not None:
        return f"{parent}_{task}", str(parent)
    if parent and array.get("task"):
        return f"{parent}_[{array['task']}]", str(parent)
    het = _obj(job.get("het"))
    het_id = number(het.get("job_id"))
    offset = number(het.get("job_offset"))
    if het_id and offset is not None:
        return f"{het_id}+{offset}", None
    return str(jid), None


class _BadJob(ValueError):
    """A job record that reads but cannot be right (see `sanity`): its reason is the key."""


def _row(job: dict) -> dict[str, Any]:
    """One job record as plain values (GPU fallbacks from the submit line come later)."""
    job_id, parent = _job_id(job)
    times = _obj(job.get("time"))
    tres = _obj(job.get("tres"))
    gpus, gtype = tres_gpu_count(tres.get("allocated"))
    if gpus is None:
        gpus, gtype = tres_gpu_count(tres.get("requested"))
    steps = job.get("steps")
    interactive = False
    for raw_step in steps if isinstance(steps, list) else []:
        step = _obj(raw_step)
        sid = _obj(step.get("step")).get("id")
        interactive = interactive or str(sid or "").endswith(".interactive")
        if gpus is None:
            gpus, gtype = tres_gpu_count(_obj(step.get("tres")).get("allocated"))
    alloc = {
        e.get("type"): number(e.get("count"))
        for e in (tres.get("allocated") or [])
        if isinstance(e, dict)
    }
    req = {
        e.get("type"): number(e.get("count"))
        for e in (tres.get("requested") or [])
        if isinstance(e, dict)
    }
    nodes = number(job.get("allocation_nodes")) or alloc.get("node") or req.get("node")
    required = _obj(job.get("required"))
    cpus = alloc.get("cpu") or req.get("cpu") or number(required.get("CPUs"))
    exit_info = _obj(job.get("exit_code"))
    start, end = _time(times.get("start")), _time(times.get("end"))
    submit = _time(times.get("submission"))
    problem = job_problem(submit, start, end, gpus, _state(job))
    if problem is None:
        big = [(k, v) for k, v in (("nodes", nodes), ("CPUs", cpus)) if v and v >= 2**53]
        problem = f"bad count: {big[0][0]} {big[0][1]} is no count" if big else None
    if problem is not None:
        raise _BadJob(problem)
    elapsed = number(times.get("elapsed"))
    if elapsed is None:
        elapsed = (end - start) if start and end else 0
    return {
        "job_id": job_id,
        "array_parent": parent,
        "user": job.get("user") or None,
        "account": job.get("account") or None,
        "partition": job.get("partition") or None,
        "submit_epoch": submit,
        "start_epoch": start,
        "end_epoch": end,
        "elapsed_s": float(elapsed) if start else 0.0,
        "_gpus": gpus,
        "_gtype": gtype,
        "nodes": nodes,
        "cpus": cpus,
        "state": _state(job),
        "exit_code": number(exit_info.get("return_code")),
        "name": job.get("name") or None,
        "_submit_line": job.get("submit_line") or "",
        "_interactive_step": interactive,
    }


_ROW_SCHEMA = {
    "job_id": pl.String,
    "array_parent": pl.String,
    "user": pl.String,
    "account": pl.String,
    "partition": pl.String,
    "submit_epoch": pl.Int64,
    "start_epoch": pl.Int64,
    "end_epoch": pl.Int64,
    "elapsed_s": pl.Float64,
    "_gpus": pl.Float64,
    "_gtype": pl.String,
    "nodes": pl.Int64,
    "cpus": pl.Int64,
    "state": pl.String,
    "exit_code": pl.Int64,
    "name": pl.String,
    "_submit_line": pl.String,
    "_interactive_step": pl.Boolean,
    "_i": pl.Int64,
}


def _said(entries: Any) -> str:
    """The `errors` or `warnings` entries of a slurmdbd response as one line of text."""
    if not isinstance(entries, list):
        return str(entries)
    said = []
    for entry in entries:
        if not isinstance(entry, dict):
            said.append(str(entry))
            continue
        words = [str(entry[k]) for k in ("description", "error") if entry.get(k)]
        if entry.get("error_number"):
            words.append(f"error {entry['error_number']}")
        said.append(", ".join(dict.fromkeys(words)) or json.dumps(entry))
    return "; ".join(said)


def read_sacct_json(
    source: Source, *, tz: str = "UTC", max_bad_fraction: float = 0.05
) -> ReadResult:
    """Read `sacct --json` (or a slurmdbd `/jobs` response) into the job table.

    Times are epoch seconds, converted to zone `tz`. A job entry that cannot be read is
    counted as malformed under its position in `jobs[]` (reported as its "line").
    """
    name = source_name(source)
    report = ReadReport(source=name, format="sacct_json")
    raw = read_bytes(source)
    if not raw.strip():
        raise InventoryError(name, "file is empty", expected="sacct --json output")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InventoryError(
            name, f"not valid JSON: {exc.msg}", line=exc.lineno, expected="sacct --json output"
        ) from None
    except UnicodeDecodeError:
        raise InventoryError(name, "not UTF-8 text", expected="sacct --json output") from None
    if isinstance(doc, dict) and doc.get("errors") and not doc.get("jobs"):
        raise InventoryError(
            name,
            f"an error response with no jobs (slurm said: {_said(doc['errors'])})",
            expected="a response that lists jobs; check the query's time range and filters",
        )
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise InventoryError(name, "no 'jobs' list at the top level", expected="sacct --json")
    parser = ((doc.get("meta") or {}).get("plugin") or {}).get("data_parser")
    if parser:
        report.notes.append(f"data_parser {parser}")
    if not doc["jobs"]:
        said = _said(doc.get("warnings"))
        raise InventoryError(
            name,
            "the response lists no jobs" + (f" (slurm said: {said})" if said else ""),
            expected="at least one job in jobs[]",
        )
    rows = []
    report.rows_read = len(doc["jobs"])
    for i, job in enumerate(doc["jobs"], start=1):
        try:
            if not isinstance(job, dict):
                raise ValueError(f"expected an object, got {type(job).__name__}")
            rows.append({**_row(job), "_i": i})
        except _BadJob as exc:
            report.add_bad(i, f"{exc} (jobs[{i - 1}])", json.dumps(job)[:300])
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            report.add_bad(i, f"bad job entry: jobs[{i - 1}]: {exc}", json.dumps(job)[:300])
    report.rows_used = len(rows)
    frame = (
        pl.DataFrame(rows, schema=_ROW_SCHEMA, orient="row")
        if rows
        else pl.DataFrame(schema=_ROW_SCHEMA)
    )
    s_n, s_t = submit_line_gpus(pl.col("_submit_line"), pl.col("nodes"))
    when = pl.Datetime("us", "UTC")
    jobs = frame.select(
        "_i",
        "job_id",
        "array_parent",
        "user",
        "account",
        "partition",
        *[
            pl.from_epoch(f"{k}_epoch", time_unit="s").cast(when).dt.convert_time_zone(tz).alias(k)
            for k in ("submit", "start", "end")
        ],
        "elapsed_s",
        pl.coalesce("_gpus", s_n, pl.lit(0)).alias("gpus"),
        normalize_gpu_type(pl.coalesce("_gtype", s_t)).alias("gpu_type"),
        "nodes",
        "cpus",
        normalize_state(pl.col("state")).alias("state"),
        "exit_code",
        "name",
        (
            pl.col("_interactive_step")
            | pl.col("_submit_line").str.contains(r"^\s*salloc\b|--pty\b")
        ).alias("interactive"),
    )
    # GPUs read from a submit line are checked here, once the line is parsed.
    jobs, bad = split_bad(jobs, [gpu_check(pl.col("gpus"), "submit line")])
    if not bad.is_empty():
        texts = [json.dumps(doc["jobs"][i - 1])[:300] for i in bad["_i"]]
        record_bad(
            report,
            bad.select(pl.col("_i").alias("line_no"), "reason", pl.Series("text", texts)),
        )
        report.rows_used -= bad.height
    jobs = conform(jobs, tz)
    report.jobs_kept = jobs.height
    enforce_threshold(report, max_bad_fraction)
    return ReadResult(jobs, report)
