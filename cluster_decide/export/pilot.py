"""The pilot the deck proposes: the scenario's own workloads on the clusters the plan uses.

Four workloads (multi-node training, fine-tuning, a batch pipeline, an inference endpoint),
the largest of each kind, and four operational tests (failure injection, node replacement,
quota enforcement, cost reporting), each with what to run and what to measure. Workloads and
clusters are named by display name; figures use the exports' formatters.
"""

from __future__ import annotations

from typing import Any, Final

import polars as pl

from cluster_decide.export.words import Names, display, effort, gpu_hours, level, usd
from cluster_decide.plan import Plan
from cluster_decide.scenario import Scenario
from cluster_decide.vocabulary import PLATFORM_LABELS

__all__ = ["PILOT_COLUMNS", "pilot_plan"]

PILOT_COLUMNS: Final = ("test", "workload", "where", "run", "measure", "why")
"""Columns of :func:`pilot_plan`."""
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


def _platform(platform: str) -> str:
    return PLATFORM_LABELS.get(platform, platform)


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
    return " and ".join(
        f"{names.pool(r['pool'])} ({r['gpu_type']}"
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
    names = Names.of(plan, scenario)

    def add(
        test: str, picked: pl.DataFrame, run: str, measure: str, why: str, where: str = "–"
    ) -> None:
        name = names.workload(picked["workload"][0]) if picked.height else "none in this scenario"
        rows.append(
            {
                "test": test,
                "workload": name,
                "where": _where(picked, names) if picked.height else where,
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
            f"A {nodes}-node slice of {names.workload(w)} (the full job needs {gang:,} GPUs at "
            "once), "
            "checkpointing every 30 minutes.",
            "Time for the whole gang to start; all-reduce bandwidth against the fabric's rating; "
            f"GPU utilization{_utilization(scenario, first['platform'], first['kind'])}"
            + (f"; queue wait against the {level(wait)} h target." if wait else "."),
            "Gang scheduling and topology-aware placement decide where this runs; the pilot "
            "shows they work at this network's scale.",
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
                f"{names.pool(largest['pool'][0])} ({largest['gpu_type'][0]})"
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
            f"A day of {names.workload(w)} jobs submitted the way its team works"
            + (
                f" ({'Slurm job scripts' if interface == 'slurm' else 'containers'})"
                if interface
                else ""
            )
            + (", in every part of the estate it is split across." if tune.height > 1 else ".")
        )
        if w
        else "A single-node fine-tuning job on the training pool.",
        "Queue wait"
        + (f" against the {level(wait)} h target" if wait else "")
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
        f"One night's run of {names.workload(w)}, end to end, with one stage made to fail."
        if w
        else "A nightly batch job of a few GPUs through the pipeline tooling.",
        ("Completion within the " + (f"{level(window)} h" if window else "nightly") + " window")
        + "; retries of the failed stage"
        + (
            f"; on-demand GPU-hours against the {gpu_hours(burst)} a month the plan rents."
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
            f"{names.workload(w)} served at its peak"
            + (f" of {rps:,.0f} requests/s" if rps else "")
            + " from production-style traffic, with a rolling update mid-test."
        )
        if w
        else "A small model behind a production-style endpoint, with a rolling update mid-test.",
        "p99 latency"
        + (f" against {level(target)} ms" if target else "")
        + (
            f" (the model predicts {level(max(predicted.to_list()))} ms)"
            if predicted is not None and len(predicted)
            else ""
        )
        + "; scale-up time"
        + (f" against the {lag:.0f} minutes assumed" if lag else "")
        + "; failed requests during the rollout.",
        "Services need autoscaling, self-healing and rolling updates: this is where the "
        "Kubernetes side earns its place.",
    )
    pools = plan.pools.unique(subset=["pool"], maintain_order=True)
    platforms = pools["platform"].to_list()
    pool_names = ", ".join(names.pool(p) for p in pools["pool"].to_list()) or "the pilot pools"
    victims = []
    if train.height:
        victims.append(
            f"a node under {names.workload(train['workload'][0])} "
            f"in the {names.pool(train['pool'][0])}"
        )
    if serve.height:
        victims.append(
            f"a serving replica of {names.workload(serve['workload'][0])} and its node in the "
            f"{names.pool(serve['pool'][0])}"
        )
    if not victims:
        victims.append(f"a node under the pilot workloads in {pool_names}")
    teams = sorted({display(w.team) for w in scenario.workloads if w.team}) if scenario else []
    per_node = ""
    if scenario is not None and platforms:
        # Quote the catalog's own figures, as the assumptions table prints them.
        parts = []
        for kind in sorted(set(platforms)):
            node_fte = sum(
                scenario.catalog.platforms[kind].fte(s, "per_100_nodes")
                for s in ("hpc", "kubernetes")
            )
            parts.append(f"{effort(node_fte)} on {_platform(kind)}")
        per_node = f" (the staffing model assumes {' and '.join(parts)} FTE per 100 nodes)"
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
            f"bill ({usd(plan.cash_monthly_usd)} a month of cash in the plan); idle GPU-hours "
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
