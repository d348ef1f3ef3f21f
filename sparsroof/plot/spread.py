"""Markers that would hide one another, set a few points apart.

Points of different series can fall on one spot: two devices with the same launch floor,
two storage formats with the same launch-bound rate, a dozen near-identical matrices of a
batch. Drawn there, the marker on top hides the others. :func:`spread` moves such markers
apart in display space, so the shift is the same few typographic points at any scale and
any zoom of the data, and never further than a small limit from the marker's true place:

- markers on (almost) one spot, a *pile*, are first laid out around the pile's centre: in
  a row for two or three, on a sunflower (golden-angle) spiral for more;
- then every pair closer than ``1 - overlap`` of their summed radii pushes apart, a few
  dozen rounds, each marker held within its limit.

It is deterministic (the same points give the same figure) and leaves alone every marker
that nothing covers. Axis limits, the axes' position and the figure's size and DPI must
be final, since it works in pixels; the caller draws at the positions it returns and
says in the figure that markers were moved (:func:`caption`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["Spread", "spread", "caption", "marker_diameter_pt"]

_GOLDEN = math.pi * (3.0 - math.sqrt(5.0))  # the golden angle, radians
_SAME_SPOT = 0.25  # markers closer than this share of their diameter form a pile
_ROUNDS = 60
_WIDEST = 19  # a pile of more is packed into the circle of this many
_DIRECT = 1024  # up to this many markers, every pair's distance is measured


@dataclass(frozen=True)
class Spread:
    """Where to draw each marker (data coordinates) and how far any of them moved."""

    xy: list[tuple[float, float]]
    moved: int  # markers drawn away from their true place
    shift_pt: float  # the largest distance moved, in typographic points
    pile: int  # the most markers that shared one spot
    crowded: int = 0  # pairs still closer than half their summed radii (held by the limit)


def marker_diameter_pt(size: float) -> float:
    """The diameter, in points, of a scatter marker of ``size`` (its area in points²).

    >>> marker_diameter_pt(28.0) == math.sqrt(28.0)
    True
    """
    return math.sqrt(size)


def spread(ax: Axes, xy: Sequence[tuple[float, float]], diameter_pt: float | Sequence[float],
           *, overlap: float = 0.1, limit: float = 1.5) -> Spread:
    """Display positions for markers at ``xy`` (data coordinates of ``ax``) such that no
    two cover more than ``overlap`` of their summed radii where that can be had by moving
    each at most ``limit`` marker diameters (a pile of many: its spiral's radius plus one
    diameter). ``diameter_pt``: one diameter for all, or one per marker."""
    import numpy as np

    n = len(xy)
    if n < 2:
        return Spread([(float(x), float(y)) for x, y in xy], 0, 0.0, min(n, 1))
    fig = ax.get_figure(root=True)
    assert fig is not None
    px = fig.dpi / 72.0
    true = np.asarray(ax.transData.transform(np.asarray(xy, dtype=float)), dtype=float)
    d = np.broadcast_to(np.asarray(diameter_pt, dtype=float) * px, (n,)).copy()
    radius = d / 2
    piles = _piles(true, d)
    pos, reach = _seed(true, d, piles)
    cap = np.maximum(limit * d, reach + d)
    pos = _relax(pos, true, radius, 1.0 - overlap, cap)
    shift = np.hypot(*(pos - true).T)
    moved = shift > 1e-6
    back = ax.transData.inverted().transform(pos)
    back[~moved] = np.asarray(xy, dtype=float)[~moved]  # untouched markers stay exact
    return Spread([(float(x), float(y)) for x, y in back], int(moved.sum()),
                  float(shift.max() / px), max(len(p) for p in piles),
                  _crowded(pos, radius))


def _pairs(pos: Any, reach: float) -> Any:
    """The pairs (i, j), i < j, of points of ``pos`` at most about ``reach`` apart, in
    increasing order of i, then j: a superset of every pair the callers then test against
    a nearer bound. Up to :data:`_DIRECT` points every pair is measured (a figure holds
    a few dozen markers, and scipy's k-d tree would cost more to import than the whole
    figure to lay out); beyond, the k-d tree finds them."""
    import numpy as np

    n = len(pos)
    if n <= _DIRECT:
        i, j = np.triu_indices(n, 1)
        gap = pos[j] - pos[i]
        near = gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1] <= reach * reach
        return np.column_stack((i[near], j[near]))
    from scipy.spatial import cKDTree

    pairs = cKDTree(pos).query_pairs(reach, output_type="ndarray")
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _piles(pos: Any, d: Any) -> list[list[int]]:
    """Groups of markers on (almost) one spot: in index order, each marker joins the
    first pile whose first marker is within ``_SAME_SPOT`` of the smaller diameter, so a
    pile never chains across a crowded region (that is left to the pushing apart)."""
    near: dict[int, list[int]] = {}
    for i, j in _pairs(pos, float(_SAME_SPOT * d.max())).tolist():
        if ((pos[i] - pos[j]) ** 2).sum() <= (_SAME_SPOT * min(d[i], d[j])) ** 2:
            near.setdefault(int(j), []).append(int(i))
    pile_of: dict[int, int] = {}  # marker -> the first marker of its pile
    piles: dict[int, list[int]] = {}
    for i in range(len(pos)):
        anchor = next((a for a in near.get(i, []) if pile_of.get(a) == a), i)
        pile_of[i] = anchor
        piles.setdefault(anchor, []).append(i)
    return list(piles.values())


def _seed(true: Any, d: Any, piles: list[list[int]]) -> tuple[Any, Any]:
    """Start positions: each pile laid out around its centre (a row for two or three, a
    sunflower spiral for more), and how far each member was set from the centre."""
    import numpy as np

    pos = true.copy()
    reach = np.zeros(len(true))
    for pile in piles:
        k = len(pile)
        if k == 1:
            continue
        step = float(d[pile].max())
        centre = true[pile].mean(axis=0)
        if k <= 3:
            offsets = np.array([[(m - (k - 1) / 2) * step, 0.0] for m in range(k)])
        else:  # golden-angle spiral: neighbours about one diameter apart, and a pile
            # of more than _WIDEST markers packed closer, within _WIDEST's radius
            step = min(step, step * math.sqrt(_WIDEST / k))
            r = step / 1.55 * np.sqrt(np.arange(k) + 0.5)
            angle = _GOLDEN * np.arange(k)
            offsets = np.column_stack([r * np.cos(angle), r * np.sin(angle)])
            offsets -= offsets.mean(axis=0)
        pos[pile] = centre + offsets
        reach[pile] = np.hypot(*(centre + offsets - true[pile]).T)
    return pos, reach


def _crowded(pos: Any, radius: Any) -> int:
    """Pairs of markers closer than half their summed radii: one covers most of the
    other."""
    import numpy as np

    pairs = _pairs(pos, float(radius.max()))
    if not len(pairs):
        return 0
    i, j = pairs[:, 0], pairs[:, 1]
    return int((np.hypot(*(pos[i] - pos[j]).T) < 0.5 * (radius[i] + radius[j])).sum())


def _relax(pos: Any, true: Any, radius: Any, share: float, cap: Any) -> Any:
    """Push apart every pair closer than ``share`` of their summed radii, holding each
    marker within ``cap`` pixels of its true place."""
    import numpy as np

    reach = float(2 * share * radius.max())
    for _ in range(_ROUNDS):
        pairs = _pairs(pos, reach)
        if not len(pairs):
            break
        i, j = pairs[:, 0], pairs[:, 1]
        gap = pos[j] - pos[i]
        dist = np.hypot(gap[:, 0], gap[:, 1])
        want = share * (radius[i] + radius[j])
        close = dist < want - 1e-9
        if not close.any():
            break
        i, j, gap, dist, want = i[close], j[close], gap[close], dist[close], want[close]
        unit = np.where(dist[:, None] > 1e-9, gap / np.maximum(dist, 1e-9)[:, None],
                        np.array([1.0, 0.0]))
        push = unit * ((want - dist) / 2 * 1.05)[:, None]
        delta = np.zeros_like(pos)
        np.add.at(delta, i, -push)
        np.add.at(delta, j, push)
        pos = pos + delta
        away = pos - true
        far = np.hypot(away[:, 0], away[:, 1])
        over = far > cap
        pos[over] = true[over] + away[over] * (cap[over] / far[over])[:, None]
    return pos


def caption(s: Spread) -> str:
    """What the figure says about moved markers ('' when none moved).

    >>> caption(Spread([], 3, 4.2, 2))
    '3 markers set up to 4.2 pt from their true place so that none hides another'
    >>> caption(Spread([], 12, 7.9, 12)).endswith("another (12 shared one spot)")
    True
    >>> caption(Spread([], 40, 8.0, 3, crowded=2)).endswith("fewer hide one another (2 "
    ...                                                   "pairs still overlap; 3 shared one spot)")
    True
    """
    if not s.moved:
        return ""
    notes = [f"{s.crowded} pair{'s' if s.crowded != 1 else ''} still overlap"] if s.crowded else []
    notes += [f"{s.pile} shared one spot"] if s.pile > 2 else []
    goal = "fewer hide one another" if s.crowded else "none hides another"
    return (f"{s.moved} marker{'s' if s.moved != 1 else ''} set up to {s.shift_pt:.2g} pt "
            f"from their true place so that {goal}"
            + (f" ({'; '.join(notes)})" if notes else ""))
