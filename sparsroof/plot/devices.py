"""One roofline of several devices: each spec's roof (its memory levels' bandwidths under
its peak at the precision) in its own colour, and each matrix's results on that spec as
points of the same colour, so the same kernel can be read across devices."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import FigureError
from ..hardware.spec import HwSpec
from .points import roof_points
from .roof import decades
from .style import MARKERS, PALETTE, log_axis, new_figure, save

__all__ = ["devices_figure"]


def _roof(spec: HwSpec, unit: str, precision: str) -> tuple[float, list[tuple[str, float]]]:
    """The peak the points were bounded by, and every memory level with a bandwidth."""
    peak = spec.peaks.get((unit, precision))
    if peak is None:
        raise FigureError(f"{spec.name} has no {unit} {precision} peak: no roof to draw")
    levels = [(lvl.name, lvl.bandwidth.value) for lvl in spec.memory if lvl.bandwidth]
    return peak.value, levels


def devices_figure(groups: Sequence[Sequence[Any]], specs: Sequence[HwSpec], path: str | Path,
                   *, size: tuple[float, float] | None = None, dpi: int = 150) -> Path:
    """Draw the analyses of each matrix on every spec (``groups[i][j]``: matrix i on spec
    j) as one roofline and write ``path``."""
    by_spec = [[group[j] for group in groups] for j in range(len(specs))]
    points = [roof_points(analyses) for analyses in by_spec]
    if not any(points):
        raise FigureError(f"{path}: no results to plot")
    fig = new_figure(size or (7.5, 5.0), dpi)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    roofs = []
    for spec, pts in zip(specs, points, strict=True):
        if pts:
            roofs.append(_roof(spec, pts[0].unit, pts[0].precision))
    ai = [p.intensity for pts in points for p in pts if p.intensity > 0]
    peaks = [peak for peak, _ in roofs]
    bws = [bw for _, levels in roofs for _, bw in levels]
    xlo, xhi = decades(min([*ai, min(peaks) / max(bws)]) / 2, max([*ai, max(peaks) / min(bws)]) * 4)
    perf = [p.attainable_flops for pts in points for p in pts if p.attainable_flops > 0]
    ylo, yhi = decades(min([*perf, min(bws) * xlo]) / 2, max(peaks) * 2.5)
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    for j, (spec, pts) in enumerate(zip(specs, points, strict=True)):
        if not pts:
            continue
        color = PALETTE[j % len(PALETTE)]
        peak, levels = _roof(spec, pts[0].unit, pts[0].precision)
        for k, (name, bw) in enumerate(levels):
            ridge = peak / bw
            ax.plot([xlo, ridge, xhi], [bw * xlo, peak, peak], color=color,
                    lw=1.8 if k == len(levels) - 1 else 0.9,
                    ls="-" if k == len(levels) - 1 else (0, (5, 3)),
                    gid=f"roof|{spec.name}|{name}",
                    label=f"{spec.device} ({spec.name})" if k == len(levels) - 1 else None)
        for i, matrix in enumerate(dict.fromkeys(p.matrix for p in pts)):
            mine = [p for p in pts if p.matrix == matrix]
            ax.scatter([p.intensity for p in mine], [p.attainable_flops for p in mine],
                       color=color, marker=MARKERS[i % len(MARKERS)], s=28, zorder=3,
                       gid=f"points|{spec.name}|{matrix}")
    log_axis(ax.xaxis, "")
    log_axis(ax.yaxis, "FLOP/s")
    ax.set_xlabel("arithmetic intensity (useful FLOP per byte)")
    ax.set_ylabel("attainable performance")
    kernel = "/".join(sorted({p.kernel for pts in points for p in pts}))
    ax.set_title(f"Roofline of {len(specs)} devices ({kernel}): solid = main memory, "
                 "dashed = caches;\na point below its roof is held by the launch floor",
                 fontsize=10)
    ax.grid(True, which="major", lw=0.4, alpha=0.5)
    from matplotlib.lines import Line2D

    matrices = list(dict.fromkeys(p.matrix for pts in points for p in pts))
    marks = [Line2D([], [], ls="", marker=MARKERS[i % len(MARKERS)], color="0.35", label=m)
             for i, m in enumerate(matrices)]
    devices, _ = ax.get_legend_handles_labels()
    ax.legend(handles=[*devices, *marks], fontsize=7.5, loc="upper left",
              title="device (colour), matrix (marker)", title_fontsize=7.5)
    return save(fig, path)
