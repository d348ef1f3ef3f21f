"""Reverse Cuthill-McKee by the C passes numbers the vertices exactly as scipy's does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsroof.matrix.mtx import Header, Matrix
from sparsroof.structure.counts import SMALL, native
from sparsroof.structure.features import measure
from sparsroof.structure.reorder import (
    RCM_ROUTES,
    _native_rcm,
    _pattern,
    _symmetrized,
    ordering,
    permute,
    reorder,
)

from ..conftest import require_native


@pytest.fixture(autouse=True)
def _needs_the_c_build() -> None:
    require_native(native(), "sparsroof.structure._native")


def _matrix(n: int, row: np.ndarray, col: np.ndarray) -> Matrix:
    header = Header("m", "coordinate", "pattern", "general", n, n, row.size)
    return Matrix("m", "m", n, n, row.astype(np.int32), col.astype(np.int32), None, header)


def _same(m: Matrix) -> None:
    want = ordering(m, "rcm", route="numpy")
    got = ordering(m, "rcm", route="native")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


#: the arguments of :func:`_random`: size, entries, kind, seed
_PATTERNS = (st.integers(1, 60), st.integers(0, 300),
             st.sampled_from(["any", "sorted", "repeats"]), st.integers(0, 2**16))


def _random(n: int, nnz: int, kind: str, seed: int) -> Matrix:
    """A random n x n pattern of ``kind``: any (unsorted, repeats possible), sorted
    without repeats, or with 256 repeats of one entry (they wrap to 0 in 8 bits)."""
    rng = np.random.default_rng(seed)
    row, col = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    if kind == "sorted":
        key = np.unique(row * n + col)
        row, col = key // n, key % n
    elif kind == "repeats":
        row = np.concatenate((row, np.zeros(256, np.int64)))
        col = np.concatenate((col, np.full(256, n - 1)))
    return _matrix(n, row, col)


@settings(max_examples=80, deadline=None)
@given(*_PATTERNS)
def test_native_numbering_is_scipys(n: int, nnz: int, kind: str, seed: int) -> None:
    """Rows sorted without repeats take scipy's merge of A and A^T; any other pattern its
    general sum, whose column order the numbering follows; 256 repeats of one entry sum
    to zero in scipy's 8-bit counts and drop out of the graph."""
    _same(_random(n, nnz, kind, seed))


@settings(max_examples=80, deadline=None)
@given(*_PATTERNS)
def test_the_sum_built_in_two_halves_is_the_sum_built_whole(
        n: int, nnz: int, kind: str, seed: int) -> None:
    """A + A^T from two halves of A's rows (each pass on its own thread, the second
    half's rows moved to follow the first's) is the one-pass sum, array for array, and
    numbers the vertices as scipy does."""
    m = _random(n, nnz, kind, seed)
    indptr, indices = _pattern(m.row, m.col, (n, n))
    for whole, halves in zip(_symmetrized(native(), indptr, indices, split=False),
                             _symmetrized(native(), indptr, indices, split=True), strict=True):
        np.testing.assert_array_equal(halves, whole)
    np.testing.assert_array_equal(_native_rcm(native(), indptr, indices, split=True),
                                  ordering(m, "rcm", route="numpy")[0])


def test_native_numbering_above_the_small_size() -> None:
    """Past :data:`SMALL` entries the pattern is grouped by the native counting sort."""
    n = 50_000
    rng = np.random.default_rng(3)
    row, col = rng.integers(0, n, SMALL + 1000), rng.integers(0, n, SMALL + 1000)
    _same(_matrix(n, row, col))
    order = np.argsort(row * n + col, kind="stable")  # rows sorted: the merge
    _same(_matrix(n, row[order], col[order]))


def test_routes() -> None:
    assert RCM_ROUTES == ("compiled", "native", "numpy")
    with pytest.raises(ValueError, match="numba"):
        ordering(_matrix(2, np.array([0]), np.array([1])), "rcm", route="numba")


def _pairs(row: np.ndarray, col: np.ndarray, n: int) -> np.ndarray:
    return np.sort(row.astype(np.int64) * n + col)


@pytest.mark.parametrize(("n", "nnz"), [(40, 150), (50_000, SMALL + 1000)])
def test_rcm_writes_the_permuted_entries_grouped_by_row(n: int, nnz: int) -> None:
    """A matrix without values is permuted by the C passes with its entries written
    row by row (each row's in the original's order): the same entries, repeats included,
    as scipy's permutation applied entry by entry, counted row by row for the passes, and
    measured alike."""
    rng = np.random.default_rng(n)
    row, col = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    row, col = np.concatenate((row, row[:9])), np.concatenate((col, col[:9]))
    m = _matrix(n, row, col)
    got = reorder(m, "rcm")
    np.testing.assert_array_equal(got.row_order, ordering(m, "rcm", route="numpy")[0])
    want = permute(m, got.row_order, got.col_order)
    p = got.matrix
    assert np.all(np.diff(p.row) >= 0)
    np.testing.assert_array_equal(_pairs(p.row, p.col, n), _pairs(want.row, want.col, n))
    assert p.row_counts is not None and p.row_counts.row is p.row
    np.testing.assert_array_equal(p.row_counts.first, np.bincount(p.row, minlength=n))
    assert repr(measure(p)) == repr(measure(want))  # NaN fields compare unequal


def test_a_matrix_with_values_keeps_them_with_their_entries() -> None:
    """Values are permuted with their entries, in the original's entry order (the value
    sample, read in file order, stays the original's)."""
    n = 30
    rng = np.random.default_rng(5)
    row, col = rng.integers(0, n, 90), rng.integers(0, n, 90)
    m = _matrix(n, row, col)
    m = Matrix("m", "m", n, n, m.row, m.col, rng.random(90), m.header)
    got = reorder(m, "rcm").matrix
    assert got.values is m.values
    inverse = np.argsort(reorder(m, "rcm").row_order)
    np.testing.assert_array_equal(got.row, inverse[m.row])
