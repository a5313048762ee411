"""Classification rules: validation messages, first-match order, teams, report sums."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster_decide.base.constants import WORKLOAD_KINDS
from cluster_decide.inventory import InventoryError
from cluster_decide.inventory.classification import UNCLASSIFIED, classify
from cluster_decide.inventory.jobs import conform
from cluster_decide.inventory.rules import DEFAULT_RULES_PATH, EXCLUDED, load_rules

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _jobs(rows: list[dict]) -> pl.DataFrame:
    base = {"submit": T0, "start": T0, "end": T0, "state": "COMPLETED", "nodes": 1}
    return conform(pl.DataFrame([{**base, **r} for r in rows]))


def test_default_rules_load_and_name_known_kinds() -> None:
    rules = load_rules()
    assert rules.source == str(DEFAULT_RULES_PATH)
    assert {r.kind for r in rules.rules} <= {*WORKLOAD_KINDS, EXCLUDED}
    assert [r.name for r in rules.rules][:2] == ["cpu-only", "interactive-allocation"]


def test_default_rules_classify_typical_jobs() -> None:
    jobs = _jobs(
        [
            {"job_id": "1", "gpus": 0, "elapsed_s": 3600.0, "name": "backup"},
            {"job_id": "2", "gpus": 1, "elapsed_s": 7200.0, "interactive": True},
            {"job_id": "3", "gpus": 1, "elapsed_s": 7200.0, "partition": "jupyter"},
            {"job_id": "4", "gpus": 8, "elapsed_s": 7200.0, "partition": "serving"},
            {"job_id": "5", "gpus": 16, "elapsed_s": 7200.0, "name": "sft-run", "nodes": 2},
            {"job_id": "6", "gpus": 64, "elapsed_s": 7200.0, "name": "pretrain", "nodes": 8},
            {"job_id": "7", "gpus": 4, "elapsed_s": 7200.0, "name": "eval-nightly"},
            {"job_id": "8", "gpus": 1, "elapsed_s": 600.0, "name": "try"},
            {"job_id": "9", "gpus": 4, "elapsed_s": 7200.0, "name": "train"},
            {"job_id": "10", "gpus": 4, "elapsed_s": 7200.0, "name": "train", "nodes": None},
        ]
    )
    kinds = classify(jobs).jobs["kind"].to_list()
    assert kinds == [
        EXCLUDED,
        "experimentation",
        "experimentation",
        "realtime_inference",
        "fine_tuning",
        "distributed_training",
        "batch_inference",
        "experimentation",
        "fine_tuning",
        None,
    ]


def test_teams_from_maps_then_account_then_default(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(
        'schema_version = 1\n[teams]\ndefault = "nobody"\nusers = {ana = "vision"}\n'
        'accounts = {proj42 = "nlp"}\n[[rules]]\nname = "all"\nkind = "fine_tuning"\n'
        "min_gpus = 0\n"
    )
    jobs = _jobs(
        [
            {"job_id": "1", "gpus": 1, "elapsed_s": 1.0, "user": "ana", "account": "proj42"},
            {"job_id": "2", "gpus": 1, "elapsed_s": 1.0, "user": "bo", "account": "proj42"},
            {"job_id": "3", "gpus": 1, "elapsed_s": 1.0, "user": "cy", "account": "ops"},
            {"job_id": "4", "gpus": 1, "elapsed_s": 1.0, "user": "di"},
        ]
    )
    teams = classify(jobs, load_rules(path)).jobs["team"].to_list()
    assert teams == ["vision", "nlp", "ops", "nobody"]


def test_invalid_rules_report_every_problem_once(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'schema_version = 1\n[[rules]]\nname = "a"\nkind = "training"\nmin_gpu = 2\n'
        '[[rules]]\nname = "a"\nkind = "pipeline"\nname_regex = "("\n'
    )
    with pytest.raises(InventoryError) as err:
        load_rules(path)
    assert str(err.value) == (
        f"{path}: invalid rules:\n"
        "  rules[0]: unknown key 'min_gpu' (did you mean 'min_gpus'?)\n"
        "  rules[0].kind: expected one of ['distributed_training', 'fine_tuning', "
        "'experimentation', 'batch_inference', 'pipeline', 'realtime_inference', 'excluded'], "
        "got 'training'\n"
        "  rules[0]: no conditions; a catch-all must say so (e.g. min_gpus = 0)\n"
        "  rules[1].name_regex: invalid regular expression: missing ), unterminated subpattern "
        "at position 0\n"
        "  rules[1]: no conditions; a catch-all must say so (e.g. min_gpus = 0)\n"
        "  rules: name 'a' is used twice; names must be unique"
    )
    with pytest.raises(InventoryError, match="no such rules file"):
        load_rules(tmp_path / "absent.toml")


_JOB = st.fixed_dictionaries(
    {
        "gpus": st.integers(0, 512),
        "nodes": st.one_of(st.none(), st.integers(1, 64)),
        "elapsed_s": st.floats(0, 1e6, allow_nan=False),
        "name": st.one_of(st.none(), st.sampled_from(["sft", "eval", "jupyter", "etl", "x"])),
        "partition": st.one_of(st.none(), st.sampled_from(["gpu", "serving", "debug"])),
        "interactive": st.one_of(st.none(), st.booleans()),
    }
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_JOB, min_size=1, max_size=40))
def test_report_sums_match_the_job_table(rows: list[dict]) -> None:
    jobs = _jobs([{"job_id": str(i), **r} for i, r in enumerate(rows)])
    result = classify(jobs)
    report = result.report
    assert report["jobs"].sum() == jobs.height
    total = float((jobs["gpus"] * jobs["elapsed_s"]).sum()) / 3600.0
    assert report["gpu_hours"].sum() == pytest.approx(total, rel=1e-9, abs=1e-6)
    assert report["rule"].to_list()[-1] == UNCLASSIFIED
    by_rule = result.jobs.group_by("rule").len()
    for rule, n in by_rule.iter_rows():
        assert report.filter(pl.col("rule") == rule)["jobs"].item() == n
