"""What a header-less sacct text export looks like: its delimiter, and a guess at its fields.

Sites' accounting scripts run `sacct --parsable --noheader --delimiter=X -o FIELDS`: no header,
a delimiter chosen never to occur in job names (a snowman, `^`, a tab), and with `--parsable`
one more delimiter at the end of every line. The delimiter is found as the character that
splits every sampled line into the same number of fields; the field list cannot be read from
the file, but the values say enough (times, durations, TRES strings, states, job ids) to
guess most of it, so a refusal can show the command to run.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter

from cluster_decide.inventory.jobs import KNOWN_STATES

__all__ = ["fields_command", "guess_fields", "looks_like_sacct", "sniff_delimiter"]

_VALUE_CHARS = frozenset("-:._=/()+[]%@*'\" ")
"""Characters that occur inside sacct values (times, TRES, ids, names): never a delimiter."""

_RANK = {"|": 0, "\t": 2, ";": 3, ",": 4}
"""Preference among delimiters that split every line alike; other characters rank 1.

A comma ranks last: TRES strings hold commas, and a constant TRES makes them look regular.
"""

_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
_DURATION = re.compile(r"^(\d+-)?\d\d:\d\d:\d\d(\.\d+)?$")
_JOBID = re.compile(r"^\d+(_(\d+|\[[0-9,\-%:]+\]))?(\+\d+)?(\.[A-Za-z0-9_\-]+)?$")
_EXIT = re.compile(r"^\d+:\d+$")
_TRES = re.compile(r"^[a-z]+(/[\w:.\-]+)?=[^,=]+(,[a-z]+(/[\w:.\-]+)?=[^,=]+)*$")
_GRES = re.compile(r"(^|,)gpu(:[^:,()]+)?:\d+")
_STATE = re.compile(r"^([A-Z_]+)( by \d+)?$")
_NO_TIME = ("", "Unknown", "None", "N/A")
_SACCT_ONLY = frozenset(
    {"alloctres", "reqtres", "allocgres", "elapsed", "elapsedraw", "nnodes", "ncpus", "exitcode"}
)
"""Field names (lower case) that mark a header as sacct's own."""

_TIME_NAMES = {
    1: ["Submit"],
    2: ["Start", "End"],
    3: ["Submit", "Start", "End"],
    4: ["Submit", "Eligible", "Start", "End"],
}
"""Field names for the time columns of an export, by how many there are (sacct -o order)."""


def sniff_delimiter(lines: list[str]) -> str | None:
    """The character that splits (nearly) every line of `lines` into the same number of fields.

    Candidates are characters of the first line that never occur inside sacct values; one
    counts when at least 90% of the lines hold it the same number of times (a truncated line
    is a bad line to report, not a reason to doubt the delimiter). A header line counts like
    any other. None when no candidate is consistent.
    """
    if not lines:
        return None
    found = []
    for char in set(lines[0]):
        if char.isalnum() or char in _VALUE_CHARS:
            continue
        counts = Counter(line.count(char) for line in lines)
        count, lines_with = counts.most_common(1)[0]
        if count and lines_with >= 0.9 * len(lines):
            found.append((_RANK.get(char, 1), -count, char))
    return min(found)[2] if found else None


def _split(lines: list[str], delimiter: str) -> list[list[str]]:
    """Lines split into fields, without the empty last field a trailing delimiter leaves."""
    rows = [line.split(delimiter) for line in lines]
    if rows and all(row[-1] == "" for row in rows):
        rows = [row[:-1] for row in rows]
    return rows


def looks_like_sacct(lines: list[str], delimiter: str) -> bool:
    """Whether `lines` read as sacct text: a sacct header, or sacct times in the first line.

    A header counts when it names JobID (or JobIDRaw) and a field only sacct calls so, so a
    CSV that merely has a `jobid` column still asks for a column map.
    """
    first = _split(lines[:1], delimiter)
    if not first:
        return False
    tokens = {t.strip().lower() for t in first[0]}
    if tokens & {"jobid", "jobidraw"}:
        return bool(tokens & _SACCT_ONLY)
    return any(_TIME.match(t) for t in first[0])


def guess_fields(lines: list[str], delimiter: str) -> list[str]:
    """A guess at the `-o` field names of header-less `lines`; `X<n>` where none fits.

    Read from the values: the first column of job ids is JobID, times are Submit/Start/End,
    the first duration Elapsed, TRES strings AllocTRES then ReqTRES, states State, `n:m`
    ExitCode, GRES strings AllocGRES. Names, users and counts cannot be told apart: X<n>.
    """
    rows = _split(lines, delimiter)
    width = max((len(r) for r in rows), default=0)
    columns = [[r[i] for r in rows if i < len(r)] for i in range(width)]
    names = [f"X{i + 1}" for i in range(width)]
    kinds = [_kind([v for v in column if v != ""]) for column in columns]
    times = [i for i, k in enumerate(kinds) if k == "time"]
    for i, name in zip(times, _TIME_NAMES.get(len(times), []), strict=False):
        names[i] = name
    for kind, labels in (
        ("jobid", ["JobID"]),
        ("duration", ["Elapsed"]),
        ("tres", ["AllocTRES", "ReqTRES"]),
        ("state", ["State"]),
        ("exit", ["ExitCode"]),
        ("gres", ["AllocGRES"]),
    ):
        hits = [i for i, k in enumerate(kinds) if k == kind]
        for i, label in zip(hits, labels, strict=False):
            names[i] = label
    return names


def _kind(values: list[str]) -> str | None:
    """What every non-empty value of a column is, as far as the patterns can tell."""
    if not values:
        return None
    if all(_TIME.match(v) or v in _NO_TIME for v in values):
        return "time"
    if all(_STATE.match(v) for v in values) and all(
        (m := _STATE.match(v)) is not None and m.group(1) in KNOWN_STATES for v in values
    ):
        return "state"
    tests = (
        ("jobid", _JOBID),
        ("duration", _DURATION),
        ("exit", _EXIT),
        ("gres", _GRES),
        ("tres", _TRES),
    )
    for kind, pattern in tests:
        if all(pattern.search(v) if kind == "gres" else pattern.match(v) for v in values):
            plain = kind == "jobid" and all(v.isdigit() for v in values)
            if plain and len(set(values)) < len(values):
                return None  # repeated plain numbers: a count, not job ids
            return kind
    return None


def fields_command(source: str, fields: list[str], delimiter: str) -> str:
    """The command (and the Python keywords) that read `source` with this field list."""
    listed = ",".join(fields)
    file = "FILE" if source == "<bytes>" else shlex.quote(source)
    return (
        f"cluster-decide ingest {file} --fields {shlex.quote(listed)} "
        f"--delimiter {shlex.quote(delimiter)}; in Python fields={listed!r}, "
        f"delimiter={delimiter!r}"
    )
