"""cd.recommend: the margin over the runner-up, what flips it, the verdict and its sentence.

Estates written for the purpose: one whose runner-up is within a few percent (close), one where
every other architecture is infeasible (clear) and one where the runner-up is far dearer
(clear). Every claim is checked against independent forced solves.
"""

from __future__ import annotations

import dataclasses
import json
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest
from builders import service, small_scenario, training
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_bruteforce import instance

import cluster_decide as cd
from cluster_decide import analysis as an
from cluster_decide.analysis.recommendation import (
    CLEAR_FLIP,
    CLEAR_MARGIN,
    FRAGILE_WIN_RATE,
    PILOT_STEP_COLUMNS,
)
from cluster_decide.base.constants import ARCHETYPES
from cluster_decide.cli import main
from cluster_decide.planning.explain import money

GANG_AND_TOPOLOGY = ["gang_scheduling", "topology_aware"]


@pytest.fixture(scope="module")
def close_estate() -> cd.Scenario:
    """Pre-training beside a small service: a Slurm cluster for the training beside Kubernetes
    for the service, a shared Slurm-on-Kubernetes pool, or one Kubernetes cluster with a batch
    add-on. An architect expects them within a few percent: staff are paid whatever the plan
    does, so a second platform costs its small floor of effort and build, about what one
    platform loses in packing large gangs. The shared pool and separate clusters are near twins
    (the training sits on its own nodes, so nothing is preempted): the shared pool is $178 a month
    cheaper, one build rather than two."""
    return small_scenario([training(gpu_hours_per_month=80000.0), service()])


@pytest.fixture(scope="module")
def only_slurm_estate() -> cd.Scenario:
    """Topology-bound training and an HPC team with no Kubernetes staff, no hiring and no
    retraining: only Slurm can be run at all."""
    return small_scenario(
        [training(gpu_hours_per_month=20000.0, requires=GANG_AND_TOPOLOGY)],
        team={"hpc": {"fte": 3.0}, "kubernetes": {"fte": 0.0}},
        hiring={"retraining": False},
    )


@pytest.fixture(scope="module")
def training_estate() -> cd.Scenario:
    """Training only, with an HPC team and no Kubernetes staff (hiring allowed, no retraining):
    every platform that runs on Kubernetes needs a whole new hire, so Slurm should win by a wide
    margin. (With both teams on the payroll, Slurm and a vendor's Slurm on Kubernetes are twins.)"""
    return small_scenario(
        [
            training(
                gpu_hours_per_month=20000.0,
                requires=GANG_AND_TOPOLOGY,
                prefers=["fair_share", "accounting"],
            )
        ],
        team={"hpc": {"fte": 2.0}, "kubernetes": {"fte": 0.0}},
        hiring={"allowed": True, "max_fte": 2, "retraining": False},
    )


@pytest.fixture(scope="module")
def close_rec(close_estate: cd.Scenario) -> an.Recommendation:
    return cd.recommend(close_estate)


def _forced(scn: cd.Scenario, archetype: str) -> an.Outcome:
    return an.quick_solve(scn.force_archetype(archetype))


def test_close_estate_is_close_with_its_runner_up_and_flipping_input(
    close_estate: cd.Scenario, close_rec: an.Recommendation
) -> None:
    rec = close_rec
    assert rec.archetype == "hybrid_shared"
    assert rec.verdict == "close"
    assert rec.runner_up == "hybrid_separate"
    assert 0 < rec.margin_pct < CLEAR_MARGIN
    assert rec.margin_usd == pytest.approx(
        _forced(close_estate, "hybrid_separate").total_monthly_usd - rec.plan.total_monthly_usd,
        abs=0.01,
    )
    nearest = rec.flips.row(0, named=True)
    assert nearest["found"] and nearest["input"] == "demand:distributed_training"
    assert abs(nearest["change_pct"]) <= CLEAR_FLIP
    # The flip is bracketed by two real solves, 1 percentage point apart at most.
    name = nearest["input"]
    at_changed = an.quick_solve(an.apply_inputs(close_estate, {name: nearest["changed_value"]}))
    at_same = an.quick_solve(an.apply_inputs(close_estate, {name: nearest["same_value"]}))
    assert at_changed.archetype == nearest["flips_to"] != rec.archetype
    assert at_same.archetype == rec.archetype
    assert abs(nearest["changed_value"] - nearest["same_value"]) <= 0.01 + 1e-9
    assert rec.sentence.startswith(
        "Close call: a shared Slurm-on-Kubernetes pool beats separate Slurm and Kubernetes clusters"
    )
    assert "distributed training demand flips it" in rec.sentence
    assert f"({money(rec.margin_usd)} a month)" in rec.sentence


def test_close_call_names_the_measurement_and_leads_the_pilot(
    close_rec: an.Recommendation,
) -> None:
    assert "measure distributed training demand" in close_rec.settle
    assert "pilot's first step, before the multi-node training test" in close_rec.settle
    step = close_rec.pilot_step
    assert list(step.columns) == list(PILOT_STEP_COLUMNS)
    assert step.height == 1 and step["workload"][0] == "train"
    # The thresholds in the unit the measurement gives: GPU-hours a month, today and at the flip.
    flip = close_rec.flips.row(0, named=True)
    assert "80,000 GPU-hours a month today" in step["measure"][0]
    assert f"{80000 * flip['changed_value']:,.0f} GPU-hours a month" in step["measure"][0]


def test_only_feasible_architecture_is_clear_and_says_so(only_slurm_estate: cd.Scenario) -> None:
    rec = cd.recommend(only_slurm_estate)
    assert rec.archetype == "slurm_only"
    assert rec.verdict == "clear"
    assert rec.runner_up is None and math.isnan(rec.margin_usd) and math.isnan(rec.margin_pct)
    assert "only architecture that can meet the requirements" in rec.sentence
    others = rec.runner_ups.filter(pl.col("archetype") != "slurm_only")
    assert others.height == 4 and others["status"].to_list() == ["infeasible"] * 4
    assert rec.settle == "" and rec.pilot_step.height == 0
    for a in others["archetype"]:
        assert not _forced(only_slurm_estate, a).feasible


def test_far_dearer_alternatives_are_clear(training_estate: cd.Scenario) -> None:
    rec = cd.recommend(training_estate)
    assert rec.archetype == "slurm_only"
    assert rec.verdict == "clear"
    assert rec.margin_pct >= CLEAR_MARGIN
    near = rec.flips.filter(
        pl.col("found")
        & pl.col("flips_to").is_not_null()
        & (pl.col("change_pct").abs() <= CLEAR_FLIP)
    )
    assert near.height == 0
    assert rec.sentence.startswith("Clear: Slurm only beats a shared Slurm-on-Kubernetes pool")
    # Every input was searched to at least the clear threshold before the verdict was given.
    assert rec.flips["searched_pct"].min() >= CLEAR_FLIP  # type: ignore[operator]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_margin_is_the_forced_runner_up_cost_minus_the_plan_cost(seed: int) -> None:
    scn = instance(seed)
    rec = cd.recommend(scn, inputs=())  # no flip search: the margin is the property
    assume(rec.plan.status is cd.Status.OPTIMAL)
    forced = {a: _forced(scn, a) for a in ARCHETYPES if a != rec.archetype}
    feasible = {a: o.total_monthly_usd for a, o in forced.items() if o.feasible}
    if not feasible:
        assert rec.runner_up is None and rec.verdict == "clear"
        return
    runner_up = min(feasible, key=lambda a: (feasible[a], a))
    assert rec.runner_up_monthly_usd == pytest.approx(feasible[runner_up], abs=0.01)
    assert rec.margin_usd == pytest.approx(
        feasible[runner_up] - rec.plan.total_monthly_usd, abs=0.01
    )
    assert rec.margin_usd >= -0.01  # the plan is the optimum: nothing forced is cheaper
    assert rec.margin_pct == pytest.approx(rec.margin_usd / rec.plan.total_monthly_usd)


def test_infeasible_plan_has_no_verdict_to_give() -> None:
    scn = small_scenario([training()], policy={"budget_usd_per_month": 1000.0})
    rec = cd.recommend(scn)
    assert rec.plan.status is cd.Status.INFEASIBLE
    assert rec.verdict == "none"
    assert rec.sentence.startswith("No recommendation: no plan meets the requirements")
    assert rec.runner_ups.height == 0 and rec.flips.height == 0


def test_unproven_plan_is_never_clear(training_estate: cd.Scenario) -> None:
    plan = cd.solve(training_estate)
    unproven = dataclasses.replace(plan, status=cd.Status.FEASIBLE)
    rec = cd.recommend(training_estate, plan=unproven, inputs=())
    assert rec.verdict == "close"
    assert "margin is indicative" in rec.sentence
    # A time-limited plan dearer than a forced rival says so instead of claiming to beat it.
    dear = dataclasses.replace(unproven, total_monthly_usd=rec.runner_up_monthly_usd + 1000.0)
    worse = cd.recommend(training_estate, plan=dear, inputs=())
    assert worse.verdict == "close" and worse.margin_usd == pytest.approx(-1000.0)
    assert worse.sentence.startswith(
        "Close call (unproven): a shared Slurm-on-Kubernetes pool solved on its own costs $1.0k "
        "a month"
    )


def test_recommendation_json_carries_the_verdict(close_rec: an.Recommendation) -> None:
    data = close_rec.to_dict()
    assert data["verdict"] == "close" and data["sentence"] == close_rec.sentence
    assert data["runner_up"] == "hybrid_separate"
    assert data["flips"][0]["input"] == "demand:distributed_training"
    assert set(close_rec.flips.columns) == set(an.FLIPS_SCHEMA)
    assert dict(close_rec.runner_ups.schema) == an.RUNNER_UPS_SCHEMA


def test_sampled_recommendation_is_the_same_on_a_thread_pool(close_estate: cd.Scenario) -> None:
    serial = cd.recommend(close_estate, samples=10, seed=1)
    with ThreadPoolExecutor(2) as pool:
        threaded = cd.recommend(close_estate, samples=10, seed=1, executor=pool)
    assert threaded.robust.equals(serial.robust)
    assert threaded.flips.equals(serial.flips)
    assert threaded.sentence == serial.sentence
    assert serial.sweep is not None and threaded.sweep is not None
    assert threaded.sweep.costs.equals(serial.sweep.costs)
    pooled = cd.recommend(close_estate, samples=10, seed=1, max_workers=2)  # its own processes
    assert pooled.to_dict() == serial.to_dict()


def test_win_rates_and_regrets_are_those_of_the_samples(close_estate: cd.Scenario) -> None:
    rec = cd.recommend(close_estate, samples=12, seed=1)
    sweep = rec.sweep
    assert sweep is not None and rec.samples == 12
    assert set(rec.robust["archetype"]) == {"kubernetes_batch", "hybrid_separate", "hybrid_shared"}
    for r in rec.robust.iter_rows(named=True):
        won = float((sweep.samples["archetype"] == r["archetype"]).mean())  # type: ignore[arg-type]
        assert r["win_rate"] == pytest.approx(won)
        assert -0.01 <= r["expected_regret_usd"] <= r["worst_regret_usd"] + 0.01
    # Two samples re-solved independently: each archetype's regret is its forced cost above
    # the sample's optimum.
    inputs = [c for c in sweep.samples.columns if ":" in c or c in ("gpu_price", "hiring")]
    for i in (0, 7):
        row = sweep.samples.row(i, named=True)
        sample = an.apply_inputs(close_estate, {k: row[k] for k in inputs})
        best = an.quick_solve(sample)
        assert best.archetype == row["archetype"]
        for c in sweep.costs.filter(pl.col("sample") == i).iter_rows(named=True):
            forced = _forced(sample, c["archetype"]).total_monthly_usd
            assert c["regret_usd"] == pytest.approx(forced - best.total_monthly_usd, abs=0.01)
    worst = rec.robust.sort("worst_regret_usd").row(0, named=True)
    # The point optimum (the shared pool, by $178) wins most futures, but separate clusters have
    # the smallest worst regret: they are named as the safer commitment.
    assert rec.robust_choice == worst["archetype"] == "hybrid_separate" != rec.archetype
    assert rec.verdict == "close"
    assert "wins 83% of 12 sampled futures" in rec.sentence
    assert "separate Slurm and Kubernetes clusters are the safer commitment" in rec.sentence


def test_ranges_follow_the_catalog_confidence_of_what_the_scenario_buys() -> None:
    cloud = small_scenario([training(gpu_types=["H100"]), service(gpu_types=["L40S"])])
    frame = an.input_ranges(cloud)
    price = frame.filter(pl.col("input") == "gpu_price").row(0, named=True)
    # Reserved hourly prices are derived from on-demand with a discount band: low confidence.
    assert price["confidence"] == "low"
    assert price["p5_multiplier"] == pytest.approx(0.82)
    quoted = cloud.update(
        {"gpus": {g: {"usd_per_gpu_hour_reserved": 3.0} for g in ("H100", "L40S")}}
    )
    assert an.input_ranges(quoted).filter(pl.col("input") == "gpu_price")["confidence"][0] == (
        "medium"
    )
    demand = dict(frame.select("input", "p95_multiplier").iter_rows())
    # Not one flat range: real-time traffic is less predictable than a training roadmap.
    assert demand["demand:realtime_inference"] > demand["demand:distributed_training"]
    assert set(an.catalog_distributions(cloud)) == set(frame["input"])


@pytest.mark.optional
def test_sampled_recommendation_on_a_local_dask_cluster(close_estate: cd.Scenario) -> None:
    distributed = pytest.importorskip(
        "dask.distributed",
        reason="dask.distributed is not installed (pip install 'dask[distributed]')",
    )
    with ThreadPoolExecutor(2) as pool:
        threaded = cd.recommend(close_estate, samples=8, seed=2, executor=pool)
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    with cluster, distributed.Client(cluster.scheduler_address) as client:
        remote = cd.recommend(close_estate, samples=8, seed=2, executor=client.get_executor())
    assert remote.robust.equals(threaded.robust)
    assert remote.flips.equals(threaded.flips)
    assert remote.sentence == threaded.sentence


def test_cli_prints_the_verdict_under_the_architecture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["solve", "research-lab"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Architecture:"))
    # Idle HPC engineers could be retrained to run Kubernetes, so separate clusters are possible,
    # 8% dearer than keeping the lab's own Slurm clusters; nothing within 50% flips it.
    assert lines[at + 1].startswith(
        "Verdict:      Close call: Slurm only beats separate Slurm and Kubernetes clusters"
    )
    assert "no single change of up to 50%" in lines[at + 1]
    assert main(["solve", "research-lab", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["archetype"] == "slurm_only" and data["verdict"]["verdict"] == "close"
    assert main(["solve", "research-lab", "--json", "--no-verdict"]) == 0
    assert "verdict" not in json.loads(capsys.readouterr().out)
    assert main(["solve", "research-lab", "--out", str(tmp_path)]) == 0
    written = json.loads((tmp_path / "verdict.json").read_text(encoding="utf-8"))
    assert written == data["verdict"]
    assert pl.read_csv(tmp_path / "runner_ups.csv")["archetype"][0] == "slurm_only"


@pytest.mark.optional
def test_cli_sweeps_on_a_dask_scheduler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], close_estate: cd.Scenario
) -> None:
    distributed = pytest.importorskip(
        "dask.distributed",
        reason="dask.distributed is not installed (pip install 'dask[distributed]')",
    )
    path = tmp_path / "close.toml"
    cd.save_scenario(close_estate, path)
    sweep = ["uncertainty", str(path), "--samples", "4", "--seed", "5", "--json"]
    verdict = ["solve", str(path), "--samples", "6", "--seed", "5", "--json"]

    def run(argv: list[str]) -> dict[str, object]:
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]

    local_sweep, local_verdict = run([*sweep, "--jobs", "1"]), run([*verdict, "--jobs", "1"])
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    with cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        remote_sweep = run([*sweep, "--dask", address])
        remote_verdict = run([*verdict, "--dask", address])
    assert remote_sweep == local_sweep
    assert remote_verdict == local_verdict
    assert local_verdict["verdict"]["robust"]  # type: ignore[index]


def test_close_margin_no_input_flips_points_the_pilot_at_running_costs() -> None:
    """A bigger service alone: Kubernetes with or without a batch add-on differ only by the
    add-on's upkeep, so the margin is thin but no demand, staff or price change flips it."""
    rec = cd.recommend(small_scenario([service(peak_requests_per_second=400.0)]))
    assert (rec.archetype, rec.runner_up, rec.verdict) == (
        "kubernetes_only",
        "kubernetes_batch",
        "close",
    )
    assert not rec.flips["found"].any()
    assert rec.flips["searched_pct"].min() == max(an.LEVELS)
    assert "less than the 10% a clear answer needs; no single change of up to 50%" in rec.sentence
    # The margin's words end there; the one-company clause follows (its peaks are AWS's).
    assert "so on cost either is a sound choice. The k8s cluster rents from AWS" in rec.sentence
    assert "GPU node replacement test" in rec.settle
    assert rec.pilot_step["test"].to_list() == ["Settle the decision"]


def test_a_binding_budget_is_searched_and_infeasibility_is_not_a_flip(
    training_estate: cd.Scenario,
) -> None:
    plan = cd.solve(training_estate)
    scn = training_estate.set_budget(plan.cash_monthly_usd * 1.01)
    rec = cd.recommend(scn, inputs=["budget"])
    rows = {r["direction"]: r for r in rec.flips.iter_rows(named=True)}
    # The plan spends less than the budget, so raising it cannot matter and is not solved.
    assert set(rows) == {"down"}
    down = rows["down"]
    assert down["found"] and down["flips_to"] is None
    assert "leaves no feasible plan" in down["sentence"]
    assert not an.quick_solve(an.apply_inputs(scn, {"budget": down["changed_value"]})).feasible
    same = an.quick_solve(an.apply_inputs(scn, {"budget": down["same_value"]}))
    assert same.archetype == "slurm_only"
    assert down["same_value"] >= plan.cash_monthly_usd - 0.01
    # Running out of money is not another architecture winning: the verdict stays clear.
    assert rec.verdict == "clear"


def test_sampled_close_call_says_how_often_it_wins() -> None:
    """A margin the samples never overturn stays a close call (the rule is the margin), but the
    sentence adds how often it wins."""
    rec = cd.recommend(small_scenario([service(peak_requests_per_second=400.0)]), samples=6)
    assert rec.verdict == "close" and rec.robust_choice == "kubernetes_only"
    assert rec.robust.filter(pl.col("archetype") == "kubernetes_only")["win_rate"][0] == 1.0
    assert "sound choice. Kubernetes only wins 100% of 6 sampled futures. " in rec.sentence


def test_uncertainty_command_samples_the_catalog_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    # research-lab buys on premises, where most node prices are assumptions: ±35%.
    assert main(["uncertainty", "research-lab", "--samples", "2", "--jobs", "1"]) == 0
    assert "GPU prices: uniform(loc=0.65, scale=0.7)" in capsys.readouterr().out
    argv = ["uncertainty", "research-lab", "--samples", "2", "--jobs", "1", "--ranges", "flat"]
    assert main(argv) == 0
    assert "GPU prices: uniform(loc=0.8, scale=0.4)" in capsys.readouterr().out


@pytest.fixture(scope="module")
def fragile_estate() -> cd.Scenario:
    """Pre-training beside a small service again, but the HPC team is two-thirds of one
    engineer, exactly what a Slurm cluster for the training needs, with no hiring, no retraining
    and no managed service to cover a gap. An architect reads it before solving: separate
    clusters are cheapest on paper, but only while that engineer is never away; any leave or
    sickness (staff availability is below 100% in almost every sampled year) leaves Slurm
    unstaffed, and Kubernetes with a batch add-on, run by the ample Kubernetes team, is the safe
    commitment."""
    return small_scenario(
        [training(gpu_hours_per_month=80000.0), service()],
        team={"hpc": {"fte": 0.68}, "kubernetes": {"fte": 6.0}},
        hiring={"allowed": False, "retraining": False},
        policy={"managed": False},
    )


@pytest.fixture(scope="module")
def fragile_rec(fragile_estate: cd.Scenario) -> an.Recommendation:
    return cd.recommend(fragile_estate, samples=20, seed=0)


def test_fragile_estate_is_fragile_and_a_small_change_really_flips_it(
    fragile_estate: cd.Scenario, fragile_rec: an.Recommendation
) -> None:
    rec = fragile_rec
    assert rec.archetype == "hybrid_separate" and rec.plan.status.value == "optimal"
    assert rec.verdict == "fragile"
    # The nearest flip is a small fall in HPC staff, bracketed by two real solves.
    nearest = rec.flips.row(0, named=True)
    assert nearest["input"] == "fte:hpc" and nearest["direction"] == "down"
    assert -0.05 < nearest["change_pct"] < 0
    name = nearest["input"]
    at_changed = an.quick_solve(an.apply_inputs(fragile_estate, {name: nearest["changed_value"]}))
    at_same = an.quick_solve(an.apply_inputs(fragile_estate, {name: nearest["same_value"]}))
    assert at_changed.archetype == nearest["flips_to"] == "kubernetes_batch"
    assert at_same.archetype == "hybrid_separate"
    # Independently of the search: 3% less HPC time (a week and a half of leave) flips it.
    three_pct = an.quick_solve(an.apply_inputs(fragile_estate, {name: 0.68 * 0.97}))
    assert three_pct.archetype == "kubernetes_batch"
    # The win rate is the share of the sampled futures whose optimum it is, under one half.
    sweep = rec.sweep
    assert sweep is not None
    won = float((sweep.samples["archetype"] == "hybrid_separate").mean())  # type: ignore[arg-type]
    mine = rec.robust.filter(pl.col("archetype") == "hybrid_separate").row(0, named=True)
    assert mine["win_rate"] == pytest.approx(won) and won < FRAGILE_WIN_RATE
    assert mine["p_feasible"] < 1.0  # short of HPC time, the Slurm cluster cannot be run at all
    assert rec.robust_choice == "kubernetes_batch"


def test_fragile_sentence_is_plain_words_a_meeting_can_repeat(
    fragile_rec: an.Recommendation,
) -> None:
    s = fragile_rec.sentence
    won = fragile_rec.robust.filter(pl.col("archetype") == "hybrid_separate")["win_rate"][0]
    assert s.startswith(
        "Fragile: separate Slurm and Kubernetes clusters are cheapest at today's figures, by "
        f"{fragile_rec.margin_pct:.1%} ({money(fragile_rec.margin_usd)} a month) over Kubernetes "
        f"with a batch add-on, but win only {won:.0%} of 20 sampled futures"
    )
    assert "fall in HPC (Slurm) staff flips it to Kubernetes with a batch add-on" in s
    assert "Kubernetes with a batch add-on is the safer commitment" in s
    # No code names or analyst's terms: what a non-specialist can say out loud.
    for jargon in ("_", "regret", "archetype", "optimum", "forced", "k8s", "sample "):
        assert jargon not in s, jargon
    # The step that would settle it leads the pilot: who will really run the Slurm cluster.
    assert "measure HPC (Slurm) staff" in fragile_rec.settle
    assert "0.68 FTE today" in fragile_rec.pilot_step["measure"][0]


def test_cli_json_and_deck_carry_the_fragile_verdict(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fragile_estate: cd.Scenario,
    fragile_rec: an.Recommendation,
) -> None:
    from pptx import Presentation

    from cluster_decide import export

    path = cd.save_scenario(fragile_estate, tmp_path / "fragile.toml")
    argv = ["solve", str(path), "--samples", "20", "--seed", "0", "--jobs", "1"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Architecture:"))
    assert lines[at + 1] == f"Verdict:      {fragile_rec.sentence}"
    assert main([*argv, "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)["verdict"]
    assert verdict["verdict"] == "fragile" and verdict["sentence"] == fragile_rec.sentence
    assert verdict["robust_choice"] == "kubernetes_batch"
    # The deck: the title and summary state it; the "How sure" slide names it and the win rates.
    bundle = export.gather(
        fragile_rec.plan, fragile_estate, run_compare=False, recommendation=fragile_rec
    )
    deck = export.deck(bundle, tmp_path / "fragile.pptx")
    slides = [
        "\n".join(sh.text_frame.text for sh in s.shapes if sh.has_text_frame)
        + "\n".join(
            c.text for sh in s.shapes if sh.has_table for r in sh.table.rows for c in r.cells
        )
        for s in Presentation(str(deck)).slides
    ]
    assert fragile_rec.sentence in slides[0] and fragile_rec.sentence in slides[1]
    sure = [s for s in slides if s.startswith("How sure: a fragile answer")]
    won = dict(fragile_rec.robust.select("archetype", "win_rate").iter_rows())
    assert len(sure) == 1
    assert (
        f"Over 20 sampled futures, the cheapest was Kubernetes + batch add-on in "
        f"{won['kubernetes_batch']:.0%} and separate Slurm and Kubernetes in "
        f"{won['hybrid_separate']:.0%}." in sure[0]
    )


def test_a_comparison_already_made_is_reused_not_solved_again(
    close_estate: cd.Scenario, close_rec: an.Recommendation, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export shows cd.compare's frame beside the verdict: given that frame, the verdict's
    runner-up and margin are its figures (one runner-up cost in the whole deck) and no
    archetype is solved again."""
    import sys

    frame = cd.compare(close_estate)
    module = sys.modules["cluster_decide.analysis.recommendation"]

    def no_compare(*_a: object, **_k: object) -> None:
        raise AssertionError("compare solved again")

    monkeypatch.setattr(module, "compare", no_compare)
    rec = cd.recommend(close_estate, plan=close_rec.plan, alternatives=frame)
    runner = frame.filter(pl.col("archetype") == rec.runner_up)["total_monthly_usd"][0]
    assert rec.margin_usd == pytest.approx(runner - rec.plan.total_monthly_usd)
    assert rec.to_dict() == close_rec.to_dict()  # the same answer as solving them here
