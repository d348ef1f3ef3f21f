# mypy: disable-error-code="no-untyped-def"
"""Compiled O(nnz) passes behind :mod:`sparsroof.structure.features`.

Entries are first grouped by row with a stable counting sort, and the columns of each row
put in increasing order where they are not already (they usually are). Then two sweeps over
the rows, run at the same time on two threads (the compiled code releases the GIL),
measure every distinct-count feature with "last row seen" marker arrays, so that no
feature needs a sort or a hash of its own:

* distinct columns per row panel of height h = 2^k, for every k at once: an entry (i, j)
  whose column j was last touched in row p is new to its panel exactly for the heights
  with ``p >> k != i >> k``, that is for k < bit_length(p XOR i); a histogram of that
  bit length per row gives the count of every height in the same pass;
* aligned b x b blocks for b = 2, 4, ..., 32, with one bit per block column and level,
  cleared when its block row closes; N:M groups (i, j // M) as runs of equal
  ``j >> log2 M`` along a sorted row, in the same pass;
* the occupied diagonals, the bandwidth, the envelope and the entries near the diagonal.

Pattern symmetry is a separate pass: a binary search of (j, i) in the sorted row j.

Compiled with numba and cached on disk; the first call in a fresh environment compiles
(several seconds), later processes load the cache.
"""

from __future__ import annotations

import numpy as np

from ..passes.compiled import njit

__all__ = ["group_by_row", "sort_rows", "sweep_panels", "sweep_groups", "mirrored", "bin_cells"]


@njit(cache=True)
def group_by_row(row, col, rows):
    """Row pointers, the column indices grouped by row (a stable counting sort), and
    whether every row's columns are already in increasing order (False when unknown).

    Returns ``col`` itself when the entries already come in row order.
    """
    n = row.size
    indptr = np.zeros(rows + 1, np.int64)
    in_order = True
    sorted_rows = True
    prev = -1
    prev_col = -1
    for e in range(n):
        r = np.int64(row[e])
        c = np.int64(col[e])
        indptr[r + 1] += 1
        if r < prev:
            in_order = False
        elif r == prev and c < prev_col:
            sorted_rows = False
        prev = r
        prev_col = c
    for i in range(rows):
        indptr[i + 1] += indptr[i]
    if in_order:
        return indptr, col, sorted_rows
    out = np.empty(n, col.dtype)
    pos = indptr[:-1].copy()
    for e in range(n):
        r = row[e]
        out[pos[r]] = col[e]
        pos[r] += 1
    return indptr, out, False


@njit(cache=True)
def sort_rows(indptr, colidx, copy):
    """Columns in increasing order within every row; sorts a copy first if ``copy``.

    Returns ``colidx`` itself when every row is already in order.
    """
    out = colidx
    copied = not copy
    for i in range(indptr.size - 1):
        s, e = indptr[i], indptr[i + 1]
        for idx in range(s + 1, e):
            if out[idx] < out[idx - 1]:
                if not copied:
                    out = colidx.copy()
                    copied = True
                out[s:e] = np.sort(out[s:e])
                break
    return out


@njit(cache=True, inline="always")
def _bit_length(x):
    n = 0
    if x >> 16:
        x >>= 16
        n += 16
    if x >> 8:
        x >>= 8
        n += 8
    if x >> 4:
        x >>= 4
        n += 4
    if x >> 2:
        x >>= 2
        n += 2
    if x >> 1:
        x >>= 1
        n += 1
    return n + x


@njit(cache=True, nogil=True)
def _close_panels(i, rows, nlev, rowhist, cur, tot, mx):
    """Add row i's new columns to every level's current panel; close finished panels."""
    acc = 0
    for k in range(nlev - 1, -1, -1):
        acc += rowhist[k + 1]
        cur[k] += acc
        rowhist[k + 1] = 0
    rowhist[0] = 0
    for k in range(nlev):
        if ((i + 1) & ((1 << k) - 1)) == 0 or i == rows - 1:
            tot[k] += cur[k]
            mx[k] = max(mx[k], cur[k])
            cur[k] = 0


@njit(cache=True, nogil=True)
def sweep_panels(indptr, colidx, rows, halfwidth, last, diag):
    """Row pass for the panel counts, the diagonals, the bandwidth and the envelope.

    ``last`` (cols) holds -1 and ``diag`` (a bitmap of (rows + cols - 1) bits, bit
    j - i + rows - 1 for diagonal j - i, in uint64 words) 0 on entry: scratch arrays the
    caller allocates. Returns (scalars, panel totals, panel maxima) with
    scalars = (bandwidth, entries near the diagonal, diagonals, lower envelope, upper
    envelope, entries on the main diagonal).
    """
    nlev = 1
    while (1 << (nlev - 1)) < rows:
        nlev += 1
    rowhist = np.zeros(nlev + 1, np.int64)
    cur = np.zeros(nlev, np.int64)
    tot = np.zeros(nlev, np.int64)
    mx = np.zeros(nlev, np.int64)
    bw = near = ndiag = lower = upper = ondiag = 0
    for i in range(rows):
        s, e = indptr[i], indptr[i + 1]
        for idx in range(s, e):
            j = np.int64(colidx[idx])
            d = j - i
            ad = -d if d < 0 else d
            bw = max(bw, ad)
            near += ad <= halfwidth
            ondiag += d == 0
            bit = d + rows - 1
            mask = np.uint64(1) << np.uint64(bit & 63)
            if not diag[bit >> 6] & mask:
                diag[bit >> 6] |= mask
                ndiag += 1
            p = last[j]
            if p < 0:
                rowhist[nlev] += 1
                upper += max(0, j - i)
            else:
                rowhist[min(_bit_length(p ^ i), nlev)] += 1
            last[j] = i
        if e > s:
            lower += max(0, i - np.int64(colidx[s]))
        _close_panels(i, rows, nlev, rowhist, cur, tot, mx)
    scalars = np.array([bw, near, ndiag, lower, upper, ondiag], np.int64)
    return scalars, tot, mx


@njit(cache=True, nogil=True)
def sweep_groups(indptr, colidx, rows, cols, max_count):
    """Row pass for the aligned b x b blocks and the N:M groups, b = M = 2^k, k = 1 .. 5.

    A block column (j >> k) is new to its block row when its bit is clear in that level's
    bitmap; when the block row closes, the words its entries set are cleared again (or
    the whole bitmap, when that is shorter). The bitmaps stay in the core's cache where
    row markers would not. Along a sorted row the same (j >> k) sequence gives the N:M
    groups as runs; an entry in the same group as the previous one at level k is so at
    every coarser level, which ends its work early.
    Group sizes above ``max_count`` are counted as ``max_count``.
    Returns (block counts for b = 2 .. 32, N:M group histogram per M = 2 .. 32).
    """
    levels = 5
    words = ((cols >> 1) >> 6) + 2
    bits = np.zeros((levels, words), np.uint64)
    blocks = np.zeros(levels, np.int64)
    hist = np.zeros((levels, max_count + 1), np.int64)
    prev = np.empty(levels, np.int64)
    run = np.zeros(levels, np.int64)
    one = np.uint64(1)
    for i in range(rows):
        s, e = indptr[i], indptr[i + 1]
        prev[:] = -1
        for idx in range(s, e):
            j = np.int64(colidx[idx])
            t = 0
            while t < levels:
                g = j >> (t + 1)
                if g == prev[t]:
                    break
                if run[t]:
                    hist[t, min(run[t], max_count)] += 1
                    run[t] = 0
                prev[t] = g
                mask = one << np.uint64(g & 63)
                if not bits[t, g >> 6] & mask:
                    bits[t, g >> 6] |= mask
                    blocks[t] += 1
                t += 1
            run += 1
        for t in range(levels):
            if run[t]:
                hist[t, min(run[t], max_count)] += 1
                run[t] = 0
            k = t + 1
            if ((i + 1) & ((1 << k) - 1)) == 0 or i == rows - 1:
                first = indptr[i & ~((1 << k) - 1)]
                if e - first > words >> t:
                    bits[t, :] = 0
                else:  # every bit set was set by these entries
                    for idx in range(first, e):
                        bits[t, (np.int64(colidx[idx]) >> k) >> 6] = 0
    return blocks, hist


@njit(cache=True)
def mirrored(indptr, colidx, stride):
    """(off-diagonal entries checked, of which mirrored) over every ``stride``-th entry.

    Entry (i, j) is mirrored when (j, i) is also stored: a binary search in sorted row j.
    """
    rows = indptr.size - 1
    checked = hits = 0
    i = 0
    for e in range(0, colidx.size, stride):
        while indptr[i + 1] <= e:
            i += 1
        j = np.int64(colidx[e])
        if j == i or j >= rows:
            continue
        checked += 1
        lo, hi = indptr[j], indptr[j + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if colidx[mid] < i:
                lo = mid + 1
            else:
                hi = mid
        if lo < indptr[j + 1] and colidx[lo] == i:
            hits += 1
    return checked, hits


@njit(cache=True, nogil=True)
def bin_cells(row, col, rows, cols, counts):
    """Add the entries of each cell (i * nr // rows, j * nc // cols) of the spy image to
    ``counts`` (nr x nc)."""
    nr, nc = counts.shape
    for e in range(row.size):
        counts[np.int64(row[e]) * nr // rows, np.int64(col[e]) * nc // cols] += 1
