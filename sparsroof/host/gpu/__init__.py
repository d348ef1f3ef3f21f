"""Measuring a CUDA GPU in this machine: the device's small surface (device.py) and its
CuPy implementation, the four timing methods (timing.py), cuSPARSE products checked
against scipy (bench.py) and the probe that writes a spec of the device (probe.py)."""
