"""Sentences about people and change: payroll, idle staff, hires, retraining, managed services, moves.

Each sentence is built from the evaluator's numbers (``evaluate.Evaluation``) and the people
tables (``model.people``), so the amounts it quotes are the ones the plan pays.
"""

from __future__ import annotations

import math

import numpy as np

from cluster_decide.base.constants import (
    CAPABILITY_WORDS,
    HOURS_PER_MONTH,
    HOURS_PER_WEEK,
    PLATFORM_WORDS,
    SKILLS,
    SUPPORT_LEVELS,
)
from cluster_decide.base.vocabulary import (
    ADDONS,
    CLUSTER_WORDS,
    FAMILY,
    MANAGED_WORDS,
    SKILL_LABELS,
)
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, Lease, ModelData
from cluster_decide.planning.evaluation import Decisions, Evaluation

__all__ = ["MANAGED_WORDS", "and_list", "fte", "money", "people_sentences", "plural"]

SLIVER_FTE = 0.1
"""A shortfall below this is finer than the catalog's staffing figures (``staffing.csv``, all
assumptions stated to a tenth of an FTE at best): a plan that pays for a course to cover it
says so (:data:`SLIVER_WORDS`)."""
SLIVER_WORDS = (
    ": finer than the staffing estimates themselves, which are assumptions good to a tenth of"
    " an FTE at best, so check whether the team absorbs it before paying for the course"
)


def plural(n: int, word: str) -> str:
    """``1 engineer``, ``2 engineers``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def fte(x: float) -> str:
    """FTE to one decimal, or two where one would hide the difference: 0.54 is not "0.5".

    A shortfall of 0.04 FTE read "the leanest plan needs 0.5 HPC FTE, 0.5 are on staff".
    """
    return f"{x:.1f}" if round(x, 1) == round(x, 2) else f"{x:.2f}"


def money(usd: float) -> str:
    """Dollars the way people say them in a meeting: $1.2M, $85k, $900.

    Defined here, below :mod:`cluster_decide.planning.explain` (which imports this module and offers
    ``money`` to everyone else), so the two modules form no import cycle.
    """
    sign = "-" if usd < 0 else ""
    usd = abs(usd)
    if usd >= 1e6:
        return f"{sign}${usd / 1e6:.2f}M"
    if usd >= 1e4:
        return f"{sign}${usd / 1e3:.0f}k"
    if usd >= 1e3:
        return f"{sign}${usd / 1e3:.1f}k"
    return f"{sign}${usd:.0f}"


def people_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """What the plan does with people and with today's estate, and what that costs."""
    people = data.people
    if people is None:  # pragma: no cover - prepare always sets it
        return []
    out: list[str] = []
    horizon = people.horizon_months
    staff = sum(data.available_milli[s] for s in SKILLS) / MILLI
    have = {s: data.available_milli[s] + MILLI * ev.hires[s] for s in SKILLS}
    short = {s: max(0, ev.required_milli[s] - have[s]) for s in SKILLS}
    idle = {
        s: max(0, have[s] - ev.required_milli[s] - sum(short[t] for t in SKILLS if t != s)) / MILLI
        for s in SKILLS
    }
    if staff > 0:
        payroll = sum(people.payroll_cents.values()) / 100.0
        free = [f"{idle[s]:.1f} {SKILL_LABELS[s]} FTE" for s in SKILLS if idle[s] >= 0.05]
        who = (
            "your engineer"
            if staff == 1
            else "both engineers"
            if staff == 2
            else f"all {staff:g} engineers"
            if staff == int(staff)
            else f"your {staff:g} FTE of engineers"  # "all 0.5 engineers" counts no one
        )
        text = (
            f"You keep {who} on staff ({money(payroll)} a month of payroll, paid whatever the plan)"
        )
        # Spare time beside a hire of the same skill is the rest of a whole person.
        whole = any(idle[s] >= 0.05 and ev.hires[s] for s in SKILLS)
        out.append(
            text
            + (
                f"; {' and '.join(free)} are free to redeploy"
                + (" (a hire is a whole person)." if whole else ".")
                if free
                else "; all are busy."
            )
        )
    for s in SKILLS:
        h = ev.hires[s]
        if h:
            need = ev.required_milli[s] / MILLI
            on_staff = data.available_milli[s] / MILLI
            # 1.02 FTE is not "1.0": a retraining sentence may say who covers the 0.02.
            needed = fte(need)
            # Staff of this skill retrained to cover the other's shortfall leave this one short
            # even where it needs less than it has on staff: the sentence says where they went.
            away = [
                f"{short[t] / MILLI:.2f} FTE of their time goes to {SKILL_LABELS[t]} once trained"
                for t in SKILLS
                if ev.retrained.get((s, t)) and short[t] > 0
            ]
            out.append(
                f"Hire {plural(h, SKILL_LABELS[s] + ' engineer')}: {needed} FTE needed, "
                f"{on_staff:.1f} on staff"
                + (f", but {away[0]} (below)" if away else "")
                + f"; {money(people.salary_cents[s] * h / 100.0)} a month in "
                f"salary and {money(people.hire_fee_cents * h * horizon / 100.0)} in hiring "
                "fees once."
            )
    for (s, t), r in sorted(ev.retrained.items()):
        once = people.retrain_cents[(s, t)] * r * horizon / 100.0
        # Beside a hire the retrained engineer covers what the hires leave short (hires are
        # capped or whole people), which may be a sliver of an FTE: the meeting should see it.
        gap = (ev.required_milli[t] - data.available_milli[t]) / MILLI - ev.hires[t]
        why = (
            f"to cover the {gap:.2f} {SKILL_LABELS[t]} FTE"
            + (f" ({gap:.0%} of one person's time)" if gap < SLIVER_FTE else "")
            + f" the {'hire leaves' if ev.hires[t] == 1 else 'hires leave'} short"
            + (SLIVER_WORDS if gap < SLIVER_FTE else "")
            if ev.hires[t] and gap > 0
            else "instead of hiring"
            + (f" {SKILL_LABELS[t]} engineers" if any(ev.hires.values()) else "")
            if data.scenario.hiring.allowed
            else "as hiring is not allowed"
        )
        out.append(
            f"Train {plural(r, SKILL_LABELS[s] + ' engineer')} in {SKILL_LABELS[t]}: "
            f"{money(once)} once (a course and a few months' ramp-up), {why}."
        )
    for p in sorted(dec.managed):
        if p not in people.managed or p not in ev.open_pools:
            continue
        opt = people.managed[p]
        kind = data.pool(p).platform
        saved = [
            f"{(data.base_milli[(p, s)] + data.addon_milli[(p, s)] - opt.base_milli[s]) / MILLI:.2f}"
            f" {SKILL_LABELS[s]} FTE"
            for s in SKILLS
            if data.base_milli[(p, s)] + data.addon_milli[(p, s)] > opt.base_milli[s]
        ]
        fee = money(opt.cluster_cents / 100.0) + " a month" if opt.cluster_cents else "no fee"
        out.append(
            f"The {p} pool runs as {MANAGED_WORDS[kind]} for {fee}"
            + (f", saving {' and '.join(saved)} of operations." if saved else ".")
        )
    built = [
        p
        for p in ev.open_pools
        if p not in people.existing and (people.build_cents.get(p, 0) or p in dec.managed)
    ]
    # A cluster of today given a batch add-on is said by its own sentence, with what that costs.
    reused = [p for p in ev.open_pools if p in people.existing and not data.pool(p).adds_on]
    if built and people.existing:
        cost = sum(
            people.managed[p].build_cents if p in dec.managed else people.build_cents[p]
            for p in built
        )
        out.append(
            f"New {'clusters' if len(built) > 1 else 'cluster'} ({', '.join(built)}) cost "
            f"{money(cost * horizon / 100.0)} once to stand up"
            + (f"; {_exist(reused)} reused." if reused else ".")
        )
    elif reused:
        out.append(f"{_exist(reused)[0].upper()}{_exist(reused)[1:]} reused: no build cost.")
    out += _addon_sentences(data, dec, ev)
    out += _lease_sentences(data, dec, ev)
    out += _move_sentences(data, dec, ev)
    out += _gpu_change_sentences(data, dec)
    return out


def _lease_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """One sentence per lease of today that runs into the horizon: what is paid, what is used."""
    out = []
    for lease in data.leases:
        used = data.cluster_nodes(dec.nodes, lease.pool, lease.gpu_type)
        month = money(lease.nodes * lease.node_cents / 100.0)
        total = money(lease.nodes * lease.node_cents * lease.months / 100.0)
        gpu = f"{lease.nodes} {lease.gpu_type} node{'s' if lease.nodes != 1 else ''}"
        if lease.months >= lease.horizon_months:
            when = f"for all {lease.horizon_months} months of the plan"
        else:
            when = f"for the first {lease.months} of the plan's {lease.horizon_months} months"
        gains = any(
            n and g != lease.gpu_type and data.pool(p).cluster == lease.pool
            for (p, g), n in dec.nodes.items()
        )
        if used == 0 and gains:  # its work runs on node groups of other GPU types it gains
            use = f"the plan uses none of its {lease.gpu_type} nodes, so that money buys nothing"
        elif used == 0:
            use = "the plan leaves the cluster unused, so that money buys nothing"
        elif used < lease.nodes:
            use = f"the plan uses {used} of its nodes"
        else:
            use = "the plan uses all of its nodes"
        after = (
            f"; nodes kept after the lease ends cost the market price, {money(lease.node_cents / 100.0)} a node a month"
            if used and lease.months < lease.horizon_months
            else ""
        )
        out.append(
            f"The {lease.pool} lease ({gpu}) is paid {when} whatever the plan does: {month} a "
            f"month, {total} in all; {use}{after}"
            + _idle_lease_words(data, dec, ev, lease, lease.nodes - used)
            + "."
        )
    return out


def _idle_lease_words(
    data: ModelData, dec: Decisions, ev: Evaluation, lease: Lease, idle: int
) -> str:
    """What a lease's unused nodes could carry of the plan's work elsewhere, while it runs.

    The model prices nodes and rented hours as averages over the horizon, so a plan may leave
    leased nodes idle until the lease ends (paid whatever it does) beside capacity it rents for
    the same work: the peaks its own cluster rents on demand, or the nodes and peaks of a pool
    of its platform family and GPU type elsewhere (a cheaper cloud after the lease). Hour by
    hour the idle nodes carry what they can of it, first its own cluster's peaks (cheapest to
    move); what that capacity costs, over the lease's share of the horizon, is what a plan that
    used them first would save: "; while the lease runs, its 6 unused nodes could carry 90% of
    the k8s pool's H100 work, about $22k a month (averaged over the plan) that using them first
    would save".
    """
    if idle <= 0 or lease.months <= 0:
        return ""
    g = lease.gpu_type
    gpn = data.gpus_per_node[g]
    today = data.scenario.current_cluster(lease.pool)
    assert today is not None  # a lease is a cluster of today's
    family = FAMILY[today.platform]
    spare = np.full(HOURS_PER_WEEK, idle * gpn * DEMAND_UNITS_PER_GPU, dtype=np.int64)
    month = HOURS_PER_MONTH / HOURS_PER_WEEK / DEMAND_UNITS_PER_GPU
    carried: list[tuple[str, float]] = []  # (what, US$ a month of it)
    pools = {pp for (pp, gg) in ev.burst if gg == g} | {pp for (pp, gg) in dec.nodes if gg == g}
    for p in sorted(pools, key=lambda q: (data.pool(q).cluster != lease.pool, q)):
        pool = data.pool(p)
        own = pool.cluster == lease.pool
        if not own and FAMILY[pool.platform] != family:
            continue
        rented = ev.burst.get((p, g), np.zeros(HOURS_PER_WEEK, dtype=np.int64))
        nodes = 0 if own else dec.nodes.get((p, g), 0)
        held = nodes * gpn * DEMAND_UNITS_PER_GPU + rented
        take = np.minimum(held, spare)
        if not take.any():
            continue
        spare = spare - take
        market = data.rental_market(p, g)
        burst = market.burst.usd_per_gpu_hour if market is not None and market.burst else 0.0
        usd = nodes * data.node_cost(p, g) / 100.0 + float(rented.sum()) * month * burst
        share = float(take.sum()) / float(held.sum())
        part = "all" if share >= 0.995 else f"{share:.0%}"
        if own:
            hours, of = float(take.sum()) * month, float(rented.sum()) * month
            part = f"all {of:,.0f}" if part == "all" else f"{hours:,.0f} of the {of:,.0f}"
            carried.append(
                (f"{part} on-demand {g} GPU-hours a month its cluster rents", usd * share)
            )
        else:
            carried.append((f"{part} of the {p} pool's {g} work", usd * share))
    if not carried:
        return ""
    saved = sum(usd for _w, usd in carried) * lease.months / lease.horizon_months
    them = "unused node" if idle == 1 else f"{idle} unused nodes"
    return (
        f"; while the lease runs, its {them} could carry {and_list([w for w, _u in carried])}, "
        f"about {money(saved)} a month (averaged over the plan) that using them first would save"
    )


def and_list(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def number_words(n: int) -> str:
    """A count as a sentence says it: "three" up to nine, digits beyond."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else f"{n:,}"


def _addon_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """A cluster of today the plan gives a batch add-on: what its work gains, what installing costs.

    What it gains: each capability the add-on gives natively and the plain platform does not,
    that a workload placed there requires or prefers, with the workloads that ask for it.
    """
    people = data.people
    assert people is not None
    platforms = data.scenario.catalog.platforms
    order = SUPPORT_LEVELS.index  # native, partial, none: earlier is better support
    out = []
    for p in ev.open_pools:
        pool = data.pool(p)
        if not pool.adds_on:
            continue
        with_it, without = platforms[pool.platform], platforms[ADDONS[pool.platform]]
        asks: dict[str, list[str]] = {}
        for name in sorted({w for (w, q, _g), s in dec.shares.items() if q == p and s}):
            w = data.scenario.workload(name)
            for k in (*w.requires, *w.prefers):
                if order(with_it.supports(k, w.interface)) < order(
                    without.supports(k, w.interface)
                ):
                    asks.setdefault(CAPABILITY_WORDS[k], []).append(name)
        parts = [f"{k} ({and_list(ws)})" for k, ws in sorted(asks.items())]
        # Queued admission packs batch work tighter than plain Kubernetes Jobs (utilization.csv).
        tighter = sorted(
            {
                w
                for (w, q, g), s in dec.shares.items()
                if q == p
                and s
                and (plain := data.combos.get((w, pool.cluster, g))) is not None
                and data.combos[(w, q, g)].demand.sum() < plain.demand.sum()
            }
        )
        if tighter:
            parts.append(f"queues that pack batch work into fewer GPUs ({and_list(tighter)})")
        fill = sorted(
            {k[0] for k, s in dec.shares.items() if k[1] == p and s and k in data.flexible}
        )
        if fill:
            parts.append(f"preemptible training in other work's quiet hours ({and_list(fill)})")
        gains = and_list(parts) if parts else ""
        cents = people.managed[p].build_cents if p in dec.managed else people.build_cents[p]
        once = money(cents * people.horizon_months / 100.0)
        # A cluster [current] lists by name is named; one it only implies, by its platform.
        name = pool.cluster if pool.nodes_today else PLATFORM_WORDS[ADDONS[pool.platform]]
        out.append(
            f"The {name} cluster of today is kept and gains a batch scheduler add-on (Kueue, "
            "Volcano or KAI)" + (f" for {gains}" if gains else "") + f": {once} of engineering "
            "once to install it, where a new cluster would cost its whole build."
        )
    return out


def _exist(pools: list[str]) -> str:
    """``the slurm cluster exists today and is`` / ``the a and b clusters exist today and are``."""
    if len(pools) == 1:
        return f"the {pools[0]} cluster exists today and is"
    return f"the {', '.join(pools[:-1])} and {pools[-1]} clusters exist today and are"


def _move_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    people = data.people
    assert people is not None
    if not people.moves:
        return []
    horizon = people.horizon_months
    out = []
    kept = [w for w in people.moves if w not in ev.moved and w not in ev.relocated]
    for w in ev.moved:
        mv = people.moves[w]
        to = sorted(
            {
                data.pool(p).platform
                for (ww, p, _g), s in dec.shares.items()
                if ww == w and s and FAMILY[data.pool(p).platform] != FAMILY[mv.today]
            }
        )
        retool = w in ev.retooled
        cents = mv.cents(True, retool, False)  # a relocation has its own sentence
        detail = f"{mv.weeks:.1f} engineer-weeks"
        if retool:
            detail += f", and about a week for each of its {mv.users} users to change tools"
        out.append(
            f"Moving {w} from {PLATFORM_WORDS[mv.today]} to "
            f"{' and '.join(PLATFORM_WORDS[k] for k in to)} costs "
            f"{money(cents * horizon / 100.0)} once ({detail}), "
            f"{money(cents / 100.0)} a month over {horizon} months."
        )
    out += _relocation_sentences(data, dec, ev)
    if kept:
        # Without ``cluster`` today's record is a platform: a class kept on Slurm may still
        # change clusters (a gang that outgrows the cluster of today), so the sentence names
        # the platform, or the cluster where it is known.
        by_platform: dict[str, list[str]] = {}
        for w in kept:
            mv = people.moves[w]
            where = f"the {mv.cluster} cluster" if mv.cluster else PLATFORM_WORDS[mv.today]
            by_platform.setdefault(where, []).append(w)
        groups = [f"{and_list(ws)} on {kind}" for kind, ws in sorted(by_platform.items())]
        if len(groups) == 1:
            where = "it runs" if len(kept) == 1 else "they run"
            out.append(f"It keeps {groups[0]}, where {where} today.")
        else:
            out.append(f"It keeps these where they run today: {'; '.join(groups)}.")
    return out


def _gpu_change_sentences(data: ModelData, dec: Decisions) -> list[str]:
    """Why a class kept on its cluster of today runs there on another GPU type than today's.

    "chem-notebooks stays on the hpc-a100 cluster but moves from its A100 nodes to L40S ones:
    about $8.2k a month for the 2 L40S nodes it needs, against about $9.8k for 2 A100 nodes
    there (the cluster's idle one and 1 more bought)". A yardstick of the class alone (its
    busiest hour in whole nodes, as ``standalone_cost_usd``), said only where it agrees with
    the plan; the plan itself packs it with the cluster's other work.
    """
    people = data.people
    if people is None:
        return []
    out = []
    for w, mv in people.moves.items():
        here = {(p, g) for (ww, p, g), s in dec.shares.items() if ww == w and s}
        pools = {data.pool(p) for p, _g in here}
        if mv.cluster is None or len(here) != 1 or {p.cluster for p in pools} != {mv.cluster}:
            continue
        [(p, g)] = here
        today = data.pool(p).gpu_today
        old = data.combos.get((w, p, today))
        if g == today or old is None or old.blocked:
            continue
        new_nodes, new_usd = _nodes_alone(data, w, p, g, 0)
        idle = max(0, data.pool(p).nodes_today - dec.nodes.get((p, today), 0))
        old_nodes, old_usd = _nodes_alone(data, w, p, today, idle)
        if new_usd >= old_usd:
            continue
        bought = old_nodes - min(old_nodes, idle)
        whence = (
            f"the cluster's {'idle one' if idle == 1 else f'{min(old_nodes, idle)} idle ones'}"
            if idle
            else ""
        )
        if bought:
            got = "bought" if data.pool(p).owned else "rented"
            whence += (" and " if whence else "") + f"{bought} more {got}"
        out.append(
            f"{w} stays on the {mv.cluster} cluster but moves from its {today} nodes to {g} "
            f"ones: about {money(new_usd)} a month for the {plural(new_nodes, g + ' node')} it "
            f"needs, against about {money(old_usd)} for {plural(old_nodes, today + ' node')} "
            f"there ({whence})."
        )
    return out


def _nodes_alone(data: ModelData, w: str, pool: str, g: str, idle: int) -> tuple[int, float]:
    """Nodes of ``g`` class ``w`` needs alone in ``pool`` at its busiest hour, and their cost.

    US$ a month: ``idle`` of the cluster's own nodes first, then nodes it grows by.
    """
    need = data.combos[(w, pool, g)].demand.max() / DEMAND_UNITS_PER_GPU
    nodes = max(1, math.ceil(need / data.gpus_per_node[g] - 1e-9))
    own = min(nodes, idle)
    cents = own * data.node_cost(pool, g) + (nodes - own) * data.added_node_cost(pool, g)
    return nodes, cents / 100.0


def _relocation_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """What moving each class to another cluster of its platform family costs, and where to."""
    people = data.people
    assert people is not None
    horizon = people.horizon_months
    out = []
    for w in ev.relocated:
        mv = people.moves[w]
        kind = CLUSTER_WORDS.get(FAMILY[mv.today], ("shared pool",))[0]
        to = sorted(
            {
                f"the {data.pool(p).cluster} cluster"
                if data.pool(p).cluster
                else f"a new {kind} ({p})"
                for (ww, p, _g), s in dec.shares.items()
                if ww == w and s and data.relocates(w, p)
            }
        )
        weeks = mv.relocate_weeks
        out.append(
            f"Moving {w} from the {mv.cluster} cluster to {and_list(to)} costs "
            f"{money(mv.relocate_cents * horizon / 100.0)} once ({weeks:g} engineer-week"
            f"{'' if weeks == 1 else 's'}: the same images and scripts, its data and settings "
            f"copied across), {money(mv.relocate_cents / 100.0)} a month over {horizon} months."
        )
    return out
