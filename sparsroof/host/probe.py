"""Measure this machine and write a hardware spec for it (``sparsroof hw probe``).

- **Memory bandwidth**: a STREAM-style triad a[i] = b[i] + s·c[i] over fp64 arrays each at
  least four times the total last-level cache (STREAM's own sizing rule), compiled with
  numba and run on all cores. Bytes are counted as the memory moves them: 4 × 8 bytes per
  element (two reads, one write and the read that allocates the written line; STREAM
  counts 3 × 8 and so reports a rate that a kernel with ordinary stores beats). The best of
  several repetitions is kept, as STREAM does.
- **Cache bandwidths**: each cache level's fastest rate, a triad or a read over half its
  total capacity, on one core and on all cores (:mod:`sparsroof.host.memory_roofs`), so a
  working set that fits a cache is bounded by that cache and not by main memory. A level
  measured below a slower one (a busy host) takes the slower one's rate.
- **Compute peak**: derived as cores × clock × FLOPs per cycle, with two vector FMA pipes
  per core as wide as the widest SIMD the CPU flags list (AVX-512: 8 fp64 lanes, AVX: 4,
  SSE2: 2), so 4 × lanes FLOPs per cycle. A roof must be an upper bound: a numpy matrix
  multiply (the installed BLAS) of n × n matrices is also timed, 2·n³ FLOPs, and the peak
  is the larger of the two. The multiply alone is the attainable dense rate, a *lower*
  bound on the peak: on a busy machine a small product runs slower than one-thread SpMV,
  which would then beat its bound.
- **Host facts**: CPU model, cores, sockets and threads per core from /proc/cpuinfo; cache
  sizes and how many instances of each level from /sys/devices/system/cpu/cpu*/cache.

The result is the YAML text of a spec that passes validation, each figure's source saying
how and when it was measured.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..units import binary
from .stopwatch import NOISE_TOLERANCE, TRIAD_BYTES, best_time, triads

__all__ = ["CacheLevel", "HostInfo", "ProbeResult", "host_info", "probe", "spec_yaml",
           "bytes_text"]

Progress = Callable[[str], None]
_SYS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class CacheLevel:
    """One data (or unified) cache level, summed over all its instances in the machine."""

    level: int
    size_bytes: int      # of one instance
    instances: int

    @property
    def total_bytes(self) -> int:
        return self.size_bytes * self.instances


@dataclass(frozen=True)
class HostInfo:
    model: str
    cores: int            # physical cores, all sockets
    sockets: int
    threads_per_core: int
    caches: tuple[CacheLevel, ...] = ()
    memory_bytes: int | None = None
    simd_bits: int = 128      # widest vector width the CPU flags list
    clock_hz: float | None = None  # the highest clock /proc/cpuinfo or cpufreq reports
    boost_hz: float | None = None  # cpufreq's maximum, where the kernel gives it (not in
    # most virtual machines, whose cpuinfo clock may be the base clock)


@dataclass(frozen=True)
class ProbeResult:
    host: HostInfo
    date: str
    triad_bytes_per_s: float
    triad_array_bytes: int
    triad_repetitions: int
    gemm_flops: dict[str, float] = field(default_factory=dict)   # precision -> FLOP/s
    gemm_n: dict[str, int] = field(default_factory=dict)
    cache_bytes_per_s: dict[int, float] = field(default_factory=dict)  # level -> fastest rate
    passes: dict[str, tuple[float, ...]] = field(default_factory=dict)  # roof -> each pass's

    @property
    def spread(self) -> dict[str, float]:
        """Per memory roof, its slowest pass over its fastest, less 1."""
        return {k: max(v) / min(v) - 1 for k, v in self.passes.items() if v and min(v) > 0}

    @property
    def noisy(self) -> list[str]:
        """One line per memory roof whose passes differ by more than the tolerance a
        calibration allows (:data:`sparsroof.host.stopwatch.NOISE_TOLERANCE`): other work
        disturbed the host."""
        return [f"{k} measured {', '.join(f'{r / 1e9:.1f}' for r in self.passes[k])} GB/s in "
                f"{len(self.passes[k])} passes ({100 * d:.0f}% apart, over "
                f"{100 * NOISE_TOLERANCE:.0f}%)"
                for k, d in self.spread.items() if d > NOISE_TOLERANCE]


def measure_caches(host: HostInfo, quick: bool = False,
                   progress: Progress = lambda _: None) -> dict[int, float]:
    """The fastest rate (bytes/s) a triad or a read reaches in each cache level, on a
    working set of half the level's total capacity, on one core and on all of them (see
    :func:`sparsroof.host.memory_roofs.measure_level`)."""
    from .memory_roofs import measure_level

    rates = {}
    for c in host.caches:
        size = c.total_bytes / 2
        progress(f"memory: L{c.level} on {binary(size)}")
        rates[c.level] = max(measure_level(size, max(1, host.cores),
                                           calls=2 if quick else 5).values())
        progress(f"memory: L{c.level} {rates[c.level] / 1e9:.1f} GB/s")
    return rates


def _size(text: str) -> int:
    """'32K' -> 32768, as sysfs writes cache sizes.

    >>> _size("32K"), _size("1M"), _size("512")
    (32768, 1048576, 512)
    """
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)\s*", text)
    if m is None:
        raise ValueError(f"unexpected cache size {text!r}")
    return int(m.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2)]


def _caches(root: Path = _SYS_CPU) -> tuple[CacheLevel, ...]:
    """Data/unified cache levels; instances counted by distinct shared_cpu_list."""
    found: dict[int, tuple[int, set[str]]] = {}
    for index in root.glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            kind = (index / "type").read_text().strip()
            if kind == "Instruction":
                continue
            level = int((index / "level").read_text())
            size = _size((index / "size").read_text())
            shared = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        size0, sharers = found.setdefault(level, (size, set()))
        sharers.add(shared)
        found[level] = (max(size0, size), sharers)
    return tuple(CacheLevel(lv, size, len(sharers))
                 for lv, (size, sharers) in sorted(found.items()))


def _simd_bits(flags: set[str]) -> int:
    """Widest vector width the CPU flags list.

    >>> _simd_bits({"sse2", "avx", "avx512f"}), _simd_bits({"sse2", "avx2"}), _simd_bits(set())
    (512, 256, 128)
    """
    if "avx512f" in flags:
        return 512
    return 256 if "avx" in flags or "avx2" in flags else 128


def _boost_hz(sys_cpu: Path) -> float | None:
    """cpufreq's highest maximum clock over the cores, or None where it gives none."""
    found = []
    for path in sys_cpu.glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq"):
        try:
            found.append(float(path.read_text()) * 1e3)  # kHz
        except (OSError, ValueError):
            continue
    return max(found) if found else None


def _clock_hz(text: str, model: str, sys_cpu: Path) -> float | None:
    """The highest clock reported: cpufreq's maximum, ``cpu MHz`` lines, ``@ x GHz`` in the
    model name (a virtual machine often shows only the base clock)."""
    found = [float(mhz) * 1e6 for mhz in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)]
    found += [float(ghz) * 1e9 for ghz in re.findall(r"@\s*([\d.]+)\s*GHz", model)]
    boost = _boost_hz(sys_cpu)
    found += [boost] if boost else []
    return max(found) if found else None


#: cycles of the shortest L1 load-to-use latency a probed core may have: fewer than any
#: current server or desktop core takes (4 on AMD Zen 2-4 and Arm Neoverse V1/V2, 5 on
#: Intel Golden Cove; 3 on Apple's Firestorm), so a probed spec's latency is a minimum
L1_LEAST_CYCLES = 3
#: the clock a core's latency is taken at where the host gives no maximum clock: above the
#: fastest boost clock shipped (6.2 GHz, Intel Core i9-14900KS, 2024)
FASTEST_CLOCK_HZ = 6.2e9


def l1_latency(host: HostInfo) -> tuple[float, str]:
    """The least time one load from this host's L1 can take, and how it was derived:
    :data:`L1_LEAST_CYCLES` cycles at cpufreq's maximum clock, or at
    :data:`FASTEST_CLOCK_HZ` where the host gives none (a virtual machine's reported clock
    may be its base clock, and a latency at too low a clock is no minimum).

    >>> host = HostInfo("x", cores=1, sockets=1, threads_per_core=1, boost_hz=3.5e9)
    >>> round(l1_latency(host)[0] * 1e9, 3), round(l1_latency(HostInfo("y", 1, 1, 1))[0] * 1e9, 3)
    (0.857, 0.484)
    """
    cycles = L1_LEAST_CYCLES
    if host.boost_hz:
        return cycles / host.boost_hz, (
            f"derived: {cycles} cycles, fewer than the L1 load-to-use latency of any current "
            f"server or desktop core (4-5 on AMD Zen, Arm Neoverse and Intel Golden Cove), at "
            f"{host.boost_hz / 1e9:.3g} GHz, cpufreq's maximum clock on this host")
    return cycles / FASTEST_CLOCK_HZ, (
        f"derived: {cycles} cycles, fewer than the L1 load-to-use latency of any current "
        f"server or desktop core (4-5 on AMD Zen, Arm Neoverse and Intel Golden Cove), at "
        f"{FASTEST_CLOCK_HZ / 1e9:.3g} GHz, above any shipped core's boost clock: this host "
        "gives no maximum clock (a virtual machine's reported clock may be its base clock)")


def derived_peak(host: HostInfo, precision: str) -> float | None:
    """Upper bound on the FLOP rate: cores x clock x 4 x SIMD lanes (two FMA pipes per core,
    an FMA being two FLOPs); None without a clock.

    >>> host = HostInfo("x", cores=2, sockets=1, threads_per_core=1, simd_bits=512,
    ...                 clock_hz=2.6e9)
    >>> derived_peak(host, "fp64") / 1e9  # 2 x 2.6 GHz x 4 x 8 lanes
    166.4
    """
    if not host.clock_hz:
        return None
    lanes = host.simd_bits // (64 if precision == "fp64" else 32)
    return host.cores * host.clock_hz * 4 * lanes


def host_info(cpuinfo: Path = Path("/proc/cpuinfo"), sys_cpu: Path = _SYS_CPU) -> HostInfo:
    """CPU model, core/socket counts and caches of this machine (Linux; sane fallbacks)."""
    text = cpuinfo.read_text() if cpuinfo.exists() else ""
    models = re.findall(r"^model name\s*:\s*(.+)$", text, re.M)
    sockets = len(set(re.findall(r"^physical id\s*:\s*(\d+)$", text, re.M))) or 1
    per_socket = re.findall(r"^cpu cores\s*:\s*(\d+)$", text, re.M)
    logical = len(re.findall(r"^processor\s*:", text, re.M)) or (os.cpu_count() or 1)
    cores = int(per_socket[0]) * sockets if per_socket else logical
    meminfo = Path("/proc/meminfo")
    mem = re.search(r"^MemTotal:\s*(\d+) kB", meminfo.read_text(), re.M) if meminfo.exists() \
        else None
    model = models[0].strip() if models else platform.processor() or "unknown CPU"
    flags = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
    return HostInfo(
        model=model, cores=cores, sockets=sockets, threads_per_core=max(1, logical // cores),
        caches=_caches(sys_cpu), memory_bytes=int(mem.group(1)) * 1024 if mem else None,
        simd_bits=_simd_bits(set(flags.group(1).split()) if flags else set()),
        clock_hz=_clock_hz(text, model, sys_cpu), boost_hz=_boost_hz(sys_cpu),
    )


def measure_triad(array_bytes: int, repetitions: int) -> float:
    """Best triad bandwidth in bytes/s, 32 bytes per fp64 element: the write-allocate read of
    a's line is traffic too (STREAM's 24 would understate the rate and let runs beat it)."""
    n = max(1, array_bytes // 8)
    b = np.full(n, 1.0)
    c = np.full(n, 2.0)
    a = np.empty(n)
    # one part per core; the warm-up call compiles and first-touches the pages of a
    best = best_time(triads()["triad"], a, b, c, 3.0, 1, os.cpu_count() or 1,
                     calls=repetitions)
    if not np.all(a[:: max(1, n // 1000)] == 7.0):
        raise RuntimeError("triad produced wrong values")
    return TRIAD_BYTES * n / best


def measure_gemm(n: int, dtype: str, repetitions: int) -> float:
    """Best n x n matrix-multiply rate in FLOP/s (2·n³ per product)."""
    rng = np.random.default_rng(0)
    x = rng.random((n, n)).astype(dtype)
    y = rng.random((n, n)).astype(dtype)
    best = best_time(x.__matmul__, y, calls=repetitions)  # the warm-up wakes the BLAS threads
    return 2.0 * n**3 / best


def _gemm_size(dtype: str, seconds: float = 0.4) -> int:
    """Matrix order for which one product takes about ``seconds`` here (1024 to 8192):
    large enough for the BLAS to reach its rate on many cores, short on a small machine."""
    rate = measure_gemm(1024, dtype, 1)
    n = (seconds * rate / 2.0) ** (1.0 / 3.0)
    return int(min(8192, max(1024, n // 256 * 256)))


def _triad_size(host: HostInfo, quick: bool) -> int:
    llc = max((c.total_bytes for c in host.caches), default=32 * 2**20)
    size = max(4 * llc, (16 if quick else 64) * 2**20)
    if host.memory_bytes:                      # three arrays in at most a quarter of RAM
        size = min(size, host.memory_bytes // 12)
    return int(size)


#: passes over the memory measurements: each roof keeps its fastest, and passes that
#: disagree flag a busy host
PASSES = 2


def probe(quick: bool = False, progress: Progress = lambda _: None) -> ProbeResult:
    """Measure this machine: triad bandwidth of main memory and of each cache level (in
    :data:`PASSES` passes, each roof the fastest of them), and fp64/fp32 matrix-multiply
    rates."""
    host = host_info()
    progress(f"host: {host.model}, {host.cores} cores, {host.sockets} socket(s)")
    size, reps = _triad_size(host, quick), (3 if quick else 10)
    passes: dict[str, list[float]] = {}
    for k in range(PASSES):
        progress(f"memory: pass {k + 1} of {PASSES}: triad over 3 arrays of "
                 f"{binary(size)}, best of {reps}")
        rate = measure_triad(size, reps)
        passes.setdefault("DRAM", []).append(rate)
        progress(f"memory: {rate / 1e9:.1f} GB/s")
        for level, r in measure_caches(host, quick, progress).items():
            passes.setdefault(f"L{level}", []).append(r)
    bandwidth = max(passes["DRAM"])
    caches = {c.level: max(passes[f"L{c.level}"]) for c in host.caches
              if f"L{c.level}" in passes}
    flops, sizes = {}, {}
    for precision, dtype in (("fp64", "float64"), ("fp32", "float32")):
        n = 512 if quick else _gemm_size(dtype)
        progress(f"compute: {precision} matrix multiply {n} x {n}, best of {2 if quick else 3}")
        flops[precision] = measure_gemm(n, dtype, 2 if quick else 3)
        sizes[precision] = n
        progress(f"compute: {precision} {flops[precision] / 1e9:.1f} GFLOP/s")
    return ProbeResult(host, _dt.date.today().isoformat(), bandwidth, size, reps, flops, sizes,
                       caches, {k: tuple(v) for k, v in passes.items()})


def bytes_text(n: int) -> str:
    """Exact binary-prefixed capacity text.

    >>> bytes_text(32 * 2**20), bytes_text(48 * 1024), bytes_text(1000)
    ('32 MiB', '48 KiB', '1000 B')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _cache_entries(result: ProbeResult, measured: str) -> list[dict[str, Any]]:
    """Each cache level with its capacity and its measured bandwidth. A level measured
    slower than a level behind it (a busy host) takes that level's rate, and says so: a
    roof cannot sit below a slower level's, which a real run could then beat."""
    entries = []
    host, floor = result.host, result.triad_bytes_per_s
    for c in sorted(host.caches, key=lambda c: -c.level):  # slowest first
        name = "L1d" if c.level == 1 else f"L{c.level}"
        source = (f"read from {_SYS_CPU}/cpu*/cache by {measured}: {bytes_text(c.size_bytes)}"
                  f" x {c.instances} instance{'s' if c.instances > 1 else ''}")
        entry: dict[str, Any] = {
            "name": name, "capacity": {"value": bytes_text(c.total_bytes), "source": source},
            "instances": {"value": c.instances, "source": source}}
        if c.level == 1:  # a call waits at least one load: the CPU call floor needs it
            least, how_least = l1_latency(host)
            entry["latency"] = {"value": f"{math.floor(least * 1e12) / 1e3:g} ns",
                                "kind": "minimum", "source": f"{how_least}, by {measured}"}
        rate = result.cache_bytes_per_s.get(c.level)
        if rate is not None:
            how = (f"measured by {measured}: the fastest fp64 triad or read on half its "
                   f"capacity, one core and all cores{_passes(result, f'L{c.level}')}")
            if rate < floor:
                how += (f"; measured {rate / 1e9:.2f} GB/s, below a slower level's, so "
                        "that level's rate")
                rate = floor
            entry["bandwidth"] = {"value": f"{rate / 1e9:.2f} GB/s", "kind": "measured",
                                  "source": how}
            floor = rate
        entries.append(entry)
    return entries[::-1]


def _passes(result: ProbeResult, roof: str) -> str:
    """', fastest of 2 passes (3% apart)' for a roof measured in several passes."""
    rates = result.passes.get(roof, ())
    if len(rates) < 2:
        return ""
    return f", fastest of {len(rates)} passes ({100 * result.spread[roof]:.0f}% apart)"


def _peak_entry(result: ProbeResult, precision: str, by: str) -> dict[str, Any]:
    """The compute roof: the derived peak, or the measured multiply where that is faster
    (a roof cannot sit below a real run)."""
    host, measured, n = result.host, result.gemm_flops[precision], result.gemm_n[precision]
    gemm = (f"numpy matrix multiply {n} x {n} measured {measured / 1e9:.2f} GFLOP/s "
            f"(2n^3 FLOPs, best run) by {by}")
    derived = derived_peak(host, precision)
    if derived is None or derived < measured:
        why = "no clock reported" if derived is None else "above the derived peak"
        return {"value": f"{measured / 1e9:.2f} GFLOP/s", "kind": "measured",
                "source": f"{gemm}; {why}, so the roof is the measured rate"}
    lanes = host.simd_bits // (64 if precision == "fp64" else 32)
    assert host.clock_hz is not None
    return {"value": f"{derived / 1e9:.2f} GFLOP/s", "kind": "peak",
            "source": (f"derived: {host.cores} cores x {host.clock_hz / 1e9:.3g} GHz (the "
                       f"highest clock this host reports) x {4 * lanes} {precision} FLOP/cycle "
                       f"(two {host.simd_bits}-bit FMA pipes per core assumed); {gemm}")}


def spec_yaml(result: ProbeResult, name: str) -> str:
    """The YAML text of a valid spec holding what :func:`probe` measured."""
    import yaml

    from .._version import __version__

    host, by = result.host, f"sparsroof hw probe on {result.date}"
    dram: dict[str, Any] = {"name": "DRAM", "bandwidth": {
        "value": f"{result.triad_bytes_per_s / 1e9:.2f} GB/s",
        "source": (f"measured by {by}: STREAM-style fp64 triad, 3 arrays of "
                   f"{bytes_text(result.triad_array_bytes)}, {TRIAD_BYTES:.0f} bytes per "
                   f"element (the write-allocate read counted), best of "
                   f"{result.triad_repetitions}{_passes(result, 'DRAM')}")}}
    if host.memory_bytes:
        dram["capacity"] = {"value": bytes_text(host.memory_bytes // 1024 * 1024),
                            "source": f"MemTotal of /proc/meminfo, read by {by}"}
    peaks = {p: _peak_entry(result, p, by) for p in result.gemm_flops}
    cpuinfo = f"/proc/cpuinfo, read by {by}"
    doc = {
        "name": name, "device": host.model, "kind": "cpu",
        "peaks": {"simt": peaks},
        "memory": [*_cache_entries(result, by), dram],
        "parallelism": {"cores": {"value": host.cores, "source": cpuinfo},
                        "sockets": {"value": host.sockets, "source": cpuinfo},
                        "threads_per_core": {"value": host.threads_per_core,
                                             "source": cpuinfo}},
        "host": {"hostname": platform.node(), "probed": result.date,
                 "sparsroof": __version__, "numpy": np.__version__},
    }
    header = f"# Hardware spec of {host.model}, written by {by}.\n"
    header += "".join(f"# noisy probe: {line}; probe again on a quiet host\n"
                      for line in result.noisy)
    return header + yaml.safe_dump(doc, sort_keys=False, width=100)
