"""The simulation layer: replay a plan's jobs on its pools, job by job.

:mod:`.replay` turns a plan and its scenario into jobs and pools and compares the
simulated waits with the queueing predictions; :mod:`.engine` is the discrete-event
engine under it.
"""
