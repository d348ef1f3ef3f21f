"""The bound regions of the time-based roofline planes, shaded.

After *Time-Based Roofline for Deep Learning Performance Analysis* (Wang et al.), §II-B
and §II-C: in the complexity plane (bytes, FLOPs) a kernel is compute-bound above the
machine balance y = (P/β)·x and memory-bound below it; in the time plane (memory time,
compute time) the border is the diagonal y = x. Both planes hold the launch box, where the
kernel launch overhead t_launch takes longer than both: x < β·t_launch and y < P·t_launch
(t_launch and t_launch in the time plane). The box's corner lies on the border, so outside
it each region is bounded by a hockey stick: compute-bound is above max(P·t_launch, b·x)
and memory-bound right of max(β·t_launch, y/b), with b the border's slope. Polygons are
drawn in data coordinates; their straight edges are straight in log-log, as the border is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..units import si
from .ridge import REGION_COLORS as _RIDGE_COLORS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.patches import Patch

__all__ = ["REGION_COLORS", "tint", "shade_regions", "region_handles", "compute_region",
           "memory_region"]

#: compute and memory as on the ridgeline; launch in the palette's reddish purple
REGION_COLORS = {k: _RIDGE_COLORS[k] for k in ("compute", "memory", "launch")}
_ALPHA = 0.16


def tint(colour: str, share: float) -> str:
    """``colour`` (``#RRGGBB``) at ``share`` of its strength over white.

    >>> tint("#CC79A7", 0.23)
    '#f3e0eb'
    """
    rgb = (int(colour[k:k + 2], 16) for k in (1, 3, 5))
    return "#" + "".join(f"{round(255 - (255 - c) * share):02x}" for c in rgb)
Box = tuple[tuple[float, float], tuple[float, float]]  # (x0, x1), (y0, y1)


def compute_region(limits: Box, slope: float, knee: tuple[float, float] | None
                   ) -> list[tuple[float, float]]:
    """Corners of the compute-bound region inside ``limits``: above y = max(knee_y,
    slope·x) (above y = slope·x without a launch box).

    >>> compute_region(((1.0, 1000.0), (1.0, 100.0)), 1.0, (10.0, 10.0))
    [(1.0, 10.0), (10.0, 10.0), (100.0, 100.0), (1000.0, 100.0), (1.0, 100.0)]
    """
    (x0, x1), (y0, y1) = limits
    ky = knee[1] if knee else 0.0
    xs = sorted({x0, x1, *(x for x in (ky / slope, y1 / slope, y0 / slope) if x0 < x < x1)})
    edge = [(x, min(max(ky, slope * x, y0), y1)) for x in xs]
    return _distinct([*edge, (x1, y1), (x0, y1)])


def memory_region(limits: Box, slope: float, knee: tuple[float, float] | None
                  ) -> list[tuple[float, float]]:
    """Corners of the memory-bound region inside ``limits``: right of x = max(knee_x,
    y/slope) (right of the border without a launch box).

    >>> memory_region(((1.0, 1000.0), (1.0, 100.0)), 1.0, (10.0, 10.0))
    [(10.0, 1.0), (10.0, 10.0), (100.0, 100.0), (1000.0, 100.0), (1000.0, 1.0)]
    """
    (x0, x1), (y0, y1) = limits
    kx = knee[0] if knee else 0.0
    ys = sorted({y0, y1, *(y for y in (kx * slope, x1 * slope, x0 * slope) if y0 < y < y1)})
    edge = [(min(max(kx, y / slope, x0), x1), y) for y in ys]
    return _distinct([*edge, (x1, y1), (x1, y0)])


def _distinct(corners: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Corners without repeats of the one before."""
    return [c for i, c in enumerate(corners) if i == 0 or c != corners[i - 1]]


def shade_regions(ax: Axes, slope: float, knee: tuple[float, float] | None) -> None:
    """Shade the compute- and memory-bound regions (gids ``region|compute``,
    ``region|memory``) and the launch box (gid ``launch``) inside the current limits.
    ``slope`` is the border's y/x, ``knee`` the launch box's corner (None: no box)."""
    from matplotlib.patches import Polygon, Rectangle

    limits: Box = (ax.get_xlim(), ax.get_ylim())
    for name, corners in (("compute", compute_region(limits, slope, knee)),
                          ("memory", memory_region(limits, slope, knee))):
        ax.add_patch(Polygon(corners, closed=True, facecolor=REGION_COLORS[name],
                             alpha=_ALPHA, edgecolor="none", zorder=0.4, gid=f"region|{name}"))
    if knee:
        (x0, _), (y0, _) = limits
        ax.add_patch(Rectangle((x0, y0), knee[0] - x0, knee[1] - y0, zorder=0.5, gid="launch",
                               facecolor=REGION_COLORS["launch"], alpha=_ALPHA + 0.06,
                               edgecolor=REGION_COLORS["launch"], lw=1.0))


def region_handles(launch: float | None) -> list[Patch]:
    """Legend entries of the shaded regions."""
    from matplotlib.patches import Patch

    style: dict[str, Any] = {"alpha": _ALPHA + 0.1, "edgecolor": "none"}
    handles = [Patch(facecolor=REGION_COLORS["compute"], label="compute-bound", **style),
               Patch(facecolor=REGION_COLORS["memory"], label="memory-bound", **style)]
    if launch:
        handles.append(Patch(facecolor=REGION_COLORS["launch"],
                             label=f"launch-bound (< {si(launch, 's')})", **style))
    return handles
