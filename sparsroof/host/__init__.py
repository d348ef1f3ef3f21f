"""Measuring this machine: timed SpMV runs, memory roofs per cache level, the core's own
costs, a cache simulation, and the calibration that fits them together."""
