"""Plans cached by scenario, so a control moved back and forth solves only once.

The key is the scenario's TOML text: two scenarios that save to the same file are the same
question and get the same plan. Solving holds a lock, because two interleaved solves would only
slow each other down.

Live solves are deterministic: CP-SAT runs on one worker and stops on a deterministic work limit
(``INTERACTIVE_WORK_LIMIT``), never on the clock, and starts from no hint, so the same settings
give the same plan whatever the machine is doing and whatever was solved before. Only proven
answers (optimal, or proven infeasible) are kept; anything else is solved again when asked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from cluster_decide.inputs.scenario import Scenario
from cluster_decide.planning.plan import Plan, Status
from cluster_decide.planning.solve import deterministic_work, solve

__all__ = ["INTERACTIVE_TIME_LIMIT_S", "INTERACTIVE_WORK_LIMIT", "PlanCache"]

INTERACTIVE_WORK_LIMIT = 10.0
"""CP-SAT deterministic time (about seconds of one core's work) a live solve may use. The presets
are proven optimal in well under one; a plan stopped by this limit says it is not proven best."""
_PROVEN = frozenset({Status.OPTIMAL, Status.INFEASIBLE})
"""Statuses worth remembering: a time-limited or unproven plan is solved again when asked."""
INTERACTIVE_TIME_LIMIT_S = 120.0
"""Wall-clock safety net only: far above what the work limit takes, so it never decides a plan."""


class PlanCache:
    """A bounded, thread-safe map from scenario to plan that solves on a miss."""

    def __init__(
        self,
        time_limit_s: float = INTERACTIVE_TIME_LIMIT_S,
        max_size: int = 256,
        work_limit: float = INTERACTIVE_WORK_LIMIT,
    ) -> None:
        self.time_limit_s = time_limit_s
        self.work_limit = work_limit
        self.max_size = max_size
        self.hits = 0
        self.misses = 0
        self._plans: OrderedDict[str, Plan] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(scn: Scenario) -> str:
        """The cache key of a scenario: its TOML text."""
        return scn.to_toml()

    def get(self, scn: Scenario) -> Plan | None:
        """The cached plan of ``scn``, or None."""
        return self._plans.get(self.key(scn))

    def __contains__(self, scn: Scenario) -> bool:
        return self.key(scn) in self._plans

    def __len__(self) -> int:
        return len(self._plans)

    def solve(self, scn: Scenario) -> Plan:
        """The plan of ``scn``: from the cache, or solved now and remembered."""
        key = self.key(scn)
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self.hits += 1
                self._plans.move_to_end(key)
                return plan
            self.misses += 1
            with deterministic_work(self.work_limit):
                plan = solve(scn, time_limit_s=self.time_limit_s, workers=1)
            if plan.status not in _PROVEN:
                return plan  # not proven: never remembered
            self._plans[key] = plan
            while len(self._plans) > self.max_size:
                self._plans.popitem(last=False)
            return plan
