"""Labels next to points that do not overlap each other or leave the axes.

A greedy placement in display space: each label tries a ring of positions at growing
distance from its point and takes the first whose box is free; a label placed away from
its point gets a thin leader line; a label with no free place is left out (the legend
still names every series).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["place_labels", "callout_labels", "overlaps"]

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in display pixels
_DIRECTIONS = tuple((math.cos(a), math.sin(a)) for a in
                    (math.radians(d) for d in (45, 135, -45, -135, 90, -90, 0, 180)))


def overlaps(a: Box, b: Box) -> bool:
    """True when two boxes share area.

    >>> overlaps((0, 0, 2, 2), (1, 1, 3, 3)), overlaps((0, 0, 1, 1), (1, 0, 2, 1))
    (True, False)
    """
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _box(cx: float, cy: float, w: float, h: float) -> Box:
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def place_labels(ax: Axes, xs: Sequence[float], ys: Sequence[float], texts: Sequence[str],
                 colors: Sequence[str], fontsize: float = 7.0,
                 avoid: Sequence[tuple[float, float]] = ()) -> int:
    """Annotate point i with ``texts[i]`` where it does not collide; return how many.

    ``avoid`` lists further data points (markers) that no label may cover. Axis limits
    and the figure size must be final, since placement works in pixels.
    """
    fig = ax.get_figure(root=True)
    assert fig is not None
    px_per_pt = fig.dpi / 72.0
    h = fontsize * 1.25 * px_per_pt
    frame = ax.get_window_extent()
    marker = 3.5 * px_per_pt
    taken: list[Box] = [_box(px, py, 2 * marker, 2 * marker)
                        for px, py in ax.transData.transform(list(avoid) or [(xs[0], ys[0])])]
    to_data = ax.transData.inverted()
    anchors = ax.transData.transform(list(zip(xs, ys, strict=True)))
    placed = 0
    for (x, y), (px, py), text, color in zip(zip(xs, ys, strict=True), anchors, texts, colors,
                                            strict=True):
        w = (0.62 * len(text) + 0.6) * fontsize * px_per_pt
        spot = _free_spot(px, py, w, h, taken, frame.bounds)
        if spot is None:
            continue
        cx, cy, far = spot
        taken.append(_box(cx, cy, w, h))
        arrow = {"arrowstyle": "-", "color": color, "lw": 0.6, "shrinkA": 0, "shrinkB": 3}
        ax.annotate(text, xy=(x, y), xytext=tuple(to_data.transform((cx, cy))),
                    ha="center", va="center", fontsize=fontsize,
                    color=color, arrowprops=arrow if far else None, annotation_clip=False,
                    gid="label")
        placed += 1
    return placed


def _free_spot(px: float, py: float, w: float, h: float, taken: list[Box],
               frame: tuple[float, float, float, float]) -> tuple[float, float, bool] | None:
    x0, y0, fw, fh = frame
    for step, radius in enumerate((0.6, 1.3, 2.2, 3.4)):
        for dx, dy in _DIRECTIONS:
            cx = px + dx * (w / 2 + radius * h)
            cy = py + dy * (h / 2 + radius * h)
            box = _box(cx, cy, w, h)
            inside = box[0] >= x0 and box[1] >= y0 and box[2] <= x0 + fw and box[3] <= y0 + fh
            if inside and not any(overlaps(box, t) for t in taken):
                return cx, cy, step > 0
    return None


def callout_labels(ax: Axes, xs: Sequence[float], ys: Sequence[float], texts: Sequence[str],
                   colors: Sequence[str], angle: float, offset_pt: float = 22.0,
                   fontsize: float = 7.0) -> list[tuple[float, float]]:
    """Labels in lanes parallel to a line at ``angle`` degrees, joined to their points.

    Points are ordered by position along the line and dealt in turn to lanes on either
    side of it (two rows each side when crowded); in a lane each label sits at its
    point's position where free, else just past its neighbour, and stays inside the axes.
    Returns the label centres in display pixels.
    """
    fig = ax.get_figure(root=True)
    assert fig is not None
    if not texts:
        return []
    px = fig.dpi / 72.0
    h = fontsize * 1.3 * px
    w = max((0.62 * len(t) + 0.5) * fontsize * px for t in texts)
    u = (math.cos(math.radians(angle)), math.sin(math.radians(angle)))
    n = (-u[1], u[0])  # unit normal to the upper left
    spacing = min(w / u[0] if u[0] > 1e-9 else math.inf, h / u[1] if u[1] > 1e-9 else math.inf)
    anchors = ax.transData.transform(list(zip(xs, ys, strict=True)))
    along = [float(a[0] * u[0] + a[1] * u[1]) for a in anchors]
    across = [float(a[0] * n[0] + a[1] * n[1]) for a in anchors]
    order = sorted(range(len(texts)), key=lambda i: along[i])
    frame = ax.get_window_extent()
    lanes = _lanes(max(across), min(across), offset_pt * px, 1.8 * h)
    for count in (1, 2, 4):
        span = _span(frame.bounds, u, n, lanes[0], w, h)
        if len(texts) / count * spacing <= 0.8 * (span[1] - span[0]):
            break
    to_data = ax.transData.inverted()
    centres: list[tuple[float, float]] = [(0.0, 0.0)] * len(texts)
    for lane in range(count):
        mine = order[lane::count]
        span = _span(frame.bounds, u, n, lanes[lane], w, h)
        slots = _spread([along[i] for i in mine], spacing, span)
        for i, t in zip(mine, slots, strict=True):
            cx, cy = t * u[0] + lanes[lane] * n[0], t * u[1] + lanes[lane] * n[1]
            ax.annotate(texts[i], xy=(xs[i], ys[i]), xytext=tuple(to_data.transform((cx, cy))),
                        ha="center", va="center", fontsize=fontsize, color=colors[i],
                        arrowprops={"arrowstyle": "-", "color": colors[i], "lw": 0.5,
                                    "alpha": 0.7, "shrinkA": 1, "shrinkB": 2},
                        annotation_clip=False, gid="label")
            centres[i] = (cx, cy)
    return centres


def _lanes(top: float, bottom: float, offset: float, row: float) -> list[float]:
    """Normal coordinates of the lanes: above, below, second row above, second below."""
    return [top + offset, bottom - offset, top + offset + row, bottom - offset - row]


def _span(frame: tuple[float, float, float, float], u: tuple[float, float],
          n: tuple[float, float], normal: float, w: float, h: float) -> tuple[float, float]:
    """Range of positions t along direction u, at ``normal``, whose box lies in the frame."""
    x0, y0, fw, fh = frame
    lo, hi = -math.inf, math.inf
    for k, (a, b) in enumerate(((x0 + w / 2, x0 + fw - w / 2), (y0 + h / 2, y0 + fh - h / 2))):
        base, step = normal * n[k], u[k]
        if abs(step) < 1e-12:
            if not a <= base <= b:
                return (0.0, 0.0)
            continue
        t1, t2 = sorted(((a - base) / step, (b - base) / step))
        lo, hi = max(lo, t1), min(hi, t2)
    return (lo, hi) if lo < hi else (0.0, 0.0)


def _spread(positions: list[float], spacing: float,
            span: tuple[float, float] = (-math.inf, math.inf)) -> list[float]:
    """Sorted positions pushed apart to at least ``spacing`` and kept inside ``span``.

    >>> _spread([0.0, 0.0, 0.0], 2.0)
    [-2.0, 0.0, 2.0]
    >>> _spread([0.0, 10.0], 2.0)
    [0.0, 10.0]
    >>> _spread([9.0, 9.0], 2.0, (0.0, 9.0))
    [7.0, 9.0]
    """
    slots: list[float] = []
    for p in positions:
        slots.append(p if not slots else max(p, slots[-1] + spacing))
    # shift each crowded run back so that it straddles the points it labels
    runs: list[list[int]] = []
    for i in range(len(slots)):
        if runs and slots[i] - slots[i - 1] <= spacing + 1e-9:
            runs[-1].append(i)
        else:
            runs.append([i])
    out = list(slots)
    for run in runs:
        shift = sum(slots[i] - positions[i] for i in run) / len(run)
        for i in run:
            out[i] = slots[i] - shift
    lo, hi = span
    for i in range(len(out)):  # a run moved back must not run into the one before
        out[i] = max(out[i], lo, out[i - 1] + spacing if i else lo)
    for i in reversed(range(len(out))):  # nor out of the far end
        out[i] = min(out[i], hi, out[i + 1] - spacing if i + 1 < len(out) else hi)
    return out
