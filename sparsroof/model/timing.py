"""How a run was timed, and the smallest time one call can take when timed so.

A kernel's measured time depends on the timer as much as on the kernel. Replayed back to
back through a captured graph, a tiny kernel costs the least; launched back to back on one
stream, a little more; with a host synchronisation after every call, the launch, the kernel
and the round trip to the host all land in the timed region; with the caches flushed
between calls (``cold``), no byte can come from a cache that an earlier call warmed, and
one call alone between two events is no faster than one of many replayed back to back, so
its floor is the graph floor (a library's one-kernel call was measured between two events
in less than the stream floor of the same GPU). The
floors are the spec's (:attr:`HwSpec.launch_floors`), each the smallest time a source
measured for that method; ``launch_overhead`` is the smallest of all, the floor of the
default bound, which therefore holds however a run was timed.

With ``sync`` and N calls per synchronisation (a timed region holding N calls and one host
synchronisation), one call takes at least (sync floor + (N - 1) · stream floor) / N.
A spec without a method's floor, or whose floor for it is not a minimum (the mean of a
benchmark's calls, which a leaner harness beats), falls back to the next smaller floor it
has, with a note.
"""

from __future__ import annotations

from ..errors import OptionError
from ..hardware.spec import HwSpec, Quantity

__all__ = ["TIMINGS", "DEFAULT_TIMING", "TIMING_HELP", "launch_floor", "check_timing",
           "describe"]

#: the ways a run can be timed, most optimistic first
TIMINGS = ("graph", "stream", "sync", "cold")
DEFAULT_TIMING = "graph"
#: one line per method, for --help and the docs
TIMING_HELP = {
    "graph": "kernels replayed back to back through a captured graph (the default: "
             "the smallest floor, so the bound holds however a run was timed)",
    "stream": "kernels launched back to back on one stream, one timer around many calls",
    "sync": "a host synchronisation after every --calls-per-sync calls in the timed region",
    "cold": "caches flushed between calls, one call timed alone: every byte from main "
            "memory, graph floor",
}


def describe(timing: str, calls_per_sync: int = 1) -> str:
    """The method in words.

    >>> describe("sync", 8), describe("graph")
    ('sync (8 calls per synchronisation)', 'graph')
    """
    if timing == "sync" and calls_per_sync > 1:
        return f"sync ({calls_per_sync} calls per synchronisation)"
    return timing


def check_timing(timing: str, calls_per_sync: int) -> None:
    """An unknown method or a call count below 1 is a usage error.

    >>> check_timing("sync", 0)
    Traceback (most recent call last):
    ...
    sparsroof.errors.OptionError: calls_per_sync: at least 1 call per synchronisation
    """
    if timing not in TIMINGS:
        raise OptionError(f"{{opt:timing}}: unknown method {timing!r} (choose from "
                          f"{', '.join(TIMINGS)})")
    if calls_per_sync < 1:
        raise OptionError("{opt:calls_per_sync}: at least 1 call per synchronisation")


def _held(spec: HwSpec) -> dict[str, Quantity]:
    """The spec's floors per method that are minima: a floor said to be an average or a
    typical time is above some real runs, so a bound on it would not hold; its method
    falls back to a smaller floor instead (:func:`_lacks` says why)."""
    return {m: q for m, q in spec.launch_floors.items() if q.kind in (None, "minimum")}


def _lacks(spec: HwSpec, method: str) -> str:
    """Why ``spec`` has no floor of its own for ``method``."""
    said = spec.launch_floors.get(method)
    if said is None:
        return f"{spec.name} gives no {method} launch floor"
    return (f"{spec.name}'s {method} launch floor is not a minimum ({said.kind}), which "
            "some runs beat")


def _floor(spec: HwSpec, method: str) -> tuple[float, str, str]:
    """(seconds, the method whose floor it is, note) for graph or stream."""
    floors = _held(spec)
    if method in floors:
        return floors[method].value, method, ""
    lower = ("graph",) if method == "stream" else ()
    for other in lower:
        if other in floors:
            return (floors[other].value, other,
                    f"{_lacks(spec, method)}: its {other} floor is used")
    assert spec.launch_overhead is not None
    note = ("" if method == "graph" and method not in spec.launch_floors else
            f"{_lacks(spec, method)}: its smallest floor is used")
    return spec.launch_overhead.value, "smallest", note


def launch_floor(spec: HwSpec, timing: str = DEFAULT_TIMING, calls_per_sync: int = 1
                 ) -> tuple[float, str]:
    """(seconds one call takes at least when timed by ``timing``, a note where the spec
    lacks that method's floor); (0, '') for a spec without any launch floor.

    >>> from sparsroof.hardware.library import load_spec
    >>> a100 = load_spec("a100")
    >>> launch_floor(a100)[0] == a100.launch_overhead.value
    True
    """
    check_timing(timing, calls_per_sync)
    if spec.launch_overhead is None:
        return 0.0, ""
    if timing in ("graph", "stream", "cold"):
        seconds, _, note = _floor(spec, "graph" if timing == "cold" else timing)
        return seconds, note
    stream, _, stream_note = _floor(spec, "stream")
    sync = _held(spec).get("sync")
    if sync is None:
        return stream, (f"{_lacks(spec, 'sync')}: its "
                        f"{'stream' if not stream_note else 'smallest'} floor is used")
    n = calls_per_sync
    return (sync.value + (n - 1) * stream) / n, stream_note
