"""The distinct-count features of :mod:`sparsroof.structure.features`, by three routes.

All return the same :class:`Counts`. The native route (``_native``, C compiled when the
package is built) takes every matrix: importing it costs a millisecond. Where it was not
built (no C compiler at install), the same passes run through numba
(:mod:`sparsroof.structure._jit`), whose start-up costs about a second and 150 MiB in each
new process, so small matrices then take the whole-array numpy route, a handful of sorts
that cost less than that start-up. The tests hold the routes to the same numbers.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..passes.arrays import check_route, compiled, two_threads

if TYPE_CHECKING:
    from ..matrix.scan import RowCounts

__all__ = ["Counts", "SMALL", "SYMMETRY_SAMPLE", "symmetry_stride", "GROUP_SHIFTS",
           "MAX_COUNT", "COUNT_ROUTES", "THREADED_GROUPING", "counts", "index_pair", "native",
           "on_two_threads"]

#: matrices with at most this many entries take the numpy route
SMALL = 1 << 18
#: past :data:`SMALL` entries, pattern symmetry is measured on every s-th entry, about
#: this many (each check is a search in a random row, a cache miss: 1 << 18 of them took
#: 13 ms at 1M entries, 5 % of the analysis, for a share whose standard error is then
#: under 0.002)
SYMMETRY_SAMPLE = 1 << 16


def symmetry_stride(entries: int) -> int:
    """Every how many entries the symmetry is checked: each one up to :data:`SMALL`
    entries (as the numpy route does, so that every route agrees), then about
    :data:`SYMMETRY_SAMPLE` of them.

    >>> symmetry_stride(1 << 18), symmetry_stride((1 << 18) + 1), symmetry_stride(10**6)
    (1, 4, 15)
    """
    return 1 if entries <= SMALL else max(1, entries // SYMMETRY_SAMPLE)
#: log2 of the block sizes and N:M group widths measured: 2, 4, 8, 16, 32
GROUP_SHIFTS = (1, 2, 3, 4, 5)
#: entries per N:M group are counted up to this value (larger counts are lumped into it)
MAX_COUNT = 33
#: the routes (:data:`sparsroof.passes.arrays.ROUTES`) :func:`counts` offers ("compiled": native
#: where built, else numba)
COUNT_ROUTES = ("compiled", "native", "numba", "numpy")
#: the version of the passes this module expects of the native build (a stale build of an
#: older version is not used)
_NATIVE_VERSION = 7
#: below this many entries the native sweeps run one after the other, not on two threads
_THREADED = 1 << 16
#: entries from which the counting sort runs on two threads
THREADED_GROUPING = 1 << 20
#: share of the entries whose group sweep runs on the second thread (the group sweep costs
#: about twice the panel sweep, which runs with the symmetry sample and the rest of the
#: group sweep on the calling thread)
_GROUP_SHARE = 0.8
#: entries from which the grouping by row takes two passes (buckets of rows, then rows)
_BUCKETED = 1 << 20
#: the number of buckets the two-pass grouping aims at (their write positions and the
#: bucket being settled stay in cache)
_BUCKETS = 512


@dataclass(frozen=True, eq=False)
class Counts:
    """Raw counts of one pattern (see the module docstring of :mod:`sparsroof.structure.features`).

    scalars = (bandwidth, entries near the diagonal, diagonals, lower envelope, upper
    envelope, entries on the main diagonal, cells of the occupied diagonals);
    ``panel_total[k]`` and ``panel_max[k]`` for panels of 2^k rows; ``blocks[t]`` for
    b = 2^(t+1); ``nm_hist[t, c]`` = groups of
    2^(t+1) columns in a row holding c entries; ``diag`` marks the occupied diagonals
    (offset j - i at index j - i + rows - 1); ``mirror`` = (entries checked, mirrored);
    ``row_lengths`` the entries of each row, ``col_lengths`` of each column.
    """

    scalars: np.ndarray
    panel_total: np.ndarray
    panel_max: np.ndarray
    blocks: np.ndarray
    nm_hist: np.ndarray
    diag: np.ndarray
    mirror: tuple[int, int] | None
    row_lengths: np.ndarray
    col_lengths: np.ndarray


@lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The ahead-of-time build of the passes, or None where it is missing or stale."""
    return compiled(f"{__package__}._native", _NATIVE_VERSION)


def _levels(rows: int) -> int:
    """Panel heights 1, 2, 4, ... up to the first power of two >= rows."""
    nlev = 1
    while (1 << (nlev - 1)) < rows:
        nlev += 1
    return nlev


def index_pair(row: np.ndarray, col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``row`` and ``col`` as contiguous arrays of one signed type, int32 or int64."""
    dtype = row.dtype if row.dtype == col.dtype and row.dtype in (np.int32, np.int64) \
        else np.dtype(np.int64)
    return np.ascontiguousarray(row, dtype), np.ascontiguousarray(col, dtype)


def on_two_threads(call: Callable[..., Any], here: tuple[Any, ...],
                   there: tuple[Any, ...]) -> tuple[Any, Any]:
    """``call(*here)`` on this thread and ``call(*there)`` on another, side by side (the
    C passes release the GIL): both results, or the first one's exception."""
    found: list[Any] = []

    def other() -> None:
        try:
            found.append((call(*there), None))
        except Exception as err:  # raised again on the calling thread
            found.append((None, err))

    helper = threading.Thread(target=other, name="sparsroof-pass", daemon=True)
    helper.start()
    try:
        mine = call(*here)
    finally:
        helper.join()
    theirs, err = found[0]
    if err is not None:
        raise err
    return mine, theirs


def group_by_row(k: Any, row: np.ndarray, col: np.ndarray, rows: int, cols: int,
                 row_counts: RowCounts | None = None, sort: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """(row pointers, the columns grouped by row, whether the entries came in row order,
    whether every row's columns are in increasing order): the stable counting sort of the
    native passes, the caller's arrays untouched. The columns of each row stay in file
    order, unless ``sort`` asks for them in increasing order where they had to be moved.
    Above :data:`THREADED_GROUPING` entries each half of the entries is counted and then
    scattered on its own core: the second half's entries of a row go after the first
    half's, as one pass would put them (not for a hypersparse pattern, whose second count
    of every row would outweigh its entries). ``row_counts`` (the reader's count of this
    very ``row`` array) replaces the counting."""
    if row_counts is not None and row_counts.row is row:
        return _group_counted(k, row, col, rows, row_counts, sort)
    # one count for a hypersparse pattern, a small one, or a process without a second core
    if row.size < THREADED_GROUPING or rows > row.size or not two_threads():
        indptr = np.zeros(rows + 1, np.int64)
        in_order, sorted_rows = k.count_rows(row, col, cols, indptr)
        grouped = col
        if not in_order:
            grouped = np.empty_like(col)
            sorted_rows = _scatter(k, row, col, indptr, grouped, row.size, None, sort)
        return indptr, grouped, bool(in_order), bool(sorted_rows)
    from ..matrix.scan import RowCounts

    h = row.size // 2
    first, second = np.zeros(rows + 1, np.int64), np.zeros(rows + 1, np.int64)
    (order1, sorted1), (order2, sorted2) = on_two_threads(
        k.count_rows, (row[:h], col[:h], cols, first), (row[h:], col[h:], cols, second))
    # count_rows leaves each half's row pointers: their steps are the half's counts
    return _group_counted(k, row, col, rows, RowCounts(
        row, h, np.diff(first), np.diff(second), (bool(order1), bool(order2)),
        (bool(sorted1), bool(sorted2))), sort)


def _group_counted(k: Any, row: np.ndarray, col: np.ndarray, rows: int,
                   counted: RowCounts, sort: bool) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    """:func:`group_by_row` from counts of the entries' rows in one or two parts (the
    reader's, or two threads'), which meet at ``split``."""
    h, second = counted.split, counted.second
    first: np.ndarray | None = counted.first
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(counted.first if second is None else counted.first + second, out=indptr[1:])
    seam = 0 < h < row.size
    in_order = all(counted.in_order) and not (seam and row[h] < row[h - 1])
    sorted_rows = in_order and all(counted.sorted) and not (
        seam and row[h] == row[h - 1] and col[h] < col[h - 1])
    grouped = col
    if not in_order:
        grouped = np.empty_like(col)
        if second is None or not seam:
            h, first = row.size, None
        sorted_rows = _scatter(k, row, col, indptr, grouped, h, first, sort)
    return indptr, grouped, bool(in_order), bool(sorted_rows)


def _bucket_shift(rows: int, entries: int) -> int | None:
    """log2 of the rows per bucket of the two-pass grouping (about :data:`_BUCKETS`
    buckets), or None where one direct scatter serves: a small matrix, whose output stays
    in cache, or one of so many rows that a bucket's row would not fit in 16 bits.

    >>> _bucket_shift(1_000_000, 10_000_000), _bucket_shift(1_000, 10_000_000)
    (11, 1)
    >>> _bucket_shift(1_000_000, 100_000) is None
    True
    """
    if entries < _BUCKETED:
        return None
    shift = max(0, (rows - 1) // _BUCKETS).bit_length()
    return shift if shift <= 16 else None


def _scatter(k: Any, row: np.ndarray, col: np.ndarray, indptr: np.ndarray, out: np.ndarray,
             h: int, first: np.ndarray | None, sort: bool) -> bool:
    """``col`` grouped by row into ``out`` (stably), the entries before ``h`` and from it
    on their own cores where ``first`` counts the first part's entries of each row;
    whether every row's columns are now in increasing order (only where ``sort`` asked
    for it). A large matrix takes two passes, to buckets of rows and then within each
    bucket (see the C passes), each split between two threads."""
    rows = indptr.size - 1
    shift = _bucket_shift(rows, row.size)
    threaded = first is not None and two_threads()
    if shift is None:
        if not threaded:
            k.scatter_rows(row, col, indptr, out)
        else:
            later = indptr.copy()  # where the second part's entries of each row start
            later[:-1] += first
            on_two_threads(k.scatter_rows, (row[:h], col[:h], indptr, out),
                           (row[h:], col[h:], later, out))
        return False
    low = np.empty(row.size, np.uint16)
    starts = indptr[:-1:1 << shift].copy()  # each bucket's first entry
    buckets = starts.size
    if not threaded:
        k.bucket_rows(row, col, shift, starts, out, low)
        k.settle_rows(indptr, out, low, shift, 0, buckets, sort)
        return sort
    assert first is not None
    later = starts + np.add.reduceat(first, np.arange(0, rows, 1 << shift))
    on_two_threads(k.bucket_rows, (row[:h], col[:h], shift, starts, out, low),
                   (row[h:], col[h:], shift, later, out, low))
    middle = int(np.searchsorted(indptr[:-1:1 << shift], indptr[-1] // 2))
    on_two_threads(k.settle_rows, (indptr, out, low, shift, 0, middle, sort),
                   (indptr, out, low, shift, middle, buckets, sort))
    return sort


def _grouped(k: Any, row: np.ndarray, col: np.ndarray, rows: int, cols: int,
             row_counts: RowCounts | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row pointers and the columns grouped by row, each row sorted (never reordering the
    caller's array)."""
    indptr, colidx, _, sorted_rows = group_by_row(k, row, col, rows, cols, row_counts, True)
    if not sorted_rows:
        colidx = col.copy() if colidx is col else colidx
        if colidx.size < THREADED_GROUPING or not two_threads():
            k.sort_rows(indptr, colidx)
        else:  # the rows of each half of the entries on their own core
            m = int(np.searchsorted(indptr, indptr[-1] // 2))
            on_two_threads(k.sort_rows, (indptr[: m + 1], colidx), (indptr[m:], colidx))
    return indptr, colidx


def _native_counts(k: Any, row: np.ndarray, col: np.ndarray, rows: int, cols: int,
                   halfwidth: int, row_counts: RowCounts | None = None) -> Counts:
    row, col = index_pair(row, col)
    indptr, colidx = _grouped(k, row, col, rows, cols, row_counts)
    nlev = _levels(rows)
    scalars, tot, mx = np.zeros(7, np.int64), np.zeros(nlev, np.int64), np.zeros(nlev, np.int64)
    nblocks = np.zeros(len(GROUP_SHIFTS), np.int64)
    hist = np.zeros((len(GROUP_SHIFTS), MAX_COUNT + 1), np.int64)
    # per column: the last row that touched it, and its length
    state = np.full((cols, 2), (-1, 0), np.int32 if rows < 2**31 - 1 else np.int64)
    diag_bits = np.zeros(((rows + cols - 1) >> 6) + 1, np.uint64)

    def mirrored() -> Any:
        return (k.mirrored(indptr, colidx, symmetry_stride(colidx.size))
                if rows == cols else None)

    if colidx.size < _THREADED or not two_threads():
        k.sweep_groups(indptr, colidx, cols, MAX_COUNT, nblocks, hist)
        k.sweep_panels(indptr, colidx, halfwidth, state, diag_bits, scalars, tot, mx)
        mirror = mirrored()
    else:
        # the sweeps touch disjoint scratch arrays and release the GIL: two cores. The
        # group sweep costs about twice the panel sweep, so a second thread takes its
        # first rows and this one the panel sweep, the group sweep's last rows and the
        # symmetry sample; the split falls on a multiple of the largest group height,
        # where the group sweep starts afresh, so the two parts' counts add up to the
        # whole's
        split = _group_split(indptr)
        nblocks2, hist2 = np.zeros_like(nblocks), np.zeros_like(hist)
        groups = threading.Thread(target=k.sweep_groups, args=(
            indptr[: split + 1], colidx, cols, MAX_COUNT, nblocks, hist))
        groups.start()
        k.sweep_panels(indptr, colidx, halfwidth, state, diag_bits, scalars, tot, mx)
        k.sweep_groups(indptr[split:], colidx, cols, MAX_COUNT, nblocks2, hist2)
        mirror = mirrored()
        groups.join()
        nblocks += nblocks2
        hist += hist2
    diag = np.unpackbits(diag_bits.view(np.uint8), bitorder="little")[: rows + cols - 1]
    return Counts(scalars, tot, mx, nblocks, hist, diag.astype(np.bool_), mirror,
                  np.diff(indptr), state[:, 1].astype(np.int64))


def _group_split(indptr: np.ndarray) -> int:
    """The row where the group sweep's second part starts: about :data:`_GROUP_SHARE` of
    the entries before it, on a multiple of the largest group's height (2 ** 5 rows).

    >>> _group_split(np.arange(0, 1001) * 10)   # 1,000 rows of 10 entries: 800 -> 800
    800
    >>> _group_split(np.arange(0, 1011) * 10)   # 1,010 rows: 808 -> 800
    800
    """
    rows = indptr.size - 1
    # an integer bound: a float one would convert every row pointer to a float first
    at = int(np.searchsorted(indptr, math.ceil(_GROUP_SHARE * int(indptr[-1]))))
    step = 1 << GROUP_SHIFTS[-1]
    return min(rows, at // step * step)


def _numba_counts(row: np.ndarray, col: np.ndarray, rows: int, cols: int,
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
    found: list[Any] = []
    groups = threading.Thread(target=lambda: found.extend(
        k.sweep_groups(indptr, colidx, rows, cols, MAX_COUNT)))
    groups.start()
    scalars, tot, mx = k.sweep_panels(indptr, colidx, rows, halfwidth,
                                      np.full(cols, -1, stamp), diag_bits)
    groups.join()
    nblocks, hist = found
    diag = np.unpackbits(diag_bits.view(np.uint8), bitorder="little")[: rows + cols - 1]
    diag = diag.astype(np.bool_)
    scalars = np.append(scalars, _diagonal_cells(diag, rows, cols))
    mirror = None
    if rows == cols:
        checked, hits = k.mirrored(indptr, colidx, symmetry_stride(colidx.size))
        mirror = (int(checked), int(hits))
    return Counts(scalars, tot, mx, nblocks, hist, diag, mirror, np.diff(indptr),
                  np.bincount(col, minlength=cols))


def _diagonal_cells(diag: np.ndarray, rows: int, cols: int) -> int:
    """Cells of the occupied diagonals (``diag`` marks offset j - i at j - i + rows - 1):
    min(rows, cols - d) on and above the main diagonal, min(rows + d, cols) below."""
    offsets = np.flatnonzero(diag) - (rows - 1)
    lengths = np.where(offsets >= 0, np.minimum(rows, cols - offsets),
                       np.minimum(rows + offsets, cols))
    return int(lengths.sum())


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
                        lower, upper, np.count_nonzero(d == 0),
                        _diagonal_cells(diag, rows, cols)], np.int64)
    tot, mx = _panels(i, j, rows)
    blocks, hist = _groups(i, j, cols)
    mirror = None
    if rows == cols:
        keys = np.sort(i * cols + j)
        off = d != 0
        mirrored = np.isin(j[off] * cols + i[off], keys, assume_unique=False, kind="sort")
        mirror = (int(np.count_nonzero(off)), int(np.count_nonzero(mirrored)))
    return Counts(scalars, tot, mx, blocks, hist, diag, mirror, np.bincount(i, minlength=rows),
                  np.bincount(j, minlength=cols))


def counts(row: np.ndarray, col: np.ndarray, rows: int, cols: int, halfwidth: int,
           route: str | None = None, row_counts: RowCounts | None = None) -> Counts:
    """Counts of a pattern with at least one entry; ``route`` (one of
    :data:`COUNT_ROUTES`) forces a route: by default the native one, else numba above
    :data:`SMALL` entries and numpy below. ``row_counts``, the reader's count of ``row``
    (``Matrix.row_counts``), spares the native route its own."""
    k = native()
    if route is not None:
        check_route(route, COUNT_ROUTES, "the structure counts")
    if route is None:
        route = "native" if k is not None else "numpy" if row.size <= SMALL else "numba"
    elif route == "compiled":
        route = "native" if k is not None else "numba"
    if route == "numpy":
        return _numpy(row, col, rows, cols, halfwidth)
    if route == "numba":
        return _numba_counts(row, col, rows, cols, halfwidth)
    if k is None:
        raise RuntimeError("the native structure passes were not built with this package")
    return _native_counts(k, row, col, rows, cols, halfwidth, row_counts)
