"""The complexity-time roofline: complexity and time in one plane.

After *Time-Based Roofline for Deep Learning Performance Analysis* (Wang et al.), §II-B and
Fig. 2(d). The primary axes are the complexity plane, bytes moved against FLOPs executed,
where each kernel is a closed symbol. The secondary axes are the time plane scaled by
the roofs, memory time B/β along the top and compute time F/P on the right, so that a
kernel's time coordinates, drawn as an open symbol, fall on its closed symbol when it runs
at its bound and further out, along its arithmetic intensity, the slower it runs: the
distance between a kernel's two symbols is its distance from the roofline. With the same
scaling the machine balance is the time plane's diagonal, the launch box its launch
square, and the L-shaped iso-time curves max(t_c, t_m) = T turn at (β·T, P·T) on the
balance line. The compute-, memory- and launch-bound regions are shaded (:mod:`.regions`).

Without measured runs the open symbol is the bound's time: it leaves its closed symbol
only for a launch-bound kernel, moved out to the edge of the launch box. Measured runs
(:class:`~sparsroof.plot.measured.MeasuredPoint`) are open circles at their measured time,
joined to their closed symbol by a dotted line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..hardware.spec import HwSpec
from ..units import si
from .gaps import draw_gaps, gap_handles, gap_summary
from .measured import MeasuredPoint
from .points import RoofPoint, common
from .regions import region_handles, shade_regions
from .roof import decades, drawable, matrix_colors, model_markers, series
from .style import log_axis, new_figure
from .timeroof import common_roof, launch_label, points_legend, scatter_points

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["complexity_time_figure", "time_at"]


def time_at(p: RoofPoint, seconds: float, peak: float, bw: float) -> tuple[float, float]:
    """Where a kernel that took ``seconds`` sits on the primary axes: its bound's (memory,
    compute) times scaled onto max(t_m, t_c) = ``seconds``, times (β, P).

    >>> p = RoofPoint("a", "spmv", 1, "csr", "compulsory", "simt", "fp64", 0.1, 1e9, 2.0,
    ...               2.0, 20.0, 2e-12, 2e-10, 0.0, 2e-10, "memory", "HBM", 1e12, 1e11)
    >>> time_at(p, 2e-10, 1e12, 1e11)   # at its bound: on the complexity point (20 B, 2 FLOP)
    (20.0, 2.0)
    >>> time_at(p, 1e-9, 1e12, 1e11)    # 5x slower: 5x further out along AI = 0.1
    (100.0, 10.0)
    """
    longest = max(p.memory_s, p.compute_s)
    k = seconds / longest if longest > 0 else 0.0
    return p.memory_s * k * bw, p.compute_s * k * peak


def _limits(points: Sequence[RoofPoint], runs: Sequence[MeasuredPoint], peak: float,
            bw: float, launch: float | None) -> tuple[tuple[float, float], tuple[float, float]]:
    xs = [p.bytes_total for p in points] + [time_at(p, p.sol_s, peak, bw)[0] for p in points]
    ys = [p.flops_executed for p in points] + [time_at(p, p.sol_s, peak, bw)[1]
                                               for p in points]
    for m in runs:
        x, y = time_at(m.bound, m.measured_s, peak, bw)
        xs.append(x)
        ys.append(y)
    if launch:
        xs.append(bw * launch)
        ys.append(peak * launch)
    xs = [x for x in xs if x > 0]
    ys = [y for y in ys if y > 0]
    return decades(min(xs) / 3, max(xs) * 3), decades(min(ys) / 3, max(ys) * 3)


def _guides(ax: Axes, peak: float, bw: float) -> None:
    """The balance line and the iso-time curves, one per decade of time, labelled on the
    top axis."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    balance = peak / bw
    lo, hi = min(x0, y0 / balance), max(x1, y1 / balance)
    ax.plot([lo, hi], [lo * balance, hi * balance], color="black", lw=1.4, zorder=1,
            gid="balance")
    first = math.ceil(math.log10(max(x0 / bw, y0 / peak)))
    last = math.floor(math.log10(min(x1 / bw, y1 / peak)))
    for k in range(first, last + 1):
        t = 10.0**k
        ax.plot([x0, bw * t, bw * t], [peak * t, peak * t, y0], color="0.55", lw=0.7,
                ls=(0, (5, 3)), zorder=0.8, gid=f"isotime|{t:g}")


def _open(ax: Axes, points: Sequence[RoofPoint], peak: float, bw: float) -> None:
    """Each kernel's time coordinates at its bound: an open symbol of its marker."""
    colors, markers = matrix_colors(points), model_markers(points)
    for (matrix, storage, model), group in series(points).items():
        at = [time_at(p, p.sol_s, peak, bw) for p in group]
        ax.scatter([x for x, _ in at], [y for _, y in at], marker=markers[(storage, model)],
                   s=46, facecolors="none", edgecolors=colors[matrix], linewidths=1.0,
                   zorder=3.1, gid=f"time|{matrix}|{storage}|{model}")


def _scale(factor: float) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """A secondary axis's (forward, inverse) for quantity / factor."""
    return (lambda v: v / factor), (lambda t: t * factor)


def _secondary(ax: Axes, peak: float, bw: float) -> None:
    top = ax.secondary_xaxis("top", functions=_scale(bw))
    right = ax.secondary_yaxis("right", functions=_scale(peak))
    for axis in (top.xaxis, right.yaxis):
        log_axis(axis, "s")
    top.set_xlabel(f"memory time  bytes / β   (open symbols; β = {si(bw, 'B/s')})",
                   fontsize=8.5)
    right.set_ylabel(f"compute time  FLOPs / P   (P = {si(peak, 'FLOP/s')})", fontsize=8.5)


def complexity_time_figure(points: Sequence[RoofPoint], spec: HwSpec, *,
                           title: str | None = None, size: tuple[float, float] = (9.0, 6.5),
                           dpi: int = 150, measured: Sequence[MeasuredPoint] = ()) -> Figure:
    """Build the complexity-time plane of ``points`` (and ``measured`` runs).

    Closed markers sit at (``bytes_total``, ``flops_executed``); open ones at
    :func:`time_at` of the bound's time, and measured runs at :func:`time_at` of their
    measured time; P and β are the roofs that bounded the points.
    """
    runs = [m for m in measured if m.bound.memory_s > 0 and m.bound.compute_s > 0
            and m.bound.flops_executed > 0 and m.bound.bytes_total > 0]
    points = [*points, *(m.bound for m in runs)]
    if not points:
        raise FigureError("nothing to plot: no results and no measured runs")
    common(points, "precision")
    shown = drawable(points)
    if not shown:
        raise FigureError("nothing to plot: every result has zero work or zero bytes")
    roofs = sorted({(p.peak_flops, p.bandwidth, p.memory_level) for p in shown})
    if len(roofs) > 1:
        named = ", ".join(f"{level} {si(bw_, 'B/s')} / {si(peak_, 'FLOP/s')}"
                          for peak_, bw_, level in roofs)
        raise FigureError(f"the results were bounded by {len(roofs)} roofs ({named}): this "
                          "plane scales time by one P and one β; analyze with "
                          "--no-cache-roof, or draw them with 'plot time'")
    peak, bw = common_roof(shown)
    launch = spec.launch_overhead.value if spec.launch_overhead else None
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.11, right=0.7, bottom=0.1, top=0.8 if runs else 0.83)
    ax.set_xscale("log")
    ax.set_yscale("log")
    xlim, ylim = _limits(shown, runs, peak, bw, launch)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.grid(True, which="major", color="0.93", lw=0.5, zorder=0)
    shade_regions(ax, peak / bw, (bw * launch, peak * launch) if launch else None)
    if launch:
        launch_label(ax, bw * launch, peak * launch, f"launch-bound\n(< {si(launch, 's')})")
    _guides(ax, peak, bw)
    log_axis(ax.xaxis, "B")
    log_axis(ax.yaxis, "FLOP")
    ax.set_xlabel("bandwidth complexity (bytes moved; closed symbols)")
    ax.set_ylabel("computational complexity (FLOPs executed)")
    _secondary(ax, peak, bw)
    scatter_points(ax, shown, "bytes_total", "flops_executed", "complexity")
    _open(ax, shown, peak, bw)
    if runs:
        draw_gaps(ax, runs, matrix_colors(shown), lambda m: (m.bound.bytes_total,
                                                             m.bound.flops_executed),
                  lambda m: time_at(m.bound, m.measured_s, peak, bw), "combined")
    from matplotlib.lines import Line2D

    balance = Line2D([], [], color="black", lw=1.4,
                     label=f"machine balance {peak / bw:.3g} FLOP/B")
    points_legend(ax, shown,
                  [balance, *region_handles(launch), *(gap_handles(runs) if runs else [])])
    legend = ax.get_legend()
    assert legend is not None
    legend.set_bbox_to_anchor((1.16, 1.0))  # past the compute-time axis
    unit, level, precision = shown[0].unit, shown[0].memory_level, shown[0].precision
    text = title or (f"Complexity-time roofline: {spec.device}, {unit} {precision} "
                     f"P = {si(peak, 'FLOP/s')}, {level} β = {si(bw, 'B/s')}\n"
                     "closed: complexity (bytes, FLOPs); open: time at the bound, "
                     "on the same plane scaled by β and P")
    fig.suptitle(f"{text}\n{gap_summary(runs)}" if runs else text, fontsize=9.5)
    return fig
