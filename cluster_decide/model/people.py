"""People and change: payroll, whole hires, retraining, managed platforms, builds and moves.

The tables here turn the scenario's team, hiring policy and ``[current]`` estate into integers
the model and the evaluator share (cents a month, thousandths of an FTE):

- **Payroll.** Existing staff are paid whatever the plan does (a constant, shown so that a
  plan that idles a team says so). A hire is a whole person: full salary plus the one-off
  hiring fee spread over the horizon. ``hiring.max_fte`` caps hires of all skills together.
- **Retraining.** An engineer of one skill may be trained in the other: a one-off course and
  ramp-up (part of a few months' salary), spread over the horizon. A trained engineer's time
  can then go to either skill.
- **Managed platforms.** A pool may run as a managed service (cloud only): a control-plane fee
  and a much smaller fixed operations effort (node care stays with the team).
- **Builds and moves.** Opening a pool that does not exist today costs engineer-weeks once;
  moving a workload off the platform it runs on today costs engineer-weeks scaled by its users
  and jobs, plus a week of each user's time when they must change tools. One-off costs are
  spread evenly over the planning horizon (``one-time = monthly × horizon``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from cluster_decide.base.constants import HOURS_PER_MONTH, SKILLS
from cluster_decide.inputs.catalog import Catalog
from cluster_decide.inputs.scenario import Scenario, Workload

__all__ = [
    "ADDON_SUFFIX",
    "PLATFORM_SKILL",
    "ManagedOption",
    "Move",
    "PeopleData",
    "StaffingChoice",
    "cheapest_staffing",
    "jobs_per_month",
    "prepare_people",
    "users_of",
]

MILLI = 1000
WEEKS_PER_YEAR = 52.0
PLATFORM_SKILL = {
    "slurm": "hpc",
    "kubernetes": "kubernetes",
    "kubernetes_batch": "kubernetes",
    "shared": "kubernetes",
}
"""The skill whose engineers build a cluster of each platform kind (prices its build weeks)."""
ADDON_SUFFIX = "+batch"
"""A Kubernetes cluster of today with a batch add-on is the pool named the cluster's name and this
(``eks+batch``); no scenario name has a ``+``, so it names nothing else."""


@dataclass(frozen=True)
class ManagedOption:
    """A pool's managed variant: its fee in cents a month, fixed effort in thousandths of an FTE.

    Per-node effort is the self-managed figure (node care stays with the team).
    """

    cluster_cents: int
    base_milli: Mapping[str, int]
    build_cents: int
    forced: bool = False
    """The pool exists today as a managed service, so it stays one."""


@dataclass(frozen=True)
class Move:
    """What moving one workload off its platform of today costs, in cents a month (amortized)."""

    today: str
    users: int
    jobs_per_month: float
    weeks: float
    move_cents: int
    retool_cents: int
    """Extra when the plan's platform does not offer the interface its users work in."""
    cluster: str | None = None
    """The listed cluster it runs on today, when ``[current]`` names it."""
    relocate_weeks: float = 0.0
    """Engineer-weeks of moving it to another cluster of its platform family (with ``cluster``)."""
    relocate_cents: int = 0
    """What those weeks cost a month, spread over the horizon."""

    def cents(self, moved: bool, retooled: bool, relocated: bool) -> int:
        """What a plan's transition of this workload costs a month (``check_transition``'s flags)."""
        return (
            (self.move_cents if moved else 0)
            + (self.retool_cents if retooled else 0)
            + (self.relocate_cents if relocated else 0)
        )


@dataclass(frozen=True)
class PeopleData:
    """The people and transition tables of one scenario."""

    horizon_months: int
    salary_cents: Mapping[str, int]
    """One FTE of each skill for a month, in cents."""
    payroll_cents: Mapping[str, int]
    """Existing staff of each skill for a month (all of them, busy or idle)."""
    hire_fee_cents: int
    max_hires: int
    max_hires_by_skill: Mapping[str, int]
    retrain_cents: Mapping[tuple[str, str], int]
    """(from, to) → cents a month per person trained; empty when retraining is not allowed."""
    managed: Mapping[str, ManagedOption]
    build_cents: Mapping[str, int]
    """Pool → cents a month of building it self-managed (0 for pools that exist today)."""
    existing: frozenset[str]
    moves: Mapping[str, Move]

    def max_retrain(self, skill: str, available_milli: int) -> int:
        """Most people of ``skill`` the plan may retrain (whole people on staff)."""
        if not any(s == skill for s, _t in self.retrain_cents):
            return 0
        return available_milli // MILLI


def users_of(w: Workload, scn: Scenario) -> int:
    """People who submit a workload's work: ``[current]`` users, else a sensible default."""
    cur = scn.current.workloads.get(w.name) if scn.current is not None else None
    if cur is not None and cur.users is not None:
        return cur.users
    if w.kind == "experimentation":
        return int(getattr(w, "concurrent_users", 1))
    people = scn.catalog.people
    return int(people.default_users_per_class) if people is not None else 10


def jobs_per_month(w: Workload) -> float:
    """Jobs a month of a batch workload (0 for services and interactive users)."""
    hours = getattr(w, "gpu_hours_per_month", 0.0)
    if not hours:
        return 0.0
    return float(hours / (w.gpus_per_job * w.mean_job_hours))  # type: ignore[union-attr]


def _cents(usd_per_month: float) -> int:
    return round(usd_per_month * 100)


def prepare_people(
    scn: Scenario,
    pools: tuple[tuple[str, str, int | None], ...],
    existing: Mapping[str, bool | None],
    addons: Mapping[str, str],
    rented: frozenset[str] = frozenset(),
) -> PeopleData:
    """The people tables of ``scn`` for ``pools`` ((name, platform, max_nodes) each).

    A pool may run as a managed service where its nodes are in a cloud: every pool when
    ``procurement.mode`` is ``cloud``, else the new pools in ``rented`` (every GPU type they may
    hold is rented, as in ``cheapest`` mode where renting wins). Offering it to a pool that may
    also hold bought hardware, with a row that keeps that out, made a solve 20× slower
    (``docs/decisions.md``).

    ``existing`` maps the pools that exist today to whether they run as a managed service
    (``None`` when ``[current]`` names the platform but not the cluster: either may be true, so
    the plan may run it managed, with no build cost either way). ``addons`` maps the pools that
    are a cluster of today with an add-on still to install to the platform kind it runs today:
    their build is the add-on's install, the two kinds' self-managed build weeks apart, managed
    or not (the managed variants' weeks are a whole new cluster's).
    """
    cat: Catalog = scn.catalog
    people = cat.people
    assert people is not None, "the catalog has no people.csv"
    horizon = scn.procurement.horizon_months
    salary_usd = {s: scn.loaded_cost_usd_per_year(s) / 12.0 for s in SKILLS}
    week_usd = {s: scn.loaded_cost_usd_per_year(s) / WEEKS_PER_YEAR for s in SKILLS}
    available = {s: getattr(scn.team, s).fte for s in SKILLS}

    retrain: dict[tuple[str, str], int] = {}
    if scn.hiring.retraining:
        for s, t in itertools.permutations(SKILLS, 2):
            once = people.retraining_course_usd + (
                people.retraining_ramp_months
                * people.retraining_ramp_productivity_loss
                * salary_usd[s]
            )
            retrain[(s, t)] = _cents(once / horizon)

    cloud = scn.procurement.mode == "cloud"
    managed: dict[str, ManagedOption] = {}
    build: dict[str, int] = {}
    for name, platform, _max in pools:
        skill = PLATFORM_SKILL[platform]
        variant = cat.managed.get(platform)
        is_existing = name in existing
        base = addons.get(name)
        weeks = people.build_weeks(platform) - (people.build_weeks(base) if base else 0.0)
        build[name] = 0 if is_existing and not base else _cents(weeks * week_usd[skill] / horizon)
        allowed = scn.policy.managed and (cloud or name in rented) and existing.get(name) is None
        if variant is not None and (allowed or existing.get(name)):
            # An add-on is the same work whoever runs the control plane.
            managed_weeks = weeks if base else variant.build_weeks
            managed[name] = ManagedOption(
                cluster_cents=_cents(variant.cluster_usd_per_hour * HOURS_PER_MONTH),
                base_milli={
                    s: round(
                        (
                            variant.fte(s, "base")
                            + variant.fte(s, "addon")
                            + variant.fte(s, "integration")
                        )
                        * MILLI
                    )
                    for s in SKILLS
                },
                build_cents=0
                if is_existing and not base
                else _cents(managed_weeks * week_usd[skill] / horizon),
                forced=bool(existing.get(name)),
            )

    moves: dict[str, Move] = {}
    current = scn.current
    if current is not None:
        user_week = people.user_loaded_cost_usd_per_year / WEEKS_PER_YEAR
        for w in scn.workloads:
            today = current.workloads.get(w.name)
            if today is None:
                continue
            users = users_of(w, scn)
            jobs = jobs_per_month(w)
            relocate = people.relocation_weeks if today.cluster is not None else 0.0
            weeks = (
                people.migration_base_weeks
                + people.migration_weeks_per_user * users
                + people.migration_weeks_per_1000_jobs * jobs / 1000.0
            )
            moves[w.name] = Move(
                today=today.platform,
                users=users,
                jobs_per_month=jobs,
                weeks=weeks,
                move_cents=_cents(weeks * week_usd["kubernetes"] / horizon),
                retool_cents=_cents(users * people.user_retraining_weeks * user_week / horizon),
                cluster=today.cluster,
                relocate_weeks=relocate,
                relocate_cents=_cents(
                    relocate * week_usd[PLATFORM_SKILL[today.platform]] / horizon
                ),
            )

    caps = {s: scn.hiring.max_fte_by_skill.get(s, scn.hiring.max_fte) for s in SKILLS}
    max_hires = scn.hiring.max_fte if scn.hiring.allowed else 0
    return PeopleData(
        horizon_months=horizon,
        salary_cents={s: _cents(salary_usd[s]) for s in SKILLS},
        payroll_cents={s: _cents(salary_usd[s] * available[s]) for s in SKILLS},
        hire_fee_cents=_cents(scn.hire_one_time_cost_usd / horizon),
        max_hires=max_hires,
        max_hires_by_skill={s: min(caps[s], max_hires) for s in SKILLS},
        retrain_cents=retrain,
        managed=managed,
        build_cents=build,
        existing=frozenset(existing),
        moves=moves,
    )


@dataclass(frozen=True)
class StaffingChoice:
    """How a plan covers its operations effort: hires and retrained people per skill."""

    hires: Mapping[str, int]
    retrained: Mapping[tuple[str, str], int]
    cents: int
    """Monthly cost of the hires (salary and fee) and of the retraining."""


def cheapest_staffing(
    people: PeopleData, required: Mapping[str, int], available: Mapping[str, int]
) -> StaffingChoice | None:
    """The cheapest hires and retraining that cover ``required`` (thousandths of an FTE).

    Exact for two skills: every number of hires (up to the caps) and of retrained people (up to
    what the deficit could use) is tried. A retrained engineer's time may go to either skill;
    hires keep their own skill. Returns None when nothing within the caps covers the effort.
    """
    a, b = SKILLS
    best: StaffingChoice | None = None
    need = {s: max(0, required[s] - available[s]) for s in SKILLS}
    reach = {
        s: min(people.max_retrain(s, available[s]), -(-need[t] // MILLI))
        for s, t in ((a, b), (b, a))
    }
    for ha in range(people.max_hires_by_skill[a] + 1):
        for hb in range(min(people.max_hires_by_skill[b], people.max_hires - ha) + 1):
            spare_a = available[a] + MILLI * ha - required[a]
            spare_b = available[b] + MILLI * hb - required[b]
            for rab in range(reach[a] + 1):
                for rba in range(reach[b] + 1):
                    # Net time x moved from a to b: x ≤ spare_a, -x ≤ spare_b, within training.
                    lo = max(-spare_b, -min(MILLI * rba, available[b]))
                    hi = min(spare_a, min(MILLI * rab, available[a]))
                    if lo > hi:
                        continue
                    cents = (
                        (people.salary_cents[a] + people.hire_fee_cents) * ha
                        + (people.salary_cents[b] + people.hire_fee_cents) * hb
                        + people.retrain_cents.get((a, b), 0) * rab
                        + people.retrain_cents.get((b, a), 0) * rba
                    )
                    if best is None or cents < best.cents:
                        best = StaffingChoice({a: ha, b: hb}, {(a, b): rab, (b, a): rba}, cents)
    return best
