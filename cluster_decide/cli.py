"""The command line: a thin shell over the library (``cluster-decide solve``, ``compare``, ...).

Errors a user can fix (a bad scenario, a missing file, a refused flag) print the message and
exit with status 2; no answer within the time limit exits 3; anything else is an internal error,
exit 4, with the traceback written to a file, never to the terminal (:mod:`cluster_decide.guard`).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from cluster_decide.base import ranges
from cluster_decide.base.atomic import (
    OutputError,
    all_or_nothing,
    refuse_inputs_as_outputs,
    write_atomic,
)
from cluster_decide.base.constants import PRESETS
from cluster_decide.base.errors import ScenarioError
from cluster_decide.guard import (
    EXIT_BAD_INPUT,
    EXIT_CODES_HELP,
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_TIME_LIMIT,
    TimeLimitExceeded,
    check_template,
    clean,
    clean_stdout,
    deadline,
    flag,
    report_internal_error,
    text_flag,
    time_zone,
)

if TYPE_CHECKING:
    import polars as pl

    from cluster_decide.inputs.scenario import Scenario
    from cluster_decide.planning.plan import Plan

# Each command imports what it uses inside its function, so `cluster-decide ingest` and every
# `--help` start without OR-Tools, SciPy or pydantic (see benchmarks/startup.py).

__all__ = ["main", "summary"]


def _table(frame: pl.DataFrame) -> str:
    import polars as pl

    with pl.Config(
        tbl_rows=200,
        tbl_cols=20,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_formatting="ASCII_MARKDOWN",
        fmt_str_lengths=300,  # a today column's reason is a sentence
        tbl_width_chars=4_000,  # a wide table scrolls; a wrapped cell reads as two words
        float_precision=2,
        thousands_separator=",",
    ):
        return str(frame)


def summary(plan: Plan, verdict: str = "", today: pl.DataFrame | None = None) -> str:
    """The plan as a readable report: headline, verdict, pools, placements, staffing, costs, reasons.

    ``verdict`` is the recommendation's sentence (:func:`cluster_decide.recommend`), printed
    under the architecture when given; ``today`` the today-against-plan table
    (:func:`cluster_decide.analysis.today.today_vs_plan`), printed under the headline.
    """
    import polars as pl

    from cluster_decide.planning.explain import money
    from cluster_decide.planning.plan import Status

    status = plan.status.value
    if plan.status is Status.FEASIBLE:
        status += f" (not proven optimal: within {plan.gap:.1%} of the best possible)"
    lines = [f"Scenario: {plan.scenario}", f"Status:   {status}"]
    if not plan.feasible:
        lines += ["", *plan.explanations]
        return "\n".join(lines) + "\n"
    lines += [
        f"Architecture: {plan.architecture_words} ({plan.archetype})",
        *([f"Verdict:      {verdict}"] if verdict else []),
        f"Monthly cost: {money(plan.total_monthly_usd)} ({money(plan.cash_monthly_usd)} cash)",
        *(
            [
                "",
                "Today -> plan (today: each workload of [current] kept where it runs, on its "
                "platform, and on its cluster and that cluster's GPU type where named; new ones "
                "placed freely; sized and priced by the same model)",
                _table(today),
            ]
            if today is not None
            else []
        ),
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


@contextmanager
def _executor(args: argparse.Namespace, pool: bool) -> Iterator[Executor | None]:
    """The executor sweeps run on.

    A Dask cluster (``--dask ADDRESS``); else a local process pool of ``--jobs`` processes when
    ``pool`` (1 solves in this process); else none.
    """
    address = getattr(args, "dask", None)
    if address:
        try:
            from distributed import Client
        except ImportError as exc:
            raise ValueError(
                "--dask needs dask.distributed: pip install 'cluster-decide[distributed]'"
            ) from exc
        try:
            client = Client(address, timeout="20s")
        except OSError as exc:
            raise ValueError(f"--dask {address}: no Dask scheduler answers there ({exc})") from exc
        with client:
            yield client.get_executor()
        return
    jobs = getattr(args, "jobs", None) or 2
    if not pool or jobs <= 1:
        yield None
        return
    import multiprocessing

    # Spawned, not forked: a forked child can deadlock on polars' thread pool.
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as local:
        yield local


def _solve(args: argparse.Namespace) -> int:
    from cluster_decide.analysis import recommend
    from cluster_decide.inputs.scenario import load_scenario
    from cluster_decide.planning.solve import solve

    scn = load_scenario(args.scenario)
    plan = solve(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    rec = None
    if not args.no_verdict:
        with _executor(args, pool=True) as executor:
            rec = recommend(
                scn,
                plan=plan,
                samples=args.samples,
                seed=args.seed,
                time_limit_s=args.time_limit,
                workers=args.workers,
                executor=executor,
                progress=args.samples > 0,
            )
    today = _today_table(scn, plan, args)
    if args.out:
        out = Path(args.out)
        frames = ("placements", "pools", "staffing", "costs", "service_levels", "relaxations")
        with all_or_nothing():
            write_atomic(out / "plan.json", plan.to_json())
            for name in frames:
                write_atomic(out / f"{name}.csv", getattr(plan, name).write_csv())
            write_atomic(out / "explanations.txt", "\n".join(plan.explanations) + "\n")
            if rec is not None:
                write_atomic(
                    out / "verdict.json",
                    json.dumps(rec.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n",
                )
                write_atomic(out / "runner_ups.csv", rec.runner_ups.write_csv())
                write_atomic(out / "flips.csv", rec.flips.write_csv())
            if today is not None:
                write_atomic(out / "today_vs_plan.csv", today.write_csv())
    if args.json:
        data = plan.to_dict()
        if rec is not None:
            data["verdict"] = rec.to_dict()
        if today is not None:
            data["today_vs_plan"] = today.to_dicts()
        sys.stdout.write(json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(summary(plan, rec.sentence if rec is not None else "", today))
    if args.out and not args.json:
        sys.stdout.write(f"\nWrote plan.json and CSV files to {args.out}\n")
    return exit_code(plan)


def _today_table(scn: Scenario, plan: Plan, args: argparse.Namespace) -> pl.DataFrame | None:
    """Today against the plan when the scenario describes today's estate (``[current]``)."""
    if scn.current is None or not plan.feasible:
        return None
    from cluster_decide.analysis.today import today_plan, today_vs_plan

    today = today_plan(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    return today_vs_plan(scn, plan, today)


def exit_code(plan: Plan) -> int:
    """0 answered, 1 infeasible, 3 no answer within the time limit (``EXIT_CODES_HELP``)."""
    from cluster_decide.planning.plan import Status

    if plan.status is Status.TIME_LIMIT:
        return EXIT_TIME_LIMIT
    return 0 if plan.feasible else EXIT_INFEASIBLE


def _compare(args: argparse.Namespace) -> int:
    from cluster_decide.analysis import compare, near_optimal
    from cluster_decide.inputs.scenario import load_scenario

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
    from cluster_decide.analysis import break_evens, lever_values, tornado
    from cluster_decide.inputs.scenario import load_scenario

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
    from cluster_decide.analysis import (
        catalog_distributions,
        default_distributions,
        describe_inputs,
        uncertainty,
    )
    from cluster_decide.inputs.scenario import load_scenario

    scn = load_scenario(args.scenario)
    tracked = args.track.split(",") if args.track else None
    dists = catalog_distributions(scn) if args.ranges == "catalog" else default_distributions(scn)
    with _executor(args, pool=False) as executor:
        result = uncertainty(
            scn,
            args.samples,
            args.seed,
            distributions=dists,
            archetypes=tracked,
            executor=executor,
            max_workers=args.jobs,
            progress=True,
        )
    if args.out:
        out_dir = Path(args.out)
        with all_or_nothing():
            write_atomic(out_dir / "samples.csv", result.samples.write_csv())
            write_atomic(out_dir / "archetype_costs.csv", result.costs.write_csv())
            write_atomic(out_dir / "summary.csv", result.summary.write_csv())
    if args.json:
        out = {
            "summary": json.loads(result.summary.write_json()),
            "distribution": json.loads(result.distribution().write_json()),
            "sentences": result.sentences(),
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    sys.stdout.write(f"Scenario: {scn.name}\n{args.samples} samples, seed {args.seed}\n")
    lines = describe_inputs(dists)
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
    from cluster_decide.analysis import compare
    from cluster_decide.inputs.scenario import load_scenario
    from cluster_decide.planning.solve import solve

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
    rec = None
    if not args.no_verdict:  # the verdict on the plan exported (as `solve` states it)
        from cluster_decide.analysis import recommend

        rec = recommend(
            scn,
            plan=plan,
            seed=args.seed,
            time_limit_s=args.time_limit,
            workers=args.workers,
            alternatives=alternatives,  # one runner-up figure in the whole deck
        )
    bundle = export.gather(plan, scn, alternatives, analyses, run_compare=False, recommendation=rec)
    stamp = datetime.now(timezone.utc).replace(tzinfo=None) if args.timestamp else None
    written = []
    with all_or_nothing():  # a deck beside an old report, or a report without images: never
        if args.pptx:
            written.append(export.deck(bundle, args.pptx, template=args.template, timestamp=stamp))
        if args.html or args.md:
            written += export.report(bundle, args.html, args.md, timestamp=stamp)
        if args.images:
            written += export.images(bundle, args.images)
        if args.data:
            written += export.frames(bundle, args.data)
    if args.json:
        document: dict[str, object] = {
            "status": plan.status.value,
            "written": [str(w) for w in written],
        }
        if rec is not None:
            document["verdict"] = rec.verdict
        sys.stdout.write(json.dumps(document) + "\n")
    else:
        sys.stdout.write(f"Scenario: {scn.name}\nStatus:   {plan.status.value}\n")
        if rec is not None:
            sys.stdout.write(f"Verdict:  {rec.sentence}\n")
        sys.stdout.write("".join(f"Wrote {w}\n" for w in written))
    return exit_code(plan)


def _ingest(args: argparse.Namespace) -> int:
    """Read job logs, classify them, derive demand and write a scenario; print both reports."""
    # Imported here, like every command's imports: `ingest` never loads the solver.
    import polars as pl
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
                fields=args.fields,
                delimiter=args.delimiter,
                swf_extended=args.swf_extended,
            )
    except InventoryError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    wait = pl.col("wait_hours_p90")
    workloads = done.demand.evidence.select(
        "workload",
        "jobs",
        "users",
        "gpu_hours_per_month",
        "gpus_p95",
        # A log without start times (an SWF wait of -1) has no waits: unknown, never zero.
        pl.when(wait.is_nan())
        .then(pl.lit("unknown"))
        .otherwise(wait.round(2).cast(pl.String))
        .alias("wait_hours_p90"),
    )
    sys.stdout.write(
        f"{done.read.report.summary()}\n\nClassification "
        f"(rules: {args.rules or 'default'})\n{_table(done.classification.report)}\n\n"
        f"Workloads ({done.demand.window_days:.1f} days observed)\n{_table(workloads)}\n\n"
    )
    if done.demand.window_note:
        sys.stderr.write(f"note: {done.demand.window_note}\n")
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
    # The derived workloads are checked against the scenario's ranges before anything is
    # written: a log whose counts derive an implausible demand is refused here, not saved to
    # fail later. (Checked without the scenario model, so `ingest` never loads pydantic.)
    from cluster_decide.inventory.plausible import check_workloads

    try:
        check_workloads(
            done.demand.workloads, target=Path(args.out).name, logs=done.read.report.source
        )
    except InventoryError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    path = write_scenario(args.out, done.demand.workloads, name=args.name)
    sys.stdout.write(
        f"Wrote {n} workload{'s' if n > 1 else ''} to {path}; team, procurement and "
        "policy are defaults for you to edit.\n"
    )
    unknown = done.demand.evidence.filter(wait.is_nan())["workload"].to_list()
    if unknown:
        sys.stdout.write(
            f"No waits observed for {', '.join(unknown)} (the log has no start times): their "
            "queue-wait targets are the 1-hour default, for you to set.\n"
        )
    skipped = len(done.read.report.skipped_files)
    if skipped:
        sys.stderr.write(
            f"warning: {skipped} of {len(args.files)} files skipped (no jobs read from them; "
            "the read report above says why); the scenario comes from the others\n"
        )
        return INGEST_SKIPPED_FILES
    return 0


INGEST_SKIPPED_FILES = 5
"""`ingest` exit status: the scenario was written, but some input files gave no jobs."""


def _simulate(args: argparse.Namespace) -> int:
    """Replay jobs on the recommended plan and set simulated waits beside predicted ones."""
    from cluster_decide.inputs.scenario import load_scenario
    from cluster_decide.planning.solve import solve
    from cluster_decide.simulation.replay import read_jobs, simulate

    plan = solve(
        load_scenario(args.scenario),
        time_limit_s=args.time_limit,
        workers=args.workers,
        seed=args.seed,
    )
    if not plan.feasible:
        sys.stdout.write(summary(plan))
        return exit_code(plan)
    jobs = read_jobs(Path(args.jobs)) if args.jobs else None
    sim = simulate(plan, jobs=jobs, days=args.days, seed=args.seed)
    if args.chart:
        from cluster_decide import charts

        chart = charts.simulated_waits(sim.comparison)
        out = Path(args.chart)
        write_atomic(out, charts.to_svg(chart) if out.suffix == ".svg" else charts.to_png(chart))
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
        type=flag(ranges.TIME_LIMIT_S),
        default=10.0,
        metavar="S",
        help=(
            "solver time limit in seconds, for each solve (default 10); on one worker a budget "
            "of work, so the same answer on any load (a busy machine takes up to 3x longer)"
        ),
    )
    p.add_argument(
        "--workers",
        type=flag(ranges.WORKERS),
        default=None,
        help="CP-SAT worker threads (default: 1, or 2 for a large estate)",
    )
    p.add_argument(
        "--seed", type=flag(ranges.SEED), default=0, help="CP-SAT random seed (default 0)"
    )
    _add_max_time(p)


def _add_max_time(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-time",
        type=flag(ranges.MAX_TIME_S),
        default=None,
        metavar="S",
        help="stop the whole command after S seconds of wall time, exit 3 (default: no limit)",
    )


def _add_dask(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the sampled solves on a running Dask scheduler, e.g. tcp://host:8786",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per capability."""
    parser = argparse.ArgumentParser(
        prog="cluster-decide",
        description="Decide how to run a GPU estate: Slurm, Kubernetes, or a shared pool of both.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser = functools.partial(  # type: ignore[method-assign]
        sub.add_parser, epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p_solve = sub.add_parser("solve", help="recommend an architecture for a scenario")
    _add_common(p_solve)
    p_solve.add_argument("--out", metavar="DIR", help="also write plan.json and CSV frames to DIR")
    p_solve.add_argument(
        "--no-verdict",
        action="store_true",
        help="skip the verdict (the runner-up and flip solves, a few seconds)",
    )
    p_solve.add_argument(
        "--samples",
        type=flag(ranges.VERDICT_SAMPLES),
        default=0,
        metavar="N",
        help="also sample N futures from the catalog's ranges: win rates, regret (default 0)",
    )
    p_solve.add_argument(
        "--jobs", type=flag(ranges.JOBS), default=None, help="solver processes (default 2)"
    )
    _add_dask(p_solve)
    p_solve.set_defaults(func=_solve)
    p_compare = sub.add_parser("compare", help="solve once per archetype and compare costs")
    _add_common(p_compare)
    p_compare.add_argument(
        "--alternatives",
        type=flag(ranges.ALTERNATIVES),
        default=0,
        metavar="N",
        help="also find N near-optimal alternatives (most different plans within the slack)",
    )
    p_compare.add_argument(
        "--slack",
        type=flag(ranges.SLACK),
        default=0.05,
        help="cost slack of alternatives (default 0.05)",
    )
    p_compare.set_defaults(func=_compare)
    p_sens = sub.add_parser(
        "sensitivity", help="tornado of cost and archetype, value of levers, break-even points"
    )
    _add_common(p_sens)
    p_sens.add_argument(
        "--pct", type=flag(ranges.PCT), default=20.0, help="tornado range ±PCT (default 20)"
    )
    p_sens.add_argument(
        "--inputs", help="comma-separated inputs (demand:<kind>, fte:<skill>, gpu_price, ...)"
    )
    p_sens.add_argument(
        "--break-even", action="store_true", help="also bisect for break-even points (slower)"
    )
    p_sens.add_argument(
        "--jobs", type=flag(ranges.JOBS), default=None, help="solver processes (default 2)"
    )
    p_sens.set_defaults(func=_sensitivity)
    p_unc = sub.add_parser(
        "uncertainty", help="sample demand, prices and staff; how often each archetype wins"
    )
    _add_common(p_unc)
    p_unc.add_argument(
        "--samples", type=flag(ranges.SAMPLES), default=200, help="number of samples (default 200)"
    )
    p_unc.add_argument(
        "--jobs", type=flag(ranges.JOBS), default=None, help="solver processes (default 2)"
    )
    p_unc.add_argument(
        "--track", help="comma-separated archetypes to cost in every sample (default: best two)"
    )
    p_unc.add_argument("--out", metavar="DIR", help="also write samples and summary CSVs to DIR")
    p_unc.add_argument(
        "--ranges",
        choices=("catalog", "flat"),
        default="catalog",
        help="input ranges: from the catalog's confidence (default, as the verdict uses) or the "
        "flat defaults (GPU prices ±20%%, demand σ 0.25/0.35)",
    )
    _add_dask(p_unc)
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
    p_export.add_argument(
        "--no-verdict",
        action="store_true",
        help="skip the verdict and its 'How sure' slide (the runner-up and flip solves, a few "
        "seconds)",
    )
    p_export.set_defaults(func=_export)
    p_ingest = sub.add_parser(
        "ingest",
        help="turn sacct exports or public traces into a scenario's workloads",
        epilog=EXIT_CODES_HELP
        + f"  {INGEST_SKIPPED_FILES}  (ingest) the scenario was written, but some files gave no "
        "jobs and were skipped (listed in the read report)\n",
    )
    p_ingest.add_argument("files", nargs="+", metavar="FILE", help="job logs (gzip works)")
    p_ingest.add_argument(
        "--format", default=None, help="override format detection (sacct, sacct_json, swf, ...)"
    )
    p_ingest.add_argument(
        "--tz",
        type=time_zone,
        default=None,
        help="time zone of naive times, e.g. America/Chicago (default UTC)",
    )
    p_ingest.add_argument("--rules", metavar="FILE", help="classification rules TOML")
    p_ingest.add_argument(
        "--column-map", metavar="FILE", help="CSV/Parquet column map (TOML or JSON)"
    )
    p_ingest.add_argument(
        "--window-days",
        type=flag(ranges.WINDOW_DAYS),
        metavar="DAYS",
        help="days the logs cover (default: an SWF header's StartTime-EndTime, else first "
        "submit to last end)",
    )
    p_ingest.add_argument(
        "--gpus-per-proc",
        type=flag(ranges.GPUS_PER_PROC),
        metavar="X",
        help="count each SWF processor as X GPUs (an HPC log records no GPUs)",
    )
    p_ingest.add_argument(
        "--fields",
        metavar="LIST",
        help="sacct -o field list of a header-less export, e.g. JobID,User,Submit,Start,End,...",
    )
    p_ingest.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="sacct --delimiter of the export (default: detected, else '|')",
    )
    p_ingest.add_argument(
        "--swf-extended",
        action="store_true",
        help="read an SWF with extra fields (a simulator's extended SWF): the first 18 as SWF",
    )
    p_ingest.add_argument(
        "--name",
        type=text_flag,
        default="Inventory-derived scenario",
        help="the written scenario's name",
    )
    p_ingest.add_argument("--out", required=True, metavar="FILE", help="scenario TOML to write")
    _add_max_time(p_ingest)
    p_ingest.set_defaults(func=_ingest)
    p_sim = sub.add_parser("simulate", help="replay jobs on the recommended plan's pools")
    _add_common(p_sim)
    p_sim.add_argument(
        "--days", type=flag(ranges.SIM_DAYS), default=28, help="days to simulate (default 28)"
    )
    p_sim.add_argument(
        "--jobs", metavar="FILE", help="CSV/Parquet jobs: workload, submit_h, gpus, duration_h"
    )
    p_sim.add_argument(
        "--chart", metavar="FILE", help="also draw predicted vs simulated waits (.png or .svg)"
    )
    p_sim.set_defaults(func=_simulate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit status; never raises, never prints a traceback.

    0 answered, 1 infeasible, 2 bad input, 3 no answer within the time limit, 4 internal error.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a refused flag (2, message printed)
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        refuse_inputs_as_outputs(_inputs(args), _outputs(args))
        if getattr(args, "template", None):
            check_template(Path(args.template))
        with deadline(args.max_time, progress=sys.stderr.isatty()), clean_stdout():
            return func(args)
    except TimeLimitExceeded as exc:
        sys.stderr.write(f"error: {exc} (stopped; no file was left half-written)\n")
        return EXIT_TIME_LIMIT
    except (ScenarioError, OutputError) as exc:
        sys.stderr.write(clean(f"error: {exc}\n"))
        return EXIT_BAD_INPUT
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        sys.stderr.write(clean(f"error: {where}{exc.strerror or exc}\n"))
        return EXIT_BAD_INPUT
    except ValueError as exc:
        sys.stderr.write(clean(f"error: {exc}\n"))
        return EXIT_BAD_INPUT
    except RecursionError:  # json and tomllib recurse once per level of nesting
        files = [p for p in _inputs(args) if Path(p).suffix in (".toml", ".json")]
        sys.stderr.write(
            clean(
                f"error: {', '.join(files) or 'an input'}: lists or tables nested too deeply to "
                "read (more than about 1,000 levels)\n"
            )
        )
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("interrupted (no file was left half-written)\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # the promise: no traceback on the terminal, ever
        sys.stderr.write(report_internal_error(exc, argv) + "\n")
        return EXIT_INTERNAL


def _inputs(args: argparse.Namespace) -> list[str]:
    """Every file the command reads (so none is also written)."""
    found = [getattr(args, "scenario", None), getattr(args, "template", None)]
    found += [getattr(args, "rules", None), getattr(args, "column_map", None)]
    found += list(getattr(args, "files", None) or [])
    if args.command == "simulate":
        found.append(args.jobs)
    return [str(p) for p in found if p and Path(str(p)).exists()]


def _outputs(args: argparse.Namespace) -> list[str]:
    """Every file the command writes (folders expand to the files written into them)."""
    files = [getattr(args, k, None) for k in ("pptx", "html", "md", "chart")]
    if args.command == "ingest":
        files.append(args.out)
    folders = [getattr(args, "images", None), getattr(args, "data", None)]
    if args.command in ("solve", "uncertainty"):
        folders.append(args.out)
    for folder in filter(None, folders):
        files.append(folder)
        if Path(folder).is_dir():
            files += [str(p) for p in Path(folder).iterdir()]
    return [str(f) for f in files if f]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
