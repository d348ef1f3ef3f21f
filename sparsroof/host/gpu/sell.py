"""Sliced ELL as cuSPARSE stores it (``cusparseCreateSlicedEll``), built from CSR.

The rows are cut into slices of :data:`SELL_SLICE` rows, in their own order (no sorting),
each slice as wide as its longest row; a slice's slots are stored column by column, so the
entry in row ``r`` of slice ``s`` at slot ``j`` is at ``offsets[s] + j * C + r``, and a
padding slot has column -1 and value 0. The last slice is padded to ``C`` rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SELL_SLICE", "sell_arrays", "sell_slots"]

#: rows per slice (one warp)
SELL_SLICE = 32


def _widths(indptr: np.ndarray, slice_rows: int) -> np.ndarray:
    lengths = np.diff(indptr)
    slices = -(-lengths.size // slice_rows)
    padded = np.zeros(slices * slice_rows, dtype=np.int64)
    padded[:lengths.size] = lengths
    return padded.reshape(slices, slice_rows).max(axis=1, initial=0)


def sell_slots(indptr: np.ndarray, slice_rows: int = SELL_SLICE) -> int:
    """Slots the SELL of a CSR matrix with row pointers ``indptr`` stores, padding included.

    >>> sell_slots(np.array([0, 3, 4, 4]), slice_rows=2)   # rows of 3, 1, 0 entries
    6
    """
    return int(_widths(indptr, slice_rows).sum()) * slice_rows


def sell_arrays(csr: Any, slice_rows: int = SELL_SLICE
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, column indices (int32), slice offsets (int32)) of the scipy CSR matrix
    ``csr`` (canonical: sorted, no duplicates) in SELL.

    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [4.0, 0.0, 0.0]]))
    >>> values, cols, offsets = sell_arrays(a, slice_rows=2)
    >>> offsets.tolist(), cols.tolist(), values.tolist()
    ([0, 4, 6], [0, 2, 1, -1, 0, -1], [1.0, 3.0, 2.0, 0.0, 4.0, 0.0])
    """
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    rows = indptr.size - 1
    widths = _widths(indptr, slice_rows)
    offsets = np.zeros(widths.size + 1, dtype=np.int64)
    np.cumsum(widths * slice_rows, out=offsets[1:])
    total = int(offsets[-1])
    values = np.zeros(total, dtype=csr.dtype)
    cols = np.full(total, -1, dtype=np.int32)
    lengths = np.diff(indptr)
    row = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    slot = np.arange(row.size, dtype=np.int64) - indptr[row]
    at = offsets[row // slice_rows] + slot * slice_rows + row % slice_rows
    values[at] = csr.data
    cols[at] = csr.indices
    return values, cols, offsets.astype(np.int32)
