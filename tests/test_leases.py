"""Leases of today's clusters: paid until they end whether the plan uses them or not.

A bank runs its fine-tuning on a Slurm cluster of 8 H100 nodes reserved in the cloud until
June 2027 and its chat service on Kubernetes; the plan starts in December 2026 and looks 36
months ahead. A head of platform expects the first 7 months of the lease to be paid whatever
the plan does, the cluster to be kept while it is paid for, and the cash to fall when the lease
ends.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from builders import chat_service, component_usd, fine_tuning, service, small_scenario
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cluster_decide as cd
from cluster_decide.model.data import lease_months, prepare
from cluster_decide.planning.evaluation import evaluate_decisions

NODES = 8


def bank(leased_until: str | None = "2027-06", **changes: Any) -> cd.Scenario:
    """Fine-tuning on a leased Slurm cluster, a chat service on Kubernetes."""
    workloads = [fine_tuning(), chat_service()]
    cluster: dict[str, Any] = {
        "name": "hpc-a",
        "platform": "slurm",
        "gpu_type": "H100",
        "nodes": NODES,
        "ownership": "leased",
    }
    if leased_until is not None:
        cluster["leased_until"] = leased_until
    data: dict[str, Any] = {
        "team": {"hpc": {"fte": 2.0}, "kubernetes": {"fte": 3.0}},
        "procurement": {"mode": "cloud"},
        "current": {
            "as_of": "2026-12",
            "workloads": {
                "finetune": {"platform": "slurm", "users": 20},
                "chat": {"platform": "kubernetes", "users": 4},
            },
            "clusters": [cluster],
        },
    }
    data.update(changes)
    return small_scenario(workloads, **data)


def test_lease_months_count_both_ends_within_the_horizon() -> None:
    assert lease_months("2026-12", "2027-06", 36) == 7
    assert lease_months("2026-12", "2027-06-30", 36) == 7
    assert lease_months("2026-12", "2026-11", 36) == 0
    assert lease_months("2026-12", "2031-01", 36) == 36


def test_a_lease_is_paid_whether_the_plan_uses_the_cluster_or_not() -> None:
    scn = bank()
    data = prepare(scn)
    price = data.node_cents["H100"] / 100.0
    committed = NODES * price * 7 / 36
    kept = cd.solve(scn)
    assert kept.feasible
    assert component_usd(kept, "leases") == pytest.approx(committed, abs=0.5)
    # Ruling Slurm out does not end the lease: the plan still pays it, for nothing.
    gone = cd.solve(scn.restrict_platforms(["kubernetes", "kubernetes_batch"]))
    assert gone.feasible
    assert component_usd(gone, "leases") == pytest.approx(committed, abs=0.5)
    assert gone.total_monthly_usd >= kept.total_monthly_usd
    text = " ".join(gone.explanations)
    assert "hpc-a lease (8 H100 nodes) is paid for the first 7 of the plan's 36 months" in text
    assert "leaves the cluster unused" in text
    # A node kept on the leased cluster costs only the months after the lease.
    assert data.node_cost("hpc-a", "H100") == round(data.node_cents["H100"] * 29 / 36)


def test_a_lease_that_covers_the_horizon_keeps_the_work_on_the_cluster() -> None:
    # Paid for all 36 months, the leased nodes cost nothing more to use: fine-tuning stays on
    # them rather than buying capacity elsewhere, and the lease is the whole capacity bill there.
    scn = bank(leased_until="2030-12")
    data = prepare(scn)
    assert data.node_cost("hpc-a", "H100") == 0
    plan = cd.solve(scn)
    placed = plan.placements.filter(pl.col("workload") == "finetune")
    assert set(placed["pool"]) == {"hpc-a"}, placed
    row = plan.transition.filter(pl.col("workload") == "finetune").row(0, named=True)
    assert row["action"] == "keep"
    assert component_usd(plan, "leases") == pytest.approx(
        NODES * data.node_cents["H100"] / 100, abs=0.5
    )


def test_a_rolling_lease_without_an_end_is_not_committed() -> None:
    plan = cd.solve(bank(leased_until=None))
    assert component_usd(plan, "leases") == 0.0


def test_cash_flow_pays_the_lease_while_it_runs_and_drops_after() -> None:
    scn = bank()
    data = prepare(scn)
    plan = cd.solve(scn)
    ev = evaluate_decisions(data, plan.decisions())
    assert ev.feasible, ev.violations
    assert math.isclose(ev.total_cents / 100, plan.total_monthly_usd, abs_tol=0.01)
    used = dict(zip(plan.pools["pool"], plan.pools["nodes"], strict=False)).get("hpc-a", 0)
    flow = plan.cash_flow
    first, last = flow["monthly_usd"][1], flow["monthly_usd"][36]
    price = data.node_cents["H100"] / 100.0
    assert first - last == pytest.approx((NODES - used) * price, abs=1.0)
    # The month-by-month cash adds up to the level monthly figure over the horizon.
    assert float(flow["monthly_usd"].sum()) == pytest.approx(
        ev.cash_cents / 100.0 * 36, rel=1e-6, abs=36.0
    )


def test_lease_keys_are_checked() -> None:
    with pytest.raises(cd.ScenarioError, match=r"current\.clusters\[0\]\.leased_until.*as_of"):
        bank(
            current={
                "clusters": [
                    {
                        "name": "a",
                        "platform": "slurm",
                        "gpu_type": "H100",
                        "nodes": 2,
                        "ownership": "leased",
                        "leased_until": "2027-06",
                    }
                ]
            }
        )
    with pytest.raises(cd.ScenarioError, match=r"current\.clusters\[0\]\.leased_until.*owned"):
        bank(
            current={
                "as_of": "2026-12",
                "clusters": [
                    {
                        "name": "a",
                        "platform": "slurm",
                        "gpu_type": "H100",
                        "nodes": 2,
                        "leased_until": "2027-06",
                    }
                ],
            }
        )


def test_a_managed_cluster_of_today_is_not_read_as_owned_hardware() -> None:
    # An EKS cluster listed with managed = true and no ownership was priced as owned nodes
    # (power and space only) and kept busy for that; it is refused, naming the key and the fix.
    eks = {"name": "eks", "platform": "kubernetes", "gpu_type": "H100", "nodes": 4}
    with pytest.raises(cd.ScenarioError, match=r"current\.clusters\[0\]\.managed.*leased"):
        bank(current={"clusters": [{**eks, "managed": True}]})
    leased = bank(current={"clusters": [{**eks, "managed": True, "ownership": "leased"}]})
    assert leased.current is not None and leased.current.clusters[0].managed


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(months=st.integers(0, 30), extra=st.integers(1, 12))
def test_a_longer_lease_costs_at_most_its_extra_months(months: int, extra: int) -> None:
    # Same decisions under a longer lease cost (N - n) × price × extra / H more, so the optimum
    # never falls and never rises by more than N × price × extra / H.
    def until(m: int) -> str:
        total = 2026 * 12 + 11 + m - 1  # from 2026-12, m months in
        return f"{total // 12}-{total % 12 + 1:02d}"

    short, long = bank(leased_until=until(months)), bank(leased_until=until(months + extra))
    price = prepare(short).node_cents["H100"] / 100.0
    a, b = cd.solve(short).total_monthly_usd, cd.solve(long).total_monthly_usd
    assert a - 0.01 <= b <= a + NODES * price * extra / 36 + 0.01


def test_a_leased_cluster_left_idle_says_what_it_could_carry_while_it_runs() -> None:
    """A start-up leases 6 H100 nodes at AWS until December 2027 for its chat service; the
    plan moves the service to a cheaper cloud (4 nodes and their peaks) and leaves the lease,
    paid for 13 more months, idle. The model averages costs over the 36 months, so it cannot
    say "stay until the lease ends, then move"; the plan now says what the idle nodes could
    carry meanwhile and what using them first would save."""
    scn = small_scenario(
        [
            service(
                "chat",
                gpu_types=["H100"],
                peak_requests_per_second=120.0,
                gpu_seconds_per_request=0.5,
                profile="diurnal",
            )
        ],
        team={"hpc": {"fte": 0.0}, "kubernetes": {"fte": 2.0}},
        procurement={"mode": "cloud", "horizon_months": 36},
        current={
            "as_of": "2026-12",
            "clusters": [
                {
                    "name": "eks-h100",
                    "platform": "kubernetes",
                    "gpu_type": "H100",
                    "nodes": 6,
                    "ownership": "leased",
                    "leased_until": "2027-12",
                    "provider": "AWS",
                }
            ],
            "workloads": {"chat": {"platform": "kubernetes", "cluster": "eks-h100"}},
        },
    )
    plan = cd.solve(scn)
    assert plan.status == "optimal"
    nodes = dict(zip(plan.pools["pool"], plan.pools["nodes"], strict=True))
    assert nodes.get("eks-h100", 0) == 0 and nodes["k8s"] == 4, nodes
    [said] = [s for s in plan.explanations if s.startswith("The eks-h100 lease")]
    assert "the plan leaves the cluster unused, so that money buys nothing" in said
    assert (
        "; while the lease runs, its 6 unused nodes could carry 90% of the k8s pool's H100 "
        "work, about $22k a month (averaged over the plan) that using them first would save."
    ) in said, said
