"""Legends and notes placed where they cover no line, point or text of the axes.

Everything works in display pixels on the figure as drawn so far: the axes' lines (their
segments, and their markers as discs), the markers of its scatter collections, its texts
and its other legends are *obstacles*; shaded areas (bands, regions) are not. A legend
tries the corners and edges it is offered, inside the axes, in order, and takes the first
that is free; when none is, it goes outside the axes, to the right, below (or beside) any
legend already there. Call it after everything else is drawn and the limits are final.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.legend import Legend
    from matplotlib.transforms import Bbox

__all__ = ["Obstacles", "obstacles", "place_legend", "place_note", "footnote", "INSIDE",
           "covers", "text_box"]

#: the places inside the axes a legend may take, in the order tried when none is given
INSIDE = ("upper left", "upper right", "lower right", "lower left", "center left",
          "center right", "upper center", "lower center")
_PAD = 2.0  # pixels kept clear around a legend or note


@dataclass
class Obstacles:
    """What a legend or note must not cover, in display pixels."""

    paths: list[Any]  # matplotlib Paths of drawn line segments
    discs: list[tuple[float, float, float]]  # marker centres and radii
    boxes: list[tuple[float, float, float, float]]  # texts and legends (x0, y0, x1, y1)
    frame: tuple[float, float, float, float]  # the axes


def _renderer(ax: Axes) -> Any:
    fig = ax.get_figure(root=True)
    assert fig is not None
    return fig.canvas.get_renderer()  # type: ignore[attr-defined]


def _has_marker(line: Any) -> bool:
    return line.get_marker() not in (None, "None", "", " ")


def obstacles(ax: Axes, *, skip: Sequence[Any] = ()) -> Obstacles:
    """The lines, markers, texts and legends of ``ax`` (all but ``skip``) in pixels."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    fig = ax.get_figure(root=True)
    assert fig is not None
    px = fig.dpi / 72.0
    renderer = _renderer(ax)
    paths, discs, boxes = [], [], []
    for line in ax.lines:
        if not line.get_visible() or line in skip:
            continue
        path = line.get_transform().transform_path(line.get_path())
        vertices = np.asarray(path.vertices, dtype=float).reshape(-1, 2)
        if line.get_linestyle() not in ("None", "", " ") and len(vertices) > 1:
            paths.append(path)
        if _has_marker(line):
            r = line.get_markersize() * px / 2
            discs += [(float(x), float(y), r) for x, y in vertices]
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_visible() and coll not in skip:
            sizes = [float(v) for v in np.ravel(coll.get_sizes())] or [36.0]
            at = np.asarray(coll.get_offset_transform().transform(coll.get_offsets()))
            discs += [(float(x), float(y), sizes[k % len(sizes)] ** 0.5 * px / 2)
                      for k, (x, y) in enumerate(at)]
    for artist in ax.get_children():
        if artist in skip or not artist.get_visible():
            continue
        if isinstance(artist, Text) and artist.get_text() and artist is not ax.title:
            box = text_box(artist, renderer)
        elif isinstance(artist, Legend):
            box = artist.get_window_extent(renderer)
        else:
            continue
        boxes.append((box.x0, box.y0, box.x1, box.y1))
    frame = ax.get_window_extent(renderer)
    return Obstacles(paths, discs, boxes, (frame.x0, frame.y0, frame.x1, frame.y1))


def text_box(text: Any, renderer: Any) -> Bbox:
    """The box of a text or annotation's text, without the annotation's arrow, where it
    will be drawn (an annotation's place is computed only when it is drawn)."""
    from matplotlib.text import Annotation, Text

    if isinstance(text, Annotation):
        text.update_positions(renderer)
    return Text.get_window_extent(text, renderer)


def covers(box: Bbox | tuple[float, float, float, float], obs: Obstacles) -> bool:
    """True when ``box`` (pixels) touches a line, marker, text or legend of ``obs``.
    Lines and markers are clipped to the axes, so only the part of ``box`` inside the
    axes can cover them."""
    from matplotlib.transforms import Bbox

    x0, y0, x1, y1 = box.extents if isinstance(box, Bbox) else box
    x0, y0, x1, y1 = x0 - _PAD, y0 - _PAD, x1 + _PAD, y1 + _PAD
    if any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in obs.boxes):
        return True
    fx0, fy0, fx1, fy1 = obs.frame
    cx0, cy0, cx1, cy1 = max(x0, fx0), max(y0, fy0), min(x1, fx1), min(y1, fy1)
    if cx0 >= cx1 or cy0 >= cy1:
        return False
    for x, y, r in obs.discs:
        nx, ny = min(max(x, cx0), cx1), min(max(y, cy0), cy1)
        if (x - nx) ** 2 + (y - ny) ** 2 < r * r:
            return True
    clip = Bbox.from_extents(cx0, cy0, cx1, cy1)
    return any(path.intersects_bbox(clip, filled=False) for path in obs.paths)


def _outside_anchor(ax: Axes, height: float) -> tuple[float, float]:
    """Where a legend ``height`` pixels tall goes outside the axes (axes fraction of its
    upper left corner): right of the axes, below the legends there if it fits under
    them, else right of them."""
    from matplotlib.legend import Legend

    renderer = _renderer(ax)
    frame = ax.get_window_extent(renderer)
    gap = 8.0
    there = [leg.get_window_extent(renderer) for leg in ax.get_children()
             if isinstance(leg, Legend) and leg.get_window_extent(renderer).x0 >= frame.x1 - 1]
    if not there:
        return 1.02, 1.0
    bottom = min(b.y0 for b in there)
    if bottom - gap - height >= frame.y0 - 0.25 * frame.height:
        left = min(b.x0 for b in there)
        return (left - frame.x0) / frame.width, (bottom - gap - frame.y0) / frame.height
    right = max(b.x1 for b in there)
    return (right + gap - frame.x0) / frame.width, 1.0


def place_legend(ax: Axes, handles: Sequence[Any], *, where: Sequence[Any] = INSIDE,
                 main: bool = False, **kwargs: Any) -> Legend:
    """Add a legend of ``handles`` at the first place of ``where`` (inside the axes) that
    covers nothing drawn, else outside the axes on the right; ``main`` makes it the
    legend ``ax.get_legend()`` returns (one per axes), the others are added beside it.
    ``kwargs`` go to :class:`~matplotlib.legend.Legend` (fontsize, title...)."""
    from matplotlib.legend import Legend

    renderer = _renderer(ax)
    labels = [h.get_label() for h in handles]
    obs = obstacles(ax, skip=[ax.get_legend()] if main and ax.get_legend() else [])
    chosen: dict[str, Any] | None = None
    for loc in where:
        trial = Legend(ax, handles, labels, loc=loc, **kwargs)
        if not covers(trial.get_window_extent(renderer), obs):
            chosen = {"loc": loc}
            break
    if chosen is None:
        trial = Legend(ax, handles, labels, loc="upper left", **kwargs)
        height = trial.get_window_extent(renderer).height
        chosen = {"loc": "upper left", "bbox_to_anchor": _outside_anchor(ax, height),
                  "borderaxespad": 0.0}
    if main:
        return ax.legend(handles=list(handles), **chosen, **kwargs)
    legend = Legend(ax, handles, labels, **chosen, **kwargs)
    ax.add_artist(legend)
    legend.set_clip_on(False)
    return legend


def place_note(ax: Axes, text: str, xy: tuple[float, float],
               offsets: Sequence[tuple[float, float]], **kwargs: Any) -> Any:
    """Annotate ``xy`` (data) with ``text`` at the first offset (points; its sign picks
    the side, the text's corner nearest ``xy`` sits there) whose box stays inside the
    axes and covers nothing drawn; failing that, the first offset that stays inside the
    axes, else the first. ``kwargs`` go to ``annotate``."""
    renderer = _renderer(ax)
    obs = obstacles(ax)
    fx0, fy0, fx1, fy1 = obs.frame
    inside = None
    for dx, dy in offsets:
        note = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points",
                           ha="left" if dx >= 0 else "right",
                           va="bottom" if dy >= 0 else "top", **kwargs)
        box = text_box(note, renderer)
        within = fx0 <= box.x0 and box.x1 <= fx1 and fy0 <= box.y0 and box.y1 <= fy1
        if within and not covers(box, obs):
            return note
        note.remove()
        inside = inside or ((dx, dy) if within else None)
    dx, dy = inside or offsets[0]
    return ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points",
                       ha="left" if dx >= 0 else "right", va="bottom" if dy >= 0 else "top",
                       **kwargs)


def footnote(ax: Axes, text: str, **kwargs: Any) -> Any:
    """``text`` in small grey type under the x-axis label of ``ax``, from its left edge:
    a caption that covers nothing (saved figures grow to hold it)."""
    if not text:
        return None
    style: dict[str, Any] = {"fontsize": 7, "color": "0.3", "gid": "footnote"} | kwargs
    return ax.annotate(text, (0.0, 0.0), xycoords=(ax.transAxes, ax.xaxis.label),
                       xytext=(0, -4), textcoords="offset points", ha="left", va="top",
                       annotation_clip=False, **style)
