"""Classification rules as data: load, validate and describe the TOML rule files.

Rules live in `data/rules/*.toml` so an analyst changes the classification without touching
code. Validation collects every problem and raises once, each "where | what | fix".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster_decide.base.constants import WORKLOAD_KINDS
from cluster_decide.base.errors import did_you_mean
from cluster_decide.base.resources import data_dir
from cluster_decide.base.tomlread import tomllib
from cluster_decide.inventory.errors import InventoryError

__all__ = [
    "CONDITION_KEYS",
    "DEFAULT_RULES_PATH",
    "EXCLUDED",
    "Rule",
    "Rules",
    "load_rules",
]

DEFAULT_RULES_PATH = data_dir() / "rules" / "default.toml"
"""The shipped default rules."""

EXCLUDED = "excluded"
"""The kind of jobs that are no GPU demand (CPU-only jobs by default)."""

CONDITION_KEYS = {
    "min_gpus": int,
    "max_gpus": int,
    "min_nodes": int,
    "max_nodes": int,
    "min_hours": float,
    "max_hours": float,
    "partition_regex": str,
    "name_regex": str,
    "account_regex": str,
    "user_regex": str,
    "interactive": bool,
}
"""Condition name -> expected TOML type. All conditions of a rule must hold."""

_RULE_KEYS = {"name", "kind", "why", *CONDITION_KEYS}


@dataclass(frozen=True)
class Rule:
    """One ordered rule: its name, the kind it assigns, its conditions and why it exists."""

    name: str
    kind: str
    conditions: dict[str, Any]
    why: str = ""


@dataclass(frozen=True)
class Rules:
    """An ordered rule list plus the team maps (user -> team wins over account -> team)."""

    rules: tuple[Rule, ...]
    default_team: str = "unassigned"
    users: dict[str, str] = field(default_factory=dict)
    accounts: dict[str, str] = field(default_factory=dict)
    source: str = "<rules>"


def _suggest(key: str, allowed: set[str]) -> str:
    hint = did_you_mean(key, sorted(allowed))
    return f" ({hint})" if hint else ""


def _check_rule(i: int, raw: Any, problems: list[str]) -> Rule | None:
    where = f"rules[{i}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a table, got {type(raw).__name__}")
        return None
    for key in raw:
        if key not in _RULE_KEYS:
            problems.append(f"{where}: unknown key '{key}'{_suggest(key, _RULE_KEYS)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}.name: expected a non-empty string")
        name = f"rule-{i}"
    kind = raw.get("kind")
    kinds = (*WORKLOAD_KINDS, EXCLUDED)
    if kind not in kinds:
        problems.append(f"{where}.kind: expected one of {list(kinds)}, got {kind!r}")
    conditions: dict[str, Any] = {}
    for key, typ in CONDITION_KEYS.items():
        if key not in raw:
            continue
        value = raw[key]
        ok = isinstance(value, typ) and not (typ is not bool and isinstance(value, bool))
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            problems.append(f"{where}.{key}: expected {typ.__name__}, got {value!r}")
            continue
        if typ is str:
            try:
                re.compile(value)
            except re.error as exc:
                problems.append(f"{where}.{key}: invalid regular expression: {exc}")
                continue
        conditions[key] = value
    if not conditions:
        problems.append(f"{where}: no conditions; a catch-all must say so (e.g. min_gpus = 0)")
    why = raw.get("why", "")
    return Rule(name=name, kind=str(kind), conditions=conditions, why=str(why))


def load_rules(path: str | Path | None = None) -> Rules:
    """Load and validate a rules file (default: DEFAULT_RULES_PATH).

    Raises InventoryError listing every problem, one per line, with near-miss suggestions.
    """
    file = Path(path) if path is not None else DEFAULT_RULES_PATH
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InventoryError(str(file), "no such rules file") from None
    except tomllib.TOMLDecodeError as exc:
        raise InventoryError(str(file), f"invalid TOML: {exc}") from None
    problems: list[str] = []
    top = {"schema_version", "teams", "rules"}
    for key in doc:
        if key not in top:
            problems.append(f"unknown key '{key}'{_suggest(key, top)}")
    if doc.get("schema_version", 1) != 1:
        problems.append(f"schema_version: expected 1, got {doc.get('schema_version')!r}")
    raw_rules = doc.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        problems.append("rules: expected at least one [[rules]] table")
        raw_rules = []
    rules = [_check_rule(i, r, problems) for i, r in enumerate(raw_rules)]
    names = [r.name for r in rules if r is not None]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"rules: name '{dup}' is used twice; names must be unique")
    teams = doc.get("teams", {})
    users = teams.get("users", {}) if isinstance(teams, dict) else {}
    accounts = teams.get("accounts", {}) if isinstance(teams, dict) else {}
    for label, mapping in (("teams.users", users), ("teams.accounts", accounts)):
        if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
            problems.append(f'{label}: expected a table of name = "team" strings')
    if problems:
        raise InventoryError(str(file), "invalid rules:\n  " + "\n  ".join(problems))
    default = teams.get("default", "unassigned") if isinstance(teams, dict) else "unassigned"
    return Rules(
        rules=tuple(r for r in rules if r is not None),
        default_team=str(default),
        users={str(k): v for k, v in users.items()},
        accounts={str(k): v for k, v in accounts.items()},
        source=str(file),
    )
