"""Figures of sparsroof results: roofline, sparsity-aware (reuse model) roofline,
time-based roofline, ridgeline, sparsity roofline and spy plots.

The only part of sparsroof that draws, and only inside functions: importing this package
imports neither matplotlib nor Pillow. Every ``*_figure`` function returns a
``matplotlib.figure.Figure`` built with the object API (no pyplot state); :func:`save`
writes it as PNG, SVG or PDF by the file's suffix. The spy figure's PNG and the report's
thumbnails are drawn without matplotlib, with Pillow (:mod:`sparsroof.plot.raster`): a
density image needs none of matplotlib's half second of import.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError

if TYPE_CHECKING:
    from ..hardware.spec import HwSpec
    from .complexity_time import complexity_time_figure
    from .layers import (
        LayerPoint,
        layer_roofline_figure,
        plot_whatif_layers,
        read_whatif_layers,
        whatif_document,
    )
    from .measured import (
        MeasuredPoint,
        measured_points,
        measured_spec,
        other_specs,
        read_measured,
    )
    from .points import RoofPoint, read_distributed, read_results, roof_points
    from .reuse import reuse_figure
    from .ridge import RidgePoint, ridge_region, ridgeline, ridgeline_figure
    from .roof import roofline_figure
    from .sparsity import SparsityPoint, read_sparsity_points, sparsity_roofline_figure
    from .spy import density, spy_figure
    from .style import figure_format, parse_size, save
    from .timeroof import time_roofline_figure

#: public name -> the module that defines it, imported on first use: a command that may
#: draw (analyze --plot) pays for the figure modules only when it does
_HOMES = {
    **dict.fromkeys(["MeasuredPoint", "measured_points", "measured_spec", "other_specs",
                     "read_measured"], "measured"),
    **dict.fromkeys(["RoofPoint", "read_distributed", "read_results", "roof_points"], "points"),
    **dict.fromkeys(["RidgePoint", "ridge_region", "ridgeline", "ridgeline_figure"], "ridge"),
    "roofline_figure": "roof",
    "reuse_figure": "reuse",
    **dict.fromkeys(["SparsityPoint", "read_sparsity_points", "sparsity_roofline_figure"],
                    "sparsity"),
    **dict.fromkeys(["density", "spy_figure"], "spy"),
    **dict.fromkeys(["figure_format", "parse_size", "save"], "style"),
    "time_roofline_figure": "timeroof",
    **dict.fromkeys(["LayerPoint", "layer_roofline_figure", "plot_whatif_layers",
                     "read_whatif_layers", "whatif_document"], "layers"),
    "complexity_time_figure": "complexity_time",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "draw",
    "KINDS",
    "LayerPoint",
    "MeasuredPoint",
    "RidgePoint",
    "RoofPoint",
    "SparsityPoint",
    "complexity_time_figure",
    "read_distributed",
    "density",
    "figure_format",
    "layer_roofline_figure",
    "measured_points",
    "measured_spec",
    "other_specs",
    "parse_size",
    "plot_points",
    "plot_analyses",
    "plot_measured",
    "plot_ridgeline_results",
    "plot_whatif_layers",
    "read_measured",
    "read_results",
    "read_sparsity_points",
    "read_whatif_layers",
    "reuse_figure",
    "ridge_points",
    "ridge_region",
    "ridgeline",
    "ridgeline_figure",
    "roof_points",
    "roofline_figure",
    "save",
    "sparsity_roofline_figure",
    "spy_figure",
    "time_roofline_figure",
    "whatif_document",
]

#: figure kinds drawn from analysis results
KINDS = ("roofline", "time", "complexity-time", "ridgeline")


def plot_points(points: Sequence[RoofPoint], spec: HwSpec, path: str | Path, *,
                kind: str = "roofline", size: tuple[float, float] | None = None,
                dpi: int = 150, measured: Sequence[MeasuredPoint] = ()) -> Path:
    """Draw ``points`` (and ``measured`` runs beside their bound) as a roofline, a
    time-based roofline or a complexity-time roofline and write ``path``."""
    from .style import figure_format, save

    figure_format(path)  # a bad suffix fails before any drawing
    from .measured import other_specs

    others = other_specs(measured, spec.name)
    if others:
        raise FigureError(f"{path}: the measured runs were bounded on {', '.join(others)}, "
                          f"not {spec.name}: draw them against their own spec")
    return save(_figure(points, spec, kind, size, dpi, measured), path)


def _figure(points: Sequence[RoofPoint], spec: HwSpec, kind: str,
            size: tuple[float, float] | None, dpi: int,
            measured: Sequence[MeasuredPoint] = ()) -> Any:
    from .complexity_time import complexity_time_figure
    from .roof import roofline_figure
    from .timeroof import time_roofline_figure

    if kind == "roofline":
        fig = roofline_figure(points, spec, size=size or (8.0, 5.5), dpi=dpi,
                              measured=measured)
    elif kind == "time":
        fig = time_roofline_figure(points, spec, size=size or (12.0, 5.5), dpi=dpi,
                                   measured=measured)
    elif kind == "complexity-time":
        fig = complexity_time_figure(points, spec, size=size or (9.0, 6.5), dpi=dpi,
                                     measured=measured)
    else:
        raise FigureError(f"unknown figure kind {kind!r} (use roofline, time, "
                          "complexity-time)")
    return fig


def draw(analyses: Any, path: str | Path | None = None, *, kind: str = "roofline",
         size: tuple[float, float] | None = None, dpi: int = 150) -> Any:
    """Draw an :class:`~sparsroof.analysis.Analysis` (or a list of them, of one spec) as a
    roofline, a time-based or a complexity-time roofline, against the spec they were
    bounded on. Returns the matplotlib Figure, which a notebook shows; with ``path`` the
    figure is written there (.png, .svg or .pdf) and the path returned.

    >>> import numpy as np, sparsroof
    >>> fig = sparsroof.draw(sparsroof.analyze(np.eye(64), model="compulsory"))
    >>> fig.axes[0].get_xlabel()
    'arithmetic intensity (useful FLOP per byte)'
    """
    from ..hardware.library import load_spec
    from .points import roof_points

    group = _analyses(analyses)
    _check_size(size)
    _check_dpi(dpi)
    if len({a.spec for a in group}) > 1:
        raise FigureError("draw analyses of one spec at a time (got "
                          f"{', '.join(sorted({a.spec for a in group}))})")
    spec = group[0].hw or load_spec(group[0].spec)
    if path is not None:
        return plot_analyses(group, spec, path, kind=kind, size=size, dpi=dpi)
    if kind == "ridgeline":
        raise FigureError("a ridgeline is drawn into a file: give draw a path")
    points = roof_points(group)
    if not points:
        raise FigureError("no results to draw")
    default = {"roofline": (8.0, 5.5), "time": (12.0, 5.5), "complexity-time": (9.0, 6.5)}
    return _figure(points, spec, kind, size or default.get(kind), dpi)


def _analyses(given: Any) -> list[Any]:
    """:func:`draw`'s analyses as a list: one analysis, or any iterable of them."""
    if hasattr(given, "results"):
        return [given]
    try:
        group = list(given)
    except TypeError:
        raise FigureError(f"draw takes an analysis or a list of them, not "
                          f"{type(given).__name__}") from None
    if not group:
        raise FigureError("nothing to draw: no analyses given")
    odd = [type(a).__name__ for a in group if not hasattr(a, "results")]
    if odd:
        raise FigureError(f"draw takes analyses, not {odd[0]}")
    return group


def _check_dpi(dpi: Any) -> None:
    """Dots per inch as the command line takes them: a whole number from 30 to 1200."""
    from ..userfile.fields import FieldError, whole_number

    try:
        whole_number(dpi, "dpi", minimum=30, maximum=1200)
    except FieldError as err:
        raise FigureError(str(err)) from None


def _check_size(size: Any) -> None:
    """A figure's size in inches: two positive numbers, or None for the kind's own."""
    if size is None:
        return
    from .style import MAX_SIDE

    try:
        w, h = size
        fine = all(isinstance(v, int | float) and not isinstance(v, bool)
                   and 0 < v <= MAX_SIDE for v in (w, h))
    except (TypeError, ValueError):
        fine = False
    if not fine:
        raise FigureError(f"size={size!r}: give (width, height) in inches, each at most "
                          f"{MAX_SIDE:g}, e.g. (8, 5.5)")


def plot_measured(measured: Sequence[MeasuredPoint], path: str | Path, *,
                  kind: str = "roofline", spec: HwSpec | str | None = None,
                  size: tuple[float, float] | None = None, dpi: int = 150) -> Path:
    """Draw measured runs beside their bound against the ceilings of ``spec`` (by default
    the one spec the runs were bounded on) and write ``path``."""
    if not measured:
        raise FigureError(f"{path}: no measured runs to plot")
    from ..hardware.library import load_spec
    from .measured import measured_spec

    spec = spec or measured_spec(measured)
    if isinstance(spec, str):
        spec = load_spec(spec)
    return plot_points([], spec, path, kind=kind, size=size, dpi=dpi, measured=measured)


def plot_analyses(analyses: Sequence[Any], spec: HwSpec, path: str | Path, *,
                  kind: str = "roofline", size: tuple[float, float] | None = None,
                  dpi: int = 150) -> Path:
    """Draw a list of :class:`~sparsroof.analysis.Analysis` results and write ``path``.

    ``kind`` "ridgeline" draws the distributed results (``--ranks``) of the first matrix
    that has them, at its first width."""
    if kind == "ridgeline":
        return _plot_ridgeline(analyses, path, size=size, dpi=dpi)
    from .points import roof_points

    points = roof_points(analyses)
    if not points:
        raise FigureError(f"{path}: no results to plot")
    return plot_points(points, spec, path, kind=kind, size=size, dpi=dpi)


def ridge_points(analysis: Any) -> list[RidgePoint]:
    """The ridgeline points of an analysis's distributed results (``--ranks``) at its
    first width; rank counts that move nothing over the network have no place there."""
    return _ridge_points(analysis.distributed)


def _ridge_points(distributed: Sequence[Any]) -> list[RidgePoint]:
    from .ridge import RidgePoint

    if not distributed:
        return []
    width = distributed[0].width
    return [RidgePoint(rb.ranks, rb.arithmetic_intensity, rb.memory_intensity, rb.bound)
            for rb in distributed if rb.width == width and rb.bytes_network > 0]


def plot_ridgeline_results(results: str | Path, path: str | Path, *,
                           size: tuple[float, float] | None = None, dpi: int = 150) -> Path:
    """Draw the ridgeline of the first matrix with distributed results in a saved analyze
    JSON document (``analyze --ranks ... --output json``) and write ``path``."""
    from .points import read_distributed
    from .style import figure_format

    figure_format(path)
    from .mlp import mlp_document, plot_mlp_document

    doc = mlp_document(results)
    if doc is not None:  # the data-parallel MLP of 'sparsroof whatif --mlp'
        return plot_mlp_document(doc, str(results), path, size=size, dpi=dpi)
    found = read_distributed(results)
    if not found:
        raise FigureError(f"{results}: no distributed results (analyze with --ranks)")
    return _draw_ridgeline(*found[0], path, size=size, dpi=dpi)


def _plot_ridgeline(analyses: Sequence[Any], path: str | Path, *,
                    size: tuple[float, float] | None, dpi: int) -> Path:
    from .style import figure_format

    figure_format(path)
    with_ranks = [a for a in analyses if a.distributed]
    if not with_ranks:
        raise FigureError(f"{path}: a ridgeline needs distributed results (use {{opt:ranks}})")
    a = with_ranks[0]
    return _draw_ridgeline(a.matrix.name, a.spec, a.distributed, path, size=size, dpi=dpi)


def _draw_ridgeline(name: str, spec: str, distributed: Sequence[Any], path: str | Path, *,
                    size: tuple[float, float] | None, dpi: int) -> Path:
    from .ridge import ridgeline

    points = _ridge_points(distributed)
    if not points:
        raise FigureError(f"{path}: no rank count moves data over the network (use P > 1)")
    first = distributed[0]
    title = f"{name}, SpMM d={first.width} on {spec}: P = " + ", ".join(
        str(p.ranks) for p in points) + " ranks"
    if any(p.ranks == 1 for p in distributed):
        title += " (P = 1 moves nothing over the network)"
    return ridgeline(points, first.peak_flops, first.bandwidth, first.network, title, path,
                     size=size or (7.0, 5.5), dpi=dpi)
