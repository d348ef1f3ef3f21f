"""Reorderings of a matrix: permute its rows (and columns) and see what the structure
becomes.

An ordering is a pair of permutations, ``row_order[new] = old`` and ``col_order[new] =
old`` (the convention of scipy's ``reverse_cuthill_mckee``): row ``new`` of the reordered
matrix is row ``row_order[new]`` of the original. The orderings:

* ``rcm`` - reverse Cuthill-McKee (Cuthill & McKee, *Reducing the Bandwidth of Sparse
  Symmetric Matrices*, 1969; reversed as George proposed), from
  ``scipy.sparse.csgraph.reverse_cuthill_mckee``: a breadth-first numbering from a
  low-degree vertex, neighbours by increasing degree, then reversed. It narrows the band,
  so a row panel touches few distinct columns. A square matrix is ordered symmetrically
  (the graph of A + Aᵀ, rows and columns alike); a rectangular one by the bipartite graph
  [[0, A], [Aᵀ, 0]], whose numbering orders the rows and the columns each.
* ``degree`` - rows by decreasing number of entries (stable: rows of equal length keep
  their order); a square matrix has its columns permuted alike, so a graph stays a graph.
  It groups the long rows (the hubs of a graph) together.

Permuting is two gathers over the coordinate arrays (no loop per entry); the entries keep
their order in the arrays, so the reordered matrix is no longer grouped by row, which
the structure pass handles. Reverse Cuthill-McKee by the C passes, of a matrix without an
array of values (a pattern, or one read for its structure), writes the permuted entries
grouped by row instead, from the pattern it grouped for the numbering.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import OptionError

if TYPE_CHECKING:  # numpy and the reader load with the first reordering: the ordering
    # names are read by every analysis, which may read its structure from the cache
    import numpy as np

    from ..matrix.mtx import Matrix

__all__ = ["ORDERINGS", "RCM_ROUTES", "Reordered", "ordering", "permute", "reorder"]

#: the routes (:data:`sparsroof.passes.arrays.ROUTES`) of reverse Cuthill-McKee: "compiled" is
#: the C build where it is built (square matrices), else scipy's ("numpy")
RCM_ROUTES = ("compiled", "native", "numpy")

#: ordering name -> what it does, in a few words
ORDERINGS: dict[str, str] = {
    "rcm": "reverse Cuthill-McKee: a narrow band",
    "degree": "rows by decreasing length",
}


@dataclass(frozen=True, eq=False)
class Reordered:
    """A matrix permuted by an ordering, and the seconds it took on this host (computing
    the permutation and applying it to the coordinate arrays)."""

    ordering: str
    matrix: Matrix
    row_order: np.ndarray
    col_order: np.ndarray
    seconds: float


def _pattern(row: np.ndarray, col: np.ndarray, shape: tuple[int, int],
             row_counts: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The pattern grouped by row: (row pointers, columns), int32 (the ordering code
    takes those). Large patterns are grouped with the structure pass's counting sort,
    native where it is built (from the reader's ``row_counts`` of ``row`` where given),
    else numba's (entries already in row order, as files usually come, are not moved);
    small ones by a stable numpy sort, which costs less than loading compiled code.
    """
    import numpy as np

    from .counts import SMALL, group_by_row, index_pair, native

    rows = shape[0]
    built = native() if row.size > SMALL else None
    if built is not None:  # the native counting sort: stable, as numba's below, without
        # loading numba (about a second)
        row, col = index_pair(row, col)
        indptr, indices, _, _ = group_by_row(built, row, col, rows, shape[1], row_counts)
    elif row.size > SMALL:
        from . import _jit

        k: Any = _jit  # compiled dispatchers: their signatures are not visible to mypy
        indptr, indices, _ = k.group_by_row(np.ascontiguousarray(row),
                                            np.ascontiguousarray(col), rows)
    else:
        indptr = np.zeros(rows + 1, np.int64)
        np.cumsum(np.bincount(row, minlength=rows), out=indptr[1:])
        indices = col[np.argsort(row, kind="stable")]
    return indptr.astype(np.int32), indices.astype(np.int32, copy=False)


def _pattern_csr(row: np.ndarray, col: np.ndarray, shape: tuple[int, int]) -> object:
    """The pattern as a scipy CSR matrix (scipy's ordering routes take one)."""
    import numpy as np
    import scipy.sparse as sp

    indptr, indices = _pattern(row, col, shape)
    return sp.csr_matrix((np.ones(indices.size, np.int8), indices, indptr), shape=shape)


def _check_size(matrix: Matrix) -> None:
    m, k = matrix.shape
    if 2 * matrix.stored_entries >= 2**31 or m + k >= 2**31:
        raise OptionError(f"{matrix.name}: too large for reverse Cuthill-McKee (scipy's "
                          "takes 32-bit indices: fewer than 2^30 entries and 2^31 rows)")


def _native_route(matrix: Matrix, route: str = "compiled") -> Any:
    """The C passes where ``route`` computes reverse Cuthill-McKee with them (a square
    matrix, the passes built), else None (scipy's route)."""
    from ..passes.arrays import check_route
    from .counts import native

    check_route(route, RCM_ROUTES, "reverse Cuthill-McKee")
    built = native()
    if route == "native" and built is None:
        raise RuntimeError("the native structure passes were not built with this package")
    return built if matrix.rows == matrix.cols and route != "numpy" else None


def _rcm(matrix: Matrix, route: str = "compiled") -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    _check_size(matrix)
    m = matrix.rows
    built = _native_route(matrix, route)
    if built is not None:
        order, _ = _native_order(built, matrix)
        return order, order
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    if m == matrix.cols:
        order = reverse_cuthill_mckee(_pattern_csr(matrix.row, matrix.col, (m, m)),
                                      symmetric_mode=False)
        return order, order
    # the bipartite graph [[0, A], [A^T, 0]]: rows are vertices 0..m-1, columns m..m+k-1
    row, col = matrix.row.astype(np.int64), matrix.col.astype(np.int64) + m
    k = matrix.cols
    both = _pattern_csr(np.concatenate((row, col)), np.concatenate((col, row)), (m + k, m + k))
    order = reverse_cuthill_mckee(both, symmetric_mode=True)
    return order[order < m], order[order >= m] - m


def _native_order(built: Any, matrix: Matrix
                  ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Reverse Cuthill-McKee of a square ``matrix`` by the C passes, and the pattern
    grouped by row it was numbered from (int32 row pointers and columns)."""
    n = matrix.rows
    pattern = _pattern(matrix.row, matrix.col, (n, n), matrix.row_counts)
    return _native_rcm(built, *pattern), pattern


def _native_rcm(built: Any, indptr: np.ndarray, indices: np.ndarray,
                split: bool | None = None) -> np.ndarray:
    """scipy's reverse Cuthill-McKee of the graph of the pattern (``indptr``,
    ``indices``: a square int32 CSR) + its transpose, numbered by the C passes: the
    same permutation (the vertices ordered by degree with the same numpy sort scipy
    calls), built in one process without scipy's sum and conversions."""
    import numpy as np

    n = indptr.size - 1
    ptr, deg, ind = _symmetrized(built, indptr, indices, split)
    order = np.empty(n, np.int32)
    built.cuthill_mckee(ptr, ind, deg, np.argsort(deg), order)
    return np.ascontiguousarray(order[::-1])


def _symmetrized(built: Any, indptr: np.ndarray, indices: np.ndarray,
                 split: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row pointers, degrees, columns) of A + A^T as scipy's sum builds it, int32. Each
    pass takes A's rows in two halves (by entries) on two cores where ``split`` (by
    default: above the structure passes' threaded size, with a second core): the second
    half's entries of a column go after the first half's in A^T, and its rows of the sum
    are written after an upper bound of the first half's, then moved to follow them."""
    import numpy as np

    from ..passes.arrays import two_threads
    from .counts import THREADED_GROUPING, on_two_threads

    n, nnz = indptr.size - 1, indices.size
    if split is None:
        split = nnz >= THREADED_GROUPING and two_threads()
    h = int(np.searchsorted(indptr, nnz // 2)) if split else n
    parts = [(0, h), (h, n)] if split else [(0, n)]

    def each(call: Any, args: list[tuple[Any, ...]]) -> list[Any]:
        if len(args) == 1:
            return [call(*args[0])]
        return list(on_two_threads(call, args[0], args[1]))

    counts = [np.zeros(n + 1, np.int32) for _ in parts]
    canonical = all(each(built.sym_count, [(indptr, indices, a, b, c)
                                           for (a, b), c in zip(parts, counts, strict=True)]))
    bp = np.cumsum(counts[0] if len(counts) == 1 else counts[0] + counts[1], dtype=np.int32)
    starts = [bp[:-1].copy()] + ([bp[:-1] + counts[0][1:]] if split else [])
    bj = np.empty(nnz, np.int32)
    each(built.sym_transpose, [(indptr, indices, a, b, pos, bj)
                               for (a, b), pos in zip(parts, starts, strict=True)])
    ptr, deg = np.zeros(n + 1, np.int32), np.empty(n, np.int32)
    ind = np.empty(2 * nnz, np.int32)
    at = [0] + ([int(indptr[h]) + int(bp[h])] if split else [])
    written = each(built.sym_union, [(indptr, indices, bp, bj, a, b, canonical, start, ptr,
                                      deg, ind) for (a, b), start in
                                      zip(parts, at, strict=True)])
    end = written[0]
    if split and at[1] != end:  # the second half's rows follow the first's
        ind[end:end + written[1]] = ind[at[1]:at[1] + written[1]]
        ptr[h + 1:] -= at[1] - end
    return ptr, deg, ind[:sum(written)]


def _rcm_grouped(built: Any, matrix: Matrix) -> tuple[np.ndarray, Matrix]:
    """Reverse Cuthill-McKee of a square ``matrix`` without values (a pattern, or read
    for its structure: its value sample stays the original's) by the C passes, and the
    matrix permuted by it with its entries written grouped by row (the pattern grouped
    for the numbering serves again: the structure passes need not group them)."""
    import numpy as np

    from ..matrix.scan import RowCounts

    _check_size(matrix)
    order, (indptr, indices) = _native_order(built, matrix)
    row = np.empty_like(matrix.row)
    col = np.empty_like(row)
    built.permuted_rows(indptr, indices, order, _inverse(order, np.dtype(np.int32)), row, col)
    # each row's entries in A's order, renumbered: grouped, not sorted
    counted = RowCounts(row, row.size, np.diff(indptr)[order], None, (True, True),
                        (False, False))
    return order, replace(matrix, row=row, col=col, row_counts=counted)


def _degree(matrix: Matrix) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    lengths = np.bincount(matrix.row, minlength=matrix.rows)
    order = np.argsort(-lengths, kind="stable")
    return order, (order if matrix.rows == matrix.cols else np.arange(matrix.cols))


_ORDER: dict[str, Callable[[Matrix], tuple[np.ndarray, np.ndarray]]] = {
    "rcm": _rcm, "degree": _degree}


def ordering(matrix: Matrix, name: str, route: str = "compiled"
             ) -> tuple[np.ndarray, np.ndarray]:
    """(row_order, col_order) of ordering ``name`` for ``matrix``; ``route`` (one of
    :data:`RCM_ROUTES`) picks how reverse Cuthill-McKee is computed (every route gives
    the same permutation).

    >>> import scipy.sparse as sp
    >>> from sparsroof.matrix.mtx import Matrix
    >>> m = Matrix.from_scipy(sp.coo_array(([1, 1, 1], ([0, 1, 1], [0, 0, 1])), shape=(2, 2)))
    >>> [o.tolist() for o in ordering(m, "degree")]    # row 1 holds 2 entries, row 0 one
    [[1, 0], [1, 0]]
    """
    if name not in _ORDER:
        raise OptionError(f"unknown ordering {name!r} (choose from {', '.join(ORDERINGS)})")
    if name == "rcm":
        return _rcm(matrix, route)
    return _ORDER[name](matrix)


def _inverse(order: np.ndarray, itype: np.dtype) -> np.ndarray:
    """new position of each old index: inverse[order[new]] = new."""
    import numpy as np

    inverse = np.empty(order.size, itype)
    inverse[order] = np.arange(order.size, dtype=itype)
    return inverse


def permute(matrix: Matrix, row_order: np.ndarray, col_order: np.ndarray) -> Matrix:
    """``matrix`` with row ``row_order[i]`` moved to i and column ``col_order[j]`` to j;
    the values go with their entries.

    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sparsroof.matrix.mtx import Matrix
    >>> m = Matrix.from_scipy(sp.coo_array(([5.0], ([0], [2])), shape=(3, 3)))
    >>> p = permute(m, np.array([2, 1, 0]), np.array([2, 1, 0]))   # reverse both
    >>> p.row.tolist(), p.col.tolist()
    ([2], [0])
    """
    from ..matrix.scan import RowCounts

    itype = matrix.row.dtype
    row = _inverse(row_order, itype)[matrix.row]
    counted = matrix.row_counts
    if counted is not None and counted.row is matrix.row:
        # row i of the permuted matrix is row row_order[i]: its count moves with it (the
        # order flags are not known: False asks the passes to check)
        counted = RowCounts(row, counted.split, counted.first[row_order],
                            None if counted.second is None else counted.second[row_order],
                            (False, False), (False, False))
    return replace(matrix, row=row, col=_inverse(col_order, matrix.col.dtype)[matrix.col],
                   row_counts=counted)


def reorder(matrix: Matrix, name: str) -> Reordered:
    """``matrix`` permuted by ordering ``name`` (see the module docstring), timed (the
    import of scipy's graph routines is not the ordering's cost, so it comes first).
    Reverse Cuthill-McKee by the C passes, of a matrix without an array of values,
    writes the permuted entries grouped by row."""
    built = _native_route(matrix) if name == "rcm" else None
    if name == "rcm" and built is None:
        import scipy.sparse.csgraph  # noqa: F401
    start = time.perf_counter()
    if built is not None and matrix.values is None:
        order, permuted = _rcm_grouped(built, matrix)
        row_order = col_order = order
    else:
        row_order, col_order = ordering(matrix, name)
        permuted = permute(matrix, row_order, col_order)
    return Reordered(name, permuted, row_order, col_order, time.perf_counter() - start)
