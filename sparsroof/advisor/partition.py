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

The grid: the paper cuts the rows on the finest grid (S_CSR, 672 rows on its Tesla C2050)
and lets a block of any whole number of strips take any format: its Table 3 answers ELL
blocks of 42, 59 and 74 strips of 672 rows, which are not whole strips of ELL's own
S_ELL = SMs x threads per SM rows. Its kernels' time models are fitted on matrices of
whole strips, but the partition's blocks are priced by the same model for any height.
:func:`partition` can still restrict a format to whole multiples of its own strip
(``strip_of``), or the block that ends the matrix.

Predicted time of a block in format f (:mod:`sparsroof.advisor._cost`):
``const_f + max(floor_f, u_f·bytes + v_f·rows + w_f·slots, z_f·slots)``, bytes being
the format's A bytes as the paper's kernels read them (ELL and HYB read their padding)
plus y and the block's share of x. HYB's ELL width is chosen per block, by the rule the
paper takes for whole matrices (:func:`sparsroof.model.storage.hyb_width`), from the
block's histogram of row lengths. How u, v, w, z and the floor are set, for blocks and the
whole matrix alike, is :mod:`sparsroof.advisor.advice`'s. x is read once for the whole
matrix; each block is charged its rows' share of x's bytes at its own format's u, so
that a partition of one block costs what the whole matrix does in that format.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix
from ..passes.arrays import check_route, compiled, distinct

__all__ = ["DP_FORMATS", "STRIP_ROUTES", "PROGRAM_ROUTES", "CostModel", "Strips",
           "strip_rows", "strip_rule", "native", "strips", "sol_models", "partition",
           "block_counts", "block_price"]

#: formats the partition considers (HYB's ELL width is chosen per block)
DP_FORMATS = ("csr", "csc", "coo", "ell", "hyb", "dia", "bsr")
_KIND = {"csr": 0, "csc": 1, "coo": 2, "ell": 3, "dia": 4, "bsr": 5, "hyb": 6}


@dataclass(frozen=True)
class CostModel:
    """t = const + max(floor, u·bytes + v·rows + w·slots, z·slots) for one format."""

    const: float
    u: float
    v: float
    w: float
    z: float
    floor: float = 0.0


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


def strip_rows(spec: HwSpec, csr_bytes_per_row: float) -> int:
    """Strip size S (see the module docstring).

    >>> from sparsroof.hardware.library import load_spec
    >>> strip_rows(load_spec("a100"), 100.0)      # 108 SMs x 64 warps
    6912
    """
    par = spec.parallelism
    if spec.kind == "gpu" and "sms" in par and "warps_per_sm" in par:
        return int(par["sms"].value * par["warps_per_sm"].value)
    rows = int(_strip_cache(spec) / max(csr_bytes_per_row, 1.0))
    return max(32, rows // 32 * 32)


def _strip_cache(spec: HwSpec) -> float:
    caches = sorted(lv.capacity.value for lv in spec.memory[:-1] if lv.capacity is not None)
    return caches[-2] if len(caches) >= 2 else (caches[-1] if caches else 2**20)


def strip_rule(spec: HwSpec) -> str:
    """How :func:`strip_rows` sizes the strips on ``spec``, in words; a GPU spec without
    its warps per SM says that it falls back to the cache rule.

    >>> from sparsroof.hardware.library import load_spec
    >>> strip_rule(load_spec("a100")), strip_rule(load_spec("mi300x"))[:44]
    ('108 SMs x 64 warps', 'mi300x gives no warps per SM: the rows whose')
    """
    from ..units import binary

    par = spec.parallelism
    if spec.kind == "gpu" and "sms" in par and "warps_per_sm" in par:
        return f"{par['sms'].value:g} SMs x {par['warps_per_sm'].value:g} warps"
    rule = f"the rows whose CSR fills {binary(_strip_cache(spec))} of cache"
    return f"{spec.name} gives no warps per SM: {rule}" if spec.kind == "gpu" else rule


#: the routes (:data:`sparsroof.passes.arrays.ROUTES`) of the per-strip counts and of the
#: dynamic program; "compiled" is the C build where there is one, else the portable route
#: (numpy for the counts, numba for the program)
STRIP_ROUTES = ("compiled", "native", "numpy")
PROGRAM_ROUTES = ("compiled", "native", "numba")
#: the version of the passes this module expects of the C build (a stale one is not used)
_NATIVE_VERSION = 2


@lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The ahead-of-time build of the advisor's passes, or None where missing or stale."""
    return compiled(f"{__package__}._native", _NATIVE_VERSION)


def _compiled(route: str, offered: tuple[str, ...], what: str) -> ModuleType | None:
    """The C build for ``route`` (None: the portable route)."""
    check_route(route, offered, what)
    k = native() if route in ("compiled", "native") else None
    if route == "native" and k is None:
        raise RuntimeError("the format advisor's passes were not built in C here")
    return k


def strips(m: Matrix, size: int, block: int = 4, route: str = "compiled") -> Strips:
    """Per-strip rows, entries, longest row, b x b blocks, and the histograms of the gaps
    of its diagonals and of its row lengths (see :class:`Strips`), by the C build or numpy
    (``route``, one of :data:`STRIP_ROUTES`)."""
    n = max(1, math.ceil(m.rows / size))
    starts = np.arange(n, dtype=np.int64) * size
    rows = np.minimum(starts + size, m.rows) - starts
    k = _compiled(route, STRIP_ROUTES, "the strip counts")
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
    """Cost models from the roofline at one bandwidth: memory term bytes/β (the block's
    A, its rows of y and its share of x), compute term 2·slots/P, and each block at least
    ``launches`` launch floors (the bound's third term, a floor, not an addition).

    >>> from sparsroof.hardware.library import load_spec
    >>> m = sol_models(load_spec("a100"), 1e12, "fp64", 1)["csr"]
    >>> m.u, m.v, m.w, m.floor > 0
    (1e-12, 0.0, 0.0, True)
    """
    peak = spec.peak("simt", precision).value
    launch = launches * spec.launch_overhead.value if spec.launch_overhead else 0.0
    return {f: CostModel(0.0, 1 / bandwidth, 0.0, 0.0, 2 / peak, launch) for f in DP_FORMATS}


def _params(models: dict[str, CostModel]) -> tuple[np.ndarray, np.ndarray]:
    kinds = np.array([_KIND[f] for f in models], dtype=np.int64)
    coef = np.array([[c.const, c.u, c.v, c.w, c.z, c.floor] for c in models.values()],
                    dtype=float).reshape(len(models), 6)
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
    the C build, or numba (one of :data:`PROGRAM_ROUTES`)."""
    names = list(models)
    kinds, coef = _params(models)
    mult = _multiples(st, names, strip_of)
    n = st.rows.size
    max_block = max(1, min(max_block, n))  # no block is longer than the matrix's strips
    args = (st.rows, st.nnz, st.max_len, st.diag_ptr, st.diag_gap, st.diag_cnt, st.blocks,
            st.len_ptr, st.len_val, st.len_cnt, kinds, coef, mult)
    k = _compiled(route, PROGRAM_ROUTES, "the partition program")
    if k is None:
        from ._dp import dp

        best, cut, fmt, cost = dp(*args, st.block, st.cols, s_v, s_i, max_block,
                                  float(x_per_row))
    else:
        best, cost = np.empty(n + 1), np.empty(n + 1)
        cut, fmt = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
        k.dp(*(np.ascontiguousarray(a, np.float64 if a is coef else np.int64) for a in args),
             st.block, st.cols, s_v, s_i, max_block, float(x_per_row),
             best, cut, fmt, cost)
    out = []
    j = n
    while j > 0:
        i = int(cut[j])
        out.append((i, j - 1, names[int(fmt[j])], float(cost[j])))
        j = i
    return out[::-1], float(best[n])


def block_counts(st: Strips, first: int, last: int) -> dict[str, Any]:
    """Rows, entries, longest row, distinct diagonals, b x b blocks and the row-length
    histogram of the block of strips [first, last] (inclusive), from ``st``'s lists."""
    sl = slice(first, last + 1)
    d0, d1 = st.diag_ptr[first], st.diag_ptr[last + 1]
    owner = np.repeat(np.arange(first, last + 1), np.diff(st.diag_ptr[first:last + 2]))
    new = st.diag_gap[d0:d1] > owner - first  # not held by an earlier strip of the block
    kmax = int(st.max_len[sl].max(initial=0))
    lo, hi = st.len_ptr[first], st.len_ptr[last + 1]
    hist = np.bincount(st.len_val[lo:hi], weights=st.len_cnt[lo:hi], minlength=kmax + 1)
    return {"rows": float(st.rows[sl].sum()), "nnz": float(st.nnz[sl].sum()),
            "kmax": float(kmax), "ndiag": float(st.diag_cnt[d0:d1][new].sum()),
            "nblocks": float(st.blocks[sl].sum()), "hist": hist}


def block_price(st: Strips, first: int, last: int, storage: str, model: CostModel,
                s_v: int, s_i: int, x_per_row: float = 0.0) -> tuple[float, float, float]:
    """(seconds, bytes, slots) of the block of strips [first, last] in ``storage`` under
    ``model``: the dynamic program's own rules (:mod:`sparsroof.advisor._cost`), bytes
    being A, y and the block's share of x."""
    from ._cost import block_cost, block_terms, hyb_split

    c = block_counts(st, first, last)
    kind = _KIND[storage]
    hk, over = (hyb_split(c["hist"], c["rows"], c["nnz"], c["kmax"]) if kind == 6
                else (0.0, 0.0))
    args = (kind, c["rows"], c["nnz"], c["kmax"], c["ndiag"], c["nblocks"], st.block,
            st.cols, s_v, s_i, hk, over)
    slots, a = block_terms(*args)
    coef = [model.const, model.u, model.v, model.w, model.z, model.floor]
    seconds = block_cost(kind, coef, *args[1:], x_per_row)
    return seconds, a + c["rows"] * (s_v + x_per_row), slots
