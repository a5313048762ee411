"""One vocabulary: the names, their Literal types, labels and unit factor agree and live once."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from cluster_decide.base import constants, vocabulary
from cluster_decide.inputs import scenario
from cluster_decide.inputs.catalog import load_catalog

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
    code = "import sys, cluster_decide.base.vocabulary, cluster_decide.style; print('altair' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


ID_SETS = {
    "kinds": set(vocabulary.WORKLOAD_KINDS),
    "platforms": set(vocabulary.PLATFORMS),
    "archetypes": set(vocabulary.ARCHETYPES),
    "skills": set(vocabulary.SKILLS),
    "capabilities": set(vocabulary.CAPABILITIES),
    "metrics": set(vocabulary.METRIC_WORDS),
    "components": set(vocabulary.COMPONENT_LABELS),
}
NOT_LABELS = {("model/data.py", "DEFAULT_POOL_NAMES")}
"""Dicts keyed by vocabulary names and named like labels whose values are data (pool names)."""
_LABEL_NAME = re.compile(r"LABEL|WORD|NAME|SHORT", re.IGNORECASE)
_VOCABULARY_TEXTS = {
    v
    for name in vocabulary.__all__
    if isinstance(getattr(vocabulary, name), dict)
    for v in getattr(vocabulary, name).values()
    if v not in set().union(*ID_SETS.values())  # ids (FAMILY's values) are names, not texts
}


def _string_dicts(tree: ast.AST) -> list[tuple[str, ast.Dict]]:
    """``NAME = {...}`` dicts (anywhere in a module) whose keys and values are all string literals
    (or tuples of them), as ``(NAME, dict)``."""
    found = []
    for node in ast.walk(tree):
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Dict) or not value.keys:
            continue
        strings = all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys)
        texts = all(
            (isinstance(v, ast.Constant) and isinstance(v.value, str))
            or (isinstance(v, ast.Tuple) and all(isinstance(e, ast.Constant) for e in v.elts))
            for v in value.values
        )
        if strings and texts:
            found.append((target.id, value))
    return found


def test_no_module_but_the_vocabulary_names_the_vocabulary() -> None:
    """A dict of two or more kinds, platforms, archetypes, skills, capabilities, metrics or
    cost components to words is a label set when it is named like one (``*_LABELS``,
    ``*_WORDS``, ``short``...) or repeats a vocabulary text; label sets live in
    ``base/vocabulary.py``. (Other dicts keyed by these names hold data: pool names, policies.)"""
    redefined = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "base/vocabulary.py":
            continue
        for name, node in _string_dicts(ast.parse(path.read_text(encoding="utf-8"))):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            texts = [ast.literal_eval(v) for v in node.values]
            repeats = sum(t in _VOCABULARY_TEXTS for t in texts) >= 2
            for what, ids in ID_SETS.items():
                labels = _LABEL_NAME.search(name) is not None or repeats
                if len(keys & ids) >= 2 and labels and (rel, name) not in NOT_LABELS:
                    redefined.append(f"{rel}: {name} names {what}")
    assert redefined == []


def test_no_view_imports_a_plotting_library_for_a_label() -> None:
    """Label sets are read from the vocabulary, not through a chart module (which loads Altair)."""
    labels = {n for n in vocabulary.__all__ if n.endswith(("_LABELS", "_WORDS", "_SHORT"))}
    through_charts = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("charts"):
                names = {a.name for a in node.names} & labels
                if names:
                    through_charts.append(f"{path.relative_to(PACKAGE)}: {sorted(names)}")
    assert through_charts == []
