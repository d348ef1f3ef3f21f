"""Structure of a sparsity pattern: the features the traffic models need.

Every feature is computed over whole arrays (no Python loop per nonzero or per row).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .io import Matrix

__all__ = ["Structure", "measure"]


@dataclass(frozen=True)
class Structure:
    """Features of one matrix's pattern (counts are of stored entries)."""

    rows: int
    cols: int
    stored_entries: int
    numeric_nonzeros: int
    nonempty_rows: int
    nonempty_cols: int  # k_used: the rows of B that the kernel must read
    max_row_length: int

    @property
    def density(self) -> float:
        cells = self.rows * self.cols
        return self.stored_entries / cells if cells else 0.0


def _count_nonempty(index: np.ndarray, size: int) -> int:
    if index.size == 0:
        return 0
    seen = np.zeros(size, dtype=np.bool_)
    seen[index] = True
    return int(np.count_nonzero(seen))


def measure(matrix: Matrix) -> Structure:
    """Measure the pattern features of ``matrix``.

    >>> import numpy as np
    >>> from sparsroof.io import Header, Matrix
    >>> h = Header("x", "coordinate", "pattern", "general", 3, 4, 3)
    >>> m = Matrix("x", "x", 3, 4, np.array([0, 0, 2]), np.array([1, 3, 1]), None, h)
    >>> s = measure(m)
    >>> (s.nonempty_rows, s.nonempty_cols, s.max_row_length)
    (2, 2, 2)
    """
    row_lengths = np.bincount(matrix.row, minlength=matrix.rows) if matrix.rows else np.zeros(0)
    return Structure(
        rows=matrix.rows,
        cols=matrix.cols,
        stored_entries=matrix.stored_entries,
        numeric_nonzeros=matrix.numeric_nonzeros,
        nonempty_rows=int(np.count_nonzero(row_lengths)),
        nonempty_cols=_count_nonempty(matrix.col, matrix.cols),
        max_row_length=int(row_lengths.max()) if row_lengths.size else 0,
    )
