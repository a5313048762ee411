"""Chart images (PNG at 2× and SVG) and the plan's tables (CSV and JSON) written to a folder.

Everything is rendered in memory first and then written file by file, each atomically, so a
failed render writes nothing and a failed write never leaves a half file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from cluster_decide.export.assumptions import key_assumptions
from cluster_decide.export.atomic import write_atomic
from cluster_decide.export.content import Bundle, gather
from cluster_decide.export.figures import render
from cluster_decide.export.pilot import pilot_plan
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan
from cluster_decide.style import WIDTH

__all__ = ["PLAN_FRAMES", "frames", "images"]

PLAN_FRAMES = ("placements", "pools", "staffing", "costs", "service_levels", "relaxations")
"""The Plan's frames, each written as ``NAME.csv``."""


def images(
    source: Plan | Scenario | Bundle,
    folder: str | os.PathLike[str],
    *,
    scenario: Scenario | None = None,
    alternatives: pl.DataFrame | None = None,
    scale: float = 2,
    width: int = WIDTH,
    run_compare: bool = True,
    time_limit_s: float = 10.0,
) -> list[Path]:
    """Write every chart as ``NAME.png`` (``scale`` × its pixel size) and ``NAME.svg``.

    Rendered offline by vl-convert; returns the paths written, in chart order.
    """
    bundle = gather(source, scenario, alternatives, None, run_compare, time_limit_s)
    rendered = render(bundle, width=width, scale=scale)
    out = Path(folder)
    paths = []
    for name, r in rendered.items():
        paths.append(write_atomic(out / f"{name}.png", r.png))
        paths.append(write_atomic(out / f"{name}.svg", r.svg))
    return paths


def _records(frame: pl.DataFrame) -> list[dict[str, object]]:
    """Rows for JSON, NaN as null (JSON has no NaN)."""
    clean = frame.with_columns(pl.col(pl.Float32, pl.Float64).fill_nan(None))
    return clean.to_dicts()


def frames(
    source: Plan | Scenario | Bundle,
    folder: str | os.PathLike[str],
    *,
    scenario: Scenario | None = None,
    alternatives: pl.DataFrame | None = None,
    analyses: Mapping[str, pl.DataFrame] | None = None,
    run_compare: bool = True,
    time_limit_s: float = 10.0,
) -> list[Path]:
    """Write the plan as ``plan.json`` and one CSV per frame, plus what the export adds.

    Added beside the plan's own frames: ``pilot_plan.csv``, ``assumptions.csv`` (the key
    figures and their sources), ``alternatives.csv`` (when computed), one CSV per analysis and
    ``verdict.json`` (with a recommendation: ``cd.recommend``'s ``to_dict()``, as ``solve --out``
    writes it). ``export.json`` holds all of it in one stable document (sorted keys, no
    timestamps).
    """
    bundle = gather(source, scenario, alternatives, analyses, run_compare, time_limit_s)
    plan = bundle.plan
    extra: dict[str, pl.DataFrame] = {
        "pilot_plan": pilot_plan(plan, bundle.scenario),
        "assumptions": key_assumptions(plan, bundle.scenario),
    }
    if bundle.alternatives is not None:
        extra["alternatives"] = bundle.alternatives
    for name, frame in bundle.analyses.items():
        extra[f"analysis_{name.lower().replace(' ', '_')}"] = frame
    files: dict[str, str] = {"plan.json": plan.to_json()}
    files.update({f"{name}.csv": getattr(plan, name).write_csv() for name in PLAN_FRAMES})
    files.update({f"{name}.csv": frame.write_csv() for name, frame in extra.items()})
    document = {
        "plan": plan.to_dict(),
        **{name: _records(frame) for name, frame in extra.items()},
    }
    to_dict = getattr(bundle.recommendation, "to_dict", None)
    if callable(to_dict):
        verdict = to_dict()
        document["verdict"] = verdict
        files["verdict.json"] = (
            json.dumps(verdict, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
            + "\n"
        )
    files["export.json"] = (
        json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )
    out = Path(folder)
    return [write_atomic(out / name, text) for name, text in files.items()]
