"""The aggregate roofline of a batch: every matrix's best row, coloured by class.

x is arithmetic intensity (useful FLOP per byte), y attainable FLOP/s; each spec in the
store gets its roof min(P, β·AI) drawn from the peak and bandwidth its rows were bounded
by, so the figure needs only the store, not the spec files. Each roof is labelled with
its spec, device, compute unit and peak, memory level and bandwidth; matrices with no
work (no nonzeros) cannot sit on a log-log plane and are counted in a note on the
figure, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..batch.summary import MatrixPoint
from ..errors import FigureError
from ..units import si
from .roof import decades
from .style import MARKERS, PALETTE, figure_format, log_axis, new_figure, save

__all__ = ["aggregate_roofline_figure", "plot_aggregate", "unplottable"]

_ROOF_STYLES = ("-", "--", ":", "-.")


def _roofs(ax: Any, points: Sequence[MatrixPoint], xs: tuple[float, float]) -> None:
    import numpy as np

    x = np.geomspace(xs[0], xs[1], 256)
    roofs = sorted({(p.spec, p.device, p.unit, p.peak_flops, p.memory_level, p.bandwidth)
                    for p in points})
    for i, (spec, device, unit, peak, level, bandwidth) in enumerate(roofs):
        name = f"{spec} ({device})" if device and device != spec else spec
        ax.plot(x, np.minimum(peak, bandwidth * x), color="black", lw=1.4, zorder=2,
                ls=_ROOF_STYLES[i % len(_ROOF_STYLES)], label=f"roof: {name}",
                gid=f"roof|{spec}")
        ridge = peak / bandwidth
        ax.annotate(f"{unit} {si(peak, 'FLOP/s')}".strip(), (xs[1], peak), xytext=(-4, 2),
                    textcoords="offset points", fontsize=7, color="0.25", ha="right",
                    va="bottom", gid=f"roof-label|{spec}|compute")
        at = max(xs[0], ridge / 10)  # right of and below the diagonal, clear of it
        ax.annotate(f"{level} {si(bandwidth, 'B/s')}".strip(), (at, bandwidth * at),
                    xytext=(6, -4), textcoords="offset points", fontsize=7, color="0.25",
                    ha="left", va="top", gid=f"roof-label|{spec}|memory")


def unplottable(points: Sequence[MatrixPoint]) -> list[str]:
    """Names of the matrices no log-log plot can show: zero work or zero attainable rate."""
    return sorted({p.name for p in points if not (p.intensity > 0 and p.attainable_flops > 0)})


def aggregate_roofline_figure(points: Sequence[MatrixPoint], *,
                              title: str = "all matrices, best row per matrix and spec",
                              size: tuple[float, float] = (8.0, 5.5), dpi: int = 150) -> Any:
    """A figure of ``points`` (one per matrix and spec) over the roofs of their specs."""
    hidden = unplottable(points)
    points = [p for p in points if p.intensity > 0 and p.attainable_flops > 0]
    if not points:
        raise FigureError("no results with work to plot"
                          + (f" ({len(hidden)} matrices with no work)" if hidden else ""))
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
    if hidden:
        names = ", ".join(hidden[:4]) + (", …" if len(hidden) > 4 else "")
        ax.text(0.01, 0.99, f"{len(hidden)} matrix(es) with no work not shown: {names}",
                transform=ax.transAxes, fontsize=7, color="0.3", va="top", gid="hidden")
    return fig


def plot_aggregate(points: Sequence[MatrixPoint], path: str | Path) -> Path:
    """Draw :func:`aggregate_roofline_figure` and write it to ``path`` (PNG, SVG or PDF)."""
    figure_format(path)  # a bad suffix fails before any drawing
    try:
        fig = aggregate_roofline_figure(points)
    except FigureError as err:
        raise FigureError(f"{path}: {err}") from None
    return save(fig, path)
