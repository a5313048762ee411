"""Every catalog figure with its source, stacked into one table and rendered as docs.

The catalog in ``data/catalog/`` keeps one fact per row, each with a source, date,
confidence and note. This module reads all fact files into one tidy frame (so tests and
the workbook can check provenance in one place) and renders ``docs/data-sources.md``
from it, so the documentation is generated from the data and cannot drift from it.

Run ``python -m cluster_decide.inputs.datasources > docs/data-sources.md`` to regenerate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import polars as pl

from cluster_decide.base.resources import data_dir

__all__ = [
    "ASSUMPTION",
    "CATALOG_DIR",
    "CONFIDENCE_LEVELS",
    "FACT_FILES",
    "PROVENANCE_COLUMNS",
    "FactFile",
    "load_facts",
    "provenance_problems",
    "read_catalog_file",
    "render_markdown",
]

CATALOG_DIR: Final = data_dir() / "catalog"
"""Default location of the catalog CSV files (``data/catalog/`` in the repository)."""

PROVENANCE_COLUMNS: Final = ("source", "url", "date", "confidence", "note")
"""Trailing columns every fact file carries, in this order."""

CONFIDENCE_LEVELS: Final = ("high", "medium", "low", "assumption")
"""Allowed values of the ``confidence`` column, strongest first."""

ASSUMPTION: Final = "assumption"
"""The exact ``source`` (and ``confidence``) of a figure that is our own estimate."""


@dataclass(frozen=True)
class FactFile:
    """How one catalog file maps onto the stacked fact table."""

    name: str
    """File stem in ``data/catalog/``; also the ``file`` column and the key prefix."""
    key_columns: tuple[str, ...]
    """Columns that identify a row, joined with ``:`` after the prefix."""
    value_column: str
    """Column holding the figure."""
    unit_column: str | None = None
    """Column holding the unit, or ``None`` when ``fixed_unit`` applies."""
    fixed_unit: str = ""
    """Unit of every row when the file has no unit column."""


FACT_FILES: Final = (
    FactFile("gpus", ("gpu", "attribute"), "value", unit_column="unit"),
    FactFile("platforms", ("platform", "attribute"), "value", unit_column="unit"),
    FactFile("capabilities", ("platform", "capability"), "support", fixed_unit="support level"),
    FactFile("sides", ("platform", "side", "capability"), "support", fixed_unit="support level"),
    FactFile("utilization", ("platform", "kind"), "value", fixed_unit="fraction"),
    FactFile("staffing", ("platform", "skill", "component"), "fte", fixed_unit="FTE"),
    FactFile("costs", ("parameter",), "value", unit_column="unit"),
    FactFile("managed", ("platform", "attribute"), "value", unit_column="unit"),
    FactFile("people", ("parameter",), "value", unit_column="unit"),
    FactFile("capability_gaps", ("capability",), "gap_usd_per_month", fixed_unit="USD/month"),
    FactFile("profile_sources", ("profile",), "description", fixed_unit="text"),
    FactFile(
        "offers",
        ("gpu", "provider_class", "provider", "term"),
        "usd_per_gpu_hour",
        fixed_unit="USD/GPU-hour",
    ),
    FactFile("onprem", ("gpu", "attribute"), "value", unit_column="unit"),
    FactFile("resale", ("months",), "residual_fraction", fixed_unit="fraction of the outlay"),
    FactFile("burst_caps", ("gpu",), "gpus", fixed_unit="GPUs per hour"),
)
"""The catalog files that carry provenance columns, in documentation order.

``profiles.csv`` (168 weights per profile) and ``schema.csv`` have no provenance of their
own: the profiles are described in ``profile_sources.csv``, the schema is documentation.
"""

_FACT_COLUMNS: Final = ("file", "key", "value", "unit", *PROVENANCE_COLUMNS)


def read_catalog_file(name: str, catalog_dir: Path | None = None) -> pl.DataFrame:
    """Read one catalog CSV with every column as text and empty cells as ``""``.

    Text keeps figures exactly as written (``0.805`` stays ``0.805``), which the provenance
    checks and the generated docs need; typed parsing is the catalog loader's job.
    """
    path = (catalog_dir or CATALOG_DIR) / f"{name}.csv"
    frame = pl.read_csv(path, infer_schema=False)
    return frame.with_columns(pl.all().fill_null(""))


def load_facts(catalog_dir: Path | None = None) -> pl.DataFrame:
    """Stack every fact file into one frame, one row per figure.

    Columns: ``file``, ``key`` (e.g. ``gpus:H100:usd_per_gpu_hour_reserved``), ``value``,
    ``unit`` and the provenance columns, all text. Rows are sorted by file (in
    ``FACT_FILES`` order) and key, so the result is deterministic.
    """
    parts = []
    for order, spec in enumerate(FACT_FILES):
        frame = read_catalog_file(spec.name, catalog_dir)
        key_parts = [pl.lit(spec.name), *(pl.col(c) for c in spec.key_columns)]
        unit = pl.col(spec.unit_column) if spec.unit_column else pl.lit(spec.fixed_unit)
        parts.append(
            frame.select(
                pl.lit(order).alias("_order"),
                pl.lit(spec.name).alias("file"),
                pl.concat_str(key_parts, separator=":").alias("key"),
                pl.col(spec.value_column).alias("value"),
                unit.alias("unit"),
                *(pl.col(c) for c in PROVENANCE_COLUMNS),
            )
        )
    return pl.concat(parts).sort("_order", "key").select(_FACT_COLUMNS)


def provenance_problems(facts: pl.DataFrame) -> list[str]:
    """Rows whose figure is not sourced, one message per bad row naming its key.

    Each figure needs a source, a date and a confidence, and either a URL or a note saying why
    there is none (assumptions: source ``assumption`` and the reasoning in the note).
    """
    problems = []
    for row in facts.iter_rows(named=True):
        key = row["key"]
        if not row["source"].strip() or not row["date"].strip():
            problems.append(f"{key}: no source or no date")
        elif row["confidence"] not in CONFIDENCE_LEVELS:
            problems.append(
                f"{key}: confidence {row['confidence']!r} is not one of {CONFIDENCE_LEVELS}"
            )
        elif row["source"] == ASSUMPTION and not row["note"].strip():
            problems.append(f"{key}: an assumption without its reasoning in the note")
        elif not row["url"].strip() and not row["note"].strip():
            problems.append(f"{key}: a source without a URL and no note saying why")
    return problems


def _cell(text: str) -> str:
    """Escape text for a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _source_cell(source: str, url: str) -> str:
    """Render a source as a Markdown link when it has a URL."""
    if url:
        return f"[{_cell(source)}]({url})"
    return _cell(source)


def render_markdown(catalog_dir: Path | None = None) -> str:
    """Render ``docs/data-sources.md``: a summary, then one table per fact file.

    The output depends only on the catalog files (sorted rows, no timestamps), so a test
    can compare it with the committed document and fail when either goes stale.
    """
    facts = load_facts(catalog_dir)
    total = facts.height
    n_assumed = facts.filter(pl.col("source") == ASSUMPTION).height
    lines = [
        "# Data sources",
        "",
        "Every figure in `data/catalog/`, with its source, date and confidence. Generated by",
        "`python -m cluster_decide.inputs.datasources > docs/data-sources.md`; do not edit by hand.",
        "Column meanings and units are in `data/catalog/schema.csv`. Any figure can be",
        "overridden in a scenario file. Where a page has no date of its own (documentation,",
        "list prices in code), the date is when it was read.",
        "",
        "Confidence: **high** = primary or official source; **medium** = credible secondary",
        "source, or code that cites a primary one; **low** = a single secondary source, or",
        "sources that disagree; **assumption** = our own estimate, reasoning in the note.",
        "",
        "## Summary",
        "",
        f"{total} figures; {n_assumed} are assumptions (source `assumption`).",
        "",
        "| file | figures | high | medium | low | assumption |",
        "|---|---|---|---|---|---|",
    ]
    for spec in FACT_FILES:
        part = facts.filter(pl.col("file") == spec.name)
        counts = [part.filter(pl.col("confidence") == c).height for c in CONFIDENCE_LEVELS]
        lines.append(f"| {spec.name} | {part.height} | " + " | ".join(map(str, counts)) + " |")
    for spec in FACT_FILES:
        part = facts.filter(pl.col("file") == spec.name)
        lines += [
            "",
            f"## {spec.name}",
            "",
            f"From `data/catalog/{spec.name}.csv`.",
            "",
            "| key | value | unit | source | date | confidence | note |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in part.iter_rows(named=True):
            cells = [
                f"`{row['key']}`",
                _cell(row["value"]),
                _cell(row["unit"]),
                _source_cell(row["source"], row["url"]),
                row["date"],
                row["confidence"],
                _cell(row["note"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
