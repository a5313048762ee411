"""What an export says, once: the story's sections, their tables, sentences and talking points.

The deck, the HTML report and the Markdown report render the same :class:`Section` list, so a
fact never reads differently between them. Every figure is formatted by
:mod:`cluster_decide.export.words` (one formatter per unit) and every workload, pool and
architecture is named by its display name. The story runs as a consultant's: the executive
summary, the recommendation and why, what it costs, the alternatives, the risks and what would
change the answer, how sure we are, service levels and staff, today against the proposal, the
pilot and the decision asked for; placements, levers, break-evens, assumptions and a glossary
follow in an appendix. Each section's title states its takeaway (an action title).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

import polars as pl

from cluster_decide.analysis import compare
from cluster_decide.analysis.flips import change_pct_words
from cluster_decide.base.constants import SKILLS
from cluster_decide.base.vocabulary import (
    ARCHETYPE_LABELS,
    COMPONENT_LABELS,
    KIND_WORDS,
    METRIC_WORDS,
    PLATFORM_LABELS,
)
from cluster_decide.export.assumptions import key_assumptions
from cluster_decide.export.pilot import pilot_plan
from cluster_decide.export.words import (
    GLOSSARY,
    NOTE_WORDS,
    Names,
    article,
    display,
    effort,
    finite,
    fte,
    gpu_hours,
    gpus,
    level,
    multiple,
    number,
    pct,
    skill,
    usd,
    usd_year,
)
from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.explain import (
    ADDED_NODE_MARKS,
    SELLER_MARKS,
    SIZING_MARKS,
    SPARE_NODE_MARKS,
    WHOLE_NODE_MARKS,
    split_closing,
)
from cluster_decide.planning.explain_people import and_list, number_words
from cluster_decide.planning.plan import Plan
from cluster_decide.planning.solve import solve

__all__ = [
    "PILOT_WEEKS",
    "Bundle",
    "Section",
    "Table",
    "gather",
    "headline",
    "is_break_evens",
    "is_levers",
    "levers_shown",
    "sections",
    "standard_analyses",
    "table_of",
]

PILOT_WEEKS: Final = 6
"""Length of the pilot the deck proposes: long enough for a month of cost reports, short
enough to decide within a quarter (a planning convention, not a measured figure)."""
_PILOT_WHY: Final = (
    "A pilot on our own workloads before we standardize shows the gaps in scheduling and "
    "quotas that vendor demonstrations rarely show."
)
_VERDICT_WORDS: Final = {
    "clear": "A clear answer",
    "close": "A close call",
    "fragile": "A fragile answer",
    "none": "No verdict",
}
_PROPER_NAMES: Final = frozenset({"Slurm", "Kubernetes"})
"""Words an architecture's label may open with that stay capitalised inside a sentence."""
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
    """One slide's worth of the story, and one heading of the reports.

    ``title`` is the action title (the takeaway); ``topic`` the short name a contents list and
    the appendix use. ``chart`` names an entry of
    :func:`cluster_decide.export.figures.chart_set`; ``chart_in_deck`` is False where the deck
    shows the table alone. ``rows`` are labelled statements (the executive summary, the
    decision); ``notes`` the talking points, read
    from the speaker notes (at most :data:`~cluster_decide.export.words.NOTE_WORDS` words).
    ``appendix`` sections follow the story, for the reader who wants the detail.
    """

    key: str
    title: str
    lead: str = ""
    chart: str | None = None
    chart_in_deck: bool = True
    table: Table | None = None
    bullets: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    rows: tuple[tuple[str, str], ...] = ()
    topic: str = ""
    appendix: bool = False


@dataclass(frozen=True)
class Bundle:
    """Everything an export shows: the plan and, when known, its scenario and analyses.

    ``recommendation`` is an optional verdict (``cd.recommend``'s result, or anything with
    ``verdict``, ``sentence``, ``runner_up``, ``margin_usd``, ``margin_pct`` and ``flips``);
    without it the exports state the margin the alternatives and analyses show.
    """

    plan: Plan
    scenario: Scenario | None = None
    alternatives: pl.DataFrame | None = None
    analyses: Mapping[str, pl.DataFrame] = field(default_factory=dict)
    recommendation: Any = None


def gather(
    source: Plan | Scenario | Bundle,
    scenario: Scenario | None = None,
    alternatives: pl.DataFrame | None = None,
    analyses: Mapping[str, pl.DataFrame] | None = None,
    run_compare: bool = True,
    time_limit_s: float = 10.0,
    recommendation: Any = None,
) -> Bundle:
    """A :class:`Bundle` from a plan or a scenario (solved here), with what is known about it.

    ``alternatives`` is a ``cd.compare`` frame; when it is None and the scenario is known it is
    computed (unless ``run_compare`` is False: one solve per archetype takes seconds).
    ``analyses`` are named frames from the analysis module (lever values, break-evens);
    ``recommendation`` a verdict object (see :class:`Bundle`). A bundle passed in keeps its
    own, gaining the recommendation when it had none.
    """
    if isinstance(source, Bundle):
        if recommendation is not None and source.recommendation is None:
            return replace(source, recommendation=recommendation)
        return source
    if isinstance(source, Scenario):
        scenario = source
        plan = solve(source, time_limit_s=time_limit_s)
    else:
        plan = source
        scenario = scenario if scenario is not None else plan.inputs
    if alternatives is None and run_compare and scenario is not None:
        alternatives = compare(scenario, time_limit_s=time_limit_s)
    return Bundle(plan, scenario, alternatives, dict(analyses or {}), recommendation)


# -- small helpers -------------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text.strip()) if s]


def _cap(text: str) -> str:
    return text[0].upper() + text[1:] if text else text


def _uncap(text: str) -> str:
    """``The loaded cost`` → ``the loaded cost`` (a label inside a sentence)."""
    return text[0].lower() + text[1:] if text[:4] in ("The ", "One ") else text


def _platform(platform: str) -> str:
    return PLATFORM_LABELS.get(platform, platform)


def _arch(archetype: str | None) -> str:
    return ARCHETYPE_LABELS.get(archetype or "", archetype or "") or "no feasible plan"


def _arch_within(archetype: str | None) -> str:
    """An architecture's label inside a sentence ("the runner-up, separate Slurm and ...").

    A label that opens with a product name keeps its capital ("Kubernetes + batch add-on").
    """
    label = _arch(archetype)
    first = label.split(" ", 1)[0]
    return label if first in _PROPER_NAMES else label[0].lower() + label[1:]


def _listing(items: list[str]) -> str:
    """``a, b and c``: items as a sentence lists them."""
    return and_list(items) if items else ""


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _names(b: Bundle) -> Names:
    return Names.of(b.plan, b.scenario)


def _talk(*points: str) -> tuple[str, ...]:
    """Talking points within the word budget: whole points, in order, until it is spent."""
    out: list[str] = []
    used = 0
    for point in points:
        n = len(point.split())
        if not point or (out and used + n > NOTE_WORDS):
            continue
        if n > NOTE_WORDS:
            point = " ".join(point.split()[:NOTE_WORDS]).rstrip(",;:") + "…"
            n = NOTE_WORDS
        out.append(point)
        used += n
    return tuple(out)


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
                cells.append(display(str(v)) if re.fullmatch(r"[a-z0-9_-]+", str(v)) else str(v))
        rows.append(tuple(cells))
    cols = tuple(headers.get(c, _cap(c.replace("_", " "))) for c in frame.columns)
    return Table(cols, tuple(rows), numeric)


# -- facts the story repeats -----------------------------------------------------------------------


def _upfront_usd(plan: Plan) -> float | None:
    """The plan's one-off outlay (on-premises purchase, migration), when the plan carries one."""
    return number(getattr(plan, "upfront_usd", None))


def _current_usd(plan: Plan) -> float | None:
    """What today's estate costs a month, when the plan carries it."""
    return number(getattr(plan, "current_monthly_usd", None))


def _hires(plan: Plan) -> list[tuple[str, int]]:
    return [
        (str(r["skill"]), int(r["hires"]))
        for r in plan.staffing.iter_rows(named=True)
        if (r["hires"] or 0) > 0
    ]


def _hire_words(plan: Plan, none: str = "no new hires") -> str:
    """``one new HPC (Slurm) engineer`` / ``no new hires`` (``none``), and any retraining.

    A plan that retrains an engineer needs more of a skill than the team has and hires no one:
    "no new hires" alone left a staffing slide whose Kubernetes need (1.3 FTE) stood above its
    0.5 FTE with nothing to say where the rest comes from.
    """
    hires = _hires(plan)
    words = (
        " and ".join(
            f"{'one' if n == 1 else n} new {skill(s)} engineer{'s' if n > 1 else ''}"
            for s, n in hires
        )
        if hires
        else none
    )
    retrained = [
        f"{'one' if n == 1 else n} {skill(next(o for o in SKILLS if o != s))} "
        f"engineer{'s' if n > 1 else ''} retrained in {skill(s)}"
        for s, n in zip(plan.staffing["skill"], plan.staffing["retrained_in"], strict=True)
        if n
    ]
    return " and ".join([words, *retrained])


def _staff_words(plan: Plan) -> str:
    parts = [
        f"{fte(r['required_fte'])} {skill(r['skill'])} FTE"
        for r in plan.staffing.iter_rows(named=True)
        if r["required_fte"] > 0
    ]
    return " and ".join(parts) if parts else "no platform staff"


def headline(plan: Plan) -> str:
    """The recommendation in one sentence a reviewer can repeat."""
    if not plan.feasible:
        fix = plan.relaxations["sentence"][0] if plan.relaxations.height else ""
        names = Names.of(plan, plan.inputs)
        return "No architecture meets this scenario as stated" + (
            "; the smallest change that makes it feasible: "
            f"{names.plain(fix[0].lower() + fix[1:]).rstrip('.')}."
            if fix
            else "."
        )
    words = plan.architecture_words or "the plan below"
    n_pools = plan.pools["pool"].n_unique()
    hires = _hire_words(plan)
    return (
        f"Run {words}: {usd(plan.total_monthly_usd)} a month for "
        f"{gpus(float(plan.pools['gpus'].sum()))} reserved GPUs in "
        f"{_plural(n_pools, 'cluster')}, operated by {_staff_words(plan)}"
        + (f", including {hires}." if _hires(plan) else ".")
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


def is_levers(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is ``cluster_decide.analysis.lever_values``'s result."""
    return {"change", "value_usd_per_month", "lever_archetype"} <= set(frame.columns)


def is_break_evens(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is ``cluster_decide.analysis.break_evens``'s result."""
    return {"found", "changed_archetype", "same_value", "sentence"} <= set(frame.columns)


def _input_value(value: float | None, unit: str, base: float) -> str:
    """An analysed input's value, one way everywhere: multiples as 1.75×, money as $240k."""
    if value is None or not math.isfinite(value):
        return "–"
    if unit == "x":
        return multiple(value / base) if base else multiple(value)
    if unit == "FTE":
        return f"{effort(value)} FTE"
    if unit == "USD/year":
        return usd_year(value)
    return f"{value:g} {unit}".strip()


def _break_even_rows(b: Bundle) -> pl.DataFrame:
    """Break-evens found, nearest first (the smallest relative change that flips the answer)."""
    frames = [f for f in b.analyses.values() if is_break_evens(f)]
    if not frames:
        return pl.DataFrame()
    found = pl.concat([f.filter(pl.col("found")) for f in frames], how="diagonal_relaxed")
    if found.height == 0:
        return found
    return found.with_columns(
        (pl.col("changed_value") / pl.col("base_value") - 1.0).abs().alias("_distance")
    ).sort(["_distance", "label"])


def _flip_sentence(r: Mapping[str, Any], names: Names) -> str:
    """One break-even as a sentence built from the same formatted values as its table row."""
    base = r["base_value"]
    same = _input_value(r["same_value"], r["unit"], base)
    changed = _input_value(r["changed_value"], r["unit"], base)
    then = (
        f"{_arch_within(r['changed_archetype'])} becomes the cheapest"
        if r["changed_archetype"]
        else "no architecture meets every requirement"
    )
    up = finite(r["changed_value"]) and r["changed_value"] > base
    label = names.plain(r["label"])
    return (
        f"{_cap(label)}: the answer holds {'up' if up else 'down'} to {same}; at {changed}, {then}."
    )


def _margin_words(b: Bundle) -> tuple[str, str]:
    """(how sure we are, in a sentence; the verdict word) from the recommendation or margin."""
    rec = b.recommendation
    if rec is not None:
        verdict = str(getattr(rec, "verdict", "") or "")
        sentence = str(getattr(rec, "sentence", "") or "")
        return _names(b).plain(sentence), _VERDICT_WORDS.get(verdict, _cap(verdict))
    near = _nearest(b)
    flips = _break_even_rows(b)
    flip = ""
    if flips.height:
        r = flips.row(0, named=True)
        flip = (
            f" It flips at {_uncap(_names(b).plain(r['label']))} of "
            f"{_input_value(r['changed_value'], r['unit'], r['base_value'])}."
        )
    if near is None:
        if b.alternatives is None:
            return "The margin over other architectures was not computed." + flip, ""
        return "No other architecture meets every requirement." + flip, "Clear"
    arch, delta, share = near
    word = "A close call" if share < 0.05 else "A clear answer"
    return (
        f"{word}: the runner-up, {_arch_within(arch)}, costs {usd(delta)} ({pct(share, 1)}) more a "
        f"month." + flip,
        word,
    )


# -- the story ---------------------------------------------------------------------------------


def _ask_words(b: Bundle) -> str:
    plan = b.plan
    if not plan.feasible:
        return "Agree which requirement to relax, then re-run this analysis."
    budget = f"a run-rate of {usd(plan.cash_monthly_usd)} a month in cash"
    upfront = _upfront_usd(plan)
    if upfront:
        budget += f" and {usd(upfront)} up front"
    hires = _hire_words(plan, none="no new hires are needed")
    return f"Approve {budget}; {hires}; a {PILOT_WEEKS}-week pilot with a named owner."


def _cash_words(plan: Plan) -> str:
    """The monthly total and how much of it is cash, never "$260k a month, $260k of it cash"."""
    total = usd(plan.total_monthly_usd)
    estimated = plan.total_monthly_usd - plan.cash_monthly_usd
    if estimated < 0.5:
        return f"{total} a month, all of it cash"
    if usd(plan.cash_monthly_usd) == total:
        return f"{total} a month, all but {usd(estimated)} of it cash"
    return f"{total} a month, {usd(plan.cash_monthly_usd)} of it cash"


def _effort_words(plan: Plan) -> str:
    """What the estimated effort adds to the cash budget, in a sentence ("" when nothing)."""
    estimated = plan.total_monthly_usd - plan.cash_monthly_usd
    if estimated < 0.5:
        return ""
    if usd(plan.total_monthly_usd) == usd(plan.cash_monthly_usd):
        return f" Estimated effort adds {usd(estimated)} a month."
    return f" Estimated effort brings the total to {usd(plan.total_monthly_usd)} a month."


def _summary_sure(b: Bundle) -> str:
    """How sure, for the summary: the verdict, and how many caveats the How sure slide lists.

    The verdict's sentence ends with caveats on the plan's cost (``Recommendation.caveats``: one
    cluster fewer, whole nodes, one company); the summary keeps the verdict and points to the
    slide that gives each its bullet, so its row stays a few lines.
    """
    sure, _word = _margin_words(b)
    rec = b.recommendation
    if rec is None:
        return sure
    core, caveats = split_closing(
        str(getattr(rec, "sentence", "") or ""), [str(c) for c in getattr(rec, "caveats", ()) or ()]
    )
    if not caveats:
        return sure
    n = len(caveats)
    return (
        f"{_names(b).plain(core)} The How sure slide adds {number_words(n)} "
        f"{'caveat' if n == 1 else 'caveats'} on this cost."
    )


def _summary(b: Bundle) -> Section:
    plan = b.plan
    sure = _summary_sure(b)
    rows: list[tuple[str, str]] = []
    if plan.feasible:
        arch = plan.architecture_words or _arch(plan.archetype)
        title = f"Run {arch} for {usd(plan.total_monthly_usd)} a month"
        rows.append(
            (
                "Answer",
                f"{_cap(arch)}: {gpus(float(plan.pools['gpus'].sum()))} reserved GPUs in "
                f"{_plural(plan.pools['pool'].n_unique(), 'cluster')}, every workload placed "
                "and every service target met."
                if bool(plan.service_levels["met"].all())
                else f"{_cap(arch)}, with the service targets the next slides show.",
            )
        )
        cost = f"{_cash_words(plan)}; {_staff_words(plan)}, {_hire_words(plan)}."
        current = _current_usd(plan)
        if current is not None:
            cost += f" Today's estate costs {usd(current)} a month."
        rows.append(("Cost", cost))
        upfront = _upfront_usd(plan)
        if upfront:
            rows.append(("Up front", f"{usd(upfront)} once, before the monthly run-rate."))
    else:
        title = "No architecture meets every requirement as stated"
        rows.append(("Answer", headline(plan)))
    rows.append(("How sure", sure))
    rows.append(("We ask", _ask_words(b)))
    return Section(
        "summary",
        title,
        rows=tuple(rows),
        topic="Executive summary",
        notes=_talk(
            "Open with the answer, then the cost, then how sure we are.",
            "The rest of the deck backs each line: why this design, what it costs, what could "
            "change it, and the pilot that proves it before we commit.",
        ),
    )


def _workload_reason(plan: Plan, workload: str) -> str:
    for line in plan.explanations:
        if line.startswith(f"{workload} runs on"):
            return line
    return ""


def _recommendation(b: Bundle) -> Section:
    plan = b.plan
    names = _names(b)
    if not plan.feasible:
        why = [names.plain(s) for s in plan.explanations if s.startswith("Why")]
        fixes = [names.plain(s) for s in plan.relaxations["sentence"].to_list()[:4]]
        return Section(
            "recommendation",
            "Each of these changes would make a plan possible",
            "No architecture meets every requirement; the smallest changes that fix it:",
            bullets=tuple((*why[:2], *fixes))[:5] or ("No relaxation was found.",),
            topic="Recommendation",
            notes=_talk(
                "Nothing feasible as stated: the choice is which requirement to relax.",
                *(names.plain(s) for s in plan.explanations[:3]),
            ),
        )
    # One reason per platform: a workload that rules another platform out (else its largest).
    by_platform: dict[str, list[str]] = {}
    for r in plan.placements.sort(["gpus", "workload"], descending=[True, False]).iter_rows(
        named=True
    ):
        by_platform.setdefault(r["platform"], []).append(r["workload"])
    reasons: list[str] = []
    for platform, workloads in by_platform.items():
        ruled = [
            s for w in workloads for s in _sentences(_workload_reason(plan, w)) if "ruled out" in s
        ]
        kinds = sorted(
            {
                KIND_WORDS.get(k, k)
                for k in plan.placements.filter(pl.col("platform") == platform)["kind"]
            }
        )
        line = f"{_platform(platform)} runs {_listing(kinds)}"
        if ruled:
            line += f". {names.plain(ruled[0])}"
        else:
            line += "."
        reasons.append(line)
    said = " ".join(reasons)
    for w in plan.placements.sort(["gpus", "workload"], descending=[True, False])["workload"]:
        for sentence in _sentences(_workload_reason(plan, w)):
            plain = names.plain(sentence)
            if len(reasons) < 3 and "ruled out" in sentence and plain not in said:
                reasons.append(plain)
                said += " " + plain
    binds = [names.plain(s) for s in plan.explanations if "binds" in s]
    arch = _arch(plan.archetype)
    return Section(
        "recommendation",
        f"{arch} is the cheapest design that meets every requirement",
        headline(plan),
        bullets=tuple((*reasons, *binds))[:4],
        topic="Why this design",
        notes=_talk(
            "Each workload goes where its needs are met at the least total cost: GPUs, staff "
            "and the friction of changing how a team works.",
        ),
    )


def _architecture(b: Bundle) -> Section:
    """What would be built: the clusters, their GPUs and what runs on each (the picture)."""
    plan = b.plan
    names = _names(b)
    pools = plan.pools["pool"].unique(maintain_order=True).to_list()
    platforms = {p: plan.pools.filter(pl.col("pool") == p)["platform"][0] for p in pools}
    one_platform = len(set(platforms.values())) == 1 and len(pools) > 1
    parts = []
    for pool in pools:
        placed = plan.placements.filter(pl.col("pool") == pool)
        kinds = (
            placed.group_by("kind")
            .agg(pl.col("gpus").sum())
            .sort(["gpus", "kind"], descending=[True, False])["kind"]
            .to_list()
        )
        work = KIND_WORDS.get(kinds[0], kinds[0]) if kinds else "spare capacity"
        # Clusters of one platform are told apart by their GPUs ("H100 for training").
        which = (
            "/".join(
                plan.pools.filter(pl.col("pool") == pool)["gpu_type"].unique(maintain_order=True)
            )
            if one_platform
            else _platform(platforms[pool])
        )
        parts.append(f"{which} for {work}" + (" and more" if len(kinds) > 1 else ""))
    n = len(parts)
    count = ["One", "Two", "Three", "Four"]
    noun = f"{_platform(next(iter(platforms.values())))} clusters" if one_platform else "clusters"
    clusters = f"{count[n - 1]} {noun}" if 0 < n <= 4 else f"{n:,} {noun}"
    if n == 1:
        clusters = "One cluster"
    title = f"{clusters}: {'; '.join(parts)}"
    reserved = float(plan.pools["gpus"].sum())
    if len(title) > 110:
        title = f"{clusters} with {gpus(reserved)} GPUs"
    burst = float(plan.pools["burst_gpu_hours"].sum())
    peaks = float(plan.placements["gpus"].sum())
    if peaks > reserved + 0.5:
        # The chart lists each workload at its busiest hour: say why they add up to more.
        lead = (
            f"{gpus(reserved)} reserved GPUs"
            + (f" and about {gpu_hours(burst)} on-demand GPU-hours a month" if burst >= 1 else "")
            + f" cover workload peaks that add up to {gpus(peaks)} but fall at different hours."
        )
    elif burst >= 1:
        lead = (
            f"{gpus(reserved)} reserved GPUs, plus about {gpu_hours(burst)} on-demand GPU-hours "
            "a month rented for peaks."
        )
    else:
        lead = f"{gpus(reserved)} reserved GPUs; no on-demand burst."
    # A cluster whose GPUs the plan buys from several clouds: what it assumed, beside the picture.
    lead = " ".join([lead, *_marked(plan, names, SELLER_MARKS)])
    return Section(
        "architecture",
        title,
        lead,
        chart="architecture",
        topic="What we would build",
        notes=_talk(
            # The first sentence of each: what sizes the cluster, within the notes' budget (a
            # gang pool's backfill and booking advice follow it in the report).
            *(_sentences(s)[0] for s in _marked(plan, names, SIZING_MARKS)),
            "Each box is a cluster: its GPUs on top, the workloads it runs below.",
        ),
    )


def _costs(b: Bundle) -> Section:
    plan = b.plan
    costs = plan.costs.filter(pl.col("monthly_usd") >= 0.5).sort("monthly_usd", descending=True)
    rows = tuple(
        (
            COMPONENT_LABELS.get(r["component"], r["component"]),
            usd(r["monthly_usd"]),
            "cash" if r["cash"] else "estimate",
        )
        for r in costs.iter_rows(named=True)
    )
    table = Table(("Component", "US$ a month", "Kind"), rows, (False, True, False))
    title = f"{usd(plan.total_monthly_usd)} a month"
    if costs.height and plan.total_monthly_usd > 0:
        top = costs.row(0, named=True)
        share = top["monthly_usd"] / plan.total_monthly_usd
        label = COMPONENT_LABELS.get(top["component"], top["component"])
        # Inside a sentence a label reads lower case ("staff (payroll)"), an acronym as it is.
        label = label if label[1:2].isupper() else label[:1].lower() + label[1:]
        title += f", {pct(share)} of it {label}"
    estimates = plan.total_monthly_usd - plan.cash_monthly_usd
    lead = (
        f"{usd(plan.cash_monthly_usd)} is cash; {usd(estimates)} is estimated effort, not an "
        "invoice."
        if estimates >= 0.5
        else "All of it is cash spend."
    )
    # What the cost leaves out where whole-node jobs share a renting pool with other work.
    lead = " ".join([lead, *_marked(plan, _names(b), WHOLE_NODE_MARKS)])
    notes = _talk(
        "Read the biggest line first; it is where a price change moves the total most.",
        *(
            f"{COMPONENT_LABELS.get(r['component'], r['component'])}: {r['meaning']}"
            for r in costs.head(3).iter_rows(named=True)
        ),
    )
    return Section(
        "costs", title, lead, chart="cost_breakdown", table=table, notes=notes, topic="Cost"
    )


def _alternatives(b: Bundle) -> Section | None:
    frame = b.alternatives
    if frame is None:
        return None
    rows = []
    for r in frame.iter_rows(named=True):
        feasible = r["status"] != "infeasible"
        delta = r["delta_usd"]
        rows.append(
            (
                _arch(r["archetype"]),
                "meets every requirement" if feasible else "cannot meet them",
                usd(r["total_monthly_usd"]) if feasible else "–",
                ("this plan" if r["archetype"] == b.plan.archetype else f"+{usd(delta)}")
                if feasible and delta is not None
                else "–",
                str(r["hires"]) if feasible else "–",
            )
        )
    table = Table(
        ("Architecture", "Outcome", "US$ a month", "vs. plan", "Hires"),
        tuple(rows),
        (False, False, True, True, True),
    )
    near = _nearest(b)
    if near is not None:
        arch, delta, share = near
        title = f"The runner-up, {_arch_within(arch)}, costs {pct(share, 1)} more"
        lead = f"{usd(delta)} more a month than the recommendation."
    elif not b.plan.feasible and frame.filter(pl.col("status") != "infeasible").height:
        best = (
            frame.filter(pl.col("status") != "infeasible")
            .sort("total_monthly_usd")
            .row(0, named=True)
        )
        title = (
            f"{_arch(best['archetype'])} meets every requirement, at "
            f"{usd(best['total_monthly_usd'])} a month"
        )
        lead = ""
    else:
        title = "No other architecture meets every requirement"
        lead = ""
    infeasible = frame.filter(pl.col("status") == "infeasible")["archetype"].to_list()
    if infeasible:
        lead += f" {', '.join(_arch(a) for a in infeasible)}: cannot meet every requirement."
    names = _names(b)
    notes = _talk(
        "Each alternative was solved with that architecture required, so the comparison is "
        "like for like.",
        *(
            f"{_arch(r['archetype'])}: {usd(r['total_monthly_usd'])} a month, "
            f"{usd(r['delta_usd'] or 0.0)} more."
            if r["status"] != "infeasible"
            else f"{_arch(r['archetype'])}: {names.plain(str(r['note'] or '')).removeprefix('Why: ')}"
            for r in frame.iter_rows(named=True)
            if r["archetype"] != b.plan.archetype
        ),
    )
    return Section(
        "alternatives",
        title,
        lead.strip(),
        chart="compare",
        table=table,
        notes=notes,
        topic="Alternatives",
    )


def _verdict_flips(b: Bundle) -> pl.DataFrame:
    """The verdict's flips that were found (``Recommendation.flips``), nearest first."""
    flips = getattr(b.recommendation, "flips", None)
    if not isinstance(flips, pl.DataFrame) or not {"input", "change_pct"} <= set(flips.columns):
        return pl.DataFrame()
    if "found" in flips.columns:
        flips = flips.filter(pl.col("found"))
    return flips.filter(pl.col("change_pct").is_finite()).sort(
        [pl.col("change_pct").abs(), pl.col("input")]
    )


def _change_words(r: Mapping[str, Any], names: Names) -> str:
    """A verdict's flip as words: ``an 11% rise in distributed training demand``."""
    change = float(r["change_pct"])
    words = _input_words(str(r["input"]), names, start=False)
    # As the verdict says it: never below the solved flip (a half-even "2%" for +2.5% was not one).
    return article(f"{change_pct_words(abs(change))} {'rise' if change > 0 else 'fall'} in {words}")


def _risks(b: Bundle) -> Section:
    plan = b.plan
    names = _names(b)
    bullets: list[str] = []
    tight = ""
    flips = _break_even_rows(b)
    # The verdict's flips are searched finely near today's values: one it found is never
    # contradicted by a coarser search that found none (the nearest flip leads either way).
    verdict_flips = _verdict_flips(b)
    nearest_flip = ""
    if verdict_flips.height:
        r = verdict_flips.row(0, named=True)
        nearest_flip = _change_words(r, names)
        then = (
            f"makes {_arch_within(r['flips_to'])} the cheapest"
            if r["flips_to"]
            else "leaves no architecture that meets every requirement"
        )
        distance = abs(float(r["change_pct"]))
        if not flips.height or distance <= float(flips["_distance"][0]):
            bullets.append(f"{_cap(nearest_flip)} {then}.")
        else:
            nearest_flip = ""
    for r in flips.head(3).iter_rows(named=True):
        bullets.append(_flip_sentence(r, names))
    if verdict_flips.height and not nearest_flip:
        r = verdict_flips.row(0, named=True)
        bullets.append(f"{_cap(_change_words(r, names))} also flips it.")
    near = _nearest(b)
    if near is not None and not flips.height:
        arch, delta, share = near
        bullets.append(
            f"{_arch(arch)} becomes the answer if this plan's costs rise, or its own fall, by "
            f"{usd(delta)} a month ({pct(share, 1)} of the total)."
        )
    if plan.feasible and plan.service_levels.height:
        sl = plan.service_levels.filter(pl.col("target") > 0).with_columns(
            (pl.col("predicted") / pl.col("target")).alias("ratio")
        )
        if sl.height:
            r = sl.sort(["ratio", "workload"], descending=[True, False]).row(0, named=True)
            words, unit = METRIC_WORDS.get(r["metric"], (r["metric"].replace("_", " "), ""))
            tight = (
                f"{names.workload(r['workload'])} {words}, at {level(r['predicted'])} of "
                f"{level(r['target'])} {unit}".rstrip()
            )
            bullets.append(
                f"Tightest service level: {names.workload(r['workload'])} {words} at "
                f"{level(r['predicted'])} of {level(r['target'])} {unit}".rstrip()
                + " predicted; demand above plan eats this headroom first."
            )
    if near is None and b.alternatives is not None and plan.feasible:
        failing = b.alternatives.filter(
            (pl.col("status") == "infeasible") & (pl.col("archetype") != plan.archetype)
        )
        for r in failing.head(2).iter_rows(named=True):
            bullets.append(
                f"{_arch(r['archetype'])} cannot meet every requirement: "
                + _uncap(
                    re.split(r";|\. Fix:", names.plain(str(r["note"] or "")).removeprefix("Why: "))[
                        0
                    ]
                ).rstrip(".")
                + "."
            )
    if (
        b.analyses
        and not flips.height
        and not verdict_flips.height
        and any(is_break_evens(f) for f in b.analyses.values())
    ):
        bullets.append(
            "No input searched, from a quarter to four times today's value, changes the answer."
        )
    for h_skill, n in _hires(plan):
        bullets.append(
            f"Hiring: the plan needs {'one' if n == 1 else n} new {skill(h_skill)} "
            f"engineer{'s' if n > 1 else ''}; until then the team runs short."
        )
    if not plan.feasible:
        bullets += [names.plain(s) for s in plan.relaxations["sentence"].to_list()[:3]]
    if nearest_flip:
        title = f"The answer flips with {nearest_flip}"
    elif flips.height:
        r = flips.row(0, named=True)
        title = (
            f"The answer flips only at {_uncap(names.plain(r['label']))} of "
            f"{_input_value(r['changed_value'], r['unit'], r['base_value'])}"
        )
    elif near is not None:
        title = f"The answer holds unless costs shift by {usd(near[1])} a month"
    elif tight:
        title = f"The tightest spot is {tight}"
    else:
        title = "Risks and what would change the answer"
    notes = _talk(
        "These are the few inputs that would change the recommendation, nearest first.",
        "Binding constraints are where the answer is tight; slack ones can move freely.",
        ""
        if b.analyses
        else "Break-even points were not computed for this deck; they take about a minute.",
    )
    return Section(
        "risks",
        title,
        bullets=tuple(bullets[:5]) or ("No input within the range searched changes the answer.",),
        notes=notes,
        topic="Risks and what would change the answer",
    )


def _input_words(key: str, names: Names, start: bool = True) -> str:
    """An analysed input's key in words: ``demand:fine_tuning`` → "Fine-tuning demand".

    ``start`` False gives the words as they read inside a sentence ("fine-tuning demand").
    """
    head, _, tail = key.partition(":")
    if head == "demand":
        words = f"{KIND_WORDS.get(tail, names.workload(tail))} demand"
    elif head == "gpu_price":
        words = f"{tail} GPU prices" if tail else "GPU prices"
    elif head == "staff_cost":
        words = f"loaded cost of {skill(tail)} staff"
    elif head == "fte":
        words = f"{skill(tail)} staff"
    elif head == "slo":
        words = f"{names.workload(tail)} service target"
    else:
        words = names.plain(display(key))
    return _cap(words) if start else words


def _flips_table(flips: Any, names: Names) -> Table | None:
    """The recommendation's flips that were found, nearest first, as a table.

    Columns: the input, which way, the change that flips the answer (``change_pct`` is a
    fraction of today's value) and what wins then. None when nothing flips within the range
    searched (the verdict's sentence says so).
    """
    if not isinstance(flips, pl.DataFrame) or not {"input", "change_pct"} <= set(flips.columns):
        return None
    if "found" in flips.columns:
        flips = flips.filter(pl.col("found"))
    flips = flips.filter(pl.col("change_pct").is_finite()).head(8)
    if flips.height == 0:
        return None
    rows = tuple(
        (
            _input_words(str(r["input"]), names),
            str(r.get("direction") or "–"),
            ("+" if r["change_pct"] > 0 else "-") + change_pct_words(abs(r["change_pct"])),
            _arch(r.get("flips_to")) if r.get("flips_to") else "no feasible plan",
        )
        for r in flips.iter_rows(named=True)
    )
    return Table(
        ("Input", "Direction", "Change that flips it", "Then best"),
        rows,
        (False, False, True, False),
    )


def _win_rate_words(rec: Any) -> str:
    """How often each architecture was the cheapest over the sampled futures, most often first.

    `` Over 20 sampled futures, the cheapest was X in 65% and Y in 35%.``; "" without samples.
    """
    robust = getattr(rec, "robust", None)
    samples = int(getattr(rec, "samples", 0) or 0)
    if not samples or not isinstance(robust, pl.DataFrame) or robust.height == 0:
        return ""
    rows = robust.filter(pl.col("win_rate") > 0).sort(
        ["win_rate", "archetype"], descending=[True, False]
    )
    parts = [
        f"{_arch_within(a)} in {pct(w)}"
        for a, w in rows.select("archetype", "win_rate").iter_rows()
    ]
    if not parts:
        return ""
    listed = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
    return f" Over {samples} sampled futures, the cheapest was {listed}."


def _how_sure(b: Bundle) -> Section | None:
    rec = b.recommendation
    if rec is None:
        return None
    names = _names(b)
    sentence, word = _margin_words(b)
    table = _flips_table(getattr(rec, "flips", None), names)
    margin = number(getattr(rec, "margin_usd", None))
    margin_pct = number(getattr(rec, "margin_pct", None))
    runner = getattr(rec, "runner_up", None)
    lead = sentence
    if runner and margin is not None:
        lead = (
            f"Runner-up: {_arch(runner)}, {usd(margin)}"
            + (f" ({pct(margin_pct, 1)})" if margin_pct is not None else "")
            + " a month dearer."
        )
    lead += _win_rate_words(rec)
    # The caveats on the plan's cost (the plan on fewer clusters, whole nodes, one company, idle
    # GPUs training could use), which the summary says this slide adds, as bullets: under the
    # flips' table, else after the verdict's sentence and what would settle a close call (the
    # pilot's first step).
    settle = names.plain(str(getattr(rec, "settle", "") or ""))
    verdict = _verdict_bullets(rec, names)
    return Section(
        "how-sure",
        f"How sure: {word.lower() if word else 'see the margin'}"
        + (f" — {_arch_within(runner)} is the runner-up" if runner else ""),
        lead,
        table=table,
        bullets=verdict[1:] if table is not None else tuple(x for x in (*verdict, settle) if x),
        topic="How sure is this",
        notes=_talk(
            sentence,
            "Each row is the smallest change in one input that would make another "
            "architecture the cheapest."
            if table is not None
            else "No single input, moved within the range searched, changes the answer.",
        ),
    )


def _verdict_bullets(rec: Any, names: Names) -> tuple[str, ...]:
    """The verdict's sentence as bullets: the verdict, then each caveat it ends with.

    The caveats qualify the plan's cost (``Recommendation.caveats``: one cluster fewer, whole
    nodes, one company, idle GPUs training could use); the one on fewer clusters is said in
    full (which clusters, what moves: ``fewer_words``), once. An object without caveats gives
    its sentence and ``fewer_words``.
    """
    sentence, caveats = split_closing(
        str(getattr(rec, "sentence", "") or ""), [str(c) for c in getattr(rec, "caveats", ()) or ()]
    )
    fewer = str(getattr(rec, "fewer_words", "") or "")
    # The caveat's short form and fewer_words open alike: "With two clusters instead of three".
    short = fewer.split(" (", 1)[0] + ","
    items = [fewer if fewer and c.startswith(short) else c for c in caveats]
    if fewer and fewer not in items:
        items.insert(0, fewer)
    return tuple(names.plain(x) for x in (sentence, *items) if x)


def _service(b: Bundle) -> Section:
    frame = b.plan.service_levels
    names = _names(b)
    rows = []
    parts = frame.group_by(["workload", "metric"]).len() if frame.height else frame
    in_parts = set(parts.filter(pl.col("len") > 1)["workload"].to_list()) if frame.height else set()
    for r in frame.iter_rows(named=True):
        words, unit = METRIC_WORDS.get(r["metric"], (r["metric"].replace("_", " "), ""))
        rows.append(
            (
                # A workload split across GPU types has a row per part: each says its GPU.
                names.workload(r["workload"])
                + (f" ({r['gpu_type']})" if r["workload"] in in_parts else ""),
                f"{words} ({unit})" if unit else words,
                level(r["predicted"]) if finite(r["predicted"]) else "–",
                level(r["target"]) if finite(r["target"]) else "–",
                "met" if r["met"] else "missed",
            )
        )
    table = Table(
        ("Workload", "Measure", "Predicted", "Target", "Status"),
        tuple(rows),
        (False, False, True, True, False),
    )
    n = frame.select(["workload", "metric"]).unique().height if frame.height else 0
    missed = (
        frame.filter(~pl.col("met")).select(["workload", "metric"]).unique().height
        if frame.height
        else 0
    )
    if n == 0:
        title = "The plan predicts no service levels for this scenario"
    elif missed == 0:
        title = {1: "The one service target is met", 2: "Both service targets are met"}.get(
            n, f"All {n} service targets are met"
        )
    else:
        title = f"{missed} of {n} service targets are missed"
    split = n < frame.height
    lead = (
        "The chart shows a workload split across GPU types by its worst part; the table lists "
        "each part."
        if split
        else ""
    )
    notes = _talk(
        "Latency comes from a queueing model (Erlang C) at each hour's request rate with the "
        "replicas the plan provides; waits of training and batch work come from the same kind "
        "of model for the GPUs each cluster gives them.",
    )
    return Section(
        "service",
        title,
        lead,
        chart="service_levels" if frame.height else None,
        table=table,
        notes=notes,
        topic="Service levels",
    )


def _staffing(b: Bundle) -> Section:
    plan = b.plan
    shown = plan.staffing.filter(
        (pl.col("required_fte") > 0)
        | (pl.col("available_fte") > 0)
        | (pl.col("hires") > 0)
        | (pl.col("retrained_in") > 0)
    )
    rows = tuple(
        (
            skill(r["skill"]),
            fte(r["available_fte"]),
            fte(r["required_fte"]),
            str(r["hires"]),
            str(r["retrained_in"]),
            fte(r["idle_fte"]),
        )
        for r in shown.iter_rows(named=True)
    )
    table = Table(
        ("Team", "Have (FTE)", "Need (FTE)", "Hires", "Retrained in", "Spare (FTE)"),
        rows,
        (False, True, True, True, True, True),
    )
    title = f"{_cap(_staff_words(plan))} run it, with {_hire_words(plan)}"
    notes = _talk(
        "Need is the effort the clusters take: a base team per cluster, more per 100 nodes, "
        "and add-on and integration work, from the staffing catalog.",
        "Spare staff are reported, not charged: they can be redeployed.",
    )
    return Section("staffing", title, chart="staffing", table=table, notes=notes, topic="Staffing")


_TRANSITION_COLUMNS: Final = (
    "workload",
    "today",
    "planned",
    "action",
    "users",
    "retool",
    "one_time_usd",
    "monthly_usd",
)
"""The columns of ``Plan.transition`` the today slide reads."""
MOVING: Final = ("move", "relocate")
"""``Plan.transition`` actions that move a workload: to another platform, or another cluster."""


def _transition_table(
    transition: pl.DataFrame, names: Names, builds: bool = True
) -> tuple[Table, str]:
    """The plan's transition as a table in plain words and money, and its takeaway.

    One row per workload: where it runs today and in the plan, whether it moves, its users,
    whether they change tools, and the move's one-time and amortized monthly cost. The takeaway
    says which workloads move and what moving them costs (or that none moves); new work starts
    on "the new clusters" only if the plan ``builds`` one, else on "the clusters of today".
    """
    rows = []
    for r in transition.iter_rows(named=True):
        move = r["action"] in MOVING
        today = PLATFORM_LABELS.get(r["today"], display(str(r["today"]))) if r["today"] else "–"
        planned = PLATFORM_LABELS.get(r["planned"], display(str(r["planned"])))
        if r.get("today_cluster"):  # named today: which cluster, then and in the plan
            today += f", {names.pool(r['today_cluster'])}"
            clusters = {
                names.pool(c) if c in names.today else "a new cluster"
                for c in str(r.get("planned_clusters") or "").split(", ")
                if c
            }
            planned += f", {_listing(sorted(clusters))}" if clusters else ""
        rows.append(
            (
                names.workload(r["workload"]),
                today,
                planned,
                {"move": "Moves", "relocate": "Changes cluster", "new": "New"}.get(
                    r["action"], "Stays"
                ),
                f"{r['users']:,}" if r["users"] is not None else "–",
                "yes" if r["retool"] else "no",
                usd(r["one_time_usd"]) if move else "–",
                usd(r["monthly_usd"]) if move else "–",
            )
        )
    columns = (
        "Workload",
        "Runs today on",
        "Planned on",
        "Change",
        "Users",
        "Users change tools",
        "Move, once",
        "Move, a month",
    )
    numeric = (False, False, False, False, True, False, True, True)
    # A column with nothing in it (no move, no user counted) is left out, not printed as dashes.
    keep = [j for j in range(len(columns)) if j in (0, 2, 3) or any(row[j] != "–" for row in rows)]
    table = Table(
        tuple(columns[j] for j in keep),
        tuple(tuple(row[j] for j in keep) for row in rows),
        tuple(numeric[j] for j in keep),
    )
    moved = transition.filter(pl.col("action").is_in(MOVING))
    new = transition.filter(pl.col("action") == "new").height
    if moved.height == 0 and new == transition.height:
        return table, "Nothing runs today: every workload starts on the new clusters"
    if moved.height == 0 and new:
        where = "the new clusters" if builds else "the clusters of today"
        return table, (
            f"Nothing moves: {_plural(new, 'new workload')} start{'s' if new == 1 else ''} on "
            f"{where}, the rest stay where they run"
        )
    if moved.height == 0:
        return table, "Every workload stays on the platform it runs on today"
    once = float(moved["one_time_usd"].sum())
    if moved.height == 1:
        r = moved.row(0, named=True)
        to = (
            "another cluster"
            if r["action"] == "relocate"
            else PLATFORM_LABELS.get(r["planned"], display(str(r["planned"])))
        )
        what = f"One workload moves, {names.workload(r['workload'])} to {to}"
    else:
        what = f"{moved.height} workloads move"
    rest = ", the rest stay where they run" if moved.height < transition.height else ""
    return table, f"{what}: {usd(once)} once{rest}"


def _marked(plan: Plan, names: Names, marks: tuple[str, ...]) -> list[str]:
    """The plan's sentences that say one of ``marks`` (``explain``'s ``*_MARKS``), in plain words.

    The nodes clusters of today add (``ADDED_NODE_MARKS``), the clusters of today the plan leaves
    partly or wholly unused (``SPARE_NODE_MARKS``), a pool bought from several clouds
    (``SELLER_MARKS``), what whole-node jobs add to a pool's rented hours (``WHOLE_NODE_MARKS``).
    """
    return [names.plain(s) for s in plan.explanations if any(m in s for m in marks)]


def _today(b: Bundle) -> Section | None:
    """Today against the proposal, and the transition, when the plan carries them."""
    plan = b.plan
    current = _current_usd(plan)
    transition = getattr(plan, "transition", None)
    if current is None and not (isinstance(transition, pl.DataFrame) and transition.height):
        return None
    bullets = []
    if current is not None:
        diff = plan.total_monthly_usd - current
        bullets.append(
            f"Today: {usd(current)} a month; proposed: {usd(plan.total_monthly_usd)} "
            f"({'+' if diff >= 0 else '-'}{usd(abs(diff))} a month)."
        )
    names = _names(b)
    bullets += _marked(plan, names, ADDED_NODE_MARKS) + _marked(plan, names, SPARE_NODE_MARKS)
    upfront = _upfront_usd(plan)
    if upfront:
        bullets.append(f"Up front: {usd(upfront)} for the nodes we buy, before the first month.")
    table: Table | None = None
    moves = ""
    any_move = False
    if isinstance(transition, pl.DataFrame) and transition.height:
        any_move = "action" in transition.columns and bool(transition["action"].is_in(MOVING).any())
        if set(_TRANSITION_COLUMNS) <= set(transition.columns):
            builds = "existing" not in plan.pools.columns or not plan.pools["existing"].all()
            table, moves = _transition_table(transition, names, builds)
        else:  # a transition in another shape: shown as it is
            table = table_of(transition)
    if current is not None:
        diff = plan.total_monthly_usd - current
        title = (
            f"The proposal saves {usd(-diff)} a month against today"
            if diff < 0
            else f"The proposal costs {usd(diff)} a month more than today"
        )
    else:
        title = moves or "Today against the proposal, and the way there"
    return Section(
        "today",
        title,
        # Beside a table the facts are the lead (a slide shows a table or bullets, not both).
        " ".join(bullets) if table is not None else "",
        bullets=() if table is not None else tuple(bullets),
        table=table,
        topic="Today vs proposed",
        notes=_talk(
            "Compare like with like: both figures include staff and GPUs."
            if current is not None
            else "",
            "A move's cost is the migration work and, where its users change tools, their "
            "time to retool; both are in the plan's monthly cost, spread over the horizon."
            if any_move
            else "Nothing moves, so the change costs no migration work.",
        ),
    )


def _pilot(b: Bundle) -> list[Section]:
    frame = pilot_plan(b.plan, b.scenario)
    work = frame.head(4)
    ops = frame.slice(4)
    work_table = Table(
        ("Test", "Workload and where", "What to run", "What to measure"),
        tuple(
            (
                r["test"],
                (
                    f"Stand-in on the {r['where']}"
                    if r["workload"].startswith("none")
                    else f"{r['workload']} on the {r['where']}"
                )
                if r["where"] != "–"
                else r["workload"],
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
    real = work.filter(~pl.col("workload").str.starts_with("none")).height
    stand_ins = work.height - real
    proves = f"{number_words(real)} real workload{'s' if real != 1 else ''}" + (
        f" and {number_words(stand_ins)} stand-in{'s' if stand_ins != 1 else ''}"
        if stand_ins
        else ""
    )
    return [
        Section(
            "pilot-workloads",
            f"Pilot: prove {proves} on the proposed clusters in {PILOT_WEEKS} weeks",
            "One of each kind, on the clusters the plan puts them on, before we standardize.",
            table=work_table,
            topic="Pilot plan: workloads",
            notes=_talk(
                _PILOT_WHY, *(f"{r['test']}: {r['why']}" for r in work.iter_rows(named=True))
            ),
        ),
        Section(
            "pilot-operations",
            "Pilot: break things on purpose and check the bill",
            "On the same clusters, with the pilot workloads running.",
            table=ops_table,
            topic="Pilot plan: operations",
            notes=_talk(
                "Operations are where designs differ most in practice.",
                *(f"{r['test']}: {r['why']}" for r in ops.iter_rows(named=True)),
            ),
        ),
    ]


def _decision(b: Bundle) -> Section:
    plan = b.plan
    rows: list[tuple[str, str]] = []
    if plan.feasible:
        budget = f"{usd(plan.cash_monthly_usd)} a month in cash"
        upfront = _upfront_usd(plan)
        if upfront:
            budget += f" and {usd(upfront)} up front"
        rows.append(("Budget", f"{budget}.{_effort_words(plan)}"))
        rows.append(
            (
                "People",
                f"{_cap(_hire_words(plan))}; {_staff_words(plan)} in total.",
            )
        )
        rows.append(
            (
                "Pilot",
                f"{PILOT_WEEKS} weeks from approval, with an owner named today from the "
                "platform team; the tests on the two pilot slides decide go or no-go.",
            )
        )
        rows.append(
            (
                "Then",
                f"Review the pilot's measurements in week {PILOT_WEEKS + 1} and commit the "
                "capacity, or re-run this analysis with what the pilot measured.",
            )
        )
        title = (
            f"Decision: approve {usd(plan.cash_monthly_usd)} a month and a {PILOT_WEEKS}-week pilot"
        )
    else:
        title = "Decision: choose which requirement to relax"
        fixes = [_names(b).plain(s) for s in plan.relaxations["sentence"].to_list()[:3]]
        for i, fix in enumerate(fixes, start=1):
            rows.append((f"Option {i}", fix))
        rows.append(("Then", "Re-run this analysis with the chosen change."))
    return Section(
        "decision",
        title,
        rows=tuple(rows),
        topic="The decision we ask for",
        notes=_talk("Close on the ask: budget, people, and the pilot's owner and dates."),
    )


# -- the appendix ------------------------------------------------------------------------------


def _placements(b: Bundle) -> Section:
    plan = b.plan
    names = _names(b)
    frame = plan.placements.sort(["gpus", "workload"], descending=[True, False])
    rows = tuple(
        (
            names.workload(r["workload"]),
            KIND_WORDS.get(r["kind"], r["kind"]),
            names.pool(r["pool"]),
            r["gpu_type"],
            pct(r["share"]),
            gpus(r["gpus"]),
            gpu_hours(r["gpu_hours_per_month"]),
        )
        for r in frame.iter_rows(named=True)
    )
    table = Table(
        ("Workload", "Kind", "Cluster", "GPU", "Share", "Peak GPUs", "GPU-hours a month"),
        rows,
        (False, False, False, False, True, True, True),
    )
    pieces = frame.group_by("workload").agg(
        pl.col("pool").n_unique().alias("pools"), pl.len().alias("parts")
    )
    across_pools = pieces.filter(pl.col("pools") > 1).height
    across_types = pieces.filter((pl.col("pools") == 1) & (pl.col("parts") > 1)).height
    lead = f"Every workload is placed in full: {_plural(pieces.height, 'workload')}"
    splits = []
    if across_pools:
        splits.append(f"{across_pools} split across clusters")
    if across_types:
        splits.append(f"{across_types} split across GPU types")
    lead += (", " + " and ".join(splits) + ".") if splits else ", none split."
    reserved = int(plan.pools["gpus"].sum())
    peak = float(frame["gpus"].sum())
    notes = [
        "Peak GPUs add up each workload's busiest hour; the workloads peak at different "
        f"hours, so the {gpus(reserved)} reserved GPUs cover them"
        + (
            ", with on-demand GPUs rented for the hours that go over."
            if float(plan.pools["burst_gpu_hours"].sum()) >= 1
            else "."
        )
        if peak > reserved + 0.5
        else "Peak GPUs are each workload's busiest hour, with headroom for its service target."
    ]
    return Section(
        "placements",
        "Appendix: where each workload runs",
        lead,
        chart="placements",
        chart_in_deck=False,
        table=table,
        notes=_talk(*notes),
        topic="Placements",
        appendix=True,
    )


LEVERS_SHOWN: Final = 10
"""The most levers a slide lists (the table and its chart show the same ones)."""


def levers_shown(frame: pl.DataFrame) -> pl.DataFrame:
    """The levers a slide shows, its table and chart alike, in the analysis's order.

    Those that save or cost at least $1 a month or change the architecture, at most
    :data:`LEVERS_SHOWN`.
    """
    return _lever_moves(frame).head(LEVERS_SHOWN)


def _lever_moves(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(
        (pl.col("value_usd_per_month").fill_nan(0.0).abs() >= 1.0)
        | pl.col("lever_archetype").ne_missing(pl.col("base_archetype"))
    )


def _levers_section(key: str, name: str, frame: pl.DataFrame, names: Names) -> Section:
    """Lever values (``cluster_decide.analysis.lever_values``): what each change is worth."""
    moves = levers_shown(frame)
    rows = tuple(
        (
            _cap(names.plain(r["change"])),
            "–" if math.isnan(r["value_usd_per_month"]) else usd(r["value_usd_per_month"]),
            "same" if r["lever_archetype"] == r["base_archetype"] else _arch(r["lever_archetype"]),
        )
        for r in moves.iter_rows(named=True)
    )
    table = Table(("Lever", "Worth a month", "Best design after"), rows, (False, True, False))
    if rows:
        top = moves.row(0, named=True)
        title = (
            f"Appendix: {names.plain(top['change'])} is the most valuable lever, "
            f"{usd(top['value_usd_per_month'])} a month"
        )
    else:
        title = "Appendix: no lever changes the plan's cost"
    worth = _lever_moves(frame).height
    idle = frame.height - worth
    lead = (
        f"{_plural(idle, 'other lever')} {'is' if idle == 1 else 'are'} worth nothing."
        if idle
        else ""
    )
    if worth > moves.height:
        lead += f" The {moves.height} most valuable of the {worth} that are worth something:"
    return Section(
        key,
        title,
        lead,
        chart="levers",
        chart_in_deck=False,  # the table says it all; beside it the bars print too small
        table=table,
        notes=_talk(
            "Each lever is one change, solved again; its worth is the monthly saving.",
            "Use it to decide what to negotiate first.",
        ),
        topic=f"Levers ({name})",
        appendix=True,
    )


def _break_evens_section(key: str, name: str, frame: pl.DataFrame, names: Names) -> Section:
    """Break-evens (``cluster_decide.analysis.break_evens``): where the answer changes."""
    found = frame.filter(pl.col("found"))
    rows = tuple(
        (
            _cap(names.plain(r["label"])),
            _input_value(r["base_value"], r["unit"], r["base_value"]),
            _input_value(r["same_value"], r["unit"], r["base_value"]),
            _input_value(r["changed_value"], r["unit"], r["base_value"]),
            _arch(r["changed_archetype"]),
        )
        for r in found.iter_rows(named=True)
    )
    table = Table(
        ("Input", "Today", "Same answer until", "Changes at", "Then best"),
        rows,
        (False, True, True, True, False),
    )
    flipped = set(found["label"].to_list())
    steady = [
        names.plain(x)
        for x in frame["label"].unique(maintain_order=True).to_list()
        if x not in flipped
    ]
    title = (
        f"Appendix: {_plural(len(flipped), 'input')} of {frame['label'].n_unique()} change the "
        "answer within the range searched"
    )
    lead = (
        f"It holds across the range for {', '.join(steady[:4])}"
        + (" and more" if len(steady) > 4 else "")
        + "."
        if steady
        else ""
    )
    return Section(
        key,
        title,
        lead,
        chart="break_evens",
        chart_in_deck=False,
        table=table,
        notes=_talk(
            "Each input was moved on its own, up and down, until another architecture became "
            "the cheapest; the range searched is a quarter to four times today's value."
        ),
        topic=f"Break-even points ({name})",
        appendix=True,
    )


def _analyses(b: Bundle) -> list[Section]:
    names = _names(b)
    out = []
    for name, frame in b.analyses.items():
        key = f"analysis-{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}"
        if is_levers(frame):
            out.append(_levers_section(key, name, frame, names))
        elif is_break_evens(frame) and frame["found"].any():
            out.append(_break_evens_section(key, name, frame, names))
        elif is_break_evens(frame):
            continue  # nothing flips: the risks slide says so in one line
        elif frame.height:
            out.append(
                Section(
                    key,
                    f"Appendix: {name}",
                    table=table_of(frame.head(12)),
                    notes=_talk(f"{_cap(name)}, computed for this scenario."),
                    topic=_cap(name),
                    appendix=True,
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


def _assumptions(b: Bundle) -> Section | None:
    frame = key_assumptions(b.plan, b.scenario)
    if frame.height == 0:
        return None
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
    return Section(
        "assumptions",
        f"Appendix: {guessed} of the {frame.height} key figures are our estimates; check them "
        "first",
        "Values as the model used them; the scenario's own where it overrides the catalog.",
        table=table,
        notes=_talk(
            "Estimates are marked as assumptions; each has its reasoning in the data sources "
            "document that ships with the tool.",
        ),
        topic="Key assumptions and sources",
        appendix=True,
    )


def _glossary(story: list[Section]) -> Section | None:
    """The glossary terms the story uses, each glossed (the last appendix slide)."""
    text = " ".join(
        " ".join(
            [s.title, s.lead, *s.bullets, *(v for _, v in s.rows)]
            + [c for row in (s.table.rows if s.table else ()) for c in row]
        )
        for s in story
    ).lower()
    used = [(t, g) for t, g in GLOSSARY.items() if t.lower() in text]
    if not used:
        return None
    return Section(
        "glossary",
        "Appendix: the few technical terms this deck uses",
        table=Table(("Term", "Meaning"), tuple((t, _cap(g)) for t, g in used), (False, False)),
        notes=_talk("Terms of art kept because the pilot and the teams use them."),
        topic="Glossary",
        appendix=True,
    )


def _unique_notes(story: list[Section]) -> list[Section]:
    """Each talking point said once: a point already on an earlier slide is dropped."""
    seen: set[str] = set()
    out = []
    for sec in story:
        notes = tuple(n for n in sec.notes if n and n not in seen)
        seen.update(notes)
        out.append(replace(sec, notes=notes))
    return out


def sections(bundle: Bundle) -> list[Section]:
    """The story in order, one section per slide, then the appendix.

    Executive summary; why this design; what would be built; cost; alternatives; risks and what would change the
    answer; how sure (with a recommendation); service levels; staffing; today against the
    proposal (when the plan carries it); the pilot; the decision asked for. Appendix:
    placements, each analysis, key assumptions and sources, glossary.
    """
    plan = bundle.plan
    story: list[Section | None] = [_summary(bundle), _recommendation(bundle)]
    if plan.feasible:
        story += [
            _architecture(bundle),
            _costs(bundle),
            _alternatives(bundle),
            _risks(bundle),
            _how_sure(bundle),
        ]
        story += [_service(bundle), _staffing(bundle), _today(bundle), *_pilot(bundle)]
        story += [_decision(bundle), _placements(bundle), *_analyses(bundle)]
        story.append(_assumptions(bundle))
    else:
        story += [_alternatives(bundle), _how_sure(bundle), _decision(bundle)]
        story += _analyses(bundle)
    present = [s for s in story if s is not None]
    glossary = _glossary(present)
    if glossary is not None:
        present.append(glossary)
    return _unique_notes(present)
