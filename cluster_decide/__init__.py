"""cluster_decide: decide how to run a GPU estate — Slurm, Kubernetes, or a shared pool of both.

The public API (a contract: extended, never renamed)::

    import cluster_decide as cd
    scn = cd.load_scenario()            # the default preset, or a path / preset name
    plan = cd.solve(scn, time_limit_s=10)
    cd.evaluate(scn, plan)              # cost and feasibility, independent of the solver
    cd.compare(scn)                     # one row per archetype
    cd.recommend(scn)                   # the plan, its margin, what flips it, a verdict
    cd.simulate(plan)                   # replay jobs on the plan's pools
    cd.export.deck(plan, "review.pptx") # slides, reports, images (needs the workbook extras)

Names are imported on first use (PEP 562), so `import cluster_decide` is instant and a
command that only reads job logs never loads OR-Tools, SciPy or pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names as mypy and editors see them; at run time they load lazily
    from cluster_decide.analysis.comparison import compare
    from cluster_decide.analysis.recommendation import Recommendation, recommend
    from cluster_decide.base.errors import ScenarioError
    from cluster_decide.inputs.scenario import (
        PRESETS,
        Scenario,
        load_scenario,
        parse_scenario,
        save_scenario,
    )
    from cluster_decide.planning.evaluation import Evaluation, evaluate
    from cluster_decide.planning.plan import Plan, Status
    from cluster_decide.planning.solve import solve
    from cluster_decide.simulation.replay import Simulation, simulate

__all__ = [
    "PRESETS",
    "Evaluation",
    "Plan",
    "Recommendation",
    "Scenario",
    "ScenarioError",
    "Simulation",
    "Status",
    "compare",
    "evaluate",
    "load_scenario",
    "parse_scenario",
    "recommend",
    "save_scenario",
    "simulate",
    "solve",
]
__version__ = "0.1.0"

_LAZY = {
    "PRESETS": "cluster_decide.base.constants",
    "Recommendation": "cluster_decide.analysis",
    "Evaluation": "cluster_decide.planning.evaluation",
    "Plan": "cluster_decide.planning.plan",
    "Scenario": "cluster_decide.inputs.scenario",
    "ScenarioError": "cluster_decide.base.errors",
    "Simulation": "cluster_decide.simulation.replay",
    "Status": "cluster_decide.planning.plan",
    "compare": "cluster_decide.analysis",
    "evaluate": "cluster_decide.planning.evaluation",
    "load_scenario": "cluster_decide.inputs.scenario",
    "parse_scenario": "cluster_decide.inputs.scenario",
    "recommend": "cluster_decide.analysis",
    "save_scenario": "cluster_decide.inputs.scenario",
    "simulate": "cluster_decide.simulation.replay",
    "solve": "cluster_decide.planning.solve",
}
"""Public name -> the module that defines it, imported on first access."""


def __getattr__(name: str) -> object:
    """Import a public name's module on first use and cache the name in this module.

    `cd.export` needs the workbook extras (python-pptx, altair, vl-convert).
    """
    if name == "export":
        return importlib.import_module("cluster_decide.export")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cluster_decide' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not (for tab completion)."""
    return sorted({*globals(), *_LAZY, "export"})
