"""One vocabulary: the names, their Literal types, labels and unit factor agree and live once."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

from cluster_decide import constants, scenario, vocabulary
from cluster_decide.catalog import load_catalog

PACKAGE = Path(__file__).resolve().parents[1] / "cluster_decide"

NAMES = {
    "PLATFORMS": vocabulary.Platform,
    "WORKLOAD_KINDS": vocabulary.Kind,
    "CAPABILITIES": vocabulary.Capability,
    "SUPPORT_LEVELS": vocabulary.Support,
    "SKILLS": vocabulary.Skill,
    "INTERFACES": vocabulary.Interface,
    "ARCHETYPES": vocabulary.Archetype,
}


@pytest.mark.parametrize("name", list(NAMES))
def test_tuples_are_the_literals(name: str) -> None:
    names = getattr(vocabulary, name)
    assert names == typing.get_args(NAMES[name])
    assert len(set(names)) == len(names)
    assert getattr(constants, name) is names


def _args(model: type, field: str) -> set[str]:
    """Every string a model field's annotation admits (through tuples, dicts and Optional)."""
    found: set[str] = set()
    stack = [model.model_fields[field].annotation]  # type: ignore[attr-defined]
    while stack:
        a = stack.pop()
        found |= {x for x in typing.get_args(a) if isinstance(x, str)}
        stack += [x for x in typing.get_args(a) if not isinstance(x, str)]
    return found


def test_the_scenario_models_accept_exactly_the_vocabulary() -> None:
    v = vocabulary
    assert _args(scenario.Policy, "platforms") == set(v.PLATFORMS)
    assert _args(scenario.Policy, "archetype") == {"any", *v.ARCHETYPES}
    assert _args(scenario.PoolSpec, "platform") == set(v.PLATFORMS)
    assert _args(scenario.TrainingWorkload, "requires") == set(v.CAPABILITIES)
    assert _args(scenario.TrainingWorkload, "interface") == set(v.INTERFACES)
    assert _args(scenario.PlatformOverride, "capabilities") == {*v.CAPABILITIES, *v.SUPPORT_LEVELS}
    kinds = set().union(
        *(_args(m, "kind") for m in scenario._KIND_CLASS.values()),
    )
    assert kinds == set(v.WORKLOAD_KINDS) == set(scenario._KIND_CLASS)
    assert set(scenario.Teams.model_fields) == set(v.SKILLS)
    assert set(scenario.SLO_KEYS) == set(scenario.DEMAND_KEYS) == set(v.WORKLOAD_KINDS)


def test_the_catalog_uses_the_vocabulary() -> None:
    catalog = load_catalog()
    assert set(catalog.platforms) == set(vocabulary.PLATFORMS)


@pytest.mark.parametrize(
    ("labels", "names"),
    [
        ("PLATFORM_LABELS", "PLATFORMS"),
        ("PLATFORM_WORDS", "PLATFORMS"),
        ("ARCHETYPE_LABELS", "ARCHETYPES"),
        ("KIND_LABELS", "WORKLOAD_KINDS"),
        ("KIND_WORDS", "WORKLOAD_KINDS"),
        ("CAPABILITY_WORDS", "CAPABILITIES"),
        ("SKILL_LABELS", "SKILLS"),
    ],
)
def test_every_name_has_its_label_in_order(labels: str, names: str) -> None:
    assert tuple(getattr(vocabulary, labels)) == getattr(vocabulary, names)


def test_the_unit_factor_the_toml_fallback_and_the_hint_are_written_once() -> None:
    sources = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    assert [p.name for p, s in sources.items() if "DEMAND_UNITS_PER_GPU * 100" in s] == [
        "vocabulary.py"
    ]
    assert [p.name for p, s in sources.items() if "import tomli as" in s] == ["tomlread.py"]
    assert [p.name for p, s in sources.items() if "get_close_matches" in s] == ["errors.py"]


def test_reading_a_label_loads_no_plotting_library() -> None:
    code = "import sys, cluster_decide.vocabulary; print('altair' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
