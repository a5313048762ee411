"""Explain an infeasible scenario by the smallest changes that make it work, each one solved.

First, workloads that fit no candidate pool are repaired (allow a provider class that sells
their GPU type, a platform that has what they require, relax an SLO that no GPU can meet, or
lift a per-class platform policy). Then single changes are tried one at a time — more staff of
a skill (sized by a slack solve), a larger budget (sized by solving without one), hiring, the
forced archetype or the requirements it cannot host, the platform list, the pool limit — and,
where neither staff nor budget alone is enough, the two together; every change that yields a
feasible plan is reported with that plan's cost.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import polars as pl

from cluster_decide.base.constants import CAPABILITY_WORDS, PLATFORM_WORDS, PLATFORMS, SKILLS
from cluster_decide.inputs.market import PROVIDER_WORDS, TERM_WORDS, resolve_markets
from cluster_decide.inputs.offers import CLOUD_CLASSES
from cluster_decide.inputs.scenario import RealtimeWorkload, Scenario, Workload
from cluster_decide.model.data import MILLI, Combo, ModelData, prepare
from cluster_decide.planning.explain import SKILL_WORDS, money
from cluster_decide.planning.explain_people import and_list, fte, plural
from cluster_decide.planning.plan import RELAXATION_SCHEMA

if TYPE_CHECKING:
    from cluster_decide.planning.loop import SolveResult

__all__ = ["Relaxation", "diagnose"]


@dataclass(frozen=True)
class Relaxation:
    """One change that makes the scenario feasible, and what the resulting plan costs."""

    change: str
    amount: float
    unit: str
    monthly_usd: float
    sentence: str


@dataclass(frozen=True)
class _Checked:
    """The best plan after a change: its monthly cost and cash spend (USD), and its people."""

    total: float
    cash: float
    hires: dict[str, int]
    """People of each skill the plan hires."""
    required_milli: dict[str, int]


def _cost(scn: Scenario, time_limit_s: float, workers: int | None, seed: int) -> _Checked | None:
    """The best plan after a change, or None where there is none."""
    from cluster_decide.planning.evaluation import evaluate_decisions
    from cluster_decide.planning.loop import solve_data

    data = prepare(scn)
    if data.unplaceable:
        return None
    res = solve_data(data, time_limit_s, workers, seed)
    if res.decisions is None:
        return None
    ev = evaluate_decisions(data, res.decisions)
    return _Checked(
        ev.total_cents / 100.0,
        ev.cash_cents / 100.0,
        dict(ev.hires),
        dict(ev.required_milli),
    )


def _people_words(
    change: str, words: str, amount: float, checked: _Checked, before: ModelData
) -> tuple[str, float]:
    """A staffing or hiring change in totals of the plan solved after it, and its amount.

    "add 1 Kubernetes engineer to the team: 0.55 FTE needed, 0.0 on staff (1 FTE in all)";
    "hire 1 Kubernetes engineer (0.55 FTE needed, 0.0 on staff)". The slack solve that sizes a
    change finds the plan short of the fewest FTE, which may be short in two skills by 0.3 and
    0.2 FTE where another plan is short in one by 0.5: a hire is a whole person, so the plan
    solved after the change says whom it hires and what it needs. Other changes pass unchanged.
    """

    def need(s: str) -> str:
        return (
            f"{fte(checked.required_milli[s] / MILLI)} FTE needed, "
            f"{fte(before.available_milli[s] / MILLI)} on staff"
        )

    if change.startswith("staffing:"):
        # "staffing:hpc", or "staffing:hpc+budget" whose words go on ", and raise the budget …"
        s, _, also = change.removeprefix("staffing:").partition("+")
        total = getattr(before.scenario.team, s).fte + amount
        head, _, tail = words.partition(", and ") if also else (words, "", "")
        rest = f", and {tail}" if tail else ""
        return f"{head}: {need(s)} ({total:g} FTE in all){rest}", amount
    if change == "hiring" and any(checked.hires.values()):
        hired = {s: n for s, n in checked.hires.items() if n}
        return "hire " + " and ".join(
            f"{plural(n, SKILL_WORDS[s] + ' engineer')} ({need(s)})" for s, n in hired.items()
        ), float(sum(hired.values()))
    return words, amount


def _then(words: str, cost: _Checked) -> str:
    """A fix and what the best plan then costs, its cash spend too where that differs.

    A budget caps cash spend: "raise the budget to $626k" beside "the best plan then costs
    $628k" read as a plan above its budget, where $2k of the cost is estimated effort.
    """
    total, cash = cost.total, cost.cash
    spend = f", {money(cash)} of it cash spend" if money(cash) != money(total) else ""
    return f"{words[0].upper()}{words[1:]}: the best plan then costs {money(total)} a month{spend}."


def _repair_placement(
    scn: Scenario, data: ModelData
) -> tuple[Scenario, list[str], list[tuple[str, float, str, str]]]:
    """Fix workloads that fit no pool; returns the repaired scenario, reasons and the fixes."""
    reasons, fixes = [], []
    cat = scn.catalog
    for name, why in sorted(data.unplaceable.items()):
        w = scn.workload(name)
        reasons.append(f"{name} cannot run on any candidate pool: {why}.")
        families = {c.blocked_family for c in data.combos.values() if c.workload == name}
        unsold = [g for g in w.gpu_types if g in data.markets and data.markets[g].baseline is None]
        if unsold:
            allow = _provider_class_fix(scn, unsold)
            if allow is not None:
                scn, fix = allow
                fixes.append(fix)
        by_policy = any(
            c.blocked.startswith("its policy allows only")
            for c in data.combos.values()
            if c.workload == name
        )
        if by_policy and w.platforms is not None:
            scn = scn.update(
                {
                    "workloads": [
                        _without_key(x, "platforms") if x["name"] == name else x
                        for x in scn.to_dict()["workloads"]
                    ]
                }
            )
            fixes.append(
                (
                    "policy",
                    1.0,
                    "change",
                    f"let {name} run on any platform (drop its platform list)",
                )
            )
        if "slo" in families and isinstance(w, RealtimeWorkload):
            fastest = max(w.gpu_types, key=lambda g: cat.gpus[g].inference_speed)
            service_ms = (
                w.gpu_seconds_per_request
                * cat.gpus[w.gpu_types[0]].inference_speed
                / cat.gpus[fastest].inference_speed
                * 1000
            )
            target = math.ceil(service_ms * 1.2 / 10) * 10
            scn = scn.set_slo(name, float(target))
            fixes.append(
                (
                    f"slo:{name}",
                    float(target),
                    "ms",
                    f"relax the p99 latency SLO of {name} to {target} ms (one request alone takes {service_ms:.0f} ms on {fastest})",
                )
            )
        needs = [c for c in w.requires]
        gang = getattr(w, "gpus_per_job", 1)
        if gang > min(cat.gpus[g].gpus_per_node for g in w.gpu_types):
            needs.append("gang_scheduling")
        candidates = [
            k
            for k in PLATFORMS
            if k not in scn.policy.platforms
            and all(cat.platforms[k].supports(c) == "native" for c in needs)
        ]
        if ("capability" in families or "gang_fit" in families) and candidates:
            pick = candidates[0]
            scn = scn.restrict_platforms([*scn.policy.platforms, pick])
            fixes.append(
                (
                    f"platform:{pick}",
                    1.0,
                    "platform",
                    f"allow {PLATFORM_WORDS[pick]} as a candidate, which has what {name} requires",
                )
            )
        elif "capability" in families:
            lacking = [
                c
                for c in w.requires
                if not any(cat.platforms[p].supports(c) == "native" for p in scn.policy.platforms)
            ]
            if lacking:
                data_w = [dict(x) for x in scn.to_dict()["workloads"]]
                for x in data_w:
                    if x["name"] == name:
                        x["requires"] = [c for c in x.get("requires", []) if c not in lacking]
                        x["prefers"] = sorted(set(x.get("prefers", [])) | set(lacking))
                scn = scn.update({"workloads": data_w})
                fixes.append(
                    (
                        f"requires:{name}",
                        float(len(lacking)),
                        "capabilities",
                        f"treat {', '.join(lacking)} as preferred rather than required for {name}",
                    )
                )
    return scn, reasons, fixes


def _provider_class_fix(
    scn: Scenario, gpus: list[str]
) -> tuple[Scenario, tuple[str, float, str, str]] | None:
    """Allow the one seller that sells ``gpus`` for baseline nodes most cheaply.

    A provider class the scenario leaves out; or, where it names the companies it rents from
    (``procurement.providers``), a company it does not name (with its class, if left out too).
    ``None`` when none of them sells every one of ``gpus`` on a term the scenario accepts.
    """
    proc = scn.procurement
    allowed = list(proc.provider_classes)
    trials: list[tuple[str, str, dict[str, Any]]] = []
    if proc.providers is None:
        trials = [
            (cls, PROVIDER_WORDS[cls], {"provider_classes": [*allowed, cls]})
            for cls in CLOUD_CLASSES
            if cls not in allowed
        ]
    else:
        classes = scn.catalog.seller_classes()
        trials = [
            (
                seller,
                seller,
                {
                    "providers": [*proc.providers, seller],
                    "provider_classes": sorted({*allowed, cls}, key=CLOUD_CLASSES.index),
                },
            )
            for seller, cls in sorted(classes.items())
            if seller not in proc.providers
        ]
    best: tuple[float, str, str, Scenario] | None = None
    for key, words, change in trials:
        trial = scn.update({"procurement": change})
        markets = resolve_markets(trial, gpus)
        if any(markets[g].baseline is None for g in gpus):
            continue
        usd = sum(markets[g].node_usd_per_month for g in gpus)
        if best is None or usd < best[0]:
            best = (usd, key, words, trial)
    if best is None:
        return None
    _usd, key, words, trial = best
    markets = resolve_markets(trial, gpus)
    sold = ", ".join(
        f"{g} from {offer.provider} {TERM_WORDS[offer.term]} at ${offer.usd_per_gpu_hour:.2f} per "
        "GPU-hour"
        for g in gpus
        if (offer := markets[g].baseline) is not None
    )
    if proc.providers is None:
        return trial, (
            f"provider_class:{key}",
            1.0,
            "provider class",
            f"allow {words} as a provider class ([procurement] provider_classes): none of the "
            f"allowed classes sells {', '.join(gpus)} for a pool's nodes; it sells {sold}",
        )
    return trial, (
        f"provider:{key}",
        1.0,
        "provider",
        f"rent from {words} too ([procurement] providers): no listed provider "
        f"({and_list(list(proc.providers))}) sells {', '.join(gpus)} for a pool's nodes; "
        f"{words} sells {sold}",
    )


def _without_key(d: dict[str, object], key: str) -> dict[str, object]:
    return {k: v for k, v in d.items() if k != key}


def _single_changes(
    scn: Scenario, data: ModelData, time_limit_s: float, workers: int | None, seed: int
) -> list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]]:

    out: list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]] = []
    res = _relaxed(data, frozenset({"staffing"}), time_limit_s, workers, seed)
    if res.decisions is not None:
        out += staffing_changes(scn, data, res)
    out += people_changes(scn, data)
    if data.budget_cents is not None:
        raise_budget = _budget_change(data, time_limit_s, workers, seed)
        if raise_budget is not None:
            out.append(raise_budget)
        if res.decisions is None:
            out += _staff_and_budget_changes(scn, data, time_limit_s, workers, seed)
    if scn.policy.archetype != "any":
        out.append(
            (
                "archetype",
                1.0,
                "change",
                f"stop forcing {scn.policy.archetype} and let the optimizer choose",
                lambda x: x.force_archetype("any"),
            )
        )
        for name, (_why, missing) in _outside_archetype(data, scn.policy.archetype).items():
            if missing:
                words = " and ".join(CAPABILITY_WORDS[c] for c in missing)
                out.append(
                    (
                        f"requires:{name}:{'+'.join(missing)}",
                        1.0,
                        "change",
                        f"drop {words} from what {name} requires (it becomes a preference with a "
                        f"work-around cost), so that {scn.policy.archetype} can host it",
                        partial(_drop_requirements, workload=name, capabilities=missing),
                    )
                )
    for k in PLATFORMS:
        if k not in scn.policy.platforms:
            out.append(
                (
                    f"platform:{k}",
                    1.0,
                    "platform",
                    f"allow {PLATFORM_WORDS[k]} as a candidate",
                    partial(Scenario.restrict_platforms, platforms=[*scn.policy.platforms, k]),
                )
            )
    out += _hold_changes(scn)
    if scn.policy.max_pools is not None:
        out.append(
            (
                "max_pools",
                1.0,
                "change",
                f"lift the limit of {scn.policy.max_pools} pools (policy.max_pools)",
                # No limit at all: clusters of today count as pools, so an estate may need
                # more pools than there are platform kinds.
                lambda x: x.update({"policy": {"max_pools": None}}),
            )
        )
    return out


def _hold_changes(
    scn: Scenario,
) -> list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]]:
    """Releasing ``[current] hold``, or one workload's own hold, as changes to try."""
    current = scn.current
    if current is None:
        return []
    out: list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]] = []
    if current.hold:
        out.append(
            (
                "hold",
                1.0,
                "change",
                "let the plan move workloads off the platforms and clusters they run on today "
                "(drop [current] hold)",
                lambda x: x.update({"current": {"hold": False}}),
            )
        )
    for name, cur in sorted(current.workloads.items()):
        if cur.hold:
            where = f"the {cur.cluster} cluster" if cur.cluster else PLATFORM_WORDS[cur.platform]
            out.append(
                (
                    f"hold:{name}",
                    1.0,
                    "change",
                    f"let {name} move off {where} (drop its hold)",
                    partial(_release, workload=name),
                )
            )
    return out


def _release(scn: Scenario, workload: str) -> Scenario:
    """``scn`` with ``workload``'s own hold dropped."""
    return scn.update({"current": {"workloads": {workload: {"hold": False}}}})


def _budget_change(
    data: ModelData, time_limit_s: float, workers: int | None, seed: int
) -> tuple[str, float, str, str, Callable[[Scenario], Scenario]] | None:
    """The budget raise the cheapest plan needs (rounded up to $1k), or None when none helps."""
    assert data.budget_cents is not None
    res = _relaxed(data, frozenset({"budget"}), time_limit_s, workers, seed)
    if res.decisions is None or res.model.budget_slack is None or _budget_slack(res) <= 0:
        return None
    new_budget = math.ceil((data.budget_cents + _budget_slack(res)) / 100 / 1000) * 1000
    more = new_budget - data.budget_cents / 100
    return (
        "budget",
        more,
        "USD/month",
        f"raise the budget by {money(more)} to {money(new_budget)} a month",
        partial(Scenario.set_budget, usd_per_month=float(new_budget)),
    )


def _staff_and_budget_changes(
    scn: Scenario, data: ModelData, time_limit_s: float, workers: int | None, seed: int
) -> list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]]:
    """Staff and budget together, where neither alone is enough.

    The plan needing the fewest extra FTE with the budget relaxed too sizes the staff; each
    staffing change is then paired with the budget its cheapest plan needs (the new people's
    pay included), found by solving the changed scenario with the budget relaxed.
    """
    res = _relaxed(data, frozenset({"staffing", "budget"}), time_limit_s, workers, seed)
    if res.decisions is None:
        return []
    out: list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]] = []
    for change, amount, unit, words, apply in staffing_changes(scn, data, res):
        staffed = apply(scn)
        budget = _budget_change(prepare(staffed), time_limit_s, workers, seed)
        if budget is None:
            continue
        out.append(
            (
                f"{change}+budget",
                amount,
                unit,
                f"{words}, and {budget[3]}",
                partial(_both, apply, budget[4]),
            )
        )
    return out


def _both(
    first: Callable[[Scenario], Scenario], then: Callable[[Scenario], Scenario], scn: Scenario
) -> Scenario:
    """``scn`` with one change, then another."""
    return then(first(scn))


def _relaxed(
    data: ModelData, relax: frozenset[str], time_limit_s: float, workers: int | None, seed: int
) -> SolveResult:
    """The solve of ``data`` with slack on ``relax``, done once per scenario and settings.

    The reasons (``_why_infeasible``) and the fixes (``_single_changes``) read the same slack
    solves; they are kept in ``data.memo``.
    """
    from cluster_decide.planning.loop import solve_data

    key = f"relaxed:{'+'.join(sorted(relax))}:{time_limit_s}:{workers}:{seed}"
    if key not in data.memo:
        data.memo[key] = solve_data(data, time_limit_s, workers, seed, relax=relax)
    result: SolveResult = data.memo[key]
    return result


def _slack_value(res: SolveResult, skill: str) -> int:
    return int(res.slack.get(f"staffing:{skill}", 0))


def _budget_slack(res: SolveResult) -> int:
    return int(res.slack.get("budget", 0))


def diagnose(
    scn: Scenario, data: ModelData, time_limit_s: float, workers: int | None, seed: int
) -> tuple[pl.DataFrame, list[str]]:
    """Why ``scn`` has no feasible plan, and the changes that fix it (each verified by a solve)."""
    repaired, reasons, fixes = _repair_placement(scn, data)
    rows: list[Relaxation] = []
    if fixes:
        base_cost = _cost(repaired, time_limit_s, workers, seed)
        if base_cost is not None:
            for change, amount, unit, words in fixes:
                rows.append(
                    Relaxation(change, amount, unit, base_cost.total, _then(words, base_cost))
                )
    if not rows:
        rdata = prepare(repaired)
        if not rdata.unplaceable:
            if not reasons:
                reasons.append(_why_infeasible(repaired, rdata, time_limit_s, workers, seed))
            for change, amount, unit, words, apply in _single_changes(
                repaired, rdata, time_limit_s, workers, seed
            ):
                cost = _cost(apply(repaired), time_limit_s, workers, seed)
                if cost is not None:
                    words, amount = _people_words(change, words, amount, cost, rdata)
                    prefix = "; ".join(w for _, _, _, w in fixes)
                    words_all = f"{prefix}; and {words}" if prefix else words
                    rows.append(
                        Relaxation(change, amount, unit, cost.total, _then(words_all, cost))
                    )
    rows.sort(key=lambda r: (r.monthly_usd, r.change))
    frame = pl.DataFrame([r.__dict__ for r in rows], schema=RELAXATION_SCHEMA)
    sentences = ["No plan satisfies this scenario as it stands.", *reasons]
    if rows:
        sentences.append("Smallest changes that make it work, each checked by solving again:")
        sentences += [r.sentence for r in rows]
    else:
        sentences.append(
            "No single change tried here makes it feasible; check the workloads' requirements and the candidate platforms."
        )
    return frame, sentences


def _why_infeasible(
    scn: Scenario, data: ModelData, time_limit_s: float, workers: int | None, seed: int
) -> str:

    parts = []
    res = _relaxed(data, frozenset({"staffing"}), time_limit_s, workers, seed)
    if res.decisions is not None:
        from cluster_decide.planning.evaluation import evaluate_decisions

        ev = evaluate_decisions(data, res.decisions)
        hiring = _hiring_words(data)
        for s in SKILLS:
            if _slack_value(res, s) > 0:
                parts.append(
                    f"the leanest plan needs {fte(ev.required_milli[s] / MILLI)} {SKILL_WORDS[s]} "
                    f"FTE, {fte(data.available_milli[s] / MILLI)} are on staff and {hiring}"
                )
    if data.budget_cents is not None:
        res_b = _relaxed(data, frozenset({"budget"}), time_limit_s, workers, seed)
        if res_b.decisions is not None and _budget_slack(res_b) > 0:
            parts.append(
                f"the cheapest plan spends {money((data.budget_cents + _budget_slack(res_b)) / 100)} a month, above the {money(data.budget_cents / 100)} budget"
            )
    if scn.policy.archetype != "any":
        outside = _outside_archetype(data, scn.policy.archetype)
        parts.append(
            f"the forced archetype {scn.policy.archetype} cannot host "
            + (
                "; ".join(f"{w} ({why})" for w, (why, _missing) in outside.items())
                if outside
                else "every workload within the limits"
            )
        )
    parts += _held_beyond_pool_limit(scn)
    if not parts and data.budget_cents is not None:
        parts += _short_of_both(data, time_limit_s, workers, seed)
    if not parts:
        parts.append("the constraints conflict in combination")
    return "Why: " + "; and ".join(parts) + "."


def _held_beyond_pool_limit(scn: Scenario) -> list[str]:
    """Held workloads on more clusters of today than ``policy.max_pools`` allows, in words.

    Each cluster a held workload must stay on is a pool of the plan; no solve needed to see it.
    """
    current, limit = scn.current, scn.policy.max_pools
    if current is None or limit is None:
        return []
    held = {
        cur.cluster
        for cur in current.workloads.values()
        if cur.cluster and (cur.hold or current.hold)
    }
    if len(held) <= limit:
        return []
    return [
        f"workloads held where they run keep {len(held)} clusters of today ({', '.join(sorted(held))}), "
        f"more than the {limit} pools policy.max_pools allows"
    ]


def _hiring_words(data: ModelData) -> str:
    """What the scenario lets the plan hire, in words."""
    if data.people is not None and data.people.max_hires:
        return f"at most {data.people.max_hires} hires are allowed"
    return "hiring is not allowed"


def _short_of_both(
    data: ModelData, time_limit_s: float, workers: int | None, seed: int
) -> list[str]:
    """What the leanest plan lacks when staff and budget are each short (either alone solves nothing)."""
    from cluster_decide.planning.evaluation import evaluate_decisions

    assert data.budget_cents is not None
    res = _relaxed(data, frozenset({"staffing", "budget"}), time_limit_s, workers, seed)
    if res.decisions is None:
        return []
    ev = evaluate_decisions(data, res.decisions)
    parts = [
        f"the leanest plan needs {fte(ev.required_milli[s] / MILLI)} {SKILL_WORDS[s]} FTE, "
        f"{fte(data.available_milli[s] / MILLI)} are on staff and {_hiring_words(data)}"
        for s in SKILLS
        if _slack_value(res, s) > 0
    ]
    if _budget_slack(res) > 0:
        parts.append(
            f"even without the people it lacks, it spends "
            f"{money((data.budget_cents + _budget_slack(res)) / 100)} a month, above the "
            f"{money(data.budget_cents / 100)} budget"
        )
    return parts


def staffing_changes(
    scn: Scenario, data: ModelData, res: SolveResult
) -> list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]]:
    """More staff of a skill, or hiring them, sized by a slack solve.

    The slack solve finds the plan needing the fewest extra FTE, which sizes each change; what
    the plan solved after the change needs is said by ``diagnose`` (:func:`_people_words`).
    """
    from cluster_decide.planning.evaluation import evaluate_decisions

    assert res.decisions is not None
    ev = evaluate_decisions(data, res.decisions)
    out: list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]] = []
    short: dict[str, int] = {}
    for s in SKILLS:
        extra_milli = _slack_value(res, s)
        if extra_milli <= 0:
            continue
        need = ev.required_milli[s] / MILLI
        have = data.available_milli[s] / MILLI
        people = math.ceil(extra_milli / MILLI)
        short[s] = math.ceil(max(0.0, need - have) - 1e-9)
        new = getattr(scn.team, s).fte + people
        out.append(
            (
                f"staffing:{s}",
                float(people),
                "FTE",
                f"add {plural(people, SKILL_WORDS[s] + ' engineer')} to the team",
                partial(Scenario.set_fte, skill=s, fte=new),
            )
        )
    total = sum(short.values())
    if total and (not scn.hiring.allowed or scn.hiring.max_fte < total):
        by_skill: dict[str, int] = {str(k): v for k, v in scn.hiring.max_fte_by_skill.items()}
        caps = {s: max(n, by_skill.get(s, n)) for s, n in short.items()}
        limit = max(total, scn.hiring.max_fte)
        out.append(
            (
                "hiring",
                float(total),
                "FTE",
                "hire "
                + " and ".join(plural(n, SKILL_WORDS[s] + " engineer") for s, n in short.items()),
                lambda x: x.update(
                    {
                        "hiring": {
                            "allowed": True,
                            "max_fte": limit,
                            **({"max_fte_by_skill": caps} if x.hiring.max_fte_by_skill else {}),
                        }
                    }
                ),
            )
        )
    return out


def people_changes(
    scn: Scenario, data: ModelData
) -> list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]]:
    """Changes a manager can make besides staff, each checked by solving again (``diagnose``).

    Managed services (in the cloud), retraining, a looser service level, one requirement
    dropped.
    """
    out: list[tuple[str, float, str, str, Callable[[Scenario], Scenario]]] = []
    if not scn.policy.managed or scn.procurement.mode != "cloud":
        where = "" if scn.procurement.mode == "cloud" else " in the cloud"
        out.append(
            (
                "managed",
                1.0,
                "change",
                f"run the clusters as managed services{where} (EKS, GKE or AKS; AWS PCS), which "
                "leave far less operations work to the team",
                lambda x: x.update({"policy": {"managed": True}, "procurement": {"mode": "cloud"}}),
            )
        )
    if not scn.hiring.retraining and any(getattr(scn.team, s).fte >= 1 for s in SKILLS):
        out.append(
            (
                "retraining",
                1.0,
                "change",
                "let the plan train engineers of one skill in the other",
                lambda x: x.update({"hiring": {"retraining": True}}),
            )
        )
    for w in scn.workloads:
        families = {c.blocked_family for c in data.combos.values() if c.workload == w.name}
        if "slo" in families or data.budget_cents is not None:
            looser = round(w.slo * 1.5, 3)
            out.append(
                (
                    f"slo:{w.name}",
                    looser,
                    w.slo_key,
                    f"loosen the service level of {w.name} by half ({w.slo_key} {w.slo:g} to "
                    f"{looser:g})",
                    partial(Scenario.set_slo, workload=w.name, value=looser),
                )
            )
        if "capability" in families:
            for c in w.requires:
                out.append(
                    (
                        f"requires:{w.name}:{c}",
                        1.0,
                        "change",
                        f"drop {CAPABILITY_WORDS[c]} from what {w.name} requires (it becomes a "
                        "preference with a work-around cost)",
                        partial(_drop_requirement, workload=w.name, capability=c),
                    )
                )
    return out


def _drop_requirement(scn: Scenario, workload: str, capability: str) -> Scenario:
    """``scn`` with one capability moved from a workload's requires to its prefers."""
    return _drop_requirements(scn, workload, (capability,))


def _drop_requirements(scn: Scenario, workload: str, capabilities: tuple[str, ...]) -> Scenario:
    """``scn`` with these capabilities moved from a workload's requires to its prefers."""
    data = scn.to_dict()
    for x in data["workloads"]:
        if x["name"] == workload:
            x["requires"] = [c for c in x.get("requires", []) if c not in capabilities]
            x["prefers"] = [*x.get("prefers", []), *capabilities]
    return scn.update({"workloads": data["workloads"]})


def _outside_archetype(data: ModelData, archetype: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Workloads no pool of a forced archetype's platform kinds may host: why, and what they lack.

    The kinds are those some plan of that shape may open (``evaluation.archetype_of`` of a set
    holding them). What a workload lacks is the capabilities it requires that none of those
    kinds has natively (empty when something else blocks it, such as a job too large).
    """
    from cluster_decide.planning.evaluation import archetype_of

    kinds = {
        k
        for n in range(1, len(PLATFORMS) + 1)
        for shape in itertools.combinations(PLATFORMS, n)
        if archetype_of(list(shape)) == archetype
        for k in shape
    }
    platforms = data.scenario.catalog.platforms
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for w in data.workloads:
        combos = [
            c
            for c in data.combos.values()
            if c.workload == w.name and data.pool(c.pool).platform in kinds
        ]
        if not combos or not all(c.blocked for c in combos):
            continue
        missing: tuple[str, ...] = tuple(
            c
            for c in w.requires
            if all(platforms[k].supports(c, w.interface) != "native" for k in kinds)
        )

        def lacks(c: Combo, w: Workload = w) -> int:
            plat = platforms[data.pool(c.pool).platform]
            return sum(plat.supports(r, w.interface) != "native" for r in w.requires)

        # The reason of the kind that comes closest (a batch add-on lacks MPI; plain Kubernetes
        # lacks gang scheduling too).
        out[w.name] = (min(combos, key=lacks).blocked, missing)
    return out
