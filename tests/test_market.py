"""Markets, commitments, spot, burst caps and on-prem as an investment."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from builders import embeddings, service, small_scenario, training

import cluster_decide as cd
from cluster_decide.base.errors import ScenarioError
from cluster_decide.inputs.datasources import CATALOG_DIR, load_facts, provenance_problems
from cluster_decide.inputs.market import onprem_cost, residual_fraction, resolve_markets
from cluster_decide.inputs.offers import read_offers
from cluster_decide.model.build import build_model
from cluster_decide.model.data import prepare
from cluster_decide.planning import explain
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions


def batch(name: str = "scoring", **kw: Any) -> dict[str, Any]:
    base = {
        "name": name,
        "kind": "batch_inference",
        "interface": "containers",
        "gpu_types": ["H100"],
        "gpus_per_job": 1,
        "gpu_hours_per_month": 3000.0,
        "mean_job_hours": 1.0,
        "max_completion_hours": 8.0,
        "profile": "nightly_batch",
    }
    base.update(kw)
    return base


# --- the catalog ------------------------------------------------------------------------


def test_every_catalog_figure_is_sourced() -> None:
    assert provenance_problems(load_facts()) == []


def test_an_unsourced_row_fails(tmp_path: Path) -> None:
    """A price row without source or date is named by the check and refused by the loader."""
    folder = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, folder)
    with (folder / "offers.csv").open("a", encoding="utf-8") as handle:
        handle.write("H100,gpu_cloud,Somewhere,on_demand,1.99,true,,,,,,\n")
    problems = provenance_problems(load_facts(folder))
    assert problems == ["offers:H100:gpu_cloud:Somewhere:on_demand: no source or no date"]
    with pytest.raises(ValueError, match=r"offers.csv, line \d+: every figure needs a source"):
        read_offers(folder)


def test_commitments_are_cheaper_than_on_demand_per_seller() -> None:
    offers = read_offers(CATALOG_DIR)
    for o in offers:
        same = {
            x.term: x.usd_per_gpu_hour
            for x in offers
            if (x.gpu, x.provider_class, x.provider) == (o.gpu, o.provider_class, o.provider)
        }
        if "on_demand" in same:
            assert same.get("commit_1y", 0) <= same["on_demand"]
            assert same.get("commit_3y", 0) <= same.get("commit_1y", same["on_demand"])


def test_resale_curve_never_rises_and_starts_new() -> None:
    curve = cd.load_scenario().catalog.resale
    ages = np.arange(0, 121)
    values = [residual_fraction(curve, a) for a in ages]
    assert values[0] == 1.0
    assert all(b <= a for a, b in pairwise(values))


# --- the scenario's [procurement] ------------------------------------------------------


def test_three_year_commitment_refused_for_a_twelve_month_horizon() -> None:
    with pytest.raises(ScenarioError) as err:
        small_scenario([training()], procurement={"horizon_months": 12, "commitment": "3y"})
    text = str(err.value)
    assert "procurement" in text and "'3y'" in text and "horizon_months is 12" in text


def test_default_commitment_is_the_longest_that_fits_the_horizon() -> None:
    for horizon, term in ((6, "none"), (12, "1y"), (24, "1y"), (36, "3y"), (60, "3y")):
        scn = small_scenario([training()], procurement={"horizon_months": horizon})
        assert scn.procurement.commitment_term == term
        offer = resolve_markets(scn, ["H100"])["H100"].baseline
        assert offer is not None
        assert offer.term == {"none": "on_demand", "1y": "commit_1y", "3y": "commit_3y"}[term]


def test_provider_classes_limit_the_market() -> None:
    scn = small_scenario([training()], procurement={"provider_classes": ["hyperscaler"]})
    plan = cd.solve(scn)
    assert set(plan.pools["provider_class"]) == {"hyperscaler"}
    assert set(plan.pools["term"]) == {"commit_3y"}
    cheap = cd.solve(small_scenario([training()]))
    assert cheap.cash_monthly_usd < plan.cash_monthly_usd


def test_every_preset_still_loads_and_reports_its_market() -> None:
    for name in cd.PRESETS:
        plan = cd.solve(cd.load_scenario(name))
        assert plan.feasible
        assert (plan.pools["provider_class"] != "").all()
        assert (plan.pools["term"] != "").all()


# --- spot ----------------------------------------------------------------------------------


def test_realtime_service_cannot_be_marked_interruptible() -> None:
    with pytest.raises(ScenarioError, match="real-time service cannot be interruptible"):
        small_scenario([service(interruptible=True)])


def test_interruptible_defaults_by_kind() -> None:
    scn = small_scenario(
        [training(), service(), batch(), training("ft", kind="fine_tuning", gpus_per_job=8)]
    )
    assert [w.is_interruptible for w in scn.workloads] == [False, False, True, True]


def test_checkpointed_batch_uses_spot_and_saves_money() -> None:
    scn = small_scenario(
        [batch(), service(gpu_types=["H100"])], policy={"platforms": ["kubernetes"]}
    )
    plan = cd.solve(scn)
    row = plan.placements.filter(pl.col("workload") == "scoring")
    assert row["spot_share"].sum() > 0
    no_spot = cd.solve(scn.update({"procurement": {"spot": False}}))
    assert no_spot.placements["spot_share"].sum() == 0
    assert plan.cash_monthly_usd < no_spot.cash_monthly_usd


def test_spot_never_carries_a_realtime_class_or_a_non_restartable_gang() -> None:
    scn = small_scenario(
        [training(gpus_per_job=16), service(gpu_types=["H100"]), batch()],
        procurement={"max_spot_share": 1.0},
    )
    data = prepare(scn)
    names = {w.name: w for w in scn.workloads}
    assert all(names[w].is_interruptible for (w, _p, _g) in data.spot_cents)
    assert not any(w in ("train", "api") for (w, _p, _g) in data.spot_cents)
    plan = cd.solve(scn)
    on_spot = plan.placements.filter(pl.col("spot_share") > 0)["workload"].to_list()
    assert "train" not in on_spot and "api" not in on_spot
    # Forcing it by hand is a violation the evaluator names.
    dec = plan.decisions()
    key = next(k for k in dec.shares if k[0] == "api")
    forced = Decisions(dec.shares, dec.nodes, {**dec.spot, key: dec.shares[key]})
    assert any(v.startswith("spot[api") for v in evaluate_decisions(data, forced).violations)


def test_spot_reliance_is_capped_per_pool() -> None:
    scn = small_scenario(
        [batch(gpu_hours_per_month=9000.0)],
        policy={"platforms": ["kubernetes"]},
        procurement={"max_spot_share": 0.3},
    )
    plan = cd.solve(scn)
    row = plan.placements.row(0, named=True)
    assert 0 < row["spot_share"] <= 0.3 + 1e-9
    assert not cd.evaluate(scn, plan).violations


# --- on-prem as an investment --------------------------------------------------------------


def _from_blank_page(preset: str) -> cd.Scenario:
    """A preset without its ``[current]`` estate: every owned node is bought new."""
    data = cd.load_scenario(preset).to_dict()
    data.pop("current")
    return cd.parse_scenario(data)


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.08, 0.15])
def test_longer_horizon_never_raises_onprem_cost_per_gpu_hour(rate: float) -> None:
    scn = cd.load_scenario("research-lab")
    cat = scn.catalog
    for gpu in cat.onprem:
        costs = [
            onprem_cost(
                cat.gpus[gpu], cat.onprem[gpu], cat.costs, cat.resale, h, rate
            ).usd_per_month
            for h in range(1, 241)
        ]
        assert all(b <= a + 1e-6 for a, b in pairwise(costs)), gpu


def test_longer_horizon_never_raises_the_planned_cost_of_owning() -> None:
    scn = _from_blank_page("research-lab")
    plans = [
        cd.solve(scn.update({"procurement": {"horizon_months": h}})) for h in (12, 36, 60, 120)
    ]
    costs = [p.cash_monthly_usd for p in plans]
    assert costs == sorted(costs, reverse=True)
    # Past the useful life the hardware is replaced: its monthly cost stops falling (one-offs,
    # such as standing the cluster up, still spread thinner over a longer horizon).
    hardware = [
        p.costs.filter(pl.col("component") == "gpu_capacity")["monthly_usd"][0] for p in plans
    ]
    assert hardware == sorted(hardware, reverse=True)
    assert hardware[-1] == hardware[-2]


def test_upfront_outlay_is_nodes_times_server_fabric_and_storage() -> None:
    # The lab's clusters of today are paid for: no outlay, nodes at their running costs only.
    today = cd.load_scenario("research-lab")
    kept = cd.solve(today)
    assert kept.pools["existing"].all() and kept.upfront_usd == 0.0
    assert kept.cash_flow["upfront_usd"].sum() == 0.0
    # From a blank page the same nodes are bought: the outlay is nodes × server, fabric, storage.
    scn = _from_blank_page("research-lab")
    plan = cd.solve(scn)
    cat = scn.catalog
    expected = sum(
        r["nodes"]
        * (
            cat.gpus[r["gpu_type"]].node_capex_usd
            + cat.onprem[r["gpu_type"]].fabric_usd
            + cat.onprem[r["gpu_type"]].storage_usd
        )
        for r in plan.pools.iter_rows(named=True)
    )
    assert plan.upfront_usd == pytest.approx(expected)
    assert plan.pools["upfront_usd"].sum() == pytest.approx(expected)
    assert plan.cash_flow["upfront_usd"][0] == pytest.approx(expected)
    assert plan.cash_flow.height == scn.procurement.horizon_months + 1


def test_cloud_plans_have_no_outlay_and_cash_grows_linearly() -> None:
    plan = cd.solve(cd.load_scenario())
    assert plan.upfront_usd == 0.0
    cash = plan.cash_flow["cumulative_usd"]
    assert cash[0] == 0.0
    assert cash[-1] == pytest.approx(plan.cash_monthly_usd * 36, rel=1e-6)


def test_cheapest_mode_picks_owned_or_rented_per_gpu_type() -> None:
    scn = cd.load_scenario("research-lab").update({"procurement": {"mode": "cheapest"}})
    markets = resolve_markets(scn, ["H100", "A100"])
    for m in markets.values():
        assert m.baseline is not None
        rented = resolve_markets(scn.update({"procurement": {"mode": "cloud"}}), [m.gpu])[m.gpu]
        owned = resolve_markets(scn.update({"procurement": {"mode": "on_prem"}}), [m.gpu])[m.gpu]
        assert m.node_usd_per_month == min(rented.node_usd_per_month, owned.node_usd_per_month)


def test_discount_rate_raises_the_cost_of_owning() -> None:
    scn = _from_blank_page("research-lab")
    low = cd.solve(scn.update({"procurement": {"discount_rate": 0.0}}))
    high = cd.solve(scn.update({"procurement": {"discount_rate": 0.15}}))
    assert low.cash_monthly_usd < high.cash_monthly_usd
    assert low.upfront_usd == high.upfront_usd
    # Clusters owned today are paid for: the cost of capital no longer changes what they cost.
    today = cd.load_scenario("research-lab")
    kept = [
        cd.solve(today.update({"procurement": {"discount_rate": r}})).cash_monthly_usd
        for r in (0.0, 0.15)
    ]
    assert kept[0] == kept[1] < low.cash_monthly_usd


def test_a_cheaper_gpu_lever_scales_its_market_not_replaces_it() -> None:
    scn = cd.load_scenario()
    cheaper = scn.update({"procurement": {"gpu_price_scale_by_type": {"H100": 0.9}}})
    base, low = resolve_markets(scn, ["H100"])["H100"], resolve_markets(cheaper, ["H100"])["H100"]
    assert base.baseline is not None and low.baseline is not None
    assert low.baseline.usd_per_gpu_hour == pytest.approx(0.9 * base.baseline.usd_per_gpu_hour)
    assert cd.solve(cheaper).total_monthly_usd < cd.solve(scn).total_monthly_usd
    with pytest.raises(ScenarioError, match=r"gpu_price_scale_by_type\.H1000"):
        scn.update({"procurement": {"gpu_price_scale_by_type": {"H1000": 0.9}}})


def test_spot_percents_whose_own_nodes_miss_the_wait_are_never_offered() -> None:
    """A training share on spot waits on its own spot nodes, whatever the rest of the plan is.

    Fine-tuning's 8-GPU day-long jobs on a small spot slice wait longer than its 2-hour target
    (a single spot node serves the slice); a larger slice gets more nodes and meets it. The
    model offers only the percents that meet it, and the evaluator agrees on each one.
    """
    scn = cd.load_scenario("enterprise-mixed")
    data = prepare(scn)
    key = ("model-finetuning", "k8s-batch", "H100")
    offered = data.spot_pcts[key]
    assert offered and offered[0] > 10, offered  # some small slices miss, so it is not vacuous
    dec = Decisions({key: 100}, {("k8s-batch", "H100"): 40})
    for pct in range(10, data.spot_cap_pct + 1, 10):
        ev = evaluate_decisions(data, Decisions(dec.shares, dec.nodes, {key: pct}))
        row = ev.service_levels.filter(pl.col("workload") == key[0])
        assert bool(row["met"].all()) == (pct in offered), (pct, row)
    bounds = list(build_model(data).spot_tenths[key].proto.domain)  # [lo, hi, lo, hi, ...]
    steps = {v for lo, hi in zip(bounds[::2], bounds[1::2], strict=True) for v in range(lo, hi + 1)}
    assert steps == {0} | {pct // 10 for pct in offered}


def test_a_plan_that_reserves_nothing_says_it_rents_everything() -> None:
    """A small service on its own in the cloud: a reserved node would hold 8 GPUs for work that
    peaks at 2, so every GPU-hour is rented on demand. The plan said "Peaks of L40S are rented
    on demand", "sized for its busiest hour" and "in whole nodes" of a pool with no nodes."""
    plan = cd.solve(
        small_scenario(
            [service(peak_requests_per_second=10.0)],
            team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 2.0}},
            procurement={"mode": "cloud"},
        )
    )
    assert plan.status == "optimal"
    assert plan.pools["nodes"].sum() == 0
    text = " ".join(plan.explanations)
    assert "All L40S capacity is rented on demand from" in text
    assert "where a reserved node is paid for its 8 GPUs around the clock" in text
    assert "reserves no nodes: it rents all of its" in text
    for wrong in ("Peaks of", "sized for its busiest hour", "in whole nodes"):
        assert wrong not in text


def test_peaks_are_said_with_the_most_the_plan_rents_in_an_hour_beside_the_cap() -> None:
    """The default rents H100 and H200 peaks for one Kubernetes cluster. The sentence said
    "never more than 64 GPUs in an hour": the cap the estate can count on, read as the plan's
    rent, which is 25 and 13.3 (each type's peak less its reserved GPUs, one pool each)."""
    scn = cd.load_scenario()
    plan = cd.solve(scn)
    caps = prepare(scn).markets
    for g in ("H100", "H200"):
        rows = plan.pools.filter((pl.col("gpu_type") == g) & (pl.col("burst_gpu_hours") > 0))
        assert rows.height == 1
        most = float(rows["peak_gpus"][0]) - float(rows["gpus"][0])
        said = next(s for s in plan.explanations if s.startswith(f"Peaks of {g} "))
        assert said.endswith(
            f"up to {most:,.1f} GPUs in an hour (the estate can count on {caps[g].burst_cap_gpus})."
        )
    assert "never more than" not in " ".join(plan.explanations)


def test_a_pool_that_rents_its_peaks_is_not_said_to_be_sized_for_them() -> None:
    """The default's Kubernetes cluster rents its H100 and H200 peaks; it was "sized for its
    busiest hours" and its idle H100 GPUs too, beside "rents … for its peaks". A pool that rents
    nothing (hpc-a-a100) is still sized for its busiest hours."""
    plan = cd.solve(cd.load_scenario())
    text = " ".join(plan.explanations)
    rented = plan.pools.filter(pl.col("pool") == "k8s-batch")["burst_gpu_hours"].sum()
    assert (
        f"The k8s-batch pool rents about {rented:,.0f} on-demand GPU-hours a month for its peaks "
        "instead of buying for them: its busiest hours are the same peak in"
    ) in text
    assert "The k8s-batch pool is sized for" not in text
    assert "The hpc-a-a100 pool is sized for its busiest hours" in text
    idle = [s for s in plan.explanations if s.startswith("The k8s-batch pool's H100 GPUs are busy")]
    assert len(idle) == 1 and idle[0].endswith(
        "it holds the headroom its wait and latency targets need, in whole nodes, and rents its "
        "peaks."
    )


def test_spot_that_is_no_cheaper_per_gpu_hour_says_what_it_saves() -> None:
    """A perception team's nightly decode pipeline and simulation runs share one L40S node and
    put 30% and 10% of their work on spot. Per GPU-hour spot is no cheaper than the node's
    3-year commitment, and the plan said "about $0 less than the same GPU-hours on the pools'
    own terms": what it saves is the second node the work would otherwise need."""
    plan = cd.solve(cd.load_scenario(Path(__file__).parent / "data" / "perception-team.toml"))
    assert plan.status == "optimal"
    assert plan.placements["spot_share"].max() > 0
    text = " ".join(plan.explanations)
    assert "about $0 less" not in text
    assert (
        "no cheaper per GPU-hour than the pools' own terms, but it spares the whole node, or "
        "the on-demand hours, a pool would otherwise pay for to hold that work"
    ) in text
    # Without spot the same work needs more reserved or rented capacity: the plan costs more.
    none = cd.solve(
        cd.load_scenario(Path(__file__).parent / "data" / "perception-team.toml").update(
            {"procurement": {"max_spot_share": 0.0}}
        )
    )
    assert none.total_monthly_usd > plan.total_monthly_usd


def test_one_workload_on_spot_in_two_places_is_one_share_with_its_parts() -> None:
    """An embedding shop's nightly re-embedding ran on spot on L4 and on L40S, and the plan
    said "Spot capacity carries 10% of reembed and 40% of reembed": two shares of one
    workload read as two workloads, and the sum against the 50% cap was left to the reader."""
    scn = cd.load_scenario(Path(__file__).parent / "data" / "embedding-shop.toml")
    plan = cd.solve(scn)
    spot = plan.placements.filter(pl.col("spot_share") > 0)
    assert sorted(spot["gpu_type"]) == ["L4", "L40S"]  # the case this test is about
    parts = ", ".join(
        f"{round(100 * r['spot_share'])}% on {r['gpu_type']}"
        for r in spot.sort("gpu_type").iter_rows(named=True)
    )
    total = round(100 * spot["spot_share"].sum())
    assert f"Spot capacity carries {total}% of reembed ({parts}) for" in " ".join(plan.explanations)
    assert explain._spot_share("ft", [("k8s", "H100", 20), ("shared", "H100", 30)]) == (
        "50% of ft (20% on k8s (H100), 30% on shared (H100))"
    )
    assert explain._spot_share("ft", [("k8s", "H100", 40)]) == "40% of ft"


def test_a_pool_whose_gpus_come_from_several_clouds_says_so() -> None:
    """Each GPU type is bought where it is cheapest, so the embedding shop's one Kubernetes
    cluster held CoreWeave's L40S nodes beside AWS's L4 nodes and rented its peaks and spot
    from AWS, and nothing said so. A cluster does not span clouds: the plan says what it
    assumed, and that the cost of a cluster per provider (or one provider's prices) is not in it."""
    scn = cd.load_scenario(Path(__file__).parent / "data" / "embedding-shop.toml")
    plan = cd.solve(scn)
    pools = plan.pools.filter(pl.col("pool") == "k8s-batch")
    sellers = {p.split()[0] for p in pools["provider"]}
    assert sellers == {"AWS", "CoreWeave"}  # the nodes alone come from two clouds
    said = [s for s in plan.explanations if "cloud providers" in s]
    assert said == [
        "The k8s-batch pool's GPUs come from two cloud providers, each bought where it is "
        "cheapest: AWS (L4 nodes, L4 and L40S peaks, L4 and L40S spot) and CoreWeave (L40S "
        "nodes). A cluster does not span clouds: in practice this is a cluster per provider, "
        "each built and run on its own, or everything from one provider at its prices, and "
        "neither cost is counted here."
    ]
    # One GPU type from one seller: nothing to say.
    l4 = scn.update({"workloads": [w.model_dump() | {"gpu_types": ["L4"]} for w in scn.workloads]})
    only_l4 = cd.solve(l4)
    assert only_l4.status == "optimal" and set(only_l4.pools["gpu_type"]) == {"L4"}
    assert not [s for s in only_l4.explanations if "cloud providers" in s]


def _sellers(plan: cd.Plan, pool: str | None = None) -> set[str]:
    rows = plan.pools if pool is None else plan.pools.filter(pl.col("pool") == pool)
    return {p.split()[0] for p in rows["provider"]}


@pytest.mark.parametrize("seller", ["CoreWeave", "AWS"])
def test_a_named_provider_is_the_only_one_a_plan_rents_from(seller: str) -> None:
    """``procurement.providers``: the embedding shop bought on CoreWeave (or AWS) alone rents
    its nodes, peaks and spot there, costs at least the plan that may mix clouds (it is a
    restriction of it, re-derived by ``cd.evaluate``), and has no clouds to explain."""
    scn = cd.load_scenario(Path(__file__).parent / "data" / "embedding-shop.toml")
    free = cd.solve(scn)
    one = scn.update({"procurement": {"providers": [seller]}})
    plan = cd.solve(one)
    assert plan.status == "optimal"
    assert _sellers(plan) == {seller}
    data = prepare(one)
    for m in data.markets.values():
        assert all(o is None or o.seller == seller for o in (m.baseline, m.burst, *m.spots))
    assert plan.total_monthly_usd >= free.total_monthly_usd - 0.01
    assert cd.evaluate(one, plan).total_cents / 100 == pytest.approx(plan.total_monthly_usd)
    assert not [s for s in plan.explanations if "cloud providers" in s]


def test_named_providers_leave_todays_clusters_where_they_are() -> None:
    """The default's leased Slurm clusters stand at a provider the scenario does not name. With
    ``providers = ["AWS"]`` their leases cost what they did (AWS sells no A100 and its H100 costs
    twice CoreWeave's: priced at AWS, the A100 lease would have no price and the H100 one would
    double), while the H100 nodes hpc-a could add are AWS's."""
    scn = cd.load_scenario()
    aws = scn.update({"procurement": {"providers": ["AWS"]}})
    before, after = prepare(scn), prepare(aws)
    assert [lease.committed_cents for lease in after.leases] == [
        lease.committed_cents for lease in before.leases
    ]
    assert after.node_cost("hpc-a", "H100") == before.node_cost("hpc-a", "H100")
    assert after.added_node_cost("hpc-a", "H100") == after.node_cents["H100"]
    assert after.node_cents["H100"] > 1.9 * before.node_cents["H100"]
    a100 = after.pool("hpc-a-a100")
    assert not a100.grows_today and a100.node_limit("A100") == 4  # AWS sells no A100
    plan = cd.solve(aws)
    assert plan.status == "optimal"
    new = plan.pools.filter(~pl.col("pool").is_in(["hpc-a", "hpc-a-a100"]))
    assert _sellers(plan, None) >= {"AWS"} and {p.split()[0] for p in new["provider"]} == {"AWS"}


@pytest.mark.parametrize(
    ("providers", "where", "message"),
    [
        (["Coreweave"], "procurement.providers[0]", "did you mean 'CoreWeave'?"),
        (["aws"], "procurement.providers[0]", "did you mean 'AWS'?"),
        (["Lambda"], "procurement.providers[0]", "known: AWS, Azure, CoreWeave, Nebius, RunPod"),
        (
            ["RunPod"],
            "procurement.providers[0]",
            "add 'marketplace' to procurement.provider_classes",
        ),
        (["AWS", "AWS"], "procurement.providers[1]", "lists 'AWS' twice"),
        ([], "procurement.providers", "expected at least one item"),
    ],
)
def test_providers_name_allowed_catalog_sellers(
    providers: list[str], where: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        small_scenario([training()], procurement={"providers": providers})
    text = str(info.value)
    assert f"test.toml: {where}: " in text and message in text


def test_a_workload_no_named_provider_can_serve_says_whom_to_add() -> None:
    """Bought on Nebius alone the default cannot run its L4/L40S feature pipeline: the
    diagnosis names the company to add, checked by solving."""
    scn = cd.load_scenario().update({"procurement": {"providers": ["Nebius"]}})
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    assert "no allowed provider sells L4 for a pool's baseline nodes" in " ".join(plan.explanations)
    fix = plan.relaxations.row(0, named=True)
    assert fix["change"] == "provider:AWS"
    assert fix["sentence"].startswith(
        "Rent from AWS too ([procurement] providers): no listed provider (Nebius) sells L4, L40S"
    )
    fixed = scn.update({"procurement": {"providers": ["Nebius", "AWS"]}})
    assert cd.solve(fixed).feasible


def test_a_gpu_type_no_allowed_seller_rents_on_demand_never_bursts() -> None:
    """An on-prem estate that allows only GPU clouds, with an L4 service: no GPU cloud sells L4
    on demand, so its pool's peaks must be its own nodes. The burst price of a type without an
    on-demand offer was 0, and the plan ran the service on free bursts and no node at all."""
    scn = small_scenario(
        [embeddings()],
        procurement={"mode": "on_prem", "provider_classes": ["gpu_cloud"]},
    )
    data = prepare(scn)
    assert data.markets["L4"].burst is None
    assert not any(data.bursts(p.name, "L4") for p in data.pools)
    assert data.pool("k8s").bursts  # the platform autoscales; the market has nothing to rent
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert plan.pools["burst_gpu_hours"].sum() == 0
    assert plan.pools["nodes"].sum() > 0
    # Named companies that sell no L40S on demand: a leased L40S cluster of today keeps its own
    # nodes, but its L40S peaks are not free either (Nebius alone cost less than the plan that
    # may rent from anyone on a Kubernetes shop's estate, before).
    today = small_scenario(
        [service("api", gpu_types=["L40S"])],
        current={
            "as_of": "2026-12",
            "workloads": {"api": {"platform": "kubernetes"}},
            "clusters": [
                {
                    "name": "prod",
                    "platform": "kubernetes",
                    "gpu_type": "L40S",
                    "nodes": 6,
                    "ownership": "leased",
                }
            ],
        },
    )
    nebius = today.update({"procurement": {"providers": ["Nebius"]}})
    assert prepare(today).bursts("prod", "L40S") and not prepare(nebius).bursts("prod", "L40S")
    alone = cd.solve(nebius)
    assert alone.status == "optimal" and alone.pools["burst_gpu_hours"].sum() == 0
    assert alone.total_monthly_usd >= cd.solve(today).total_monthly_usd - 0.01
