"""Checks that a figure can be read, on the figure objects, written apart from the code
that lays figures out (sparsroof.plot.legends, sparsroof.plot.spread) so that the
tests do not grade that code by its own measure: every marker visible, every legend
clear of what is plotted, every marker near its true place."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.legend import Legend
from matplotlib.text import Annotation, Text


def renderer(ax: Any) -> Any:
    fig = ax.get_figure(root=True)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def px_per_pt(ax: Any) -> float:
    return float(ax.get_figure(root=True).dpi) / 72.0


def markers(ax: Any, prefix: str = "points|") -> list[tuple[str, float, float, float]]:
    """(gid, x, y, radius) in pixels of every scatter marker whose gid has ``prefix``."""
    out = []
    for c in ax.collections:
        gid = c.get_gid() or ""
        if not isinstance(c, PathCollection) or not gid.startswith(prefix):
            continue
        sizes = np.ravel(c.get_sizes())
        at = c.get_offset_transform().transform(c.get_offsets())
        for k, (x, y) in enumerate(at):
            out.append((gid, float(x), float(y), math.sqrt(sizes[k % len(sizes)]) / 2
                        * px_per_pt(ax)))
    return out


def hidden_pairs(ax: Any, prefix: str = "points|", share: float = 0.5,
                 same_series: bool = False) -> list[tuple[str, str, float]]:
    """Pairs of markers of different series (or of any, ``same_series``) whose centres
    are closer than ``share`` of their summed radii (one covers most of the other), with
    their distance in pixels."""
    ms = markers(ax, prefix)
    bad = []
    for i in range(len(ms)):
        for j in range(i):
            a, b = ms[i], ms[j]
            d = math.hypot(a[1] - b[1], a[2] - b[2])
            if (same_series or a[0] != b[0]) and d < share * (a[3] + b[3]):
                bad.append((a[0], b[0], d))
    return bad


def coinciding(ax: Any, prefix: str = "points|") -> list[tuple[str, str]]:
    """Pairs of markers of different series drawn at exactly one spot."""
    ms = markers(ax, prefix)
    return [(a[0], b[0]) for i, a in enumerate(ms) for b in ms[:i]
            if a[0] != b[0] and (a[1], a[2]) == (b[1], b[2])]


def moved_pt(ax: Any) -> float:
    """How far the figure's footnote says markers moved, in points (0 without one)."""
    fig = ax.get_figure(root=True)
    for a in fig.axes:
        for t in a.texts:
            if t.get_gid() == "footnote":
                found = re.search(r"up to ([0-9.]+) pt", t.get_text())
                assert found, t.get_text()
                return float(found.group(1))
    return 0.0


def assert_near(ax: Any, got: Sequence[Sequence[float]], want: Sequence[Sequence[float]],
                *, context: str = "") -> None:
    """Each drawn marker (data coordinates) is at its true place, or no further from it
    than the footnote says markers moved."""
    assert len(got) == len(want), context
    limit = (moved_pt(ax) * 1.06 + 0.06) * px_per_pt(ax)  # the footnote rounds to 2 digits
    g = ax.transData.transform(np.asarray(got, dtype=float))
    w = ax.transData.transform(np.asarray(want, dtype=float))
    far = np.hypot(*(g - w).T)
    assert (far <= limit + 1e-6).all(), (context, far.max(), limit)


def _segments(line: Any) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    xy = line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
    for a, b in zip(xy[:-1], xy[1:], strict=True):
        if np.isfinite(a).all() and np.isfinite(b).all():
            yield a, b


def _segment_hits_box(a: np.ndarray, b: np.ndarray, box: tuple[float, ...]) -> bool:
    """Whether the segment a-b meets the box (x0, y0, x1, y1)."""
    from sparsroof.plot.raster import clip_segment

    x0, y0, x1, y1 = box
    return clip_segment((a[0], a[1], b[0], b[1]), (x0, y0, x1, y1)) is not None


def _disc_in_box(x: float, y: float, rad: float, box: tuple[float, ...]) -> bool:
    nx, ny = min(max(x, box[0]), box[2]), min(max(y, box[1]), box[3])
    return (x - nx) ** 2 + (y - ny) ** 2 < rad * rad


def _covered_inside(ax: Any, inside: tuple[float, ...]) -> list[str]:
    """The lines and markers of ``ax`` that touch the box ``inside`` (pixels)."""
    found = []
    for line in ax.lines:
        styled = line.get_linestyle() not in ("None", "", " ")
        if styled and any(_segment_hits_box(a, b, inside) for a, b in _segments(line)):
            found.append(f"line {line.get_gid() or line.get_label()}")
        if line.get_marker() not in ("None", "", " ", None):
            rad = line.get_markersize() / 2 * px_per_pt(ax)
            xy = line.get_transform().transform(
                np.column_stack([line.get_xdata(), line.get_ydata()]))
            if any(_disc_in_box(x, y, rad, inside) for x, y in xy):
                found.append(f"marker of {line.get_gid() or line.get_label()}")
    return found + [f"marker {gid}" for gid, x, y, rad in markers(ax, "")
                    if _disc_in_box(x, y, rad, inside)]


def legend_clashes(ax: Any) -> list[str]:
    """What any legend of ``ax`` covers: plotted lines (their part inside the axes),
    scatter markers, line markers, texts (but the footnote) and other legends."""
    r = renderer(ax)
    frame = ax.get_window_extent(r)
    legends = [a for a in ax.get_children() if isinstance(a, Legend)]
    found = []
    for leg in legends:
        box = leg.get_window_extent(r)
        inside = (max(box.x0, frame.x0), max(box.y0, frame.y0), min(box.x1, frame.x1),
                  min(box.y1, frame.y1))
        if inside[0] < inside[2] and inside[1] < inside[3]:  # lines and markers are clipped
            found += _covered_inside(ax, inside)
        for t in ax.texts:
            if not t.get_text() or t.get_gid() == "footnote":
                continue
            if isinstance(t, Annotation):
                t.update_positions(r)
            if box.overlaps(Text.get_window_extent(t, r)):
                found.append(f"text {t.get_text()!r}")
        found += ["another legend" for other in legends
                  if other is not leg and box.overlaps(other.get_window_extent(r))]
    return found
