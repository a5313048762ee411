"""Tests for the catalog data: provenance of every figure, coverage, sanity, fresh docs."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from cluster_decide.base import constants
from cluster_decide.inputs.datasources import (
    ASSUMPTION,
    CATALOG_DIR,
    CONFIDENCE_LEVELS,
    FACT_FILES,
    PROVENANCE_COLUMNS,
    FactFile,
    load_facts,
    read_catalog_file,
    render_markdown,
)

DOCS_PATH = Path(__file__).resolve().parent.parent / "docs" / "data-sources.md"
DATE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
ASSUMPTION_DATE = "2026-12"

GPU_KEYS = ("A100", "H100", "H200", "B200", "L40S", "L4")
GPU_ATTRIBUTES = (
    "memory_gb",
    "tdp_w",
    "gpus_per_node",
    "node_power_kw",
    "usd_per_gpu_hour_on_demand",
    "usd_per_gpu_hour_reserved",
    "node_capex_usd",
    "training_speed",
    "inference_speed",
)
PLATFORM_ATTRIBUTES = (
    "interface",
    "node_autoscaling",
    "scale_up_lag_minutes",
    "preemption_overhead",
    "topology_slowdown",
)
COST_PARAMETERS = (
    "power_usd_per_kwh",
    "pue",
    "average_power_fraction",
    "facility_usd_per_kw_month",
    "residual_value_fraction",
    "hire_one_time_cost_usd",
    "friction_fte_per_class",
    "split_fte_per_extra_placement",
    "hpc_loaded_cost_usd_per_year",
    "kubernetes_loaded_cost_usd_per_year",
    "support_fraction_per_year",
    "discount_rate",
    "useful_life_months",
    "spot_interruptions_per_node_month",
    "checkpoint_interval_hours",
    "spot_restart_hours",
    "preempt_restart_hours",
    "max_spot_share",
)
STAFFING_COMPONENTS = ("base", "per_100_nodes", "addon", "integration")
PROFILES = ("flat", "business_hours", "diurnal", "nightly_batch")


@pytest.fixture(scope="module")
def facts() -> pl.DataFrame:
    """All fact rows, stacked."""
    return load_facts()


def _rows(frame: pl.DataFrame, *columns: str) -> list[tuple]:
    """Return the given columns as a list of row tuples."""
    return frame.select(columns).rows()


def _numbers(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """Return the frame with ``column`` parsed as float (raises on non-numbers)."""
    return frame.with_columns(pl.col(column).cast(pl.Float64, strict=True))


def _lookup(name: str, **where: str) -> float:
    """Read one numeric figure from a catalog file by its key columns."""
    frame = read_catalog_file(name)
    for column, value in where.items():
        frame = frame.filter(pl.col(column) == value)
    assert frame.height == 1, f"{name}.csv: expected one row for {where}, got {frame.height}"
    value_column = {"staffing": "fte", "capability_gaps": "gap_usd_per_month"}.get(name, "value")
    return float(frame[value_column][0])


# --- provenance -------------------------------------------------------------------------


@pytest.mark.parametrize("spec", FACT_FILES, ids=lambda s: s.name)
def test_fact_files_end_with_provenance_columns(spec: FactFile) -> None:
    """Every fact file has the five provenance columns last, in order."""
    columns = read_catalog_file(spec.name).columns
    assert tuple(columns[-len(PROVENANCE_COLUMNS) :]) == PROVENANCE_COLUMNS


def test_every_fact_has_source_date_and_confidence(facts: pl.DataFrame) -> None:
    """Source is non-empty, date is a real YYYY-MM[-DD], confidence is allowed."""
    for row in facts.iter_rows(named=True):
        where = row["key"]
        assert row["source"].strip(), f"{where}: empty source"
        assert row["value"].strip(), f"{where}: empty value"
        match = DATE_RE.match(row["date"])
        assert match, f"{where}: date {row['date']!r} is not YYYY-MM or YYYY-MM-DD"
        year, month, day = match.groups()
        date(int(year), int(month), int(day or 1))  # raises on month 13, day 32, ...
        assert row["confidence"] in CONFIDENCE_LEVELS, f"{where}: bad confidence"


def test_assumptions_are_marked_consistently(facts: pl.DataFrame) -> None:
    """Source ``assumption`` goes with confidence ``assumption`` and date 2026-12."""
    for row in facts.iter_rows(named=True):
        is_source = row["source"] == ASSUMPTION
        is_conf = row["confidence"] == ASSUMPTION
        assert is_source == is_conf, f"{row['key']}: source and confidence disagree"
        if is_source:
            assert row["date"] == ASSUMPTION_DATE, f"{row['key']}: assumption date"


def test_assumption_and_low_rows_have_notes(facts: pl.DataFrame) -> None:
    """Assumptions and low-confidence figures explain themselves in the note."""
    weak = facts.filter(
        (pl.col("source") == ASSUMPTION) | pl.col("confidence").is_in(["low", ASSUMPTION])
    )
    assert weak.height > 0
    missing = weak.filter(pl.col("note").str.strip_chars() == "")["key"].to_list()
    assert not missing, f"rows without a note: {missing}"


def test_urls_are_links_or_explained(facts: pl.DataFrame) -> None:
    """A URL is an https link; a sourced row without one says why in its note."""
    for row in facts.iter_rows(named=True):
        if row["url"]:
            assert row["url"].startswith("https://"), f"{row['key']}: url {row['url']!r}"
        elif row["source"] != ASSUMPTION:
            assert row["note"].strip(), f"{row['key']}: no url and no note"


def test_keys_are_unique(facts: pl.DataFrame) -> None:
    """Each figure appears once."""
    duplicated = facts.filter(pl.col("key").is_duplicated())["key"].to_list()
    assert not duplicated, f"duplicate keys: {duplicated}"


def test_load_facts_key_format(facts: pl.DataFrame) -> None:
    """Keys are ``file:part:...`` and the stacked frame has the documented columns."""
    assert facts.columns == ["file", "key", "value", "unit", *PROVENANCE_COLUMNS]
    assert "gpus:H100:usd_per_gpu_hour_reserved" in facts["key"].to_list()
    assert "staffing:kubernetes_batch:kubernetes:addon" in facts["key"].to_list()
    assert facts.equals(load_facts())


# --- coverage ---------------------------------------------------------------------------


def test_every_gpu_has_every_attribute() -> None:
    """Six GPU keys times nine attributes, each a positive number."""
    gpus = _numbers(read_catalog_file("gpus"), "value")
    pairs = set(_rows(gpus, "gpu", "attribute"))
    expected = {(g, a) for g in GPU_KEYS for a in GPU_ATTRIBUTES}
    assert pairs == expected
    assert gpus.height == len(expected)
    assert (gpus["value"] > 0).all()
    assert (gpus.filter(pl.col("attribute") == "gpus_per_node")["value"] == 8).all()


def test_platforms_cover_every_attribute() -> None:
    """Four platforms times four attributes with valid values."""
    platforms = read_catalog_file("platforms")
    pairs = set(_rows(platforms, "platform", "attribute"))
    assert pairs == {(p, a) for p in constants.PLATFORMS for a in PLATFORM_ATTRIBUTES}
    assert platforms.height == len(pairs)
    interface = dict(
        platforms.filter(pl.col("attribute") == "interface").select("platform", "value").iter_rows()
    )
    assert interface == {
        "slurm": "slurm",
        "kubernetes": "containers",
        "kubernetes_batch": "containers",
        "shared": "both",
    }
    # Kubernetes' node autoscalers add nodes for pending pods; Slurm's power saving and cloud
    # nodes do it for queued jobs where a cloud's Slurm service runs them, not on most
    # clusters (a scenario says so); a shared pool hands its nodes between sides instead.
    nodes = dict(
        platforms.filter(pl.col("attribute") == "node_autoscaling")
        .select("platform", "value")
        .iter_rows()
    )
    assert nodes == {
        "slurm": "partial",
        "kubernetes": "native",
        "kubernetes_batch": "native",
        "shared": "partial",
    }
    categories = pl.col("attribute").is_in(["interface", "node_autoscaling"])
    numeric = _numbers(platforms.filter(~categories), "value")
    assert (numeric["value"] >= 0).all()
    fractions = numeric.filter(pl.col("attribute") != "scale_up_lag_minutes")
    assert (fractions["value"] < 1).all()


def test_capabilities_cover_every_platform_and_capability() -> None:
    """Exactly 4 x 15 rows with valid support levels."""
    caps = read_catalog_file("capabilities")
    pairs = list(_rows(caps, "platform", "capability"))
    assert len(pairs) == len(set(pairs)) == len(constants.PLATFORMS) * len(constants.CAPABILITIES)
    assert set(pairs) == {(p, c) for p in constants.PLATFORMS for c in constants.CAPABILITIES}
    assert set(caps["support"]) <= set(constants.SUPPORT_LEVELS)


def test_capabilities_match_the_design() -> None:
    """The headline strengths of each platform (docs/model.md) hold in the catalog."""
    caps = read_catalog_file("capabilities")
    support = {(p, c): s for p, c, s in _rows(caps, "platform", "capability", "support")}
    for cap in ("gang_scheduling", "topology_aware", "fair_share", "accounting", "mpi"):
        assert support[("slurm", cap)] == "native", cap
    for cap in ("autoscaling", "self_healing", "rolling_updates", "service_networking", "gitops"):
        assert support[("kubernetes", cap)] == "native", cap
        assert support[("slurm", cap)] != "native", cap
    assert support[("kubernetes", "gang_scheduling")] != "native"
    assert support[("kubernetes_batch", "gang_scheduling")] == "native"


def test_utilization_covers_every_platform_and_kind() -> None:
    """Exactly 4 x 6 values in (0, 1]."""
    util = _numbers(read_catalog_file("utilization"), "value")
    pairs = list(_rows(util, "platform", "kind"))
    assert len(pairs) == len(set(pairs)) == len(constants.PLATFORMS) * len(constants.WORKLOAD_KINDS)
    assert set(pairs) == {(p, k) for p in constants.PLATFORMS for k in constants.WORKLOAD_KINDS}
    assert ((util["value"] > 0) & (util["value"] <= 1)).all()


def test_staffing_rows_are_valid() -> None:
    """Valid skills and components; add-on and integration only where they belong."""
    staff = _numbers(read_catalog_file("staffing"), "fte")
    assert set(staff["platform"]) == set(constants.PLATFORMS)
    assert set(staff["skill"]) <= set(constants.SKILLS)
    assert set(staff["component"]) <= set(STAFFING_COMPONENTS)
    assert (staff["fte"] >= 0).all()
    keys = list(_rows(staff, "platform", "skill", "component"))
    assert len(keys) == len(set(keys))
    addon = staff.filter(pl.col("component") == "addon")
    assert set(_rows(addon, "platform", "skill")) == {("kubernetes_batch", "kubernetes")}
    integration = staff.filter(pl.col("component") == "integration")
    assert set(_rows(integration, "platform", "skill")) == {
        ("shared", "hpc"),
        ("shared", "kubernetes"),
    }
    for platform in constants.PLATFORMS:
        for skill in constants.SKILLS:
            for component in ("base", "per_100_nodes"):
                assert (platform, skill, component) in keys


def test_costs_have_every_parameter() -> None:
    """The documented cost parameters, each a positive number."""
    costs = _numbers(read_catalog_file("costs"), "value")
    assert sorted(costs["parameter"]) == sorted(COST_PARAMETERS)
    assert (costs["value"] > 0).all()
    fractions = ("average_power_fraction", "residual_value_fraction")
    assert (costs.filter(pl.col("parameter").is_in(fractions))["value"] < 1).all()
    assert _lookup("costs", parameter="pue") >= 1.0


def test_capability_gaps_cover_every_capability() -> None:
    """One described, positive monthly gap cost per capability."""
    gaps = _numbers(read_catalog_file("capability_gaps"), "gap_usd_per_month")
    assert sorted(gaps["capability"]) == sorted(constants.CAPABILITIES)
    assert (gaps["gap_usd_per_month"] > 0).all()
    assert (gaps["description"].str.strip_chars() != "").all()


def test_profiles_have_168_weights_each() -> None:
    """Each profile has hours 0..167 once, weights in [0, 1] and a peak of exactly 1.0."""
    profiles = read_catalog_file("profiles").with_columns(
        pl.col("hour_of_week").cast(pl.Int64, strict=True),
        pl.col("weight").cast(pl.Float64, strict=True),
    )
    assert sorted(set(profiles["profile"])) == sorted(PROFILES)
    for name in PROFILES:
        part = profiles.filter(pl.col("profile") == name)
        assert part["hour_of_week"].to_list() == list(range(constants.HOURS_PER_WEEK)), name
        assert ((part["weight"] >= 0) & (part["weight"] <= 1)).all(), name
        assert part["weight"].max() == 1.0, name
    assert (profiles.filter(pl.col("profile") == "flat")["weight"] == 1.0).all()


def test_profile_sources_describe_every_profile() -> None:
    """Every profile has one provenance row and nothing else does."""
    sources = read_catalog_file("profile_sources")
    assert sorted(sources["profile"]) == sorted(PROFILES)


def test_profile_shapes() -> None:
    """Business hours peak on weekdays by day; nightly batch peaks at night."""
    profiles = read_catalog_file("profiles").with_columns(
        pl.col("hour_of_week").cast(pl.Int64), pl.col("weight").cast(pl.Float64)
    )
    weight = {(p, h): w for p, h, w in profiles.iter_rows()}
    monday_noon, monday_3am, saturday_noon = 12, 3, 5 * 24 + 12
    assert weight[("business_hours", monday_noon)] > weight[("business_hours", monday_3am)]
    assert weight[("business_hours", monday_noon)] > weight[("business_hours", saturday_noon)]
    assert weight[("nightly_batch", monday_3am)] > weight[("nightly_batch", monday_noon)]
    assert weight[("diurnal", 14)] == 1.0


# --- schema -----------------------------------------------------------------------------


def test_schema_documents_every_column_and_nothing_else() -> None:
    """schema.csv lists exactly the columns of every CSV in data/catalog."""
    schema = read_catalog_file("schema")
    documented = set(_rows(schema, "file", "column"))
    assert len(documented) == schema.height, "schema.csv has duplicate rows"
    actual = {
        (path.name, column)
        for path in sorted(CATALOG_DIR.glob("*.csv"))
        for column in pl.read_csv(path, n_rows=0).columns
    }
    assert documented == actual
    assert set(schema["type"]) <= {"string", "float", "int", "date"}
    assert (schema["description"].str.strip_chars() != "").all()


# --- sanity relations -------------------------------------------------------------------


@pytest.mark.parametrize("gpu", GPU_KEYS)
def test_reserved_is_cheaper_than_on_demand(gpu: str) -> None:
    """A commitment discount makes reserved cheaper than on-demand for every GPU."""
    reserved = _lookup("gpus", gpu=gpu, attribute="usd_per_gpu_hour_reserved")
    on_demand = _lookup("gpus", gpu=gpu, attribute="usd_per_gpu_hour_on_demand")
    assert 0 < reserved < on_demand


def test_gpu_generations_are_ordered() -> None:
    """H200 holds more memory than H100; B200 draws more node power; H100 is the reference."""
    assert _lookup("gpus", gpu="H200", attribute="memory_gb") > _lookup(
        "gpus", gpu="H100", attribute="memory_gb"
    )
    assert _lookup("gpus", gpu="B200", attribute="node_power_kw") > _lookup(
        "gpus", gpu="H100", attribute="node_power_kw"
    )
    assert _lookup("gpus", gpu="H100", attribute="training_speed") == 1.0
    assert _lookup("gpus", gpu="H100", attribute="inference_speed") == 1.0
    assert _lookup("gpus", gpu="B200", attribute="training_speed") > 1.0
    assert _lookup("gpus", gpu="H200", attribute="inference_speed") > 1.0


def test_distributed_training_packs_best_on_slurm() -> None:
    """Slurm > Kubernetes + batch add-on > plain Kubernetes for distributed training."""
    kind = "distributed_training"
    slurm = _lookup("utilization", platform="slurm", kind=kind)
    batch = _lookup("utilization", platform="kubernetes_batch", kind=kind)
    plain = _lookup("utilization", platform="kubernetes", kind=kind)
    assert slurm > batch > plain


def test_preemption_and_topology_penalties_apply_where_designed() -> None:
    """Only shared pools lose training time to preemption; only plain Kubernetes to topology."""
    for platform in constants.PLATFORMS:
        overhead = _lookup("platforms", platform=platform, attribute="preemption_overhead")
        slowdown = _lookup("platforms", platform=platform, attribute="topology_slowdown")
        assert (overhead > 0) == (platform == "shared"), platform
        assert (slowdown > 0) == (platform == "kubernetes"), platform


def test_shared_pool_needs_both_skills() -> None:
    """A shared pool costs more staff than either single-skill platform's base alone."""
    shared = read_catalog_file("staffing").filter(pl.col("platform") == "shared")
    shared_skills = set(shared.filter(pl.col("fte").cast(pl.Float64) > 0)["skill"])
    assert shared_skills == set(constants.SKILLS)


# --- generated docs ---------------------------------------------------------------------


def test_docs_are_up_to_date() -> None:
    """docs/data-sources.md equals the rendered catalog (regenerate it if this fails)."""
    expected = render_markdown()
    assert DOCS_PATH.read_text(encoding="utf-8") == expected, (
        "docs/data-sources.md is stale: run "
        "`python -m cluster_decide.inputs.datasources > docs/data-sources.md`"
    )


def test_render_is_deterministic_and_counts_assumptions(facts: pl.DataFrame) -> None:
    """Rendering twice gives the same text, with the assumption count in the summary."""
    text = render_markdown()
    assert text == render_markdown()
    n_assumed = facts.filter(pl.col("source") == ASSUMPTION).height
    assert f"{n_assumed} are assumptions" in text
    for spec in FACT_FILES:
        assert f"## {spec.name}\n" in text


def test_sides_name_a_side_a_capability_and_a_support_level() -> None:
    """Each side row overrides one capability for work submitted through Slurm or containers."""
    sides = read_catalog_file("sides")
    keys = list(_rows(sides, "platform", "side", "capability"))
    assert len(keys) == len(set(keys)) > 0
    assert {p for p, _s, _c in keys} <= set(constants.PLATFORMS)
    assert {s for _p, s, _c in keys} <= {"slurm", "containers"}
    assert {c for _p, _s, c in keys} <= set(constants.CAPABILITIES)
    assert set(sides["support"]) <= set(constants.SUPPORT_LEVELS)
    assert all(sides["url"]) and all(sides["date"])
