"""Figures, palette and file output shared by every plot.

matplotlib is imported inside the functions only, so that importing this package (and
every command that does not draw) stays fast. Figures are built with the object API
(``matplotlib.figure.Figure`` with an Agg canvas): no pyplot, no global state.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError, OptionError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "LINE_STYLES",
    "PALETTE",
    "MARKERS",
    "FORMATS",
    "DEFAULT_DPI",
    "parse_size",
    "new_figure",
    "figure_format",
    "save",
    "log_axis",
    "FONT_RC",
    "fill_of",
]

#: Okabe & Ito's colour-blind-safe palette (black kept for the roofs), yellow last:
#: it is the hardest to read on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#F0E442")
#: marker shapes for series that colour alone must not tell apart
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "h")
#: one line style per model (network) when a figure holds several
LINE_STYLES: tuple[Any, ...] = ("-", (0, (5, 2)), (0, (1, 1.5)), (0, (5, 2, 1, 2)))
#: file name suffix -> matplotlib format
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
DEFAULT_DPI = 150
#: fonts embedded as TrueType (Type 42) in PDF/PS and text kept as text in SVG, as
#: journals ask (no Type 3 fonts, editable labels)
FONT_RC: dict[str, Any] = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}


def parse_size(text: str) -> tuple[float, float]:
    """Parse a figure size ``WxH`` in inches.

    >>> parse_size("8x4.5")
    (8.0, 4.5)
    """
    match = re.fullmatch(r"\s*([0-9.]+)\s*[xX,]\s*([0-9.]+)\s*", text)
    try:
        width, height = (float(g) for g in match.groups()) if match else (0.0, 0.0)
    except ValueError:
        width = height = 0.0
    if not (0.5 <= width <= 100 and 0.5 <= height <= 100):
        raise OptionError(f"--size {text!r}: expected WIDTHxHEIGHT in inches, e.g. 8x5")
    return width, height


def new_figure(size: tuple[float, float], dpi: int = DEFAULT_DPI) -> Figure:
    """A figure with its own Agg canvas, detached from pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def figure_format(path: str | Path) -> str:
    """The file format a figure path asks for: PNG unless it ends in .svg or .pdf.

    >>> figure_format("out/roof.svg"), figure_format("roof.PNG"), figure_format("roof")
    ('svg', 'png', 'png')
    """
    suffix = Path(path).suffix.lower()
    if not suffix:
        return "png"
    if suffix not in FORMATS:
        raise FigureError(f"{path}: unknown figure format {suffix!r} "
                          f"(use {', '.join(FORMATS)})")
    return FORMATS[suffix]


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` in the format its suffix names, at the figure's DPI."""
    path = Path(path)
    fmt = figure_format(path)
    if not path.parent.is_dir():
        raise FigureError(f"{path}: directory {str(path.parent)!r} does not exist")
    import matplotlib
    from matplotlib.legend import Legend

    # a second legend added with add_artist is not in the tight box unless named here;
    # naming any replaces the default list (suptitle...), so that list goes in too
    extra = fig.get_default_bbox_extra_artists()
    extra += [a for ax in fig.axes for a in ax.get_children()
              if isinstance(a, Legend) and a not in extra]
    metadata = {"Creator": "sparsroof"} if fmt != "png" else {"Software": "sparsroof"}
    try:
        with matplotlib.rc_context(FONT_RC):  # type: ignore[arg-type]
            fig.savefig(path, format=fmt, dpi=fig.dpi, bbox_inches="tight",
                        bbox_extra_artists=extra, metadata=metadata)
    except OSError as err:
        raise FigureError(f"{path}: cannot write: {err.strerror or err}") from None
    return path


def log_axis(axis: Any, unit: str) -> None:
    """Decade ticks on a log axis, labelled with SI prefixes (``1 TFLOP/s``, ``10 us``)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from ..units import si

    axis.set_major_locator(LogLocator(base=10, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: _tick(v, unit, si)))
    axis.set_minor_formatter(NullFormatter())


def _tick(value: float, unit: str, si: Any) -> str:
    """Tick text: plain numbers for ratios, SI prefixes for quantities."""
    if value <= 0:
        return ""
    return f"{value:g}" if not unit else str(si(value, unit))


def fill_of(index: int, color: str) -> tuple[str, str]:
    """(face, edge) colours of the ``index``-th series drawn in ``color``: past the palette
    the fill changes (filled, hollow, filled with a black edge), so that up to three times
    as many series as colours never share both colour and look.

    >>> fill_of(0, "#0072B2"), fill_of(7, "#0072B2"), fill_of(14, "#0072B2")
    (('#0072B2', 'white'), ('white', '#0072B2'), ('#0072B2', 'black'))
    """
    cycle = (index // len(PALETTE)) % 3
    return ((color, "white"), ("white", color), (color, "black"))[cycle]
