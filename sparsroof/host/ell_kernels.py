"""ELL and HYB SpMV on this host, compiled with numba (scipy has neither format).

ELL stores every row padded to the longest row's K entries: values and int32 column
indices in two rows x K arrays, row-major (a CPU core walks a row's slots in order; a
GPU would store them column-major for coalescing, with the same bytes). A padding slot
holds the value 0 and the row's last column, so it reads an x entry already in cache.
HYB (Bell & Garland) is ELL of width K_h, the largest K that at least max(4096, rows/3)
rows reach (:func:`sparsroof.model.storage.hyb_width`), plus COO for the entries beyond.
Both multiply by one vector (SpMV); bytes moved are those of :mod:`sparsroof.model.storage`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

__all__ = ["Padded", "padded", "spmv"]


@dataclass(frozen=True, eq=False)
class Padded:
    """ELL part (rows x width) and COO part (empty for ELL) of one matrix."""

    values: np.ndarray
    columns: np.ndarray
    coo_rows: np.ndarray
    coo_columns: np.ndarray
    coo_values: np.ndarray

    @property
    def width(self) -> int:
        return int(self.values.shape[1])


def padded(csr: Any, storage: str) -> Padded:
    """``csr`` (scipy, sorted indices) as ELL (``storage`` "ell") or HYB ("hyb").

    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 0.0]]))
    >>> p = padded(a, "ell")
    >>> p.values.tolist(), p.columns.tolist()
    ([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]], [[0, 1, 2], [1, 1, 1]])
    >>> padded(a, "hyb").width, padded(a, "hyb").coo_values.tolist()  # 2 rows < 4096
    (0, [1.0, 2.0, 3.0, 4.0])
    """
    from ..model.storage import hyb_width

    rows = csr.shape[0]
    lengths = np.diff(csr.indptr).astype(np.int64)
    width = int(lengths.max(initial=0))
    if storage == "hyb":
        width = hyb_width(np.bincount(lengths), rows)
    beyond = int(np.maximum(lengths - width, 0).sum())
    values = np.empty((rows, width), dtype=csr.data.dtype)
    columns = np.empty((rows, width), np.int32)
    coo = (np.empty(beyond, np.int32), np.empty(beyond, np.int32),
           np.empty(beyond, csr.data.dtype))
    _pad()(csr.indptr.astype(np.int64), csr.indices, csr.data, values, columns, *coo)
    return Padded(values, columns, *coo)


@cache
def _pad() -> Callable[..., None]:
    from ..passes.compiled import njit

    @njit(cache=True)
    def pad(indptr: Any, indices: Any, data: Any, values: Any, columns: Any,
            coo_rows: Any, coo_columns: Any, coo_values: Any) -> None:  # pragma: no cover
        rows, width = values.shape
        p = 0
        for i in range(rows):
            start, end = indptr[i], indptr[i + 1]
            last = indices[end - 1] if end > start else 0  # an empty row's padding: x[0]
            for k in range(width):
                if start + k < end:
                    values[i, k] = data[start + k]
                    columns[i, k] = indices[start + k]
                else:
                    values[i, k] = 0
                    columns[i, k] = last
            for j in range(start + width, end):
                coo_rows[p] = i
                coo_columns[p] = indices[j]
                coo_values[p] = data[j]
                p += 1

    return pad


@cache
def _kernel() -> Callable[..., None]:
    from ..passes.compiled import njit

    @njit(cache=True)
    def run(values: Any, columns: Any, coo_rows: Any, coo_columns: Any, coo_values: Any,
            x: Any, y: Any) -> None:  # pragma: no cover
        rows, width = values.shape
        for i in range(rows):
            acc = 0.0
            for k in range(width):
                acc += values[i, k] * x[columns[i, k]]
            y[i] = acc
        for p in range(coo_rows.size):
            y[coo_rows[p]] += coo_values[p] * x[coo_columns[p]]

    return run


def spmv(p: Padded, x: np.ndarray) -> Callable[[], np.ndarray]:
    """A call that computes y = A·x with ``p`` (into one y it returns).

    >>> import scipy.sparse as sp
    >>> a = sp.random(50, 40, density=0.2, format="csr", random_state=0)
    >>> x = np.arange(40.0)
    >>> all(np.allclose(spmv(padded(a, f), x)(), a @ x) for f in ("ell", "hyb"))
    True
    """
    from .stopwatch import shifted

    run = _kernel()
    y = shifted(np.zeros(p.values.shape[0], dtype=np.result_type(p.values, x)))

    def call() -> np.ndarray:
        run(p.values, p.columns, p.coo_rows, p.coo_columns, p.coo_values, x, y)
        return y

    return call
