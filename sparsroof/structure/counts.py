"""The distinct-count features of :mod:`sparsroof.structure.features`, by two routes.

Both return the same :class:`Counts`. The compiled route (:mod:`sparsroof.structure._jit`,
numba) is the fast one for large matrices, but loading compiled code costs about a second
in each new process; small matrices take the whole-array numpy route instead, a handful
of sorts that cost less than that start-up. The tests hold the two routes to the same
numbers.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Counts", "SMALL", "SYMMETRY_SAMPLE", "GROUP_SHIFTS", "MAX_COUNT", "counts"]

#: matrices with at most this many entries take the numpy route
SMALL = 1 << 18
#: above this many entries, pattern symmetry is measured on every s-th entry
SYMMETRY_SAMPLE = 1 << 18
#: log2 of the block sizes and N:M group widths measured: 2, 4, 8, 16, 32
GROUP_SHIFTS = (1, 2, 3, 4, 5)
#: entries per N:M group are counted up to this value (larger counts are lumped into it)
MAX_COUNT = 33


@dataclass(frozen=True, eq=False)
class Counts:
    """Raw counts of one pattern (see the module docstring of :mod:`sparsroof.structure.features`).

    scalars = (bandwidth, entries near the diagonal, diagonals, lower envelope, upper
    envelope, entries on the main diagonal); ``panel_total[k]`` and ``panel_max[k]`` for
    panels of 2^k rows; ``blocks[t]`` for b = 2^(t+1); ``nm_hist[t, c]`` = groups of
    2^(t+1) columns in a row holding c entries; ``diag`` marks the occupied diagonals
    (offset j - i at index j - i + rows - 1); ``mirror`` = (entries checked, mirrored);
    ``row_lengths`` the entries of each row.
    """

    scalars: np.ndarray
    panel_total: np.ndarray
    panel_max: np.ndarray
    blocks: np.ndarray
    nm_hist: np.ndarray
    diag: np.ndarray
    mirror: tuple[int, int] | None
    row_lengths: np.ndarray


def _levels(rows: int) -> int:
    """Panel heights 1, 2, 4, ... up to the first power of two >= rows."""
    nlev = 1
    while (1 << (nlev - 1)) < rows:
        nlev += 1
    return nlev


def _compiled(row: np.ndarray, col: np.ndarray, rows: int, cols: int,
              halfwidth: int) -> Counts:
    from . import _jit

    k: Any = _jit  # compiled dispatchers: their signatures are not visible to mypy
    row, col = np.ascontiguousarray(row), np.ascontiguousarray(col)
    indptr, grouped, in_order = k.group_by_row(row, col, rows)
    # never reorder the caller's array
    colidx = grouped if in_order else k.sort_rows(indptr, grouped, grouped is col)
    stamp = np.int32 if max(rows, cols) < 2**31 else np.int64
    diag_bits = np.zeros(((rows + cols - 1) >> 6) + 1, np.uint64)
    # the two sweeps touch disjoint scratch arrays; the second runs on another core
    with ThreadPoolExecutor(max_workers=1) as pool:
        groups = pool.submit(k.sweep_groups, indptr, colidx, rows, cols, MAX_COUNT)
        scalars, tot, mx = k.sweep_panels(indptr, colidx, rows, halfwidth,
                                          np.full(cols, -1, stamp), diag_bits)
        nblocks, hist = groups.result()
    diag = np.unpackbits(diag_bits.view(np.uint8), bitorder="little")[: rows + cols - 1]
    diag = diag.astype(np.bool_)
    mirror = None
    if rows == cols:
        checked, hits = k.mirrored(indptr, colidx, max(1, colidx.size // SYMMETRY_SAMPLE))
        mirror = (int(checked), int(hits))
    return Counts(scalars, tot, mx, nblocks, hist, diag, mirror, np.diff(indptr))


def _runs(sorted_keys: np.ndarray) -> np.ndarray:
    """Lengths of the runs of equal values in a sorted array."""
    if sorted_keys.size == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    return np.diff(np.append(starts, sorted_keys.size))


def _panels(i: np.ndarray, j: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct columns per panel of 2^k rows, summed and maximised, for every k.

    With the entries in column-major order, an entry is new to its panel at level k when
    the previous entry of its column lies in another panel: bit_length(p XOR i) > k.
    """
    nlev = _levels(rows)
    order = np.lexsort((i, j))
    ic, jc = i[order], j[order]
    first = np.concatenate(([True], jc[1:] != jc[:-1]))
    prev = np.concatenate(([0], ic[:-1]))
    bits = np.where(first, nlev, np.frexp((prev ^ ic).astype(np.float64))[1])
    tot = np.zeros(nlev, np.int64)
    mx = np.zeros(nlev, np.int64)
    for k in range(nlev):
        new = ic[bits > k] >> k
        tot[k] = new.size
        mx[k] = np.bincount(new).max() if new.size else 0
    return tot, mx


def _groups(i: np.ndarray, j: np.ndarray, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-empty aligned b x b blocks and the N:M group histogram, for b, M = 2 .. 32."""
    blocks = np.zeros(len(GROUP_SHIFTS), np.int64)
    hist = np.zeros((len(GROUP_SHIFTS), MAX_COUNT + 1), np.int64)
    for t, s in enumerate(GROUP_SHIFTS):
        width = (cols >> s) + 1
        blocks[t] = _runs(np.sort((i >> s) * width + (j >> s))).size
        per_group = _runs(np.sort(i * width + (j >> s)))
        hist[t] = np.bincount(np.minimum(per_group, MAX_COUNT), minlength=MAX_COUNT + 1)
    return blocks, hist


def _numpy(row: np.ndarray, col: np.ndarray, rows: int, cols: int, halfwidth: int) -> Counts:
    i, j = row.astype(np.int64), col.astype(np.int64)
    d = j - i
    ad = np.abs(d)
    diag = np.zeros(rows + cols - 1, np.bool_)
    diag[d + rows - 1] = True
    first_col = np.full(rows, cols, np.int64)
    np.minimum.at(first_col, i, j)
    first_row = np.full(cols, rows, np.int64)
    np.minimum.at(first_row, j, i)
    lower = np.maximum(np.arange(rows) - first_col, 0)[first_col < cols].sum()
    upper = np.maximum(np.arange(cols) - first_row, 0)[first_row < rows].sum()
    scalars = np.array([ad.max(), np.count_nonzero(ad <= halfwidth), np.count_nonzero(diag),
                        lower, upper, np.count_nonzero(d == 0)], np.int64)
    tot, mx = _panels(i, j, rows)
    blocks, hist = _groups(i, j, cols)
    mirror = None
    if rows == cols:
        keys = np.sort(i * cols + j)
        off = d != 0
        mirrored = np.isin(j[off] * cols + i[off], keys, assume_unique=False, kind="sort")
        mirror = (int(np.count_nonzero(off)), int(np.count_nonzero(mirrored)))
    return Counts(scalars, tot, mx, blocks, hist, diag, mirror, np.bincount(i, minlength=rows))


def counts(row: np.ndarray, col: np.ndarray, rows: int, cols: int, halfwidth: int,
           route: str | None = None) -> Counts:
    """Counts of a pattern with at least one entry; ``route`` "numpy" or "compiled"
    forces a route (by default small matrices take numpy)."""
    route = route or ("numpy" if row.size <= SMALL else "compiled")
    if route == "numpy":
        return _numpy(row, col, rows, cols, halfwidth)
    return _compiled(row, col, rows, cols, halfwidth)
