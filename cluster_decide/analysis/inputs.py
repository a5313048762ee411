"""The inputs an analysis varies, by name, each with its base value and a way to set it.

Names are plain strings so a worker process can rebuild a scenario from ``(name, value)`` pairs:

| name | value | base |
|---|---|---|
| ``demand:<kind>`` | demand factor for every workload of that kind | 1.0 |
| ``slo:<kind>`` | SLO factor for every workload of that kind (> 1 relaxes) | 1.0 |
| ``fte:<skill>`` | available FTE of ``hpc`` or ``kubernetes`` | the team's FTE |
| ``staff_cost:<skill>`` | loaded USD per FTE-year | the scenario's or catalog's |
| ``gpu_price`` | GPU price scale (reserved, on-demand, capex) | ``procurement.gpu_price_scale`` |
| ``hiring`` | 1 allows hiring, 0 forbids it | 1 if the scenario allows it |
| ``budget`` | monthly cash budget, USD | ``policy.budget_usd_per_month`` (only when set) |

All changes of one call are merged into one validated copy (one parse, not one per input).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cluster_decide.base.constants import SKILLS, WORKLOAD_KINDS
from cluster_decide.base.vocabulary import KIND_WORDS
from cluster_decide.inputs.scenario import DEMAND_KEYS, SLO_KEYS, Scenario, parse_scenario
from cluster_decide.planning.explain import SKILL_WORDS

__all__ = [
    "DEMAND_KEYS",
    "apply_inputs",
    "base_value",
    "default_inputs",
    "input_label",
    "input_unit",
]

_KIND_WORDS = KIND_WORDS


def _split(name: str) -> tuple[str, str]:
    head, _, arg = name.partition(":")
    valid = (
        (head in ("demand", "slo") and arg in WORKLOAD_KINDS)
        or (head in ("fte", "staff_cost") and arg in SKILLS)
        or (head in ("gpu_price", "hiring", "budget") and not arg)
    )
    if not valid:
        raise ValueError(
            f"unknown input '{name}' (expected demand:<kind>, slo:<kind>, fte:<skill>, "
            "staff_cost:<skill>, gpu_price, hiring or budget)"
        )
    return head, arg


def input_label(name: str) -> str:
    """Words for an input, as sentences use them (``real-time inference demand``)."""
    head, arg = _split(name)
    return {
        "demand": f"{_KIND_WORDS.get(arg, arg)} demand",
        "slo": f"the {_KIND_WORDS.get(arg, arg)} SLO",
        "fte": f"{SKILL_WORDS.get(arg, arg)} staff",
        "staff_cost": f"the loaded cost of {SKILL_WORDS.get(arg, arg)} staff",
        "gpu_price": "GPU prices",
        "hiring": "hiring",
        "budget": "the budget",
    }[head]


def input_unit(name: str) -> str:
    """The unit of an input's value: ``x``, ``FTE``, ``USD/year``, ``USD/month`` or ``on/off``."""
    head, _ = _split(name)
    units = {"fte": "FTE", "staff_cost": "USD/year", "hiring": "on/off", "budget": "USD/month"}
    return units.get(head, "x")


def base_value(scn: Scenario, name: str) -> float:
    """The input's value in ``scn`` (factors are 1.0)."""
    head, arg = _split(name)
    if head == "fte":
        return float(getattr(scn.team, arg).fte)
    if head == "staff_cost":
        return scn.loaded_cost_usd_per_year(arg)
    if head == "gpu_price":
        return scn.procurement.gpu_price_scale
    if head == "hiring":
        return 1.0 if scn.hiring.allowed else 0.0
    if head == "budget":
        budget = scn.policy.budget_usd_per_month
        if budget is None:
            raise ValueError("budget: the scenario sets no budget (policy.budget_usd_per_month)")
        return float(budget)
    return 1.0


def default_inputs(scn: Scenario, slo: bool = True) -> list[str]:
    """The key inputs of ``scn``: demand per kind present, staff, staff cost, GPU price, SLOs."""
    kinds = [k for k in WORKLOAD_KINDS if any(w.kind == k for w in scn.workloads)]
    names = [f"demand:{k}" for k in kinds]
    names += [f"fte:{s}" for s in SKILLS] + ["gpu_price"]
    names += [f"staff_cost:{s}" for s in SKILLS]
    if slo:
        names += [f"slo:{k}" for k in kinds]
    return names


def apply_inputs(scn: Scenario, values: Mapping[str, float]) -> Scenario:
    """A validated copy of ``scn`` with every input of ``values`` set (one parse)."""
    if not values:
        return scn
    data: dict[str, Any] = scn.to_dict()
    for name, value in values.items():
        head, arg = _split(name)
        if head == "demand":
            if not value > 0:
                raise ValueError(f"{name}: demand factor must be positive, got {value}")
            for w in data["workloads"]:
                if w["kind"] == arg:
                    key = DEMAND_KEYS[arg]
                    scaled = w[key] * value
                    w[key] = max(1, round(scaled)) if isinstance(w[key], int) else scaled
        elif head == "slo":
            for w in data["workloads"]:
                if w["kind"] == arg:
                    w[SLO_KEYS[arg]] = float(w[SLO_KEYS[arg]]) * value
        elif head == "fte":
            data.setdefault("team", {}).setdefault(arg, {})["fte"] = max(0.0, float(value))
        elif head == "staff_cost":
            data.setdefault("team", {}).setdefault(arg, {})["loaded_cost_usd_per_year"] = float(
                value
            )
        elif head == "gpu_price":
            data.setdefault("procurement", {})["gpu_price_scale"] = float(value)
        elif head == "budget":
            data.setdefault("policy", {})["budget_usd_per_month"] = float(value)
        else:
            data.setdefault("hiring", {})["allowed"] = bool(value >= 0.5)
    return parse_scenario(data, source=scn.source)
