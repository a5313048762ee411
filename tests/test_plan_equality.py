"""Plans compare by their JSON form: the same answer twice is equal, a different one is not."""

from __future__ import annotations

import dataclasses

import cluster_decide as cd


def test_plans_compare_by_their_json(default_scenario: cd.Scenario, default_plan: cd.Plan) -> None:
    again = cd.solve(default_scenario, time_limit_s=30)
    assert again == default_plan and hash(again) == hash(default_plan)
    assert again.to_json() == default_plan.to_json()
    timed = dataclasses.replace(again, wall_time_s=again.wall_time_s + 5, gap=0.5)
    assert timed == default_plan  # timing and gap are not part of the answer
    cheaper = dataclasses.replace(again, total_monthly_usd=again.total_monthly_usd - 1)
    assert cheaper != default_plan
    other = cd.solve(cd.load_scenario("research-lab"), time_limit_s=30)
    assert other != default_plan
    assert len({default_plan, again, other}) == 2
    assert default_plan != default_plan.to_dict()
