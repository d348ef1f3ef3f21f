"""How much memory a matrix needs, and how much this process may really use.

A declared size is checked before anything is allocated: a two-line file that declares a
billion rows must be refused, not answered with a 7 GiB array. The memory this process
may use is the smallest of the machine's available memory (``MemAvailable``), the
cgroup limit it runs under (``memory.max`` less ``memory.current``; containers, batch
systems) and its own address-space limit (``ulimit -v``, less what is mapped already).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from ..units import binary, counted

__all__ = ["INDEX32_MAX", "estimate_memory", "memory_headroom", "check_fits", "check_load"]

INDEX32_MAX = 2**31 - 1

#: bytes per row and per column that loading and analysing a matrix hold at once (row
#: and column length counts as int64, the band and diagonal masks, their histograms):
#: a 10^7 x 1 or 1 x 10^7 matrix with one entry peaks about 23 bytes per line above a
#: 2 x 2 one (``/usr/bin/time -f %M sparsroof analyze ... --storage all --model all``)
_PER_LINE = 32


#: a shape whose rows and columns alone need more than this many bytes, and more than
#: :data:`_SHAPE_OVER_ENTRIES` times what its entries need, is refused unless
#: ``max_memory`` (``--max-memory``) says otherwise: the memory and the time of an
#: analysis follow the rows and columns, so a few bytes declaring 10^8 x 10^8 with one
#: entry would otherwise cost gigabytes on whichever machine has them
_SHAPE_BYTES = 1 << 30
_SHAPE_OVER_ENTRIES = 16


def _entry_bytes(rows: int, cols: int, entries: int, value_bytes: int = 8) -> int:
    index_bytes = 4 if max(rows, cols) <= INDEX32_MAX else 8
    return 2 * entries * (2 * index_bytes + value_bytes)


def _shape_bytes(rows: int, cols: int) -> int:
    return _PER_LINE * (rows + 1 + cols + 1)


def estimate_memory(rows: int, cols: int, entries: int, value_bytes: int = 8) -> int:
    """Bytes a load and analysis of a matrix with ``entries`` stored entries (after
    symmetric expansion) need at their peak.

    Coordinates are two index arrays and one value array (``value_bytes`` a value:
    float64, or 16 for complex128); the reader briefly holds a second copy of them. Per
    row and per column the analysis keeps length counts and masks, so a huge declared
    shape costs memory even with a single entry.

    >>> estimate_memory(1000, 1000, 5000)    # 2 * 5000 * (4 + 4 + 8) + 32 * 2002
    224064
    >>> estimate_memory(1000, 1000, 5000, value_bytes=16)    # complex values
    304064
    """
    return _entry_bytes(rows, cols, entries, value_bytes) + _shape_bytes(rows, cols)


def _first_number(path: Path, prefix: str = "") -> int | None:
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(prefix):
            words = line[len(prefix):].split()
            if words and words[0].isdigit():
                return int(words[0]) * (1024 if line.endswith("kB") else 1)
    return None


def _cgroup_headroom() -> int | None:
    """Bytes left under this process's cgroup memory limit (v2, else v1), None if none."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            base = Path("/sys/fs/cgroup") / parts[2].lstrip("/")
            limit, used = base / "memory.max", base / "memory.current"
        elif "memory" in parts[1].split(","):
            base = Path("/sys/fs/cgroup/memory") / parts[2].lstrip("/")
            limit, used = base / "memory.limit_in_bytes", base / "memory.usage_in_bytes"
        else:
            continue
        cap, current = _first_number(limit), _first_number(used)
        if cap is not None and cap < 2**60:
            return max(cap - (current or 0), 0)
    return None


def _address_space_headroom() -> int | None:
    """Bytes left under ``ulimit -v`` (RLIMIT_AS), None if unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = _first_number(Path("/proc/self/status"), "VmSize:") or 0
    return max(soft - mapped, 0)


def _available() -> int | None:
    found = _first_number(Path("/proc/meminfo"), "MemAvailable:")
    if found is not None:
        return found
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return None


def memory_headroom() -> tuple[int, str]:
    """Bytes this process may still allocate, and the name of the limit that sets it.

    >>> have, why = memory_headroom()
    >>> have >= 0 and why in ("available memory", "cgroup memory limit",
    ...                       "address-space limit (ulimit -v)", "no known limit")
    True
    """
    limits = [(n, why) for n, why in (
        (_available(), "available memory"),
        (_cgroup_headroom(), "cgroup memory limit"),
        (_address_space_headroom(), "address-space limit (ulimit -v)"),
    ) if n is not None]
    return min(limits) if limits else (2**62, "no known limit")


def check_fits(need: float, max_memory: float | None = None) -> str | None:
    """None when ``need`` bytes fit, else the reason (for the caller's error message).

    ``max_memory`` overrides the limits this process finds for itself.

    >>> check_fits(10, max_memory=100) is None
    True
    >>> check_fits(2 * 2**30, max_memory=2**30)
    'needs about 2 GiB of memory, {opt:max_memory} allows 1 GiB'
    """
    if max_memory is not None:
        have, why = int(max_memory), "{opt:max_memory} allows"
    else:
        have, limit = memory_headroom()
        why = f"the {limit} leaves"
    if need <= have:
        return None
    return f"needs about {binary(need)} of memory, {why} {binary(have)}"


def check_shape(rows: int, cols: int, entries: int) -> str | None:
    """None when the rows and columns of a matrix already in memory may be measured, else
    the reason: what a measurement keeps per row and per column must fit the memory this
    process has (its entries are held already; a file's shape is checked more strictly,
    as a few bytes of one may declare any shape).

    >>> check_shape(1000, 1000, 5000) is None
    True
    >>> print(check_shape(1, 2**40, 0)[:67])
    its 1 x 1,099,511,627,776 shape, with 0 entries, needs about 32 TiB
    """
    shape = _shape_bytes(rows, cols)
    problem = check_fits(shape)
    if problem is None:
        return None
    return f"its {rows:,} x {cols:,} shape, with {counted(entries, 'entry', 'entries')}, {problem}"


def check_load(rows: int, cols: int, entries: int, max_memory: float | None = None,
               value_bytes: int = 8) -> str | None:
    """None when a matrix of this shape and entry count may be loaded, else the reason.

    Besides the memory this process has (:func:`check_fits`, whose limit is named first),
    a hypersparse shape, whose rows and columns need far more than its entries, is refused
    whatever the machine has, unless ``max_memory`` is given: what a file costs should
    follow its content.

    >>> print(check_load(10**8, 10**8, 1)[:59])
    its 100,000,000 x 100,000,000 shape needs about 5.96 GiB of
    >>> check_load(10**8, 10**8, 1, max_memory=1e10) is None
    True
    """
    problem = check_fits(estimate_memory(rows, cols, entries, value_bytes), max_memory)
    shape = _shape_bytes(rows, cols)
    if problem is None and max_memory is None and shape > _SHAPE_BYTES \
            and shape > _SHAPE_OVER_ENTRIES * _entry_bytes(rows, cols, entries):
        return (f"its {rows:,} x {cols:,} shape needs about {binary(shape)} of memory "
                f"for {counted(entries, 'entry', 'entries')} ({{opt:max_memory}} allows it)")
    return problem
