"""The Sparsity Roofline: accuracy against speedup at speed of light.

After *The Sparsity Roofline: Understanding the Hardware Limits of Sparse Neural
Networks* (Shinn et al.), §3: one line per sparsity pattern through its sparsity levels,
accuracy on the y axis and the speedup of the sparse over the dense model at SoL on the
x axis (Σ dense SoL / Σ sparse SoL over the layers). Points are read from CSV or JSON;
an optional ``model`` column (as ``whatif --points`` writes) keeps the networks apart: one
line per (model, pattern), the pattern by colour and the model by line style.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..userfile import finite_numbers, read_csv, read_json
from .style import LINE_STYLES, MARKERS, PALETTE, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SparsityPoint", "read_point_rows", "read_sparsity_file", "read_sparsity_points",
           "sparsity_roofline_figure"]

_FIELDS = ("pattern", "sparsity", "speedup", "accuracy")


@dataclass(frozen=True)
class SparsityPoint:
    """One pruned model: pattern (e.g. "2:4", "4x4 block"), sparsity in [0, 1]."""

    pattern: str
    sparsity: float
    speedup: float
    accuracy: float
    model: str = ""


def _point(source: str, where: str, raw: dict[str, Any], from_text: bool
           ) -> SparsityPoint | None:
    """The point of one row; None when it has no accuracy (a level not measured)."""
    if raw.get("accuracy") in (None, ""):
        return None
    missing = [f for f in _FIELDS if f not in raw or raw[f] == ""]
    if missing:
        raise FigureError(f"{source}: {where}: missing {', '.join(missing)} "
                          f"(columns: {', '.join(_FIELDS)})")
    numbers = finite_numbers(raw, _FIELDS[1:], lambda problem: FigureError(
        f"{source}: {problem}"), where=where, from_text=from_text)
    sparsity, speedup, accuracy = (numbers[f] for f in _FIELDS[1:])
    if not 0.0 <= sparsity <= 1.0:
        raise FigureError(f"{source}: {where}: sparsity {sparsity:g} is not a fraction in "
                          "[0, 1] (write 0.5 for 50 %)")
    if not speedup > 0:
        raise FigureError(f"{source}: {where}: field 'speedup' is {speedup:g}, expected a "
                          "positive number")
    return SparsityPoint(str(raw["pattern"]), sparsity, speedup, accuracy,
                         str(raw.get("model") or ""))


def read_point_rows(path: str | Path, columns: Sequence[str]
                    ) -> list[tuple[str, dict[str, Any], bool]]:
    """(where, row, from_text) of every point of a CSV file with a header row, or of JSON
    (a list of objects, or {"points": [...]}); ``from_text`` for the text cells of CSV.
    ``columns`` name the fields the points need, for the message of a file that is not
    a list of points."""
    source = str(path)
    def fail(problem: str) -> FigureError:
        return FigureError(f"{source}: {problem}")

    if source.lower().endswith(".json"):
        doc = read_json(path, fail)
        rows = doc.get("points") if isinstance(doc, dict) else doc
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise FigureError(f"{source}: expected a list of objects with "
                              f"{', '.join(columns)}")
        names: set[str] = set().union(*rows) if rows else set(columns)
        found = [(f"point {i}", r, False) for i, r in enumerate(rows)]
    else:
        header, table = read_csv(path, fail)
        names = set(header)
        found = [(f"line {line}", row, True) for line, row in table]
    if not names & set(columns):  # not a file of points at all: say so, not that each
        # of its "points" lacks a value
        raise fail(f"not a file of points: none of the columns {', '.join(columns)} (as "
                   "'sparsroof whatif --points FILE' writes them)")
    return found


def read_sparsity_file(path: str | Path) -> tuple[list[SparsityPoint], int]:
    """The points of a CSV with a header row, or of JSON (a list, or {"points": [...]}),
    that have an accuracy, and how many rows had none (left out, as ``whatif --points``
    writes a row for every level whether its accuracy was measured or not)."""
    source = str(path)
    found = [_point(source, where, row, from_text)
             for where, row, from_text in read_point_rows(path, _FIELDS)]
    points = [p for p in found if p is not None]
    if not found:
        raise FigureError(f"{source}: no points")
    if not points:
        raise FigureError(f"{source}: no point has an accuracy (columns: "
                          f"{', '.join(_FIELDS)}; 'sparsroof whatif --accuracy ACC.csv "
                          "--points FILE' writes them)")
    return points, len(found) - len(points)


def read_sparsity_points(path: str | Path) -> list[SparsityPoint]:
    """The points of :func:`read_sparsity_file` that have an accuracy."""
    return read_sparsity_file(path)[0]


def sparsity_roofline_figure(points: Sequence[SparsityPoint], *, title: str | None = None,
                             accuracy_label: str = "accuracy",
                             size: tuple[float, float] = (7.0, 5.0), dpi: int = 150) -> Figure:
    """One line per (model, pattern) in order of sparsity, each level marked.

    Line data are exactly (``speedup``, ``accuracy``) of each line's points; a pattern
    keeps its colour across models and a model its line style across patterns.
    """
    if not points:
        raise FigureError("sparsity roofline: no points")
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.12, right=0.78, bottom=0.11, top=0.9)
    patterns = list(dict.fromkeys(p.pattern for p in points))
    models = list(dict.fromkeys(p.model for p in points))
    levels = sorted({p.sparsity for p in points})
    marker_of = {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(levels)}
    style_of = {m: LINE_STYLES[i % len(LINE_STYLES)] for i, m in enumerate(models)}
    for model in models:
        for i, pattern in enumerate(patterns):
            mine = sorted((p for p in points if p.pattern == pattern and p.model == model),
                          key=lambda p: p.sparsity)
            if mine:
                _line(ax, mine, PALETTE[i % len(PALETTE)], style_of[model], marker_of,
                      label=pattern if model == models[0] else None)
    ax.axvline(1.0, color="0.4", lw=0.9, ls=(0, (4, 3)), zorder=1)
    ax.annotate("dense", (1.0, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                textcoords="offset points", fontsize=7.5, color="0.3", va="top")
    ax.set_xlabel("speedup over dense at speed of light (×)")
    ax.set_ylabel(accuracy_label)
    ax.grid(True, color="0.92", lw=0.6, zorder=0)
    ax.set_title(title or "Sparsity roofline", fontsize=10)
    _legends(ax, levels, marker_of, style_of if len(models) > 1 else {})
    return fig


def _line(ax: Any, mine: list[SparsityPoint], color: str, ls: Any,
          marker_of: dict[float, str], label: str | None) -> None:
    model, pattern = mine[0].model, mine[0].pattern
    gid = f"pattern|{model}|{pattern}" if model else f"pattern|{pattern}"
    ax.plot([p.speedup for p in mine], [p.accuracy for p in mine], color=color, lw=1.4,
            ls=ls, label=label, zorder=2, gid=gid)
    for p in mine:
        ax.plot([p.speedup], [p.accuracy], ls="", marker=marker_of[p.sparsity], ms=6,
                color=color, mec="white", mew=0.6, zorder=3)


def _legends(ax: Any, levels: list[float], marker_of: dict[float, str],
             style_of: dict[str, Any]) -> None:
    from matplotlib.lines import Line2D

    patterns = ax.legend(title="pattern", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                         fontsize=7.5, title_fontsize=7.5, frameon=False, borderaxespad=0.0)
    if style_of:
        models = ax.legend(handles=[Line2D([], [], color="0.35", ls=ls, lw=1.4, label=m)
                                    for m, ls in style_of.items()],
                           title="model", loc="center left", bbox_to_anchor=(1.02, 0.5),
                           fontsize=7.5, title_fontsize=7.5, frameon=False,
                           borderaxespad=0.0)
        ax.add_artist(models)
    handles = [Line2D([], [], ls="", marker=marker_of[s], color="0.35",
                      label=f"{100 * s:.4g} %") for s in levels]
    ax.legend(handles=handles, title="sparsity", loc="lower left", bbox_to_anchor=(1.02, 0.0),
              fontsize=7.5, title_fontsize=7.5, frameon=False, borderaxespad=0.0,
              ncol=1 if len(levels) <= 12 else 2)
    ax.add_artist(patterns)
