"""The planning layer: the solve loop, the Plan, its evaluation and explanations.

The model layer (:mod:`cluster_decide.model`) builds the CP-SAT model and returns
decisions; this package runs it (warm start, service-level rounds), checks each
answer with the independent evaluator, explains infeasible scenarios by the changes
that fix them, and turns the decisions into a
:class:`~cluster_decide.planning.plan.Plan` with its service levels and sentences.
"""
