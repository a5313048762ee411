"""CP-SAT's own time on the models the product solves: today's parameters against variants.

Run: ``.venv/bin/python benchmarks/cpsat_params.py [--samples 20] [--rounds 2] [--variants a,b]``.

Issue 21 asks for a 50 ms default solve, a 100 ms live redraw and 500 uncertainty samples in
30 s on two workers, and CP-SAT is half of each (``solve_scale.py`` prints the phases). This
script asks what CP-SAT itself can give on the very models the product builds:

1. It collects them: every ``CpSolver.solve`` call of the default scenario and the presets
   (also at 1.1, 1.3 and 2 times their distributed-training demand, the harder models), of the
   workbook's live solves of eight steps of the training-demand and Kubernetes-engineers
   sliders (``PlanCache``: one worker, deterministic work limit) and of ``--samples``
   uncertainty samples (free and forced solves), each model written as CP-SAT's protobuf.
2. It replays each model under today's parameters (``model/cpsat.py``) and under each variant,
   alternating variant by variant for ``--rounds`` rounds so all see the same load, and prints
   per variant the total wall time over the models proven optimal (each model's fastest round),
   CP-SAT's deterministic time, the default scenario's own model (the headline figure: a
   variant that saves on the total can still slow it down), how many answers have the same
   objective and the same values as today's, and the model it slows down most.

CP-SAT's search on models this small is as much luck as work: the default's first model takes
0.014-0.041 deterministic seconds over random seeds 0-7. ``--seeds N`` replays every model under
seeds 0..N-1 as well (figures are then sums over models and seeds, the default's model a mean),
so a variant is judged on its expected work rather than on the product's one seed.

Two variants are not parameters: ``hint: the optimum`` hints every model with its own optimal
solution (the best warm start any reuse of solved neighbours could give, so a ceiling on what
such reuse can save), and ``two workers`` shows how often an equally cheap but different plan
exists (a different search finds it), which is why a hint from a neighbour could change a plan's
bytes.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from baseline_tree import load_average
from ortools.sat import cp_model_pb2
from ortools.sat.python import cp_model

VARIANTS: dict[str, str] = {
    "linearization 1 (CP-SAT's default)": "linearization_level: 1",
    "symmetry off": "symmetry_level: 0",
    "today again (the noise)": "log_search_progress: false",
    "presolve on (what large models keep)": "cp_model_presolve: true",
    "one presolve pass": "cp_model_presolve: true max_presolve_iterations: 1",
    "pseudo-cost branching": "search_branching: PSEUDO_COST_SEARCH",
    "LP branching": "search_branching: LP_SEARCH",
    "portfolio branching": "search_branching: PORTFOLIO_SEARCH",
    "LP rows up front": "add_lp_constraints_lazily: false",
    "core-based search": "optimize_with_core: true",
    "objective lower-bound search": "use_objective_lb_search: true",
    "no BVA in presolve": "cp_model_presolve: true presolve_use_bva: false",
    "new linear propagation": "new_linear_propagation: true",
    "hint: the optimum": "",
    "two workers": "num_workers: 2",
}
"""Variant name -> SatParameters in text format, merged over today's parameters."""

SCALES = "1.1,1.3,2"
"""Distributed-training demand factors of the harder models (``--scales``): the default and each
preset at these (the set ``model/cpsat.py``'s parameters were chosen on)."""


@dataclass(frozen=True)
class Outcome:
    """One replay of one model."""

    status: int
    objective: float
    values: tuple[int, ...]
    wall_s: float
    work: float


def collect(samples: int, scales: list[float], folder: Path) -> list[tuple[str, Path, str]]:
    """Every model the product solves on the workloads above: (source, file, parameters)."""
    import cluster_decide as cd
    from cluster_decide.analysis import uncertainty
    from cluster_decide.widgets import PlanCache
    from cluster_decide.widgets.controls import control

    found: list[tuple[str, Path, str]] = []
    source = ["?"]
    original = cp_model.CpSolver.solve

    def solve(self: cp_model.CpSolver, model: cp_model.CpModel, *a: object, **k: object) -> object:
        path = folder / f"{len(found):04d}.pb"
        model.export_to_file(str(path))
        found.append((source[0], path, str(self.parameters)))
        return original(self, model, *a, **k)  # type: ignore[arg-type]

    cp_model.CpSolver.solve = solve  # type: ignore[method-assign,assignment]
    try:
        scn = cd.load_scenario()
        source[0] = "default"
        cd.solve(scn)
        for name in cd.PRESETS:
            source[0] = f"preset {name}"
            cd.solve(cd.load_scenario(name))
        for name, base in (("default", scn), *((n, cd.load_scenario(n)) for n in cd.PRESETS)):
            source[0] = f"scaled {name}"
            for factor in scales:
                cd.solve(base.scale_demand("distributed_training", factor))
        for name, step in (("demand:training", 0.05), ("fte:kubernetes", 0.5)):
            source[0] = f"slider {name}"
            slider = control(name)
            first = float(slider.read(scn))
            for i in range(1, 9):
                PlanCache().solve(slider.apply(scn, round(first + step * i, 2)))
        source[0] = "uncertainty"
        if samples:
            uncertainty(scn, samples, 0, max_workers=1, progress=False)
    finally:
        cp_model.CpSolver.solve = original  # type: ignore[method-assign]
    return found


def _load(path: Path) -> cp_model_pb2.CpModelProto:
    return cp_model_pb2.CpModelProto.FromString(path.read_bytes())


def _model(proto: cp_model_pb2.CpModelProto) -> cp_model.CpModel:
    from google.protobuf import text_format

    model = cp_model.CpModel()
    model.proto.parse_text_format(text_format.MessageToString(proto))
    return model


def replay(model: cp_model.CpModel, params: str, extra: str, seed: int | None = None) -> Outcome:
    """Solve ``model`` with the parameters it was solved with, ``extra`` merged over them.

    ``seed``: CP-SAT's random seed instead of the one it was solved with.
    """
    solver = cp_model.CpSolver()
    solver.parameters.parse_text_format(params)
    solver.parameters.clear_max_time_in_seconds()  # the loop's wall-clock safety net
    solver.parameters.merge_text_format(extra)
    if seed is not None:
        solver.parameters.random_seed = seed
    start = time.perf_counter()
    code = solver.solve(model)
    wall = time.perf_counter() - start
    r = solver.response_proto
    return Outcome(int(code), r.objective_value, tuple(r.solution), wall, r.deterministic_time)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20, help="uncertainty samples to collect")
    parser.add_argument("--rounds", type=int, default=2, help="replays of each model per variant")
    parser.add_argument("--variants", help="comma-separated variant names (default: all)")
    parser.add_argument(
        "--scales", default=SCALES, help="training demand factors of the harder models"
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="replay each model under CP-SAT random seeds 0..N-1 (default 1: the seed it was "
        "solved with)",
    )
    args = parser.parse_args()
    names = list(VARIANTS) if not args.variants else args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    print(f"start: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        found = collect(args.samples, [float(x) for x in args.scales.split(",")], Path(tmp))
        protos = [_load(path) for _, path, _ in found]
    models = [_model(p) for p in protos]
    # Each case is a model and a seed (None: the seed it was solved with).
    seeds: list[int | None] = [None] if args.seeds <= 1 else list(range(args.seeds))
    cases = [(i, seed) for i in range(len(models)) for seed in seeds]
    # Today's optimum of each case: the hint of the 'hint: the optimum' variant.
    today = [replay(models[i], found[i][2], "", seed) for i, seed in cases]
    hinted: dict[int, cp_model.CpModel] = {}
    for (i, _seed), out in zip(cases, today, strict=True):
        if i in hinted:
            continue
        proto = protos[i]
        proto.ClearField("solution_hint")
        if out.status == cp_model.OPTIMAL:
            proto.solution_hint.vars.extend(range(len(out.values)))
            proto.solution_hint.values.extend(out.values)
        hinted[i] = _model(proto)
    runs: dict[str, list[list[Outcome]]] = {"today": [], **{n: [] for n in names}}

    def job(name: str, case: tuple[int, int | None]) -> Outcome:
        i, seed = case
        if name == "hint: the optimum":
            return replay(hinted[i], found[i][2], "", seed)
        return replay(models[i], found[i][2], VARIANTS.get(name, ""), seed)

    for _ in range(args.rounds):
        for name in runs:
            runs[name].append([job(name, case) for case in cases])
    optimal = [k for k, o in enumerate(today) if o.status == cp_model.OPTIMAL]
    default = [k for k, (i, _seed) in enumerate(cases) if i == 0]
    sources = Counter(s.split(" ")[0] for s, _, _ in found)
    print(
        f"{len(models)} models ({', '.join(f'{n} {k}' for k, n in sources.items())}) "
        f"× {len(seeds)} seed(s), {len(optimal)} of {len(cases)} proven optimal today; "
        f"{args.rounds} rounds, each case's fastest; after: {load_average()}\n"
    )
    print(
        "| variant | wall s (optimal cases) | deterministic s | the default's model, ms "
        "| same objective | same values | slowed most |"
    )
    print("|---|---|---|---|---|---|---|")
    base = [min(r[k].wall_s for r in runs["today"]) for k in range(len(cases))]
    for name, rounds in runs.items():
        best = [min(r[k].wall_s for r in rounds) for k in range(len(cases))]
        first = rounds[0]
        same_obj = sum(
            first[k].status == today[k].status and first[k].objective == today[k].objective
            for k in range(len(cases))
        )
        same_val = sum(
            first[k].status == today[k].status and first[k].values == today[k].values
            for k in range(len(cases))
        )
        worst = max(optimal, key=lambda k: best[k] / max(base[k], 1e-4))
        at = found[cases[worst][0]][0] + (
            f" (seed {cases[worst][1]})" if cases[worst][1] is not None else ""
        )
        print(
            f"| {name} | {sum(best[k] for k in optimal):.2f} | "
            f"{sum(first[k].work for k in optimal):.3f} | "
            f"{sum(best[k] for k in default) / len(default) * 1000:.0f} | "
            f"{same_obj}/{len(cases)} | "
            f"{same_val}/{len(cases)} | {at}: {best[worst] * 1000:.0f} against "
            f"{base[worst] * 1000:.0f} ms |"
        )


if __name__ == "__main__":
    main()
