"""Spy plot of a sparsity pattern: a binned density image, never a scatter of entries.

The matrix is cut into at most ``bins`` x ``bins`` cells (fewer along the shorter side,
so cells stay square where possible); each cell holds the number of stored entries that
fall in it, counted with one ``np.bincount`` over the flattened cell index, and is drawn
with a logarithmic colour scale. A block grid or a band can be drawn over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import FigureError
from ..matrix.mtx import Matrix
from ..passes.arrays import check_route
from ..structure.counts import index_pair, native
from ..units import si
from .style import new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Density", "DENSITY_ROUTES", "GUIDE_COLOUR", "density", "bandwidth", "spy_figure",
           "caption", "bar_label", "squareish", "few_cells", "marks_note", "grid_step",
           "grid_note", "band_edge", "band_note", "axis_label"]

#: the routes (:data:`sparsroof.passes.arrays.ROUTES`) :func:`density` offers
DENSITY_ROUTES = ("compiled", "native", "numba", "numpy")

_MAX_GRID_LINES = 40  # more lines than this fill the image: the grid is drawn sparser
#: the colour of the grid and the band's guides
GUIDE_COLOUR = "#D55E00"
#: at most this many occupied cells, each smaller than a few pixels, get a marker too
_FEW_CELLS = 256


@dataclass(frozen=True)
class Density:
    """Stored entries per cell; cell (i, j) covers rows [i·h, (i+1)·h) and cols [j·w, ...)."""

    counts: np.ndarray  # shape (row bins, column bins), int64
    cell_rows: float  # h, rows per cell
    cell_cols: float  # w, columns per cell


def density(matrix: Matrix, bins: int = 512, route: str = "compiled") -> Density:
    """Count stored entries per cell of an at most ``bins`` x ``bins`` grid.

    ``route`` (one of :data:`DENSITY_ROUTES`): "compiled" counts in one pass of the
    structure passes' C build where it is built, else with numpy (numba's start-up costs
    more than numpy's passes); every route gives the same counts.

    >>> import numpy as np
    >>> from sparsroof.matrix.mtx import Header, Matrix
    >>> h = Header("x", "coordinate", "pattern", "general", 4, 4, 4)
    >>> m = Matrix("x", "x", 4, 4, np.array([0, 1, 2, 3]), np.array([0, 1, 3, 3]), None, h)
    >>> density(m, bins=2).counts.tolist()  # 2x2 cells of 2x2 entries each
    [[2, 0], [0, 2]]
    """
    if bins < 1:
        raise FigureError(f"spy: bins must be at least 1, not {bins}")
    check_route(route, DENSITY_ROUTES, "the spy image's cells")
    longest = max(matrix.rows, matrix.cols, 1)
    scale = min(1.0, bins / longest)
    nr = max(1, min(matrix.rows, round(matrix.rows * scale)))
    nc = max(1, min(matrix.cols, round(matrix.cols * scale)))
    rows, cols = max(matrix.rows, 1), max(matrix.cols, 1)
    k = native()
    if route == "compiled":
        route = "native" if k is not None else "numpy"
    if route == "numpy":
        # integer cell index: floor(i · nr / rows), in int64 so that i · nr cannot overflow
        r = matrix.row.astype(np.int64) * nr // rows
        c = matrix.col.astype(np.int64) * nc // cols
        counts = np.bincount(r * nc + c, minlength=nr * nc).reshape(nr, nc)
    else:
        counts = np.zeros((nr, nc), np.int64)
        row, col = index_pair(matrix.row, matrix.col)
        if route == "numba":
            from ..structure._jit import bin_cells

            bin_cells(row, col, rows, cols, counts)
        elif k is None:
            raise RuntimeError("the native structure passes were not built with this package")
        else:
            k.bin_cells(row, col, rows, cols, nr, nc, counts)
    return Density(counts, rows / nr, cols / nc)


def bandwidth(matrix: Matrix) -> int:
    """The largest |i − j| over stored entries (0 for an empty or diagonal matrix).

    >>> import numpy as np
    >>> from sparsroof.matrix.mtx import Header, Matrix
    >>> h = Header("x", "coordinate", "pattern", "general", 3, 3, 2)
    >>> bandwidth(Matrix("x", "x", 3, 3, np.array([0, 2]), np.array([1, 0]), None, h))
    2
    """
    if matrix.row.size == 0:
        return 0
    return int(np.abs(matrix.row.astype(np.int64) - matrix.col.astype(np.int64)).max())


def grid_step(matrix: Matrix, block: int) -> int:
    """The grid's spacing: every ``block`` rows and columns, or every k·block where there
    would be more than :data:`_MAX_GRID_LINES` lines."""
    step = block
    while max(matrix.rows, matrix.cols) / step > _MAX_GRID_LINES:
        step *= 2
    return step


def grid_note(step: int, block: int) -> str:
    """The caption's words for a grid every ``step`` rows drawn for blocks of ``block``."""
    return f"grid every {step}" + (f" ({step // block} blocks of {block})" if step > block
                                   else "")


def band_edge(width: int, cell: float) -> float:
    """Where the band's guides stand, |x − y| = W + 1.5 cell: the cells of diagonal
    j − i = W span W − cell < x − y < W + cell, so the guides leave them in view."""
    return width + 1.5 * cell


def band_note(width: int) -> str:
    return f"band |i − j| ≤ {width} (guides just outside)"


def few_cells(d: Density) -> tuple[np.ndarray, np.ndarray]:
    """The occupied cells (rows, columns) that get a marker too: all of them where they
    are at most :data:`_FEW_CELLS` and the image is large enough for a cell to be
    smaller than a few pixels, else none."""
    rows, cols = np.nonzero(d.counts)
    if not 0 < rows.size <= _FEW_CELLS or min(d.counts.shape) < 64:
        return rows[:0], cols[:0]
    return rows, cols


def _grid(ax: Axes, matrix: Matrix, block: int) -> str:
    """Lines every :func:`grid_step` rows and columns."""
    step = grid_step(matrix, block)
    style: dict[str, Any] = {"color": GUIDE_COLOUR, "lw": 0.5, "alpha": 0.45, "zorder": 2}
    ax.vlines(np.arange(step, matrix.cols, step), 0, matrix.rows, gid="grid", **style)
    ax.hlines(np.arange(step, matrix.rows, step), 0, matrix.cols, **style)
    return grid_note(step, block)


def _band(ax: Axes, matrix: Matrix, width: int, cell: float) -> str:
    """Dashed guides at :func:`band_edge`, either side of the diagonal."""
    n = max(matrix.rows, matrix.cols)
    style: dict[str, Any] = {"color": GUIDE_COLOUR, "lw": 0.9, "ls": (0, (4, 2)), "zorder": 2}
    edge = band_edge(width, cell)
    for sign in (1, -1):  # the lines j = i ± edge
        ax.plot([0, n], [-sign * edge, n - sign * edge], gid="band", **style)
    return band_note(width)


def spy_figure(matrix: Matrix, *, bins: int = 512, block: int | None = None,
               band: int | None = None, size: tuple[float, float] = (6.5, 6.0),
               dpi: int = 150) -> Figure:
    """Density image of ``matrix`` with optional block grid and band overlays.

    The image data are exactly :func:`density` counts (zero cells left blank).
    """
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import FuncFormatter, LogFormatter

    d = density(matrix, bins)
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    shown = np.ma.masked_equal(d.counts, 0)
    top = max(int(d.counts.max()), 2)
    # nearest sampling then the colour map gives the pixels the colour map then nearest
    # sampling gives, with one channel to sample instead of four
    image = ax.imshow(shown, cmap="viridis", norm=LogNorm(vmin=1, vmax=top),
                      extent=(0, matrix.cols, matrix.rows, 0), interpolation="nearest",
                      interpolation_stage="data",
                      aspect="equal" if squareish(matrix) else "auto", gid="density")
    ax.set_facecolor("white")
    notes = []
    marked = _mark_few(ax, d, image)
    if marked:
        notes.append(marks_note(marked))
    if block:
        notes.append(_grid(ax, matrix, block))
    if band is not None:
        notes.append(_band(ax, matrix, band, max(d.cell_rows, d.cell_cols)))
    ax.set_xlim(0, matrix.cols)
    ax.set_ylim(matrix.rows, 0)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    for axis in (ax.xaxis, ax.yaxis):  # 200 k, 1 M: no "1e6" offset over the corner's tick
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: axis_label(v)))
    bar = fig.colorbar(image, ax=ax, shrink=0.8, pad=0.03)
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    # counts within one decade label their minor ticks too: 2, 3, 4, not 2 x 10^0
    bar.ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    bar.set_label(bar_label(d))
    ax.set_title(caption(matrix, notes), fontsize=9, pad=22)
    return fig


def _mark_few(ax: Axes, d: Density, image: Any) -> int:
    """A square marker on each of :func:`few_cells`, in its colour (a hypersparse
    matrix's handful of entries in a 2,000-row image): how many were marked, 0 for none."""
    rows, cols = few_cells(d)
    if not rows.size:
        return 0
    ax.scatter((cols + 0.5) * d.cell_cols, (rows + 0.5) * d.cell_rows,
               c=d.counts[rows, cols], cmap=image.get_cmap(), norm=image.norm, s=18,
               marker="s", edgecolors="black", linewidths=0.4, zorder=3, gid="marks")
    return int(rows.size)


def axis_label(value: float) -> str:
    """A row or column tick: 200 k, 1 M, no offset over the corner.

    >>> axis_label(200_000), axis_label(1e6), axis_label(0)
    ('200 k', '1 M', '0')
    """
    return si(value, "").rstrip()


def marks_note(marked: int) -> str:
    return f"each of the {marked} occupied cells marked"


def bar_label(d: Density) -> str:
    """The colour bar's label: what a cell counts, and how large it is."""
    cell = ("one entry per cell" if d.cell_rows == 1 and d.cell_cols == 1 else
            f"cell = {_cell_side(d.cell_rows)} x {_cell_side(d.cell_cols)}")
    return f"stored entries per cell ({cell})"


def _cell_side(side: float) -> str:
    """A cell's side in rows or columns: whole above 10 (1,953), else 3 figures (2.5)."""
    return f"{side:,.0f}" if side >= 10 else f"{side:.3g}"


def squareish(matrix: Matrix) -> bool:
    """Whether the image keeps square cells (sides within 2:1) or fills its axes."""
    ratio = max(matrix.rows, 1) / max(matrix.cols, 1)
    return 1 / 2 <= ratio <= 2


def caption(matrix: Matrix, notes: list[str]) -> str:
    """The figure's title: the matrix, its shape and entries, then the overlays' notes."""
    head = (f"{matrix.name}: {matrix.rows:,} x {matrix.cols:,}, "
            f"{matrix.stored_entries:,} stored entries")
    return head + ("\n" + "; ".join(notes) if notes else "")
