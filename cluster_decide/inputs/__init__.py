"""The inputs layer: the scenario, the catalog and the market data behind them.

The scenario a user writes, the catalog and its market tables, how a scenario's GPUs
are priced, the estate's size and the data sources behind every number. The job-log
reader, :mod:`cluster_decide.inventory`, is a package of the same layer.
"""
