"""A job runs only on an instance that holds it: spot and on-demand GPUs priced per instance shape.

AWS sells L40S by the single GPU (g6e.xlarge, $1.86 on demand, $1.10 spot) and by the 8-GPU
node (g6e.48xlarge). The catalog's cheapest spot and on-demand L40S offers are the single-GPU
instance's, and a retailer on AWS alone (``tests/data/retailer-aws.toml``) had half of its
weekly 8-GPU fine-tune planned on single-GPU spot at $1.10: no such job runs there. Its 8-GPU
jobs now get no L40S spot (the catalog has no 8-GPU L40S spot price) and no L40S bursts.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

import cluster_decide as cd
from cluster_decide.inputs.market import resolve_markets
from cluster_decide.model.data import prepare

RETAILER = Path(__file__).parent / "data" / "retailer-aws.toml"


def test_spot_is_the_cheapest_offer_whose_instance_holds_the_job() -> None:
    scn = cd.load_scenario(RETAILER)
    l40s = resolve_markets(scn, ["L40S"])["L40S"]
    single = l40s.spot_for(1, 8)
    assert single is not None and single.provider == "AWS g6e.xlarge"
    assert single.gpus_per_instance == 1
    assert l40s.spot_for(8, 8) is None  # no 8-GPU L40S spot price in the catalog
    h100 = resolve_markets(scn, ["H100"])["H100"].spot_for(8, 8)
    assert h100 is not None and h100.holds(8, 8)


def test_jobs_larger_than_the_on_demand_instance_stay_off_bursts() -> None:
    scn = cd.load_scenario(RETAILER)
    data = prepare(scn)
    pool = next(p.name for p in data.pools if "L40S" in p.gpu_types and data.bursts(p.name, "L40S"))
    assert not data.off_burst(pool, "L40S", 1)
    assert data.off_burst(pool, "L40S", 4)  # the g6e.xlarge holds one L40S
    assert not data.off_burst(pool, "H100", 8)  # the p5.48xlarge holds a whole node


def test_no_multi_gpu_job_is_planned_on_a_single_gpu_instance() -> None:
    scn = cd.load_scenario(RETAILER)
    # Held to L40S, the fine-tune runs on the pool's own 8-GPU nodes, on no spot at all.
    data = scn.to_dict()
    for w in data["workloads"]:
        if w["name"] == "ranker-finetune":
            w["gpu_types"] = ["L40S"]
    l40s_only = cd.parse_scenario(data, source="retailer, fine-tune on L40S")
    for s in (scn, l40s_only):
        plan = cd.solve(s)
        assert plan.status == "optimal"
        assert not cd.evaluate(s, plan).violations
        tune = plan.placements.filter(pl.col("workload") == "ranker-finetune")
        on_l40s = tune.filter(pl.col("gpu_type") == "L40S")
        assert (on_l40s["spot_share"] == 0).all()
        own = plan.pools.filter(pl.col("gpu_type") == "L40S")["gpus"].sum()
        assert own >= 8 * on_l40s.height
    assert on_l40s.height == 1  # the held one did run on L40S
