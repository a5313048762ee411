"""The cluster a workload runs on today (``[current.workloads.NAME] cluster``).

A company runs an API on a managed serving cluster of L40S nodes and 32-GPU training, queued by
Kueue, on a managed training cluster of 8 leased H100 nodes. Before the key existed, the two
clusters were both plain Kubernetes to the model: the plan handed back the training cluster's
lease, added 8 H100 nodes to the serving cluster and installed Kueue there again, a migration
an expert rejects at the same cost. Naming each workload's cluster tells the model where Kueue
runs and what moving a workload to the other cluster costs.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import component_usd, service, small_scenario, training

import cluster_decide as cd
from cluster_decide.analysis.today import today_plan, today_vs_plan
from cluster_decide.export import gather, sections
from cluster_decide.model.data import prepare
from cluster_decide.planning.evaluation import Decisions, evaluate_decisions
from cluster_decide.planning.explain import money


def l40s_api(name: str, peak_requests_per_second: float) -> dict[str, Any]:
    """A containerized API on L40S (half a GPU-second a request, p99 within 5 s)."""
    return service(
        name,
        interface="containers",
        gpu_types=["L40S"],
        peak_requests_per_second=peak_requests_per_second,
        gpu_seconds_per_request=0.5,
        p99_latency_ms=5000.0,
        requires=["autoscaling", "self_healing"],
    )


def two_clusters(named: bool = True, **team: Any) -> cd.Scenario:
    """The serving and training clusters; each workload names its cluster when ``named``."""
    api = {"platform": "kubernetes"} | ({"cluster": "serve"} if named else {})
    train = {"platform": "kubernetes_batch"} | ({"cluster": "train"} if named else {})
    leased = {"platform": "kubernetes", "managed": True, "ownership": "leased"}
    return small_scenario(
        [
            l40s_api("api", 20.0),
            training(
                "train",
                interface="containers",
                gpus_per_job=32,
                gpu_hours_per_month=20000.0,
                max_queue_wait_hours=12.0,
            ),
        ],
        team=team or {"hpc": {"fte": 0.0}, "kubernetes": {"fte": 3.0}},
        procurement={"mode": "cloud", "horizon_months": 24},
        current={
            "as_of": "2026-12",
            "workloads": {"api": api, "train": train},
            "clusters": [
                {"name": "serve", "gpu_type": "L40S", "nodes": 2} | leased,
                {"name": "train", "gpu_type": "H100", "nodes": 8} | leased,
            ],
        },
    )


def too_few_engineers() -> cd.Scenario:
    """The two clusters self-managed, with 0.8 Kubernetes FTE and no hiring: too few for both."""
    return two_clusters(hpc={"fte": 0.0}, kubernetes={"fte": 0.8}).update(
        {
            "hiring": {"allowed": False},
            "current": {
                "clusters": [
                    {"name": n, "gpu_type": g, "nodes": k, "platform": "kubernetes"}
                    | {"ownership": "leased"}
                    for n, g, k in (("serve", "L40S", 2), ("train", "H100", 8))
                ]
            },
        }
    )


def test_each_workload_stays_on_its_cluster_and_kueue_is_not_installed_again() -> None:
    scn = two_clusters()
    data = prepare(scn)
    # The training cluster runs Kueue today: it is that kind under its own name, built already.
    assert data.pool("train").platform == "kubernetes_batch"
    assert "train+batch" not in {p.name for p in data.pools}
    assert "serve+batch" in {p.name for p in data.pools}
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    placed = {r["workload"]: r["pool"] for r in plan.placements.iter_rows(named=True)}
    assert placed == {"api": "serve", "train": "train"}
    assert plan.one_time_usd == 0.0
    assert plan.transition["action"].to_list() == ["keep", "keep"]
    text = " ".join(plan.explanations)
    assert (
        "It keeps these where they run today: api on the serve cluster; train on the train" in text
    )
    # Its only node-less cluster keeps none of its own nodes, but it is not "unused": api runs
    # there on rented GPUs.
    assert "The serve cluster keeps none of its 2 L40S nodes" in text
    assert "leaves the serve cluster" not in text


def test_without_the_clusters_named_the_add_on_may_be_installed_on_either() -> None:
    data = prepare(two_clusters(named=False))
    assert {"serve+batch", "train+batch"} <= {p.name for p in data.pools}
    assert data.pool("train").platform == "kubernetes"


def test_moving_a_workload_to_a_sibling_cluster_costs_a_relocation() -> None:
    # Keeping api at home is $87 a month cheaper than moving it beside training (a managed
    # control plane's fee against a week of work spread over two years); the model must not
    # rule its home cluster out as a twin of the training one (``build.dominated_pairs``).
    scn = two_clusters()
    data = prepare(scn)
    plan = cd.solve(scn)
    home = plan.decisions()
    moved = Decisions(
        {("api", "train", "L40S"): 100, ("train", "train", "H100"): 100},
        dict(home.nodes),
        {},
        frozenset({"train"}),
    )
    stay, away = evaluate_decisions(data, home), evaluate_decisions(data, moved)
    assert stay.feasible and away.feasible
    assert away.relocated == ("api",) and stay.relocated == ()
    people = data.people
    assert people is not None
    relocation = people.moves["api"].relocate_cents
    assert away.costs_cents["migration"] == relocation > 0
    # 1 engineer-week at a Kubernetes engineer's loaded cost, spread over 24 months.
    week = scn.loaded_cost_usd_per_year("kubernetes") / 52.0
    assert relocation == round(week / 24 * 100)
    assert stay.total_cents < away.total_cents
    assert plan.total_monthly_usd * 100 == pytest.approx(stay.total_cents, abs=1)


def test_a_team_too_small_for_two_clusters_moves_both_and_pays_for_it() -> None:
    # 0.8 FTE cannot run two self-managed clusters: both workloads go to one managed cluster,
    # and each relocation is a cost and a sentence.
    scn = too_few_engineers()
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    t = {r["workload"]: r for r in plan.transition.iter_rows(named=True)}
    assert t["api"]["action"] == "relocate" and t["train"]["action"] == "relocate"
    data = prepare(scn)
    assert data.people is not None
    cents = data.people.moves["api"].relocate_cents
    assert component_usd(plan, "migration") == pytest.approx(2 * cents / 100.0)
    assert t["api"]["monthly_usd"] == pytest.approx(cents / 100.0)
    text = " ".join(plan.explanations)
    assert "Moving api from the serve cluster to a new Kubernetes cluster (k8s-batch) costs" in text
    assert "(1 engineer-week:" in text
    ev = cd.evaluate(scn, plan)
    assert ev.feasible and ev.total_cents == pytest.approx(plan.total_monthly_usd * 100, abs=1)
    assert set(ev.relocated) == {"api", "train"}
    today = today_vs_plan(scn, plan, plan)
    moves = today.filter(today["item"] == "moves")["plan"].item()
    assert moves == "2: api (serve to k8s-batch); train (train to k8s-batch)"
    # The transition names the clusters, and the deck's today slide says them.
    assert (t["api"]["today_cluster"], t["api"]["planned_clusters"]) == ("serve", "k8s-batch")
    assert (t["train"]["today_cluster"], t["train"]["planned_clusters"]) == ("train", "k8s-batch")
    story = {s.key: s for s in sections(gather(plan, scn))}
    table = next(s.table for s in story.values() if s.table and "Runs today on" in s.table.columns)
    rows = {r[0]: r for r in table.rows}
    cols = table.columns
    api = rows["API"]
    assert api[cols.index("Runs today on")] == "Kubernetes, serve cluster"
    assert api[cols.index("Planned on")] == "Kubernetes + batch add-on, a new cluster"
    assert api[cols.index("Change")] == "Changes cluster"
    # The train cluster keeps its name though a workload is called train too.
    today = next(s for s in story.values() if s.table is table)
    said = " ".join([today.lead, *today.bullets])
    assert "leaves the train cluster (8 H100 nodes) unused" in said, said


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"platform": "kubernetes", "cluster": "serv"}, "no cluster named 'serv'"),
        (
            {"platform": "slurm", "cluster": "serve"},
            "'api' runs on slurm today, but cluster 'serve' is kubernetes",
        ),
    ],
)
def test_a_cluster_that_is_not_listed_or_of_another_platform_is_refused(
    workload: dict[str, str], message: str
) -> None:
    with pytest.raises(cd.ScenarioError) as err:
        two_clusters().update({"current": {"workloads": {"api": workload}}})
    text = str(err.value)
    assert "current.workloads.api.cluster" in text and message in text


def test_a_plain_service_may_name_a_cluster_that_runs_the_add_on() -> None:
    scn = two_clusters().update(
        {
            "current": {
                "clusters": [
                    {"name": "serve", "gpu_type": "L40S", "nodes": 2, "ownership": "leased"}
                    | {"platform": "kubernetes_batch"},
                    {"name": "train", "gpu_type": "H100", "nodes": 8, "ownership": "leased"}
                    | {"platform": "kubernetes"},
                ]
            }
        }
    )
    assert prepare(scn).pool("serve").platform == "kubernetes_batch"
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    assert not plan.transition.filter(plan.transition["action"] == "relocate").height


def test_hold_keeps_each_workload_on_its_cluster_and_today_says_why_it_cannot() -> None:
    held = two_clusters().update({"current": {"hold": True}})
    data = prepare(held)
    assert data.combos[("api", "train", "L40S")].blocked_family == "policy"
    assert "held on the serve cluster" in data.combos[("api", "train", "L40S")].blocked
    assert not data.combos[("api", "serve", "L40S")].blocked
    # 0.8 FTE cannot run today's two self-managed clusters: the estate as it is has no plan,
    # and the today column says why rather than pricing a consolidation as "today".
    tight = too_few_engineers()
    today = today_plan(tight)
    assert today.status == "infeasible"
    table = today_vs_plan(tight, cd.solve(tight), today)
    cell = table.filter(table["item"] == "platforms")["today"].item()
    assert cell.startswith("no plan keeps every workload where it runs today: the leanest plan")
    assert "0.8 are on staff and hiring is not allowed" in cell


def test_one_held_workload_stays_and_the_diagnosis_offers_to_release_it() -> None:
    # Policy keeps the API on its own (self-managed) cluster: with 0.8 FTE that cannot run
    # beside a second cluster for training, and the smallest changes include letting it move.
    free = too_few_engineers()
    held = free.update({"current": {"workloads": {"api": {"hold": True}}}})
    data = prepare(held)
    assert data.combos[("api", "k8s", "L40S")].blocked_family == "policy"
    assert not data.combos[("train", "k8s-batch", "H100")].blocked  # the rest may still move
    plan = cd.solve(held)
    assert plan.status == "infeasible"
    release = "Let api move off the serve cluster (drop its hold): the best plan then costs"
    fix = next(s for s in plan.explanations if s.startswith(release))
    assert money(cd.solve(free).total_monthly_usd) in fix


def test_more_held_clusters_than_the_pool_limit_offers_to_lift_the_limit() -> None:
    """Five clusters of today, each service held on its own, under ``max_pools = 4``: lifting
    the limit fixes it. The diagnosis lifted it to four (one pool per platform kind), which
    fixed nothing, so it offered only to drop the holds, and said "the constraints conflict in
    combination"."""
    names = "abcde"
    scn = small_scenario(
        [l40s_api(f"api-{n}", 5.0) for n in names],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 5.0}},
        procurement={"mode": "cloud", "horizon_months": 24},
        policy={"max_pools": 4},
        current={
            "as_of": "2026-12",
            "hold": True,
            "workloads": {
                f"api-{n}": {"platform": "kubernetes", "cluster": f"k-{n}"} for n in names
            },
            "clusters": [
                {"name": f"k-{n}", "platform": "kubernetes", "gpu_type": "L40S", "nodes": 1}
                | {"managed": True, "ownership": "leased"}
                for n in names
            ],
        },
    )
    plan = cd.solve(scn)
    assert plan.status == "infeasible"
    fixes = dict(zip(plan.relaxations["change"], plan.relaxations["sentence"], strict=True))
    assert fixes["max_pools"].startswith("Lift the limit of 4 pools (policy.max_pools)")
    assert (
        "Why: workloads held where they run keep 5 clusters of today (k-a, k-b, k-c, k-d, k-e), "
        "more than the 4 pools policy.max_pools allows." in plan.explanations
    )
    lifted = cd.solve(scn.update({"policy": {"max_pools": None}}))
    assert lifted.status == "optimal" and len(lifted.decisions().open_pools()) == 5
