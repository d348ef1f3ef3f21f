"""The numpy, native and numba routes of the distinct-count features agree exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_array

from sparsroof.matrix.generate import stencil_2d
from sparsroof.structure.counts import counts, native

from ..conftest import require_native

_COMPILED = ["numba", *(["native"] if native() is not None else [])]
_FIELDS = ("scalars", "panel_total", "panel_max", "blocks", "nm_hist", "diag", "row_lengths",
           "col_lengths")


def _both(row: np.ndarray, col: np.ndarray, rows: int, cols: int) -> None:
    a = counts(row, col, rows, cols, halfwidth=3, route="numpy")
    for route in _COMPILED:
        for dtype in (np.int32, np.int64):
            b = counts(row.astype(dtype), col.astype(dtype), rows, cols, halfwidth=3,
                       route=route)
            for name in _FIELDS:
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name),
                                              err_msg=f"{route} {dtype.__name__} {name}")
            assert a.mirror == b.mirror


def _skip_without_native() -> None:
    require_native(native(), "sparsroof.structure._native")


def test_native_route_is_built() -> None:
    """The package builds its C passes (skipped where no C compiler was at hand)."""
    _skip_without_native()
    assert counts(np.array([0]), np.array([0]), 1, 1, 0).scalars[5] == 1


def test_native_route_rejects_an_index_outside_the_matrix() -> None:
    _skip_without_native()
    with pytest.raises(ValueError, match="outside"):
        counts(np.array([0, 3]), np.array([0, 0]), 2, 2, 0, route="native")


@st.composite
def _patterns(draw):  # type: ignore[no-untyped-def]
    rows, cols = draw(st.integers(1, 70)), draw(st.integers(1, 70))
    n = draw(st.integers(1, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # duplicates and any order, as files may hold them
    return (rng.integers(0, rows, n).astype(np.int32), rng.integers(0, cols, n).astype(np.int32),
            rows, cols)


@settings(max_examples=60, deadline=None)
@given(_patterns())
def test_routes_agree_on_random_patterns(case) -> None:  # type: ignore[no-untyped-def]
    _both(*case)


@settings(max_examples=40, deadline=None)
@given(_patterns())
def test_routes_agree_where_grouping_and_sorting_run_on_two_threads(case) -> None:  # type: ignore[no-untyped-def]
    from sparsroof.structure import counts as c

    kept = c.THREADED_GROUPING
    c.THREADED_GROUPING = 2
    try:
        _both(*case)
    finally:
        c.THREADED_GROUPING = kept


@pytest.mark.parametrize("n", [5, 16, 33])
def test_routes_agree_on_a_stencil(n: int) -> None:
    g = stencil_2d(n)
    _both(g.row.astype(np.int32), g.col.astype(np.int32), g.rows, g.cols)


@pytest.mark.parametrize("shape", ["stencil", "uneven"])
def test_routes_agree_where_the_group_sweep_is_split_over_two_threads(shape: str) -> None:
    """Above the threaded size the native group sweep runs in two parts, split at a
    multiple of the largest group height: the parts' counts add up to the whole's."""
    from sparsroof.structure import counts as module

    if shape == "stencil":
        g = stencil_2d(150)   # 112,000 entries
        row, col, rows, cols = g.row, g.col, g.rows, g.cols
    else:  # rows of 0 to 60 entries, so that the split row lands mid-pattern
        rng = np.random.default_rng(5)
        rows = cols = 3001
        lengths = rng.integers(0, 61, rows)
        row = np.repeat(np.arange(rows), lengths)
        col = rng.integers(0, cols, row.size)
    assert row.size >= module._THREADED
    _both(row.astype(np.int32), col.astype(np.int32), rows, cols)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_native_sort_orders_rows_short_and_long(dtype) -> None:  # type: ignore[no-untyped-def]
    """Rows up to 32 entries are sorted by insertion, longer ones by qsort: both give each
    row's columns in increasing order, duplicates kept, at the lengths around the switch."""
    _skip_without_native()
    rng = np.random.default_rng(3)
    lengths = np.array([0, 1, 2, 31, 32, 33, 100, 5, 32, 0, 64])
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    colidx = rng.integers(0, 40, indptr[-1]).astype(dtype)  # duplicates within rows
    bounds = zip(indptr[:-1], indptr[1:], strict=True)
    expected = np.concatenate([np.sort(colidx[s:e]) for s, e in bounds])
    native().sort_rows(indptr, colidx)
    np.testing.assert_array_equal(colidx, expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=40),
       st.sampled_from(["file", "by row", "by column"]))
def test_the_counting_sort_on_two_threads_is_the_one_pass_sort(entries, order) -> None:  # type: ignore[no-untyped-def]
    # the halves meet anywhere: inside a row, between rows, out of order at the seam only
    from sparsroof.structure import counts as c

    k = native()
    require_native(k, "sparsroof.structure._native")
    row, col = (np.array(a, np.int32) for a in zip(*entries, strict=True))
    if order != "file":
        keys = (col, row) if order == "by row" else (row, col)
        o = np.lexsort(keys)
        row, col = row[o], col[o]
    one = c.group_by_row(k, row, col, 6, 6)
    c.THREADED_GROUPING, kept = 2, c.THREADED_GROUPING
    try:
        two = c.group_by_row(k, row, col, 6, 6)
    finally:
        c.THREADED_GROUPING = kept
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
    assert one[2:] == two[2:]
    # and both are the stable sort by row
    o = np.argsort(row, kind="stable")
    assert np.array_equal(one[1], col[o]) and one[2] == bool(np.all(np.diff(row) >= 0))


def test_an_index_outside_the_matrix_is_refused_from_either_thread(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from sparsroof.structure import counts as c

    k = native()
    require_native(k, "sparsroof.structure._native")
    monkeypatch.setattr(c, "THREADED_GROUPING", 2)
    for bad in (0, 3):  # in the first half, then in the second
        row = np.array([1, 0, 1, 0], np.int32)
        row[bad] = 9
        with pytest.raises(ValueError, match="outside"):
            c.group_by_row(k, row, np.zeros(4, np.int32), 2, 2)


def test_a_process_kept_to_one_thread_starts_none_and_measures_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch worker among as many as cores keeps its passes on one thread: no second
    thread is started, and the structure is the two threads' one."""
    from sparsroof.matrix.mtx import Matrix
    from sparsroof.passes import arrays
    from sparsroof.structure import counts as module
    from sparsroof.structure.features import measure

    g = stencil_2d(150)
    monkeypatch.setattr(module, "THREADED_GROUPING", 2)
    m = Matrix.from_scipy(coo_array((np.ones(g.row.size), (g.row[::-1], g.col[::-1])),
                                    shape=(g.rows, g.cols)), "shuffled")
    both = measure(m)
    monkeypatch.setattr(arrays, "_SECOND_THREAD", [False])

    def refused(*args: object) -> None:
        raise AssertionError("a second thread was started")
    monkeypatch.setattr(module, "on_two_threads", refused)
    assert repr(measure(m)) == repr(both)


@settings(max_examples=60, deadline=None)
@given(_patterns(), st.booleans(), st.booleans(), st.sampled_from([np.int32, np.int64]))
def test_grouping_in_buckets_is_the_stable_sort_by_row(case, threaded, sort, dtype) -> None:  # type: ignore[no-untyped-def]
    """The two-pass grouping (entries to buckets of rows, then to rows within each
    bucket), on one or two threads, puts every row's columns where a stable sort by row
    puts them, in file order, or in increasing order where ``sort`` asks for it."""
    _skip_without_native()
    from sparsroof.structure import counts as c

    row, col, rows, cols = case
    row, col = row.astype(dtype), col.astype(dtype)
    kept = c._BUCKETED, c._BUCKETS, c.THREADED_GROUPING
    c._BUCKETED, c._BUCKETS = 1, 4
    c.THREADED_GROUPING = 2 if threaded else 1 << 40
    try:
        indptr, grouped, in_order, sorted_rows = c.group_by_row(native(), row, col, rows, cols,
                                                                sort=sort)
    finally:
        c._BUCKETED, c._BUCKETS, c.THREADED_GROUPING = kept
    order = np.argsort(row, kind="stable")
    np.testing.assert_array_equal(indptr, np.concatenate([[0], np.cumsum(
        np.bincount(row, minlength=rows))]))
    assert in_order == bool(np.all(np.diff(row) >= 0))
    expected = col[order]
    if sort and not in_order:
        expected = col[np.lexsort((col, row))]
        assert sorted_rows
    np.testing.assert_array_equal(grouped, expected)
    assert grouped.dtype == col.dtype


@pytest.mark.parametrize(("rows", "buckets"), [(65536, 1), (65537, 2), (70000, 1), (3, 512),
                                               (1, 1)])
def test_grouping_in_buckets_at_the_widest_buckets_and_a_reader_split(
        monkeypatch: pytest.MonkeyPatch, rows: int, buckets: int) -> None:
    """Buckets of 2^16 rows (the widest a bucket's row fits 16 bits for), a last bucket
    cut short, and more rows than that (one direct scatter instead), each from the
    reader's counts of two parts split at an arbitrary entry: the stable sort by row."""
    _skip_without_native()
    from sparsroof.matrix.scan import RowCounts
    from sparsroof.structure import counts as c

    monkeypatch.setattr(c, "_BUCKETED", 1)
    monkeypatch.setattr(c, "_BUCKETS", buckets)
    rng = np.random.default_rng(rows)
    row = rng.integers(0, rows, 3000).astype(np.int32)
    col = rng.integers(0, 50, 3000).astype(np.int32)
    shift = c._bucket_shift(rows, row.size)
    assert shift == (None if (rows - 1) // buckets >= 1 << 16 else
                     max(0, (rows - 1) // buckets).bit_length())
    for split in (0, 1, 1234, 2999):
        first = np.bincount(row[:split], minlength=rows)
        second = np.bincount(row[split:], minlength=rows)
        counted = RowCounts(row, split, first, second, (False, False), (False, False))
        for sort in (False, True):
            indptr, grouped, _, in_rows = c.group_by_row(native(), row, col, rows, 50,
                                                         counted, sort=sort)
            # sorted where asked and grouped in buckets; the direct scatter leaves the sort
            # to its caller, and says so
            assert in_rows == (sort and shift is not None)
            expected = col[np.lexsort((col, row))] if in_rows else \
                col[np.argsort(row, kind="stable")]
            np.testing.assert_array_equal(grouped, expected, err_msg=f"{split} {sort}")
            assert indptr[-1] == row.size


def test_the_bucket_passes_refuse_arguments_that_would_write_past_their_arrays() -> None:
    """The two passes take their counts from the caller; counts that disagree with the
    entries are refused with an error, never written past an array."""
    _skip_without_native()
    k = native()
    row, col = np.array([0, 5, 9], np.int32), np.array([1, 2, 3], np.int32)
    out, low = np.empty(3, np.int32), np.empty(3, np.uint16)
    with pytest.raises(ValueError, match="outside its buckets"):  # row 9 in bucket 4 of 2
        k.bucket_rows(row, col, 1, np.array([0, 0], np.int64), out, low)
    with pytest.raises(ValueError, match="outside its buckets"):  # bucket 4 starts past 3
        k.bucket_rows(row, col, 1, np.array([0, 1, 2, 2, 3], np.int64), out, low)
    with pytest.raises(ValueError, match="bad shift or output size"):
        k.bucket_rows(row, col[:2], 1, np.zeros(5, np.int64), out, low)
    with pytest.raises(ValueError, match="out of order"):
        k.settle_rows(np.array([0, 2, 1, 3], np.int64), out, low, 1, 0, 2, False)
    with pytest.raises(ValueError, match="outside its bucket's rows"):  # three in row 1
        k.settle_rows(np.array([0, 1, 2, 3], np.int64), out, np.ones(3, np.uint16), 1, 0,
                      2, False)
    with pytest.raises(ValueError, match="buckets outside the matrix"):
        k.settle_rows(np.array([0, 1, 2, 3], np.int64), out, low, 1, 0, 3, False)


def test_routes_agree_on_symmetry_up_to_the_numpy_routes_size() -> None:
    """The numpy route checks every entry's mirror; so do the compiled routes up to its
    size (SMALL entries), and past it they sample about SYMMETRY_SAMPLE entries."""
    from sparsroof.structure.counts import SMALL, SYMMETRY_SAMPLE

    rng = np.random.default_rng(11)
    n = SMALL
    row, col = rng.integers(0, 3000, n), rng.integers(0, 3000, n)
    half = n // 2  # half the entries mirrored: a share the sample would miss exactly
    row[half:], col[half:] = col[:half], row[:half]
    _both(row, col, 3000, 3000)
    big = counts(np.append(row, 0), np.append(col, 1), 3000, 3000, halfwidth=3)
    assert big.mirror is not None and big.mirror[0] <= 2 * SYMMETRY_SAMPLE
