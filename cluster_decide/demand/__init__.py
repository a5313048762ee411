"""The demand layer: the queueing formulas behind every capacity.

They turn a workload's arrivals and service-level targets into the capacity it needs
and predict the waits and latencies a plan will see.
"""
