"""Tables that read well in a notebook and its HTML export: labels, units, separators, all rows.

Polars' ``DataFrame.style`` hands a frame to great_tables, which renders static HTML: every row
is shown (no truncation, no dtype row), numbers get thousands separators and a unit, shares
become percentages, and internal ids (``kubernetes_batch``, ``distributed_training``) become the
names the rest of the product uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from cluster_decide.base.vocabulary import ARCHETYPE_LABELS, KIND_LABELS, PLATFORM_LABELS

__all__ = ["FORMATS", "readable", "styled"]

_STATUS = {
    "optimal": "works (cheapest of its kind)",
    "feasible": "works (not proven cheapest)",
    "infeasible": "cannot work",
}
_IDS = {"archetype": ARCHETYPE_LABELS, "platform": PLATFORM_LABELS, "kind": KIND_LABELS}
FORMATS = ("text", "usd", "usd_delta", "int", "num1", "pct")
"""How a column may be shown: as text, dollars, a signed dollar change, a whole number, one
decimal, or a percentage (a share 0–1)."""


def readable(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with id columns (archetype, platform, kind, status) in display words."""
    out = frame
    for column, labels in (*_IDS.items(), ("status", _STATUS)):
        if column in out.columns and out.schema[column] == pl.String:
            out = out.with_columns(pl.col(column).replace(dict(labels)))
    for column in ("note", "reason", "relaxation"):
        if column in out.columns and out.schema[column] == pl.String:
            expr = pl.col(column)
            for table in _IDS.values():
                for key, label in sorted(table.items(), key=lambda kv: -len(kv[0])):
                    expr = expr.str.replace_all(rf"\b{key}\b", label)
            out = out.with_columns(expr)
    return out


def styled(
    frame: pl.DataFrame, columns: Mapping[str, tuple[str, str]], title: str | None = None
) -> Any:
    """A great_tables table of ``frame``'s ``columns`` (name → (header with unit, format))."""
    bad = {c: f for c, (_, f) in columns.items() if f not in FORMATS}
    if bad:
        raise ValueError(f"unknown formats {bad}; expected one of {', '.join(FORMATS)}")
    shown = readable(frame).select(list(columns))
    labels: dict[str, Any] = {c: label for c, (label, _) in columns.items()}
    table = shown.style.cols_label(cases=labels)
    by_format: dict[str, list[str]] = {}
    for column, (_, fmt) in columns.items():
        by_format.setdefault(fmt, []).append(column)
    if "usd" in by_format:
        table = table.fmt_currency(by_format["usd"], decimals=0)
    if "usd_delta" in by_format:
        table = table.fmt_currency(by_format["usd_delta"], decimals=0, force_sign=True)
    if "int" in by_format:
        table = table.fmt_integer(by_format["int"])
    if "num1" in by_format:
        table = table.fmt_number(by_format["num1"], decimals=1)
    if "pct" in by_format:
        table = table.fmt_percent(by_format["pct"], decimals=1)
    table = table.sub_missing(missing_text="–")
    if title:
        table = table.tab_header(title=title)
    return table
