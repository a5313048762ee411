"""The pilot the deck proposes: the scenario's own workloads on the clusters the plan uses.

Four workloads (multi-node training, fine-tuning, a batch pipeline, an inference endpoint),
the largest of each kind, and four operational tests (failure injection, node replacement,
quota enforcement, cost reporting), each with what to run and what to measure. The words are
data (``data/templates/pilot.toml``, with the reasoning behind each figure); this module picks
the workloads and gathers the facts the templates quote. Workloads and clusters are named by
display name; figures use the exports' formatters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from string import Formatter
from typing import Any, Final

import polars as pl

from cluster_decide.base.resources import data_dir
from cluster_decide.base.tomlread import tomllib
from cluster_decide.base.vocabulary import INTERFACE_WORDS, SKILLS
from cluster_decide.export.words import (
    Names,
    display,
    effort,
    gpu_hours,
    level,
    platform,
    text_table,
    usd,
)
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan

__all__ = ["PILOT_COLUMNS", "pilot_plan"]

PILOT_COLUMNS: Final = ("test", "workload", "where", "run", "measure", "why")
"""Columns of :func:`pilot_plan`."""
TEMPLATES: Final = "templates/pilot.toml"
"""The pilot's words, under the data folder."""
_PICKS: Final = ("multi_node", "fine_tuning", "batch", "serving", "none")
"""The workloads a test can run (``workload`` in the templates)."""

Text = str | Sequence[str | Mapping[str, str]]
"""A template text: a string, or parts joined (see the templates file's header)."""


@lru_cache(maxsize=1)
def templates() -> dict[str, Any]:
    """The pilot templates, checked once: every test names its words and a known workload."""
    path = data_dir() / TEMPLATES
    with path.open("rb") as f:
        data = tomllib.load(f)
    problems = []
    for n, t in enumerate(data.get("tests", []), start=1):
        missing = sorted({"test", "workload", "run", "measure", "why"} - set(t))
        if missing:
            problems.append(f"{path} | tests #{n} lacks {', '.join(missing)} | add them")
        if t.get("workload") not in _PICKS:
            problems.append(
                f"{path} | tests #{n} workload {t.get('workload')!r} | use one of {', '.join(_PICKS)}"
            )
    if problems:
        raise ValueError("invalid pilot templates:\n  " + "\n  ".join(problems))
    return data


def render(text: Text, facts: Mapping[str, Any]) -> str:
    """A template text with the facts filled in; a conditional part without its facts drops out."""
    out = []
    for part in [text] if isinstance(text, str) else text:
        if isinstance(part, str):
            out.append(part.format_map(facts))
            continue
        fields = {f for _, f, _, _ in Formatter().parse(part["text"]) if f}
        when = part.get("when")
        shown = all(facts.get(f) is not None for f in fields) and (
            when is None or bool(facts.get(when))
        )
        out.append(part["text"].format_map(facts) if shown else part.get("else", ""))
    return "".join(out)


def _pick(plan: Plan, kinds: tuple[str, ...]) -> pl.DataFrame:
    """Placements of the largest workload of the first kind present (all its pools)."""
    for kind in kinds:
        rows = plan.placements.filter(pl.col("kind") == kind)
        if rows.height:
            top = (
                rows.group_by("workload")
                .agg(pl.col("gpus").sum())
                .sort(["gpus", "workload"], descending=[True, False])
            )
            name = top["workload"][0]
            return rows.filter(pl.col("workload") == name).sort("share", descending=True)
    return plan.placements.clear()


def _where(rows: pl.DataFrame, names: Names) -> str:
    """The clusters a workload runs on, each named once with its GPUs (and shares, if split)."""
    parts = []
    for pool in rows["pool"].unique(maintain_order=True).to_list():
        gpus = ", ".join(
            r["gpu_type"] + (f" {r['share']:.0%}" if r["share"] < 0.999 else "")
            for r in rows.filter(pl.col("pool") == pool).iter_rows(named=True)
        )
        parts.append(f"{names.pool(pool)} ({gpus})")
    return " and ".join(parts)


def _attr(scenario: Scenario | None, workload: str, name: str) -> Any:
    if scenario is None:
        return None
    try:
        return getattr(scenario.workload(workload), name, None)
    except KeyError:
        return None


def _gpus_per_node(scenario: Scenario | None, gpu_type: str) -> int:
    if scenario is None or gpu_type not in scenario.catalog.gpus:
        return 8
    return int(scenario.catalog.gpus[gpu_type].gpus_per_node)


def _multi_node(plan: Plan, scenario: Scenario | None) -> pl.DataFrame:
    """The largest distributed-training workload, or a fine-tuning one whose jobs span nodes."""
    train = _pick(plan, ("distributed_training",))
    if train.height:
        return train
    tune = _pick(plan, ("fine_tuning",))
    if tune.height:
        gang = _attr(scenario, tune["workload"][0], "gpus_per_job") or 0
        if gang > _gpus_per_node(scenario, tune["gpu_type"][0]):
            return tune
    return plan.placements.clear()


def _multi_node_facts(
    train: pl.DataFrame, scenario: Scenario | None, names: Names
) -> dict[str, Any]:
    w, first = train["workload"][0], train.row(0, named=True)
    gang = int(_attr(scenario, w, "gpus_per_job") or first["gpus"])
    wait = _attr(scenario, w, "max_queue_wait_hours")
    utilization = (
        scenario.catalog.platforms[first["platform"]].utilization.get(first["kind"])
        if scenario is not None
        else None
    )
    return {
        "workload": names.workload(w),
        "nodes": max(2, min(4, -(-gang // _gpus_per_node(scenario, first["gpu_type"])))),
        "gang": gang,
        "utilization": utilization,
        "wait": level(wait) if wait else None,
    }


def _fine_tuning_facts(
    tune: pl.DataFrame, scenario: Scenario | None, names: Names
) -> dict[str, Any]:
    w = tune["workload"][0]
    wait = _attr(scenario, w, "max_queue_wait_hours")
    interface = _attr(scenario, w, "interface")
    return {
        "workload": names.workload(w),
        "interface": INTERFACE_WORDS.get(interface) if interface else None,
        "split": tune.height > 1,
        "wait": level(wait) if wait else None,
    }


def _batch_facts(
    batch: pl.DataFrame, plan: Plan, scenario: Scenario | None, names: Names
) -> dict[str, Any]:
    w = batch["workload"][0]
    window = _attr(scenario, w, "max_completion_hours")
    pools = plan.pools.filter(pl.col("pool").is_in(batch["pool"].to_list()))
    burst = float(pools["burst_gpu_hours"].sum())
    return {
        "workload": names.workload(w),
        "window": level(window) if window else None,
        "burst": gpu_hours(burst) if burst > 0 else None,
    }


def _serving_facts(
    serve: pl.DataFrame, plan: Plan, scenario: Scenario | None, names: Names
) -> dict[str, Any]:
    w = serve["workload"][0]
    target = _attr(scenario, w, "p99_latency_ms")
    rps = _attr(scenario, w, "peak_requests_per_second")
    predicted = plan.service_levels.filter(pl.col("workload") == w)["predicted"].to_list()
    lag = (
        scenario.catalog.platforms[serve["platform"][0]].scale_up_lag_minutes
        if scenario is not None
        else None
    )
    return {
        "workload": names.workload(w),
        "rps": rps or None,
        "target": level(target) if target else None,
        "predicted": level(max(predicted)) if predicted else None,
        "lag": lag or None,
    }


def _operational_facts(
    plan: Plan,
    scenario: Scenario | None,
    names: Names,
    train: pl.DataFrame,
    serve: pl.DataFrame,
    words: Mapping[str, Any],
) -> dict[str, Any]:
    """What the operational tests quote: the pools, what to kill, teams, tools, staffing."""
    pools = plan.pools.unique(subset=["pool"], maintain_order=True)
    platforms = sorted(set(pools["platform"].to_list()))
    pool_names = ", ".join(names.pool(p) for p in pools["pool"].to_list()) or "the pilot pools"
    victims = [
        words["victims"][role].format(
            workload=names.workload(picked["workload"][0]), pool=names.pool(picked["pool"][0])
        )
        for role, picked in (("training", train), ("serving", serve))
        if picked.height
    ] or [words["victims"]["none"].format(pools=pool_names)]
    teams = sorted({display(w.team) for w in scenario.workloads if w.team}) if scenario else []
    per_node = None
    if scenario is not None and platforms:
        # Quote the catalog's own figures, as the assumptions table prints them.
        catalog = scenario.catalog.platforms
        per_node = " and ".join(
            f"{effort(sum(catalog[k].fte(s, 'per_100_nodes') for s in SKILLS))}"
            + (" FTE per 100 nodes" if i == 0 else "")
            + f" on {platform(k)}"
            for i, k in enumerate(platforms)
        )
    tools = words["platforms"]
    return {
        "pools": pool_names,
        "victims": " and ".join(victims),
        "teams": ", ".join(teams) or None,
        "per_node": per_node,
        "quota": "; ".join(sorted({tools[p]["quota"] for p in platforms}))
        or tools["fallback"]["quota"],
        "cost_source": " and ".join(sorted({tools[p]["cost_source"] for p in platforms}))
        or tools["fallback"]["cost_source"],
        "cash": usd(plan.cash_monthly_usd),
    }


def pilot_plan(plan: Plan, scenario: Scenario | None = None) -> pl.DataFrame:
    """A pilot tailored to the plan: four workloads and four operational tests, each measured.

    The workloads are the scenario's own (largest of each kind) on the pools the plan puts them
    in: one multi-node training job, a fine-tuning workload, a batch pipeline and a production
    inference endpoint. The tests are failure injection, GPU node replacement, quota
    enforcement and cost reporting on those pools. Their words are the templates of
    ``data/templates/pilot.toml``. Columns: see :data:`PILOT_COLUMNS`.
    """
    words = templates()
    names = Names.of(plan, scenario)
    picked = {
        "multi_node": _multi_node(plan, scenario),
        "fine_tuning": _pick(plan, ("fine_tuning",)),
        "batch": _pick(plan, ("pipeline", "batch_inference")),
        "serving": _pick(plan, ("realtime_inference",)),
    }
    facts: dict[str, dict[str, Any]] = {k: {} for k in _PICKS}
    for key, build in (
        ("multi_node", lambda p: _multi_node_facts(p, scenario, names)),
        ("fine_tuning", lambda p: _fine_tuning_facts(p, scenario, names)),
        ("batch", lambda p: _batch_facts(p, plan, scenario, names)),
        ("serving", lambda p: _serving_facts(p, plan, scenario, names)),
    ):
        if picked[key].height:
            facts[key] = build(picked[key])
    facts["none"] = _operational_facts(
        plan, scenario, names, picked["multi_node"], picked["serving"], words
    )
    largest = plan.pools.sort(["gpus", "pool"], descending=[True, False]).head(1)
    rows = []
    for t in words["tests"]:
        key = t["workload"]
        rows_of = picked.get(key)
        has = rows_of is not None and rows_of.height > 0
        suffix = "" if has or key == "none" else "_without"
        if key == "none":
            workload, where = "–", facts["none"]["pools"]
        elif has:
            assert rows_of is not None
            workload, where = names.workload(rows_of["workload"][0]), _where(rows_of, names)
        else:
            workload, where = "none in this scenario", "–"
            if key == "multi_node" and largest.height:
                where = f"{names.pool(largest['pool'][0])} ({largest['gpu_type'][0]})"
        rows.append(
            {
                "test": t["test"],
                "workload": workload,
                "where": where,
                **{
                    col: render(t.get(col + suffix, t[col]), facts[key])
                    for col in ("run", "measure", "why")
                },
            }
        )
    return text_table(rows, PILOT_COLUMNS)
