"""Plans cached by scenario, so a control moved back and forth solves only once.

The key is the scenario's TOML text: two scenarios that save to the same file are the same
question and get the same plan. Solving holds a lock, because CP-SAT already uses both cores and
two interleaved solves would only slow each other down.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from cluster_decide.model.solve import solve
from cluster_decide.plan import Plan, Status
from cluster_decide.scenario import Scenario

__all__ = ["INTERACTIVE_TIME_LIMIT_S", "PlanCache"]

INTERACTIVE_TIME_LIMIT_S = 3.0
"""Solve time limit for live use: long enough to prove the default scenario optimal many times
over; a plan cut short comes back ``feasible`` with its gap, and the headline says so."""


class PlanCache:
    """A bounded, thread-safe map from scenario to plan that solves on a miss."""

    def __init__(self, time_limit_s: float = INTERACTIVE_TIME_LIMIT_S, max_size: int = 256) -> None:
        self.time_limit_s = time_limit_s
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
            # The plan solved last is usually one slider step away: start the search from it.
            last = next(reversed(self._plans.values()), None)
            plan = solve(scn, time_limit_s=self.time_limit_s, hint=last)
            if plan.status is Status.TIME_LIMIT:
                return plan  # not an answer: the next ask solves again rather than repeat it
            self._plans[key] = plan
            while len(self._plans) > self.max_size:
                self._plans.popitem(last=False)
            return plan
