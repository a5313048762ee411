"""Classify jobs into workload kinds by ordered rules, and report what each rule took.

Vectorized: the rules become one polars `when/then` chain, so the first matching rule wins
exactly as in the file, at the speed of a single expression over millions of jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from cluster_decide.inventory.rules import EXCLUDED, Rule, Rules, load_rules

__all__ = [
    "UNCLASSIFIED",
    "Classification",
    "classify",
    "demand_jobs",
    "rule_condition",
    "team_expr",
]

UNCLASSIFIED = "(unclassified)"
"""Rule name of jobs no rule matched; their kind is null."""


@dataclass(frozen=True)
class Classification:
    """Jobs with `rule`, `kind` and `team` columns, and a per-rule report.

    `report` columns: rule, kind, jobs, gpu_hours, share_gpu_hours (of all GPU-hours); one
    row per rule in file order, then UNCLASSIFIED. Its sums equal the job table's totals.
    """

    jobs: pl.DataFrame
    report: pl.DataFrame


def rule_condition(rule: Rule) -> pl.Expr:
    """The boolean expression of all of a rule's conditions (null values never match)."""
    c = rule.conditions
    hours = pl.col("elapsed_s") / 3600.0
    parts: list[pl.Expr] = []
    bounds = {
        "min_gpus": pl.col("gpus") >= c.get("min_gpus", 0),
        "max_gpus": pl.col("gpus") <= c.get("max_gpus", 0),
        "min_nodes": pl.col("nodes") >= c.get("min_nodes", 0),
        "max_nodes": pl.col("nodes") <= c.get("max_nodes", 0),
        "min_hours": hours >= c.get("min_hours", 0.0),
        "max_hours": hours <= c.get("max_hours", 0.0),
    }
    parts += [expr for key, expr in bounds.items() if key in c]
    for key, column in (
        ("partition_regex", "partition"),
        ("name_regex", "name"),
        ("account_regex", "account"),
        ("user_regex", "user"),
    ):
        if key in c:
            parts.append(pl.col(column).str.contains(c[key]))
    if "interactive" in c:
        parts.append(pl.col("interactive") == c["interactive"])
    return pl.all_horizontal(parts).fill_null(False)


def team_expr(rules: Rules) -> pl.Expr:
    """Team of each job: user map, else account map, else the account, else the default."""
    user_team = pl.col("user").replace_strict(rules.users, default=None, return_dtype=pl.String)
    account_team = pl.col("account").replace_strict(
        rules.accounts, default=None, return_dtype=pl.String
    )
    account = pl.when(pl.col("account") != "").then(pl.col("account"))
    return pl.coalesce(user_team, account_team, account, pl.lit(rules.default_team))


def classify(jobs: pl.DataFrame, rules: Rules | None = None) -> Classification:
    """Assign each job the first matching rule's kind, a team, and count what rules took."""
    rules = rules or load_rules()
    rule_col: pl.Expr = pl.lit(UNCLASSIFIED)
    kind_col: pl.Expr = pl.lit(None, dtype=pl.String)
    for rule in reversed(rules.rules):
        cond = rule_condition(rule)
        rule_col = pl.when(cond).then(pl.lit(rule.name)).otherwise(rule_col)
        kind_col = pl.when(cond).then(pl.lit(rule.kind)).otherwise(kind_col)
    out = jobs.with_columns(
        rule_col.alias("rule"), kind_col.alias("kind"), team_expr(rules).alias("team")
    )
    order = pl.DataFrame(
        {
            "rule": [r.name for r in rules.rules] + [UNCLASSIFIED],
            "kind": [r.kind for r in rules.rules] + [None],
            "order": list(range(len(rules.rules) + 1)),
        },
        schema={"rule": pl.String, "kind": pl.String, "order": pl.Int64},
    )
    counts = out.group_by("rule").agg(
        pl.len().cast(pl.Int64).alias("jobs"),
        (pl.col("gpus") * pl.col("elapsed_s") / 3600.0).sum().alias("gpu_hours"),
    )
    total = float(counts["gpu_hours"].sum() or 0.0)
    report = (
        order.join(counts, on="rule", how="left")
        .with_columns(pl.col("jobs").fill_null(0), pl.col("gpu_hours").fill_null(0.0))
        .with_columns(
            (pl.col("gpu_hours") / total if total else pl.lit(0.0)).alias("share_gpu_hours")
        )
        .sort("order")
        .drop("order")
    )
    return Classification(jobs=out, report=report)


def demand_jobs(classified: pl.DataFrame) -> pl.DataFrame:
    """Jobs that are GPU demand: classified and not excluded."""
    return classified.filter(pl.col("kind").is_not_null() & (pl.col("kind") != EXCLUDED))
