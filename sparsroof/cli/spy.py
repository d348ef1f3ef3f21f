"""``sparsroof spy``: a density image of a matrix's sparsity pattern."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import FigureError, OptionError
from ..matrix.mtx import Matrix, load
from ..plot import figure_format, save, spy_figure
from ..plot.raster import save_spy, spy_image
from ..plot.spy import bandwidth
from ..plot.style import check_pixels, import_ahead
from .figures import DPI_OPTION, SIZE_OPTION, checked_figure, echo_written, size_of
from .guard import check_writable

__all__ = ["command"]

#: the figure's size in inches where --size is not given
_SIZE = (6.5, 6.0)


@click.command("spy")
@click.argument("matrix", metavar="MATRIX")
@click.option("-o", "--out", "out", default=None, metavar="FILE", callback=checked_figure,
              help="Figure file: .png, .svg or .pdf [default: NAME-spy.png].")
@click.option("--bins", type=click.IntRange(1, 8192), default=512, show_default=True,
              help="Cells along the longer side; each shows the entries that fall in it.")
@click.option("--grid", "block", type=click.IntRange(1), default=None, metavar="B",
              help="Draw a grid of B x B blocks over the image.")
@click.option("--band", default=None, metavar="W|auto",
              help="Draw the band |i - j| <= W (auto: the matrix's own bandwidth).")
@SIZE_OPTION
@DPI_OPTION
def command(matrix: str, out: str | None, bins: int, block: int | None, band: str | None,
            size: str | None, dpi: int) -> None:
    """Density image of MATRIX: entries binned into cells, log colour scale.

    \b
    Examples:
      sparsroof spy data/lap2d_64.mtx -o lap.png --band auto
      sparsroof spy data/random_1000.mtx -o random.svg --grid 16
    """
    # a PNG is drawn with Pillow (plot.raster); SVG and PDF with matplotlib, whose import
    # starts beside the load
    check_pixels(size_of(size) or _SIZE, dpi)  # before the load, not after it
    vector = out is not None and figure_format(out) != "png"
    imported = import_ahead() if vector else None
    m = load(matrix, values=False)  # a density image reads no values
    if not m.rows or not m.cols:
        raise FigureError(f"{matrix}: a {m.rows:,} x {m.cols:,} matrix has no cells to draw")
    path = Path(out or f"{m.name}-spy.png")
    check_writable(str(path))  # the default name too, in the words -o gets
    width, shape = _band(band, m), size_of(size) or _SIZE
    if imported is None:
        image = spy_image(m, bins=bins, block=block, band=width, size=shape, dpi=dpi)
        echo_written(save_spy(image, path, dpi))
        return
    imported()
    fig = spy_figure(m, bins=bins, block=block, band=width, size=shape, dpi=dpi)
    echo_written(save(fig, path))


def _band(text: str | None, m: Matrix) -> int | None:
    if text is None:
        return None
    if text == "auto":
        return bandwidth(m)
    try:
        width = int(text)
    except ValueError:
        raise OptionError(f"--band {text!r}: expected a whole number or 'auto'") from None
    if width < 0:
        raise OptionError(f"--band {text!r}: must not be negative")
    return width
