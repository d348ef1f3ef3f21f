"""Measuring this machine: one timing loop and one set of bandwidth kernels (timing.py),
the probe that writes a spec for it, timed SpMV runs (bench.py), memory roofs per cache
level, the core's own costs, a cache simulation, and the calibration that fits them."""
