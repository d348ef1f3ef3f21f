"""Hardware specs: YAML files with every number's unit and source, checked on load.

A spec looks like this (every quantity is a mapping of ``value`` and ``source``, and may say
what kind of number it is with ``kind``, one of :data:`FIGURE_KINDS`)::

    name: a100-80gb
    aliases: [a100]
    device: NVIDIA A100 80GB SXM4
    kind: gpu
    peaks:                      # unit -> precision -> throughput
      simt:
        fp64: {value: 9.7 TFLOP/s, source: NVIDIA A100 datasheet}
    memory:                     # fastest level first, main memory last
      - name: L2                # a cache's bandwidth may be left out when unpublished
        capacity: {value: 40 MiB, source: ...}
      - name: HBM2e             # main memory: bandwidth required
        bandwidth: {value: 2039 GB/s, source: NVIDIA A100 datasheet, kind: peak}
        capacity: {value: 80 GB, source: NVIDIA A100 datasheet}
    launch_overhead: {value: 1.3 us, source: ..., kind: minimum}   # optional (GPUs)
    launch_floors:              # optional: the floor per way of timing a run (see below)
      graph: {value: 1.3 us, source: ..., kind: minimum}
      stream: {value: 2.1 us, source: ..., kind: minimum}
      sync: {value: 5.4 us, source: ..., kind: minimum}
    network: {value: 600 GB/s, source: ...}              # optional, per device or node
    clock: {value: 1.41 GHz, source: ...}                # optional
    parallelism:                                         # optional plain counts
      sms: {value: 108, source: ...}
    notes: free text                                     # optional
    host: {probed: "2026-11-21"}                         # optional text fields (hw probe)

``launch_overhead`` is the smallest time one kernel takes however it is timed: the floor of
the default bound, which must hold for every way of timing. ``launch_floors`` gives the floor
per timing method where a source measured it (:data:`TIMING_FLOORS`): ``graph`` per kernel of
a captured graph replayed back to back, ``stream`` per kernel launched back to back on one
stream, ``sync`` per call when each call is followed by a host synchronisation (launch, run
and round trip). Without ``launch_overhead`` the smallest floor is it.

The dataclasses live here; :mod:`sparsroof.hardware.schema` checks a parsed file and builds
them, and :mod:`sparsroof.hardware.library` finds and reads the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import SpecError

__all__ = [
    "UNITS",
    "PRECISIONS",
    "DEFAULT_PRECISIONS",
    "TOP_KEYS",
    "PARALLELISM",
    "FIGURE_KINDS",
    "TIMING_FLOORS",
    "Quantity",
    "MemoryLevel",
    "MainMemory",
    "HwSpec",
]

#: compute units a spec may give peaks for
UNITS = ("simt", "tensor", "tensor-sparse")
#: precisions a spec may give peaks for
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
#: the precision ``hw list`` shows for each unit: the first one the device has. SIMT/vector
#: units: fp64, analyze's default ``--dtype`` (then fp32, which every datasheet gives);
#: tensor and matrix units: fp16, the one precision all tensor generations (V100 onwards,
#: CDNA) share.
DEFAULT_PRECISIONS = {
    "simt": ("fp64", "fp32", "fp16", "bf16"),
    "tensor": ("fp16", "bf16", "tf32", "fp32", "fp64", "fp8", "int8"),
    "tensor-sparse": ("fp16", "bf16", "tf32", "fp8", "int8"),
}
#: keys allowed at the top of a spec
TOP_KEYS = (
    "name", "aliases", "device", "kind", "notes", "peaks", "memory",
    "launch_overhead", "launch_floors", "network", "parallelism", "clock", "host",
)
#: the timing methods a spec may give a launch floor for (``launch_floors``)
TIMING_FLOORS = ("graph", "stream", "sync")
#: what kind of number a figure is (the optional ``kind:`` of a quantity):
#: ``peak`` a datasheet or derived theoretical maximum rate; ``measured`` the best rate a
#: benchmark reached; ``minimum`` the smallest time observed (a launch floor);
#: ``average`` a mean over runs (not a safe floor for a bound); ``nominal`` a size or clock
#: as specified
FIGURE_KINDS = ("peak", "measured", "minimum", "average", "nominal")
#: counts allowed under ``parallelism``
PARALLELISM = ("sms", "warps_per_sm", "threads_per_sm", "cores", "sockets", "threads_per_core")


@dataclass(frozen=True)
class Quantity:
    """A number in SI units with the text it was written as and where it comes from."""

    value: float
    text: str
    source: str
    kind: str | None = None  # one of FIGURE_KINDS, None where the spec does not say

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "text": self.text, "source": self.source,
                "kind": self.kind}


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy; a cache's bandwidth may be unpublished (None).
    ``latency``, where given, is the least time a load served by this level takes (its
    load-to-use latency): a kernel whose bytes come from it takes at least that long."""

    name: str
    bandwidth: Quantity | None
    capacity: Quantity | None
    instances: Quantity | None = None  # separate copies the capacity sums (per-core caches)
    latency: Quantity | None = None  # the least time one load from this level takes

    @property
    def capacity_per_instance(self) -> float | None:
        """Bytes one core sees: the capacity over its instances (None when unknown)."""
        if self.capacity is None:
            return None
        return self.capacity.value / (self.instances.value if self.instances else 1)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name,
                "bandwidth": self.bandwidth.to_dict() if self.bandwidth else None,
                "capacity": self.capacity.to_dict() if self.capacity else None,
                "instances": self.instances.to_dict() if self.instances else None,
                "latency": self.latency.to_dict() if self.latency else None}


@dataclass(frozen=True)
class MainMemory(MemoryLevel):
    """The last level, DRAM or HBM: its bandwidth is always known."""

    bandwidth: Quantity


@dataclass(frozen=True)
class HwSpec:
    """A validated hardware spec. Peaks are keyed by (unit, precision)."""

    name: str
    device: str
    kind: str
    origin: str
    peaks: dict[tuple[str, str], Quantity]
    memory: tuple[MemoryLevel, ...]
    launch_overhead: Quantity | None = None
    network: Quantity | None = None
    parallelism: dict[str, Quantity] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    clock: Quantity | None = None
    notes: str = ""
    host: dict[str, str] = field(default_factory=dict)
    launch_floors: dict[str, Quantity] = field(default_factory=dict)

    @property
    def dram(self) -> MainMemory:
        """Main memory: the last (slowest, largest) level."""
        level = self.memory[-1]
        assert isinstance(level, MainMemory), "validation makes the last level MainMemory"
        return level

    @property
    def units(self) -> tuple[str, ...]:
        """The compute units this device has a peak for, in the order of :data:`UNITS`."""
        return tuple(u for u in UNITS if any(unit == u for unit, _ in self.peaks))

    def precisions(self, unit: str) -> tuple[str, ...]:
        """The precisions ``unit`` has a peak for, in the order of :data:`PRECISIONS`."""
        return tuple(p for p in PRECISIONS if (unit, p) in self.peaks)

    def default_precision(self, unit: str) -> str | None:
        """The precision shown for ``unit`` by default (see :data:`DEFAULT_PRECISIONS`).

        >>> from sparsroof.hardware.library import load_spec
        >>> load_spec("a100").default_precision("simt"), load_spec("a100").default_precision(
        ...     "tensor")
        ('fp64', 'fp16')
        """
        have = self.precisions(unit)
        return next((p for p in DEFAULT_PRECISIONS.get(unit, ()) if p in have), None)

    def peak(self, unit: str, precision: str) -> Quantity:
        """The peak for ``unit`` at ``precision``; a clear error when the device lacks it."""
        try:
            return self.peaks[(unit, precision)]
        except KeyError:
            have = sorted(f"{u}/{p}" for u, p in self.peaks)
            raise SpecError(
                self.origin,
                f"{self.name} has no {unit} peak at {precision} (it has: {', '.join(have)})",
            ) from None

    def ridge_point(self, unit: str, precision: str) -> float:
        """Machine balance in FLOP/byte: the intensity where the compute roof meets DRAM.

        ridge = P_unit / beta_DRAM (the roofline's ridge point; the *Time-Based Roofline for
        Deep Learning Performance Analysis* paper calls it the machine balance and gives
        107.479 TFLOP/s / 828.8 GB/s = 129.68 for its measured V100).

        >>> from sparsroof.hardware.library import load_spec
        >>> round(load_spec("v100-measured").ridge_point("tensor", "fp16"), 2)
        129.68
        """
        return self.peak(unit, precision).value / self.dram.bandwidth.value

    def to_dict(self) -> dict[str, Any]:
        """Everything in the spec as plain data: SI values, the text as written, sources."""
        peaks: dict[str, dict[str, Any]] = {}
        for (unit, precision), q in self.peaks.items():
            peaks.setdefault(unit, {})[precision] = q.to_dict()
        optional = {"launch_overhead": self.launch_overhead, "network": self.network,
                    "clock": self.clock}
        return {
            "name": self.name, "aliases": list(self.aliases), "device": self.device,
            "kind": self.kind, "origin": self.origin, "notes": self.notes,
            "peaks": peaks, "memory": [lv.to_dict() for lv in self.memory],
            **{k: (q.to_dict() if q else None) for k, q in optional.items()},
            "launch_floors": {k: q.to_dict() for k, q in self.launch_floors.items()},
            "parallelism": {k: q.to_dict() for k, q in self.parallelism.items()},
            "host": dict(self.host),
        }
