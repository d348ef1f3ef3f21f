"""The ridgeline of the data-parallel MLP study (``sparsroof whatif --mlp``): one marker
per rank count P on the plane of *Ridgeline: A 2D Roofline Model for Distributed
Systems*, as its case study draws the MLP, from the study in memory or its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import FigureError
from ..model.ridgeline import RankBound
from ..userfile import read_json
from .points import rank_bound
from .ridge import RidgePoint, ridgeline

__all__ = ["mlp_document", "mlp_points", "mlp_ridgeline", "mlp_title", "plot_mlp_document"]


def mlp_document(path: str | Path) -> dict[str, Any] | None:
    """The document at ``path`` when it is the JSON of ``sparsroof whatif --mlp``."""
    source = str(path)
    doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
    return doc if isinstance(doc, dict) and doc.get("kind") == "whatif" and "mlp" in doc \
        else None


def mlp_points(rows: Sequence[RankBound]) -> list[RidgePoint]:
    """The rank counts that move data over the network (P > 1), as ridgeline points."""
    return [RidgePoint(rb.ranks, rb.arithmetic_intensity, rb.memory_intensity, rb.bound)
            for rb in rows if rb.bytes_network > 0]


def mlp_ridgeline(rows: Sequence[RankBound], title: str, path: str | Path, *,
                  size: tuple[float, float] | None = None, dpi: int = 150) -> Path:
    """Draw the rank counts that move data over the network (P > 1) and write ``path``."""
    points = mlp_points(rows)
    if not points:
        raise FigureError(f"{path}: no rank count moves data over the network (use P > 1)")
    first = rows[0]
    return ridgeline(points, first.peak_flops, first.bandwidth, first.network, title, path,
                     size=size or (7.0, 5.5), dpi=dpi)


def mlp_title(layer: dict[str, Any], spec: str) -> str:
    """'MLP 4096 -> 4096, batch 16384 split over P ranks, all-reduce on clx-ridgeline'."""
    return (f"MLP {layer.get('inputs')} -> {layer.get('outputs')}, batch "
            f"{layer.get('batch')} split over P ranks, ring all-reduce, {spec}")


def plot_mlp_document(doc: dict[str, Any], source: str, path: str | Path, *,
                      size: tuple[float, float] | None = None, dpi: int = 150) -> Path:
    """Draw a saved ``whatif --mlp`` JSON document."""
    distributed = doc.get("distributed") or []
    if not isinstance(distributed, list):
        raise FigureError(f"{source}: distributed: expected the rank bounds of "
                          "'sparsroof whatif --mlp'")
    rows = [rank_bound(source, f"distributed[{i}]", r) for i, r in enumerate(distributed)]
    if not rows or not isinstance(doc.get("mlp"), dict):
        raise FigureError(f"{source}: no MLP layer or no rank bounds (write it with "
                          "'sparsroof whatif --mlp ... -O json')")
    for name in ("peak_flops", "bandwidth", "network"):  # the roofs drawn are the first's
        if not getattr(rows[0], name) > 0:
            raise FigureError(f"{source}: distributed[0]: field {name!r} is "
                              f"{getattr(rows[0], name):g}, expected a positive number")
    return mlp_ridgeline(rows, mlp_title(doc["mlp"], str(doc.get("spec", ""))), path,
                         size=size, dpi=dpi)
