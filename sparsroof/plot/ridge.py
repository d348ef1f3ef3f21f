"""The ridgeline: memory intensity against arithmetic intensity for P ranks.

After *Ridgeline: A 2D Roofline Model for Distributed Systems* (Checconi, Tithi and
Petrini), §II. With F FLOPs, B_M memory bytes and B_N network bytes per rank, a point
sits at x = I_M = B_M/B_N, y = I_A = F/B_M. Per network byte the three times are
x·y/P (compute), x/β_M (memory) and 1/β_N (network), so the plane splits into

- compute-bound: y ≥ P/β_M and x·y ≥ P/β_N,
- memory-bound: y < P/β_M and x ≥ β_M/β_N,
- network-bound: x < β_M/β_N and x·y < P/β_N,

three regions meeting at the balance point (β_M/β_N, P/β_M).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..units import si
from .labels import place_labels
from .legends import place_legend, place_note
from .roof import decades
from .style import log_axis, new_figure, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["RidgePoint", "ridge_region", "ridgeline_figure", "ridgeline", "balance",
           "REGION_COLORS"]

#: a rank count whose busiest rank is launch-bound has no region: its point is coloured as
#: launch-bound regions are elsewhere (the palette's reddish purple)
REGION_COLORS = {"compute": "#E69F00", "memory": "#56B4E9", "network": "#009E73",
                 "launch": "#CC79A7"}


@dataclass(frozen=True)
class RidgePoint:
    """One rank count P of a distributed kernel on the ridgeline plane."""

    ranks: int
    arithmetic_intensity: float  # F / B_M, FLOP per memory byte
    memory_intensity: float  # B_M / B_N, memory bytes per network byte
    bound: str  # "compute", "memory", "network" or "launch", as the model named it


def ridge_region(x: float, y: float, peak_flops: float, mem_bw: float, net_bw: float) -> str:
    """The region of (x = B_M/B_N, y = F/B_M): the largest of the three times.

    >>> ridge_region(100.0, 10.0, 1e12, 1e11, 1e10)  # times 1e-9, 1e-9, 1e-10 per B_N
    'compute'
    >>> ridge_region(100.0, 1.0, 1e12, 1e11, 1e10), ridge_region(1.0, 1.0, 1e12, 1e11, 1e10)
    ('memory', 'network')
    """
    times = {"compute": x * y / peak_flops, "memory": x / mem_bw, "network": 1.0 / net_bw}
    return max(times, key=lambda k: times[k])


def _regions(ax: Axes, xb: float, yb: float) -> None:
    """Shade the three regions inside the current limits and draw their borders."""
    from matplotlib.patches import Polygon

    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    k = xb * yb  # x·y on the compute/network border, which leaves by the top or left edge
    exit_ = (k / y1, y1) if k / y1 >= x0 else (x0, k / x0)
    shapes = {
        "memory": [(xb, yb), (x1, yb), (x1, y0), (xb, y0)],
        "network": [(x0, y0), (xb, y0), (xb, yb), exit_] + ([(x0, y1)] if exit_[1] == y1
                                                              else []),
        "compute": [exit_] + ([] if exit_[1] == y1 else [(x0, y1)])
        + [(x1, y1), (x1, yb), (xb, yb)],
    }
    for name, corners in shapes.items():
        ax.add_patch(Polygon(corners, closed=True, facecolor=REGION_COLORS[name], alpha=0.18,
                             edgecolor="none", zorder=0, gid=f"region|{name}"))
    style: dict[str, Any] = {"color": "0.25", "lw": 1.0, "ls": (0, (5, 3)), "zorder": 1}
    ax.plot([xb, x1], [yb, yb], **style)
    ax.plot([xb, xb], [y0, yb], **style)
    ax.plot([exit_[0], xb], [exit_[1], yb], **style)
    ax.plot([xb], [yb], marker="*", ms=13, color="black", zorder=4, ls="", gid="balance")
    for name, (fx, fy) in {"compute-bound": (0.97, 0.97), "memory-bound": (0.97, 0.04),
                           "network-bound": (0.03, 0.04)}.items():
        ax.text(fx, fy, name, transform=ax.transAxes, fontsize=9, color="0.2",
                ha="right" if fx > 0.5 else "left", va="top" if fy > 0.5 else "bottom")


def _balance_label(ax: Axes, xb: float, yb: float) -> None:
    """Name the balance point beside its star, on the first side where the label stays
    inside the axes and covers no border, point or label: up and right first (the
    compute-bound corner, where the borders leave the star down, right and up-left)."""
    place_note(ax, f"balance point\nβ_M/β_N = {xb:.3g}, peak/β_M = {yb:.3g} FLOP/B", (xb, yb),
               [(9, 9), (9, -9), (-9, -9), (-9, 9), (9, 24), (9, -24)], fontsize=7.5,
               gid="balance-label",
               bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "none", "alpha": 0.8})


def _legend(ax: Axes, points: Sequence[RidgePoint]) -> None:
    from matplotlib.lines import Line2D

    named = dict.fromkeys(p.bound for p in points)
    handles = [Line2D([], [], ls="", marker="o", mec="black", mew=0.6,
                      color=REGION_COLORS.get(b, "0.5"), label=f"{b}-bound") for b in named]
    # the regions are drawn at main memory's β_M; the model credits a rank's caches, so a
    # point's colour may differ from the region it stands in
    place_legend(ax, handles, main=True, title="bound per P (model,\ncaches credited)",
                 fontsize=7.5,
                 title_fontsize=7.5, framealpha=0.9,
                 where=("upper left", "lower left", "upper right", "lower right", "center left"))


def ridgeline_figure(points: Sequence[RidgePoint], peak_flops: float, mem_bw: float,
                     net_bw: float, title: str, *, size: tuple[float, float] = (7.0, 5.5),
                     dpi: int = 150) -> Figure:
    """Build the ridgeline: regions, balance point and one marker per rank count.

    Marker offsets are exactly (``memory_intensity``, ``arithmetic_intensity``), in
    order of rank count, joined by a line; marker colour is the point's stated bound.
    """
    if min(peak_flops, mem_bw, net_bw) <= 0:
        raise FigureError("ridgeline: peak, memory and network bandwidth must be positive")
    pts = sorted((p for p in points if p.memory_intensity > 0 and p.arithmetic_intensity > 0),
                 key=lambda p: p.ranks)
    if not pts:
        raise FigureError("ridgeline: no point with positive intensities to plot")
    xb, yb = balance(peak_flops, mem_bw, net_bw)
    xs = [p.memory_intensity for p in pts]
    ys = [p.arithmetic_intensity for p in pts]
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.13, right=0.96, bottom=0.11, top=0.9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*decades(min([*xs, xb]) / 4, max([*xs, xb]) * 4))
    ax.set_ylim(*decades(min([*ys, yb]) / 4, max([*ys, yb]) * 4))
    _regions(ax, xb, yb)
    ax.plot(xs, ys, color="0.3", lw=0.9, zorder=2, gid="ranks")
    colors = [REGION_COLORS.get(p.bound, "0.5") for p in pts]
    ax.scatter(xs, ys, c=colors, s=36, edgecolors="black", linewidths=0.6, zorder=3,
               gid="points")
    place_labels(ax, xs, ys, [f"P={p.ranks}" for p in pts], ["0.15"] * len(pts),
                 fontsize=7, avoid=list(zip(xs, ys, strict=True)) + [(xb, yb)])
    _balance_label(ax, xb, yb)
    _legend(ax, pts)
    log_axis(ax.xaxis, "")
    log_axis(ax.yaxis, "")
    ax.set_xlabel("memory intensity  B_M / B_N (memory bytes per network byte)")
    ax.set_ylabel("arithmetic intensity  F / B_M (FLOP per memory byte)")
    ax.set_title(f"{title}\npeak {si(peak_flops, 'FLOP/s')} per rank, β_M = {si(mem_bw, 'B/s')}, "
                 f"β_N = {si(net_bw, 'B/s')}", fontsize=9.5)
    return fig


def ridgeline(points: Sequence[RidgePoint], peak_flops: float, mem_bw: float, net_bw: float,
              title: str, path: str | Path, *, size: tuple[float, float] = (7.0, 5.5),
              dpi: int = 150) -> Path:
    """Draw the ridgeline of ``points`` and write it to ``path`` (PNG, SVG or PDF)."""
    return save(ridgeline_figure(points, peak_flops, mem_bw, net_bw, title, size=size,
                                 dpi=dpi), path)


def balance(peak_flops: float, mem_bw: float, net_bw: float) -> tuple[float, float]:
    """The balance point (β_M/β_N, P/β_M).

    >>> balance(4.2e12, 105e9, 12e9)  # the Cascade Lake node of the Ridgeline paper
    (8.75, 40.0)
    """
    return mem_bw / net_bw, peak_flops / mem_bw

