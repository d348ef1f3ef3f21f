"""What a valid spec still lacks for a bound that holds: warnings, not errors.

A bound is a promise that no real run is faster. A GPU spec without a launch floor lets a
small matrix be promised nanoseconds where every real kernel takes microseconds; a cache
level without a bandwidth makes a working set that lives there be charged at main-memory
speed, so a warm run can beat the bound; a launch overhead that is an average rather than
the smallest time a kernel takes is above some real runs; a CPU spec whose levels give no
latency promises a tiny matrix's cold call a time under a nanosecond.
"""

from __future__ import annotations

from .spec import HwSpec, Quantity

__all__ = ["spec_warnings"]


def spec_warnings(spec: HwSpec) -> list[str]:
    """One line per gap in ``spec`` that weakens its bounds.

    >>> from sparsroof.hardware.library import load_spec
    >>> spec_warnings(load_spec("a100"))
    []
    >>> [w.split(": ")[1] for w in spec_warnings(load_spec("c2050"))]
    ['launch_overhead']
    """
    out: list[str] = []
    lead = f"{spec.name}: "
    if spec.kind == "gpu" and spec.launch_overhead is None:
        out.append(lead + "launch_overhead: missing: a GPU kernel takes a few microseconds "
                   "at least; without a floor small matrices get bounds no real run can "
                   "reach")
    lo = spec.launch_overhead
    if lo is not None and _not_minimum(lo):
        out.append(lead + f"launch_overhead: kind is {lo.kind!r}: a bound needs the "
                   "smallest time a kernel takes ('minimum'), or real runs beat it")
    for method, floor in spec.launch_floors.items():
        if _not_minimum(floor):
            out.append(lead + f"launch_floors.{method}: kind is {floor.kind!r}: a run timed "
                       f"by {method} can be faster than this floor, so bounds leave it out "
                       "for the next smaller floor (a bound needs the smallest time, "
                       "'minimum')")
    if lo is not None and lo.kind is None:
        out.append(lead + "launch_overhead: no kind: say 'kind: minimum' once the figure is "
                   "the smallest back-to-back kernel time")
    if spec.kind == "cpu" and all(level.latency is None for level in spec.memory):
        out.append(lead + "memory: no level gives a latency: a tiny matrix's cold bound is "
                   "its bytes over a bandwidth, under a nanosecond where no first load can "
                   "be (give the L1 load-to-use time, e.g. 'latency: {value: 1.1 ns, ...}')")
    for level in spec.memory:
        lat = level.latency
        if lat is not None and _not_minimum(lat):
            out.append(lead + f"memory.{level.name}.latency: kind is {lat.kind!r}: a bound "
                       "needs the least time a load takes ('minimum'), or a call beats it")
    for at, level in enumerate(spec.memory[:-1]):
        if level.bandwidth is None:
            slower = next((lv.name for lv in spec.memory[at + 1:] if lv.bandwidth is not None),
                          spec.dram.name)
            out.append(lead + f"memory.{level.name}.bandwidth: missing: a working set that "
                       f"fits this level is charged at {slower}'s bandwidth, so a warm run "
                       "served from this level can beat the bound")
        if level.capacity is None:
            out.append(lead + f"memory.{level.name}.capacity: missing: no working set can be "
                       "placed in this level")
    return out


def _not_minimum(q: Quantity) -> bool:
    """Whether a floor's kind is said and is not a minimum: a bound on it does not hold."""
    return q.kind not in (None, "minimum")
