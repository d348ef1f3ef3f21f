"""Seeded, reproducible generators of sparse matrices with a known structure.

Each generator returns coordinate arrays ``(rows, cols, row, col, values)`` built with
whole-array numpy; :func:`write` saves them as Matrix Market.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Generated", "stencil_2d", "uniform_random", "write"]


@dataclass(frozen=True, eq=False)
class Generated:
    rows: int
    cols: int
    row: np.ndarray
    col: np.ndarray
    values: np.ndarray

    @property
    def nnz(self) -> int:
        return int(self.row.size)


def stencil_2d(n: int) -> Generated:
    """Five-point Laplacian on an n x n grid: 4 on the diagonal, -1 for each neighbour.

    >>> g = stencil_2d(3)
    >>> g.rows, g.nnz   # 9 diagonal + 2·(3·2) horizontal + 2·(3·2) vertical neighbours
    (9, 33)
    """
    idx = np.arange(n * n, dtype=np.int64).reshape(n, n)
    pairs = [(idx.ravel(), idx.ravel(), np.full(n * n, 4.0))]
    for a, b in ((idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])):
        a, b = a.ravel(), b.ravel()
        pairs += [(a, b, np.full(a.size, -1.0)), (b, a, np.full(a.size, -1.0))]
    row = np.concatenate([p[0] for p in pairs])
    col = np.concatenate([p[1] for p in pairs])
    order = np.lexsort((col, row))
    vals = np.concatenate([p[2] for p in pairs])
    return Generated(n * n, n * n, row[order], col[order], vals[order])


def uniform_random(rows: int, cols: int, nnz: int, seed: int = 0) -> Generated:
    """About ``nnz`` entries at uniformly random positions (duplicates removed).

    >>> g = uniform_random(100, 100, 500, seed=1)
    >>> 480 <= g.nnz <= 500
    True
    """
    rng = np.random.default_rng(seed)
    flat = np.sort(rng.integers(0, rows * cols, size=nnz, dtype=np.int64))
    flat = flat[np.concatenate(([True], flat[1:] != flat[:-1]))]
    values = rng.random(flat.size)
    return Generated(rows, cols, flat // cols, flat % cols, values)


def write(g: Generated, path: str | Path, comment: str = "") -> None:
    """Write ``g`` as a real general Matrix Market coordinate file."""
    import fast_matrix_market as fmm

    fmm.write_coo(str(path), (g.values, (g.row, g.col)), shape=(g.rows, g.cols),
                  comment=comment)
