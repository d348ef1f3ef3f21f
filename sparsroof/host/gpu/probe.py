"""Measure a CUDA GPU and write a hardware spec for it (``sparsroof hw probe --device cuda``).

- **Device memory**: a device-to-device copy (2 bytes moved per byte copied) and a triad
  a = b + s·c over fp64 arrays (24 bytes per element: on a GPU a whole-line store does not
  read the line first), each array at least :data:`HBM_FACTOR` times the L2 (1 GiB at
  least). The roof is the faster of the two, each the fastest of its repetitions.
- **L2**: reads of working sets from 1/32 of the L2 to 4 times it, each read many times
  inside one launch with loads that skip the L1 (``ld.global.cg``). The roof is the fastest
  rate on a working set no larger than the L2 (the flat part's top: a bound must not sit
  below a real run); the capacity it holds to is the largest working set whose rate is
  still at least half-way from the memory rate to the flat part's median.
- **Launch floors**: an empty kernel timed by the bench's own methods
  (:mod:`sparsroof.host.gpu.stopwatch`): back to back on a stream, replayed through a CUDA
  graph, and with a host synchronisation after each launch; each floor is the fastest
  region. Launched from Python, the stream and sync floors include the host's launch rate.
- **Compute**: chains of fused multiply-adds in fp64 and fp32 on every SM, beside the peak
  derived from SMs x clock x FMA lanes per SM for the compute capability; the roof is the
  larger (a roof cannot sit below a measured run).
- **Facts**: name, memory, SMs, L2 size, clocks, driver and runtime versions from CUDA.

Every measurement runs twice (two rounds); the spec keeps the better of the two and a
figure whose rounds differ by more than :data:`REPEAT_TOLERANCE` is flagged in its source,
in the spec's notes and on stderr: the GPU was busy or changed its clocks.
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .device import Device, DeviceInfo, Kernel
from .stopwatch import time_on_device

__all__ = ["REPEAT_TOLERANCE", "PROMISED_FLOORS", "HBM_FACTOR", "L2_SWEEP", "FMA_LANES",
           "Figure", "GpuProbe", "probe_gpu", "derived_peak", "mib_text"]

Progress = Callable[[str], None]

#: rounds of one figure differing by more than this share are flagged
REPEAT_TOLERANCE = 0.10
#: the launch floors a probe from Python can promise: the graph replay's, which no launcher
#: changes; back to back on a stream and with a host wait, it measures its own launch rate,
#: which a library launching from C beats (one cuSPARSE kernel ran back to back in 3.1 us
#: on an H100 whose CuPy launches took 4.8 us), so those go to the spec's notes
PROMISED_FLOORS = ("graph",)
#: each array of the memory kernels is at least this many times the L2
HBM_FACTOR = 4
#: working sets of the L2 sweep, as shares of the L2's capacity
L2_SWEEP = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 3 / 8, 1 / 2, 5 / 8, 3 / 4, 7 / 8, 1.0, 1.25, 1.5,
            2.0, 4.0)
#: bytes one launch of the L2 read kernel moves, about (the passes over its working set)
L2_BYTES_PER_LAUNCH = 2 * 2**30
#: fp64 and fp32 FMA lanes per SM by compute capability (each FMA two FLOPs), from
#: NVIDIA's architecture whitepapers (Volta, Turing, Ampere, Ada, Hopper, Blackwell)
FMA_LANES = {"7.0": (32, 64), "7.5": (2, 64), "8.0": (32, 64), "8.6": (2, 128),
             "8.7": (2, 128), "8.9": (2, 128), "9.0": (64, 128), "10.0": (64, 128)}


@dataclass(frozen=True)
class Figure:
    """One figure measured in each round; ``best`` is the larger (a rate) or smaller (a
    time), the one a bound can rely on."""

    rounds: tuple[float, ...]
    larger_is_better: bool = True

    @property
    def best(self) -> float:
        return max(self.rounds) if self.larger_is_better else min(self.rounds)

    @property
    def spread(self) -> float:
        """(largest - smallest) / smallest over the rounds.

        >>> round(Figure((2.0, 2.5)).spread, 6)
        0.25
        """
        low = min(self.rounds)
        return (max(self.rounds) - low) / low if low > 0 else math.inf

    @property
    def flagged(self) -> bool:
        return self.spread > REPEAT_TOLERANCE

    def rounds_text(self, show: Callable[[float], str]) -> str:
        """How the rounds compared, for a figure's source."""
        seen = " and ".join(show(r) for r in self.rounds)
        if not self.flagged:
            return f"rounds {seen}, the better kept"
        return (f"FLAGGED: rounds {seen} differ by {100 * self.spread:.0f} % (over "
                f"{100 * REPEAT_TOLERANCE:.0f} %: the GPU was busy or changed its clocks); "
                "the better kept")


@dataclass(frozen=True)
class GpuProbe:
    """What :func:`probe_gpu` measured (SI units)."""

    info: DeviceInfo
    date: str
    array_bytes: int
    copy: Figure
    triad: Figure
    sweep: tuple[tuple[int, Figure], ...]          # (working set bytes, read rate)
    floors: dict[str, Figure] = field(default_factory=dict)   # method -> seconds
    fma: dict[str, Figure] = field(default_factory=dict)      # precision -> FLOP/s
    notes: tuple[str, ...] = ()

    @property
    def memory_rate(self) -> float:
        return max(self.copy.best, self.triad.best)

    def in_l2(self) -> list[tuple[int, Figure]]:
        """The sweep's working sets that fit the L2."""
        return [(ws, f) for ws, f in self.sweep if ws <= self.info.l2_bytes]

    @property
    def l2_rate(self) -> float:
        """The fastest read on a working set that fits the L2, and never below memory."""
        return max([f.best for _, f in self.in_l2()] + [self.memory_rate])

    @property
    def l2_flat(self) -> float:
        """The median rate of the working sets up to half the L2: the flat part."""
        half = [f.best for ws, f in self.sweep if ws <= self.info.l2_bytes / 2]
        return statistics.median(half) if half else self.l2_rate

    @property
    def l2_held_bytes(self) -> int:
        """The largest working set whose rate is at least half-way from memory to the flat
        part (0 when none is)."""
        mark = (self.memory_rate + self.l2_flat) / 2
        held = [ws for ws, f in self.sweep if f.best >= mark]
        return max(held, default=0)

    def flagged(self) -> list[str]:
        """Names of the figures whose rounds differ by more than the tolerance."""
        named = {"copy": self.copy, "triad": self.triad,
                 **{f"L2 read {mib_text(ws)}": f for ws, f in self.sweep},
                 **{f"{m} launch floor": f for m, f in self.floors.items()
                    if m in PROMISED_FLOORS},
                 **{f"{p} FMA": f for p, f in self.fma.items()}}
        return [name for name, f in named.items() if f.flagged]


def mib_text(n: float) -> str:
    """Bytes as MiB, for sources and progress.

    >>> mib_text(50 * 2**20), mib_text(1.5 * 2**20)
    ('50 MiB', '1.5 MiB')
    """
    return f"{n / 2**20:.4g} MiB"


def _fastest(device: Device, kernel: Kernel, repeat: int = 3) -> float:
    """Seconds of the fastest of ``repeat`` single launches (after a warm-up)."""
    t = time_on_device(device, kernel.launch, "stream", warmup=1, repeat=repeat,
                       min_time=0.0, region_s=0.0)
    return t.min_s


def _array_bytes(info: DeviceInfo) -> int:
    """Bytes of each memory-kernel array: HBM_FACTOR x L2, at least 1 GiB, at most a
    sixteenth of the device's memory."""
    size = max(HBM_FACTOR * info.l2_bytes, 2**30)
    return int(min(size, info.memory_bytes // 16) // 2**20 * 2**20)


def _round(device: Device, size: int, progress: Progress) -> dict[str, Any]:
    """One round of every measurement: raw rates and floors."""
    out: dict[str, Any] = {}
    for name, make in (("copy", device.copy_kernel), ("triad", device.triad_kernel)):
        k = make(size)
        out[name] = k.bytes_moved / _fastest(device, k)
        progress(f"memory: {name} {out[name] / 1e9:.0f} GB/s")
    device.release()
    sweep = []
    for share in L2_SWEEP:
        ws = int(device.info.l2_bytes * share) // 2**16 * 2**16 or 2**16
        k = device.read_kernel(ws, max(1, math.ceil(L2_BYTES_PER_LAUNCH / ws)))
        sweep.append((ws, k.bytes_moved / _fastest(device, k)))
        device.release()
    out["sweep"] = sweep
    progress("L2: " + ", ".join(f"{mib_text(ws)} {r / 1e9:.0f}" for ws, r in sweep) + " GB/s")
    empty = device.empty_kernel()
    floors = {}
    for method in ("graph", "stream", "sync"):
        t = time_on_device(device, empty.launch, method, warmup=10, repeat=9, min_time=0.0)
        if t.method == method:  # a graph that could not be captured gives no graph floor
            floors[method] = t.min_s
        else:
            out.setdefault("notes", []).append(f"no graph floor: {t.note}")
    out["floors"] = floors
    progress("launch: " + ", ".join(f"{m} {s * 1e6:.2f} us" for m, s in floors.items()))
    out["fma"] = {}
    for precision in ("fp64", "fp32"):
        k = device.fma_kernel(precision)
        out["fma"][precision] = k.flops / _fastest(device, k)
    progress("compute: " + ", ".join(f"{p} {r / 1e12:.1f} TFLOP/s"
                                     for p, r in out["fma"].items()))
    return out


def probe_gpu(device: Device, rounds: int = 2, progress: Progress = lambda _: None
              ) -> GpuProbe:
    """Measure ``device`` ``rounds`` times (see the module's text)."""
    info = device.info
    progress(f"device: {info.name}, {info.sms} SMs, L2 {mib_text(info.l2_bytes)}, "
             f"{info.memory_bytes / 2**30:.1f} GiB")
    size = _array_bytes(info)
    results = []
    for r in range(rounds):
        progress(f"round {r + 1} of {rounds}")
        results.append(_round(device, size, progress))

    def figure(values: list[float], larger: bool = True) -> Figure:
        return Figure(tuple(values), larger)

    sweep = tuple((ws, figure([res["sweep"][i][1] for res in results]))
                  for i, (ws, _) in enumerate(results[0]["sweep"]))
    methods = set.intersection(*(set(res["floors"]) for res in results))
    floors = {m: figure([res["floors"][m] for res in results], larger=False)
              for m in ("graph", "stream", "sync") if m in methods}
    fma = {p: figure([res["fma"][p] for res in results]) for p in ("fp64", "fp32")}
    notes = tuple(dict.fromkeys(n for res in results for n in res.get("notes", [])))
    return GpuProbe(info, _dt.date.today().isoformat(), size,
                    figure([res["copy"] for res in results]),
                    figure([res["triad"] for res in results]), sweep, floors, fma, notes)


def derived_peak(info: DeviceInfo, precision: str) -> float | None:
    """SMs x clock x FMA lanes per SM x 2 FLOPs, where the compute capability is known.

    >>> info = DeviceInfo("x", 80 * 2**30, 132, 50 * 2**20, "9.0", "13.0", "13.0",
    ...                   clock_hz=1.98e9)
    >>> round(derived_peak(info, "fp64") / 1e12, 2)   # the H100 SXM's 33.5 TFLOP/s
    33.45
    """
    lanes = FMA_LANES.get(info.compute_capability)
    if lanes is None or not info.clock_hz or not info.sms:
        return None
    return info.sms * info.clock_hz * lanes[0 if precision == "fp64" else 1] * 2.0
