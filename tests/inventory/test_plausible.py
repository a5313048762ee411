"""The derived-workload check of `ingest` agrees with the scenario model it stands in for.

`ingest` checks derived workloads without loading the scenario model (pydantic), so these tests
hold the two together: the same ranges, the same name rule, and the same verdict on each value
set into a real derived scenario.
"""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from cluster_decide.base.errors import ScenarioError
from cluster_decide.inputs.scenario import Name, parse_scenario, scenario_ranges
from cluster_decide.inventory.demand import scenario_document
from cluster_decide.inventory.errors import InventoryError
from cluster_decide.inventory.ingest import ingest
from cluster_decide.inventory.plausible import NAME_PATTERN, WORKLOAD_RANGES, check_workloads
from cluster_decide.inventory.synthetic import generate_sacct


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Workloads derived from a synthetic export holding every kind of workload."""
    export = tmp_path_factory.mktemp("plausible") / "jobs.txt"
    export.write_text(generate_sacct("enterprise-mixed", days=7, seed=1, scale=0.02))
    return ingest([export]).demand.workloads


def test_the_ranges_are_the_scenario_models() -> None:
    model = {
        path.removeprefix("workloads[]."): rng
        for path, rng in scenario_ranges()
        if path.startswith("workloads[].")
    }
    assert {key: model[key] for key in WORKLOAD_RANGES} == WORKLOAD_RANGES
    assert TypeAdapter(Name).json_schema()["pattern"] == NAME_PATTERN


def test_every_ranged_key_derivation_writes_is_checked(derived: list[dict[str, Any]]) -> None:
    model = {p.removeprefix("workloads[].") for p, _ in scenario_ranges() if "workloads[]" in p}
    written = {key for wl in derived for key in wl}
    assert written & model <= set(WORKLOAD_RANGES)
    assert {wl["kind"] for wl in derived} >= {"realtime_inference", "experimentation"}


def _verdicts(workloads: list[dict[str, Any]]) -> tuple[bool, bool]:
    """(refused by check_workloads, refused by the scenario model) for one derived document."""
    try:
        check_workloads(workloads, target="s.toml", logs="jobs.txt")
        light = False
    except InventoryError:
        light = True
    try:
        parse_scenario(scenario_document(workloads), source="s.toml")
        model = False
    except ScenarioError:
        model = True
    return light, model


def test_the_check_and_the_scenario_model_agree_value_by_value(
    derived: list[dict[str, Any]],
) -> None:
    assert _verdicts(derived) == (False, False)
    tried = 0
    for key, rng in WORKLOAD_RANGES.items():
        # A key no derived workload holds (arrival_scv: flat profiles only) goes on a training one.
        training = next(i for i, wl in enumerate(derived) if wl["kind"] == "fine_tuning")
        index = next((i for i, wl in enumerate(derived) if key in wl), training)
        values: list[Any] = [rng.lo, rng.hi, rng.hi * 1.5 + 1, -1, math.nan, math.inf, True, "8"]
        values += [rng.lo - 1e-6, 10**30, 8.5] if rng.integer else [rng.lo / 2, 1e300]
        for value in values:
            workloads = copy.deepcopy(derived)
            workloads[index][key] = value
            light, model = _verdicts(workloads)
            assert light == model, (key, value, light, model)
            tried += 1
    for key, value in (
        ("name", "研究-training"),
        ("name", "-x"),
        ("name", "x\n"),
        ("team", "a\x1b[2J"),
    ):
        workloads = copy.deepcopy(derived)
        workloads[0][key] = value
        assert _verdicts(workloads) == (True, True), (key, value)
    assert tried > 100


def test_a_refusal_names_the_file_key_range_and_log(derived: list[dict[str, Any]]) -> None:
    workloads = copy.deepcopy(derived)
    workloads[1]["gpu_hours_per_month"] = 4.2e9
    with pytest.raises(InventoryError) as caught:
        check_workloads(workloads, target="derived.toml", logs="sacct.txt")
    assert str(caught.value).startswith(
        "derived.toml: workloads[1].gpu_hours_per_month: expected a number 0.001–1,000,000,000 "
        "GPU-hours per month, got 4200000000.0; derived from sacct.txt"
    )


def test_site_account_names_give_valid_distinct_workload_names(tmp_path: Path) -> None:
    """Accounts in any script become ASCII names the scenario accepts; the team keeps its own.

    `研究` (no ASCII form) once made the whole ingest fail; two accounts whose names meet
    once gave two workloads the same name.
    """
    text = generate_sacct("enterprise-mixed", days=7, seed=1, scale=0.02)
    export = tmp_path / "jobs.txt"
    export.write_text(text.replace("|product|", "|équipe|").replace("|research|", "|研究|"))
    workloads = ingest([export]).demand.workloads
    names = [wl["name"] for wl in workloads]
    assert "equipe-realtime-inference" in names and "batch-inference" in names
    assert {wl["team"] for wl in workloads} >= {"équipe", "研究"}
    assert _verdicts(workloads) == (False, False)
    # Team "a b" and team "a-b" (odd and even job ids of one account) run the same kinds.
    lines = [
        line.replace(
            "|research|", "|a b|" if int(re.split(r"\D", line, maxsplit=1)[0]) % 2 else "|a-b|"
        )
        if "|research|" in line
        else line
        for line in text.splitlines(keepends=True)
    ]
    clash = tmp_path / "clash.txt"
    clash.write_text("".join(lines))
    wls = ingest([clash]).demand.workloads
    teams = {wl["team"] for wl in wls}
    assert {"a b", "a-b"} <= teams
    names = [wl["name"] for wl in wls]
    assert len(set(names)) == len(names) and "a-b-experimentation-2" in names
    assert _verdicts(wls) == (False, False)
