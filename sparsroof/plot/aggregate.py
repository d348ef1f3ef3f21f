"""The aggregate roofline of a batch: every matrix's best row, coloured by class.

x is arithmetic intensity (useful FLOP per byte), y attainable FLOP/s; each spec in the
store gets its roof min(P, β·AI) drawn from the peak and bandwidth its rows were bounded
by, so the figure needs only the store, not the spec files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..batch.summary import MatrixPoint
from ..errors import FigureError
from .roof import decades
from .style import MARKERS, PALETTE, figure_format, log_axis, new_figure, save

__all__ = ["aggregate_roofline_figure", "plot_aggregate"]

_ROOF_STYLES = ("-", "--", ":", "-.")


def _roofs(ax: Any, points: Sequence[MatrixPoint], xs: tuple[float, float]) -> None:
    import numpy as np

    x = np.geomspace(xs[0], xs[1], 256)
    roofs = sorted({(p.spec, p.peak_flops, p.bandwidth) for p in points})
    for i, (spec, peak, bandwidth) in enumerate(roofs):
        ax.plot(x, np.minimum(peak, bandwidth * x), color="black", lw=1.4, zorder=2,
                ls=_ROOF_STYLES[i % len(_ROOF_STYLES)], label=f"roof: {spec}")


def aggregate_roofline_figure(points: Sequence[MatrixPoint], *,
                              title: str = "all matrices, best row per matrix and spec",
                              size: tuple[float, float] = (8.0, 5.5), dpi: int = 150) -> Any:
    """A figure of ``points`` (one per matrix and spec) over the roofs of their specs."""
    points = [p for p in points if p.intensity > 0 and p.attainable_flops > 0]
    if not points:
        raise FigureError("no results with work to plot")
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ridge = max(p.peak_flops / p.bandwidth for p in points)
    xs = decades(min(p.intensity for p in points), max(max(p.intensity for p in points),
                                                        ridge) * 2)
    _roofs(ax, points, xs)
    for i, label in enumerate(sorted({p.label for p in points})):
        mine = [p for p in points if p.label == label]
        ax.scatter([p.intensity for p in mine], [p.attainable_flops for p in mine], s=16,
                   color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
                   alpha=0.75, zorder=3, label=f"{label} ({len(mine)})")
    ax.set_xlim(*xs)
    log_axis(ax.xaxis, "")
    log_axis(ax.yaxis, "FLOP/s")
    ax.set_xlabel("arithmetic intensity (useful FLOP / byte)")
    ax.set_ylabel("attainable (speed of light)")
    ax.set_title(title)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def plot_aggregate(points: Sequence[MatrixPoint], path: str | Path) -> Path:
    """Draw :func:`aggregate_roofline_figure` and write it to ``path`` (PNG, SVG or PDF)."""
    figure_format(path)  # a bad suffix fails before any drawing
    try:
        fig = aggregate_roofline_figure(points)
    except FigureError as err:
        raise FigureError(f"{path}: {err}") from None
    return save(fig, path)
