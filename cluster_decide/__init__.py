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
"""

from cluster_decide.analysis import Recommendation, compare, recommend
from cluster_decide.errors import ScenarioError
from cluster_decide.evaluate import Evaluation, evaluate
from cluster_decide.model.solve import solve
from cluster_decide.plan import Plan, Status
from cluster_decide.scenario import PRESETS, Scenario, load_scenario, parse_scenario, save_scenario
from cluster_decide.simulate import Simulation, simulate

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


def __getattr__(name: str) -> object:
    """``cd.export`` on first use: it needs the workbook extras (python-pptx, altair, vl-convert)."""
    if name == "export":
        import importlib

        return importlib.import_module("cluster_decide.export")
    raise AttributeError(f"module 'cluster_decide' has no attribute {name!r}")
