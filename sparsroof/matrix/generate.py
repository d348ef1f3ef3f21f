"""Seeded, reproducible generators of sparse matrices with a known structure.

One generator per structure class: uniform random, banded, 2-D/3-D stencils, block
structured, power law (Chung-Lu), N:M, block-pruned and magnitude-pruned weights, dense.
Each returns a :class:`Generated` (coordinate arrays built with whole-array numpy, no loop
per entry); :func:`write` saves it as Matrix Market. Tens of millions of entries take
seconds. :data:`GENERATORS` maps each kind to its function and the class it should get.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import OptionError
from ..passes.arrays import distinct
from ..userfile import replaced

__all__ = ["Generated", "GENERATORS", "uniform_random", "banded", "stencil_2d", "stencil_3d",
           "block_structured", "power_law", "nm", "block_pruned", "magnitude_pruned", "dense",
           "describe", "write", "drawn_entries", "check_size"]

_INT32_MAX = 2**31 - 1
_CHUNK = 1 << 24  # dense cells drawn at once by the weight generators


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


def _finish(rows: int, cols: int, row: np.ndarray, col: np.ndarray,
            values: np.ndarray) -> Generated:
    itype = np.int32 if max(rows, cols) <= _INT32_MAX else np.int64
    return Generated(rows, cols, row.astype(itype, copy=False), col.astype(itype, copy=False),
                     values)


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise OptionError(message)


def _fraction(name: str, value: float) -> None:
    """A fraction in [0, 1]; a value from 1 to 100 is most likely a percentage, and the
    error says how to write it (whatif takes its sparsity levels in percent)."""
    hint = (f" (for {value:g} %, write {value / 100:g})"
            if 1.0 < value <= 100.0 else "")
    _require(0.0 <= value <= 1.0,
             f"{{opt:{name}}} must lie between 0 and 1, got {value:g}{hint}")


def uniform_random(rows: int, cols: int, nnz: int, seed: int = 0) -> Generated:
    """About ``nnz`` entries at uniformly random positions (duplicates removed).

    >>> g = uniform_random(100, 100, 500, seed=1)
    >>> 480 <= g.nnz <= 500
    True
    """
    _require(rows > 0 and cols > 0 and nnz >= 0,
             "{opt:rows}, {opt:cols} must be positive, {opt:nnz} >= 0")
    rng = np.random.default_rng(seed)
    flat = distinct(rng.integers(0, rows * cols, size=nnz, dtype=np.int64))
    values = rng.random(flat.size)
    return _finish(rows, cols, flat // cols, flat % cols, values)


def banded(n: int, halfwidth: int, fill: float = 1.0, seed: int = 0) -> Generated:
    """Entries on the diagonals -halfwidth..halfwidth, each kept with probability ``fill``.

    >>> g = banded(5, 1)          # tridiagonal: 5 + 2·4 entries
    >>> g.nnz, int(np.abs(g.col.astype(int) - g.row).max())
    (13, 1)
    """
    _require(n > 0 and halfwidth >= 0, "{opt:n} must be positive and {opt:halfwidth} >= 0")
    _fraction("fill", fill)
    rng = np.random.default_rng(seed)
    offsets = np.arange(-halfwidth, halfwidth + 1, dtype=np.int64)
    row = np.repeat(np.arange(n, dtype=np.int64), offsets.size)
    col = row + np.tile(offsets, n)
    keep = (col >= 0) & (col < n)
    if fill < 1.0:
        keep &= rng.random(keep.size) < fill
    row, col = row[keep], col[keep]
    return _finish(n, n, row, col, np.where(row == col, 2.0 * halfwidth + 1, -1.0))


def _stencil(dims: tuple[int, ...]) -> Generated:
    """(2·ndim + 1)-point Laplacian on a grid of shape ``dims``, rows in grid order."""
    size = int(np.prod(dims))
    idx = np.arange(size, dtype=np.int64)
    coords = np.unravel_index(idx, dims)
    strides = [int(np.prod(dims[a + 1:])) for a in range(len(dims))]
    steps = np.array(sorted([-s for s in strides] + [0] + strides), dtype=np.int64)
    ok = np.ones((size, steps.size), np.bool_)
    for k, step in enumerate(steps.tolist()):  # one pass per neighbour direction
        if step:
            axis = strides.index(abs(step))
            c = coords[axis] + (1 if step > 0 else -1)
            ok[:, k] = (c >= 0) & (c < dims[axis])
    row = np.broadcast_to(idx[:, None], ok.shape)[ok]
    col = (idx[:, None] + steps[None, :])[ok]  # row-major: rows in order, columns rising
    return _finish(size, size, row, col, np.where(row == col, 2.0 * len(dims), -1.0))


def stencil_2d(n: int) -> Generated:
    """Five-point Laplacian on an n x n grid: 4 on the diagonal, -1 for each neighbour.

    >>> g = stencil_2d(3)
    >>> g.rows, g.nnz   # 9 diagonal + 2·(3·2) horizontal + 2·(3·2) vertical neighbours
    (9, 33)
    """
    _require(n > 0, "{opt:n} must be positive")
    return _stencil((n, n))


def stencil_3d(n: int) -> Generated:
    """Seven-point Laplacian on an n x n x n grid: 6 on the diagonal, -1 per neighbour.

    >>> g = stencil_3d(2)  # 8 points, each with 3 neighbours
    >>> g.rows, g.nnz
    (8, 32)
    """
    _require(n > 0, "{opt:n} must be positive")
    return _stencil((n, n, n))


def _expand_blocks(brow: np.ndarray, bcol: np.ndarray, block: int, fill: float,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Entries of the blocks (brow, bcol), each cell kept with probability ``fill``."""
    di, dj = np.divmod(np.arange(block * block, dtype=np.int64), block)
    row = (brow[:, None] * block + di[None, :]).ravel()
    col = (bcol[:, None] * block + dj[None, :]).ravel()
    if fill < 1.0:
        keep = rng.random(row.size) < fill
        row, col = row[keep], col[keep]
    return row, col


def block_structured(block_rows: int, block: int, blocks_per_row: int = 4, fill: float = 1.0,
                     seed: int = 0) -> Generated:
    """Square matrix of ``block_rows`` x ``block_rows`` blocks of size ``block``.

    Like the nodal blocks of a multi-unknown finite-element matrix: the diagonal blocks
    and ``blocks_per_row - 1`` random off-diagonal blocks per block row, mirrored so the
    block pattern is symmetric; each cell of a block is kept with probability ``fill``.

    >>> g = block_structured(4, 2, blocks_per_row=1)   # block diagonal
    >>> g.rows, g.nnz
    (8, 16)
    """
    _require(block_rows > 0 and block > 0 and blocks_per_row >= 1,
             "{opt:block_rows}, {opt:block} and {opt:blocks_per_row} must be positive")
    _fraction("fill", fill)
    rng = np.random.default_rng(seed)
    bi = np.repeat(np.arange(block_rows, dtype=np.int64), blocks_per_row - 1)
    bj = rng.integers(0, block_rows, bi.size)
    diag = np.arange(block_rows, dtype=np.int64)
    keys = distinct(np.concatenate([diag * block_rows + diag, bi * block_rows + bj,
                                     bj * block_rows + bi]))
    row, col = _expand_blocks(keys // block_rows, keys % block_rows, block, fill, rng)
    n = block_rows * block
    return _finish(n, n, row, col, rng.standard_normal(row.size))


def _weighted_vertices(n: int, beta: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` vertices v in [0, n) drawn with probability ~ (v + 1)^-beta.

    Inverse transform of the continuous density x^-beta on [1, n + 1), floored: O(size),
    no search in a cumulative table.
    """
    u = rng.random(size)
    if abs(beta - 1.0) < 1e-9:
        x = np.exp(u * np.log(n + 1.0))
    else:
        g = 1.0 - beta
        x = (1.0 + u * ((n + 1.0) ** g - 1.0)) ** (1.0 / g)
    return np.clip(np.floor(x).astype(np.int64) - 1, 0, n - 1)


def power_law(n: int, alpha: float, mean_degree: float = 10.0, seed: int = 0,
              symmetric: bool = False) -> Generated:
    """Chung-Lu graph whose degrees follow a power law p(k) ~ k^-alpha.

    Vertex v gets the weight w_v = (v + 1)^(-1/(alpha - 1)); about n·mean_degree edges
    are drawn with both ends chosen in proportion to the weights, so the expected degree
    of v is proportional to w_v and the weights' distribution has exponent alpha (Chung &
    Lu, *Connected components in random graphs with given expected degree sequences*).
    Duplicate edges are dropped; vertices are shuffled so the hubs are not all in one
    corner. ``symmetric`` adds the mirror of every edge (an undirected graph).

    >>> g = power_law(1000, 2.5, mean_degree=5, seed=1)
    >>> 4000 < g.nnz <= 5000
    True
    """
    _require(n > 1 and alpha > 1.0 and mean_degree > 0,
             "{opt:n} must exceed 1, {opt:alpha} must exceed 1 and {opt:mean_degree} must "
             "be positive")
    rng = np.random.default_rng(seed)
    m = int(round(n * mean_degree))
    perm = rng.permutation(n).astype(np.int64)
    ends = perm[_weighted_vertices(n, 1.0 / (alpha - 1.0), 2 * m, rng)]
    row, col = ends[:m], ends[m:]
    if symmetric:
        row, col = np.concatenate([row, col]), np.concatenate([col, row])
    keys = distinct(row * n + col)
    return _finish(n, n, keys // n, keys % n, rng.random(keys.size))


def nm(rows: int, cols: int, n: int = 2, m: int = 4, seed: int = 0) -> Generated:
    """Weights pruned to N:M: exactly ``n`` entries in every group of ``m`` columns of a row.

    Keeping the ``n`` largest of ``m`` independent Gaussian weights picks each of the
    C(m, n) position sets with equal chance, so a set is drawn directly.

    >>> g = nm(4, 8, 2, 4)
    >>> g.nnz, sorted(np.bincount(g.row // 1 * 2 + g.col // 4).tolist()) == [2] * 8
    (16, True)
    """
    _require(rows > 0 and 0 < n <= m and cols > 0 and cols % m == 0,
             f"need 0 < n <= m and cols divisible by m (got {n}:{m}, cols={cols})")
    rng = np.random.default_rng(seed)
    groups = rows * (cols // m)
    if math.comb(m, n) <= 1 << 16:  # pick one of the C(m, n) position sets per group
        table = np.array(list(itertools.combinations(range(m), n)), dtype=np.int64)
        keep = table[rng.integers(0, len(table), groups)]
    else:
        scores = np.abs(rng.standard_normal((groups, m), dtype=np.float32))
        keep = np.sort(np.argpartition(-scores, n - 1, axis=1)[:, :n], axis=1)
    g = np.repeat(np.arange(groups, dtype=np.int64), n)
    row, col = g // (cols // m), (g % (cols // m)) * m + keep.ravel()
    return _finish(rows, cols, row, col, rng.standard_normal(row.size))


def block_pruned(rows: int, cols: int, block: int = 4, sparsity: float = 0.9,
                 seed: int = 0) -> Generated:
    """Weights pruned in whole ``block`` x ``block`` blocks, keeping the strongest blocks.

    Blocks get a random magnitude; the top (1 - sparsity) share of blocks is kept dense.

    >>> g = block_pruned(16, 16, block=4, sparsity=0.75)   # 4 of 16 blocks of 16 cells
    >>> g.nnz
    64
    """
    _require(block > 0 and rows % block == 0 and cols % block == 0,
             f"{{opt:rows}} and {{opt:cols}} must be multiples of {{opt:block}} ({block})")
    _fraction("sparsity", sparsity)
    rng = np.random.default_rng(seed)
    nb_r, nb_c = rows // block, cols // block
    kept = int(round((1.0 - sparsity) * nb_r * nb_c))
    score = rng.random(nb_r * nb_c)
    keys = np.sort(np.argpartition(-score, kept - 1)[:kept]) if kept else np.zeros(0, np.int64)
    row, col = _expand_blocks(keys // nb_c, keys % nb_c, block, 1.0, rng)
    return _finish(rows, cols, row, col, rng.standard_normal(row.size))


def _threshold(rows: int, cols: int, sparsity: float, scale_r: np.ndarray,
               scale_c: np.ndarray, rng: np.random.Generator) -> float:
    """Magnitude below which a share ``sparsity`` of |z·r_i·c_j| falls (sampled if large)."""
    n = min(rows * cols, 1 << 22)
    i, j = rng.integers(0, rows, n), rng.integers(0, cols, n)
    sample = np.abs(rng.standard_normal(n) * scale_r[i] * scale_c[j])
    return float(np.quantile(sample, sparsity))


#: the largest log-normal spread of :func:`magnitude_pruned`: a row and a column scale
#: each e^(spread·z) with |z| up to about 5.5 over a million draws keep the float32
#: weights finite (e^66 times a normal draw), where spread 400 made them infinite
MAX_SPREAD = 6.0


def magnitude_pruned(rows: int, cols: int, sparsity: float = 0.9, spread: float = 0.5,
                     seed: int = 0) -> Generated:
    """Dense weights z·r_i·c_j pruned by magnitude, keeping about (1 - sparsity) of them.

    z is standard normal; the row and column scales r_i, c_j are log-normal with standard
    deviation ``spread``: trained layers have neurons of uneven importance, so the kept
    weights crowd into some rows and columns (``spread=0`` gives a uniform random mask).
    Drawn in chunks of rows, so the dense matrix is never held whole.

    >>> g = magnitude_pruned(64, 64, sparsity=0.75, seed=2)
    >>> abs(g.nnz / 64**2 - 0.25) < 0.05
    True
    """
    _require(rows > 0 and cols > 0, "{opt:rows} and {opt:cols} must be positive")
    _require(0 <= spread <= MAX_SPREAD,
             f"{{opt:spread}} must lie from 0 to {MAX_SPREAD:g} (got {spread:g})")
    _fraction("sparsity", sparsity)
    rng = np.random.default_rng(seed)
    scale_r = np.exp(spread * rng.standard_normal(rows))
    scale_c = np.exp(spread * rng.standard_normal(cols))
    t = _threshold(rows, cols, sparsity, scale_r, scale_c, rng)
    step = max(1, _CHUNK // cols)
    parts = []
    for start in range(0, rows, step):  # one chunk of rows at a time, not one row
        w = rng.standard_normal((min(step, rows - start), cols), dtype=np.float32)
        w *= (scale_r[start:start + step, None] * scale_c[None, :]).astype(np.float32)
        r, c = np.nonzero(np.abs(w) >= t)
        parts.append((r + start, c, w[r, c]))
    row = np.concatenate([p[0] for p in parts])
    col = np.concatenate([p[1] for p in parts])
    values = np.concatenate([p[2] for p in parts]).astype(np.float64)
    return _finish(rows, cols, row, col, values)


def dense(rows: int, cols: int, seed: int = 0) -> Generated:
    """Every cell stored, Gaussian values.

    >>> dense(3, 2).nnz
    6
    """
    _require(rows > 0 and cols > 0, "{opt:rows} and {opt:cols} must be positive")
    rng = np.random.default_rng(seed)
    row, col = np.divmod(np.arange(rows * cols, dtype=np.int64), cols)
    return _finish(rows, cols, row, col, rng.standard_normal(rows * cols))


#: kind -> (generator, the structure class it produces)
GENERATORS: dict[str, tuple[Callable[..., Generated], str]] = {
    "random": (uniform_random, "random"),
    "banded": (banded, "banded"),
    "stencil2d": (stencil_2d, "banded"),
    "stencil3d": (stencil_3d, "banded"),
    "block": (block_structured, "block"),
    "powerlaw": (power_law, "scale-free"),
    "nm": (nm, "nm"),
    "block-pruned": (block_pruned, "block-pruned"),
    "pruned": (magnitude_pruned, "unstructured-pruned"),
    "dense": (dense, "dense"),
}


def drawn_entries(kind: str, params: dict[str, Any]) -> tuple[int, int, int]:
    """(entries, scratch, lines): the most entries generator ``kind`` draws or keeps with
    ``params`` (its keyword arguments; duplicates count, before they are dropped), the
    scores it keeps beside them (in entries' worth of memory: N:M's picks and columns,
    block and weight scores), and its rows plus columns.

    >>> drawn_entries("banded", {"n": 1000, "halfwidth": 3})
    (7000, 0, 2000)
    >>> drawn_entries("nm", {"rows": 4, "cols": 8, "n": 2, "m": 4})    # 16 entries
    (16, 5, 12)
    """
    import inspect

    p = {name: q.default for name, q in
         inspect.signature(GENERATORS[kind][0]).parameters.items()} | params
    side = {"stencil2d": 2, "stencil3d": 3}
    if kind in side:
        size = p["n"] ** side[kind]
        return (2 * side[kind] + 1) * size, 0, 2 * size
    if kind in ("banded", "powerlaw"):
        per_row = 2 * p["halfwidth"] + 1 if kind == "banded" else \
            2 * math.ceil(p["mean_degree"]) * (2 if p.get("symmetric") else 1)
        return p["n"] * per_row, 0, 2 * p["n"]
    if kind == "block":
        rows = p["block_rows"] * p["block"]
        blocks = p["block_rows"] * (2 * p["blocks_per_row"] - 1)  # the diagonal, mirrored
        return blocks * p["block"] ** 2, 0, 2 * rows
    lines = p["rows"] + p["cols"]
    if kind == "random":
        return p["nnz"], 0, lines
    if kind == "nm":
        groups, m = p["rows"] * (p["cols"] // max(p["m"], 1)), max(p["m"], 1)
        scored = groups * m // 2 if math.comb(m, p["n"]) > 1 << 16 else 0  # float32 scores
        # its picks per group and the columns made of them: a peak near 50 bytes an
        # entry, 0.3 entries' worth above the 40 charged
        entries = groups * p["n"]
        return entries, math.ceil(0.3 * entries) + scored, lines
    cells = p["rows"] * p["cols"]
    kept = math.ceil(cells * (1.0 - min(max(p.get("sparsity", 0.0), 0.0), 1.0)))
    if kind == "block-pruned":  # a score per block, and argpartition's copies of it
        return kept, cells // max(p["block"], 1) ** 2, lines
    if kind == "pruned":
        return kept, min(cells, _CHUNK), lines
    return cells, 0, lines


#: bytes per drawn entry (or entry's worth of scratch) at the peak: int64 rows and
#: columns and float64 values, and a part of them again while what is kept is gathered
#: (peaks of 31-39 bytes an entry measured for dense, banded and 3-D stencil matrices,
#: 49-51 for N:M); and per row or column (scales, orders)
_ENTRY_BYTES, _LINE_BYTES = 40, 16


def check_size(kind: str, params: dict[str, Any]) -> None:
    """Refuse, before anything is drawn, a matrix this process has no memory for, or
    whose cells cannot be numbered in 64 bits."""
    from ..units import counted
    from .limits import check_fits

    entries, scratch, lines = drawn_entries(kind, params)
    rows, cols = params.get("rows"), params.get("cols")
    if kind == "random" and rows and cols and rows * cols >= 2**63:
        raise OptionError(f"{rows:,} x {cols:,} cells cannot be numbered in 64 bits: "
                          "give fewer {opt:rows} or {opt:cols}")
    problem = check_fits(_ENTRY_BYTES * (entries + scratch) + _LINE_BYTES * lines)
    if problem is not None:
        raise OptionError(f"{kind} with these sizes draws up to "
                          f"{counted(entries, 'entry', 'entries')}: it {problem}")


def shuffled(g: Generated, seed: int) -> Generated:
    """``g`` with its rows and columns renumbered by one seeded random permutation (both
    by the same one when square, so a band stays a band up to ordering): the scrambled
    numbering a reordering such as reverse Cuthill-McKee undoes.

    >>> g = Generated(3, 3, np.array([0, 1, 2]), np.array([0, 1, 2]), np.ones(3))
    >>> s = shuffled(g, seed=1)
    >>> bool((s.row == s.col).all()), sorted(s.row.tolist())
    (True, [0, 1, 2])
    """
    rng = np.random.default_rng(seed)
    rows = rng.permutation(g.rows)
    cols = rows if g.rows == g.cols else rng.permutation(g.cols)
    return Generated(g.rows, g.cols, rows[g.row], cols[g.col], g.values)


def write(g: Generated, path: str | Path, comment: str = "") -> None:
    """Write ``g`` as a real general Matrix Market coordinate file, whole or not at all
    (an :class:`OptionError` naming ``path`` where it cannot be written: the parser's own
    writer would say nothing)."""
    import fast_matrix_market as fmm

    try:
        with replaced(path) as new, open(new, "wb") as out:
            fmm.write_coo(out, (g.values, (g.row, g.col)), shape=(g.rows, g.cols),
                          comment=comment)
    except OSError as err:
        raise OptionError(f"{path}: cannot write: {err.strerror or err}") from None


def describe(kind: str, params: dict[str, Any]) -> str:
    """A header comment naming the generator and its parameters."""
    args = " ".join(f"{k}={v}" for k, v in params.items())
    return f"sparsroof generate {kind} {args}"
