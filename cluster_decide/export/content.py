"""What an export says, once: the sections of the story, their tables, sentences and notes.

The deck, the HTML report and the Markdown report render the same :class:`Section` list, so a
number never differs between them. Tables are built here as formatted text (money the way
:func:`~cluster_decide.explain.money` says it, shares as percentages) and carry which columns
are numeric, so every renderer aligns them alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

import polars as pl

from cluster_decide.analysis import compare
from cluster_decide.datasources import load_facts
from cluster_decide.explain import ARCHETYPE_WORDS, money
from cluster_decide.model.solve import solve
from cluster_decide.plan import Plan
from cluster_decide.scenario import Scenario
from cluster_decide.vocabulary import (
    ARCHETYPE_LABELS,
    COMPONENT_LABELS,
    PLATFORM_LABELS,
    SKILL_LABELS,
)

__all__ = [
    "PILOT_COLUMNS",
    "Bundle",
    "Section",
    "Table",
    "gather",
    "headline",
    "is_break_evens",
    "is_levers",
    "key_assumptions",
    "pilot_plan",
    "sections",
    "standard_analyses",
    "table_of",
]

PILOT_COLUMNS: Final = ("test", "workload", "where", "run", "measure", "why")
"""Columns of :func:`pilot_plan`."""
_KIND_WORDS: Final = {
    "distributed_training": "distributed training",
    "fine_tuning": "fine-tuning",
    "experimentation": "experimentation",
    "batch_inference": "batch inference",
    "pipeline": "pipeline",
    "realtime_inference": "real-time inference",
}
_METRIC_WORDS: Final = {
    "p99_latency_ms": ("p99 latency", "ms"),
    "max_queue_wait_hours": ("queue wait", "h"),
    "max_completion_hours": ("completion", "h"),
    "queue_wait_hours": ("queue wait", "h"),
    "completion_hours": ("completion", "h"),
}
_QUOTA: Final = {
    "slurm": "Slurm accounts with fair share and QOS GPU limits",
    "kubernetes": "namespace ResourceQuotas",
    "kubernetes_batch": "Kueue ClusterQueues with borrowing limits (or Volcano / KAI queues)",
    "shared": "Slurm accounts and QOS inside the shared pool",
}
_COST_SOURCE: Final = {
    "slurm": "Slurm accounting (sacct / slurmdbd)",
    "kubernetes": "OpenCost",
    "kubernetes_batch": "OpenCost and Kueue usage metrics",
    "shared": "Slurm accounting and OpenCost",
}
_COMPONENT_WORDS: Final = {
    "base": "base team",
    "per_100_nodes": "per 100 nodes",
    "addon": "batch add-on upkeep",
    "integration": "integration",
}
_SEED_WHY: Final = (
    "Why a pilot: a representative pilot, run before standardizing, exposes gaps in resource "
    "management and batch-scheduler configuration that product demonstrations rarely show."
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True)
class Table:
    """A table as formatted text: headers, rows, and which columns are numbers (right-aligned)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]

    def page(self, start: int, stop: int) -> Table:
        """Rows ``start:stop`` of this table (a deck continues long tables on the next slide)."""
        return Table(self.columns, self.rows[start:stop], self.numeric)


@dataclass(frozen=True)
class Section:
    """One slide's worth of the story (a deck may continue a long table on more slides).

    ``chart`` names an entry of :func:`cluster_decide.export.figures.chart_set`;
    ``chart_in_deck`` is False where the deck shows the table alone (placements: a native
    table, as reviewers edit it; break-evens: the table is more precise at slide size). ``metrics`` are headline figures (label, value); ``notes``
    are the reasons, spoken from the speaker notes.
    """

    key: str
    title: str
    lead: str = ""
    chart: str | None = None
    chart_in_deck: bool = True
    table: Table | None = None
    bullets: tuple[str, ...] = ()
    metrics: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bundle:
    """Everything an export shows: the plan and, when known, its scenario and analyses."""

    plan: Plan
    scenario: Scenario | None = None
    alternatives: pl.DataFrame | None = None
    analyses: Mapping[str, pl.DataFrame] = field(default_factory=dict)


def gather(
    source: Plan | Scenario | Bundle,
    scenario: Scenario | None = None,
    alternatives: pl.DataFrame | None = None,
    analyses: Mapping[str, pl.DataFrame] | None = None,
    run_compare: bool = True,
    time_limit_s: float = 10.0,
) -> Bundle:
    """A :class:`Bundle` from a plan or a scenario (solved here), with what is known about it.

    ``alternatives`` is a ``cd.compare`` frame; when it is None and the scenario is known it is
    computed (unless ``run_compare`` is False: one solve per archetype takes seconds).
    ``analyses`` are named frames from the analysis module (lever values, break-evens), shown
    under "What would change the answer".
    """
    if isinstance(source, Bundle):
        return source
    if isinstance(source, Scenario):
        scenario = source
        plan = solve(source, time_limit_s=time_limit_s)
    else:
        plan = source
    if alternatives is None and run_compare and scenario is not None:
        alternatives = compare(scenario, time_limit_s=time_limit_s)
    return Bundle(plan, scenario, alternatives, dict(analyses or {}))


# -- small formatting helpers -------------------------------------------------------------------


def _num(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text.strip()) if s]


def _workload_reason(plan: Plan, workload: str) -> str:
    for line in plan.explanations:
        if line.startswith(f"{workload} runs on"):
            return line
    return ""


def _binding(plan: Plan) -> list[str]:
    marks = ("binds", "sized for its busiest hour", "rents about")
    return [s for s in plan.explanations if any(m in s for m in marks)]


def _platform(platform: str) -> str:
    return PLATFORM_LABELS.get(platform, platform)


def table_of(
    frame: pl.DataFrame, headers: Mapping[str, str] | None = None, digits: int = 2
) -> Table:
    """Any frame as a :class:`Table` (used for analysis frames whose columns we do not know)."""
    headers = headers or {}
    numeric = tuple(frame.schema[c].is_numeric() for c in frame.columns)
    rows = []
    for r in frame.iter_rows():
        cells = []
        for v in r:
            if isinstance(v, float):
                cells.append(f"{v:,.{digits}f}" if abs(v) < 1000 else f"{v:,.0f}")
            elif isinstance(v, bool) or v is None:
                cells.append({True: "yes", False: "no", None: "–"}[v])
            else:
                cells.append(str(v))
        rows.append(tuple(cells))
    cols = tuple(headers.get(c, c.replace("_", " ")) for c in frame.columns)
    return Table(cols, tuple(rows), numeric)


# -- the story ---------------------------------------------------------------------------------


def _staff_words(plan: Plan) -> str:
    parts = [
        f"{r['required_fte']:.1f} {SKILL_LABELS.get(r['skill'], r['skill'])} FTE"
        for r in plan.staffing.iter_rows(named=True)
        if r["required_fte"] > 0
    ]
    hires = int(plan.staffing["hires"].sum()) if plan.staffing.height else 0
    words = " and ".join(parts) if parts else "no platform staff"
    if hires:
        words += f" ({hires} new hire{'s' if hires > 1 else ''})"
    return words


def headline(plan: Plan) -> str:
    """The recommendation in one sentence a reviewer can repeat."""
    if not plan.feasible:
        fix = plan.relaxations["sentence"][0] if plan.relaxations.height else ""
        return "No architecture meets this scenario as stated" + (
            f"; the smallest change that makes it feasible: {fix[0].lower()}{fix[1:].rstrip('.')}."
            if fix
            else "."
        )
    words = ARCHETYPE_WORDS.get(plan.archetype or "", "the plan below")
    gpus = int(plan.pools["gpus"].sum())
    n_pools = plan.pools["pool"].n_unique()
    return (
        f"Run {words}: {money(plan.total_monthly_usd)} a month for {gpus:,} reserved GPUs "
        f"in {n_pools} pool{'s' if n_pools != 1 else ''}, operated by {_staff_words(plan)}."
    )


def _recommendation(b: Bundle) -> Section:
    plan = b.plan
    if not plan.feasible:
        why = [s for s in plan.explanations if s.startswith("Why")]
        others = plan.relaxations["sentence"].to_list()[1:4]
        return Section(
            "recommendation",
            "Recommendation",
            headline(plan),
            bullets=(*why, *(f"Or: {s}" for s in others)),
            notes=tuple(plan.explanations),
        )
    # One reason per platform: its largest workload that rules another platform out, or else
    # its largest workload, so the room hears why each platform is in the plan.
    reasons: list[str] = []
    by_platform: dict[str, list[str]] = {}
    for r in plan.placements.sort(["gpus", "workload"], descending=[True, False]).iter_rows(
        named=True
    ):
        by_platform.setdefault(r["platform"], []).append(r["workload"])
    for workloads in by_platform.values():
        said = [_sentences(_workload_reason(plan, w)) for w in workloads]
        ruled = [s for sentences in said for s in sentences if "ruled out" in s]
        reasons.append(ruled[0] if ruled else said[0][0] if said[0] else "")
    reasons += [s for s in plan.explanations if "binds" in s]
    hires = int(plan.staffing["hires"].sum())
    staff = float(plan.staffing["required_fte"].sum())
    metrics = (
        ("a month in total", money(plan.total_monthly_usd)),
        ("of it cash spend", money(plan.cash_monthly_usd)),
        ("reserved GPUs", f"{int(plan.pools['gpus'].sum()):,}"),
        (
            "platform FTE" + (f", {hires} hire{'s' if hires > 1 else ''}" if hires else ""),
            f"{staff:.1f}",
        ),
    )
    return Section(
        "recommendation",
        "Recommendation",
        headline(plan),
        bullets=tuple(r for r in reasons if r)[:4],
        metrics=metrics,
        notes=tuple(plan.explanations),
    )


def _architecture(b: Bundle) -> Section:
    plan = b.plan
    parts = []
    for pool in plan.pools["pool"].unique(maintain_order=True).to_list():
        rows = plan.pools.filter(pl.col("pool") == pool)
        gpus = int(rows["gpus"].sum())
        parts.append(f"{pool} ({_platform(rows['platform'][0])}, {gpus:,} GPUs)")
    lead = ("Pools: " + "; ".join(parts) + ".") if parts else "No feasible architecture."
    notes = [_workload_reason(plan, w) for w in plan.placements["workload"].unique().sort()]
    return Section("architecture", "Architecture", lead, chart="architecture", notes=tuple(notes))


def _costs(b: Bundle) -> Section:
    plan = b.plan
    costs = plan.costs.filter(pl.col("monthly_usd") > 0).sort("monthly_usd", descending=True)
    rows = tuple(
        (
            COMPONENT_LABELS.get(r["component"], r["component"]),
            money(r["monthly_usd"]),
            "cash" if r["cash"] else "estimate",
        )
        for r in costs.iter_rows(named=True)
    )
    table = Table(("Component", "US$ / month", "Kind"), rows, (False, True, False))
    lead = ""
    if costs.height and plan.total_monthly_usd > 0:
        top = costs.row(0, named=True)
        share = top["monthly_usd"] / plan.total_monthly_usd
        lead = (
            f"{COMPONENT_LABELS.get(top['component'], top['component'])} is {share:.0%} of the "
            f"{money(plan.total_monthly_usd)} a month; estimates (grey) are effort, not invoices."
        )
    notes = tuple(
        f"{COMPONENT_LABELS.get(r['component'], r['component'])}: {r['meaning']}"
        for r in costs.iter_rows(named=True)
    )
    return Section(
        "costs", "Cost breakdown", lead, chart="cost_breakdown", table=table, notes=notes
    )


def _placements(b: Bundle) -> Section:
    plan = b.plan
    frame = plan.placements.sort(["gpus", "workload"], descending=[True, False])
    rows = tuple(
        (
            r["workload"],
            _KIND_WORDS.get(r["kind"], r["kind"]),
            r["pool"],
            _platform(r["platform"]),
            r["gpu_type"],
            f"{r['share']:.0%}",
            f"{r['gpus']:,.1f}",
            f"{r['gpu_hours_per_month']:,.0f}",
        )
        for r in frame.iter_rows(named=True)
    )
    table = Table(
        ("Workload", "Kind", "Pool", "Platform", "GPU", "Share", "Peak GPUs", "GPU-h / month"),
        rows,
        (False, False, False, False, False, True, True, True),
    )
    split = frame.group_by("workload").len().filter(pl.col("len") > 1).height
    lead = f"Every workload is placed in full; {frame['workload'].n_unique()} workloads"
    lead += f", {split} split across pools." if split else ", none split."
    notes = tuple(_workload_reason(plan, w) for w in frame["workload"].unique().sort())
    return Section(
        "placements",
        "Placements",
        lead,
        chart="placements",
        chart_in_deck=False,
        table=table,
        notes=notes,
    )


def _nearest(b: Bundle) -> tuple[str, float, float] | None:
    """The cheapest feasible archetype other than the plan's: (archetype, delta, share)."""
    frame = b.alternatives
    if frame is None or not b.plan.feasible:
        return None
    others = frame.filter(
        (pl.col("status") != "infeasible") & (pl.col("archetype") != b.plan.archetype)
    ).sort("total_monthly_usd")
    if others.height == 0:
        return None
    row = others.row(0, named=True)
    delta = float(row["total_monthly_usd"]) - b.plan.total_monthly_usd
    return row["archetype"], delta, delta / b.plan.total_monthly_usd


def _alternatives(b: Bundle) -> Section:
    frame = b.alternatives
    if frame is None:
        return Section(
            "alternatives",
            "Alternatives",
            "Alternatives were not computed for this export (pass a scenario or cd.compare).",
        )
    rows = []
    for r in frame.iter_rows(named=True):
        feasible = r["status"] != "infeasible"
        delta = r["delta_usd"]
        rows.append(
            (
                ARCHETYPE_LABELS.get(r["archetype"], r["archetype"]),
                r["status"],
                money(r["total_monthly_usd"]) if feasible else "–",
                ("this plan" if r["archetype"] == b.plan.archetype else f"+{money(delta)}")
                if feasible and delta is not None
                else "–",
                str(r["hires"]) if feasible else "–",
            )
        )
    table = Table(
        ("Architecture", "Status", "US$ / month", "vs. plan", "Hires"),
        tuple(rows),
        (False, False, True, True, True),
    )
    near = _nearest(b)
    if near is not None:
        arch, delta, share = near
        lead = (
            f"The nearest alternative, {ARCHETYPE_LABELS.get(arch, arch)}, costs "
            f"{money(delta)} ({share:.1%}) more a month."
        )
    else:
        lead = "No other architecture is feasible for this scenario."
    infeasible = frame.filter(pl.col("status") == "infeasible")["archetype"].to_list()
    if infeasible:
        lead += " Infeasible: " + ", ".join(ARCHETYPE_LABELS.get(a, a) for a in infeasible) + "."
    notes = tuple(
        f"{ARCHETYPE_LABELS.get(r['archetype'], r['archetype'])}: {r['note']}"
        for r in frame.iter_rows(named=True)
    )
    return Section("alternatives", "Alternatives", lead, chart="compare", table=table, notes=notes)


def is_levers(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is ``cluster_decide.analysis.lever_values``'s result."""
    return {"change", "value_usd_per_month", "lever_archetype"} <= set(frame.columns)


def is_break_evens(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is ``cluster_decide.analysis.break_evens``'s result."""
    return {"found", "changed_archetype", "same_value", "sentence"} <= set(frame.columns)


def _arch_or_none(archetype: str | None) -> str:
    return ARCHETYPE_LABELS.get(archetype or "", archetype or "") or "no feasible plan"


def _input_value(value: float | None, unit: str, base: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    if unit == "x":
        return f"{value / base:.2f}×" if base else f"{value:.3g}"
    if unit == "FTE":
        return f"{value:.2f} FTE"
    if unit == "USD/year":
        return f"{money(value)} a year"
    return f"{value:g} {unit}".strip()


def _levers_section(key: str, name: str, frame: pl.DataFrame) -> Section:
    """Lever values (``cluster_decide.analysis.lever_values``): what each change is worth."""
    moves = frame.filter(
        (pl.col("value_usd_per_month").fill_nan(0.0).abs() >= 1.0)
        | pl.col("lever_archetype").ne_missing(pl.col("base_archetype"))
    )
    rows = tuple(
        (
            r["change"][0].upper() + r["change"][1:],
            "–" if math.isnan(r["value_usd_per_month"]) else money(r["value_usd_per_month"]),
            "same"
            if r["lever_archetype"] == r["base_archetype"]
            else _arch_or_none(r["lever_archetype"]),
        )
        for r in moves.head(10).iter_rows(named=True)
    )
    table = Table(("Lever", "Worth / month", "Architecture after"), rows, (False, True, False))
    lead = frame["sentence"][0] if frame.height and rows else "No lever changes the plan's cost."
    idle = frame.height - moves.height
    if idle:
        lead += f" {idle} other levers are worth nothing."
    return Section(
        key,
        f"What would change the answer: {name}",
        lead,
        chart="levers",
        table=table,
        notes=tuple(frame["sentence"].to_list()),
    )


def _break_evens_section(key: str, name: str, frame: pl.DataFrame) -> Section:
    """Break-evens (``cluster_decide.analysis.break_evens``): where the answer changes."""
    found = frame.filter(pl.col("found"))
    rows = tuple(
        (
            r["label"][0].upper() + r["label"][1:],
            _input_value(r["base_value"], r["unit"], r["base_value"]),
            _input_value(r["same_value"], r["unit"], r["base_value"]),
            _input_value(r["changed_value"], r["unit"], r["base_value"]),
            _arch_or_none(r["changed_archetype"]),
        )
        for r in found.iter_rows(named=True)
    )
    table = Table(
        ("Input", "Today", "Same answer until", "Changes at", "Then best"),
        rows,
        (False, True, True, True, False),
    )
    steady = frame.filter(~pl.col("found"))["label"].unique(maintain_order=True).to_list()
    lead = (
        f"The answer changes for {found['label'].n_unique()} of {frame['label'].n_unique()} "
        "inputs within the range searched"
        + (
            f"; it holds for {', '.join(steady[:4])}{' and more' if len(steady) > 4 else ''}."
            if steady
            else "."
        )
    )
    return Section(
        key,
        f"What would change the answer: {name}",
        lead,
        chart="break_evens",
        chart_in_deck=False,
        table=table,
        notes=tuple(frame["sentence"].to_list()),
    )


def _change(b: Bundle) -> list[Section]:
    bullets: list[str] = []
    near = _nearest(b)
    if near is not None:
        arch, delta, share = near
        bullets.append(
            f"{ARCHETYPE_LABELS.get(arch, arch)} becomes the answer if the plan's costs rise, or "
            f"its own fall, by {money(delta)} a month ({share:.1%} of the total)."
        )
    for frame in b.analyses.values():
        if is_break_evens(frame):
            bullets += frame.filter(pl.col("found"))["sentence"].to_list()[:3]
    bullets += _binding(b.plan)
    if not b.plan.feasible:
        bullets += [f"Feasible if: {s}" for s in b.plan.relaxations["sentence"].to_list()]
    notes = [
        "Binding constraints are where the answer is tight: relax one and the plan may change; "
        "slack constraints can move without changing it."
    ]
    if not b.analyses:
        notes.append(
            "Lever values and break-even points were not computed for this export; pass "
            "analyses=... (or --analyses on the command line) to show them."
        )
    out = [
        Section(
            "change",
            "What would change the answer",
            "Where the recommendation is tight, and what would tip it.",
            bullets=tuple(bullets[:6]),
            notes=tuple(notes),
        )
    ]
    for name, frame in b.analyses.items():
        key = f"analysis-{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}"
        if is_levers(frame):
            out.append(_levers_section(key, name, frame))
        elif is_break_evens(frame):
            out.append(_break_evens_section(key, name, frame))
        else:
            out.append(
                Section(
                    key,
                    f"What would change the answer: {name}",
                    table=table_of(frame),
                    notes=(f"{name}, computed by cluster_decide.analysis for this scenario.",),
                )
            )
    return out


def standard_analyses(scenario: Scenario) -> dict[str, pl.DataFrame]:
    """Lever values and break-even points of ``scenario``, named as the deck shows them.

    Both re-solve the model many times (a minute or so for the default scenario on two cores),
    so exports compute them only when asked.
    """
    from cluster_decide.analysis import break_evens, lever_values

    return {"lever values": lever_values(scenario), "break-even points": break_evens(scenario)}


def _staffing(b: Bundle) -> Section:
    plan = b.plan
    rows = tuple(
        (
            SKILL_LABELS.get(r["skill"], r["skill"]),
            f"{r['available_fte']:.1f}",
            f"{r['required_fte']:.2f}",
            str(r["hires"]),
            f"{r['idle_fte']:.2f}",
        )
        for r in plan.staffing.iter_rows(named=True)
    )
    table = Table(
        ("Skill", "Available FTE", "Needed FTE", "Hires", "Idle FTE"),
        rows,
        (False, True, True, True, True),
    )
    lead = next((s for s in plan.explanations if s.startswith("It needs")), "")
    binds = [s for s in plan.explanations if s.startswith("Staffing binds")]
    notes = (
        *binds,
        "Needed FTE is the effort the open pools take (base per cluster, per 100 nodes, add-on "
        "and integration work), from the staffing catalog; idle staff are reported, not charged.",
    )
    return Section("staffing", "Staffing plan", lead, chart="staffing", table=table, notes=notes)


def _service(b: Bundle) -> Section:
    frame = b.plan.service_levels
    rows = []
    for r in frame.iter_rows(named=True):
        words, unit = _METRIC_WORDS.get(r["metric"], (r["metric"].replace("_", " "), ""))
        rows.append(
            (
                r["workload"],
                f"{words} ({unit})" if unit else words,
                _num(r["predicted"]),
                _num(r["target"]),
                "met" if r["met"] else "missed",
            )
        )
    table = Table(
        ("Workload", "Metric", "Predicted", "Target", "Status"),
        tuple(rows),
        (False, False, True, True, False),
    )
    met = int(frame["met"].sum()) if frame.height else 0
    if frame.height == 0:
        lead = "The plan predicts no service levels for this scenario."
    elif met == frame.height:
        lead = f"All {frame.height} predicted service levels meet their targets."
    else:
        lead = f"{frame.height - met} of {frame.height} service levels miss their targets."
    notes = (
        "Latency comes from an Erlang-C queue at each hour's request rate with the replicas the "
        "pool provides; queue waits and completion times of training and batch work come from "
        "the queueing model of the GPUs each pool gives them.",
    )
    chart = "service_levels" if frame.height else None
    return Section("service", "Service levels", lead, chart=chart, table=table, notes=notes)


@lru_cache(maxsize=1)
def _facts() -> dict[str, dict[str, str]]:
    return {r["key"]: r for r in load_facts().iter_rows(named=True)}


def _fact_row(
    key: str, label: str, value: float, unit: str, fmt: str = "{:,.2f}"
) -> dict[str, Any]:
    fact = _facts().get(key, {})
    shipped = fact.get("value", "")
    try:
        same = shipped != "" and abs(float(shipped) - value) < 1e-9
    except ValueError:
        same = False
    return {
        "figure": label,
        "value": fmt.format(value),
        "unit": unit,
        "source": fact.get("source", "") if same else "scenario file",
        "date": fact.get("date", "") if same else "",
        "confidence": fact.get("confidence", "") if same else "scenario",
        "note": fact.get("note", "") if same else "Set in the scenario, overriding the catalog.",
        "key": key,
    }


def key_assumptions(plan: Plan, scenario: Scenario | None = None) -> pl.DataFrame:
    """The figures that drive this plan's cost most, each with its source, date and confidence.

    Staff effort for the platforms the plan opens, what staff cost, and the GPU prices of the
    types it buys (reserved or capex per node, on-demand where it bursts). Values are the ones
    the model used: the scenario's where it overrides the catalog (source "scenario file").
    Columns: figure, value, unit, source, date, confidence, note, key.
    """
    from cluster_decide.catalog import load_catalog

    catalog = scenario.catalog if scenario is not None else load_catalog()
    rows: list[dict[str, Any]] = []
    for skill in ("hpc", "kubernetes"):
        if plan.staffing.filter(pl.col("skill") == skill)["required_fte"].sum() <= 0:
            continue
        label = SKILL_LABELS.get(skill, skill)
        key = f"costs:{skill}_loaded_cost_usd_per_year"
        cost = (
            scenario.loaded_cost_usd_per_year(skill)
            if scenario is not None
            else float(getattr(catalog.costs, f"{skill}_loaded_cost_usd_per_year"))
        )
        rows.append(_fact_row(key, f"Loaded cost, {label} engineer", cost, "USD/year", "{:,.0f}"))
    platforms = plan.pools["platform"].unique().sort().to_list()
    for platform in platforms:
        kind = catalog.platforms[platform]
        for (skill, component), fte in sorted(kind.staffing.items()):
            if fte <= 0:
                continue
            label = (
                f"{_platform(platform)}: {SKILL_LABELS.get(skill, skill)} staff, "
                f"{_COMPONENT_WORDS.get(component, component)}"
            )
            key = f"staffing:{platform}:{skill}:{component}"
            rows.append(_fact_row(key, label, fte, "FTE", "{:.2f}"))
    on_prem = scenario is not None and scenario.procurement.mode == "on_prem"
    scale = scenario.procurement.gpu_price_scale if scenario is not None else 1.0
    for r in (
        plan.pools.group_by("gpu_type")
        .agg(pl.col("gpus").sum(), pl.col("burst_gpu_hours").sum())
        .sort("gpu_type")
        .iter_rows(named=True)
    ):
        g = r["gpu_type"]
        gpu = catalog.gpus[g]
        if r["gpus"] > 0 and on_prem:
            rows.append(
                _fact_row(
                    f"gpus:{g}:node_capex_usd",
                    f"{g} node price",
                    gpu.node_capex_usd * scale,
                    "USD/node",
                    "{:,.0f}",
                )
            )
        elif r["gpus"] > 0:
            rows.append(
                _fact_row(
                    f"gpus:{g}:usd_per_gpu_hour_reserved",
                    f"{g} reserved price",
                    gpu.usd_per_gpu_hour_reserved * scale,
                    "USD/GPU-hour",
                )
            )
        if r["burst_gpu_hours"] > 0:
            rows.append(
                _fact_row(
                    f"gpus:{g}:usd_per_gpu_hour_on_demand",
                    f"{g} on-demand price",
                    gpu.usd_per_gpu_hour_on_demand * scale,
                    "USD/GPU-hour",
                )
            )
    if plan.staffing.height and plan.staffing["hires"].sum() > 0:
        cost = (
            scenario.hire_one_time_cost_usd
            if scenario is not None
            else catalog.costs.hire_one_time_cost_usd
        )
        rows.append(
            _fact_row(
                "costs:hire_one_time_cost_usd", "One-off cost of a hire", cost, "USD", "{:,.0f}"
            )
        )
    schema = dict.fromkeys(
        ("figure", "value", "unit", "source", "date", "confidence", "note", "key"), pl.String
    )
    return pl.DataFrame(rows, schema=schema)


def _assumptions(b: Bundle) -> Section:
    frame = key_assumptions(b.plan, b.scenario)
    rows = tuple(
        (r["figure"], f"{r['value']} {r['unit']}", r["source"], r["date"], r["confidence"])
        for r in frame.iter_rows(named=True)
    )
    table = Table(
        ("Figure", "Value", "Source", "Date", "Confidence"),
        rows,
        (False, True, False, False, False),
    )
    guessed = frame.filter(pl.col("confidence").is_in(["assumption", "low"])).height
    lead = (
        f"{guessed} of these {frame.height} figures are our own estimates or weakly sourced: "
        "check them first."
    )
    notes = tuple(f"{r['figure']}: {r['note']}" for r in frame.iter_rows(named=True) if r["note"])
    return Section("assumptions", "Key assumptions and sources", lead, table=table, notes=notes)


# -- the pilot --------------------------------------------------------------------------------


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


def _where(rows: pl.DataFrame) -> str:
    return " and ".join(
        f"{r['pool']} ({_platform(r['platform'])}, {r['gpu_type']}"
        + (f", {r['share']:.0%}" if r["share"] < 0.999 else "")
        + ")"
        for r in rows.iter_rows(named=True)
    )


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


def _utilization(scenario: Scenario | None, platform: str, kind: str) -> str:
    if scenario is None:
        return ""
    value = scenario.catalog.platforms[platform].utilization.get(kind)
    return f" vs. the {value:.0%} the plan assumes" if value is not None else ""


def pilot_plan(plan: Plan, scenario: Scenario | None = None) -> pl.DataFrame:
    """A pilot tailored to the plan: four workloads and four operational tests, each measured.

    The workloads are the scenario's own (largest of each kind) on the pools the plan puts them
    in: one multi-node training job, a fine-tuning workload, a batch pipeline and a production
    inference endpoint. The tests are failure injection, GPU node replacement, quota
    enforcement and cost reporting on those pools. Columns: see :data:`PILOT_COLUMNS`.
    """
    rows: list[dict[str, str]] = []

    def add(
        test: str, picked: pl.DataFrame, run: str, measure: str, why: str, where: str = "–"
    ) -> None:
        name = picked["workload"][0] if picked.height else "none in this scenario"
        rows.append(
            {
                "test": test,
                "workload": name,
                "where": _where(picked) if picked.height else where,
                "run": run,
                "measure": measure,
                "why": why,
            }
        )

    train = _multi_node(plan, scenario)
    if train.height:
        w, first = train["workload"][0], train.row(0, named=True)
        gang = int(_attr(scenario, w, "gpus_per_job") or first["gpus"])
        nodes = max(2, min(4, -(-gang // _gpus_per_node(scenario, first["gpu_type"]))))
        wait = _attr(scenario, w, "max_queue_wait_hours")
        add(
            "Multi-node training",
            train,
            f"A {nodes}-node slice of {w} (the full job is a gang of {gang:,} GPUs), "
            "checkpointing every 30 minutes.",
            "Time for the whole gang to start; all-reduce bandwidth against the fabric's rating; "
            f"GPU utilization{_utilization(scenario, first['platform'], first['kind'])}"
            + (f"; queue wait against the {wait:g} h target." if wait else "."),
            "Gang scheduling and topology-aware placement decide where this runs; the pilot "
            "shows they work at this fabric's scale.",
        )
    else:
        largest = plan.pools.sort(["gpus", "pool"], descending=[True, False]).head(1)
        add(
            "Multi-node training",
            train,
            "A 2-node all-reduce test (NCCL tests) as a stand-in: no workload in this scenario "
            "spans nodes.",
            "Bandwidth and start-up time, so a future multi-node job has a baseline.",
            "Even without multi-node training today, the fabric needs a measured baseline.",
            where=(
                f"{largest['pool'][0]} ({_platform(largest['platform'][0])}, "
                f"{largest['gpu_type'][0]})"
                if largest.height
                else "–"
            ),
        )
    tune = _pick(plan, ("fine_tuning",))
    w = tune["workload"][0] if tune.height else ""
    wait = _attr(scenario, w, "max_queue_wait_hours") if w else None
    interface = _attr(scenario, w, "interface") if w else None
    add(
        "Fine-tuning",
        tune,
        (
            f"A day of {w} jobs submitted the way its team works"
            + (
                f" ({'Slurm job scripts' if interface == 'slurm' else 'containers'})"
                if interface
                else ""
            )
            + (", in every pool it is split across." if tune.height > 1 else ".")
        )
        if w
        else "A single-node fine-tuning job on the training pool.",
        "Queue wait"
        + (f" against the {wait:g} h target" if wait else "")
        + "; preemption and restart from checkpoint; fair share between teams.",
        "Fine-tuning is short, bursty and shares GPUs with other teams: the scheduler's "
        "fairness and preemption are what the team will feel.",
    )
    batch = _pick(plan, ("pipeline", "batch_inference"))
    w = batch["workload"][0] if batch.height else ""
    window = _attr(scenario, w, "max_completion_hours") if w else None
    burst = (
        float(
            plan.pools.filter(pl.col("pool").is_in(batch["pool"].to_list()))[
                "burst_gpu_hours"
            ].sum()
        )
        if batch.height
        else 0.0
    )
    add(
        "Batch pipeline",
        batch,
        f"One night's run of {w}, end to end, with one stage made to fail."
        if w
        else "A nightly batch job of a few GPUs through the pipeline tooling.",
        ("Completion within the " + (f"{window:g} h" if window else "nightly") + " window")
        + "; retries of the failed stage"
        + (
            f"; on-demand GPU-hours against the {burst:,.0f} a month the plan buys for the pool."
            if burst > 0
            else "."
        ),
        "Pipelines need self-healing and retries more than raw speed; the pilot checks the "
        "window holds when something breaks.",
    )
    serve = _pick(plan, ("realtime_inference",))
    w = serve["workload"][0] if serve.height else ""
    target = _attr(scenario, w, "p99_latency_ms") if w else None
    rps = _attr(scenario, w, "peak_requests_per_second") if w else None
    predicted = plan.service_levels.filter(pl.col("workload") == w)["predicted"] if w else None
    lag = (
        scenario.catalog.platforms[serve["platform"][0]].scale_up_lag_minutes
        if scenario is not None and serve.height
        else None
    )
    add(
        "Inference endpoint",
        serve,
        (
            f"{w} served at its peak"
            + (f" of {rps:,g} requests/s" if rps else "")
            + " from production-style traffic, with a rolling update mid-test."
        )
        if w
        else "A small model behind a production-style endpoint, with a rolling update mid-test.",
        "p99 latency"
        + (f" against {target:,g} ms" if target else "")
        + (
            f" (the model predicts {predicted[0]:,.0f} ms)"
            if predicted is not None and len(predicted)
            else ""
        )
        + "; scale-up time"
        + (f" against the {lag:g} minutes assumed" if lag else "")
        + "; failed requests during the rollout.",
        "Services need autoscaling, self-healing and rolling updates: this is where the "
        "Kubernetes side earns its place.",
    )
    pools = plan.pools.unique(subset=["pool"], maintain_order=True)
    platforms = pools["platform"].to_list()
    pool_names = ", ".join(pools["pool"].to_list()) or "the pilot pools"
    victims = []
    if train.height:
        victims.append(f"a node under {train['workload'][0]} in {train['pool'][0]}")
    if serve.height:
        victims.append(
            f"a serving replica of {serve['workload'][0]} and its node in {serve['pool'][0]}"
        )
    if not victims:
        victims.append(f"a node under the pilot workloads in {pool_names}")
    teams = sorted({w.team for w in scenario.workloads}) if scenario is not None else []
    per_node = ""
    if scenario is not None and platforms:
        kinds = sorted(set(platforms))
        effort = sum(
            scenario.catalog.platforms[kind].fte(skill, "per_100_nodes")
            for kind in kinds
            for skill in ("hpc", "kubernetes")
        ) / len(kinds)
        per_node = f" (the staffing model assumes about {effort:.1f} FTE per 100 nodes)"
    ops = [
        (
            "Failure injection",
            f"Kill {' and '.join(victims)}; pull a GPU's driver on another node.",
            "Time to detect, drain and requeue; GPU-hours lost since the last checkpoint; "
            "failed requests and p99 latency during recovery.",
            "GPU nodes fail often at scale; recovery time is the cost the plan does not show.",
        ),
        (
            "GPU node replacement",
            f"Drain, replace and re-admit one GPU node in each pool ({pool_names}).",
            "Hands-on hours per node"
            + per_node
            + "; time until the node takes work again; driver and firmware drift.",
            "Node care is the largest per-node staffing term; the pilot checks the estimate.",
        ),
        (
            "Quota enforcement",
            "Give each team"
            + (f" ({', '.join(teams)})" if teams else "")
            + " a quota with "
            + "; ".join(sorted({_QUOTA[p] for p in platforms}) or ["the platform's own tools"])
            + "; submit past it.",
            "Over-quota work waits, or borrows idle GPUs and is preempted back; no team starves; "
            "admission wait per team.",
            "Shared GPUs stay shared only if quotas hold under pressure.",
        ),
        (
            "Cost reporting",
            "A month-to-date cost report per team and workload from "
            + " and ".join(sorted({_COST_SOURCE[p] for p in platforms}) or ["the bill"])
            + ".",
            "GPU-hours per workload within 10% of the plan's placements; totals reconcile to the "
            f"bill ({money(plan.cash_monthly_usd)} a month of cash in the plan); idle GPU-hours "
            "visible.",
            "Showback is what keeps the plan's utilization assumptions honest after go-live.",
        ),
    ]
    for test, run, measure, why in ops:
        rows.append(
            {
                "test": test,
                "workload": "–",
                "where": pool_names,
                "run": run,
                "measure": measure,
                "why": why,
            }
        )
    return pl.DataFrame(rows, schema=dict.fromkeys(PILOT_COLUMNS, pl.String))


def _pilot(b: Bundle) -> list[Section]:
    frame = pilot_plan(b.plan, b.scenario)
    work = frame.head(4)
    ops = frame.slice(4)
    work_table = Table(
        ("Test", "Workload and pool", "What to run", "What to measure"),
        tuple(
            (
                r["test"],
                f"{r['workload']} on {r['where']}" if r["where"] != "–" else r["workload"],
                r["run"],
                r["measure"],
            )
            for r in work.iter_rows(named=True)
        ),
        (False, False, False, False),
    )
    ops_table = Table(
        ("Test", "What to do", "What to measure"),
        tuple((r["test"], r["run"], r["measure"]) for r in ops.iter_rows(named=True)),
        (False, False, False),
    )
    return [
        Section(
            "pilot-workloads",
            "Pilot plan: four workloads",
            "Before standardizing, run one of each on the pools the plan puts them in.",
            table=work_table,
            notes=(_SEED_WHY, *(f"{r['test']}: {r['why']}" for r in work.iter_rows(named=True))),
        ),
        Section(
            "pilot-operations",
            "Pilot plan: operations under stress",
            "On the same pools, with the pilot workloads running.",
            table=ops_table,
            notes=tuple(f"{r['test']}: {r['why']}" for r in ops.iter_rows(named=True)),
        ),
    ]


def sections(bundle: Bundle) -> list[Section]:
    """The story in order, one section per slide (long tables continue on more slides).

    Recommendation, architecture, cost, placements, alternatives, what would change the
    answer, staffing, service levels, key assumptions and the pilot plan.
    """
    out = [_recommendation(bundle)]
    if bundle.plan.feasible:
        out += [_architecture(bundle), _costs(bundle), _placements(bundle)]
    out.append(_alternatives(bundle))
    out += _change(bundle)
    if bundle.plan.feasible:
        out += [_staffing(bundle), _service(bundle), _assumptions(bundle)]
        out += _pilot(bundle)
    return out
