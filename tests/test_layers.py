"""The import graph against the layer order: no new import may run upward.

Layers, lowest first: base (vocabulary, resources, errors, ranges...), inputs (catalog, scenario,
inventory), demand (queueing), model (data, families, the raw CP-SAT solve returning decisions),
plan (the solve loop in ``solving/``, evaluation, plan, service, explain), analyses, views.
``KNOWN_UPWARD`` lists tolerated upward imports: none are left, and the test fails when one
appears (or when a listed one is gone, so the list could only shrink).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cluster_decide"
ORDER = ("base", "inputs", "demand", "model", "plan", "analyses", "views")
LAYERS = {
    "base": ("vocabulary", "constants", "resources", "tomlread", "errors", "ranges", "atomic"),
    "inputs": ("catalog", "datasources", "estate_size", "scenario", "inventory", "market"),
    "demand": ("queueing",),
    "model": ("model",),
    "plan": ("evaluation", "plan", "service", "explain", "explain_people", "sharing", "solving"),
    "analyses": ("analysis", "simulation", "simengine"),
    "views": (
        "style",
        "charts",
        "widgets",
        "export",
        "cli",
        "guard",
    ),
}
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _layer(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > best[1]):
                best = (ORDER.index(layer), len(prefix))
    return best[0] if best else None


def _imports() -> dict[str, set[str]]:
    """Module -> the cluster_decide modules it imports (package-relative names)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        module = ".".join(p for p in parts if p != "__init__")
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                rel = name.removeprefix("cluster_decide").lstrip(".")
                if name.startswith("cluster_decide") and rel and _is_module(rel):
                    found.add(rel)
        graph[module] = found - {module}
    return graph


def _is_module(rel: str) -> bool:
    path = PACKAGE.joinpath(*rel.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in _imports() if m and _layer(m) is None)
    assert missing == []


def test_no_import_runs_upward_beyond_the_known_ones() -> None:
    upward = {
        (module, dep)
        for module, deps in _imports().items()
        if module  # the package facade re-exports everything
        for dep in deps
        if (lm := _layer(module)) is not None and (ld := _layer(dep)) is not None and ld > lm
    }
    assert upward - KNOWN_UPWARD == set(), "new upward imports"
    assert KNOWN_UPWARD - upward == set(), "gone: remove them from KNOWN_UPWARD"


def test_no_module_is_shadowed_by_a_function_of_its_name() -> None:
    """`cd.evaluate` is a function, so the module that holds it is not also called `evaluate`:
    a reader who imports ``cluster_decide.X`` gets the module named X, never a function."""
    import importlib
    import pkgutil
    import types

    names = ["cluster_decide"] + [
        p.name for p in pkgutil.walk_packages([str(PACKAGE)], "cluster_decide.") if p.ispkg
    ]
    shadowed = []
    for name in names:
        package = importlib.import_module(name)
        for child in pkgutil.iter_modules(package.__path__):
            value = getattr(package, child.name, None)
            if value is not None and not isinstance(value, types.ModuleType):
                shadowed.append(f"{name}.{child.name}")
    assert shadowed == []
