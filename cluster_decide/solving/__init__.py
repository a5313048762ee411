"""Solving, at the plan layer: the solve loop, the warm start, infeasibility fixes, the Plan.

The model layer (:mod:`cluster_decide.model`) builds the CP-SAT model and returns decisions;
this package runs it, checks each answer's service levels with the independent evaluator,
explains infeasible scenarios by the changes that fix them, and turns the decisions into a
:class:`~cluster_decide.plan.Plan` with its explanations.
"""
