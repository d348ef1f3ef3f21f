"""Accuracy against sparsity and against FLOPs: the two panels of *The Sparsity Roofline*,
Figure 5.

The paper draws them to show a common but misleading way of judging pruned networks:
both suggest that more sparsity (fewer FLOPs) means a faster network, which leaves memory
traffic out (the Sparsity Roofline, accuracy against speedup at SoL, is the answer). The
points are the ``whatif --points`` files of one or more networks, with the user's own
accuracies (``whatif --accuracy``): the columns ``pattern``, ``sparsity`` (a fraction),
``accuracy``, ``flops_useful`` (the pruned network's FLOPs) and optionally ``model``.
One line per (model, pattern) in both panels, one marker per sparsity level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..userfile import finite_numbers
from .sparsity import read_point_rows
from .style import LINE_STYLES, MARKERS, PALETTE, log_axis, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["AccuracyPoint", "read_accuracy_points", "accuracy_figure"]

_FIELDS = ("pattern", "sparsity", "accuracy", "flops_useful")


@dataclass(frozen=True)
class AccuracyPoint:
    """One pruned network: its accuracy, sparsity (a fraction) and useful FLOPs."""

    model: str
    pattern: str
    sparsity: float
    accuracy: float
    flops: float


def _point(source: str, where: str, raw: dict[str, Any], from_text: bool
           ) -> AccuracyPoint | None:
    """The point of one row; None when it has no accuracy (not measured)."""
    if raw.get("accuracy") in (None, ""):
        return None
    missing = [f for f in _FIELDS if raw.get(f) in (None, "")]
    if missing:
        raise FigureError(f"{source}: {where}: missing {', '.join(missing)} (write the "
                          "points with 'sparsroof whatif --accuracy ACC.csv --points FILE')")
    numbers = finite_numbers(raw, _FIELDS[1:], lambda problem: FigureError(
        f"{source}: {problem}"), where=where, from_text=from_text)
    sparsity, accuracy, flops = (numbers[f] for f in _FIELDS[1:])
    if not 0.0 <= sparsity <= 1.0:
        raise FigureError(f"{source}: {where}: sparsity {sparsity:g} is not a fraction in "
                          "[0, 1] (write 0.5 for 50 %)")
    if not flops > 0:
        raise FigureError(f"{source}: {where}: field 'flops_useful' is {flops:g}, expected "
                          "a positive number")
    return AccuracyPoint(str(raw.get("model") or ""), str(raw["pattern"]), sparsity,
                         accuracy, flops)


def read_accuracy_points(path: str | Path) -> tuple[list[AccuracyPoint], int]:
    """The points of a ``whatif --points`` CSV or JSON file that have an accuracy, and how
    many rows had none."""
    found = [_point(str(path), where, row, from_text)
             for where, row, from_text in read_point_rows(path, _FIELDS)]
    points = [p for p in found if p is not None]
    return points, len(found) - len(points)


def accuracy_figure(points: Sequence[AccuracyPoint], *, title: str | None = None,
                    accuracy_label: str = "accuracy", size: tuple[float, float] = (7.0, 6.0),
                    dpi: int = 150) -> Figure:
    """Accuracy against sparsity (top) and against FLOPs (bottom, log scale).

    Each (model, pattern) is one line, gid ``sparsity|MODEL|PATTERN`` on top and
    ``flops|MODEL|PATTERN`` below, whose data are exactly (sparsity in %, accuracy) and
    (flops, accuracy) of its points in order of sparsity.
    """
    if not points:
        raise FigureError("accuracy figure: no point has an accuracy")
    fig = new_figure(size, dpi)
    top, bottom = fig.subplots(2, 1)
    fig.subplots_adjust(left=0.12, right=0.74, bottom=0.09, top=0.9, hspace=0.35)
    lines = list(dict.fromkeys((p.model, p.pattern) for p in points))
    models = list(dict.fromkeys(p.model for p in points))
    levels = sorted({p.sparsity for p in points})
    marker_of = {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(levels)}
    for i, (model, pattern) in enumerate(lines):
        mine = sorted((p for p in points if (p.model, p.pattern) == (model, pattern)),
                      key=lambda p: p.sparsity)
        style = {"color": PALETTE[i % len(PALETTE)], "lw": 1.4,
                 "ls": LINE_STYLES[models.index(model) % len(LINE_STYLES)], "zorder": 2}
        label = " · ".join(x for x in (model, pattern) if x)
        top.plot([100 * p.sparsity for p in mine], [p.accuracy for p in mine], label=label,
                 gid=f"sparsity|{model}|{pattern}", **style)
        bottom.plot([p.flops for p in mine], [p.accuracy for p in mine],
                    gid=f"flops|{model}|{pattern}", **style)
        for p in mine:
            for ax, x in ((top, 100 * p.sparsity), (bottom, p.flops)):
                ax.plot([x], [p.accuracy], ls="", marker=marker_of[p.sparsity], ms=6,
                        color=style["color"], mec="white", mew=0.6, zorder=3)
    top.set_xlabel("sparsity (%)")
    bottom.set_xscale("log")
    log_axis(bottom.xaxis, "FLOP")
    from matplotlib.ticker import LogLocator

    # pruning halves the FLOPs per level: a decade or two, so 1-2-5 ticks
    bottom.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=30))
    bottom.set_xlabel("FLOPs of the pruned network (useful, 2 per entry per column)")
    for ax in (top, bottom):
        ax.set_ylabel(accuracy_label)
        ax.grid(True, color="0.92", lw=0.6, zorder=0)
    top.set_title(title or "Accuracy against sparsity and FLOPs (neither shows speed)",
                  fontsize=10)
    _legends(fig, top, levels, marker_of)
    return fig


def _legends(fig: Any, top: Any, levels: list[float], marker_of: dict[float, str]) -> None:
    from matplotlib.lines import Line2D

    lines = top.legend(title="model · pattern", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                       fontsize=7.5, title_fontsize=7.5, frameon=False, borderaxespad=0.0)
    top.legend(handles=[Line2D([], [], ls="", marker=marker_of[s], color="0.35",
                               label=f"{100 * s:.4g} %") for s in levels],
               title="sparsity", loc="upper left", bbox_to_anchor=(1.02, -0.35),
               fontsize=7.5, title_fontsize=7.5, frameon=False, borderaxespad=0.0)
    top.add_artist(lines)
