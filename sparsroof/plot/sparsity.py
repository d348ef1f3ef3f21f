"""The Sparsity Roofline: accuracy against speedup at speed of light.

After *The Sparsity Roofline: Understanding the Hardware Limits of Sparse Neural
Networks* (Shinn et al.), §3: one line per sparsity pattern through its sparsity levels,
accuracy on the y axis and the speedup of the sparse over the dense model at SoL on the
x axis (Σ dense SoL / Σ sparse SoL over the layers). Points are read from CSV or JSON.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..userfile import read_text
from .style import MARKERS, PALETTE, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SparsityPoint", "read_sparsity_points", "sparsity_roofline_figure"]

_FIELDS = ("pattern", "sparsity", "speedup", "accuracy")


@dataclass(frozen=True)
class SparsityPoint:
    """One pruned model: pattern (e.g. "2:4", "4x4 block"), sparsity in [0, 1]."""

    pattern: str
    sparsity: float
    speedup: float
    accuracy: float


def _point(source: str, where: str, raw: dict[str, Any]) -> SparsityPoint:
    missing = [f for f in _FIELDS if raw.get(f) in (None, "")]
    if missing:
        raise FigureError(f"{source}: {where}: missing {', '.join(missing)} "
                          f"(columns: {', '.join(_FIELDS)})")
    try:
        sparsity, speedup, accuracy = (float(raw[f]) for f in _FIELDS[1:])
    except (TypeError, ValueError):
        raise FigureError(f"{source}: {where}: sparsity, speedup and accuracy must be "
                          "numbers") from None
    if not 0.0 <= sparsity <= 1.0:
        raise FigureError(f"{source}: {where}: sparsity {sparsity:g} is not a fraction in "
                          "[0, 1] (write 0.5 for 50 %)")
    if not (speedup > 0 and math.isfinite(speedup) and math.isfinite(accuracy)):
        raise FigureError(f"{source}: {where}: speedup must be positive and finite")
    return SparsityPoint(str(raw["pattern"]), sparsity, speedup, accuracy)


def read_sparsity_points(path: str | Path) -> list[SparsityPoint]:
    """Points from a CSV with a header row, or JSON (a list, or {"points": [...]})."""
    source = str(path)
    text = read_text(path, lambda problem: FigureError(f"{source}: {problem}"))
    if source.lower().endswith(".json"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as err:
            raise FigureError(f"{source}: line {err.lineno}: not valid JSON: {err.msg}") from None
        rows = doc.get("points") if isinstance(doc, dict) else doc
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise FigureError(f"{source}: expected a list of objects with "
                              f"{', '.join(_FIELDS)}")
        points = [_point(source, f"point {i}", r) for i, r in enumerate(rows)]
    else:
        reader = csv.DictReader(text.splitlines())
        points = [_point(source, f"line {reader.line_num}", row) for row in reader]
    if not points:
        raise FigureError(f"{source}: no points")
    return points


def sparsity_roofline_figure(points: Sequence[SparsityPoint], *, title: str | None = None,
                             accuracy_label: str = "accuracy",
                             size: tuple[float, float] = (7.0, 5.0), dpi: int = 150) -> Figure:
    """One line per pattern in order of sparsity, each level marked and labelled.

    Line data are exactly (``speedup``, ``accuracy``) of each pattern's points.
    """
    if not points:
        raise FigureError("sparsity roofline: no points")
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.12, right=0.78, bottom=0.11, top=0.9)
    patterns = list(dict.fromkeys(p.pattern for p in points))
    levels = sorted({p.sparsity for p in points})
    marker_of = {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(levels)}
    for i, pattern in enumerate(patterns):
        mine = sorted((p for p in points if p.pattern == pattern), key=lambda p: p.sparsity)
        color = PALETTE[i % len(PALETTE)]
        ax.plot([p.speedup for p in mine], [p.accuracy for p in mine], color=color, lw=1.4,
                label=pattern, zorder=2, gid=f"pattern|{pattern}")
        for p in mine:
            ax.plot([p.speedup], [p.accuracy], ls="", marker=marker_of[p.sparsity], ms=6,
                    color=color, mec="white", mew=0.6, zorder=3)
    ax.axvline(1.0, color="0.4", lw=0.9, ls=(0, (4, 3)), zorder=1)
    ax.annotate("dense", (1.0, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                textcoords="offset points", fontsize=7.5, color="0.3", va="top")
    ax.set_xlabel("speedup over dense at speed of light (×)")
    ax.set_ylabel(accuracy_label)
    ax.grid(True, color="0.92", lw=0.6, zorder=0)
    ax.set_title(title or "Sparsity roofline", fontsize=10)
    _legends(ax, levels, marker_of)
    return fig


def _legends(ax: Any, levels: list[float], marker_of: dict[float, str]) -> None:
    from matplotlib.lines import Line2D

    patterns = ax.legend(title="pattern", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                         fontsize=7.5, title_fontsize=7.5, frameon=False, borderaxespad=0.0)
    handles = [Line2D([], [], ls="", marker=marker_of[s], color="0.35",
                      label=f"{100 * s:.4g} %") for s in levels]
    ax.legend(handles=handles, title="sparsity", loc="lower left", bbox_to_anchor=(1.02, 0.0),
              fontsize=7.5, title_fontsize=7.5, frameon=False, borderaxespad=0.0,
              ncol=1 if len(levels) <= 12 else 2)
    ax.add_artist(patterns)
