"""Structure of a sparsity pattern: the features the traffic models and the classifier use.

Every feature is computed over whole arrays or in the compiled O(nnz) passes of
``_kernels`` (no Python loop per nonzero or per row). Definitions:

* row/column length statistics over *all* rows (columns), empty ones included: mean, max,
  coefficient of variation (std / mean), mode, Gini coefficient, and the dispersion index
  var / (mean·(1 - mean/n)), which is about 1 when every entry is placed independently
  and uniformly (binomial lengths), below 1 for regular patterns, above 1 for skewed ones;
* ``bandwidth`` = max |j - i|; ``profile`` (the envelope) = Σ over non-empty rows of
  max(0, i - first column of row i) + Σ over non-empty columns of max(0, j - first row
  of column j): the cells between the diagonal and the first entry of each row (lower
  part) and of each column (upper part); for a symmetric pattern each half is the
  classic profile of Cuthill-McKee orderings;
* ``near_diagonal_share``: share of entries with |j - i| <= ``near_diagonal_halfwidth``
  = ceil(0.05 · max(rows, cols)); a uniformly random pattern has about 0.1 there;
* ``diagonal_cells`` = total length of the occupied diagonals within the matrix (the
  slots a DIA kernel reads); ``diagonal_fill`` = entries / ``diagonal_cells`` (1 for a
  full stencil or band, the density for a random pattern);
* ``blocks[b]``: non-empty aligned b x b blocks (i // b, j // b); fill = nnz / (blocks·b²);
* ``nm_conformance["N:M"]``: share of the non-empty groups (i, j // M) of M consecutive
  columns in a row holding at most N entries; ``nm_exact["N:M"]``: share of *all* groups
  (rows · ceil(cols / M)) holding exactly N entries, 1 for a pattern pruned to N:M;
* ``pattern_symmetry``: share of off-diagonal entries (i, j) with (j, i) also stored
  (square matrices; above 2^18 entries measured on every s-th entry, s = nnz >> 16);
* the column degree power-law fit (:mod:`sparsroof.structure.powerlaw`) and ``hub_share``: share of
  entries in the top 0.1 % and 1 % of columns by count (at least one column each);
* ``panel_columns[h]`` = (Σ over row panels [p·h, (p+1)·h) of the distinct columns in
  the panel, max over panels), for h = 1, 2, 4, ... up to the first power of two >= rows;
* ``value_distinct_share`` and ``value_integer_share``: over the magnitudes of at most
  2^16 stored values (every s-th), the share of distinct values and the share of whole
  numbers among the nonzero ones (None for a pattern file). Trained weights have almost
  all values distinct; graph weights, stencils and counts repeat a few values.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy, the matrix and the passes load with the first measurement:
    # a structure read from the cache, and the models of it, need none of them
    import numpy as np

    from ..matrix.mtx import Matrix, MatrixLike
    from .counts import Counts

__all__ = ["BLOCK_SIZES", "NM_PATTERNS", "HUB_FRACTIONS", "LengthCounts", "LengthStats",
           "Structure", "measure", "length_stats", "value_shares"]

BLOCK_SIZES = (2, 4, 8, 16, 32)
NM_PATTERNS = ((1, 2), (2, 4), (1, 4), (2, 8), (4, 8), (1, 8), (2, 16), (4, 16), (8, 16))
HUB_FRACTIONS = {"0.1%": 0.001, "1%": 0.01}
_LIST_LIMIT = 256


@dataclass(frozen=True)
class LengthStats:
    """Distribution of row (or column) lengths, empty rows included."""

    mean: float
    max: int
    cv: float  # standard deviation / mean
    mode: int
    gini: float
    dispersion: float  # variance / binomial variance mean·(1 - mean/n); ~1 when uniform


@dataclass(frozen=True)
class LengthCounts:
    """A histogram of row lengths by its nonzero bins: ``count[i]`` rows hold ``at[i]``
    entries, and the histogram has ``size`` bins (lengths 0 to the longest row). A matrix
    has few distinct row lengths, however long its longest row.

    >>> h = LengthCounts(4, (1, 3), (2, 1))
    >>> h.array().tolist(), h.summary()
    ([0, 2, 0, 1], [0, 2, 0, 1])
    """

    size: int = 1
    at: tuple[int, ...] = ()
    count: tuple[int, ...] = ()

    @classmethod
    def of(cls, counts: np.ndarray) -> LengthCounts:
        """The histogram whose bins are ``counts``."""
        import numpy as np

        at = np.flatnonzero(counts)
        return cls(int(counts.size), tuple(at.tolist()), tuple(counts[at].tolist()))

    def array(self) -> np.ndarray:
        """Every bin, as int64."""
        import numpy as np

        out = np.zeros(self.size, np.int64)
        out[np.asarray(self.at, np.int64)] = self.count
        return out

    def summary(self) -> list[int] | dict[str, int]:
        """For a report: every bin up to :data:`_LIST_LIMIT` of them, else their number
        and the number of nonzero ones."""
        if self.size > _LIST_LIMIT:
            return {"bins": self.size, "nonzero_bins": len(self.at)}
        out = [0] * self.size
        for at, count in zip(self.at, self.count, strict=True):
            out[at] = count
        return out


@dataclass(frozen=True, eq=False)
class Structure:
    """Features of one matrix's pattern (counts are of stored entries)."""

    rows: int
    cols: int
    stored_entries: int
    numeric_nonzeros: int
    nonempty_rows: int
    nonempty_cols: int  # k_used: the rows of B that the kernel must read
    max_row_length: int
    row_lengths: LengthCounts = field(default_factory=LengthCounts)
    row_stats: LengthStats | None = None
    col_stats: LengthStats | None = None
    pattern_symmetry: float | None = None
    n_diagonals: int = 0
    diagonal_fill: float = 0.0
    diagonal_cells: int = 0  # cells of the occupied diagonals within the matrix
    bandwidth: int = 0
    profile: int = 0
    main_diagonal_share: float = 0.0  # stored (i, i) / min(rows, cols)
    near_diagonal_halfwidth: int = 0
    near_diagonal_share: float = 0.0
    blocks: dict[int, int] = field(default_factory=dict)
    nm_conformance: dict[str, float] = field(default_factory=dict)
    nm_exact: dict[str, float] = field(default_factory=dict)
    col_alpha: float | None = None
    col_xmin: int | None = None
    col_ks: float | None = None
    col_tail: int | None = None  # columns in the fitted power-law tail
    col_llr_exponential: float | None = None  # > 0 favours the power law
    col_llr_p: float | None = None
    hub_share: dict[str, float] = field(default_factory=dict)
    panel_columns: dict[int, tuple[int, int]] = field(default_factory=dict)
    value_distinct_share: float | None = None
    value_integer_share: float | None = None

    @property
    def row_length_counts(self) -> np.ndarray:
        """``counts[L]``: the rows with L entries, for L from 0 to the longest row."""
        return self.row_lengths.array()

    @property
    def density(self) -> float:
        cells = self.rows * self.cols
        return self.stored_entries / cells if cells else 0.0

    @property
    def block_fill(self) -> dict[int, float]:
        """nnz / (non-empty blocks · b²) per block size b."""
        return {b: self.stored_entries / (n * b * b) if n else 0.0 for b, n in self.blocks.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary: string keys, lists instead of arrays, no NaN."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if key == "row_lengths":
                key, value = "row_length_counts", self.row_lengths.summary()
            elif isinstance(value, dict):
                value = {str(k): list(v) if isinstance(v, tuple) else v for k, v in value.items()}
            out[key] = value
        out["density"] = self.density
        out["block_fill"] = {str(b): f for b, f in self.block_fill.items()}
        return out


def length_stats(counts: np.ndarray, other: int) -> LengthStats:
    """Statistics of lengths from their histogram ``counts[L]`` (lengths out of ``other``).

    Gini from the histogram: with the lengths sorted, G = Σ (2i - n - 1)·x_i / (n·Σx);
    a run of c equal values L after a others contributes L·c·(2a + c - n).

    >>> import numpy as np
    >>> s = length_stats(np.array([1, 1]), other=4)   # one row of length 0, one of 1
    >>> s.mean, s.max, s.cv, s.mode, s.gini
    (0.5, 1, 1.0, 0, 0.5)
    """
    import numpy as np

    n = int(counts.sum())
    if n == 0:
        return LengthStats(0.0, 0, 0.0, 0, 0.0, 1.0)
    lengths = np.arange(counts.size, dtype=np.float64)
    c = counts.astype(np.float64)
    total = float((lengths * c).sum())
    mean = total / n
    var = max(float((lengths * lengths * c).sum()) / n - mean * mean, 0.0)
    before = np.concatenate(([0.0], np.cumsum(c)[:-1]))
    gini = float((lengths * c * (2 * before + c - n)).sum() / (n * total)) if total else 0.0
    binom = mean * (1.0 - mean / other) if other else 0.0
    dispersion = var / binom if binom > 0 else (1.0 if var == 0 else math.inf)
    return LengthStats(mean=mean, max=int(np.flatnonzero(counts)[-1]),
                       cv=math.sqrt(var) / mean if mean else 0.0, mode=int(np.argmax(counts)),
                       gini=gini, dispersion=min(dispersion, 1e12))


def _hub_share(col_counts: np.ndarray, cols: int, nnz: int) -> dict[str, float]:
    """Share of entries held by the top fraction f of columns (at least one column)."""
    import numpy as np

    values = np.flatnonzero(col_counts)[::-1]  # column lengths, largest first
    if nnz == 0 or values.size == 0:
        return dict.fromkeys(HUB_FRACTIONS, 0.0)
    counts = col_counts[values]
    cum_cols = np.cumsum(counts)
    cum_entries = np.cumsum(values * counts)
    out = {}
    for key, f in HUB_FRACTIONS.items():
        k = max(1, math.ceil(f * cols))
        i = int(np.searchsorted(cum_cols, k))
        if i >= values.size:
            out[key] = 1.0
            continue
        taken = (int(cum_entries[i - 1]) if i else 0) + (k - (int(cum_cols[i - 1]) if i else 0)) \
            * int(values[i])
        out[key] = taken / nnz
    return out


def _nm(hist: np.ndarray, rows: int, cols: int) -> tuple[dict[str, float], dict[str, float]]:
    """Conformance and exact fill per N:M pattern from the per-M group-count histograms."""
    conformance, exact = {}, {}
    for n, m in NM_PATTERNS:
        h = hist[int(m).bit_length() - 2]
        groups = int(h[1:].sum())
        key = f"{n}:{m}"
        conformance[key] = float(h[1:n + 1].sum()) / groups if groups else 1.0
        cells = rows * -(-cols // m)
        exact[key] = float(h[n]) / cells if cells else 0.0
    return conformance, exact


def _power_law_fields(col_counts: np.ndarray) -> dict[str, Any]:
    import numpy as np

    from .powerlaw import PowerLawFit, fit_power_law

    fit: PowerLawFit | None = fit_power_law(np.bincount(col_counts)) if col_counts.size else None
    if fit is None:
        return {}
    return {"col_alpha": fit.alpha, "col_xmin": fit.xmin, "col_ks": fit.ks, "col_tail": fit.tail,
            "col_llr_exponential": fit.llr, "col_llr_p": fit.p_value}


def value_shares(values: np.ndarray | None) -> tuple[float | None, float | None]:
    """(distinct share, whole-number share) of the magnitudes of a strided sample of at
    most 2^16 values; (None, None) without values.

    >>> import numpy as np
    >>> value_shares(np.array([1.0, 1.0, 2.0, 0.5]))
    (0.75, 0.75)
    """
    from ..matrix.scan import sample_step

    if values is None or values.size == 0:
        return None, None
    return sample_shares(values[:: sample_step(values.size)])


def sample_shares(sample: np.ndarray | None) -> tuple[float | None, float | None]:
    """:func:`value_shares` of a sample already taken (``Matrix.value_sample()``)."""
    import numpy as np

    if sample is None or sample.size == 0:
        return None, None
    sample = np.abs(sample)
    distinct = _distinct(sample) / sample.size
    nonzero = sample[sample != 0]
    whole = float(np.count_nonzero(nonzero == np.round(nonzero))) / nonzero.size \
        if nonzero.size else 0.0
    return float(distinct), whole


def _distinct(values: np.ndarray) -> int:
    """How many distinct values ``values`` holds, NaN counted once (``np.unique``'s
    count, without the import of numpy.ma that ``np.unique`` makes, 15-20 ms).

    >>> import numpy as np
    >>> _distinct(np.array([2.0, np.nan, 1.0, 2.0, np.nan])), _distinct(np.array([3, 3]))
    (3, 1)
    """
    import numpy as np

    from ..passes.arrays import distinct

    if values.dtype.kind not in "fc":
        return int(distinct(values).size)
    nan = np.isnan(values)
    return int(distinct(values[~nan]).size) + int(bool(nan.any()))


def _halfwidth(rows: int, cols: int) -> int:
    return math.ceil(0.05 * max(rows, cols))


def _pattern_fields(matrix: Matrix, c: Counts) -> dict[str, Any]:
    """The features of the distinct-count passes (the matrix has at least one entry)."""
    rows, cols, nnz = matrix.rows, matrix.cols, matrix.stored_entries
    halfwidth = _halfwidth(rows, cols)
    bw, near, ndiag, lower, upper, ondiag, cells = (int(x) for x in c.scalars)
    conformance, exact = _nm(c.nm_hist, rows, cols)
    return {
        "pattern_symmetry": (c.mirror[1] / c.mirror[0] if c.mirror[0] else 1.0)
        if c.mirror else None,
        "n_diagonals": ndiag, "bandwidth": bw,
        "profile": lower + upper, "diagonal_fill": nnz / cells if cells else 0.0,
        "diagonal_cells": cells,
        "main_diagonal_share": ondiag / min(rows, cols),
        "near_diagonal_halfwidth": halfwidth, "near_diagonal_share": near / nnz,
        "blocks": {b: int(n) for b, n in zip(BLOCK_SIZES, c.blocks, strict=True)},
        "nm_conformance": conformance, "nm_exact": exact,
        "panel_columns": {1 << h: (int(t), int(m)) for h, (t, m) in
                          enumerate(zip(c.panel_total, c.panel_max, strict=True))},
    }


def measure(matrix: MatrixLike, pattern: bool = True) -> Structure:
    """Measure the pattern features of ``matrix`` (a :class:`~sparsroof.matrix.mtx.Matrix`,
    or what :func:`sparsroof.analyze` takes: a path, a scipy matrix, an array; see the
    module docstring).

    With ``pattern`` False only the counts, length statistics and hub shares are measured
    (a few whole-array passes); the distinct-count features (diagonals, blocks, N:M
    groups, panels, symmetry) and the power-law fit keep their empty defaults.

    >>> import numpy as np
    >>> from sparsroof.matrix.mtx import Header, Matrix
    >>> h = Header("x", "coordinate", "pattern", "general", 3, 4, 3)
    >>> m = Matrix("x", "x", 3, 4, np.array([0, 0, 2]), np.array([1, 3, 1]), None, h)
    >>> s = measure(m)
    >>> (s.nonempty_rows, s.nonempty_cols, s.max_row_length, s.bandwidth, s.blocks[2])
    (2, 2, 2, 3, 3)
    """
    import numpy as np

    from ..errors import MatrixFileError
    from ..matrix.limits import check_shape
    from ..matrix.mtx import as_matrix
    from .counts import counts

    matrix = as_matrix(matrix)
    too_large = check_shape(matrix.rows, matrix.cols, matrix.stored_entries)
    if too_large is not None:  # a file's shape is checked before its load; a matrix made
        # in memory, here, before the counts per row and column are allocated
        raise MatrixFileError(matrix.name, f"too large to measure: {too_large}")
    rows, cols, nnz = matrix.rows, matrix.cols, matrix.stored_entries
    c = (counts(matrix.row, matrix.col, rows, cols, _halfwidth(rows, cols),
                row_counts=matrix.row_counts) if pattern and nnz else None)
    row_lengths = (c.row_lengths if c is not None
                   else np.bincount(matrix.row, minlength=rows))
    col_lengths = (c.col_lengths if c is not None
                   else np.bincount(matrix.col, minlength=cols))
    row_counts = np.bincount(row_lengths) if rows else np.zeros(1, np.int64)
    col_counts = np.bincount(col_lengths) if cols else np.zeros(1, np.int64)
    distinct, whole = sample_shares(matrix.value_sample())
    extra: dict[str, Any] = {"value_distinct_share": distinct, "value_integer_share": whole}
    if c is not None:  # measured only for a matrix with entries
        extra.update(_pattern_fields(matrix, c))
        extra.update(_power_law_fields(col_lengths))
    return Structure(
        rows=rows, cols=cols, stored_entries=nnz, numeric_nonzeros=matrix.numeric_nonzeros,
        nonempty_rows=int(rows - row_counts[0]) if rows else 0,
        nonempty_cols=int(cols - col_counts[0]) if cols else 0,
        max_row_length=int(row_counts.size - 1), row_lengths=LengthCounts.of(row_counts),
        row_stats=length_stats(row_counts, cols), col_stats=length_stats(col_counts, rows),
        hub_share=_hub_share(col_counts, cols, nnz), **extra,
    )
