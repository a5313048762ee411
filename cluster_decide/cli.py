"""The command line: a thin shell over the library (``cluster-decide solve``, ``compare``, ...).

Errors a user can fix (a bad scenario, a missing file) print the message and exit with status 2,
never a traceback. Exit codes: 0 answered (optimal or feasible), 1 infeasible (with fixes),
2 bad input, 3 no answer within the time limit, 4 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from cluster_decide.analysis import (
    break_evens,
    compare,
    default_distributions,
    describe_inputs,
    lever_values,
    near_optimal,
    tornado,
    uncertainty,
)
from cluster_decide.errors import ScenarioError
from cluster_decide.explain import ARCHETYPE_WORDS, money
from cluster_decide.model.loop import ModelInvalidError
from cluster_decide.model.solve import solve
from cluster_decide.plan import Plan, Status
from cluster_decide.scenario import PRESETS, load_scenario

__all__ = ["main", "summary"]


def _table(frame: pl.DataFrame) -> str:
    with pl.Config(
        tbl_rows=200,
        tbl_cols=20,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_formatting="ASCII_MARKDOWN",
        fmt_str_lengths=120,
        tbl_width_chars=160,
        float_precision=2,
        thousands_separator=",",
    ):
        return str(frame)


def summary(plan: Plan) -> str:
    """The plan as a readable report: headline, pools, placements, staffing, costs, reasons."""
    status = plan.status.value
    if plan.status is Status.FEASIBLE:
        status += f" (not proven optimal: within {plan.gap:.1%} of the best possible)"
    lines = [f"Scenario: {plan.scenario}", f"Status:   {status}"]
    if not plan.feasible:
        lines += ["", *plan.explanations]
        return "\n".join(lines) + "\n"
    lines += [
        f"Architecture: {ARCHETYPE_WORDS[plan.archetype or '']} ({plan.archetype})",
        f"Monthly cost: {money(plan.total_monthly_usd)} ({money(plan.cash_monthly_usd)} cash)",
        "",
        "Pools",
        _table(plan.pools),
        "",
        "Placements",
        _table(plan.placements.drop("kind")),
        "",
        "Staffing",
        _table(plan.staffing),
        "",
        "Costs (USD per month)",
        _table(plan.costs.select("component", "monthly_usd", "cash")),
    ]
    if plan.service_levels.height:
        lines += [
            "",
            "Service levels",
            _table(plan.service_levels.with_columns(pl.col("predicted").round(2))),
        ]
    lines += ["", "Why", *[f"- {s}" for s in plan.explanations]]
    return "\n".join(lines) + "\n"


def _solve(args: argparse.Namespace) -> int:
    scn = load_scenario(args.scenario)
    plan = solve(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "plan.json").write_text(plan.to_json(), encoding="utf-8")
        for name in ("placements", "pools", "staffing", "costs", "service_levels", "relaxations"):
            getattr(plan, name).write_csv(out / f"{name}.csv")
        (out / "explanations.txt").write_text("\n".join(plan.explanations) + "\n", encoding="utf-8")
    sys.stdout.write(plan.to_json() if args.json else summary(plan))
    if args.out and not args.json:
        sys.stdout.write(f"\nWrote plan.json and CSV files to {args.out}\n")
    return exit_code(plan)


EXIT_CODES = """exit codes:
  0  answered: a plan (optimal, or feasible with its gap)
  1  infeasible: no plan satisfies the scenario (the output lists changes that fix it)
  2  bad input: the scenario or a file is wrong (the message says where)
  3  no answer within the time limit: not a verdict; run again with a larger --time-limit
  4  internal error: a defect in cluster-decide (please report it with the scenario)"""


def exit_code(plan: Plan) -> int:
    """0 answered, 1 infeasible, 3 no answer within the time limit."""
    if plan.status is Status.TIME_LIMIT:
        return 3
    return 0 if plan.feasible else 1


def _compare(args: argparse.Namespace) -> int:
    scn = load_scenario(args.scenario)
    frame = compare(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    alternatives = (
        near_optimal(scn, slack=args.slack, n=args.alternatives, seed=args.seed)
        if args.alternatives
        else None
    )
    if args.json:
        out = {"compare": json.loads(frame.write_json())}
        if alternatives is not None:
            out["alternatives"] = json.loads(alternatives.write_json())
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    columns = ["archetype", "status", "total_monthly_usd", "delta_usd", "delta_pct", "pools"]
    columns += ["hpc_fte", "kubernetes_fte", "hires", "slo_met", "min_slo_margin"]
    sys.stdout.write(f"Scenario: {scn.name}\n\n{_table(frame.select(columns))}\n\n")
    for row in frame.iter_rows(named=True):
        sys.stdout.write(f"- {row['archetype']}: {row['note']}\n")
        if row["capability_gaps"]:
            sys.stdout.write(f"  Capability gaps: {row['capability_gaps']}\n")
    if alternatives is not None:
        sys.stdout.write(f"\nNear-optimal alternatives (within {args.slack:.0%} of the optimum)\n")
        for sentence in alternatives["sentence"]:
            sys.stdout.write(f"- {sentence}\n")
    return 0


def _sensitivity(args: argparse.Namespace) -> int:
    scn = load_scenario(args.scenario)
    inputs = args.inputs.split(",") if args.inputs else None
    frame = tornado(
        scn, args.pct / 100, inputs, args.seed, max_workers=args.jobs, progress="tornado"
    )
    levers = lever_values(scn, seed=args.seed, max_workers=args.jobs)
    breaks = break_evens(scn, inputs, seed=args.seed) if args.break_even else None
    if args.json:
        out = {"tornado": json.loads(frame.write_json()), "levers": json.loads(levers.write_json())}
        if breaks is not None:
            out["break_evens"] = json.loads(breaks.write_json())
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    columns = ["input", "low_value", "high_value", "low_delta_usd", "high_delta_usd"]
    columns += ["low_archetype", "high_archetype"]
    sys.stdout.write(f"Scenario: {scn.name}\n\nTornado at ±{args.pct:g}%\n")
    sys.stdout.write(f"{_table(frame.select(columns))}\n\nValue of levers\n")
    sys.stdout.write(_table(levers.select("lever", "value_usd_per_month", "lever_archetype")))
    sys.stdout.write("\n\n" + "".join(f"- {s}\n" for s in levers["sentence"]))
    if breaks is not None:
        sys.stdout.write("\nBreak-even points\n")
        sys.stdout.write("".join(f"- {s}\n" for s in breaks["sentence"]))
    return 0


def _uncertainty(args: argparse.Namespace) -> int:
    scn = load_scenario(args.scenario)
    tracked = args.track.split(",") if args.track else None
    result = uncertainty(
        scn, args.samples, args.seed, archetypes=tracked, max_workers=args.jobs, progress=True
    )
    if args.out:
        out_dir = Path(args.out)
        out_dir.mkdir(parents=True, exist_ok=True)
        result.samples.write_csv(out_dir / "samples.csv")
        result.costs.write_csv(out_dir / "archetype_costs.csv")
        result.summary.write_csv(out_dir / "summary.csv")
    if args.json:
        out = {
            "summary": json.loads(result.summary.write_json()),
            "distribution": json.loads(result.distribution().write_json()),
            "sentences": result.sentences(),
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    sys.stdout.write(f"Scenario: {scn.name}\n{args.samples} samples, seed {args.seed}\n")
    lines = describe_inputs(default_distributions(scn))
    sys.stdout.write(
        "Multipliers on the base values:\n" + "".join(f"  {x}\n" for x in lines) + "\n"
    )
    sys.stdout.write(f"{_table(result.summary)}\n\n{_table(result.distribution())}\n\n")
    sys.stdout.write("".join(f"- {s}\n" for s in result.sentences()))
    return 0


def _export(args: argparse.Namespace) -> int:
    # Imported here: the exports need the workbook extras (python-pptx, altair, vl-convert).
    from datetime import datetime, timezone

    from cluster_decide import export

    if not (args.pptx or args.html or args.md or args.images or args.data):
        raise ValueError("export: give at least one of --pptx, --html, --md, --images, --data")
    scn = load_scenario(args.scenario)
    plan = solve(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    alternatives = (
        None
        if args.no_compare
        else compare(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    )
    analyses = export.standard_analyses(scn) if args.analyses else None
    bundle = export.gather(plan, scn, alternatives, analyses, run_compare=False)
    stamp = datetime.now(timezone.utc).replace(tzinfo=None) if args.timestamp else None
    written = []
    if args.pptx:
        written.append(export.deck(bundle, args.pptx, template=args.template, timestamp=stamp))
    if args.html or args.md:
        written += export.report(bundle, args.html, args.md, timestamp=stamp)
    if args.images:
        written += export.images(bundle, args.images)
    if args.data:
        written += export.frames(bundle, args.data)
    if args.json:
        sys.stdout.write(
            json.dumps({"status": plan.status.value, "written": [str(w) for w in written]}) + "\n"
        )
    else:
        sys.stdout.write(f"Scenario: {scn.name}\nStatus:   {plan.status.value}\n")
        sys.stdout.write("".join(f"Wrote {w}\n" for w in written))
    return exit_code(plan)


def _ingest(args: argparse.Namespace) -> int:
    """Read job logs, classify them, derive demand and write a scenario; print both reports."""
    # Imported here so `solve` and `compare` start without the inventory readers and tqdm.
    from tqdm import tqdm

    from cluster_decide.inventory import InventoryError
    from cluster_decide.inventory.demand import write_scenario
    from cluster_decide.inventory.ingest import RowProgress, ingest, load_column_map

    try:
        column_map = load_column_map(args.column_map) if args.column_map else None
        # The bar shows on a terminal only (disable=None), so logs and pipes stay clean.
        with tqdm(unit=" rows", unit_scale=True, desc="reading", leave=False, disable=None) as bar:
            done = ingest(
                args.files,
                format=args.format,
                tz=args.tz,
                rules=args.rules,
                column_map=column_map,
                progress=RowProgress(bar),
                window_days=args.window_days,
                gpus_per_proc=args.gpus_per_proc,
            )
    except InventoryError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    workloads = done.demand.evidence.select(
        "workload", "jobs", "users", "gpu_hours_per_month", "gpus_p95", "wait_hours_p90"
    )
    sys.stdout.write(
        f"{done.read.report.summary()}\n\nClassification "
        f"(rules: {args.rules or 'default'})\n{_table(done.classification.report)}\n\n"
        f"Workloads ({done.demand.window_days:.1f} days observed)\n{_table(workloads)}\n\n"
    )
    n = len(done.demand.workloads)
    if not n:
        started = done.read.jobs["start"].is_not_null().sum()
        sys.stderr.write(
            f"error: {done.read.report.source}: no class holds a GPU-hour a month, so there is "
            f"no workload to plan and nothing was written to {args.out} (GPU-hours need a "
            f"start time, an elapsed time and GPUs; {started} of {done.read.jobs.height} jobs "
            "have a start time)\n"
        )
        return 2
    path = write_scenario(args.out, done.demand.workloads, name=args.name)
    sys.stdout.write(
        f"Wrote {n} workload{'s' if n > 1 else ''} to {path}; team, procurement and "
        "policy are defaults for you to edit.\n"
    )
    return 0


def _simulate(args: argparse.Namespace) -> int:
    """Replay jobs on the recommended plan and set simulated waits beside predicted ones."""
    from cluster_decide.simulate import simulate

    plan = solve(
        load_scenario(args.scenario),
        time_limit_s=args.time_limit,
        workers=args.workers,
        seed=args.seed,
    )
    if not plan.feasible:
        sys.stdout.write(summary(plan))
        return exit_code(plan)
    jobs = None
    if args.jobs:
        path = Path(args.jobs)
        jobs = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)
    sim = simulate(plan, jobs=jobs, days=args.days, seed=args.seed)
    if args.chart:
        from cluster_decide import charts

        chart = charts.simulated_waits(sim.comparison)
        out = Path(args.chart)
        if out.suffix == ".svg":
            out.write_text(charts.to_svg(chart), encoding="utf-8")
        else:
            out.write_bytes(charts.to_png(chart))
    if args.json:
        sys.stdout.write(
            json.dumps(
                {name: getattr(sim, name).to_dicts() for name in ("comparison", "waits", "pools")},
                default=str,
            )
            + "\n"
        )
        return 0
    sys.stdout.write(
        f"Scenario: {plan.scenario}\nSimulated {args.days:g} days ({sim.events:,} events in {sim.wall_s:.2f} s; "
        "the first day is warm-up)\n\n"
        f"Queue waits, predicted vs simulated (hours)\n{_table(sim.comparison)}\n\n"
        f"Waits by class\n{_table(sim.waits)}\n\n"
        f"Pools\n{_table(sim.pools)}\n"
    )
    return 0


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "scenario",
        nargs="?",
        default=None,
        help=f"scenario TOML file or preset name ({', '.join(PRESETS)}); default: {PRESETS[0]}",
    )
    p.add_argument("--json", action="store_true", help="print the stable JSON form")
    p.add_argument(
        "--time-limit",
        type=float,
        default=10.0,
        metavar="S",
        help="solver time limit in seconds (default 10)",
    )
    p.add_argument("--workers", type=int, default=2, help="CP-SAT worker threads (default 2)")
    p.add_argument("--seed", type=int, default=0, help="CP-SAT random seed (default 0)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per capability."""
    parser = argparse.ArgumentParser(
        prog="cluster-decide",
        description="Decide how to run a GPU estate: Slurm, Kubernetes, or a shared pool of both.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_solve = sub.add_parser("solve", help="recommend an architecture for a scenario")
    _add_common(p_solve)
    p_solve.add_argument("--out", metavar="DIR", help="also write plan.json and CSV frames to DIR")
    p_solve.set_defaults(func=_solve)
    p_compare = sub.add_parser("compare", help="solve once per archetype and compare costs")
    _add_common(p_compare)
    p_compare.add_argument(
        "--alternatives",
        type=int,
        default=0,
        metavar="N",
        help="also find N near-optimal alternatives (most different plans within the slack)",
    )
    p_compare.add_argument(
        "--slack", type=float, default=0.05, help="cost slack of alternatives (default 0.05)"
    )
    p_compare.set_defaults(func=_compare)
    p_sens = sub.add_parser(
        "sensitivity", help="tornado of cost and archetype, value of levers, break-even points"
    )
    _add_common(p_sens)
    p_sens.add_argument("--pct", type=float, default=20.0, help="tornado range ±PCT (default 20)")
    p_sens.add_argument(
        "--inputs", help="comma-separated inputs (demand:<kind>, fte:<skill>, gpu_price, ...)"
    )
    p_sens.add_argument(
        "--break-even", action="store_true", help="also bisect for break-even points (slower)"
    )
    p_sens.add_argument("--jobs", type=int, default=None, help="solver processes (default 2)")
    p_sens.set_defaults(func=_sensitivity)
    p_unc = sub.add_parser(
        "uncertainty", help="sample demand, prices and staff; how often each archetype wins"
    )
    _add_common(p_unc)
    p_unc.add_argument("--samples", type=int, default=200, help="number of samples (default 200)")
    p_unc.add_argument("--jobs", type=int, default=None, help="solver processes (default 2)")
    p_unc.add_argument(
        "--track", help="comma-separated archetypes to cost in every sample (default: best two)"
    )
    p_unc.add_argument("--out", metavar="DIR", help="also write samples and summary CSVs to DIR")
    p_unc.set_defaults(func=_uncertainty)
    p_export = sub.add_parser(
        "export", help="write a slide deck, an HTML/Markdown report, chart images, plan data"
    )
    _add_common(p_export)
    p_export.add_argument("--pptx", metavar="FILE", help="slide deck (.pptx, 16:9)")
    p_export.add_argument("--html", metavar="FILE", help="self-contained HTML report")
    p_export.add_argument(
        "--md", metavar="FILE", help="Markdown report (chart PNGs in NAME-images/ beside it)"
    )
    p_export.add_argument("--images", metavar="DIR", help="every chart as PNG (2x) and SVG")
    p_export.add_argument("--data", metavar="DIR", help="plan frames as CSV and JSON")
    p_export.add_argument("--template", metavar="FILE", help="company .pptx whose masters to use")
    p_export.add_argument(
        "--no-compare", action="store_true", help="skip the per-archetype alternatives (faster)"
    )
    p_export.add_argument(
        "--analyses",
        action="store_true",
        help="add lever values and break-even points (re-solves many times: about a minute)",
    )
    p_export.add_argument(
        "--timestamp", action="store_true", help="stamp today's date (default: reproducible files)"
    )
    p_export.set_defaults(func=_export)
    p_ingest = sub.add_parser(
        "ingest", help="turn sacct exports or public traces into a scenario's workloads"
    )
    p_ingest.add_argument("files", nargs="+", metavar="FILE", help="job logs (gzip works)")
    p_ingest.add_argument(
        "--format", default=None, help="override format detection (sacct, sacct_json, swf, ...)"
    )
    p_ingest.add_argument(
        "--tz", default=None, help="time zone of naive times, e.g. America/Chicago (default UTC)"
    )
    p_ingest.add_argument("--rules", metavar="FILE", help="classification rules TOML")
    p_ingest.add_argument(
        "--column-map", metavar="FILE", help="CSV/Parquet column map (TOML or JSON)"
    )
    p_ingest.add_argument(
        "--window-days",
        type=float,
        metavar="DAYS",
        help="days the logs cover, for traces without timestamps (default: measured)",
    )
    p_ingest.add_argument(
        "--gpus-per-proc",
        type=float,
        metavar="X",
        help="count each SWF processor as X GPUs (an HPC log records no GPUs)",
    )
    p_ingest.add_argument(
        "--name", default="Inventory-derived scenario", help="the written scenario's name"
    )
    p_ingest.add_argument("--out", required=True, metavar="FILE", help="scenario TOML to write")
    p_ingest.set_defaults(func=_ingest)
    p_sim = sub.add_parser("simulate", help="replay jobs on the recommended plan's pools")
    _add_common(p_sim)
    p_sim.add_argument("--days", type=float, default=28, help="days to simulate (default 28)")
    p_sim.add_argument(
        "--jobs", metavar="FILE", help="CSV/Parquet jobs: workload, submit_h, gpus, duration_h"
    )
    p_sim.add_argument(
        "--chart", metavar="FILE", help="also draw predicted vs simulated waits (.png or .svg)"
    )
    p_sim.set_defaults(func=_simulate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (see ``EXIT_CODES``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except ScenarioError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except ModelInvalidError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 4


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
