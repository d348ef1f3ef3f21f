"""The time-based roofline: the complexity plane beside the compute/bandwidth time plane.

After *Time-Based Roofline for Deep Learning Performance Analysis* (Wang et al.), §II-B
and §II-C. Left, each kernel at (bytes moved, FLOPs executed): diagonals are constant
arithmetic intensity, the bold one the machine balance P/β, and the box below
(β·t_launch, P·t_launch) is work so small that the launch overhead dominates. Right, the
same kernels at (memory time B/β, compute time F/P): above the diagonal compute-bound,
below it memory-bound, iso-time curves max(t_c, t_m) = T are L-shaped, and the square
of side t_launch is launch-bound. In both planes the three regions are shaded
(:mod:`.regions`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import FigureError
from ..hardware.spec import HwSpec
from ..units import si
from .gaps import draw_gaps, gap_handles, gap_summary
from .labels import place_labels
from .measured import MeasuredPoint
from .points import OPTIMISTIC, RoofPoint, common
from .regions import REGION_COLORS, region_handles, shade_regions, tint
from .roof import (
    decades,
    drawable,
    matrix_colors,
    matrix_fills,
    matrix_handle,
    model_markers,
    series,
    short,
)
from .style import log_axis, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

__all__ = ["time_roofline_figure", "common_roof", "scatter_points", "launch_label",
           "points_legend"]

_LAUNCH_TEXT = "#7a3b62"  # the launch region's purple, dark enough for text


def scatter_points(ax: Axes, points: Sequence[RoofPoint], x: str, y: str, tag: str) -> None:
    colors, markers = matrix_colors(points), model_markers(points)
    fills = matrix_fills(points)
    for (matrix, storage, model), group in series(points).items():
        xs = [getattr(p, x) for p in group]
        ys = [getattr(p, y) for p in group]
        if len(group) > 1:
            ax.plot(xs, ys, color=colors[matrix], lw=0.8, alpha=0.8, zorder=2.5)
        face, edge = fills[matrix]
        ax.scatter(xs, ys, marker=markers[(storage, model)], s=26, facecolors=face,
                   edgecolors=edge, linewidths=0.5 if edge == "white" else 0.9, zorder=3,
                   gid=f"{tag}|{matrix}|{storage}|{model}")
    if len(colors) > 1:
        _numbers(ax, points, x, y)


def _numbers(ax: Axes, points: Sequence[RoofPoint], x: str, y: str) -> None:
    """Each matrix's number (as in the legend) beside its widest optimistic point, where
    it collides with no other label or marker."""
    ax.apply_aspect()  # labels are placed in pixels: the box must be final
    colors = matrix_colors(points)
    anchors = [max((p for p in points if p.matrix == name),
                   key=lambda p: (p.model == OPTIMISTIC, p.width)) for name in colors]
    place_labels(ax, [getattr(a, x) for a in anchors], [getattr(a, y) for a in anchors],
                 [str(i) for i in range(1, len(anchors) + 1)], list(colors.values()),
                 avoid=[(getattr(p, x), getattr(p, y)) for p in points])


def _square(values: Sequence[float], extra: Sequence[float]) -> tuple[float, float]:
    positive = [v for v in [*values, *extra] if v > 0]
    return decades(min(positive) / 3, max(positive) * 3)


def _complexity(ax: Axes, points: Sequence[RoofPoint], peak: float, bw: float,
                launch: float | None) -> None:
    corner = [bw * launch, peak * launch] if launch else []
    xlim = _square([p.bytes_total for p in points], corner[:1])
    ylim = _square([p.flops_executed for p in points], corner[1:])
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    balance = peak / bw
    lo, hi = min(xlim[0], ylim[0] / balance), max(xlim[1], ylim[1])
    for k in range(math.floor(math.log10(ylim[0] / xlim[1])),
                   math.ceil(math.log10(ylim[1] / xlim[0])) + 1):
        ax.plot([lo, hi], [lo * 10.0**k, hi * 10.0**k], color="0.85", lw=0.6, zorder=0)
    ax.plot([lo, hi], [lo * balance, hi * balance], color="black", lw=1.4, zorder=1,
            gid="balance", label=f"machine balance {balance:.3g} FLOP/B")
    shade_regions(ax, balance, (corner[0], corner[1]) if launch else None)
    if launch:
        launch_label(ax, corner[0], corner[1], f"launch overhead\n{si(launch, 's')} dominates")
    log_axis(ax.xaxis, "B")
    log_axis(ax.yaxis, "FLOP")
    ax.set_xlabel("bandwidth complexity (bytes moved)")
    ax.set_ylabel("computational complexity (FLOPs executed)")
    ax.set_title("complexity plane (grey: constant AI, ×10 apart)", fontsize=9)
    scatter_points(ax, points, "bytes_total", "flops_executed", "complexity")
    ax.legend(handles=[*ax.get_legend_handles_labels()[0], *region_handles(launch)],
              loc="lower right", fontsize=7, framealpha=0.9)


def launch_label(ax: Axes, x: float, y: float, text: str) -> None:
    """The launch box's words, in its corner (the box is shaded with the regions)."""
    ax.text(x, y, text, fontsize=7, color=_LAUNCH_TEXT, ha="right", va="top",
            transform=ax.transData, zorder=4,  # on its box's colour: the balance line
            bbox={"boxstyle": "square,pad=0.1", "fc": tint(REGION_COLORS["launch"], 0.23),
                  "ec": "none",  # crosses it
                  "alpha": 0.85})


def _run_at(m: MeasuredPoint) -> tuple[float, float]:
    """A measured run in the time plane: its bound's (memory, compute) times scaled onto the
    iso-time curve of the measured time."""
    k = m.time_scale(m.measured_s)
    return m.bound.memory_s * k, m.bound.compute_s * k


def _sol_at(m: MeasuredPoint) -> tuple[float, float]:
    """Where the bound is in the time plane: on the iso-time curve of its SoL time (the
    edge of the launch square for a launch-bound run, the model point otherwise)."""
    k = m.time_scale(m.bound.sol_s)
    return m.bound.memory_s * k, m.bound.compute_s * k


def _model_at(m: MeasuredPoint) -> tuple[float, float]:
    return m.bound.memory_s, m.bound.compute_s


def _times(ax: Axes, points: Sequence[RoofPoint], launch: float | None,
           measured: Sequence[MeasuredPoint] = ()) -> None:
    both = [p.memory_s for p in points] + [p.compute_s for p in points]
    both += [t for m in measured for t in _run_at(m)]
    lim = _square(both, [launch] if launch else [])
    ax.set_xlim(*lim)
    ax.set_ylim(*lim)
    ax.set_aspect("equal")
    ax.plot(lim, lim, color="black", lw=1.4, zorder=1, gid="diagonal")
    for k in range(round(math.log10(lim[0])) + 1, round(math.log10(lim[1]))):
        t = 10.0**k
        ax.plot([lim[0], t, t], [t, t, lim[0]], color="0.55", lw=0.7, ls=(0, (5, 3)),
                zorder=0.8, gid=f"isotime|{t:g}")
        ax.annotate(si(t, "s"), (t, lim[0]), xytext=(2, 3), textcoords="offset points",
                    fontsize=6.5, color="0.35", rotation=90, ha="left", va="bottom")
    shade_regions(ax, 1.0, (launch, launch) if launch else None)
    if launch:
        launch_label(ax, launch, launch, f"launch-bound\n(< {si(launch, 's')})")
    ax.text(0.04, 0.96, "compute-bound", transform=ax.transAxes, fontsize=8, va="top",
            color="0.3")
    ax.text(0.97, 0.12, "memory-bound", transform=ax.transAxes, fontsize=8, ha="right",
            color="0.3")
    log_axis(ax.xaxis, "s")
    log_axis(ax.yaxis, "s")
    ax.set_xlabel("memory time  bytes / β")
    ax.set_ylabel("compute time  FLOPs / P")
    ax.set_title("time plane (dashed: run time max(compute, memory) = T)", fontsize=9)
    scatter_points(ax, points, "memory_s", "compute_s", "time")
    if measured:
        draw_gaps(ax, measured, matrix_colors(points), _sol_at, _run_at, "time", _model_at)
    points_legend(ax, points, [*region_handles(launch),
                         *(gap_handles(measured, floored=True) if measured else [])])


def points_legend(ax: Axes, points: Sequence[RoofPoint], extra: Sequence[Line2D | Patch] = ()
            ) -> None:
    """Matrices by colour and (format, model) by marker, beside the time plane."""
    from matplotlib.lines import Line2D

    numbered = len(matrix_colors(points)) > 1
    handles: list[Line2D | Patch] = [
        matrix_handle(face, edge, f"{i}  {short(name)}" if numbered else short(name))
        for i, (name, (face, edge)) in enumerate(matrix_fills(points).items(), 1)]
    handles += [Line2D([], [], ls="", marker=m, color="0.35", label=f"{storage} · {model}")
                for (storage, model), m in model_markers(points).items()]
    handles += extra
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.03, 1.0), fontsize=7,
              frameon=False, ncol=math.ceil(len(handles) / 30), borderaxespad=0.0)


def time_roofline_figure(points: Sequence[RoofPoint], spec: HwSpec, *,
                         title: str | None = None, size: tuple[float, float] = (12.0, 5.5),
                         dpi: int = 150, measured: Sequence[MeasuredPoint] = ()) -> Figure:
    """Build the two planes for ``points``; P and β are the roofs that bounded them.

    Marker offsets are (``bytes_total``, ``flops_executed``) on the left and
    (``memory_s``, ``compute_s``) on the right, exactly as computed. ``measured`` runs are
    drawn with their bounds: in the time plane each run sits on the iso-time curve of its
    measured time, at its bound's ratio of memory to compute time
    (:meth:`MeasuredPoint.time_scale`), joined by a dotted line to the same ratio on the
    iso-time curve of the bound (a grey line leads there from a launch-bound run's model
    point); on the left a run moves the same bytes and FLOPs as its bound.
    """
    runs = [m for m in measured if m.bound.memory_s > 0 and m.bound.compute_s > 0
            and m.bound.flops_executed > 0 and m.bound.bytes_total > 0]
    points = [*points, *(m.bound for m in runs)]
    if not points:
        raise FigureError("nothing to plot: no results and no measured runs")
    precision = common(points, "precision")
    shown = drawable(points)
    if not shown:
        raise FigureError("nothing to plot: every result has zero work or zero bytes")
    peak, bw = common_roof(shown)
    launch = spec.launch_overhead.value if spec.launch_overhead else None
    fig = new_figure(size, dpi)
    left, right = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.08, right=0.85, bottom=0.11, top=0.83 if runs else 0.86,
                        wspace=0.25)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="major", color="0.93", lw=0.5, zorder=0)
    _complexity(left, shown, peak, bw, launch)
    _times(right, shown, launch, runs)
    unit, level = shown[0].unit, shown[0].memory_level
    note = "" if launch else "; the spec gives no launch overhead"
    text = title or (f"Time-based roofline: {spec.device}, {unit} {precision} "
                     f"P = {si(peak, 'FLOP/s')}, {level} β = {si(bw, 'B/s')}{note}")
    fig.suptitle(f"{text}\n{gap_summary(runs)}" if runs else text, fontsize=10)
    return fig


def common_roof(points: Sequence[RoofPoint]) -> tuple[float, float]:
    """The (peak, bandwidth) shared by the points; the first when they differ."""
    return points[0].peak_flops, points[0].bandwidth
