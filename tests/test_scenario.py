"""Scenario files: presets load, round trip, copies validate, and bad input gets exact messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import small_scenario, training

import cluster_decide as cd
from cluster_decide.inputs.scenario import PRESETS

VALID = """\
schema_version = 1

[scenario]
name = "t"

[procurement]
mode = "cloud"

[[workloads]]
name = "a"
kind = "fine_tuning"
gpu_types = ["H100"]
gpus_per_job = 8
gpu_hours_per_month = 1000
mean_job_hours = 4
max_queue_wait_hours = 2
profile = "flat"
requires = ["gang_scheduling"]
"""


@pytest.mark.parametrize("name", PRESETS)
def test_presets_load_and_round_trip(name: str, tmp_path: Path) -> None:
    scn = cd.load_scenario(name)
    path = cd.save_scenario(scn, tmp_path / f"{name}.toml")
    again = cd.load_scenario(path)
    assert again == scn
    assert again.to_toml() == scn.to_toml()


def test_default_is_enterprise_mixed() -> None:
    assert cd.load_scenario().name == "Enterprise mixed estate"


def test_scenario_is_frozen(default_scenario: cd.Scenario) -> None:
    with pytest.raises(Exception, match="frozen"):
        default_scenario.policy = None  # type: ignore[misc]


def test_changes_return_validated_copies(default_scenario: cd.Scenario) -> None:
    scn = default_scenario
    assert (
        scn.scale_demand("realtime_inference", 2.0)
        .workload("support-assistant")
        .peak_requests_per_second
        == 600
    )
    assert (
        scn.scale_demand("experimentation", 0.5).workload("research-notebooks").concurrent_users
        == 12
    )
    assert scn.set_fte("hpc", 5).team.hpc.fte == 5
    assert scn.set_hiring(False).hiring.allowed is False
    assert scn.set_procurement("on_prem").procurement.mode == "on_prem"
    assert scn.scale_gpu_prices(0.8).procurement.gpu_price_scale == 0.8
    assert scn.set_slo("support-assistant", 900).workload("support-assistant").p99_latency_ms == 900
    assert (
        scn.scale_slo("distributed_training", 2).workload("llm-pretraining").max_queue_wait_hours
        == 48
    )
    assert scn.set_budget(None).policy.budget_usd_per_month is None
    assert scn.set_budget(1e6).policy.budget_usd_per_month == 1e6
    assert scn.restrict_platforms(["slurm"]).policy.platforms == ("slurm",)
    assert scn.force_archetype("slurm_only").policy.archetype == "slurm_only"
    assert scn.team.hpc.fte == 2.0, "the original is unchanged"


def test_changes_are_validated(default_scenario: cd.Scenario) -> None:
    with pytest.raises(
        cd.ScenarioError, match=r"team.hpc.fte: expected a number 0–1,000 FTE, got -1.0"
    ):
        default_scenario.set_fte("hpc", -1)
    with pytest.raises(cd.ScenarioError, match=r"policy\.archetype: expected one of"):
        default_scenario.force_archetype("hybrid")
    with pytest.raises(ValueError, match="positive"):
        default_scenario.scale_demand("pipeline", 0)
    with pytest.raises(KeyError, match="did you mean 'support-assistant'"):
        default_scenario.set_slo("support-asistant", 100)


def test_catalog_override_applies() -> None:
    scn = small_scenario([training()], gpus={"H100": {"usd_per_gpu_hour_reserved": 2.1}})
    assert scn.catalog.gpus["H100"].usd_per_gpu_hour_reserved == 2.1
    assert cd.load_scenario().catalog.gpus["H100"].usd_per_gpu_hour_reserved != 2.1


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    return path


BAD = [
    (
        "gpus_per_job = 8",
        "gpus_per_job = -8",
        "bad.toml: workloads[0].gpus_per_job: expected an integer 1–100,000 GPUs, got -8",
    ),
    (
        "gpus_per_job = 8",
        "gpus_per_job = 8.5",
        "bad.toml: workloads[0].gpus_per_job: expected an integer 1–100,000 GPUs, got 8.5",
    ),
    (
        'gpu_types = ["H100"]',
        'gpu_type = ["H100"]',
        "bad.toml: workloads[0]: unknown key 'gpu_type' (did you mean 'gpu_types'?)",
    ),
    (
        'gpu_types = ["H100"]',
        'gpu_types = ["H10"]',
        "bad.toml: workloads[0].gpu_types[0]: unknown GPU type 'H10' (did you mean 'H100'?)",
    ),
    (
        'kind = "fine_tuning"',
        'kind = "fine_tunning"',
        "bad.toml: workloads[0].kind: expected one of distributed_training, fine_tuning, experimentation, batch_inference, pipeline, realtime_inference, got 'fine_tunning' (did you mean 'fine_tuning'?)",
    ),
    (
        'profile = "flat"',
        'profile = "bussiness_hours"',
        "bad.toml: workloads[0].profile: unknown profile 'bussiness_hours' (did you mean 'business_hours'?)",
    ),
    (
        'profile = "flat"',
        "profile = [1.0, 2.0]",
        "bad.toml: workloads[0].profile: expected a profile name or a list of 168 hourly weights, got 2 values",
    ),
    (
        'mode = "cloud"',
        'mode = "onprem"',
        "bad.toml: procurement.mode: expected one of cloud, on_prem, cheapest, got 'onprem' (did you mean 'on_prem'?)",
    ),
    (
        "gpu_hours_per_month = 1000",
        'gpu_hours_per_month = "1000"',
        "bad.toml: workloads[0].gpu_hours_per_month: expected a number 0.001–1,000,000,000 GPU-hours per month, got '1000'",
    ),
    (
        'requires = ["gang_scheduling"]',
        'requires = ["gang_schedulng"]',
        "bad.toml: workloads[0].requires[0]: expected one of gang_scheduling, topology_aware, fair_share, preemption, reservations, accounting, mpi, interactive_shell, autoscaling, self_healing, rolling_updates, service_networking, gitops, multi_tenant_isolation, gpu_sharing, got 'gang_schedulng' (did you mean 'gang_scheduling'?)",
    ),
    (
        "max_queue_wait_hours = 2\n",
        "",
        "bad.toml: workloads[0]: missing required key 'max_queue_wait_hours'",
    ),
    (
        "[procurement]",
        "[procurment]",
        "bad.toml: unknown key 'procurment' (did you mean 'procurement'?)",
    ),
    (
        "schema_version = 1",
        "schema_version = 2",
        "bad.toml: schema_version: unsupported schema_version 2 (this version of cluster_decide reads schema_version = 1)",
    ),
    (
        "schema_version = 1",
        "",
        "bad.toml: missing required key 'schema_version' (add schema_version = 1 at the top)",
    ),
    (
        'mode = "cloud"',
        'mode = "cloud"\nhorizon_months = 0',
        "bad.toml: procurement.horizon_months: expected an integer 1–240 months, got 0",
    ),
    (
        "[procurement]",
        '[hiring]\nallowed = "yes"\n[procurement]',
        "bad.toml: hiring.allowed: expected true or false, got 'yes'",
    ),
    (
        "[procurement]",
        "[team.hpc]\nfte = -1\n[procurement]",
        "bad.toml: team.hpc.fte: expected a number 0–1,000 FTE, got -1",
    ),
    (
        "[procurement]",
        "[policy]\nbudget_usd_per_month = -5\n[procurement]",
        "bad.toml: policy.budget_usd_per_month: expected a number above 0 to 10,000,000,000 USD per month, got -5",
    ),
    (
        'requires = ["gang_scheduling"]',
        'requires = ["gang_scheduling"]\nprefers = ["gang_scheduling"]',
        "bad.toml: workloads[0].prefers: gang_scheduling is already required (list a capability in requires or prefers, not both)",
    ),
    (
        "[procurement]",
        "[gpus.X1]\nmemory_gb = 10\n[procurement]",
        "bad.toml: gpus.X1: 'X1' is not a catalog GPU type, so a new type needs tdp_w, gpus_per_node, node_power_kw, usd_per_gpu_hour_on_demand, usd_per_gpu_hour_reserved, node_capex_usd, training_speed, inference_speed",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "message"), BAD, ids=[m.split(": ", 1)[1][:40] for _, _, m in BAD]
)
def test_malformed_scenarios_get_exact_messages(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in VALID
    with pytest.raises(cd.ScenarioError) as info:
        cd.load_scenario(_write(tmp_path, VALID.replace(old, new, 1)))
    assert str(info.value) == message


def test_duplicate_workload_names(tmp_path: Path) -> None:
    second = VALID[VALID.index("[[workloads]]") :]
    with pytest.raises(cd.ScenarioError) as info:
        cd.load_scenario(_write(tmp_path, VALID + "\n" + second))
    assert str(info.value) == (
        "bad.toml: workloads[1].name: 'a' is already the name of workloads[0] (names must be unique)"
    )


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = VALID.replace("gpus_per_job = 8", "gpus_per_job = -8").replace(
        'mode = "cloud"', 'mode = "x"'
    )
    with pytest.raises(cd.ScenarioError) as info:
        cd.load_scenario(_write(tmp_path, text))
    assert len(info.value.problems) == 2


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(cd.ScenarioError) as info:
        cd.load_scenario(_write(tmp_path, "  \n"))
    assert (
        str(info.value)
        == "bad.toml: the file is empty (expected a TOML scenario (see docs/scenario.md))"
    )


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(cd.ScenarioError, match=r"bad.toml: invalid TOML: .*line 3"):
        cd.load_scenario(_write(tmp_path, "schema_version = 1\n[scenario]\nname = \n"))


def test_missing_file_suggests_a_preset() -> None:
    with pytest.raises(cd.ScenarioError, match="did you mean 'research-lab'"):
        cd.load_scenario("research-lb")
