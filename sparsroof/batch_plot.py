"""An aggregate roofline of a result store: every matrix's best row, coloured by class.

x is arithmetic intensity (useful FLOP per byte), y attainable FLOP/s; each spec's roof
min(P, β·AI) is drawn as a line. Uses matplotlib's object API (no pyplot state), imported
only when a plot is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import SparsroofError
from .summary import RoofPoint

__all__ = ["PlotError", "aggregate_roofline"]


class PlotError(SparsroofError):
    """A plot that cannot be written."""


_LINESTYLES = ("-", "--", ":", "-.")


def _roof(ax: Any, peak: float, bandwidth: float, xs: tuple[float, float], name: str,
          style: str) -> None:
    import numpy as np

    x = np.geomspace(xs[0], xs[1], 200)
    ax.plot(x, np.minimum(peak, bandwidth * x), color="black", lw=1, ls=style,
            label=f"roof {name}")


def aggregate_roofline(points: Sequence[RoofPoint], path: str | Path,
                       title: str = "sparsroof: all matrices") -> None:
    """Write the aggregate roofline of ``points`` to ``path`` (format from its suffix)."""
    from matplotlib.figure import Figure

    points = [p for p in points if p.intensity > 0 and p.attainable_flops > 0]
    if not points:
        raise PlotError(f"{path}: nothing to plot: the store holds no results with work")
    fig = Figure(figsize=(8, 5.5), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    positive = [p.intensity for p in points if p.intensity > 0] or [1.0]
    xs = (min(positive) / 2, max(max(positive) * 2, max(p.peak_flops / p.bandwidth
                                                         for p in points) * 4))
    roofs = {(p.spec, p.peak_flops, p.bandwidth) for p in points}
    for i, (spec, peak, bandwidth) in enumerate(sorted(roofs)):
        _roof(ax, peak, bandwidth, xs, spec, _LINESTYLES[i % len(_LINESTYLES)])
    labels = sorted({p.label for p in points})
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    for i, label in enumerate(labels):
        mine = [p for p in points if p.label == label]
        ax.scatter([p.intensity for p in mine], [p.attainable_flops for p in mine], s=14,
                   color=cmap(i % 10), label=f"{label} ({len(mine)})", alpha=0.8)
    ax.set_xlabel("arithmetic intensity (useful FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s (speed of light)")
    ax.set_title(title)
    ax.legend(fontsize="small")
    try:
        fig.savefig(path, dpi=120)
    except (OSError, ValueError) as err:
        raise PlotError(f"{path}: cannot write the plot: {err}") from None
