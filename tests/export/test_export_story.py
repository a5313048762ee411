"""The story's shape: action titles, the summary and the ask, an appendix, plain words, and the
optional inputs other parts of the tool add (a verdict, an up-front outlay, today's estate)."""

from __future__ import annotations

import dataclasses
import io
import math
import re
from dataclasses import dataclass, replace

import polars as pl
import pytest
from builders import service, small_scenario, training
from deck_expectations import mid_sentence, runner_up
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE

import cluster_decide as cd
from cluster_decide.analysis.flips import FLIPS_SCHEMA
from cluster_decide.base.tomlread import tomllib
from cluster_decide.base.vocabulary import PLATFORM_LABELS, SKILL_LABELS
from cluster_decide.export import Bundle, build_deck, gather, report_html, sections
from cluster_decide.export.words import NOTE_WORDS, Names
from cluster_decide.inputs.scenario import preset_path
from cluster_decide.planning.explain import money


@dataclass(frozen=True)
class _Verdict:
    """A stand-in for ``cd.recommend``'s result: only the attributes the exports read."""

    verdict: str = "close"
    sentence: str = (
        "A close call: hybrid_separate beats kubernetes_batch by 1.9%, and llm-pretraining "
        "demand 12% higher would flip it."
    )
    runner_up: str = "kubernetes_batch"
    margin_usd: float = 23_500.0
    margin_pct: float = 0.019
    """A fraction, as ``Recommendation.margin_pct`` is (0.019 is 1.9%)."""
    flips: pl.DataFrame = dataclasses.field(default_factory=lambda: _flips())
    fewer_words: str = ""
    """What the plan on fewer clusters costs and moves ("" when there is none)."""
    single_words: str = ""
    """Which clusters span clouds and what one company would cost ("" when none does)."""
    caveats: tuple[str, ...] = ()
    """The sentences ``sentence`` ends with that qualify the plan's cost."""


def _flips() -> pl.DataFrame:
    """Flips in ``Recommendation.flips``'s own columns: two found, one searched in vain."""
    rows = [
        ("demand:distributed_training", "up", True, 0.12, 1.0, 1.10, 1.12, "kubernetes_batch"),
        ("gpu_price", "down", True, -0.45, 1.0, 0.60, 0.55, "kubernetes_batch"),
        ("fte:hpc", "down", False, math.nan, 2.0, 1.0, math.nan, None),
    ]
    return pl.DataFrame(
        [
            {
                "input": key,
                "label": key,
                "unit": "x",
                "direction": way,
                "base_value": base,
                "searched_pct": 0.5,
                "found": found,
                "change_pct": change,
                "same_value": same,
                "changed_value": changed,
                "flips_to": to,
                "flips_to_monthly_usd": math.nan,
                "sentence": f"{key} {way}",
            }
            for key, way, found, change, base, same, changed, to in rows
        ],
        schema=FLIPS_SCHEMA,
    )


def _deck_text(data: bytes) -> list[tuple[str, str, str]]:
    """(title, body text, notes) per slide."""
    out = []
    for slide in Presentation(io.BytesIO(data)).slides:
        title = slide.shapes.title.text_frame.text if slide.shapes.title is not None else ""
        body = []
        for shape in slide.shapes:
            if shape.has_text_frame:
                body.append(shape.text_frame.text)
            if shape.has_table:
                body += [c.text for row in shape.table.rows for c in row.cells]
        notes = slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else ""
        out.append((title, "\n".join(body), notes))
    return out


def test_a_recommendation_is_stated_and_gets_its_own_slide(bundle: Bundle) -> None:
    with_verdict = dataclasses.replace(bundle, recommendation=_Verdict())
    slides = _deck_text(build_deck(with_verdict))
    title_slide = slides[0][1]
    assert "A close call: Separate Slurm and Kubernetes beats Kubernetes + batch add-on" in (
        title_slide
    )
    summary = slides[1][1]
    assert "How sure" in summary and "LLM pre-training demand 12% higher" in summary
    sure = [s for s in slides if s[0].startswith("How sure: a close call")]
    assert len(sure) == 1
    assert "Runner-up: Kubernetes + batch add-on, $24k (1.9%) a month dearer." in sure[0][1]
    assert "+12%" in sure[0][1] and "Distributed training demand" in sure[0][1]
    assert "-45%" in sure[0][1] and "HPC (Slurm) staff" not in sure[0][1]  # found flips only
    table = next(sec.table for sec in sections(with_verdict) if sec.key == "how-sure")
    assert table is not None
    assert table.columns == ("Input", "Direction", "Change that flips it", "Then best")
    assert [r[2] for r in table.rows] == ["+12%", "-45%"]
    assert not re.search(r"\b(nan|False|True)\b", sure[0][1] + sure[0][2])
    page = report_html(with_verdict)
    assert "How sure: a close call" in page and "hybrid_separate" not in page
    # Without one, no such slide: the margin comes from the alternatives instead.
    plain = _deck_text(build_deck(bundle))
    assert not any(t.startswith("How sure") for t, _b, _n in plain)
    runner = runner_up(bundle)
    if runner is not None:
        assert f"the runner-up, {mid_sentence(runner['archetype'])}, costs" in plain[1][1]


def test_a_verdict_where_nothing_flips_says_so_without_an_empty_table(bundle: Bundle) -> None:
    steady = _Verdict(flips=_flips().filter(~pl.col("found")))
    sure = next(s for s in sections(replace(bundle, recommendation=steady)) if s.key == "how-sure")
    assert sure.table is None
    assert sure.bullets == (Names.of(bundle.plan, bundle.scenario).plain(steady.sentence),)
    assert "Each row" not in " ".join(sure.notes)
    assert "No single input" in " ".join(sure.notes)


def test_the_plan_on_fewer_clusters_follows_the_verdict_on_the_how_sure_slide(
    bundle: Bundle,
) -> None:
    """A bullet after the verdict's sentence; beside a flips' table, a bullet under it."""
    words = "With two clusters instead of three (hpc-a and k8s-batch), the best plan costs $8.3k."
    names = Names.of(bundle.plan, bundle.scenario)
    steady = _Verdict(flips=_flips().filter(~pl.col("found")))
    fewer = replace(steady, fewer_words=words)
    sure = next(s for s in sections(replace(bundle, recommendation=fewer)) if s.key == "how-sure")
    assert sure.bullets == (names.plain(steady.sentence), names.plain(words))
    assert words not in sure.lead and names.plain(words) not in sure.lead
    flipping = replace(_Verdict(), fewer_words=words)
    sure = next(
        s for s in sections(replace(bundle, recommendation=flipping)) if s.key == "how-sure"
    )
    assert sure.table is not None and sure.bullets == (names.plain(words),)
    assert sure.lead.startswith("Runner-up: ") and names.plain(words) not in sure.lead


def test_what_one_company_costs_is_on_the_how_sure_slide_beside_a_flips_table(
    bundle: Bundle,
) -> None:
    """Without a table the executive sentence (a bullet) carries it; beside one, a bullet."""
    words = (
        "The k8s-batch cluster rents from AWS, CoreWeave and Nebius, each GPU type where it is "
        "cheapest, but a cluster does not span clouds: bought from CoreWeave alone, the best "
        "plan costs $58k (9.2%) more a month."
    )
    names = Names.of(bundle.plan, bundle.scenario)
    verdict = _Verdict()
    flipping = replace(
        verdict, sentence=f"{verdict.sentence} {words}", caveats=(words,), single_words=words
    )
    sure = next(
        s for s in sections(replace(bundle, recommendation=flipping)) if s.key == "how-sure"
    )
    assert sure.table is not None and sure.bullets == (names.plain(words),)
    # A new pool called a cluster is named as the deck names it everywhere else.
    assert sure.bullets[0].startswith("The Kubernetes + batch add-on cluster rents from AWS")
    steady = replace(_Verdict(flips=_flips().filter(~pl.col("found"))), single_words=words)
    sure = next(s for s in sections(replace(bundle, recommendation=steady)) if s.key == "how-sure")
    assert names.plain(words) not in sure.lead


def test_every_caveat_the_summary_counts_is_on_the_how_sure_slide_beside_a_flips_table(
    bundle: Bundle,
) -> None:
    """The summary says "The How sure slide adds two caveats"; beside a flips' table the slide
    gave the lead only the fewer-clusters and one-company words, so a whole-node caveat or one
    on idle GPUs was said nowhere on it. Each is a bullet under the table, on the same slide."""
    core = "Close call: separate clusters beat a shared pool by 0.1%."
    whole = "Counted in whole nodes, this plan rents up to $1.0k a month more than its cost says."
    idle = (
        "Between pre-training's runs the hpc-a pool's own H100 GPUs stand idle about 36,900 "
        "GPU-hours a month, held so that the next run starts within its wait target; "
        "fine-tuning could run in them, so a cheaper plan may exist."
    )
    rec = _Verdict(sentence=" ".join((core, whole, idle)), caveats=(whole, idle))
    names = Names.of(bundle.plan, bundle.scenario)
    with_verdict = replace(bundle, recommendation=rec)
    sure = next(s for s in sections(with_verdict) if s.key == "how-sure")
    assert sure.table is not None
    assert sure.bullets == (names.plain(whole), names.plain(idle))
    summary = dict(next(s for s in sections(with_verdict) if s.key == "summary").rows)
    assert summary["How sure"].endswith("The How sure slide adds two caveats on this cost.")
    slide = next(
        text
        for title, text, _n in _deck_text(build_deck(with_verdict))
        if title.startswith("How sure")
    )
    assert "36,900 GPU-hours a month" in slide and "Counted in whole nodes" in slide
    assert "Each row is the smallest change" in " ".join(sure.notes)


def test_caveats_too_long_to_sit_under_the_flips_table_get_a_slide_of_their_own(
    bundle: Bundle,
) -> None:
    """Where the bullets do not fit under the table they follow it on a slide of their own,
    whole: none is cut short or dropped."""
    core = "Close call: separate clusters beat a shared pool by 0.1%."
    long = tuple(
        f"Caveat {i}: "
        + " ".join(["the plan rents up to $1.0k a month more than it says"] * 10)
        + "."
        for i in range(1, 7)
    )
    rec = _Verdict(sentence=" ".join((core, *long)), caveats=long)
    slides = _deck_text(build_deck(replace(bundle, recommendation=rec)))
    titles = [title for title, _t, _n in slides]
    first = next(i for i, t in enumerate(titles) if t.startswith("How sure"))
    assert titles[first + 1] == titles[first] + " (cont.)"
    table_slide, bullets_slide = slides[first][1], slides[first + 1][1]
    assert "Caveat 1" not in table_slide
    for i in range(1, 7):
        assert f"Caveat {i}: " in bullets_slide
    assert bullets_slide.count("rents up to $1.0k a month more") == 6 * 10


def test_the_how_sure_slide_gives_the_verdict_and_each_caveat_a_bullet(bundle: Bundle) -> None:
    """The default's verdict ends with three caveats (one cluster fewer, whole nodes, one
    company): one bullet each after the verdict's own, the fewer-clusters one in full (which
    clusters, what moves), and nothing twice."""
    core = "Close call: separate clusters beat a shared pool by 0.1%."
    short = (
        "With two clusters instead of three, the best plan costs only $8.3k (1.3%) more a month."
    )
    full = (
        "With two clusters instead of three (hpc-a and k8s-batch), the best plan costs $8.3k "
        "(1.3%) more a month; research-notebooks moves from hpc-a-a100 to k8s-batch."
    )
    whole = "Counted in whole nodes, this plan rents up to $1.0k a month more than its cost says."
    one = "The k8s-batch cluster rents from AWS, CoreWeave and Nebius: from CoreWeave alone, +9.2%."
    caveats = (short, whole, one)
    rec = _Verdict(
        flips=_flips().filter(~pl.col("found")),
        sentence=" ".join((core, *caveats)),
        caveats=caveats,
        fewer_words=full,
    )
    names = Names.of(bundle.plan, bundle.scenario)
    sure = next(s for s in sections(replace(bundle, recommendation=rec)) if s.key == "how-sure")
    assert sure.bullets == tuple(names.plain(x) for x in (core, full, whole, one))
    # The fewer-clusters plan that is not close (no caveat) still follows the verdict.
    far = replace(rec, sentence=" ".join((core, whole, one)), caveats=(whole, one))
    sure = next(s for s in sections(replace(bundle, recommendation=far)) if s.key == "how-sure")
    assert sure.bullets == tuple(names.plain(x) for x in (core, full, whole, one))


def test_the_summary_and_title_give_the_verdict_and_leave_its_caveats_to_how_sure(
    bundle: Bundle,
) -> None:
    """An executive summary's row stays a few lines: the verdict, and a pointer to its caveats;
    the title slide gives the verdict alone."""
    core = "Close call: separate clusters beat a shared pool by 0.1%."
    caveats = (
        "With two clusters instead of three, the best plan costs only $8.3k (1.3%) more a month.",
        "The k8s-batch cluster rents from AWS, CoreWeave and Nebius: from CoreWeave alone, +9.2%.",
    )
    names = Names.of(bundle.plan, bundle.scenario)

    def how_sure(rec: _Verdict) -> str:
        story = {s.key: s for s in sections(replace(bundle, recommendation=rec))}
        return dict(story["summary"].rows)["How sure"]

    rec = _Verdict(sentence=" ".join((core, *caveats)), caveats=caveats)
    assert how_sure(rec) == names.plain(core) + " The How sure slide adds two caveats on this cost."
    one = replace(rec, sentence=" ".join((core, caveats[1])), caveats=caveats[1:])
    assert how_sure(one).endswith(" The How sure slide adds one caveat on this cost.")
    assert how_sure(replace(rec, sentence=core, caveats=())) == names.plain(core)
    title_slide = _deck_text(build_deck(replace(bundle, recommendation=rec)))[0][1]
    assert names.plain(core) in title_slide and "CoreWeave alone" not in title_slide


@pytest.fixture(scope="module")
def owned() -> Bundle:
    """A small on-premises estate: its nodes are bought up front, and the comparison's
    runner-up is an architecture whose label is not a product name."""
    scn = small_scenario([training(), service()], procurement={"mode": "on_prem"})
    return gather(cd.solve(scn), scn)


def test_an_up_front_purchase_is_in_the_summary_the_ask_and_the_budget(owned: Bundle) -> None:
    plan = owned.plan
    assert plan.upfront_usd > 0
    outlay = money(plan.upfront_usd)
    story = {s.key: s for s in sections(owned)}
    summary = dict(story["summary"].rows)
    assert summary["Up front"] == f"{outlay} once, before the monthly run-rate."
    assert f"and {outlay} up front" in summary["We ask"]
    assert f"and {outlay} up front" in dict(story["decision"].rows)["Budget"]


def test_a_plan_bought_by_the_hour_has_no_up_front_line(bundle: Bundle) -> None:
    assert bundle.plan.upfront_usd == 0.0
    story = {s.key: s for s in sections(bundle)}
    assert "Up front" not in dict(story["summary"].rows)
    assert "up front" not in dict(story["decision"].rows)["Budget"]
    assert "up front" not in dict(story["summary"].rows)["We ask"]


def test_an_architecture_named_inside_a_sentence_starts_in_lower_case(owned: Bundle) -> None:
    runner = runner_up(owned)
    assert runner is not None and runner["archetype"] in ("hybrid_separate", "hybrid_shared")
    name = mid_sentence(runner["archetype"])
    assert name[0].islower()
    story = {s.key: s for s in sections(owned)}
    assert story["alternatives"].title.startswith(f"The runner-up, {name}, costs ")
    assert f"the runner-up, {name}, costs" in dict(story["summary"].rows)["How sure"]
    verdict = dataclasses.replace(_Verdict(), runner_up=runner["archetype"])
    sure = next(s for s in sections(replace(owned, recommendation=verdict)) if s.key == "how-sure")
    assert sure.title.endswith(f" — {name} is the runner-up")
    for sec in sections(owned):
        for text in (sec.title, sec.lead, *sec.bullets, *(v for _, v in sec.rows)):
            # Capitalised only where a sentence (or a clause after a colon) starts.
            assert not re.search(r"(?<!^)(?<![.:!?] )\b(Separate Slurm|Shared pool)", text), text


def test_a_hire_and_two_clusters_are_worded_as_what_they_are() -> None:
    """Nobody on staff: the two clusters need hires, each worded by its own skill (an HPC
    hire once read as a Kubernetes one)."""
    scn = small_scenario(
        [training(), service()],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 0.0}},
        hiring={"allowed": True, "max_fte": 8},
    ).force_archetype("hybrid_separate")
    plan = cd.solve(scn)
    assert plan.pools["pool"].n_unique() == 2
    hired = dict(plan.staffing.filter(pl.col("hires") > 0).select("skill", "hires").rows())
    assert "hpc" in hired  # no HPC staff: the Slurm cluster needs a hire
    story = {s.key: s for s in sections(gather(plan, scn, run_compare=False))}
    title = story["architecture"].title
    assert title.startswith("Two clusters: ") and "Slurm" in title and "Kubernetes" in title
    words = {
        skill: f"{'one' if n == 1 else n} new {SKILL_LABELS[skill]} engineer{'s' if n > 1 else ''}"
        for skill, n in hired.items()
    }
    ask = dict(story["summary"].rows)["We ask"]
    assert " and ".join(words.values()) in ask
    for hire in words.values():
        assert f"Hiring: the plan needs {hire}; until then the team runs short." in (
            story["risks"].bullets
        )
    assert story["staffing"].title.endswith(f"with {' and '.join(words.values())}")
    people = dict(story["decision"].rows)["People"]
    first = next(iter(words.values()))
    assert people.startswith(f"{first[0].upper()}{first[1:]}")


def test_todays_estate_and_the_transition_show_only_when_the_plan_has_them(
    bundle: Bundle,
) -> None:
    """``current_monthly_usd`` and ``transition`` come with the current-estate work; a
    stand-in plan carries them here (redeclared, so it also works once ``cd.Plan`` has them)."""

    @dataclass(frozen=True)
    class _Richer(cd.Plan):
        current_monthly_usd: float | None = None
        transition: pl.DataFrame | None = None

    fields = {f.name: getattr(bundle.plan, f.name) for f in dataclasses.fields(cd.Plan)}
    fields |= {
        "upfront_usd": 2_400_000.0,
        "current_monthly_usd": 1_400_000.0,
        "transition": pl.DataFrame(
            {"step": ["move fine-tuning to containers"], "one_time_usd": [60000.0]}
        ),
    }
    richer = dataclasses.replace(bundle, plan=_Richer(**fields))
    story = {s.key: s for s in sections(richer)}
    summary = dict(story["summary"].rows)
    assert summary["Up front"] == "$2.40M once, before the monthly run-rate."
    assert "Today's estate costs $1.40M a month." in summary["Cost"]
    diff = 1_400_000.0 - bundle.plan.total_monthly_usd
    assert story["today"].title == (
        f"The proposal saves {money(diff)} a month against today"
        if diff > 0
        else f"The proposal costs {money(-diff)} a month more than today"
    )
    assert story["today"].table is not None
    assert "$2.40M up front" in dict(story["decision"].rows)["Budget"]
    base = {s.key: s for s in sections(bundle)}
    transition = getattr(bundle.plan, "transition", None)
    has_today = getattr(bundle.plan, "current_monthly_usd", None) is not None or (
        isinstance(transition, pl.DataFrame) and transition.height > 0
    )
    assert ("today" in base) == has_today


def test_story_runs_from_summary_to_decision_then_appendix(bundle: Bundle) -> None:
    story = sections(bundle)
    keys = [s.key for s in story]
    assert keys[0] == "summary" and keys.index("decision") < keys.index("placements")
    first_appendix = next(i for i, s in enumerate(story) if s.appendix)
    assert story[first_appendix - 1].key == "decision"
    assert all(s.appendix for s in story[first_appendix:])
    assert keys[-1] == "glossary"
    assert [label for label, _ in story[0].rows] == ["Answer", "Cost", "How sure", "We ask"]


def test_every_slide_says_something_in_plain_words(bundle: Bundle) -> None:
    names = Names.of(bundle.plan, bundle.scenario)
    # The clusters of today the scenario lists are proper names: the room knows them so.
    assert bundle.scenario.current is not None
    listed = {c.name for c in bundle.scenario.current.clusters}
    pools = [p for p in names.pools if p.removesuffix("+batch") not in listed]
    slugs = [*names.workloads, *pools, "hybrid_separate", "kubernetes_batch"]
    seen_notes: set[str] = set()
    for title, body, notes in _deck_text(build_deck(bundle))[1:]:
        lines = [line for line in body.split("\n") if line.strip()]
        assert len(lines) >= 3, f"'{title}' is nearly empty"
        for slug in slugs:
            assert not re.search(rf"(?<![\w-]){re.escape(slug)}(?![\w-])", body + notes), (
                title,
                slug,
            )
        assert len(notes.split()) <= NOTE_WORDS
        assert notes not in seen_notes, f"'{title}' repeats another slide's notes"
        seen_notes.add(notes)
        assert not re.search(r"\b0\.0 (more )?\w", body + notes), title


def test_a_cluster_of_today_is_called_by_its_own_name(bundle: Bundle) -> None:
    """The default's leased Slurm clusters are hpc-a and hpc-a-a100 to the room; the deck
    called them "Slurm cluster A" and "Slurm cluster 2"."""
    text = "\n".join(body for _t, body, _n in _deck_text(build_deck(bundle)))
    assert "LLM pre-training on the hpc-a cluster" in text
    assert "hpc-a-a100 cluster" in text
    assert "Slurm cluster A" not in text and "Slurm cluster 2" not in text
    # A pool of a cluster of today with the batch add-on installed is that cluster too.
    names = Names.of(bundle.plan, bundle.scenario)
    assert names.pool("hpc-a+batch") == names.pool("hpc-a") == "hpc-a cluster"


def test_the_glossary_glosses_the_jargon_the_deck_uses(bundle: Bundle) -> None:
    glossary = next(s for s in sections(bundle) if s.key == "glossary")
    assert glossary.table is not None
    terms = [r[0] for r in glossary.table.rows]
    assert {"gang scheduling", "p99", "FTE"} <= set(terms)


@pytest.mark.slow
@pytest.mark.parametrize("preset", cd.PRESETS)
def test_no_slide_is_empty_or_one_line_in_any_preset(preset: str) -> None:
    """Below the title and above the footer, every slide has a chart, a table or at least two
    statements (the research lab once had a one-line risks slide and an empty break-even one)."""
    scn = cd.load_scenario(preset)
    prs = Presentation(io.BytesIO(build_deck(gather(cd.solve(scn), scn))))
    height = int(prs.slide_height or 0)
    for slide in list(prs.slides)[1:]:
        title = slide.shapes.title.text_frame.text if slide.shapes.title is not None else ""
        body = [
            s
            for s in slide.shapes
            if not s.is_placeholder
            and (s.shape_type == MSO_SHAPE_TYPE.PICTURE or s.has_table or s.has_text_frame)
        ]
        visual = [s for s in body if s.shape_type == MSO_SHAPE_TYPE.PICTURE or s.has_table]
        statements = [
            p.text
            for s in body
            if s.has_text_frame and s.top < height * 0.9
            for p in s.text_frame.paragraphs
            if p.text.strip()
        ]
        assert visual or len(statements) >= 2, f"{preset}: '{title}' says too little"


def _notebooks_moved() -> Bundle:
    """The default estate with its notebooks kept off Slurm: one workload must move."""
    data = tomllib.loads(preset_path("enterprise-mixed").read_text())
    for w in data["workloads"]:
        if w["name"] == "research-notebooks":
            w["platforms"] = ["kubernetes", "kubernetes_batch", "shared"]
    scn = cd.parse_scenario(data, source="enterprise-mixed.toml")
    return gather(cd.solve(scn), scn)


@pytest.mark.parametrize("which", ["default", "notebooks moved"])
def test_the_way_there_reads_in_words_and_money(bundle: Bundle, which: str) -> None:
    """The transition table an executive reads: platforms by name, moves in dollars as every
    other slide prints them, nothing for a workload that stays, and a title that says which
    workloads move and what it costs (not raw 127,039 and 0.00 under "One time usd")."""
    if which != "default":
        bundle = _notebooks_moved()
        assert bundle.plan.transition.filter(pl.col("action") == "move").height == 1
    transition = bundle.plan.transition
    if not transition.height:
        pytest.skip("the default plan carries no transition")
    today = next(s for s in sections(bundle) if s.key == "today")
    assert today.table is not None
    cells = [c for row in today.table.rows for c in row]
    assert not any(re.fullmatch(r"[\d,]+\.\d\d", c) for c in cells), cells
    assert not any("usd" in h.lower() for h in today.table.columns)
    moved = transition.filter(pl.col("action") == "move")
    change = today.table.columns.index("Change")
    for r in moved.iter_rows(named=True):
        row = next(
            t for t in today.table.rows if t[0] == Names.of(bundle.plan).workload(r["workload"])
        )
        assert row[change] == "Moves" and money(r["one_time_usd"]) in row
        assert PLATFORM_LABELS[r["planned"]] in row
    if "Move, once" in today.table.columns:
        once = today.table.columns.index("Move, once")
        assert all(t[once] == "–" for t in today.table.rows if t[change] == "Stays")
    else:  # nothing moves: the empty money columns are left out, not printed as dashes
        assert moved.is_empty()
        assert today.title == "Every workload stays on the platform it runs on today"
    if moved.height == 1 and getattr(bundle.plan, "current_monthly_usd", None) is None:
        assert today.title.startswith("One workload moves, ")
        assert f"{money(moved['one_time_usd'][0])} once" in today.title


def _nothing_flips(bundle: Bundle) -> pl.DataFrame:
    """A break-even analysis (``break_evens``'s columns) that found no flip in its range."""
    return pl.DataFrame(
        {
            "input": ["demand:distributed_training"],
            "label": ["distributed training demand"],
            "unit": ["x"],
            "base_value": [1.0],
            "base_archetype": [bundle.plan.archetype],
            "found": [False],
            "value": [4.0],
            "same_value": [4.0],
            "changed_value": [4.0],
            "changed_archetype": [bundle.plan.archetype],
            "sentence": ["No change flips it."],
        }
    )


def test_the_risks_slide_states_the_verdicts_flip_and_never_denies_it(bundle: Bundle) -> None:
    """The verdict found that 12% more training demand flips the answer while a coarser
    break-even search found nothing: the risks slide led with "No input searched ... changes
    the answer" and a title about cost, beside a "How sure" slide showing +12% (the
    train-and-serve and default decks). It now leads with the flip, worded as the table."""
    both = replace(bundle, recommendation=_Verdict(), analyses={"b": _nothing_flips(bundle)})
    risks = next(s for s in sections(both) if s.key == "risks")
    assert risks.title == "The answer flips with a 12% rise in distributed training demand"
    assert risks.bullets[0] == (
        "A 12% rise in distributed training demand makes Kubernetes + batch add-on the cheapest."
    )
    assert not any("No input searched" in b for b in risks.bullets)
    # Nothing found anywhere: then, and only then, the slide says so.
    steady = _Verdict(flips=_flips().filter(~pl.col("found")))
    calm = replace(bundle, recommendation=steady, analyses={"b": _nothing_flips(bundle)})
    risks = next(s for s in sections(calm) if s.key == "risks")
    assert any("No input searched" in b for b in risks.bullets)


def test_all_cash_is_said_once_not_as_two_equal_figures(bundle: Bundle) -> None:
    """ "$260k a month, $260k of it cash" and "$260k a month in cash ($260k with effort)" read
    as a typo: all-cash plans say so, and a $400 difference is named."""
    plan = bundle.plan
    for extra, cost, budget in (
        (0.0, "all of it cash", ""),
        (400.0, f"all but {money(400.0)} of it cash", f"Estimated effort adds {money(400.0)}"),
    ):
        p = replace(plan, total_monthly_usd=260_000.0, cash_monthly_usd=260_000.0 - extra)
        story = {s.key: s for s in sections(replace(bundle, plan=p))}
        total = money(p.total_monthly_usd)
        assert dict(story["summary"].rows)["Cost"].startswith(f"{total} a month, {cost};")
        said = dict(story["decision"].rows)["Budget"]
        assert "with effort" not in said and said.count(total) == 1
        assert budget in said


def test_the_architecture_says_why_its_workloads_add_up_to_more_than_its_gpus(
    bundle: Bundle,
) -> None:
    """The chart lists each workload at its busiest hour; they add up to more than the
    reserved GPUs (454 against 360 in the default plan), which the slide left unexplained."""
    plan = bundle.plan
    reserved, peaks = float(plan.pools["gpus"].sum()), float(plan.placements["gpus"].sum())
    assert peaks > reserved
    lead = next(s for s in sections(bundle) if s.key == "architecture").lead
    assert f"{reserved:,.0f} reserved GPUs" in lead
    assert f"add up to {peaks:,.0f} but fall at different hours" in lead


def test_the_architecture_notes_say_what_sizes_each_pool_or_that_it_rents_its_peaks(
    bundle: Bundle,
) -> None:
    """The speaker notes gave each pool's "sized for" sentence; the default's Kubernetes cluster,
    which rents its peaks, has no such sentence since it stopped being "sized for" them, and its
    rent would have dropped out of the notes."""
    notes = " ".join(next(s for s in sections(bundle) if s.key == "architecture").notes)
    assert "cluster rents about" in notes and "for its peaks instead of buying for them" in notes
    assert "is sized for its busiest hours" in notes


def test_a_new_estate_starts_its_workloads_and_the_pilot_counts_its_stand_ins(
    owned: Bundle,
) -> None:
    """A scenario with no estate today: its workloads were shown as "Stays" under "Every
    workload stays on the platform it runs on today", the up-front purchase was dropped from
    the slide, and the pilot promised "four real workloads" with two of them absent."""
    story = {s.key: s for s in sections(owned)}
    today = story["today"]
    assert today.title == "Nothing runs today: every workload starts on the new clusters"
    assert today.table is not None and {r[2] for r in today.table.rows} == {"New"}
    assert "Runs today on" not in today.table.columns  # an empty column is left out
    assert money(owned.plan.upfront_usd) in today.lead
    pilot = story["pilot-workloads"]
    assert pilot.title.startswith("Pilot: prove two real workloads and two stand-ins")


def test_split_service_rows_name_their_gpu_and_two_targets_read_both(bundle: Bundle) -> None:
    """A workload split over two GPU types had two identical-looking rows; each now names its
    GPU. Two targets met read "Both", not "All 2"."""
    plan = bundle.plan
    first = plan.service_levels.head(1)
    split = pl.concat([first, first.with_columns(pl.lit("L4").alias("gpu_type"))])
    p = replace(plan, service_levels=split)
    service = next(s for s in sections(replace(bundle, plan=p)) if s.key == "service")
    assert service.title in ("The one service target is met", "1 of 1 service targets are missed")
    assert service.table is not None
    names = [r[0] for r in service.table.rows]
    assert len(set(names)) == 2 and names[1].endswith("(L4)")
    two = pl.concat([first, plan.service_levels.filter(pl.col("met")).slice(1, 1)])
    service = next(
        s
        for s in sections(replace(bundle, plan=replace(plan, service_levels=two)))
        if s.key == "service"
    )
    if bool(two["met"].all()):
        assert service.title == "Both service targets are met"


def test_plain_words_for_numbers_and_service_targets() -> None:
    names = Names({}, {})
    assert names.plain("Close call: a 11% rise flips it; a 18% fall; a 8× rise; a 1.8% one") == (
        "Close call: an 11% rise flips it; an 18% fall; an 8× rise; a 1.8% one"
    )
    assert names.plain("the Chat API SLO relaxed by 25%; two SLOs") == (
        "The Chat API service target relaxed by 25%; two service targets"
    )


def test_the_flips_table_says_a_change_never_below_the_flip() -> None:
    # A flip found at +2.5% once read "+2%" (half to even), a change at which nothing flips.
    from cluster_decide.export.content import _flips_table

    flips = pl.DataFrame(
        {
            "input": ["gpu_price", "demand:distributed_training"],
            "direction": ["up", "down"],
            "found": [True, True],
            "change_pct": [0.025, -0.09375],
            "flips_to": ["hybrid_separate", "slurm_only"],
        }
    )
    table = _flips_table(flips, Names({}, {}))
    assert table is not None and [r[2] for r in table.rows] == ["+2.5%", "-9.4%"]


def test_a_cluster_bought_from_several_clouds_says_so_beside_its_picture(bundle: Bundle) -> None:
    """The default's Kubernetes cluster holds CoreWeave, Nebius and AWS GPUs (each GPU type
    bought where it is cheapest): the architecture slide says what the plan assumed."""
    arch = next(s for s in sections(bundle) if s.key == "architecture")
    said = [s for s in bundle.plan.explanations if "cloud providers" in s]
    assert len(said) == 1
    names = Names.of(bundle.plan, bundle.scenario)
    assert arch.lead.endswith(" " + names.plain(said[0]))
    assert "come from three cloud providers" in arch.lead
    assert "neither cost is counted here" in arch.lead


def test_the_cost_slide_says_what_whole_node_jobs_add(bundle: Bundle) -> None:
    """The default's fine-tuning runs 8-GPU jobs beside the support assistant on one renting
    H100 pool: the cost slide says what counting whole nodes adds, beside the total."""
    costs = next(s for s in sections(bundle) if s.key == "costs")
    said = [s for s in bundle.plan.explanations if s.startswith("Whole nodes:")]
    assert len(said) == 1
    names = Names.of(bundle.plan, bundle.scenario)
    assert costs.lead.endswith(" " + names.plain(said[0]))
    assert "so its cost is a floor here." in costs.lead
