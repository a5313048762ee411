"""The command line: a thin shell over the library (``cluster-decide solve``, ``compare``, ...).

Errors a user can fix (a bad scenario, a missing file) print the message and exit with status 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from cluster_decide.analysis import compare
from cluster_decide.errors import ScenarioError
from cluster_decide.explain import ARCHETYPE_WORDS, money
from cluster_decide.model.solve import solve
from cluster_decide.plan import Plan
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
    ):
        return str(frame)


def summary(plan: Plan) -> str:
    """The plan as a readable report: headline, pools, placements, staffing, costs, reasons."""
    lines = [f"Scenario: {plan.scenario}", f"Status:   {plan.status.value}"]
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
        lines += ["", "Service levels", _table(plan.service_levels)]
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
    return 0 if plan.feasible else 1


def _compare(args: argparse.Namespace) -> int:
    scn = load_scenario(args.scenario)
    frame = compare(scn, time_limit_s=args.time_limit, workers=args.workers, seed=args.seed)
    if args.json:
        sys.stdout.write(frame.write_json() + "\n")
    else:
        sys.stdout.write(f"Scenario: {scn.name}\n\n{_table(frame.drop('note'))}\n\n")
        for row in frame.iter_rows(named=True):
            sys.stdout.write(f"- {row['archetype']}: {row['note']}\n")
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
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_solve = sub.add_parser("solve", help="recommend an architecture for a scenario")
    _add_common(p_solve)
    p_solve.add_argument("--out", metavar="DIR", help="also write plan.json and CSV frames to DIR")
    p_solve.set_defaults(func=_solve)
    p_compare = sub.add_parser("compare", help="solve once per archetype and compare costs")
    _add_common(p_compare)
    p_compare.set_defaults(func=_compare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 infeasible, 2 bad input)."""
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
