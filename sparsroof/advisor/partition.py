"""Format advisor: the best storage format per contiguous block of row strips.

After *A Performance Modeling and Optimization Analysis Tool for SpMV on GPUs* (section
4): the rows are cut into strips of S rows, every block of consecutive strips [i, j] gets
a predicted time E[i, j] in each format, and the dynamic program

    T[j] = min over i <= j of T[i - 1] + min_f E_f[i, j],   T[0] = 0

finds the partition with the least total (compiled in C, ``_native.c``; numba where that
was not built). Blocks are at most ``max_block`` strips long (the paper's recurrence is
quadratic in the strip count); the single format for the whole matrix is always a
candidate, so the answer is never worse than the best single format.

Strip size S: on GPUs the paper's S_CSR = SMs x warps per SM (one warp per row, one full
wave of the device). On CPUs: the rows whose CSR data fill the second-largest cache (L2
of all cores), at least 32 rows, a multiple of 32 so that BSR blocks never straddle strips.

Predicted time of a block in format f: ``const_f + max(u_f·bytes + v_f·rows + w_f·slots,
z_f·slots)``, bytes being the format's A bytes (as in :mod:`sparsroof.model.storage`) plus y.
From the SoL model: const = launch overhead, u = 1/bandwidth, v = s_v/bandwidth, z =
2/peak. From a calibration: the fitted a, b_L, c, e, with the format's whole-matrix core
costs (:mod:`sparsroof.host.core_cost`) spread over its slots. x is read by every partition
alike and is charged once for the whole matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from ..arrays import distinct
from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix

__all__ = ["DP_FORMATS", "ROUTES", "CostModel", "Strips", "Block", "Advice", "FormatRow",
           "strip_rows", "strips", "format_rows", "prediction_models", "sol_models",
           "calibrated_models", "native", "partition", "advise"]

#: formats the partition considers (HYB's width rule needs whole-matrix histograms)
DP_FORMATS = ("csr", "csc", "coo", "ell", "dia", "bsr")
_KIND = {"csr": 0, "csc": 1, "coo": 2, "ell": 3, "dia": 4, "bsr": 5}


@dataclass(frozen=True)
class CostModel:
    """t = const + max(u·bytes + v·rows + w·slots, z·slots) for one format."""

    const: float
    u: float
    v: float
    w: float
    z: float


@dataclass(frozen=True, eq=False)
class Strips:
    """Per-strip counts of one matrix (strip s holds rows [s·size, (s+1)·size))."""

    size: int
    rows: np.ndarray
    nnz: np.ndarray
    max_len: np.ndarray
    diag_ptr: np.ndarray  # CSR-like lists of the distinct diagonal offsets of each strip
    diag_off: np.ndarray
    blocks: np.ndarray  # non-empty b x b blocks per strip
    block: int
    cols: int


@dataclass(frozen=True)
class Block:
    first_strip: int
    last_strip: int  # inclusive
    first_row: int
    last_row: int  # exclusive
    storage: str
    seconds: float


@dataclass(frozen=True)
class Advice:
    strip_rows: int
    n_strips: int
    blocks: tuple[Block, ...]
    total_s: float
    best_single: str
    best_single_s: float

    @property
    def gain(self) -> float:
        """Predicted speedup of the partition over the best single format (>= 1)."""
        return self.best_single_s / self.total_s if self.total_s else 1.0


def strip_rows(spec: HwSpec, csr_bytes_per_row: float) -> int:
    """Strip size S (see the module docstring).

    >>> from sparsroof.hardware.library import load_spec
    >>> strip_rows(load_spec("a100"), 100.0)      # 108 SMs x 64 warps
    6912
    """
    par = spec.parallelism
    if spec.kind == "gpu" and "sms" in par and "warps_per_sm" in par:
        return int(par["sms"].value * par["warps_per_sm"].value)
    caches = sorted(lv.capacity.value for lv in spec.memory[:-1] if lv.capacity is not None)
    cache = caches[-2] if len(caches) >= 2 else (caches[-1] if caches else 2**20)
    rows = int(cache / max(csr_bytes_per_row, 1.0))
    return max(32, rows // 32 * 32)


#: the routes of the strip counts and the dynamic program: the C build, or numpy and numba
#: where it was not built
ROUTES = ("native", "numba")
#: the version of the passes this module expects of the C build (a stale one is not used)
_NATIVE_VERSION = 2


@lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The ahead-of-time build of the advisor's passes, or None where missing or stale."""
    try:
        from . import _native  # type: ignore[attr-defined]
    except ImportError:
        return None
    module: ModuleType = _native
    return module if getattr(module, "KERNEL_VERSION", None) == _NATIVE_VERSION else None


def strips(m: Matrix, size: int, block: int = 4, route: str | None = None) -> Strips:
    """Per-strip rows, entries, longest row, distinct diagonals (in no set order within a
    strip) and b x b blocks, by the C build where there is one (``route`` "numba" takes
    the numpy route of an installation without it)."""
    k = native()
    if (route or ("native" if k is not None else "numba")) == "numba":
        return _numpy_strips(m, size, block)
    if k is None:
        raise RuntimeError("the format advisor's passes were not built in C here")
    n = max(1, math.ceil(m.rows / size))
    starts = np.arange(n, dtype=np.int64) * size
    nnz, max_len, blocks = (np.zeros(n, np.int64) for _ in range(3))
    diag_ptr = np.zeros(n + 1, np.int64)
    diag_off = np.empty(m.stored_entries, np.int64)  # pages never written stay unallocated
    same = m.row.dtype == m.col.dtype and m.row.dtype in (np.int32, np.int64)
    itype = m.row.dtype if same else np.dtype(np.int64)
    k.strips(np.ascontiguousarray(m.row, itype), np.ascontiguousarray(m.col, itype), m.rows,
             m.cols, size, block, nnz, max_len, diag_ptr, diag_off, blocks)
    return Strips(size, np.minimum(starts + size, m.rows) - starts, nnz, max_len, diag_ptr,
                  diag_off[: diag_ptr[-1]], blocks, block, m.cols)


def _numpy_strips(m: Matrix, size: int, block: int) -> Strips:
    """:func:`strips` by whole-array passes (two sorts of 64-bit keys of every entry)."""
    n = max(1, math.ceil(m.rows / size))
    row, col = m.row.astype(np.int64), m.col.astype(np.int64)  # keys below overflow int32
    lengths = np.bincount(row, minlength=m.rows) if m.rows else np.zeros(0, np.int64)
    starts = np.arange(n) * size
    rows = np.minimum(starts + size, m.rows) - starts
    nnz = np.add.reduceat(lengths, starts) if m.rows else np.zeros(n, np.int64)
    max_len = np.maximum.reduceat(lengths, starts) if m.rows else np.zeros(n, np.int64)
    strip = row // size
    span = m.rows + m.cols
    key = distinct(strip * span + (col - row + m.rows))
    key_strip = key // span
    diag_ptr = np.searchsorted(key_strip, np.arange(n + 1))
    diag_off = (key % span - m.rows).astype(np.int64)
    bkey = distinct((row // block) * (m.cols // block + 1) + col // block)
    bstrip = (bkey // (m.cols // block + 1)) * block // size
    blocks = np.bincount(bstrip, minlength=n)
    return Strips(size, rows.astype(np.int64), nnz.astype(np.int64),
                  max_len.astype(np.int64), diag_ptr.astype(np.int64), diag_off,
                  blocks.astype(np.int64), block, m.cols)


def sol_models(spec: HwSpec, bandwidth: float, precision: str, launches: int
               ) -> dict[str, CostModel]:
    """Cost models from the roofline: memory term bytes/β (the block's A and its rows of
    y, which the block cost already counts, so no per-row term), compute term 2·slots/P.

    >>> from sparsroof.hardware.library import load_spec
    >>> m = sol_models(load_spec("a100"), 1e12, "fp64", 1)["csr"]
    >>> m.u, m.v, m.w
    (1e-12, 0.0, 0.0)
    """
    peak = spec.peak("simt", precision).value
    launch = launches * spec.launch_overhead.value if spec.launch_overhead else 0.0
    return {f: CostModel(launch, 1 / bandwidth, 0.0, 0.0, 2 / peak) for f in DP_FORMATS}


def calibrated_models(calibration: Any, level: str, block: int,
                      core: dict[str, float] | None = None) -> dict[str, CostModel]:
    """Cost models from a calibration's fits at memory level ``level``; ``core`` adds
    seconds per slot to a format (its whole-matrix core costs, spread over its slots)."""
    out = {}
    for f in DP_FORMATS:
        name = f"bsr{block}" if f == "bsr" else f
        fit = calibration.fits.get(name)
        if fit is not None:
            c = fit.coefficients
            out[f] = CostModel(c["constant"], c.get(f"bytes@{level}", 0.0), c["rows"],
                               c["slots"] + (core or {}).get(name, 0.0), 0.0)
    return out


def _params(models: dict[str, CostModel]) -> tuple[np.ndarray, np.ndarray]:
    kinds = np.array([_KIND[f] for f in models], dtype=np.int64)
    coef = np.array([[c.const, c.u, c.v, c.w, c.z] for c in models.values()], dtype=float)
    return kinds, coef


def _program(st: Strips, kinds: np.ndarray, coef: np.ndarray, s_v: int, s_i: int,
             max_block: int, route: str | None) -> tuple[np.ndarray, ...]:
    """(best, cut, fmt, cost) of the dynamic program (see the module docstring), by the C
    build where there is one (``route`` forces one of :data:`ROUTES`)."""
    k = native()
    if (route or ("native" if k is not None else "numba")) == "numba":
        from ._dp import dp

        return tuple(dp(st.rows, st.nnz, st.max_len, st.diag_ptr, st.diag_off, st.blocks,
                        st.block, st.cols, kinds, coef, s_v, s_i, max_block))
    if k is None:
        raise RuntimeError("the format advisor's dynamic program was not built in C here")
    n = st.rows.size
    best, cost = np.empty(n + 1), np.empty(n + 1)
    cut, fmt = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    k.dp(*(np.ascontiguousarray(a, np.int64) for a in (st.rows, st.nnz, st.max_len,
                                                       st.diag_ptr, st.diag_off, st.blocks)),
         st.block, st.cols, np.ascontiguousarray(kinds, np.int64),
         np.ascontiguousarray(coef, np.float64), s_v, s_i, max_block, best, cut, fmt, cost)
    return best, cut, fmt, cost


def partition(st: Strips, models: dict[str, CostModel], s_v: int, s_i: int,
              max_block: int = 64, route: str | None = None
              ) -> tuple[list[tuple[int, int, str, float]], float]:
    """Optimal partition into blocks of at most ``max_block`` strips: ([(first, last,
    format, seconds)], total seconds)."""
    names = list(models)
    kinds, coef = _params(models)
    n = st.rows.size
    best, cut, fmt, cost = _program(st, kinds, coef, s_v, s_i, max(1, max_block), route)
    out = []
    j = n
    while j > 0:
        i = int(cut[j])
        out.append((i, j - 1, names[int(fmt[j])], float(cost[j])))
        j = i
    return out[::-1], float(best[n])


def advise(m: Matrix, spec: HwSpec, models: dict[str, CostModel], single: dict[str, float],
           *, size: int, s_v: int = 8, s_i: int = 4, block: int = 4,
           max_block: int = 64, x_seconds: float = 0.0) -> Advice:
    """Partition ``m`` and compare it with the best single format (``single``: seconds
    per format for the whole matrix, x included). ``x_seconds`` is added to the partition."""
    st = strips(m, size, block)
    parts, total = partition(st, models, s_v, s_i, max_block)
    total += x_seconds
    best_single = min(single, key=lambda k: single[k])
    if single[best_single] <= total:
        n = st.rows.size
        parts, total = [(0, n - 1, best_single, single[best_single])], single[best_single]
    blocks = tuple(Block(i, j, i * size, min((j + 1) * size, m.rows), f, t)
                   for i, j, f, t in parts)
    return Advice(size, st.rows.size, blocks, total, best_single, single[best_single])


@dataclass(frozen=True)
class FormatRow:
    """One storage format of the whole matrix: bytes, work, predicted times."""

    storage: str
    bytes_total: float
    flops_useful: float
    flops_executed: float
    sol_s: float
    calibrated_s: float | None


def format_rows(s: Any, spec: HwSpec, calibrated: dict[str, float] | None = None,
                dtype: str = "fp64") -> list[FormatRow]:
    """Every storage format of SpMV for structure ``s``, fastest first: the calibrated
    ones (``calibrated``: seconds per storage) by calibrated time, then the rest by SoL."""
    from ..model.bound import bound
    from ..model.traffic import STORAGES, traffic

    rows = []
    for storage in STORAGES:
        if storage in ("nm", "dense"):
            continue
        t = traffic(s, kernel="spmv", width=1, storage=storage, model="compulsory",
                    dtype=dtype, index="int32")
        if t is None:
            continue
        launches = 1 if spec.kind == "gpu" and spec.launch_overhead else 0
        b = bound(t, spec, unit="simt", precision=dtype, launches=launches,
                  footprint=t.bytes_total)
        rows.append(FormatRow(storage, t.bytes_total, t.flops_useful, t.flops_executed,
                              b.sol_s, (calibrated or {}).get(storage)))
    return sorted(rows, key=lambda r: (r.calibrated_s is None, r.calibrated_s or r.sol_s))


def prediction_models(spec: HwSpec, s: Any, rows: list[FormatRow], calibration: Any = None
                      ) -> tuple[int, dict[str, CostModel], dict[str, float], float]:
    """(strip size, per-format block cost models, whole-matrix seconds per format, seconds
    of reading x once) from the SoL model, or from ``calibration`` when given."""
    from ..model.bound import memory_level

    csr = next(r for r in rows if r.storage == "csr")
    size = strip_rows(spec, csr.bytes_total / max(s.rows, 1))
    x_bytes = s.nonempty_cols * 8
    if calibration is not None:
        # the core's costs (x misses, mispredicted exits, long chains) belong to the whole
        # matrix: each block of a partition is charged its format's, per slot
        core = {}
        for r in rows:
            plain = calibration.predict(r.storage, s.rows, r.flops_executed / 2, r.bytes_total)
            if r.calibrated_s is not None and plain is not None and r.flops_executed:
                core[r.storage] = (r.calibrated_s - plain) / (r.flops_executed / 2)
        models = calibrated_models(calibration, calibration.level_of(csr.bytes_total), 4, core)
        single = {r.storage: r.calibrated_s for r in rows if r.calibrated_s is not None}
        return size, models, single, models["csr"].u * x_bytes if "csr" in models else 0.0
    level, _ = memory_level(spec, csr.bytes_total)
    bandwidth = (level.bandwidth or spec.dram.bandwidth).value
    launches = 1 if spec.kind == "gpu" and spec.launch_overhead else 0
    models = sol_models(spec, bandwidth, "fp64", launches)
    return size, models, {r.storage: r.sol_s for r in rows}, x_bytes / bandwidth
