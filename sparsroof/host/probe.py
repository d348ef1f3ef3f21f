"""Measure this machine and write a hardware spec for it (``sparsroof hw probe``).

- **Memory bandwidth**: a STREAM-style triad a[i] = b[i] + s·c[i] over fp64 arrays each at
  least four times the total last-level cache (STREAM's own sizing rule), compiled with
  numba and run on all cores. Bytes are counted as STREAM counts them: 3 × 8 bytes per
  element (two reads, one write; the write-allocate read is not counted). The best of
  several repetitions is kept, as STREAM does.
- **Compute peak**: numpy matrix multiply (the installed BLAS) of n × n fp64 and fp32
  matrices, 2·n³ FLOPs each, best of several repetitions. This is the attainable dense
  rate, a lower bound on the theoretical peak.
- **Host facts**: CPU model, cores, sockets and threads per core from /proc/cpuinfo; cache
  sizes and how many instances of each level from /sys/devices/system/cpu/cpu*/cache.

The result is the YAML text of a spec that passes validation, each figure's source saying
how and when it was measured.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .timing import best_time, triads

__all__ = ["CacheLevel", "HostInfo", "ProbeResult", "host_info", "probe", "spec_yaml"]

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


@dataclass(frozen=True)
class ProbeResult:
    host: HostInfo
    date: str
    triad_bytes_per_s: float
    triad_array_bytes: int
    triad_repetitions: int
    gemm_flops: dict[str, float] = field(default_factory=dict)   # precision -> FLOP/s
    gemm_n: dict[str, int] = field(default_factory=dict)


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
    return HostInfo(
        model=(models[0].strip() if models else platform.processor() or "unknown CPU"),
        cores=cores, sockets=sockets, threads_per_core=max(1, logical // cores),
        caches=_caches(sys_cpu), memory_bytes=int(mem.group(1)) * 1024 if mem else None,
    )


def measure_triad(array_bytes: int, repetitions: int) -> float:
    """Best triad bandwidth in bytes/s, STREAM counting (24 bytes per fp64 element)."""
    n = max(1, array_bytes // 8)
    b = np.full(n, 1.0)
    c = np.full(n, 2.0)
    a = np.empty(n)
    # one part per core; the warm-up call compiles and first-touches the pages of a
    best = best_time(triads()["triad"], a, b, c, 3.0, 1, os.cpu_count() or 1,
                     calls=repetitions)
    if not np.all(a[:: max(1, n // 1000)] == 7.0):
        raise RuntimeError("triad produced wrong values")
    return 24.0 * n / best


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


def probe(quick: bool = False, progress: Progress = lambda _: None) -> ProbeResult:
    """Measure this machine: triad bandwidth and fp64/fp32 matrix-multiply rates."""
    host = host_info()
    progress(f"host: {host.model}, {host.cores} cores, {host.sockets} socket(s)")
    size, reps = _triad_size(host, quick), (3 if quick else 10)
    progress(f"memory: triad over 3 arrays of {size / 2**20:.0f} MiB, best of {reps}")
    bandwidth = measure_triad(size, reps)
    progress(f"memory: {bandwidth / 1e9:.1f} GB/s")
    flops, sizes = {}, {}
    for precision, dtype in (("fp64", "float64"), ("fp32", "float32")):
        n = 512 if quick else _gemm_size(dtype)
        progress(f"compute: {precision} matrix multiply {n} x {n}, best of {2 if quick else 3}")
        flops[precision] = measure_gemm(n, dtype, 2 if quick else 3)
        sizes[precision] = n
        progress(f"compute: {precision} {flops[precision] / 1e9:.1f} GFLOP/s")
    return ProbeResult(host, _dt.date.today().isoformat(), bandwidth, size, reps, flops, sizes)


def _bytes_text(n: int) -> str:
    """Exact binary-prefixed capacity text.

    >>> _bytes_text(32 * 2**20), _bytes_text(48 * 1024), _bytes_text(1000)
    ('32 MiB', '48 KiB', '1000 B')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _cache_entries(host: HostInfo, measured: str) -> list[dict[str, Any]]:
    entries = []
    for c in host.caches:
        name = "L1d" if c.level == 1 else f"L{c.level}"
        source = (f"read from {_SYS_CPU}/cpu*/cache by {measured}: {_bytes_text(c.size_bytes)}"
                  f" x {c.instances} instance{'s' if c.instances > 1 else ''}")
        entries.append({"name": name,
                        "capacity": {"value": _bytes_text(c.total_bytes), "source": source},
                        "instances": {"value": c.instances, "source": source}})
    return entries


def spec_yaml(result: ProbeResult, name: str) -> str:
    """The YAML text of a valid spec holding what :func:`probe` measured."""
    import yaml

    from .._version import __version__

    host, by = result.host, f"sparsroof hw probe on {result.date}"
    dram: dict[str, Any] = {"name": "DRAM", "bandwidth": {
        "value": f"{result.triad_bytes_per_s / 1e9:.2f} GB/s",
        "source": (f"measured by {by}: STREAM-style fp64 triad, 3 arrays of "
                   f"{_bytes_text(result.triad_array_bytes)}, 24 bytes per element, best of "
                   f"{result.triad_repetitions}")}}
    if host.memory_bytes:
        dram["capacity"] = {"value": _bytes_text(host.memory_bytes // 1024 * 1024),
                            "source": f"MemTotal of /proc/meminfo, read by {by}"}
    peaks = {p: {"value": f"{f / 1e9:.2f} GFLOP/s",
                 "source": (f"measured by {by}: numpy matrix multiply {result.gemm_n[p]} x "
                            f"{result.gemm_n[p]}, 2n^3 FLOPs, best run (attainable, not the "
                            "theoretical peak)")}
             for p, f in result.gemm_flops.items()}
    cpuinfo = f"/proc/cpuinfo, read by {by}"
    doc = {
        "name": name, "device": host.model, "kind": "cpu",
        "peaks": {"simt": peaks},
        "memory": [*_cache_entries(host, by), dram],
        "parallelism": {"cores": {"value": host.cores, "source": cpuinfo},
                        "sockets": {"value": host.sockets, "source": cpuinfo},
                        "threads_per_core": {"value": host.threads_per_core,
                                             "source": cpuinfo}},
        "host": {"hostname": platform.node(), "probed": result.date,
                 "sparsroof": __version__, "numpy": np.__version__},
    }
    header = f"# Hardware spec of {host.model}, written by {by}.\n"
    return header + yaml.safe_dump(doc, sort_keys=False, width=100)
