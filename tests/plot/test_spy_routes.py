"""The spy image's cells: the numpy, native and numba routes count the same entries."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsroof.matrix.mtx import Header, Matrix
from sparsroof.plot.spy import density
from sparsroof.structure.counts import native

from ..conftest import require_native

_COMPILED = ["numba", "compiled", *(["native"] if native() is not None else [])]


def _matrix(rows: int, cols: int, row: np.ndarray, col: np.ndarray) -> Matrix:
    header = Header("m", "coordinate", "pattern", "general", rows, cols, row.size)
    return Matrix("m", "m", rows, cols, row, col, None, header)


def _same(rows: int, cols: int, row: np.ndarray, col: np.ndarray, bins: int) -> None:
    want = density(_matrix(rows, cols, row, col), bins, route="numpy")
    assert want.counts.sum() == row.size
    for route in _COMPILED:
        for dtype in (np.int32, np.int64) if max(rows, cols) < 2**31 else (np.int64,):
            got = density(_matrix(rows, cols, row.astype(dtype), col.astype(dtype)), bins,
                          route=route)
            np.testing.assert_array_equal(got.counts, want.counts, err_msg=f"{route} {dtype}")
            assert (got.cell_rows, got.cell_cols) == (want.cell_rows, want.cell_cols)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 3000), st.integers(0, 500), st.integers(1, 70),
       st.integers(0, 2**16))
def test_routes_agree(rows: int, cols: int, n: int, bins: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    row, col = rng.integers(0, rows, n), rng.integers(0, cols, n)
    # the last row and column, whose cell index is the largest
    _same(rows, cols, np.append(row, rows - 1), np.append(col, cols - 1), bins)


def test_routes_agree_on_64_bit_indices() -> None:
    """i · nr overflows 32 bits: the cell of the last column is still the last cell."""
    cols = 2**31 + 5
    col = np.array([0, 1, cols // 2, cols - 2, cols - 1], np.int64)
    _same(3, cols, np.array([0, 1, 2, 2, 2], np.int64), col, 512)
    d = density(_matrix(3, cols, np.zeros(5, np.int64), col), 512)
    assert d.counts.shape == (1, 512) and d.counts[0].tolist()[-1] == 2


def test_native_route_rejects_an_index_outside_the_matrix() -> None:
    require_native(native(), "sparsroof.structure._native")
    m = _matrix(4, 4, np.array([0, 4], np.int32), np.array([0, 0], np.int32))
    with pytest.raises(ValueError, match="outside"):
        density(m, 2, route="native")


def test_unknown_route() -> None:
    with pytest.raises(ValueError, match="no bogus route|unknown route"):
        density(_matrix(1, 1, np.zeros(1, np.int32), np.zeros(1, np.int32)), route="bogus")
