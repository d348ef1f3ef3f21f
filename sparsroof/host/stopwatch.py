"""The one timing loop and the one bandwidth kernel that every measurement of this host
uses: kernel runs (bench, core costs, calibration sweep), memory roofs and the probe.

Timing follows the instrumenting phase of *A Performance Modeling and Optimization
Analysis Tool for SpMV on GPUs*: warm-up calls are discarded, then the call is repeated
until both a minimum count and a minimum total time are reached.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["Timing", "time_call", "best_time", "triads", "TRIAD_BYTES", "NOISE_TOLERANCE",
           "shifted"]

#: a measurement whose slowest pass is more than this share slower than its fastest was
#: disturbed by other work (calibrate's runs, the probe's roofs)
NOISE_TOLERANCE = 0.2


#: the span of the random offset :func:`shifted` gives an array: one page
PAGE_BYTES = 4096


def shifted(a: Any) -> Any:
    """A copy of the numpy array ``a`` at a random offset within a page of a larger buffer.

    A small kernel's speed depends on where its arrays lie: when an array it reads and
    one it writes sit at the same offset within a page, the core can mistake a load for
    one that depends on an earlier store (a matrix of 380 entries took 1.9 us in one
    layout and 3.1 us in another, the same kernel on the same data). A process that frees
    and allocates the same sizes gets the same layout pass after pass; operands placed
    at random let the fastest of several passes be the kernel's own speed.

    >>> import numpy as np
    >>> x = shifted(np.arange(5.0))
    >>> x.tolist(), x.flags.c_contiguous, x.ctypes.data % 8
    ([0.0, 1.0, 2.0, 3.0, 4.0], True, 0)
    """
    import numpy as np

    step = a.itemsize
    offset = int(np.random.default_rng().integers(0, PAGE_BYTES // step))
    buffer = np.empty(a.size + offset, a.dtype)
    out = buffer[offset:].reshape(a.shape)
    out[...] = a
    return out


@dataclass(frozen=True)
class Timing:
    """Wall times of the repetitions, in seconds."""

    samples: tuple[float, ...]

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples)

    @property
    def min_s(self) -> float:
        return min(self.samples)


def time_call(fn: Callable[[], object], *, warmup: int = 3, repeat: int = 7,
              min_time: float = 0.05, max_repeat: int = 500,
              sync: Callable[[], object] | None = None) -> Timing:
    """Time ``fn``: ``warmup`` discarded calls, then at least ``repeat`` timed calls and at
    least ``min_time`` seconds in all (no more calls than ``max_repeat`` for that time, and
    never fewer than ``repeat``). ``sync`` waits for
    asynchronous work (a GPU stream) inside each timed interval.

    >>> t = time_call(lambda: sum(range(100)), warmup=1, repeat=5, min_time=0)
    >>> len(t.samples), t.min_s <= t.median_s
    (5, True)
    """
    for _ in range(warmup):
        fn()
    if sync is not None:
        sync()
    samples: list[float] = []
    total = 0.0
    most = max(max_repeat, repeat)  # the calls asked for are made, however many
    while len(samples) < most and (len(samples) < repeat or total < min_time):
        start = time.perf_counter()
        fn()
        if sync is not None:
            sync()
        elapsed = time.perf_counter() - start
        samples.append(elapsed)
        total += elapsed
    return Timing(tuple(samples))


def best_time(fn: Callable[..., object], *args: Any, calls: int = 5) -> float:
    """The fastest of ``calls`` timed calls of ``fn(*args)`` after one warm-up call (the
    rate a roof must hold: the fastest seen, as STREAM reports it)."""
    return time_call(lambda: fn(*args), warmup=1, repeat=calls, min_time=0.0,
                     max_repeat=calls).min_s


#: bytes a triad a[i] = b[i] + s·c[i] moves per fp64 element with ordinary stores: b and c
#: read, a written, and a's line read before it is written (STREAM counts only 24)
TRIAD_BYTES = 32.0


@cache
def triads() -> dict[str, Callable[..., Any]]:
    """Compiled bandwidth kernels over fp64 arrays, repeated ``reps`` times in one call:
    ``triad1`` a[i] = b[i] + s·c[i] (:data:`TRIAD_BYTES` per element) and ``read1``
    a sum of one array (8 bytes per element) on one core; ``triad`` and ``read`` the same
    split into ``parts`` pieces run on as many cores."""
    from ..passes.compiled import njit, prange

    @njit(fastmath=True, cache=True)
    def triad1(a: Any, b: Any, c: Any, s: float, reps: int) -> None:  # pragma: no cover
        for _ in range(reps):
            for i in range(a.shape[0]):
                a[i] = b[i] + s * c[i]

    @njit(fastmath=True, cache=True)
    def read1(a: Any, reps: int) -> float:  # pragma: no cover
        acc = 0.0
        for _ in range(reps):
            for i in range(a.shape[0]):  # fastmath lets the sum vectorise
                acc += a[i]
        return acc

    @njit(parallel=True, cache=True)
    def triad(a: Any, b: Any, c: Any, s: float, reps: int, parts: int) -> None:  # pragma: no cover
        n = a.shape[0]
        for p in prange(parts):
            lo, hi = n * p // parts, n * (p + 1) // parts
            triad1(a[lo:hi], b[lo:hi], c[lo:hi], s, reps)

    @njit(parallel=True, cache=True)
    def read(a: Any, reps: int, parts: int, out: Any) -> None:  # pragma: no cover
        n = a.shape[0]
        for p in prange(parts):
            lo, hi = n * p // parts, n * (p + 1) // parts
            out[p] = read1(a[lo:hi], reps)

    return {"triad1": triad1, "read1": read1, "triad": triad, "read": read}
