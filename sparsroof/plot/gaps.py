"""Drawing measured runs beside their bound: a hollow marker where the run is, a dotted
line from its bound to it, and a red cross on any run faster than its bound (a violation:
the model or the spec is wrong for it). Shared by the roofline and the time plane, which
place the two ends differently."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .measured import MeasuredPoint

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

__all__ = ["draw_gaps", "gap_handles", "gap_summary", "VIOLATION_COLOR"]

VIOLATION_COLOR = "#C00000"
Place = Callable[[MeasuredPoint], tuple[float, float]]


def draw_gaps(ax: Axes, measured: Sequence[MeasuredPoint], colors: dict[str, str],
              bound_at: Place, run_at: Place, tag: str, model_at: Place | None = None
              ) -> None:
    """One dotted segment per run from ``bound_at`` to ``run_at`` (gid ``{tag}-gap|i``),
    the runs as hollow circles per matrix (gid ``{tag}-measured|matrix``) and the
    violations as red crosses (gid ``{tag}-violations``). Where the bound's marker stands
    elsewhere (``model_at``: a launch-bound run's memory and compute times), a thin grey
    segment joins it to ``bound_at`` (gid ``{tag}-floor|i``), where a grey diamond marks
    the bound (gid ``{tag}-sol|i``)."""
    ends = [(bound_at(m), run_at(m)) for m in measured]
    for i, (m, (a, b)) in enumerate(zip(measured, ends, strict=True)):
        color = VIOLATION_COLOR if m.violation else colors[m.bound.matrix]
        ax.plot([a[0], b[0]], [a[1], b[1]], color=color, lw=1.0, ls=(0, (1.5, 1.5)),
                alpha=0.9, zorder=2.6, gid=f"{tag}-gap|{i}")
        start = model_at(m) if model_at else a
        if start != a:  # the bound is not at its model point: mark where it is
            ax.plot([start[0], a[0]], [start[1], a[1]], color="0.6", lw=0.7, zorder=2.55,
                    gid=f"{tag}-floor|{i}")
            ax.scatter([a[0]], [a[1]], marker="D", s=16, color="0.45", zorder=2.7,
                       gid=f"{tag}-sol|{i}")
    for matrix, color in colors.items():
        mine = [b for m, (_, b) in zip(measured, ends, strict=True) if m.bound.matrix == matrix]
        if mine:
            ax.scatter([x for x, _ in mine], [y for _, y in mine], marker="o", s=30,
                       facecolors="white", edgecolors=color, linewidths=1.3, zorder=3.2,
                       gid=f"{tag}-measured|{matrix}")
    bad = [b for m, (_, b) in zip(measured, ends, strict=True) if m.violation]
    if bad:
        ax.scatter([x for x, _ in bad], [y for _, y in bad], marker="x", s=46,
                   color=VIOLATION_COLOR, linewidths=1.6, zorder=3.4, gid=f"{tag}-violations")


def gap_handles(measured: Sequence[MeasuredPoint], floored: bool = False) -> list[Line2D]:
    """Legend entries for what :func:`draw_gaps` draws (``floored``: it was given a
    ``model_at``, and marks a launch-bound run's bound apart from its model point)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls=(0, (1.5, 1.5)), marker="o", markerfacecolor="white",
                      markeredgecolor="0.35", color="0.35", label="measured run (bound ⋯ run)")]
    if floored and any(m.bound.bound == "launch" for m in measured):
        handles.append(Line2D([], [], ls="", marker="D", markersize=4, color="0.45",
                              label="its bound, at the launch floor"))
    if any(m.violation for m in measured):
        handles.append(Line2D([], [], ls="", marker="x", color=VIOLATION_COLOR,
                              label="faster than its bound"))
    return handles


def gap_summary(measured: Sequence[MeasuredPoint]) -> str:
    """One line: how many runs, how far from their bound, how many beat it.

    >>> from sparsroof.plot.points import RoofPoint
    >>> p = RoofPoint("a", "spmv", 1, "csr", "compulsory", "simt", "fp64", 0.1, 1e9, 2.0,
    ...               2.0, 20.0, 1e-9, 2e-9, 0.0, 2e-9, "memory", "HBM", 1e12, 1e10)
    >>> gap_summary([MeasuredPoint(p, 6e-9, "x", "r:2"), MeasuredPoint(p, 1e-9, "x", "r:3")])
    '2 measured runs: median 1.75x their bound, 1 faster than it'
    >>> gap_summary([MeasuredPoint(p, 6e-9, "x", "r:2")])
    '1 measured run: 3x its bound'
    """
    ratios = [m.ratio for m in measured]
    faster = sum(m.violation for m in measured)
    if len(ratios) == 1:
        return (f"1 measured run: {ratios[0]:.3g}x its bound"
                + (", faster than it" if faster else ""))
    return (f"{len(ratios)} measured runs: median {statistics.median(ratios):.3g}x their "
            f"bound, {faster} faster than it")
