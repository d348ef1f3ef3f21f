"""Compiled dynamic program of :mod:`sparsroof.advisor.partition` (numba), the route
where the C build (``_native.c``, the same program operation for operation) is missing.

The bytes, slots and cost of a block are the plain functions of
:mod:`sparsroof.advisor._cost`, compiled here. Format f may cover a block of a whole number
of ``mult[f]`` strips, or the block that ends the matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..passes.compiled import njit
from . import _cost

__all__ = ["dp", "block_cost", "hyb_split"]

hyb_split = njit(cache=True)(_cost.hyb_split)
_block_terms = njit(cache=True)(_cost.block_terms)


@njit(cache=True)
def block_cost(kind: int, c: Any, rows: float, nnz: float, kmax: float, ndiag: float,
               nblocks: float, b: int, cols: int, s_v: int, s_i: int, hyb_k: float = 0.0,
               overflow: float = 0.0, x_per_row: float = 0.0) -> float:  # pragma: no cover
    """:func:`sparsroof.advisor._cost.block_cost`, compiled."""
    slots, a = _block_terms(kind, rows, nnz, kmax, ndiag, nblocks, b, cols, s_v, s_i, hyb_k,
                            overflow)
    mem = c[1] * (a + rows * (s_v + x_per_row)) + c[2] * rows + c[3] * slots
    return c[0] + max(c[5], max(mem, c[4] * slots))


@njit(cache=True)
def _add_lengths(hist: Any, len_ptr: Any, len_val: Any, len_cnt: Any, first: int, last: int,
                 sign: int) -> None:  # pragma: no cover
    """Add (``sign`` 1) or take away (-1) the row lengths of strips [first, last)."""
    for p in range(len_ptr[first], len_ptr[last]):
        hist[len_val[p]] += sign * len_cnt[p]


@njit(cache=True)
def _add_diagonals(nd_from: Any, diag_ptr: Any, diag_gap: Any, diag_cnt: Any, s: int,
                   lo: int) -> None:  # pragma: no cover
    """Add strip ``s``'s diagonals to the blocks [i, s + 1), i = lo ... s: those whose gap
    exceeds s - i are new to the block."""
    total = 0.0
    for q in range(diag_ptr[s], diag_ptr[s + 1]):
        total += diag_cnt[q]
    seen = 0.0
    q = diag_ptr[s]
    for i in range(s, lo - 1, -1):
        while q < diag_ptr[s + 1] and diag_gap[q] <= s - i:
            seen += diag_cnt[q]
            q += 1
        nd_from[i] += total - seen


@njit(cache=True)
def dp(rows: Any, nnz: Any, max_len: Any, diag_ptr: Any, diag_gap: Any, diag_cnt: Any,
       blocks: Any, len_ptr: Any, len_val: Any, len_cnt: Any, kinds: Any, coef: Any,
       mult: Any, b: int, cols: int, s_v: int, s_i: int, max_block: int, x_per_row: float
       ) -> tuple[Any, Any, Any, Any]:  # pragma: no cover
    """best[j]: least time of strips [0, j); cut[j], fmt[j], cost[j]: its last block.

    nd_from[i] holds the distinct diagonals of strips [i, j): strip s = j - 1 adds those
    of its diagonals whose gap (the distance to the last strip before s holding it)
    exceeds s - i."""
    n = rows.size
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    cut = np.zeros(n + 1, np.int64)
    fmt = np.zeros(n + 1, np.int64)
    cost = np.zeros(n + 1)
    nd_from = np.zeros(n + 1)
    with_hyb = (kinds == 6).any()
    hist = np.zeros((max_len.max() if n else 0) + 1)  # row lengths of the growing block
    for j in range(1, n + 1):
        s = j - 1
        lo = max(0, j - max_block)
        _add_diagonals(nd_from, diag_ptr, diag_gap, diag_cnt, s, lo)
        r = 0.0
        z = 0.0
        kmax = 0.0
        nb = 0.0
        dia_alive = True
        for i in range(j - 1, lo - 1, -1):
            r += rows[i]
            z += nnz[i]
            kmax = max(kmax, max_len[i])
            nb += blocks[i]
            hk = 0.0
            over = 0.0
            if with_hyb:
                _add_lengths(hist, len_ptr, len_val, len_cnt, i, i + 1, 1)
                hk, over = hyb_split(hist, r, z, kmax)
            nd = nd_from[i]
            for f in range(kinds.size):
                if kinds[f] == 4 and not dia_alive:
                    continue
                if j < n and (j - i) % mult[f] != 0:
                    continue  # not whole strips of the format, and not the last block
                t = block_cost(kinds[f], coef[f], r, z, kmax, nd, nb, b, cols, s_v, s_i,
                               hk, over, x_per_row)
                if kinds[f] == 4 and t >= best[j]:
                    dia_alive = False  # DIA only grows as the block grows: prune it
                if best[i] + t < best[j]:
                    best[j] = best[i] + t
                    cut[j] = i
                    fmt[j] = f
                    cost[j] = t
        if with_hyb:  # empty the histogram for the next j
            _add_lengths(hist, len_ptr, len_val, len_cnt, lo, j, -1)
    return best, cut, fmt, cost
