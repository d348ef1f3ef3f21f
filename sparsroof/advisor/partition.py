"""Format advisor: the best storage format per contiguous block of row strips.

After *A Performance Modeling and Optimization Analysis Tool for SpMV on GPUs* (section
4): the rows are cut into strips of S rows, every block of consecutive strips [i, j] gets
a predicted time E[i, j] in each format, and the dynamic program

    T[j] = min over i <= j of T[i - 1] + min_f E_f[i, j],   T[0] = 0

finds the partition with the least total. The per-strip counts and the program are
compiled ahead of time in C (``_native.c``); where that was not built, numpy counts and
numba runs the same program (``_dp.py``), to the same partition and the same seconds.
Blocks are at most ``max_block`` strips long (the paper's recurrence is quadratic in the
strip count); the single format for the whole
matrix is always a candidate, so the answer is never worse than the best single format.

Strip size S: on GPUs the paper's S_CSR = SMs x warps per SM (one warp per row, one full
wave of the device). On CPUs: the rows whose CSR data fill the second-largest cache (L2
of all cores), at least 32 rows, a multiple of 32 so that BSR blocks never straddle strips.

Strips per format: a strip is what the device runs in one full wave, so its size follows
the kernel's granularity. The paper's kernels for ELL (and Bell & Garland's for DIA, and
HYB's ELL part) run one thread per row, so their strip is S_ELL = SMs x threads per SM
rows (32 times S_CSR); COO runs one thread per entry, so its strip, S_COO, counts entries,
not rows. The paper models a format only on matrices of whole strips (its benchmark
matrices have R = S·I rows) and cuts the rows on the finest grid (S_CSR). sparsroof keeps
that grid (the gcd of the row strips) and lets a block take a format only when it spans a
whole number of that format's strips, or when it is the block that ends the matrix (which
holds the matrix's partial last strip, as the whole matrix does: I = ceil(N_R / S)). It
does not charge a partial strip as a whole one: the block costs below are bounds on what a
kernel can do, and a part-filled wave can still stream its bytes. COO's strips of entries
cannot be aligned with cuts between rows, and COO's time depends on its entries only, so
COO (like CSR, CSC and BSR) takes any block of the grid. On CPUs, and on GPUs whose spec
gives no threads per SM, every format has the one strip size.

Predicted time of a block in format f: ``const_f + max(u_f·bytes + v_f·rows + w_f·slots,
z_f·slots)``, bytes being the format's A bytes (as in :mod:`sparsroof.model.storage`) plus y.
HYB's ELL width is chosen per block, by the rule the paper takes for whole matrices
(:func:`sparsroof.model.storage.hyb_width`), from the block's histogram of row lengths.
From the SoL model: const = launch overhead, u = 1/bandwidth, v = s_v/bandwidth, z =
2/peak. From a calibration: the fitted a, b_L, c, e, with the format's whole-matrix core
costs (:mod:`sparsroof.host.core_cost`) spread over its slots. x is read once for the whole
matrix; each block is charged its rows' share of x's bytes at its own format's u, so that
a partition of one block costs what the whole matrix does in that format (a calibration
fits a different u per format, and charging all of x at one format's rate would favour
the others).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from ..arrays import compiled, distinct
from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix

__all__ = ["DP_FORMATS", "THREAD_PER_ROW", "ROUTES", "CostModel", "Strips", "Block", "Advice",
           "FormatRow", "strip_rows", "strip_sizes", "native", "strips", "format_rows",
           "prediction_models", "sol_models", "calibrated_models", "partition", "advise"]

#: formats the partition considers (HYB's ELL width is chosen per block)
DP_FORMATS = ("csr", "csc", "coo", "ell", "hyb", "dia", "bsr")
#: formats whose kernels run one thread per row: their strips are SMs x threads per SM rows
THREAD_PER_ROW = ("ell", "hyb", "dia")
_KIND = {"csr": 0, "csc": 1, "coo": 2, "ell": 3, "dia": 4, "bsr": 5, "hyb": 6}


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
    diag_ptr: np.ndarray  # CSR-like lists of each strip's diagonals: the histogram of their
    diag_gap: np.ndarray  # gaps (strip s minus the last strip before s holding the same
    diag_cnt: np.ndarray  # diagonal, s + 1 where none does), ascending, and the counts
    blocks: np.ndarray  # non-empty b x b blocks per strip
    block: int
    cols: int
    len_ptr: np.ndarray  # CSR-like lists of each strip's row lengths and how many rows
    len_val: np.ndarray  # have each (HYB's width rule needs a block's row-length
    len_cnt: np.ndarray  # histogram)

    def diagonals(self) -> np.ndarray:
        """Distinct diagonals of each strip."""
        counts = np.zeros(self.rows.size, np.int64)
        owner = np.repeat(np.arange(self.rows.size), np.diff(self.diag_ptr))
        np.add.at(counts, owner, self.diag_cnt)
        return counts


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
    strip_rows: int  # the grid: blocks start and end on multiples of it
    n_strips: int
    blocks: tuple[Block, ...]
    total_s: float
    best_single: str
    best_single_s: float
    format_strip_rows: dict[str, int] = field(default_factory=dict)  # a block in format f
    # spans a whole number of strips of format_strip_rows[f] rows, unless it ends the matrix

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


def strip_sizes(spec: HwSpec, csr_bytes_per_row: float) -> dict[str, int]:
    """Rows per strip of each format of the partition (see the module docstring): S_ELL =
    SMs x threads per SM for the formats of :data:`THREAD_PER_ROW` on a GPU whose spec gives
    threads per SM, :func:`strip_rows` for the others and everywhere else.

    >>> from sparsroof.hardware.library import load_spec
    >>> sizes = strip_sizes(load_spec("a100"), 100.0)   # 108 SMs x 2,048 threads
    >>> sizes["csr"], sizes["coo"], sizes["ell"], sizes["hyb"]
    (6912, 6912, 221184, 221184)
    """
    size = strip_rows(spec, csr_bytes_per_row)
    par = spec.parallelism
    thread = size
    if spec.kind == "gpu" and all(k in par for k in ("sms", "warps_per_sm", "threads_per_sm")):
        thread = int(par["sms"].value * par["threads_per_sm"].value)
    return {f: thread if f in THREAD_PER_ROW else size for f in DP_FORMATS}


#: the routes of the per-strip counts and the dynamic program: "compiled" is the C build
#: where there is one, else numpy for the counts and numba for the program
ROUTES = ("compiled", "native", "numpy")
#: the version of the passes this module expects of the C build (a stale one is not used)
_NATIVE_VERSION = 1


@lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The ahead-of-time build of the advisor's passes, or None where missing or stale."""
    return compiled(f"{__package__}._native", _NATIVE_VERSION)


def _compiled(route: str) -> ModuleType | None:
    """The C build for ``route`` (None: the numpy and numba route)."""
    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r} (expected one of {', '.join(ROUTES)})")
    k = native() if route != "numpy" else None
    if route == "native" and k is None:
        raise RuntimeError("the format advisor's passes were not built in C here")
    return k


def strips(m: Matrix, size: int, block: int = 4, route: str = "compiled") -> Strips:
    """Per-strip rows, entries, longest row, b x b blocks, and the histograms of the gaps
    of its diagonals and of its row lengths (see :class:`Strips`), by the C build or numpy
    (``route``, one of :data:`ROUTES`)."""
    n = max(1, math.ceil(m.rows / size))
    starts = np.arange(n, dtype=np.int64) * size
    rows = np.minimum(starts + size, m.rows) - starts
    k = _compiled(route)
    if k is not None and route == "compiled" and n >= 2**31 - 1:
        k = None  # the C pass stamps strips in 32 bits
    if k is not None:
        row, col = m.row, m.col
        if not (row.dtype == col.dtype and row.dtype in (np.int32, np.int64)):
            row, col = row.astype(np.int64), col.astype(np.int64)
        nnz, max_len, blocks = (np.zeros(n, np.int64) for _ in range(3))
        diag_ptr, len_ptr = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
        lists = k.strips(np.ascontiguousarray(row), np.ascontiguousarray(col), m.rows, m.cols,
                         size, block, nnz, max_len, blocks, diag_ptr, len_ptr)
        gap, gap_cnt, length, len_cnt = (np.frombuffer(b, np.int64) for b in lists)
        return Strips(size, rows, nnz, max_len, diag_ptr, gap, gap_cnt, blocks, block,
                      m.cols, len_ptr, length, len_cnt)
    row, col = m.row.astype(np.int64), m.col.astype(np.int64)  # keys below overflow int32
    lengths = np.bincount(row, minlength=m.rows) if m.rows else np.zeros(0, np.int64)
    nnz = np.add.reduceat(lengths, starts) if m.rows else np.zeros(n, np.int64)
    max_len = np.maximum.reduceat(lengths, starts) if m.rows else np.zeros(n, np.int64)
    strip = row // size
    # distinct (diagonal, strip) pairs, by diagonal then strip: a diagonal's gap in a strip
    # is the distance to the strip before that holds it, s + 1 in the first one
    key = distinct((col - row + m.rows) * n + strip)
    diag, where = key // n, key % n
    again = np.zeros(key.size, np.bool_)
    again[1:] = diag[1:] == diag[:-1]
    gap = where + 1
    gap[1:][again[1:]] = (where[1:] - where[:-1])[again[1:]]
    gkey, gcnt = np.unique(where * (n + 2) + gap, return_counts=True)
    diag_ptr = np.searchsorted(gkey // (n + 2), np.arange(n + 1))
    bkey = distinct((row // block) * (m.cols // block + 1) + col // block)
    bstrip = (bkey // (m.cols // block + 1)) * block // size
    blocks = np.bincount(bstrip, minlength=n)
    top = int(lengths.max()) + 1 if lengths.size else 1
    lkey, lcnt = np.unique(np.arange(m.rows) // size * top + lengths, return_counts=True)
    len_ptr = np.searchsorted(lkey // top, np.arange(n + 1))
    return Strips(size, rows.astype(np.int64), nnz.astype(np.int64),
                  max_len.astype(np.int64), diag_ptr.astype(np.int64),
                  (gkey % (n + 2)).astype(np.int64), gcnt.astype(np.int64),
                  blocks.astype(np.int64), block, m.cols, len_ptr.astype(np.int64),
                  (lkey % top).astype(np.int64), lcnt.astype(np.int64))


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


def _multiples(st: Strips, names: list[str], strip_of: Mapping[str, int] | None
               ) -> np.ndarray:
    """Each format's strip in strips of ``st`` (1 where ``strip_of`` names none)."""
    out = []
    for f in names:
        rows = (strip_of or {}).get(f, st.size)
        if rows < st.size or rows % st.size:
            raise ValueError(f"the strip of {f} ({rows} rows) is not a whole number of the "
                             f"grid's strips ({st.size} rows)")
        out.append(rows // st.size)
    return np.array(out, dtype=np.int64)


def partition(st: Strips, models: dict[str, CostModel], s_v: int, s_i: int,
              max_block: int = 64, x_per_row: float = 0.0,
              strip_of: Mapping[str, int] | None = None, route: str = "compiled"
              ) -> tuple[list[tuple[int, int, str, float]], float]:
    """Optimal partition into blocks of at most ``max_block`` strips: ([(first, last,
    format, seconds)], total seconds); each block reads ``x_per_row`` bytes of x per row.
    A block takes format f only if it spans a whole number of strips of ``strip_of[f]``
    rows (a multiple of ``st.size``; by default ``st.size``) or ends the matrix. ``route``:
    the C build, or numba (one of :data:`ROUTES`; "numpy" takes numba here)."""
    names = list(models)
    kinds, coef = _params(models)
    mult = _multiples(st, names, strip_of)
    n = st.rows.size
    args = (st.rows, st.nnz, st.max_len, st.diag_ptr, st.diag_gap, st.diag_cnt, st.blocks,
            st.len_ptr, st.len_val, st.len_cnt, kinds, coef, mult)
    k = _compiled(route)
    if k is None:
        from ._dp import dp

        best, cut, fmt, cost = dp(*args, st.block, st.cols, s_v, s_i, max(1, max_block),
                                  float(x_per_row))
    else:
        best, cost = np.empty(n + 1), np.empty(n + 1)
        cut, fmt = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
        k.dp(*(np.ascontiguousarray(a, np.float64 if a is coef else np.int64) for a in args),
             st.block, st.cols, s_v, s_i, max(1, max_block), float(x_per_row),
             best, cut, fmt, cost)
    out = []
    j = n
    while j > 0:
        i = int(cut[j])
        out.append((i, j - 1, names[int(fmt[j])], float(cost[j])))
        j = i
    return out[::-1], float(best[n])


def advise(m: Matrix, spec: HwSpec, models: dict[str, CostModel], single: dict[str, float],
           *, size: int | Mapping[str, int], s_v: int = 8, s_i: int = 4, block: int = 4,
           max_block: int = 64, x_bytes: float = 0.0) -> Advice:
    """Partition ``m`` and compare it with the best single format (``single``: seconds
    per format for the whole matrix, x included). ``size``: rows per strip, one for every
    format or each format's (:func:`strip_sizes`); the grid is their greatest common
    divisor. The blocks share the ``x_bytes`` of x by rows."""
    strip_of = dict.fromkeys(models, size) if isinstance(size, int) else dict(size)
    grid = size if isinstance(size, int) else math.gcd(*size.values())
    st = strips(m, grid, block)
    parts, total = partition(st, models, s_v, s_i, max_block, x_bytes / max(m.rows, 1),
                             strip_of)
    best_single = min(single, key=lambda k: single[k])
    if single[best_single] <= total:
        n = st.rows.size
        parts, total = [(0, n - 1, best_single, single[best_single])], single[best_single]
    blocks = tuple(Block(i, j, i * grid, min((j + 1) * grid, m.rows), f, t)
                   for i, j, f, t in parts)
    return Advice(grid, st.rows.size, blocks, total, best_single, single[best_single],
                  {f: strip_of[f] for f in DP_FORMATS if f in strip_of})


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
                      ) -> tuple[dict[str, int], dict[str, CostModel], dict[str, float], float]:
    """(rows per strip of each format, per-format block cost models, whole-matrix seconds
    per format, bytes of x read once) from the SoL model, or from ``calibration`` when
    given."""
    from ..model.bound import memory_level

    csr = next(r for r in rows if r.storage == "csr")
    size = strip_sizes(spec, csr.bytes_total / max(s.rows, 1))
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
        return size, models, single, x_bytes
    level, _ = memory_level(spec, csr.bytes_total)
    bandwidth = (level.bandwidth or spec.dram.bandwidth).value
    launches = 1 if spec.kind == "gpu" and spec.launch_overhead else 0
    models = sol_models(spec, bandwidth, "fp64", launches)
    return size, models, {r.storage: r.sol_s for r in rows}, x_bytes
