"""One roofline of several devices: each spec's roof (its memory levels' bandwidths under
its peak at the precision) in its own colour, and each matrix's results on that spec as
points of the same colour, so the same kernel can be read across devices.

Devices often put a kernel on one spot (two GPUs with one launch floor give a small
matrix one rate), so markers that would hide one another are set a few points apart
(:mod:`.spread`, said in a footnote); each device's launch ceiling F / t_launch is a
dotted tick in its colour across its points, which explains a point below its roof; the
legend goes where it covers no roof or point, outside the axes if need be.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..hardware.spec import HwSpec
from ..units import si
from .legends import footnote, place_legend
from .points import RoofPoint, roof_points
from .roof import decades, launch_handle, launch_ticks
from .spread import caption, marker_diameter_pt, spread
from .style import MARKERS, PALETTE, log_axis, new_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["devices_figure", "devices_roofline_figure"]

_SIZE = 28.0  # marker area, points²


def _roof(spec: HwSpec, unit: str, precision: str) -> tuple[float, list[tuple[str, float]]]:
    """The peak the points were bounded by, and every memory level with a bandwidth."""
    peak = spec.peaks.get((unit, precision))
    if peak is None:
        raise FigureError(f"{spec.name} has no {unit} {precision} peak: no roof to draw")
    levels = [(lvl.name, lvl.bandwidth.value) for lvl in spec.memory if lvl.bandwidth]
    return peak.value, levels


def _limits(points: list[list[RoofPoint]], roofs: list[tuple[float, list[tuple[str, float]]]]
            ) -> tuple[tuple[float, float], tuple[float, float]]:
    ai = [p.intensity for pts in points for p in pts if p.intensity > 0]
    peaks = [peak for peak, _ in roofs]
    bws = [bw for _, levels in roofs for _, bw in levels]
    xlo, xhi = decades(min([*ai, min(peaks) / max(bws)]) / 2,
                       max([*ai, max(peaks) / min(bws)]) * 4)
    perf = [p.attainable_flops for pts in points for p in pts if p.attainable_flops > 0]
    return (xlo, xhi), decades(min([*perf, min(bws) * xlo]) / 2, max(peaks) * 2.5)


def _draw_roofs(ax: Axes, specs: Sequence[HwSpec], points: list[list[RoofPoint]]) -> None:
    xlo, xhi = ax.get_xlim()
    for j, (spec, pts) in enumerate(zip(specs, points, strict=True)):
        if not pts:
            continue
        color = PALETTE[j % len(PALETTE)]
        peak, levels = _roof(spec, pts[0].unit, pts[0].precision)
        for k, (name, bw) in enumerate(levels):
            main = k == len(levels) - 1
            ax.plot([xlo, peak / bw, xhi], [bw * xlo, peak, peak], color=color,
                    lw=1.8 if main else 0.9, ls="-" if main else (0, (5, 3)),
                    gid=f"roof|{spec.name}|{name}",
                    label=device_label(spec) if main else None)


def device_label(spec: HwSpec, width: int = 32) -> str:
    """A device's legend entry: the spec's name over its device, wrapped narrow.

    >>> from sparsroof.hardware.library import load_spec
    >>> print(device_label(load_spec("mi250x-gcd")))
    mi250x-gcd: AMD Instinct MI250X,
    one GCD (110 CUs, 64 GB HBM2e)
    """
    import textwrap

    if not spec.device or spec.device == spec.name:
        return spec.name
    return textwrap.fill(f"{spec.name}: {spec.device}", width)


def _draw_points(ax: Axes, specs: Sequence[HwSpec], points: list[list[RoofPoint]],
                 matrices: list[str]) -> str:
    """Every device's markers, set apart where they would hide one another, and its
    launch ceilings; returns the footnote that says how far markers moved."""
    # one marker per device, matrix and place: the models of a matrix that agree are
    # one point here (the figure does not tell models apart)
    keys = list(dict.fromkeys((j, p.matrix, p.intensity, p.attainable_flops)
                              for j, pts in enumerate(points) for p in pts
                              if p.intensity > 0 and p.attainable_flops > 0))
    moved = spread(ax, [(k[2], k[3]) for k in keys], marker_diameter_pt(_SIZE))
    at = dict(zip(keys, moved.xy, strict=True))
    for j, (spec, pts) in enumerate(zip(specs, points, strict=True)):
        color = PALETTE[j % len(PALETTE)]
        for matrix in dict.fromkeys(p.matrix for p in pts):
            mine = [xy for k, xy in at.items() if k[:2] == (j, matrix)]
            ax.scatter([x for x, _ in mine], [y for _, y in mine], color=color,
                       marker=MARKERS[matrices.index(matrix) % len(MARKERS)], s=_SIZE,
                       zorder=3, edgecolors="white", linewidths=0.5,
                       gid=f"points|{spec.name}|{matrix}")
        launch = spec.launch_overhead.value if spec.launch_overhead else 0.0
        if launch > 0 and pts:
            top, _ = _roof(spec, pts[0].unit, pts[0].precision)
            kernels: dict[tuple[str, int], list[RoofPoint]] = {}
            for p in pts:
                kernels.setdefault((p.matrix, p.width), []).append(p)
            launch_ticks(ax, [(f"{spec.name}|{m}|{w}", mine[0].flops_useful / launch,
                               min(p.intensity for p in mine), max(p.intensity for p in mine),
                               color) for (m, w), mine in kernels.items()], top)
    return caption(moved)


def devices_roofline_figure(groups: Sequence[Sequence[Any]], specs: Sequence[HwSpec], *,
                            size: tuple[float, float] | None = None, dpi: int = 150
                            ) -> Figure:
    """The roofline of the analyses of each matrix on every spec (``groups[i][j]``:
    matrix i on spec j)."""
    by_spec = [[group[j] for group in groups] for j in range(len(specs))]
    points = [roof_points(analyses) for analyses in by_spec]
    if not any(points):
        raise FigureError("no results to plot")
    fig = new_figure(size or (7.5, 5.0), dpi)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    roofs = [_roof(spec, pts[0].unit, pts[0].precision)
             for spec, pts in zip(specs, points, strict=True) if pts]
    xs, ys = _limits(points, roofs)
    ax.set_xlim(*xs)
    ax.set_ylim(*ys)
    _draw_roofs(ax, specs, points)
    matrices = list(dict.fromkeys(p.matrix for pts in points for p in pts))
    note = _draw_points(ax, specs, points, matrices)
    log_axis(ax.xaxis, "")
    log_axis(ax.yaxis, "FLOP/s")
    ax.set_xlabel("arithmetic intensity (useful FLOP per byte)")
    ax.set_ylabel("attainable performance")
    kernel = "/".join(sorted({p.kernel for pts in points for p in pts}))
    ax.set_title(f"Roofline of {len(specs)} devices ({kernel}): solid = main memory, "
                 "dashed = caches;\ndotted = launch ceiling F / t_launch, which holds a point "
                 "below its roof", fontsize=10)
    ax.grid(True, which="major", lw=0.4, alpha=0.5)
    _legend(ax, specs, points, matrices)
    footnote(ax, note)
    return fig


def _legend(ax: Axes, specs: Sequence[HwSpec], points: list[list[RoofPoint]],
            matrices: list[str]) -> None:
    from matplotlib.lines import Line2D

    marks = [Line2D([], [], ls="", marker=MARKERS[i % len(MARKERS)], color="0.35", label=m)
             for i, m in enumerate(matrices)]
    devices = list(ax.get_legend_handles_labels()[0])
    launches = sorted({s.launch_overhead.value for s, pts in zip(specs, points, strict=True)
                       if pts and s.launch_overhead})
    extra = ([launch_handle("launch ceiling F / " + ", ".join(si(t, "s") for t in launches))]
             if launches else [])
    place_legend(ax, [*devices, *marks, *extra], main=True, fontsize=7.5,
                 title="device (colour), matrix (marker)", title_fontsize=7.5,
                 where=("lower right", "upper left", "lower left", "upper right"))


def devices_figure(groups: Sequence[Sequence[Any]], specs: Sequence[HwSpec], path: str | Path,
                   *, size: tuple[float, float] | None = None, dpi: int = 150) -> Path:
    """Draw the analyses of each matrix on every spec (``groups[i][j]``: matrix i on spec
    j) as one roofline and write ``path``."""
    try:
        fig = devices_roofline_figure(groups, specs, size=size, dpi=dpi)
    except FigureError as err:
        raise FigureError(f"{path}: {err}") from None
    return save(fig, path)
