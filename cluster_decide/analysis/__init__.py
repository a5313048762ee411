"""Questions a review asks of a plan: alternatives, levers, break-evens, sensitivity, uncertainty.

Every analysis re-solves the model; none reads solver internals. The modules:

- ``compare``: one row per archetype (cost, staff, gaps, service levels, or why not and the fix).
- ``alternatives``: near-optimal alternatives, the most different plans within a cost slack.
- ``levers``: what one more engineer, more budget, a relaxed SLO or a cheaper GPU is worth.
- ``sensitivity``: break-even points by bisection, and tornado sensitivity at ±X%.
- ``uncertainty``: sampled inputs solved in parallel: who wins how often, cost and regret.
- ``pareto``: cost against capability gaps or SLO margin, by the epsilon-constraint method.
- ``showback``: the plan's monthly cost allocated to workloads and teams.
- ``recommend``: the plan with its margin over the runner-up, the nearest input changes that
  flip it (``flips``), a verdict (clear, close, fragile) and one sentence; with samples, the
  robust choice over inputs drawn from the catalog's own ranges (``ranges``).
- ``procurement``: buy versus rent over time, and the discount-rate, horizon and spot-share
  break-evens.
- ``inputs`` and ``core``: the named inputs every analysis varies, and the fast solve they share.
"""

from cluster_decide.analysis.alternatives import (
    ALTERNATIVES_SCHEMA,
    alternative_plans,
    describe_difference,
    near_optimal,
)
from cluster_decide.analysis.comparison import COMPARE_SCHEMA, capability_gaps, compare
from cluster_decide.analysis.core import Outcome, quick_solve, run_all
from cluster_decide.analysis.flips import FLIPS_SCHEMA, LEVELS, Flip, flip_inputs, nearest_flips
from cluster_decide.analysis.inputs import apply_inputs, base_value, default_inputs, input_label
from cluster_decide.analysis.levers import LEVER_SCHEMA, lever_scenarios, lever_values
from cluster_decide.analysis.pareto import PARETO_SCHEMA, RISK_MEASURES, pareto_front
from cluster_decide.analysis.procurement import (
    BUY_VS_RENT_SCHEMA,
    PROCUREMENT_BREAK_EVEN_SCHEMA,
    BuyVsRent,
    buy_vs_rent,
    procurement_break_evens,
)
from cluster_decide.analysis.ranges import RANGES_SCHEMA, catalog_distributions, input_ranges
from cluster_decide.analysis.recommendation import (
    ROBUST_SCHEMA,
    RUNNER_UPS_SCHEMA,
    VERDICTS,
    Recommendation,
    recommend,
)
from cluster_decide.analysis.sensitivity import (
    BREAK_EVEN_SCHEMA,
    TORNADO_SCHEMA,
    BreakEven,
    break_even,
    break_evens,
    tornado,
)
from cluster_decide.analysis.showback_costs import SHOWBACK_SCHEMA, showback, showback_by_team
from cluster_decide.analysis.uncertainty_samples import (
    COSTS_SCHEMA,
    SUMMARY_SCHEMA,
    UncertaintyResult,
    default_distributions,
    describe_inputs,
    draw_samples,
    uncertainty,
)

__all__ = [
    "ALTERNATIVES_SCHEMA",
    "BREAK_EVEN_SCHEMA",
    "BUY_VS_RENT_SCHEMA",
    "COMPARE_SCHEMA",
    "COSTS_SCHEMA",
    "FLIPS_SCHEMA",
    "LEVELS",
    "LEVER_SCHEMA",
    "PARETO_SCHEMA",
    "PROCUREMENT_BREAK_EVEN_SCHEMA",
    "RANGES_SCHEMA",
    "RISK_MEASURES",
    "ROBUST_SCHEMA",
    "RUNNER_UPS_SCHEMA",
    "SHOWBACK_SCHEMA",
    "SUMMARY_SCHEMA",
    "TORNADO_SCHEMA",
    "VERDICTS",
    "BreakEven",
    "BuyVsRent",
    "Flip",
    "Outcome",
    "Recommendation",
    "UncertaintyResult",
    "alternative_plans",
    "apply_inputs",
    "base_value",
    "break_even",
    "break_evens",
    "buy_vs_rent",
    "capability_gaps",
    "catalog_distributions",
    "compare",
    "default_distributions",
    "default_inputs",
    "describe_difference",
    "describe_inputs",
    "draw_samples",
    "flip_inputs",
    "input_label",
    "input_ranges",
    "lever_scenarios",
    "lever_values",
    "near_optimal",
    "nearest_flips",
    "pareto_front",
    "procurement_break_evens",
    "quick_solve",
    "recommend",
    "run_all",
    "showback",
    "showback_by_team",
    "tornado",
    "uncertainty",
]
