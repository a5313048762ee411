"""The fast solve path gives the very same plans, byte for byte, as the slower path it replaced.

The speed levers of ``cd.solve`` (one CP-SAT worker for a model of this size, remembered
deadline windows, no objective-bound row between service-level cut rounds) must not change an
answer. Each scenario is solved cold (two workers as before, every cache emptied) and then
along the fast path, and the plans' JSON must be equal.
"""

from __future__ import annotations

import pytest
from test_people import hpc_centre, slurm_shop, startup

import cluster_decide as cd
from cluster_decide.constants import PRESETS
from cluster_decide.model import loop
from cluster_decide.model.build import build_model
from cluster_decide.model.data import prepare
from cluster_decide.queueing import _deadline_window, deadline_window

SCENARIOS = {
    **{name: lambda name=name: cd.load_scenario(name) for name in PRESETS},
    "startup": startup,
    "hpc_centre": hpc_centre,
    "slurm_shop": slurm_shop,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fast_path_plan_is_byte_identical_to_the_cold_path(name: str) -> None:
    scn = SCENARIOS[name]()
    _deadline_window.cache_clear()
    cold = cd.solve(scn, workers=2)
    fast = cd.solve(scn)
    again = cd.solve(scn)  # every cache warm now
    assert cold.feasible
    assert fast.to_json() == cold.to_json()
    assert again.to_json() == cold.to_json()


def test_remembered_deadline_window_equals_a_fresh_computation() -> None:
    free = [6.0, 2.0, 0.0, 4.0] * 6
    work = [1.0, 3.0, 2.5, 0.5] * 6
    _deadline_window.cache_clear()
    first = deadline_window(free, work)
    assert _deadline_window.cache_info().misses == 1
    assert deadline_window(free, work) == first
    assert _deadline_window.cache_info().hits == 1
    assert deadline_window([1.0] * 24, [2.0] * 24) == float("inf")
    with pytest.raises(ValueError, match="1-D"):
        deadline_window([1.0, 2.0], [1.0])


def test_workers_follow_the_model_size_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    m = build_model(prepare(cd.load_scenario()))
    assert loop.workers_for(m, None) == 1
    assert loop.workers_for(m, 3) == 3
    monkeypatch.setattr(loop, "LARGE_MODEL_PLACEMENTS", len(m.place) - 1)
    assert loop.workers_for(m, None) == loop.LARGE_MODEL_WORKERS == 2
