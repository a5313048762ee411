"""Plain sentences about a plan: the headline, why each workload landed where it did, what binds.

Every sentence is built from numbers the model used, so a reader can check it: the requirement
that rules a platform out, the standalone monthly cost of a workload on each platform, staff at
its limit, the budget, and the hour each pool is sized for.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from cluster_decide.base.constants import PLATFORM_WORDS, SKILLS
from cluster_decide.base.vocabulary import (
    ARCHETYPE_SHORT,
    ARCHETYPE_WORDS,
    BATCH_KINDS,
    CLUSTER_WORDS,
    HOURS_PER_MONTH,
    NODE_GROUP_WORDS,
    SKILL_LABELS,
)
from cluster_decide.inputs.market import PROVIDER_WORDS, TERM_WORDS, Market
from cluster_decide.inputs.offers import Offer
from cluster_decide.inputs.scenario import RealtimeWorkload
from cluster_decide.model.data import DEMAND_UNITS_PER_GPU, MILLI, Combo, ModelData
from cluster_decide.planning.evaluation import Decisions, Evaluation, whole_node_extra
from cluster_decide.planning.explain_people import (
    and_list,
    money,
    number_words,
    people_sentences,
    plural,
)
from cluster_decide.planning.explain_sharing import sharing_sentence
from cluster_decide.planning.service import busy_gpus_by_pool, slow_requests

__all__ = [
    "ADDED_NODE_MARKS",
    "ARCHETYPE_SHORT",
    "ARCHETYPE_WORDS",
    "PLATFORM_WORDS",
    "SELLER_MARKS",
    "SIZING_MARKS",
    "SPARE_NODE_MARKS",
    "WHOLE_NODE_MARKS",
    "architecture_words",
    "explain",
    "hour_name",
    "machine_room",
    "machine_room_rents",
    "mixed_sellers",
    "money",
    "pool_sellers",
    "procurement_sentences",
    "split_closing",
    "standalone_cost_usd",
]

SKILL_WORDS = SKILL_LABELS
SPARE_NODE_MARKS = ("no running costs are counted for", "is handed back")
"""Words only a sentence on a cluster of today the plan leaves partly unused says (owned, leased):
the deck and report find that sentence among the plan's by them."""
SELLER_MARKS = (
    "cloud providers, each bought where it is cheapest",
    "does not span a machine room and a cloud",
)
"""Words only the sentences on a pool whose GPUs come from several clouds, or from the estate's
machine room and a cloud, say."""
SIZING_MARKS = ("sized for", "for its peaks instead of buying for them", "standing by between runs")
"""Words only the sentences on what sizes a pool say (its busiest hours, the peaks it rents, or
the whole-machine jobs its nodes stand by for)."""
WHOLE_NODE_MARKS = ("so its cost is a floor here",)
"""Words only the sentence on what whole-node jobs add to a pool's rented hours says."""
ADDED_NODE_MARKS = ("cluster grows from", "rather than a second cluster being built")
"""Words only a sentence on the nodes a cluster of today adds says (its own GPU type, node
groups of others): the deck and report find those sentences among the plan's by them."""
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def hour_name(hour_of_week: int) -> str:
    """``37`` → ``Tuesday 13:00``."""
    return f"{_DAYS[hour_of_week // 24]} {hour_of_week % 24:02d}:00"


def standalone_cost_usd(data: ModelData, combo: Combo) -> float:
    """Monthly cost of running one workload alone on a pool and GPU type, staff excluded.

    Capacity at its peak hour (or its average plus on-demand for the peaks where the pool can
    burst, whichever is cheaper) at the pool's own node price (a cluster of today's owned or
    leased nodes cost less than the market's), plus capability-gap and interface-friction
    estimates. This is the yardstick explanations compare pools with; the plan itself is costed
    by the model, in whole nodes.
    """
    g = combo.gpu_type
    per_gpu = data.node_cost(combo.pool, g) / data.gpus_per_node[g]
    gpus = combo.demand / DEMAND_UNITS_PER_GPU
    cost = float(gpus.max()) * per_gpu
    if data.bursts(combo.pool, g):
        base = np.arange(0, int(np.ceil(gpus.max())) + 1)
        burst_per_gpu = data.burst_cost(combo.pool, g) * DEMAND_UNITS_PER_GPU
        # Every baseline size at once (one row each): a 512-GPU gang has 513 of them.
        short = np.maximum(gpus[None, :] - base[:, None], 0).sum(axis=1)
        cost = min(cost, float((base * per_gpu + short * burst_per_gpu).min()))
    cost += 100 * (combo.gap_cents_per_pct + combo.friction_cents_per_pct)
    return cost / 100.0


def _why_workload(data: ModelData, dec: Decisions, name: str) -> str:
    combos = [c for c in data.combos.values() if c.workload == name]
    chosen = [c for c in combos if dec.shares.get((c.workload, c.pool, c.gpu_type), 0) > 0]
    w = next(x for x in data.workloads if x.name == name)
    platforms = {data.pool(c.pool).platform for c in chosen}
    if len(chosen) > 1:
        # One pool's GPU types together: "hpc (A100, 64%; L40S, 36%)".
        by_pool: dict[str, list[str]] = defaultdict(list)
        for c in chosen:
            by_pool[c.pool].append(f"{c.gpu_type}, {dec.shares[(c.workload, c.pool, c.gpu_type)]}%")
        where = " and ".join(f"{p} ({'; '.join(parts)})" for p, parts in by_pool.items())
    else:
        where = f"{chosen[0].pool} on {chosen[0].gpu_type}"
    sentences = [f"{name} runs on {where}."]
    allowed_kinds = {data.pool(c.pool).platform for c in combos if not c.blocked}
    blocked: dict[str, list[str]] = defaultdict(list)
    for c in combos:
        kind = data.pool(c.pool).platform
        if c.blocked and kind not in allowed_kinds and kind not in blocked[c.blocked]:
            blocked[c.blocked].append(kind)
    for reason, kinds in sorted(blocked.items()):
        names = " and ".join(PLATFORM_WORDS[k] for k in kinds)
        sentences.append(
            f"{names[0].upper()}{names[1:]} {'is' if len(kinds) == 1 else 'are'} ruled out: {reason}."
        )
    # A cluster of today the class cannot use, on a platform it still may (its gangs do not fit
    # in the nodes the cluster can grow to): why it leaves, or never enters, what exists. The
    # first reason of each cluster, whatever its GPU types.
    ruled_out: dict[str, str] = {}
    used = {data.pool(c.pool).cluster for c in chosen}
    for c in combos:
        pool = data.pool(c.pool)
        if (
            c.blocked
            and pool.nodes_today
            and pool.platform in allowed_kinds
            and pool.cluster not in used
        ):
            ruled_out.setdefault(pool.cluster, c.blocked)
    sentences += [
        f"The {p} cluster of today is ruled out: {reason}." for p, reason in ruled_out.items()
    ]
    others = [c for c in combos if not c.blocked and data.pool(c.pool).platform not in platforms]
    if others:
        here = min(standalone_cost_usd(data, c) for c in chosen)
        alt = min(others, key=lambda c: (standalone_cost_usd(data, c), c.pool, c.gpu_type))
        diff = standalone_cost_usd(data, alt) - here
        alt_words = f"{PLATFORM_WORDS[data.pool(alt.pool).platform]} ({alt.gpu_type})"
        if diff > max(500.0, 0.01 * here):
            sentences.append(
                f"On its own it would cost about {money(here + diff)} a month on {alt_words}, "
                f"{money(diff)} more{_cost_driver(data, chosen[0], alt)}."
            )
        else:
            cheaper = (
                f"{money(-diff)} a month less"
                if -diff > max(500.0, 0.01 * here)
                else "about the same"
            )
            pools = {c.pool for c in chosen}
            beside = any(k[0] != name and k[1] in pools for k, pct in dec.shares.items() if pct)
            kind = data.pool(alt.pool).platform
            also = sorted(
                p
                for p in dec.open_pools()
                if data.pool(p).platform == kind and alt.gpu_type in data.pool(p).gpu_types
            )
            one, many = CLUSTER_WORDS.get(kind, ("shared pool", "shared pools"))
            full = (
                _no_room(data, dec, name, also, alt.gpu_type)
                if also and cheaper != "about the same"
                else None
            )
            if full:
                # The plan runs that platform with that GPU type, on clusters at their limit.
                why = _no_room_words(data, also, alt.gpu_type, full, one, many)
            elif also and cheaper != "about the same":
                # The plan runs that platform with that GPU type too: not another cluster, but
                # the yardstick's price of the work alone against the plan's beside the work there.
                runs = f"a {one}" if len(also) == 1 else many
                why = (
                    f", but that prices it alone: the plan, which runs {runs} too "
                    f"({and_list(also)}), prices it beside the work on each cluster, in whole "
                    "nodes and with the spot and on-demand hours each buys, and keeps it here"
                )
            elif also:
                why = ""
            elif beside:
                why = ", but the plan keeps it with other workloads rather than run another "
                why += "cluster for it"
            elif cheaper != "about the same":
                # Alone in its pool: the yardstick counts GPUs at the busiest hour, the plan
                # whole nodes, spot and on-demand hours; counted so, where it runs is cheaper.
                why = ", but counted in whole nodes, with the spot and on-demand hours the plan "
                why += "buys, it costs less where it runs"
            else:
                why = ""
            sentences.append(f"On its own it would cost {cheaper} on {alt_words}{why}.")
    usual = "Slurm job scripts" if w.interface == "slurm" else "containers"
    if all(data.platform(c.pool).interface in ("both", w.interface) for c in chosen):
        sentences.append(f"Its team already works in {usual}.")
    else:
        effort = sum(
            c.friction_cents_per_pct * dec.shares[(c.workload, c.pool, c.gpu_type)] for c in chosen
        )
        counted = f", counted as {money(effort / 100.0)} a month of effort" if effort else ""
        sentences.append(f"Its team works in {usual} and must change tools there{counted}.")
    return " ".join(sentences)


def _no_room(
    data: ModelData, dec: Decisions, name: str, pools: list[str], gpu: str
) -> tuple[int, int, int] | None:
    """Whether every one of ``pools`` lacks the room for all of ``name`` on ``gpu`` nodes.

    The nodes the class's peak needs there on its own (its whole share, whole nodes) against
    what each pool may still grow by within its node limit (``max_nodes``, or the size of a
    cluster of today that may not grow): ``(need, room, limit)`` of the roomiest pool where
    none has the room, else None (a pool without a limit always has it).
    """
    gpn = data.gpus_per_node[gpu]
    best: tuple[int, int, int] | None = None
    for p in pools:
        pool = data.pool(p)
        combo = data.combos.get((name, p, gpu))
        limit = pool.node_limit(gpu)
        if combo is None or limit is None:
            return None
        used = (
            sum(dec.nodes.get((p, g), 0) for g in pool.gpu_types)
            if pool.max_nodes is not None
            else dec.nodes.get((p, gpu), 0)
        )
        need = int(np.ceil(float(combo.demand.max()) / DEMAND_UNITS_PER_GPU / gpn - 1e-9))
        room = max(0, limit - used)
        if need <= room:
            return None
        if best is None or room > best[1]:
            best = (need, room, limit)
    return best


def _no_room_words(
    data: ModelData,
    pools: list[str],
    gpu: str,
    full: tuple[int, int, int],
    one: str,
    many: str,
) -> str:
    """The reason's close where the plan's clusters there cannot hold the class (``full``).

    ``full`` is :func:`_no_room`'s answer: the nodes it needs, the roomiest cluster's room and
    its limit; ``one`` and ``many`` name the platform's clusters.
    """
    need, room, limit = full
    if len(pools) > 1:
        grow = "none may grow by that much"
    elif room > 0:
        grow = f"the cluster may grow by only {room} (to {limit})"
    else:
        grow = f"the cluster may not grow beyond its {limit}"
        cluster = data.pool(pools[0])
        if cluster.owned and cluster.gpu_today == gpu and not cluster.grows_today:
            # An owned cluster grows only by bought nodes: none where the scenario buys none.
            grow += (
                " (it grows only by nodes bought for it, and the scenario buys no hardware: "
                'procurement mode "cloud")'
            )
    return (
        f", but the plan's {one if len(pools) == 1 else many} there ({and_list(pools)}) cannot "
        f"take it: it needs about {need} more {gpu} nodes, and {grow}"
    )


MORE_GPUS_SAID = 1.05
"""A workload's peak elsewhere is a reason it stays only when at least this much larger."""


def _cost_driver(data: ModelData, here: Combo, alt: Combo) -> str:
    parts = []
    if alt.friction_cents_per_pct > here.friction_cents_per_pct:
        parts.append("its team would have to leave its usual interface")
    if alt.gap_cents_per_pct > here.gap_cents_per_pct:
        parts.append("it would lose capabilities it prefers")
    there, here_peak = (c.demand.max() / DEMAND_UNITS_PER_GPU for c in (alt, here))
    # A difference the rounding hides, or a few percent, is not why (it read "24 vs 24").
    if alt.gpu_type == here.gpu_type and round(there) > round(here_peak) * MORE_GPUS_SAID:
        parts.append(f"it needs more GPUs there ({there:.0f} vs {here_peak:.0f} at peak)")
    pool = data.pool(here.pool)
    if (
        pool.nodes_today
        and data.node_cost(here.pool, here.gpu_type) < data.node_cents[here.gpu_type]
    ):
        paid = "owned" if pool.owned else "leased"
        parts.append(f"the {pool.cluster} cluster's nodes are {paid} already")
    return " because " + and_list(parts) if parts else ""


def _binding(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    out = []
    for s in SKILLS:
        req = ev.required_milli[s] / MILLI
        avail = data.available_milli[s] / MILLI
        hires = ev.hires[s]
        if hires or any(r for (_a, b), r in ev.retrained.items() if b == s):
            continue  # said by the people sentences, with the salary or the training
        if req > 0 and avail - req < 0.05:
            out.append(
                f"Staffing binds for {SKILL_WORDS[s]}: the plan uses all {avail:.1f} FTE available."
            )
    if data.budget_cents is not None and ev.cash_cents >= 0.99 * data.budget_cents:
        out.append(
            f"The budget binds: cash spend is {money(ev.cash_cents / 100)} of the {money(data.budget_cents / 100)} a month allowed."
        )
    per_pool: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(168))
    for (p, g), load in ev.placed_units.items():
        # Where training fills the troughs, the hours that size the pool are the services'.
        sized = ev.sharing[(p, g)].services_units if (p, g) in ev.sharing else load
        per_pool[p] = per_pool[p] + sized
    for p in sorted(per_pool):
        load = per_pool[p]
        reserves = any(n for (pp, _g), n in dec.nodes.items() if pp == p)
        bursts = sum(
            float(b.sum()) / DEMAND_UNITS_PER_GPU for (pp, _g), b in ev.burst.items() if pp == p
        )
        rents = f"The {p} pool rents about {bursts * 730 / 168:,.0f} on-demand GPU-hours a month"
        if reserves and load.max() > load.min() * 1.05:
            t = int(np.argmax(load))
            # A plateau of equally busy hours (a service's working day) is said as one.
            peak = int(np.count_nonzero(load >= load.max() * 0.995))
            first = hour_name(t)
            if bursts > 0:
                # Its reserved nodes are not what meets the busiest hours: rented GPUs are.
                busiest = (
                    f"its busiest hour is {first}"
                    if peak == 1
                    else f"its busiest hours are the same peak in {peak} hours of the week, the "
                    f"first on {first}"
                )
                out.append(f"{rents} for its peaks instead of buying for them: {busiest}.")
            else:
                out.append(
                    f"The {p} pool is sized for its busiest hour, {first}."
                    if peak == 1
                    else f"The {p} pool is sized for its busiest hours: the same peak in {peak} "
                    f"hours of the week, the first on {first}."
                )
        elif bursts > 0 and reserves:
            out.append(f"{rents} for its peaks instead of buying for them.")
        elif bursts > 0:
            out.append(
                f"The {p} pool reserves no nodes: it rents all of its {bursts * 730 / 168:,.0f} "
                "GPU-hours a month on demand, hour by hour."
            )
    return out


def _tail_sentences(data: ModelData, dec: Decisions) -> list[str]:
    """Services whose target a share of requests misses on their own GPU time, whatever the plan.

    A p99 is predicted as the 99th-percentile wait plus the mean request time
    (``docs/queueing.md``). Where more than 1% of requests take longer than the target on
    the GPU alone (their stated ``service_time_cv``), the prediction can be met while those
    requests are not: a meeting should hear that, and that more GPUs do not change it.
    """
    out = []
    for w in data.workloads:
        if not isinstance(w, RealtimeWorkload):
            continue
        worst = max(
            (slow_requests(data, k) for k, s in sorted(dec.shares.items()) if k[0] == w.name and s),
            key=lambda found: found[1],
            default=None,
        )
        if worst is None or worst[1] <= 0.01:
            continue
        out.append(
            f"{w.name}'s p99 latency is counted as the 99th-percentile wait for a GPU plus the "
            f"mean request time ({worst[0] * 1000:,.0f} ms); with request times as variable as "
            f"stated (service_time_cv {w.service_time_cv:g}), {worst[1]:.1%} of requests take "
            f"longer than its {w.p99_latency_ms:,g} ms target on the GPU alone, which no number "
            "of GPUs changes."
        )
    return out


IDLE_WORTH_SAYING = 0.6
"""Below this busy fraction a pool's idle GPUs get a sentence of their own."""

GANG_SIZES_POOL = 0.5
"""A job needing at least this share of a pool's nodes at once is what sizes the pool."""


def _idle(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """Pools whose GPUs are mostly idle (busy GPU-hours over those paid for), and why."""
    out = []
    for (p, g), busy in sorted(busy_gpus_by_pool(data, dec).items()):
        burst = ev.burst.get((p, g))
        nodes = dec.nodes.get((p, g), 0)
        paid = nodes * data.gpus_per_node[g] + (
            float(burst.mean()) / DEMAND_UNITS_PER_GPU if burst is not None else 0.0
        )
        used = float(busy.mean()) / paid if paid > 0 else 1.0
        if used < IDLE_WORTH_SAYING:
            rented = "" if nodes else "on-demand "
            head = f"The {p} pool's {rented}{g} GPUs are busy {used:.0%} of the time on average"
            why = (
                _sized_by(data, dec, p, g, nodes, used, burst is not None and bool(burst.any()))
                if nodes
                else "the replicas it rents carry the headroom its wait and latency targets need"
            )
            out.append(f"{head}: {why}.")
    return out


def _slots_of(
    data: ModelData, dec: Decisions, pool: str, gpu: str, name: str, need: int, nodes: int
) -> bool:
    """Whether ``pool``'s ``nodes`` of ``gpu`` are the slots ``name``'s jobs need on their own.

    ``need`` nodes a job: the class's own peak need there, in whole jobs' slots, is every node
    of the pool (three 256-GPU jobs on 96 nodes), so the other work there only fills them.
    """
    share = dec.shares.get((name, pool, gpu), 0)
    own = float(data.combos[(name, pool, gpu)].load(share).max()) / 100 / DEMAND_UNITS_PER_GPU
    slot = need * data.gpus_per_node[gpu]
    return math.ceil(own / slot - 1e-9) * need == nodes


BACKFILL_WORTH_SAYING_USD = 1000.0
"""Batch work a gang pool could backfill is said from this much a month of its own cost."""


def _backfill_words(
    data: ModelData, dec: Decisions, pool: str, gpu: str, name: str, need: int, idle: float
) -> str:
    """Batch work the plan runs elsewhere that could fill a gang pool's idle slots between runs.

    A scheduler backfills short jobs into the nodes a gang class holds standing by: work that may
    run in the pool (its placement there not blocked), whose jobs fit one of the gang's slots
    (``need`` nodes) and end within the gang's wait target. The model sizes such work apart
    (its capacity rows add each class's own need), so the plan says what a backfilling one might
    save. ``idle``: the pool's idle GPUs in an average hour.
    """
    gang = data.scenario.workload(name)
    slot = need * data.gpus_per_node[gpu]
    fits, where, usd = [], set(), 0.0
    for w in data.workloads:
        combo = data.combos.get((w.name, pool, gpu))
        if w.name == name or combo is None or combo.blocked or w.kind not in BATCH_KINDS:
            continue
        if combo.gang_gpus > slot or getattr(w, "mean_job_hours", math.inf) > gang.slo:
            continue
        apart = {k: sh for k, sh in dec.shares.items() if k[0] == w.name and sh and k[1] != pool}
        if apart:
            fits.append(w.name)
            where |= {p for _w, p, _g in apart}
            usd += sum(
                standalone_cost_usd(data, data.combos[k]) * sh / 100 for k, sh in apart.items()
            )
    if usd < BACKFILL_WORTH_SAYING_USD:
        return ""
    one = len(fits) == 1
    return (
        f". A scheduler can backfill short jobs into those nodes between runs: "
        f"{and_list(fits)} {'fits' if one else 'fit'} a slot and {'ends' if one else 'end'} "
        f"within {name}'s {gang.slo:g} h wait, and about "
        f"{float(f'{idle * HOURS_PER_MONTH:.2g}'):,.0f} GPU-hours a month stand idle here; the "
        f"model sizes {'it' if one else 'them'} apart (on {and_list(sorted(where))}, about "
        f"{money(usd)} a month on {'its' if one else 'their'} own), which a plan that backfills "
        "could save in part"
    )


def _sized_by(
    data: ModelData,
    dec: Decisions,
    pool: str,
    gpu: str,
    nodes: int,
    busy: float,
    rents_peaks: bool = False,
) -> str:
    """What sizes a mostly idle pool (``busy`` of its GPU-hours used): whole-machine jobs, or peaks.

    A job that needs most of the pool's nodes at once keeps them standing by between runs.
    Where the nodes are rented for the whole plan and renting only the hours the pool is busy,
    even at the on-demand price, would cost less, a meeting should hear that booking each run
    ahead (short-term reservations, which this plan does not price) is the alternative to weigh.
    ``rents_peaks``: the pool rents this type's busiest hours, so its nodes are not sized for
    them; what keeps them idle is the headroom its wait and latency targets hold.
    """
    gpn = data.gpus_per_node[gpu]
    gangs = [
        (data.combos[k].gang_gpus, k[0])
        for k, s in sorted(dec.shares.items())
        if k[1] == pool and k[2] == gpu and s > dec.spot.get(k, 0)
    ]
    gang, name = max(gangs, default=(0, ""))
    need = -(-gang // gpn)
    if need < 2 or (
        need < GANG_SIZES_POOL * nodes and not _slots_of(data, dec, pool, gpu, name, need, nodes)
    ):
        if rents_peaks:
            return (
                "it holds the headroom its wait and latency targets need, in whole nodes, and "
                "rents its peaks"
            )
        return (
            "it is sized for its busiest hours and for its wait and latency targets, in whole nodes"
        )
    w = data.scenario.workload(name)
    slots = nodes // need
    of = f"all {nodes} of its nodes" if need == nodes else f"{need} of its {nodes} nodes"
    said = (
        f"{name}'s {gang}-GPU jobs need {of} at once"
        if slots < 2
        else f"its {nodes} nodes hold {slots} of {name}'s {gang}-GPU jobs ({need} nodes each) at "
        f"once, so that they start within {w.slo:g} h"
    )
    said += ", standing by between runs"
    said += _backfill_words(data, dec, pool, gpu, name, need, nodes * gpn * (1 - busy))
    market = data.rental_market(pool, gpu)
    offer, burst = (market.baseline, market.burst) if market is not None else (None, None)
    leased = {lease.pool for lease in data.leases}  # paid until its end whatever the plan does
    if (
        data.pool(pool).owns(gpu)
        or data.pool(pool).cluster in leased
        or offer is None
        or offer.term == "owned"
        or burst is None
        or not burst.multi_node
        or busy >= offer.usd_per_gpu_hour / burst.usd_per_gpu_hour
    ):
        return said
    return (
        f"{said}. Renting only the hours they are busy, even at the on-demand price "
        f"(${burst.usd_per_gpu_hour:.2f} per GPU-hour against ${offer.usd_per_gpu_hour:.2f}), "
        "would cost less: where runs can be booked ahead (short-term reservations such as cloud "
        "capacity blocks), price that before committing, as this plan does not"
    )


def architecture_words(archetype: str | None, kinds: Sequence[str]) -> str:
    """The plan's architecture in words: its archetype's, and what a shared pool runs beside.

    ``kinds`` are the platform kinds of the plan's open pools, one per pool. Every plan with a
    shared pool is ``hybrid_shared`` (``docs/model.md``), also one that keeps a Slurm cluster
    beside it, so the archetype's words say "a shared GPU pool"; a plan says "one shared GPU
    pool" only when that is all it runs, and otherwise what it runs beside it.
    """
    words = ARCHETYPE_WORDS.get(archetype or "", "")
    if archetype != "hybrid_shared":
        return words
    count = Counter(kinds)
    if count["shared"] > 1:
        words = f"{count['shared']} shared GPU pools (Slurm on Kubernetes)"
    elif set(count) == {"shared"}:
        words = "one shared GPU pool (Slurm on Kubernetes)"
    beside = [
        f"a {one}" if count[k] == 1 else f"{count[k]} {many}"
        for k, (one, many) in CLUSTER_WORDS.items()
        if count[k]
    ]
    return f"{words} beside {and_list(beside)}" if beside else words


def explain(data: ModelData, dec: Decisions, ev: Evaluation, archetype: str | None) -> list[str]:
    """The plan in sentences: headline, staffing, one reason per workload, binding constraints."""
    kinds = [data.pool(p).platform for p in sorted(dec.open_pools())]
    words = architecture_words(archetype, kinds) or "no architecture"
    staff = ", ".join(
        f"{ev.required_milli[s] / MILLI:.1f} {SKILL_WORDS[s]} FTE"
        for s in SKILLS
        if ev.required_milli[s]
    )
    hires = sum(ev.hires.values())
    lines = [
        f"Recommended: {words}, at {money(ev.total_cents / 100)} a month "
        f"({money(ev.cash_cents / 100)} of it cash spend).",
        f"It needs {staff}"
        + (f", including {hires} new hire{'s' if hires > 1 else ''}." if hires else "."),
    ]
    lines += procurement_sentences(data, dec, ev)
    lines += [
        line
        for (p, g), sh in sorted(ev.sharing.items())
        if (
            line := sharing_sentence(
                p,
                g,
                sh,
                data.gpus_per_node[g],
                data.node_cents[g] / 100,
                _holders(data, dec, p, g),
            )
        )
    ]
    lines += [_why_workload(data, dec, w.name) for w in data.workloads]
    lines += people_sentences(data, dec, ev)
    lines += _binding(data, dec, ev)
    lines += _tail_sentences(data, dec)
    lines += _idle(data, dec, ev)
    return lines


def _holders(data: ModelData, dec: Decisions, pool: str, gpu: str) -> str:
    """Whose GPUs trough-filling training borrows in a pool: "services'", "notebooks'" or both."""
    kinds = {
        data.scenario.workload(w).kind
        for (w, p, g), s in dec.shares.items()
        if (p, g) == (pool, gpu) and s > 0 and (w, p, g) not in data.flexible
    }
    words = [
        word
        for kind, word in (("realtime_inference", "services'"), ("experimentation", "notebooks'"))
        if kind in kinds
    ]
    return " and ".join(words) or "other work's"


def _spare_sentences(data: ModelData, dec: Decisions, leased: set[str]) -> list[str]:
    """Clusters of today the plan leaves partly or wholly unused, and what that leaves out.

    An owned cluster's nodes cost their running costs (support, power and space) only while in
    use, a rolling lease's its market price; a node the plan does not need costs nothing in it,
    which is only true if it is powered down, lent or sold (or the lease handed back). Where
    the cluster's room (``max_nodes``) holds the plan's nodes only without the owned nodes it
    leaves, powered down is not enough: they must leave the racks. A lease that runs on is said
    by the lease sentence instead.
    """
    out = []
    seen = set()
    opened = set(dec.open_pools())
    for pool in data.pools:
        if not pool.nodes_today or pool.cluster in leased or pool.cluster in seen:
            continue
        seen.add(pool.cluster)  # with its batch add-on or without, one cluster
        # Open with none of its own nodes: its work runs on node groups it gains, or rented GPUs.
        hosts = any(p.cluster == pool.cluster and p.name in opened for p in data.pools)
        racked = sum(
            max(data.cluster_nodes(dec.nodes, pool.cluster, g), pool.nodes_today_of(g))
            for g in pool.gpu_types
        )
        # Nodes of today the plan leaves that must leave the racks for those it adds to fit.
        excess = racked - pool.max_nodes if pool.max_nodes is not None else 0
        runs = sum(data.cluster_nodes(dec.nodes, pool.cluster, h) for h in pool.gpu_types)
        for g in pool.gpu_types:
            today = pool.nodes_today_of(g)
            used = data.cluster_nodes(dec.nodes, pool.cluster, g)
            if used >= today:
                continue
            spare = today - used
            saved = money(spare * data.node_cost(pool.name, g) / 100.0)
            if used:
                head = f"The {pool.cluster} cluster needs {used} of its {today} {g} nodes"
                which = f"the other {plural(spare, g + ' node') if spare > 1 else g + ' node'}"
            elif hosts:
                head = f"The {pool.cluster} cluster keeps none of its {plural(today, g + ' node')}"
                which = "it" if today == 1 else "them"
            else:
                head = (
                    f"The plan leaves the {pool.cluster} cluster ({plural(today, g + ' node')}) "
                    "unused"
                )
                which = "it" if today == 1 else "them"
            they = "it is" if spare == 1 else "they are"
            room = f"the cluster has room for {pool.max_nodes} nodes and the plan runs {runs}"
            if excess <= 0:
                holds = f"which holds only if {they} powered down, lent or sold"
            elif excess >= spare:
                leave = "it leaves" if spare == 1 else "they leave"
                holds = f"which holds only if {leave} the racks (sold, or lent elsewhere): {room}"
            else:
                holds = (
                    f"which holds only if {they} powered down, lent or sold, and {excess} of "
                    f"them leave the racks: {room}"
                )
            out.append(
                f"{head}: {SPARE_NODE_MARKS[0]} {which} ({saved} a month of support, "
                f"power and space), {holds}."
                if pool.owned
                else f"{head}: the lease on {which} {SPARE_NODE_MARKS[1]} ({saved} a month)."
            )
    return out


def _added_sentences(data: ModelData, dec: Decisions) -> list[str]:
    """What each cluster of today adds: nodes of its own GPU type, and node groups of others."""
    out = []
    for pool in data.pools:
        added = {
            g: data.nodes_added(pool.name, g, dec.nodes.get((pool.name, g), 0))
            for g in pool.gpu_types
        }
        total = sum(added.values())
        if not total:
            continue
        cost = ("the added node costs" if total == 1 else f"the {total} added nodes cost") + (
            " what a new node costs."
        )
        if any(n and data.bought_market(pool.name, g) for g, n in added.items()):
            cost = _bought_words(data, pool.name, added)
        today = pool.gpu_today
        if added.get(today):
            out.append(
                f"The {pool.cluster} cluster grows from {pool.nodes_today} to "
                f"{pool.nodes_today + added[today]} {today} nodes to hold work that does not fit "
                "in the nodes it has" + ("; " + cost if total == added[today] else ".")
            )
        groups = [plural(n, f"{g} node") for g, n in added.items() if n and g != today]
        if groups:
            group = NODE_GROUP_WORDS[pool.platform]
            of = (
                f"a {group} of {groups[0]}"
                if len(groups) == 1
                else f"{group}s of {and_list(groups)}"
            )
            them = "it" if total - added.get(today, 0) == 1 else "them"
            out.append(
                f"The {pool.cluster} cluster gains {of} rather than a second cluster being built "
                f"for {them}; {cost}"
            )
        listed = data.scenario.current_cluster(pool.cluster)
        if not pool.owned and (listed is None or listed.provider is None):
            out.append(_unnamed_provider_words(data, pool.name, added))
    return out


def _unnamed_provider_words(data: ModelData, pool: str, added: dict[str, int]) -> str:
    """Where a leased cluster that does not name its provider is said to buy the nodes it adds.

    Each GPU type's cheapest offer, which may be another company's than the cluster's own: a
    cluster grows only where it stands (``current.clusters[].provider`` prices it there).
    """
    cluster = data.pool(pool).cluster
    where = []
    for g, n in added.items():
        market = data.new_node_market(pool, g)
        if n and market is not None and market.baseline is not None:
            where.append(f"{g} from {market.baseline.seller}")
    return (
        f"The {cluster} cluster's added nodes are priced at the cheapest offer of their GPU type "
        f"({and_list(where)}); a leased cluster grows only at the company it is leased from, so "
        'name it with provider = "…" in its [[current.clusters]] entry to price them there.'
    )


def _bought_words(data: ModelData, pool: str, added: dict[str, int]) -> str:
    """Why an owned cluster of today buys the nodes it grows by where new pools rent theirs."""
    total = sum(added.values())
    prices = []
    for g, n in added.items():
        bought, rented = data.bought_market(pool, g), data.markets[g].baseline
        if not n or bought is None or bought.baseline is None or rented is None:
            continue
        prices.append(
            f"${bought.baseline.usd_per_gpu_hour:.2f} per {g} GPU-hour against "
            f"${rented.usd_per_gpu_hour:.2f} to rent"
        )
    them = "it is" if total == 1 else "they are"
    return (
        f"{them} bought hardware, the only kind that joins its fabric ({'; '.join(prices)}), "
        "which is dearer by the hour but spares a second cluster's build and upkeep."
    )


def _in_order(gpu: str, offer: Offer | None) -> tuple[str, float, str]:
    """Sort key of sentences about several markets: GPU type, then the cheaper offer first.

    Bought beside rented nodes, one company's peaks beside another's.
    """
    return (gpu, offer.usd_per_gpu_hour if offer else 0.0, offer.seller if offer else "")


def procurement_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """Where the GPUs come from: market and term per GPU type, the up-front outlay, spot."""
    out = []
    scn = data.scenario
    proc = scn.procurement
    discount = (
        proc.discount_rate if proc.discount_rate is not None else scn.catalog.costs.discount_rate
    )
    upfront = 0.0
    # Nodes by GPU type and the market they come from: the type's, or bought hardware where an
    # owned cluster of today buys (``ModelData.bought_market``), or a leased one's provider's.
    nodes_by_gpu: dict[tuple[str, Market], int] = defaultdict(int)
    leased = {lease.pool for lease in data.leases}
    for (p, g), n in sorted(dec.nodes.items()):
        # Today's owned clusters are paid for, leased ones under lease (people_sentences): of
        # theirs, only the nodes they grow by are bought.
        pool = data.pool(p)
        market = data.new_node_market(p, g)
        if market is None:
            continue
        if not pool.owned and pool.cluster not in leased:
            nodes_by_gpu[(g, market)] += n
        else:
            nodes_by_gpu[(g, market)] += data.nodes_added(p, g, n)
    out += _added_sentences(data, dec)
    out += _spare_sentences(data, dec, leased)
    for (g, market), n in sorted(
        nodes_by_gpu.items(), key=lambda kv: _in_order(kv[0][0], kv[0][1].baseline)
    ):
        if not n or market.baseline is None:
            continue
        offer = market.baseline
        if market.onprem is not None:
            cost = market.onprem
            upfront += n * cost.upfront_usd
            out.append(
                f"{_nodes(n, g)} bought outright: {money(n * cost.upfront_usd)} up front "
                f"(server, network fabric and storage share); over {cost.life_months} months at "
                f"{discount:.0%} cost of capital, with {cost.residual_fraction:.0%} back on resale, "
                f"{'they cost' if n > 1 else 'it costs'} ${offer.usd_per_gpu_hour:.2f} per "
                "GPU-hour including support, power "
                "and space."
            )
        else:
            out.append(
                f"{_nodes(n, g)} rented from {PROVIDER_WORDS[offer.provider_class]} "
                f"({offer.provider}) {TERM_WORDS[offer.term]} at ${offer.usd_per_gpu_hour:.2f} per "
                "GPU-hour."
            )
    # Each GPU type's peaks by where they are rented: the type's market, or a named provider's.
    rents: dict[tuple[str, Market], list[str]] = defaultdict(list)
    for (p, g), b in sorted(ev.burst.items()):
        market = data.rental_market(p, g)
        if b.any() and market is not None and market.burst is not None:
            rents[(g, market)].append(p)
    for (g, market), pools in sorted(
        rents.items(), key=lambda kv: _in_order(kv[0][0], kv[0][1].burst)
    ):
        peak = market.burst
        assert peak is not None
        cap = market.burst_cap_gpus
        where = f"{PROVIDER_WORDS[peak.provider_class]} ({peak.provider}) at "
        where += f"${peak.usd_per_gpu_hour:.2f} per GPU-hour"
        # What the plan rents of this type there in each hour, over every pool.
        hourly = np.sum([ev.burst[(p, g)] for p in pools], axis=0) / DEMAND_UNITS_PER_GPU
        if any(n for (_p, gg), n in dec.nodes.items() if gg == g):
            # The busiest hour's rent, and beside it the cap the estate can count on: the cap
            # alone read as what the plan rents ("never more than 64", where it rents 25).
            most = f"up to {float(hourly.max()):,.1f} GPUs in an hour"
            out.append(
                f"Peaks of {g} are rented on demand from {where}, {most}"
                + (f" (the estate can count on {cap})." if cap is not None else ".")
            )
            continue
        # No node of this type is reserved anywhere: every GPU-hour of it is rented.
        out.append(
            f"All {g} capacity is rented on demand from {where}, as the work needs it: "
            f"{float(hourly.mean()):,.1f} GPUs in an average hour and {float(hourly.max()):,.1f} "
            f"at the busiest, where a reserved node is paid for its {data.gpus_per_node[g]} "
            "GPUs around the clock."
        )
    if upfront:
        out.append(
            f"Up front: {money(upfront)} for owned hardware, beside {money(ev.cash_cents / 100)} "
            "a month; the monthly figure already spreads that outlay over the horizon."
        )
    out += _spot_sentences(data, dec, ev)
    out += _seller_sentences(data, dec, ev)
    out += _whole_node_sentences(data, dec, ev)
    return out


def _whole_node_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """What a bursting pool rents beyond its cost when whole-node jobs get whole nodes.

    The model counts a pool's GPUs as one whole, so a job of a node's GPUs "fits" in what a
    service leaves free on a node; :func:`~cluster_decide.planning.evaluation.whole_node_burst`
    counts it exactly for this plan's nodes. The cost the plan states is then a floor (the
    fluid rows relax whole nodes), and the sentence says by how much this plan exceeds it, so
    a meeting knows how far the figure may move. Said from $100 a month and 0.1% of the cost.
    """
    out = []
    total = ev.total_cents / 100
    for (p, g), (hours, usd) in whole_node_extra(data, dec, ev).items():
        if usd < max(100.0, 0.001 * total):
            continue
        gpn = data.gpus_per_node[g]
        here = [
            (w, data.combos[(w, pp, gg)].gang_gpus)
            for (w, pp, gg), sh in sorted(dec.shares.items())
            if pp == p and gg == g and sh - dec.spot.get((w, pp, gg), 0) > 0
        ]
        whole = [w for w, n in here if n >= gpn]
        rest = [w for w, n in here if n < gpn]
        out.append(
            f"Whole nodes: {and_list(whole)} {'runs' if len(whole) == 1 else 'run'} jobs of a "
            f"whole {g} node or more, and the GPUs {and_list(rest)} "
            f"{'leaves' if len(rest) == 1 else 'leave'} free on a node do not make one; counted "
            f"so, the {p} pool rents about {hours:,.0f} more on-demand {g} GPU-hours a month, "
            f"about {money(usd)} ({usd / total:.1%} of this plan's cost), which the cost leaves "
            f"out: the model counts a pool's GPUs as one whole, {WHOLE_NODE_MARKS[0]}."
        )
    return out


def split_closing(sentence: str, closing: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """``sentence`` without the sentences it ends with (``closing``), and those sentences.

    The verdict ends with caveats (``Recommendation.caveats``); a view that sets them apart
    calls this. A sentence that does not end with them is returned whole, with none.
    """
    parts = tuple(c for c in closing if c)
    tail = " ".join(parts)
    if parts and sentence.endswith(" " + tail):
        return sentence[: -len(tail) - 1], parts
    return sentence, ()


def pool_sellers(
    data: ModelData, dec: Decisions, ev: Evaluation
) -> dict[str, dict[str, dict[str, set[str]]]]:
    """What each pool rents anew, and from whom: pool -> seller -> kind -> GPU types.

    Kinds are "nodes" (nodes bought on a rented term: a cluster of today's own nodes are not),
    "peaks" (on-demand bursts) and "spot". Pools that rent nothing are absent, so an empty
    answer is a plan that rents nothing at all.
    """
    kinds = ("nodes", "peaks", "spot")
    uses: dict[str, dict[str, dict[str, set[str]]]] = defaultdict(
        lambda: defaultdict(lambda: {k: set() for k in kinds})
    )
    for (p, g), n in dec.nodes.items():
        market = data.new_node_market(p, g)
        offer = market.baseline if market is not None else None
        if data.nodes_bought(p, g, n) and offer is not None and offer.term != "owned":
            uses[p][offer.seller]["nodes"].add(g)
    for (p, g), b in ev.burst.items():
        market = data.rental_market(p, g)
        offer = market.burst if market is not None else None
        if b.any() and offer is not None:
            uses[p][offer.seller]["peaks"].add(g)
    for (w, p, g), pct in dec.spot.items():
        market = data.rental_market(p, g)
        offer = (
            market.spot_for(data.combos[(w, p, g)].gang_gpus, data.gpus_per_node[g])
            if market is not None
            else None
        )
        if pct > 0 and offer is not None:
            uses[p][offer.seller]["spot"].add(g)
    return {p: {s: uses[p][s] for s in sorted(by)} for p, by in sorted(uses.items())}


def mixed_sellers(
    data: ModelData, dec: Decisions, ev: Evaluation
) -> dict[str, dict[str, dict[str, set[str]]]]:
    """Pools of rented nodes whose GPUs come from more than one company (:func:`pool_sellers`).

    Each GPU type is bought on its cheapest offer (``docs/decisions.md``, markets), the same for
    every pool, and a pool's peaks on the cheapest on-demand offer: so one cluster can hold A100
    nodes from one cloud, H200 nodes from another and rent its peaks from a third. Pools of
    rented nodes only: a listed cluster of today stands where it is, with a provider (or racks)
    the scenario does not name.
    """
    room = machine_room(data, dec)
    return {
        p: by_seller
        for p, by_seller in pool_sellers(data, dec, ev).items()
        if len(by_seller) > 1
        and not data.pool(p).nodes_today
        and not data.pool(p).owned
        and p not in room
    }


def machine_room(data: ModelData, dec: Decisions) -> dict[str, list[str]]:
    """Pools with nodes in the estate's own machine room, and the GPU types of those nodes.

    Nodes bought outright (the GPU type's baseline offer is owned hardware) or a listed
    cluster of today's owned nodes.
    """
    out: dict[str, list[str]] = {}
    for (p, g), n in sorted(dec.nodes.items()):
        market = data.new_node_market(p, g)
        offer = market.baseline if market is not None else None
        owned = offer is not None and offer.term == "owned"
        if n > 0 and (data.pool(p).owns(g) or (owned and data.nodes_bought(p, g, n))):
            out.setdefault(p, []).append(g)
    return out


def machine_room_rents(
    data: ModelData, dec: Decisions, ev: Evaluation
) -> dict[str, dict[str, dict[str, set[str]]]]:
    """Pools of the estate's machine room (:func:`machine_room`) that rent peaks or spot.

    What such a pool rents from a cloud (:func:`pool_sellers`) runs, in practice, as a second
    cluster in that cloud: one cluster does not span a machine room and a cloud.
    """
    room = machine_room(data, dec)
    return {p: by for p, by in pool_sellers(data, dec, ev).items() if p in room}


def _rented_parts(by_seller: dict[str, dict[str, set[str]]]) -> str:
    """What a pool rents from whom: "AWS (L40S peaks) and Nebius (H100 peaks, H100 spot)"."""
    bought = {
        s: ", ".join(f"{and_list(sorted(gpus))} {k}" for k, gpus in what.items() if gpus)
        for s, what in by_seller.items()
    }
    return and_list([f"{s} ({what})" for s, what in bought.items()])


def _seller_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """A pool whose rented GPUs come from more than one cloud provider, said as what it is.

    One Kubernetes or Slurm cluster does not span clouds (:func:`mixed_sellers`); what that
    costs (a cluster per provider, or one provider's prices) is not in the model, so the plan
    says it rather than hide it (the verdict prices the estate bought from one company).
    """
    out = []
    for p, by_seller in mixed_sellers(data, dec, ev).items():
        out.append(
            f"The {p} pool's GPUs come from {number_words(len(by_seller))} "
            f"{SELLER_MARKS[0]}: {_rented_parts(by_seller)}. A cluster does not span "
            "clouds: in practice this is a cluster per provider, each built and run on its own, "
            "or everything from one provider at its prices, and neither cost is counted here."
        )
    # A pool of the estate's own racks that rents from a cloud (the verdict prices renting none).
    room = machine_room(data, dec)
    for p, by_seller in machine_room_rents(data, dec, ev).items():
        out.append(
            f"The {p} pool's {and_list(room[p])} nodes stand in your machine room and it rents "
            f"from {_rented_parts(by_seller)}, but a cluster {SELLER_MARKS[1]}: in practice the "
            "rented GPUs run as a cluster in the cloud beside it, whose build and upkeep are not "
            "counted here."
        )
    return out


def _nodes(n: int, gpu: str) -> str:
    return f"The {n} {gpu} nodes are" if n > 1 else f"The one {gpu} node is"


def _spot_share(workload: str, where: list[tuple[str, str, int]]) -> str:
    """A workload's spot share in words, its parts named when it runs on spot in several places.

    "40% of train"; "50% of reembed (10% on L4, 40% on L40S)" (by GPU type, or by pool and GPU
    type when a GPU type repeats).
    """
    total = sum(pct for _p, _g, pct in where)
    share = f"{total}% of {workload}" if total < 100 else workload
    if len(where) == 1:
        return share
    by_gpu = len({g for _p, g, _pct in where}) == len(where)
    each = [f"{pct}% on {g if by_gpu else f'{p} ({g})'}" for p, g, pct in where]
    return f"{share} ({', '.join(each)})"


def _spot_sentences(data: ModelData, dec: Decisions, ev: Evaluation) -> list[str]:
    """What spot carries, what it saves against the pools' own capacity, and what it risks."""
    on_spot = {k: pct for k, pct in dec.spot.items() if pct > 0}
    if not on_spot:
        return []
    costs = data.scenario.catalog.costs
    saved = 0.0
    parts: dict[str, list[tuple[str, str, int]]] = {}
    for (w, p, g), pct in sorted(on_spot.items()):
        market = data.rental_market(p, g)
        assert market is not None  # spot is priced where a market sells it (``spot_cents``)
        gpu_hours = float(data.combos[(w, p, g)].demand.sum()) / DEMAND_UNITS_PER_GPU * 730 / 168
        baseline = market.baseline.usd_per_gpu_hour if market.baseline else 0.0
        saved += gpu_hours * pct / 100 * baseline - data.spot_cents[(w, p, g)] * pct / 100
        parts.setdefault(w, []).append((p, g, pct))
    names = [_spot_share(w, where) for w, where in parts.items()]
    risk = costs.spot_interruptions_per_node_month
    spent = ev.costs_cents["spot"] / 100
    # Per GPU-hour spot may be no cheaper than the pools' own terms (a reserved node's price
    # counts its every hour); then what it saves is the whole node, or the on-demand hours,
    # the pool would otherwise pay for to hold the same work.
    gain = (
        f"about {money(saved)} less than the same GPU-hours on the pools' own terms"
        if saved >= max(100.0, 0.02 * spent)
        else "no cheaper per GPU-hour than the pools' own terms, but it spares the whole node, "
        "or the on-demand hours, a pool would otherwise pay for to hold that work"
    )
    return [
        f"Spot capacity carries {and_list(names)} for {money(spent)} a month, {gain}. "
        f"The risk: a spot node can be reclaimed at two minutes' notice (about {risk:g} "
        "times a node a month), costing the work since the last checkpoint and a restart, and "
        f"spot capacity can run out; no workload relies on spot for more than "
        f"{data.spot_cap_pct}% of its GPU-hours, and real-time services never use it."
    ]
