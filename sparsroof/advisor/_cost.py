"""One block's bytes, slots and predicted seconds, in plain Python: the rules the dynamic
program applies (:mod:`sparsroof.advisor._dp` compiles these same functions with numba, and
``_native.c`` follows them operation for operation), and what prices a single block or a
whole answer outside the program without loading numba.

Block sizes in bytes follow :mod:`sparsroof.model.storage` (A read once) plus y = rows·s_v
and the block's share of x, rows·x_per_row:
CSR nnz·(s_v+s_i) + (rows+1)·s_i; CSC nnz·(s_v+s_i) + (k+1)·s_i; COO nnz·(s_v+2·s_i);
ELL rows·K·(s_v+s_i); DIA n_diag·rows·s_v + n_diag·s_i; BSR n_b·b²·s_v + n_b·s_i +
(ceil(rows/b)+1)·s_i; HYB rows·K_h·(s_v+s_i) + overflow·(s_v+2·s_i), with K_h the block's
own ELL width by Bell & Garland's rule (:func:`hyb_split`). Slots (executed entries) are
nnz, nnz, nnz, rows·K, n_diag·rows, n_b·b², rows·K_h + overflow.

A cost row c = (const, u, v, w, z, floor) prices a block at
``const + max(floor, u·bytes + v·rows + w·slots, z·slots)``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["hyb_split", "block_terms", "block_cost", "NCOEF"]

#: numbers in one cost row
NCOEF = 6


def hyb_split(hist: Any, rows: float, nnz: float, kmax: float) -> tuple[float, float]:
    """HYB's ELL width K and the entries beyond it (its COO part) for a block whose row
    lengths have histogram ``hist`` (``hist[L]`` rows of length L): the largest K such
    that at least max(4096, rows/3) rows have K or more entries, as
    :func:`sparsroof.model.storage.hyb_width`. The scan stops at K, which is at most 3x
    the block's mean row length.

    >>> hyb_split([0.0] * 2 + [6000.0], 6000.0, 12000.0, 2.0)   # every row of length 2
    (2.0, 0.0)
    """
    need = max(4096.0, rows / 3)
    k = 0
    at_most = float(hist[0])  # rows with at most k entries
    entries = 0.0  # entries in those rows
    while k + 1 <= kmax and rows - at_most >= need:
        k += 1
        at_most += hist[k]
        entries += k * hist[k]
    return float(k), (nnz - entries) - k * (rows - at_most)


def block_terms(kind: int, rows: float, nnz: float, kmax: float, ndiag: float,
                nblocks: float, b: int, cols: int, s_v: int, s_i: int, hyb_k: float = 0.0,
                overflow: float = 0.0) -> tuple[float, float]:
    """(slots, bytes of A) of one block in format ``kind`` (0 CSR, 1 CSC, 2 COO, 3 ELL,
    4 DIA, 5 BSR, 6 HYB).

    >>> block_terms(4, 21504.0, 0.0, 0.0, 5.0, 0.0, 4, 43008, 8, 4)   # a band of 5 diagonals
    (107520.0, 860180.0)
    """
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
    elif kind == 6:
        slots = rows * hyb_k + overflow
        a = rows * hyb_k * (s_v + s_i) + overflow * (s_v + 2 * s_i)
    else:
        slots = nblocks * b * b
        a = slots * s_v + nblocks * s_i + ((rows + b - 1) // b + 1) * s_i
    return slots, a


def block_cost(kind: int, c: Any, rows: float, nnz: float, kmax: float, ndiag: float,
               nblocks: float, b: int, cols: int, s_v: int, s_i: int, hyb_k: float = 0.0,
               overflow: float = 0.0, x_per_row: float = 0.0) -> float:
    """Predicted seconds of one block in format ``kind`` under cost row ``c``; ``hyb_k``
    and ``overflow`` are HYB's ELL width and COO entries (:func:`hyb_split`), and the
    block reads ``x_per_row`` bytes of x per row (its share of x).

    >>> round(block_cost(4, [0, 1e-9, 0, 0, 0, 0], 32.0, 0.0, 0.0, 3.0, 0.0, 4, 64, 8, 4), 15)
    1.036e-06
    """
    slots, a = block_terms(kind, rows, nnz, kmax, ndiag, nblocks, b, cols, s_v, s_i, hyb_k,
                           overflow)
    mem = c[1] * (a + rows * (s_v + x_per_row)) + c[2] * rows + c[3] * slots
    return c[0] + max(c[5], max(mem, c[4] * slots))
