"""Timing a kernel on the GPU in each of the four ways of :mod:`sparsroof.model.timing`.

Every method first runs ``warmup`` calls and waits for them. Then it times *regions*
until it has at least ``repeat`` of them and ``min_time`` seconds in all (at most
``max_repeat``), one sample per region, the time per call in it; the result's median is
the median over regions and its minimum the fastest region, as for host runs.

- ``stream``: N calls back to back on the stream between two CUDA events, N chosen so a
  region lasts about ``region_s`` (from one call timed first); sample = region / N.
- ``graph``: the same N calls captured once into a CUDA graph; each region replays the
  graph between two events; sample = region / N. Where the calls cannot be captured (a
  library that allocates or synchronises inside a call), the method falls back to
  ``stream`` and says why in the result's note: the run is then bounded as a stream run.
- ``sync``: ``calls_per_sync`` calls followed by a wait for the stream, timed by the
  host's clock, since the round trip to the host is what the method includes and events
  on the device do not see it; sample = region / calls_per_sync.
- ``cold``: a buffer of ``cold_bytes`` (twice the L2 by default) is written before each
  call, outside the timed region; each region is one call between two events.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...model.timing import check_timing
from ..stopwatch import Timing
from .device import CaptureError, Device, Work

__all__ = ["DeviceTiming", "REGION_S", "MAX_CALLS", "COLD_FACTOR", "calls_per_region",
           "time_on_device"]

#: how long one timed region of the stream and graph methods lasts, about
REGION_S = 2e-3
#: most calls in one region (a region of tiny kernels still lasts a few milliseconds)
MAX_CALLS = 1000
#: the cold method writes this many times the L2 between calls
COLD_FACTOR = 2


@dataclass(frozen=True)
class DeviceTiming(Timing):
    """Per-call seconds of each timed region, and how they were timed."""

    method: str = "stream"            # the method the samples were timed by
    calls_per_region: int = 1
    timer: str = "CUDA events"        # or "host clock" (sync)
    note: str = ""                    # why the method differs from the one asked for


def calls_per_region(seconds_per_call: float, region_s: float = REGION_S) -> int:
    """Calls that fill a region of about ``region_s`` (1 to :data:`MAX_CALLS`).

    >>> calls_per_region(1e-5), calls_per_region(1.0), calls_per_region(0.0)
    (200, 1, 1000)
    """
    if seconds_per_call <= 0:
        return MAX_CALLS
    return max(1, min(MAX_CALLS, math.ceil(region_s / seconds_per_call)))


def _repeated(call: Work, n: int) -> Work:
    def work() -> None:
        for _ in range(n):
            call()
    return work


def _regions(sample: Callable[[], float], repeat: int, min_time: float,
             max_repeat: int) -> tuple[float, ...]:
    """Seconds of each region until ``repeat`` regions and ``min_time`` seconds in all."""
    samples: list[float] = []
    while len(samples) < max(repeat, 1) or (sum(samples) < min_time
                                             and len(samples) < max_repeat):
        samples.append(sample())
    return tuple(samples)


def time_on_device(device: Device, call: Work, method: str, *, calls_per_sync: int = 1,
                   warmup: int = 3, repeat: int = 7, min_time: float = 0.05,
                   max_repeat: int = 500, region_s: float = REGION_S,
                   cold_bytes: int | None = None) -> DeviceTiming:
    """Time ``call`` (one asynchronous launch of a kernel) on ``device`` by ``method``."""
    check_timing(method, calls_per_sync)
    for _ in range(warmup):
        call()
    device.synchronize()
    if method == "sync":
        n = calls_per_sync

        def host_region() -> float:
            start = device.clock()
            for _ in range(n):
                call()
            device.synchronize()
            return device.clock() - start

        samples = _regions(host_region, repeat, min_time, max_repeat)
        return DeviceTiming(tuple(s / n for s in samples), "sync", n, "host clock")
    if method == "cold":
        scrub = device.scrubber(cold_bytes or COLD_FACTOR * device.info.l2_bytes)

        def cold_region() -> float:
            scrub()
            return device.elapsed(call)

        return DeviceTiming(_regions(cold_region, repeat, min_time, max_repeat), "cold")
    n = calls_per_region(device.elapsed(call), region_s)
    work, note = _repeated(call, n), ""
    if method == "graph":
        try:
            work = device.capture(work)
            work()  # the first replay uploads the graph: not timed
            device.synchronize()
        except CaptureError as err:
            work, method = _repeated(call, n), "stream"
            note = f"graph capture failed ({err}): timed back to back on a stream instead"
    samples = _regions(lambda: device.elapsed(work), repeat, min_time, max_repeat)
    return DeviceTiming(tuple(s / n for s in samples), method, n, note=note)
