"""The import graph against the layer order: no new import may run upward.

Layers, lowest first, each a folder: ``base/`` (vocabulary, resources, errors, ranges...),
``inputs/`` and ``inventory/`` (scenario, catalog, market, job logs), ``demand/`` (queueing),
``model/`` (data, families, the raw CP-SAT solve returning decisions), ``planning/`` (the solve
loop, evaluation, plan, service, explain), ``analysis/`` and ``simulation/``, then the views
(``charts/``, ``widgets/``, ``export/``, ``cli.py``, ``style.py``, ``guard.py``).
``KNOWN_UPWARD`` lists tolerated upward imports: none are left, and the test fails when one
appears (or when a listed one is gone, so the list could only shrink). No module imports
itself through others either: the graph counts every import, also those inside functions and
under ``TYPE_CHECKING``, and has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cluster_decide"
ORDER = ("base", "inputs", "demand", "model", "plan", "analyses", "views")
LAYERS = {
    "base": ("base",),
    "inputs": ("inputs", "inventory"),
    "demand": ("demand",),
    "model": ("model",),
    "plan": ("planning",),
    "analyses": ("analysis", "simulation"),
    "views": ("style", "charts", "widgets", "export", "cli", "guard"),
}
"""Each layer's folders (and the few view modules at the top level)."""
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


def test_every_layer_entry_is_in_the_tree() -> None:
    """The table names folders and modules that exist: the layers are the tree's own."""
    assert [p for ps in LAYERS.values() for p in ps if not _is_module(p)] == []
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == {p for ps in LAYERS.values() for p in ps} - {"style", "cli", "guard"}


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


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = [stack.pop()]
            while group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_has_no_cycle() -> None:
    """No cycle, counting imports inside functions and under ``TYPE_CHECKING`` too: a cycle
    that only types close still ties the two modules together for a reader and for mypy."""
    graph = {m: deps for m, deps in _imports().items() if m}  # the facade re-exports all
    assert _cycles(graph) == []


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
