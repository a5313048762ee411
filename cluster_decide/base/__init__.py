"""The base layer: names, units, the data folder, errors, ranges, file writes.

One vocabulary of names, labels and units; constants; the data folder's resolver;
errors with their hints; the plausible range of every number; atomic file writes.
It imports nothing from the layers above it.
"""
