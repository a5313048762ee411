"""The optimization model: integer data, the CP-SAT model by constraint family, the raw solve.

It returns decisions (:mod:`cluster_decide.model.decisions`) and imports nothing above it;
the solve loop, the Plan and the explanations are in :mod:`cluster_decide.planning`.
"""
