"""The story every export tells: sections, analyses as tables, the pilot and the assumptions."""

from __future__ import annotations

import dataclasses
import math

import polars as pl
import pytest

import cluster_decide as cd
from cluster_decide.analysis import BREAK_EVEN_SCHEMA, LEVER_SCHEMA
from cluster_decide.export import Bundle, gather, headline, key_assumptions, pilot_plan, sections
from cluster_decide.export.figures import chart_names
from cluster_decide.planning.explain import money


def _levers() -> pl.DataFrame:
    rows = [
        (
            "gpu:H100",
            "H100 10% cheaper",
            93000.0,
            "hybrid_separate",
            "H100 10% cheaper is worth $93k a month.",
        ),
        (
            "fte:hpc",
            "one more HPC (Slurm) engineer",
            0.0,
            "hybrid_separate",
            "One more is worth nothing.",
        ),
        ("budget", "10% more budget", math.nan, None, "10% more budget: no plan."),
    ]
    return pl.DataFrame(
        [
            {
                "lever": lever,
                "change": change,
                "base_monthly_usd": 1.2e6,
                "lever_monthly_usd": 1.2e6 - value,
                "value_usd_per_month": value,
                "base_archetype": "hybrid_separate",
                "lever_archetype": after,
                "sentence": sentence,
            }
            for lever, change, value, after, sentence in rows
        ],
        schema=LEVER_SCHEMA,
    )


def _break_evens() -> pl.DataFrame:
    row = dict.fromkeys(BREAK_EVEN_SCHEMA)
    row.update(
        input="gpu_price",
        label="GPU prices",
        unit="x",
        base_value=1.0,
        base_archetype="hybrid_separate",
        found=True,
        value=0.375,
        same_value=0.38,
        same_monthly_usd=5.2e5,
        changed_value=0.37,
        changed_archetype="kubernetes_batch",
        changed_monthly_usd=5.1e5,
        solves=8,
        sentence="Separate clusters stays best down to 0.38× GPU prices.",
    )
    steady = {
        **row,
        "input": "fte:kubernetes",
        "label": "Kubernetes staff",
        "unit": "FTE",
        "found": False,
        "sentence": "It holds for Kubernetes staff.",
    }
    return pl.DataFrame([row, steady], schema=BREAK_EVEN_SCHEMA)


def test_analyses_become_their_own_sections(bundle: Bundle) -> None:
    extra = {
        "lever values": _levers(),
        "break-even points": _break_evens(),
        "showback": pl.DataFrame({"team": ["research"], "monthly_usd": [1234.5]}),
    }
    with_analyses = Bundle(bundle.plan, bundle.scenario, bundle.alternatives, extra)
    assert chart_names(with_analyses)[-2:] == ("levers", "break_evens")
    assert "levers" not in chart_names(bundle)
    story = sections(with_analyses)
    by_key = {s.key: s for s in story}
    levers = by_key["analysis-lever-values"]
    assert levers.table is not None
    assert levers.table.rows[0] == ("H100 10% cheaper", "$93k", "same")
    assert [r[0] for r in levers.table.rows] == ["H100 10% cheaper", "10% more budget"]
    assert levers.table.rows[1][1:] == ("–", "no feasible plan")
    be = by_key["analysis-break-even-points"]
    assert be.table is not None
    assert be.table.rows == (
        ("GPU prices", "1.00×", "0.38×", "0.37×", "Kubernetes + batch add-on"),
    )
    assert "Kubernetes staff" in be.lead
    risks = by_key["risks"]
    # The sentence is built from the same formatted values as the table row.
    assert risks.bullets[0] == (
        "GPU prices: the answer holds down to 0.38×; at 0.37×, Kubernetes + batch add-on "
        "becomes the cheapest."
    )
    assert risks.title == "The answer flips only at GPU prices of 0.37×"
    generic = by_key["analysis-showback"]
    assert generic.table is not None and generic.table.rows == (("Research", "1,234"),)
    assert all(s.appendix for s in story[story.index(by_key["placements"]) :])


def test_headline_is_one_sentence(default_plan: cd.Plan) -> None:
    text = headline(default_plan)
    assert text.startswith(
        f"Run separate Slurm and Kubernetes clusters: {money(default_plan.total_monthly_usd)} a month"
    )
    assert text.count(". ") == 0 and text.endswith(".")


@pytest.mark.parametrize(
    ("preset", "training", "serving"),
    [
        ("research-lab", "Foundation pre-training", "none in this scenario"),
        ("inference-platform", "none in this scenario", "Chat API"),
    ],
)
def test_pilot_follows_the_scenarios_own_workloads(
    preset: str, training: str, serving: str
) -> None:
    scn = cd.load_scenario(preset)
    frame = pilot_plan(cd.solve(scn), scn)
    assert frame["test"].to_list() == [
        "Multi-node training",
        "Fine-tuning",
        "Batch pipeline",
        "Inference endpoint",
        "Failure injection",
        "GPU node replacement",
        "Quota enforcement",
        "Cost reporting",
    ]
    assert frame["workload"][0] == training
    assert frame["workload"][3] == serving
    assert all(frame["measure"].str.len_chars() > 20)
    assert frame["where"][0] != "–"


def test_assumptions_follow_the_scenario(
    default_scenario: cd.Scenario, default_plan: cd.Plan
) -> None:
    base = key_assumptions(default_plan, default_scenario)
    assert set(base["confidence"]) <= {"high", "medium", "low", "assumption", "scenario"}
    cited = base.filter(pl.col("key").str.starts_with("offers:"))
    assert cited.height and set(cited["source"]) - {"scenario file"}  # the catalog's sources
    cheaper = default_scenario.scale_gpu_prices(0.5)
    plan = cd.solve(cheaper)
    figures = key_assumptions(plan, cheaper)
    for r in plan.pools.filter(pl.col("gpus") > 0).iter_rows(named=True):
        row = figures.filter(
            pl.col("key") == f"offers:{r['gpu_type']}:{r['provider_class']}:{r['provider']}:"
            f"{r['term']}"
        )
        assert row["value"][0] == f"${r['usd_per_gpu_hour']:,.2f}"
        assert row["source"][0] == "scenario file"  # half the catalog's price: not its source


def test_gather_solves_a_scenario_and_skips_compare_when_asked(
    default_scenario: cd.Scenario,
) -> None:
    b = gather(default_scenario, run_compare=False)
    assert b.plan.feasible and b.alternatives is None
    assert [s.key for s in sections(b)][:2] == ["summary", "recommendation"]


def test_the_lever_slide_shows_the_levers_its_chart_shows(bundle: Bundle) -> None:
    """The lever chart drew every lever (16, in 7 pt beside the table, labels cut with "…")
    while the table listed 8 and the lead said the rest are worth nothing. Table and chart now
    show the same levers, and the deck shows the table alone."""
    from cluster_decide.export.figures import chart_set

    worth = [(f"H{i}00 {i}% cheaper", 1000.0 * (13 - i)) for i in range(12)]
    idle = [(f"the X{i} SLO relaxed by 25%", 0.0) for i in range(3)]
    levers = pl.DataFrame(
        {
            "change": [c for c, _ in worth + idle],
            "value_usd_per_month": [v for _, v in worth + idle],
            "lever_archetype": [bundle.plan.archetype] * 15,
            "base_archetype": [bundle.plan.archetype] * 15,
            "sentence": ["s"] * 15,
        }
    )
    with_levers = dataclasses.replace(bundle, analyses={"lever values": levers})
    sec = next(s for s in sections(with_levers) if s.key.startswith("analysis-"))
    assert sec.table is not None and len(sec.table.rows) == 10
    assert not sec.chart_in_deck
    assert sec.lead == (
        "3 other levers are worth nothing. The 10 most valuable of the 12 that are worth something:"
    )
    chart = chart_set(with_levers)["levers"].to_dict(validate=False)
    shown = [r["change"] for r in chart["data"]["values"]]
    assert shown == [r[0] for r in sec.table.rows]


def test_the_today_slide_names_the_nodes_a_cluster_of_today_leaves_spare() -> None:
    """The deck and report say what the CLI says: nodes the plan does not use cost nothing only
    if they are powered down, lent or sold (research-lab needs 22 of its 24 H100 nodes)."""
    plan = cd.solve(cd.load_scenario("research-lab"))
    spare = [s for s in plan.explanations if "no running costs are counted for" in s]
    assert spare, plan.explanations  # the preset keeps spare nodes: the check below has a subject
    today = next(s for s in sections(gather(plan, run_compare=False)) if s.key == "today")
    text = " ".join((today.lead, *today.bullets))
    assert all(s in text for s in spare), text
    default = next(
        s
        for s in sections(gather(cd.solve(cd.load_scenario()), run_compare=False))
        if s.key == "today"
    )
    assert "no running costs" not in " ".join((default.lead, *default.bullets))


def test_the_architecture_notes_say_what_keeps_a_gang_cluster_idle() -> None:
    """research-lab's H100 cluster is busy 58% of the time: its pre-training's 128-GPU jobs need
    16 of its 22 nodes at once. The architecture slide's notes carried only the pools "sized
    for" their busiest hours; now they carry what sizes every cluster, each in its first
    sentence (the backfill and booking advice stay in the report)."""
    plan = cd.solve(cd.load_scenario("research-lab"))
    arch = next(s for s in sections(gather(plan, run_compare=False)) if s.key == "architecture")
    idle = [n for n in arch.notes if "standing by between runs" in n]
    assert len(idle) == 1 and "16 of its 22 nodes at once" in idle[0], arch.notes
    assert idle[0].endswith("standing by between runs.")
    assert sum(len(n.split()) for n in arch.notes) <= 120
