"""Generated hostile scenarios: any value of any type at any key gives a documented exit code.

Hypothesis sets one to three keys of a small scenario to values drawn across TOML's types —
integers from 0 to 2^80 either way, every float including NaN and infinities, text with control
characters, booleans, lists and tables — writes the file and runs ``cluster-decide solve`` on
it in-process. The exit code is 0, 1 or 2 (the solve is tiny, so never 3), never 4; no traceback
reaches the output; and a refusal names the file and one of the keys that were set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_decide import cli

BASE: dict[str, Any] = {
    "schema_version": 1,
    "scenario": {"name": "Fuzzed start-up"},
    "team": {"hpc": {"fte": 1.0}, "kubernetes": {"fte": 1.0}},
    "hiring": {"allowed": True, "max_fte": 2},
    "procurement": {"mode": "cloud", "horizon_months": 36},
    "policy": {"platforms": ["slurm", "kubernetes"]},
    "workloads": [
        {
            "name": "tune",
            "kind": "fine_tuning",
            "gpu_types": ["L4"],
            "gpus_per_job": 1,
            "gpu_hours_per_month": 100.0,
            "mean_job_hours": 2.0,
            "max_queue_wait_hours": 24.0,
        },
        {
            "name": "notebooks",
            "kind": "experimentation",
            "gpu_types": ["L4"],
            "concurrent_users": 2,
            "gpus_per_user": 1,
            "max_queue_wait_hours": 1.0,
        },
    ],
}

KEYS = [
    "scenario.name",
    "scenario.description",
    "team.hpc.fte",
    "team.kubernetes.loaded_cost_usd_per_year",
    "hiring.allowed",
    "hiring.max_fte",
    "hiring.one_time_cost_usd",
    "procurement.mode",
    "procurement.horizon_months",
    "procurement.gpu_price_scale",
    "procurement.on_demand_burst",
    "policy.platforms",
    "policy.archetype",
    "policy.budget_usd_per_month",
    "policy.max_pools",
    "workloads.0.name",
    "workloads.0.team",
    "workloads.0.gpus_per_job",
    "workloads.0.gpu_hours_per_month",
    "workloads.0.mean_job_hours",
    "workloads.0.max_queue_wait_hours",
    "workloads.0.duration_scv",
    "workloads.0.arrival_scv",
    "workloads.0.platforms",
    "workloads.0.profile",
    "workloads.0.divisible",
    "workloads.1.concurrent_users",
    "workloads.1.gpus_per_user",
    "gpus.L4.gpus_per_node",
    "gpus.L4.usd_per_gpu_hour_reserved",
    "gpus.L4.training_speed",
    "costs.pue",
    "costs.power_usd_per_kwh",
    "platforms.slurm.scale_up_lag_minutes",
]

EXTREMES = [0, -1, 2**31, 2**63 - 1, 2**64, 10**20, 1e9, 1e20, 1e308, -1e308, 1e-300, 5e-324]
EXTREMES += [float("nan"), float("inf"), float("-inf"), -0.0]
scalars = st.one_of(
    st.sampled_from(EXTREMES),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.integers(min_value=-3, max_value=300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-6, max_value=1e4),
    st.text(max_size=12),
    st.sampled_from(["slurm", "H100", "flat", "\x1b[31m", "<script>", "", "nan"]),
    st.booleans(),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.text(max_size=5), scalars, max_size=3),
)


def _where(key: str) -> str:
    out = ""
    for part in key.split("."):
        out += f"[{part}]" if part.isdigit() else (("." if out else "") + part)
    return out


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[parts[-1]] = value


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(changes=st.dictionaries(st.sampled_from(KEYS), values, min_size=1, max_size=3))
def test_any_value_gives_a_documented_exit_and_no_traceback(
    changes: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import copy

    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        _set(data, key, value)
    path = tmp_path / "fuzzed.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    code = cli.main(["solve", str(path), "--time-limit", "5"])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code in (0, 1, 2), text
    assert "Traceback" not in text
    assert "\x1b" not in text
    if code == 2:
        assert "fuzzed.toml" in captured.err
        named = ["together they need", "could cost up to"]
        for key in changes:
            where = _where(key)
            named += [where, where.rsplit(".", 1)[0]]
            if key.startswith("workloads."):
                named.append("workloads[")  # a duplicate name is reported at the other one
        assert any(n in captured.err for n in named), captured.err
