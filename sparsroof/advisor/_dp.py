"""Compiled dynamic program of :mod:`sparsroof.advisor.partition` (numba): the route
where the C build (``_native.c``, the same program operation for operation) is missing.

Block sizes in bytes follow :mod:`sparsroof.model.storage` (A read once) plus y = rows·s_v:
CSR nnz·(s_v+s_i) + (rows+1)·s_i; CSC nnz·(s_v+s_i) + (k+1)·s_i; COO nnz·(s_v+2·s_i);
ELL rows·K·(s_v+s_i); DIA n_diag·rows·s_v + n_diag·s_i; BSR n_b·b²·s_v + n_b·s_i +
(ceil(rows/b)+1)·s_i. Slots (executed entries) are nnz, nnz, nnz, rows·K, n_diag·rows, n_b·b².
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["dp", "block_cost"]


@njit(cache=True)
def block_cost(kind: int, c: Any, rows: float, nnz: float, kmax: float, ndiag: float,
               nblocks: float, b: int, cols: int, s_v: int, s_i: int) -> float:  # pragma: no cover
    """Predicted seconds of one block in format ``kind`` under cost row ``c``."""
    if kind == 0:
        slots, a = nnz, nnz * (s_v + s_i) + (rows + 1) * s_i
    elif kind == 1:
        slots, a = nnz, nnz * (s_v + s_i) + (cols + 1) * s_i
    elif kind == 2:
        slots, a = nnz, nnz * (s_v + 2 * s_i)
    elif kind == 3:
        slots = rows * kmax
        a = slots * (s_v + s_i)
    elif kind == 4:
        slots = ndiag * rows
        a = slots * s_v + ndiag * s_i
    else:
        slots = nblocks * b * b
        a = slots * s_v + nblocks * s_i + ((rows + b - 1) // b + 1) * s_i
    mem = c[1] * (a + rows * s_v) + c[2] * rows + c[3] * slots
    return c[0] + max(mem, c[4] * slots)


@njit(cache=True)
def dp(rows: Any, nnz: Any, max_len: Any, diag_ptr: Any, diag_off: Any, blocks: Any, b: int,
       cols: int, kinds: Any, coef: Any, s_v: int, s_i: int, max_block: int
       ) -> tuple[Any, Any, Any, Any]:  # pragma: no cover
    """best[j]: least time of strips [0, j); cut[j], fmt[j], cost[j]: its last block."""
    n = rows.size
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    cut = np.zeros(n + 1, np.int64)
    fmt = np.zeros(n + 1, np.int64)
    cost = np.zeros(n + 1)
    span = rows.sum() + cols + 2
    stamp = np.full(span, -1, np.int64)
    shift = rows.sum() + 1
    for j in range(1, n + 1):
        r = 0.0
        z = 0.0
        kmax = 0.0
        nd = 0.0
        nb = 0.0
        dia_alive = True
        for i in range(j - 1, max(-1, j - 1 - max_block), -1):
            r += rows[i]
            z += nnz[i]
            kmax = max(kmax, max_len[i])
            nb += blocks[i]
            if dia_alive:
                for p in range(diag_ptr[i], diag_ptr[i + 1]):
                    o = diag_off[p] + shift
                    if stamp[o] != j:
                        stamp[o] = j
                        nd += 1
            for f in range(kinds.size):
                if kinds[f] == 4 and not dia_alive:
                    continue
                t = block_cost(kinds[f], coef[f], r, z, kmax, nd, nb, b, cols, s_v, s_i)
                if kinds[f] == 4 and t >= best[j]:
                    dia_alive = False  # DIA only grows as the block grows: prune it
                if best[i] + t < best[j]:
                    best[j] = best[i] + t
                    cut[j] = i
                    fmt[j] = f
                    cost[j] = t
    return best, cut, fmt, cost
