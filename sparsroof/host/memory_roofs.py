"""Measured memory roofs of this host: a bandwidth for every cache level of a spec.

A probed CPU spec knows its caches' capacities but not their bandwidths, so a kernel whose
working set fits a cache would be bounded by main memory and could "beat" its bound (the
effect *Sparsity-Aware Roofline Models for Sparse Matrix-Matrix Multiplication* reports).
Here each level is measured on a working set of half its capacity, repeated inside each
call so the data stays resident, with two kernels, each on one core (over that core's
share of the set) and on all cores:

* a STREAM-style triad a[i] = b[i] + s·c[i], counted as 32 bytes per element (the line of
  a is read before it is written: write-allocate traffic is traffic);
* a read-only sum of one array (8 bytes per element), since SpMV mostly reads.

A roof must be the fastest rate seen, so each level's bandwidth is the largest of the
four, and main memory's is the larger of the spec's figure and the measured rates.

Roofs cannot fall down the hierarchy: a cache serves its data at least as fast as every
slower level could. A busy host can measure a cache below main memory, which would give a
larger working set a faster bound than a smaller one; :func:`monotone_roofs` finds such
levels and raises each to the roof of the slower levels, saying which it raised.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..hardware.spec import HwSpec, Quantity
from ..units import binary, si
from .stopwatch import TRIAD_BYTES, best_time, triads

__all__ = ["measure_level", "measure_roofs", "roof_rates", "with_roofs", "monotone_roofs",
           "effective_roofs"]

_TARGET_BYTES = 4e8  # bytes moved per timed call: a few ms at cache speeds


def measure_level(working_set: float, parts: int, calls: int = 5) -> dict[str, float]:
    """Bandwidths (bytes/s) over ``working_set`` bytes: triad and read on one core (on
    1/``parts`` of the set, its share of a shared level) and on ``parts`` cores.

    The triad's three arrays share the working set; the read sums one array of that size.
    """
    k = triads()
    out: dict[str, float] = {}
    for threads in sorted({1, parts}):
        share = working_set / parts if threads == 1 else working_set
        n3 = max(8 * threads, int(share / 24))
        a, b, c = np.zeros(n3), np.ones(n3), np.full(n3, 2.0)
        reps = max(1, int(_TARGET_BYTES / (24 * n3)))
        n1 = max(8 * threads, int(share / 8))
        x, sums = np.ones(n1), np.zeros(threads)
        reps1 = max(1, int(_TARGET_BYTES / (8 * n1)))
        if threads == 1:
            t3 = best_time(k["triad1"], a, b, c, 3.0, reps, calls=calls)
            t1 = best_time(k["read1"], x, reps1, calls=calls)
        else:
            t3 = best_time(k["triad"], a, b, c, 3.0, reps, threads, calls=calls)
            t1 = best_time(k["read"], x, reps1, threads, sums, calls=calls)
        out[f"triad_{threads}"] = TRIAD_BYTES * n3 * reps / t3
        out[f"read_{threads}"] = 8.0 * n1 * reps1 / t1
    return out


def _cores(spec: HwSpec) -> int:
    import os

    q = spec.parallelism.get("cores")
    return int(q.value) if q is not None else (os.cpu_count() or 1)


def measure_roofs(spec: HwSpec, progress: Callable[[str], None] = lambda _: None
                  ) -> dict[str, dict[str, float]]:
    """Measured rates per memory level of ``spec``: {level: {"triad", "read"}} (bytes/s).
    Main memory is measured on four times the largest cache (at least 64 MiB)."""
    from ..passes.compiled import get_num_threads

    parts = max(1, min(_cores(spec), get_num_threads()))
    out: dict[str, dict[str, float]] = {}
    caches = [lvl.capacity.value for lvl in spec.memory[:-1] if lvl.capacity is not None]
    for level in spec.memory:
        if level is spec.memory[-1]:
            size = max(4 * max(caches, default=0.0), 64 * 2**20)
        elif level.capacity is None:
            continue
        else:
            size = level.capacity.value / 2
        progress(f"memory roof: {level.name} on {binary(size)}, {parts} threads")
        out[level.name] = measure_level(size, parts, calls=3 if level is spec.memory[-1] else 5)
    return out


def roof_rates(measured: dict[str, dict[str, float]]) -> dict[str, float]:
    """One roof per level: the fastest rate any access pattern reached there (a roof is
    an upper bound, so it cannot sit below a real run).

    >>> roof_rates({"L2": {"triad": 90e9, "read": 120e9}, "DRAM": {"triad": 31e9}})
    {'L2': 120000000000.0, 'DRAM': 31000000000.0}
    """
    return {level: max(rates.values()) for level, rates in measured.items() if rates}


def with_roofs(spec: HwSpec, measured: dict[str, float], what: str) -> HwSpec:
    """``spec`` with measured bandwidths (bytes/s, by level name): a level without a
    bandwidth takes the measured one; a level whose published figure is below the measured
    rate takes the measured rate (a roof cannot be slower than a real run). ``what`` says
    where the numbers come from."""
    levels = []
    for level in spec.memory:
        rate = measured.get(level.name)
        if rate is not None and (level.bandwidth is None or level.bandwidth.value < rate):
            q = Quantity(rate, f"{rate / 1e9:.2f} GB/s", what)
            level = dataclasses.replace(level, bandwidth=q)
        levels.append(level)
    return dataclasses.replace(spec, memory=tuple(levels))


def monotone_roofs(roofs: Mapping[str, float], order: Sequence[str]
                   ) -> tuple[dict[str, float], tuple[str, ...]]:
    """``roofs`` (bytes/s by level) with every level raised to at least the roof of each
    slower level in ``order`` (fastest first), and one line per raised level saying what
    it was below. Levels
    missing from ``roofs`` are skipped; the roofs come back in ``order``.

    >>> r, notes = monotone_roofs({"L2": 90e9, "L3": 4.48e9, "DRAM": 5.72e9},
    ...                           ["L2", "L3", "DRAM"])
    >>> r["L3"], notes
    (5720000000.0, ('L3 at 4.48 GB/s, below DRAM at 5.72 GB/s',))
    """
    out: dict[str, float] = {}
    notes: list[str] = []
    floor: tuple[str, float] | None = None  # the fastest roof among the slower levels
    for name in reversed(order):
        if name not in roofs:
            continue
        rate = float(roofs[name])
        if floor is not None and rate < floor[1]:
            notes.append(f"{name} at {si(rate, 'B/s')}, below {floor[0]} at "
                         f"{si(floor[1], 'B/s')}")
            rate = floor[1]
        else:
            floor = (name, rate)
        out[name] = rate
    return {name: out[name] for name in order if name in out}, tuple(reversed(notes))


def effective_roofs(spec: HwSpec) -> dict[str, float]:
    """The bandwidth (bytes/s) of every level of ``spec`` that has one, fastest first."""
    return {lvl.name: lvl.bandwidth.value for lvl in spec.memory if lvl.bandwidth is not None}
