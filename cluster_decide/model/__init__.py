"""The optimization: integer model data, the CP-SAT model by constraint family, solve, relax."""
