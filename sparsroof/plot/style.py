"""Figures, palette and file output shared by every plot.

matplotlib is imported inside the functions only, so that importing this package (and
every command that does not draw) stays fast. Figures are built with the object API
(``matplotlib.figure.Figure`` with an Agg canvas): no pyplot, no global state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import FigureError, OptionError
from ..report.colours import PALETTE, class_styles, fill_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "class_styles",
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
    "MAX_PIXELS",
    "check_pixels",
    "write_png",
    "writing",
]

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
#: room drawn around a PNG figure's own area, for what stands outside it (inches a side)
_MARGIN_INCHES = 1.0


#: the smallest figure whose text (7.5-10 pt) still fits beside its axes
MIN_SIZE = (4.0, 3.0)
#: the longest side of a figure, in inches (at 150 dpi, 15,000 pixels)
MAX_SIDE = 100.0


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
    if not match or not (width > 0 and height > 0):
        raise OptionError(f"--size {text!r}: expected WIDTHxHEIGHT in inches, e.g. 8x5")
    if width > MAX_SIDE or height > MAX_SIDE:
        raise OptionError(f"--size {text!r}: at most {MAX_SIDE:g} inches a side")
    if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
        raise OptionError(f"--size {text!r}: at least {MIN_SIZE[0]:g}x{MIN_SIZE[1]:g} inches "
                          "(a figure's titles, axes and legend overlap below it)")
    return width, height


def import_ahead() -> Callable[[], None]:
    """Start importing matplotlib's figure, Agg canvas, colours and ticks on a second
    thread (about half a second, mostly Python), for a command that will draw after a
    load: the import then runs while the load's passes, which release the GIL, wait on
    the file. Returns what to call before the first use of matplotlib: it waits for the
    import to finish (two threads importing matplotlib's modules at once can meet one
    half imported). A failed import is left to that first use to report. On a host of
    two cores the load's passes keep to their calling thread while it runs
    (:func:`sparsroof.passes.arrays.beside`)."""
    import threading

    def run() -> None:
        try:
            import matplotlib.backends.backend_agg  # noqa: F401
            import matplotlib.colors  # noqa: F401
            import matplotlib.figure  # noqa: F401
            import matplotlib.ticker  # noqa: F401
        except Exception:  # noqa: BLE001 - the drawing thread imports again and says why
            pass

    from ..passes.arrays import beside

    # not a daemon: a command that fails before it draws still lets the import end before
    # the interpreter does, never stopped halfway through a module at shutdown
    thread = threading.Thread(target=run, name="sparsroof-import")
    thread.start()
    beside(thread)  # on two cores, the load's passes leave it the second one
    return thread.join


#: the most pixels a figure may have: 100 million, a 20 x 20 inch figure at 500 DPI (a
#: canvas of RGBA bytes and the drawing's own buffers take several times as many bytes)
MAX_PIXELS = 100_000_000


def check_pixels(size: tuple[float, float], dpi: float) -> None:
    """Refuse a figure of more than :data:`MAX_PIXELS` at ``dpi``, before any drawing.

    >>> check_pixels((40, 40), 600)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sparsroof.errors.FigureError: a 40x40-inch figure at 600 DPI is 24,000 x 24,000 pixels...
    """
    wide, high = round(size[0] * dpi), round(size[1] * dpi)
    if wide * high > MAX_PIXELS:
        raise FigureError(f"a {size[0]:g}x{size[1]:g}-inch figure at {dpi:g} DPI is "
                          f"{wide:,} x {high:,} pixels, over the {MAX_PIXELS:,} a figure "
                          "may have: lower {opt:size} or {opt:dpi}")


def new_figure(size: tuple[float, float], dpi: int = DEFAULT_DPI) -> Figure:
    """A figure with its own Agg canvas, detached from pyplot."""
    check_pixels(size, dpi)
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


#: how a PNG is written: zlib's fastest level. On a 842 x 781 spy figure it took 0.056 s
#: and 585 kB, against 0.20 s and 682 kB with Pillow's default level (6): the flat
#: colours of a figure compress as well either way
PNG_KWARGS = {"compress_level": 1}


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` in the format its suffix names, at the figure's DPI,
    cropped to what is drawn and a margin of ``savefig.pad_inches``."""
    path = Path(path)
    fmt = figure_format(path)
    import matplotlib

    metadata = {"Creator": "sparsroof"} if fmt != "png" else {"Software": "sparsroof"}
    with writing(path) as out, matplotlib.rc_context(FONT_RC):  # type: ignore[arg-type]
        if fmt != "png" or not _png_drawn_once(fig, out, metadata):
            extra: dict[str, Any] = {"pil_kwargs": PNG_KWARGS} if fmt == "png" else {}
            fig.savefig(out, format=fmt, dpi=fig.dpi, bbox_inches="tight",
                        bbox_extra_artists=_extra_artists(fig), metadata=metadata, **extra)
    return path


@contextmanager
def writing(path: Path) -> Iterator[BinaryIO]:
    """Writing a figure to ``path``: drawn into the buffer this yields, then written
    whole or not at all (:func:`~sparsroof.userfile.replaced`: a full disk leaves an
    earlier file of that name as it was). A missing folder, and an error of the file
    system, become one :class:`FigureError` naming the file."""
    import io

    from ..userfile import replaced

    if not path.parent.is_dir():
        raise FigureError(f"{path}: directory {str(path.parent)!r} does not exist")
    buffer = io.BytesIO()
    try:
        yield buffer
        with replaced(path) as new:
            new.write_bytes(buffer.getbuffer())
    except OSError as err:
        raise FigureError(f"{path}: cannot write: {err.strerror or err}") from None


def _extra_artists(fig: Figure) -> list[Any]:
    """What the tight box must hold beyond matplotlib's default list: a second legend
    added with add_artist is not in it unless named (and naming any replaces the default
    list, so that list goes in too)."""
    from matplotlib.legend import Legend

    extra = fig.get_default_bbox_extra_artists()
    extra += [a for ax in fig.axes for a in ax.get_children()
              if isinstance(a, Legend) and a not in extra]
    return extra


def _labels_within(fig: Figure, box: Any) -> bool:
    """Whether every visible text and legend of ``fig`` and its axes lies inside ``box``
    (display pixels), measured after a draw (their layouts are then cached)."""
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    found: list[Any] = [*fig.texts, *fig.legends]
    for ax in fig.axes:  # an axes' children hold its texts, titles and legends
        found += [a for a in ax.get_children() if isinstance(a, (Text, Legend))]
        found += [ax.xaxis.label, ax.yaxis.label]
    for artist in found:
        if not artist.get_visible() or (isinstance(artist, Text) and not artist.get_text()):
            continue
        extent = artist.get_window_extent(renderer)
        if (extent.x0 < box.x0 or extent.y0 < box.y0 or extent.x1 > box.x1
                or extent.y1 > box.y1):
            return False
    return True


def _png_drawn_once(fig: Figure, path: Path | BinaryIO, metadata: dict[str, str]) -> bool:
    """Write ``fig`` as a PNG drawn once: the figure is drawn on a canvas
    :data:`_MARGIN_INCHES` larger on every side (labels may stand outside the figure) and
    cropped to the pixels that differ from the background, plus ``savefig.pad_inches``.
    matplotlib's tight box draws the figure twice (once to measure every artist's extent,
    once to render), which costs more than the crop. False, with nothing written, where
    something drawn reaches the canvas's edge (it may have been cut): the caller then
    measures the tight box."""
    import io

    import matplotlib
    import numpy as np
    from matplotlib.transforms import Bbox

    dpi = fig.dpi
    box = Bbox.from_extents(*fig.bbox_inches.extents).padded(_MARGIN_INCHES)
    raw = io.BytesIO()
    fig.savefig(raw, format="rgba", dpi=dpi, bbox_inches=box)
    width = int(box.width * dpi)
    pixels = np.frombuffer(raw.getbuffer(), np.uint32)
    if width < 3 or pixels.size % width:
        return False
    pixels = pixels.reshape(-1, width)
    if not _labels_within(fig, fig.bbox.padded(_MARGIN_INCHES * dpi - 1)):
        return False  # a label entirely outside the canvas would leave no ink at its edge
    ink = pixels != pixels[0, 0]
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    pad = round(float(matplotlib.rcParams["savefig.pad_inches"]) * dpi)
    if (rows.size == 0 or rows[0] < pad + 1 or cols[0] < pad + 1
            or rows[-1] >= ink.shape[0] - pad - 1 or cols[-1] >= width - pad - 1):
        return False
    image = pixels[rows[0] - pad:rows[-1] + pad + 1, cols[0] - pad:cols[-1] + pad + 1]
    rgba = np.ascontiguousarray(image).view(np.uint8).reshape(*image.shape, 4)
    write_png(path, rgba[..., :3] if bool((rgba[..., 3] == 255).all()) else rgba, dpi,
              metadata)
    return True


def write_png(path: Path | BinaryIO, pixels: Any, dpi: float,
              metadata: dict[str, str]) -> None:
    """Write ``pixels`` (rows of RGB or RGBA bytes, top row first) as a PNG at ``dpi``
    with ``metadata``: an opaque figure as RGB, a quarter fewer bytes to compress than
    RGBA (matplotlib's ``imsave`` writes every image as RGBA)."""
    import numpy as np
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    for key, value in metadata.items():
        info.add_text(key, value)
    Image.fromarray(np.ascontiguousarray(pixels)).save(
        path, format="png", pnginfo=info, dpi=(dpi, dpi), **PNG_KWARGS)


def log_axis(axis: Any, unit: str) -> None:
    """Decade ticks on a log axis, labelled with SI prefixes (``1 TFLOP/s``, ``10 us``)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from ..units import si

    axis.set_major_locator(LogLocator(base=10, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: _tick(v, unit, si)))
    axis.set_minor_formatter(NullFormatter())
    _minor_marks(axis)


def _minor_marks(axis: Any) -> None:
    """Draw ``axis``'s minor ticks as one line of tick markers instead of a tick object
    each: matplotlib builds every tick (two lines, two labels, their properties copied)
    before it draws, and a roofline's 110 minor ticks were about 0.09 s of a 0.25 s
    figure. The marks sit where matplotlib's would, at its minor locator's places within
    the view, none on a major tick, with the rc size, width, colour and direction of
    minor ticks (``tick_params(which="minor")`` does not reach them). Only an axis of a
    plain Axes on its usual side (bottom, left), shared with no other, is drawn so;
    others keep matplotlib's ticks, and so does an axis whose scale or minor locator is
    set again afterwards (the marks then draw nothing)."""
    from matplotlib.axes import Axes
    from matplotlib.ticker import NullLocator

    ax, name = axis.axes, axis.axis_name
    shared = ax.get_shared_x_axes() if name == "x" else ax.get_shared_y_axes()
    if (not isinstance(ax, Axes) or len(shared.get_siblings(ax)) > 1
            or axis.get_ticks_position() != {"x": "bottom", "y": "left"}[name]):
        return
    instead = NullLocator()
    marks = _minor_marks_class()(axis, axis.get_minor_locator(), instead)
    axis.set_minor_locator(instead)
    ax.add_artist(marks)


@cache
def _minor_marks_class() -> type:
    import numpy as np
    from matplotlib import rcParams
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.markers import TICKDOWN, TICKLEFT, TICKRIGHT, TICKUP

    rc: Any = rcParams  # read by names made at run time

    class MinorMarks(Artist):
        """The minor tick marks of a bottom or left log axis, placed when drawn (an
        artist of its own, not one of the axes' lines)."""

        def __init__(self, axis: Any, locator: Any, instead: Any) -> None:
            super().__init__()
            name = axis.axis_name
            marker: Any = {
                ("x", "out"): TICKDOWN, ("x", "in"): TICKUP, ("x", "inout"): "|",
                ("y", "out"): TICKLEFT, ("y", "in"): TICKRIGHT, ("y", "inout"): "_",
            }[(name, rc[f"{name}tick.direction"])]
            self._line = Line2D([], [], linestyle="none", marker=marker,
                                markersize=rc[f"{name}tick.minor.size"],
                                markeredgewidth=rc[f"{name}tick.minor.width"],
                                color=rc[f"{name}tick.color"], clip_on=False)
            self._line.set_transform(axis.axes.get_xaxis_transform(which="tick1")
                                     if name == "x" else
                                     axis.axes.get_yaxis_transform(which="tick1"))
            self._line.set_figure(axis.axes.figure)
            self.set_zorder(axis.get_zorder())
            self._axis, self._locator, self._instead = axis, locator, instead

        def places(self) -> np.ndarray:
            """Where the marks go now: the locator's places within the view, none on a
            major tick (as matplotlib keeps its minor ticks), or none at all where the
            axis no longer draws them so."""
            axis = self._axis
            if (not (axis.get_visible() and axis.axes.axison) or axis.get_scale() != "log"
                    or axis.get_minor_locator() is not self._instead):
                return np.zeros(0)
            scale = axis.get_transform()
            lo, hi = sorted(axis.get_view_interval())
            locs = np.asarray(self._locator(), dtype=float)
            major = np.asarray(axis.get_majorticklocs(), dtype=float)
            lo_t, hi_t = scale.transform(np.array([lo, hi]))
            locs_t, major_t = scale.transform(locs), scale.transform(major)
            tol = (hi_t - lo_t) * 1e-5
            on_major = np.isclose(locs_t[:, None], major_t[None, :], atol=tol,
                                  rtol=0).any(axis=1)
            slack = (hi_t - lo_t) * 1e-10
            return locs[~on_major & (locs_t >= lo_t - slack) & (locs_t <= hi_t + slack)]

        def draw(self, renderer: Any) -> None:
            places = self.places()
            if not places.size:
                return
            zero = np.zeros(places.size)
            self._line.set_data(*((places, zero) if self._axis.axis_name == "x"
                                  else (zero, places)))
            self._line.draw(renderer)

    return MinorMarks


def _tick(value: float, unit: str, si: Any) -> str:
    """Tick text: plain numbers for ratios, SI prefixes for quantities."""
    if value <= 0:
        return ""
    return f"{value:g}" if not unit else str(si(value, unit))


