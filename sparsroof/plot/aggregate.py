"""The aggregate roofline of a batch: every matrix's best row, coloured by class.

x is arithmetic intensity (useful FLOP per byte), y attainable FLOP/s. Each spec in the
store gets a panel of its own (sharing both axes), with its roof min(P, β·AI) drawn from
the peak and bandwidth its rows were bounded by, so the figure needs only the store, not
the spec files; each roof is labelled with its compute unit and peak, memory level and
bandwidth. In a panel:

- colour (and, past the palette, fill) is the matrix's class, and the legend counts
  matrices (a matrix analysed for SpMV and SpMM, or on two specs, counts once);
- the marker's shape is the kernel and width of the row (SpMV, SpMM d=16, ...);
- a dotted tick in the class colour is the row's launch ceiling F / t_launch, as on
  ``plot roofline`` (:func:`~sparsroof.plot.roof.launch_ticks`): a launch-bound row sits
  on it, below its roof;
- markers that would hide one another (a dozen near-identical matrices on one spot) are
  set a few points apart, never more than a couple of marker widths from their true
  place, and a footnote says how far (:mod:`.spread`).

Matrices with no work (no nonzeros) cannot sit on a log-log plane and are counted in a
note on the figure, never dropped silently. The legends go where they cover no roof,
tick or point: outside the panels if need be.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..batch.summary import MatrixPoint
from ..errors import FigureError
from ..units import counted, si
from .legends import footnote, place_legend
from .roof import decades, launch_handle, launch_ticks, slope_angle
from .spread import Spread, caption, marker_diameter_pt, spread
from .style import MARKERS, class_styles, figure_format, log_axis, new_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["aggregate_roofline_figure", "plot_aggregate", "unplottable", "kernel_label",
           "class_counts"]

_SIZE = 22.0  # marker area, points²
_ROOF_STYLES = ("-", "--", ":", "-.")


def kernel_label(kernel: str, width: int) -> str:
    """How the legend names a row's kernel and width.

    >>> kernel_label("spmv", 1), kernel_label("spmm", 16)
    ('SpMV', 'SpMM d=16')
    """
    name = {"spmv": "SpMV", "spmm": "SpMM"}.get(kernel, kernel)
    return name if kernel == "spmv" else f"{name} d={width}"


def class_counts(points: Sequence[MatrixPoint]) -> dict[str, int]:
    """Matrices (files, or members of an archive) per class, each counted once however
    many rows it has (specs, kernels, widths).

    >>> p = MatrixPoint("a", "a.mtx", "", "banded", "s", "spmv", 1, "csr", "compulsory",
    ...                 0.1, 1.0, 1.0, 1.0, "memory")
    >>> class_counts([p, p.__class__(**{**p.__dict__, "spec": "t"})])
    {'banded': 1}
    """
    seen: dict[str, set[tuple[str, str]]] = {}
    for p in points:
        seen.setdefault(p.label, set()).add((p.path, p.member))
    return {label: len(seen[label]) for label in sorted(seen)}


def _roofs(ax: Axes, points: Sequence[MatrixPoint], xs: tuple[float, float]) -> None:
    """Each roof of the rows, labelled above itself (where no row can be): the peak at
    the right end, the bandwidth along the diagonal near the left edge."""
    import numpy as np

    angle = slope_angle(ax)
    ylo = ax.get_ylim()[0]
    x = np.geomspace(xs[0], xs[1], 256)
    roofs = sorted({(p.spec, p.device, p.unit, p.peak_flops, p.memory_level, p.bandwidth)
                    for p in points}, key=lambda r: (r[3], -r[5]))
    for i, (spec, device, unit, peak, level, bandwidth) in enumerate(roofs):
        name = f"{spec} ({device})" if device and device != spec else spec
        gid = f"roof|{spec}" + (f"|{level}" if i else "")
        ax.plot(x, np.minimum(peak, bandwidth * x), color="black", lw=1.4, zorder=2,
                ls=_ROOF_STYLES[i % len(_ROOF_STYLES)], label=f"roof: {name}", gid=gid)
        ax.annotate(f"{unit} {si(peak, 'FLOP/s')}".strip(), (xs[1], peak), xytext=(-4, 2),
                    textcoords="offset points", fontsize=7, color="0.25", ha="right",
                    va="bottom", gid=f"roof-label|{spec}|compute" + (f"|{i}" if i else ""))
        at = max(xs[0] * 1.6, ylo * 2.0 / bandwidth)
        ax.annotate(f"{level} {si(bandwidth, 'B/s')}".strip(), (at, bandwidth * at),
                    xytext=(0, 3), textcoords="offset points", rotation=angle,
                    rotation_mode="anchor", fontsize=7, color="0.25", ha="left",
                    va="bottom", gid=f"roof-label|{spec}|memory" + (f"|{i}" if i else ""))


def unplottable(points: Sequence[MatrixPoint]) -> list[str]:
    """Names of the matrices no log-log plot can show: zero work or zero attainable rate."""
    return sorted({p.name for p in points if not p.has_work})


class _Style:
    """Colour and fill per class, shape per kernel and width, over every panel."""

    def __init__(self, points: Sequence[MatrixPoint]) -> None:
        styles = class_styles({p.label for p in points})  # as the HTML page colours them
        self.fill = {label: (face, edge) for label, (_, face, edge) in styles.items()}
        self.color = {label: color for label, (color, _, _) in styles.items()}
        kernels = sorted({(p.kernel, p.width) for p in points},
                         key=lambda k: (k[0] != "spmv", k))  # SpMV first: a circle
        self.marker = {k: MARKERS[i % len(MARKERS)] for i, k in enumerate(kernels)}


def _panel(ax: Axes, points: Sequence[MatrixPoint], style: _Style,
           xs: tuple[float, float]) -> Spread:
    """One spec's roofs, launch ceilings and rows; returns how the markers were set."""
    _roofs(ax, points, xs)
    top = max(p.peak_flops for p in points)
    launch_ticks(ax, [(f"{p.spec}|{p.name}|{p.kernel}|{p.width}", p.flops_useful / p.launch_s,
                       p.intensity, p.intensity, style.color[p.label])
                      for p in points if p.launch_s > 0 and p.flops_useful > 0], top,
                 reach=1.3)
    moved = spread(ax, [(p.intensity, p.attainable_flops) for p in points],
                   marker_diameter_pt(_SIZE))
    groups: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    for p, xy in zip(points, moved.xy, strict=True):
        groups.setdefault((p.label, p.kernel, p.width), []).append(xy)
    for (label, kernel, width), places in sorted(groups.items()):
        face, edge = style.fill[label]
        ax.scatter([x for x, _ in places], [y for _, y in places], s=_SIZE, facecolors=face,
                   edgecolors=edge, linewidths=0.5 if edge == "white" else 0.9,
                   marker=style.marker[(kernel, width)], zorder=3,
                   gid=f"points|{points[0].spec}|{label}|{kernel}|{width}")
    return moved


def _legends(ax: Axes, points: Sequence[MatrixPoint], style: _Style) -> None:
    from matplotlib.lines import Line2D

    classes = [Line2D([], [], ls="", marker="o", ms=6, mfc=style.fill[label][0],
                      mec=style.fill[label][1], mew=1.0, label=f"{label} ({n})")
               for label, n in class_counts(points).items()]
    place_legend(ax, classes, main=True, fontsize=7.5, framealpha=0.9,
                 title="class (matrices)", title_fontsize=7.5)
    kernels = [Line2D([], [], ls="", marker=m, color="0.35", label=kernel_label(*k))
               for k, m in style.marker.items()]
    launches = sorted({p.launch_s for p in points if p.launch_s > 0})
    if launches:
        shown = ", ".join(si(t, "s") for t in launches[:3]) + (", …" if len(launches) > 3
                                                               else "")
        kernels.append(launch_handle(f"launch ceiling F / t_launch ({shown})"))
    kernels.append(Line2D([], [], color="black", lw=1.4, label="roof min(P, β·AI)"))
    place_legend(ax, kernels, fontsize=7.5, framealpha=0.9, title="kernel (marker)",
                 title_fontsize=7.5)


def _size(panels: int) -> tuple[float, float]:
    return (2.0 + 4.6 * panels, 5.0) if panels > 1 else (7.0, 5.0)


def aggregate_roofline_figure(points: Sequence[MatrixPoint], *,
                              title: str = "all matrices: each one's best row in each run",
                              size: tuple[float, float] | None = None,
                              dpi: int = 150) -> Figure:
    """A figure of ``points`` (one per matrix, spec and batch run): a panel per spec, over
    its roofs."""
    hidden = unplottable(points)
    points = [p for p in points if p.intensity > 0 and p.attainable_flops > 0]
    if not points:
        raise FigureError("no results with work to plot"
                          + (f" ({len(hidden)} matrices with no work)" if hidden else ""))
    specs = sorted({p.spec for p in points})
    fig = new_figure(size or _size(len(specs)), dpi)
    axes = fig.subplots(1, len(specs), sharex=True, sharey=True, squeeze=False)[0]
    fig.subplots_adjust(left=0.08 if len(specs) > 1 else 0.12, right=0.97, bottom=0.12,
                        top=0.86, wspace=0.12)
    ridge = max(p.peak_flops / p.bandwidth for p in points)
    xs = decades(min(p.intensity for p in points),
                 max(max(p.intensity for p in points), ridge) * 2)
    ys = decades(min(p.attainable_flops for p in points) / 2,
                 max(p.peak_flops for p in points) * 2.5)
    style = _Style(points)
    spreads = []
    for ax, spec in zip(axes, specs, strict=True):
        mine = [p for p in points if p.spec == spec]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*xs)
        ax.set_ylim(*ys)
        spreads.append(_panel(ax, mine, style, xs))
        device = mine[0].device
        ax.set_title(f"{spec} ({device})" if device and device != spec else spec,
                     fontsize=9)
        log_axis(ax.xaxis, "")
        log_axis(ax.yaxis, "FLOP/s")
        ax.grid(True, which="major", color="0.9", lw=0.6, zorder=0)
        ax.set_xlabel("arithmetic intensity (useful FLOP / byte)")
    axes[0].set_ylabel("attainable (speed of light)")
    fig.suptitle(title, fontsize=11)
    if hidden:
        names = ", ".join(hidden[:4]) + (", …" if len(hidden) > 4 else "")
        gone = counted(len(hidden), "matrix", "matrices")
        axes[0].text(0.01, 0.99, f"{gone} with no work not shown: {names}",
                     transform=axes[0].transAxes, fontsize=7, color="0.3", va="top",
                     gid="hidden")
    _legends(axes[-1], points, style)
    footnote(axes[0], _caption(spreads))
    return fig


def _caption(spreads: Sequence[Spread]) -> str:
    """One footnote for the markers moved in every panel."""
    moved = [s for s in spreads if s.moved]
    if not moved:
        return ""
    return caption(Spread([], sum(s.moved for s in moved), max(s.shift_pt for s in moved),
                          max(s.pile for s in moved), sum(s.crowded for s in moved)))


def plot_aggregate(points: Sequence[MatrixPoint], path: str | Path) -> Path:
    """Draw :func:`aggregate_roofline_figure` and write it to ``path`` (PNG, SVG or PDF)."""
    figure_format(path)  # a bad suffix fails before any drawing
    try:
        fig = aggregate_roofline_figure(points)
    except FigureError as err:
        raise FigureError(f"{path}: {err}") from None
    return save(fig, path)
