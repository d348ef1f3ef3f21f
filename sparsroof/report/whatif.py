"""Rendering what-if studies: a table for people, JSON and CSV for programs.

CSV and JSON points carry the columns of a Sparsity Roofline figure (pattern, sparsity as
a fraction, speedup, accuracy), so the output can be drawn as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..analysis import FLOPS_CONVENTION
from ..units import si
from ..whatif.placement import Options
from ..whatif.study import LayerResult, ModelResult
from .document import csv_text, json_text
from .tables import fitted_table

__all__ = ["POINT_FIELDS", "points", "to_json", "to_csv", "to_table", "to_layer_table"]

POINT_FIELDS = ("pattern", "sparsity", "speedup", "accuracy")
_TABLE_NOTE = ("dense, sparse: the model's SoL, dense and pruned; B+C: the share of bytes "
               "that are features (B) and outputs (C); mem-bound: layers bound by memory")
_NOTE = (FLOPS_CONVENTION + " (The Sparsity Roofline counts nnz·n); SoL per layer = "
         "max(F_exec / peak, bytes / bandwidth), model = sum over layers")


def _summary(r: ModelResult) -> dict[str, Any]:
    return {"pattern": r.pattern, "sparsity": r.sparsity, "speedup": r.speedup,
            "accuracy": r.accuracy, "model": r.model, "spec": r.spec,
            "dense_sol_s": r.dense_s, "sparse_sol_s": r.sparse_s,
            "feature_share_dense": r.feature_share_dense,
            "feature_share_sparse": r.feature_share_sparse,
            "layers": r.layer_count, "memory_bound_layers": r.memory_bound_layers,
            "launch_bound_layers": r.launch_bound_layers,
            "flops_useful": r.flops_useful, "dense_flops": r.dense_flops}


def points(results: Sequence[ModelResult]) -> list[dict[str, Any]]:
    """One row per (pattern, sparsity): the figure's four columns first, then the sums."""
    return [_summary(r) for r in results]


def _layer_dict(r: LayerResult) -> dict[str, Any]:
    k = r.placement
    return {"layer": r.layer, "count": r.count, "storage": k.storage, "detail": k.detail,
            "source": k.source, "unit": k.unit, "precision": k.precision,
            "dense_sol_s": r.dense_s, "sparse_sol_s": r.sparse_s, "speedup": r.speedup,
            "feature_share_dense": r.feature_share_dense,
            "feature_share_sparse": r.feature_share_sparse,
            "dense": {"traffic": asdict(r.dense_traffic), "bound": asdict(r.dense)},
            "sparse": {"traffic": asdict(r.sparse_traffic), "bound": asdict(r.sparse)}}


def to_json(results: Sequence[ModelResult], options: Options, *, layers: bool = True) -> str:
    """Envelope, options, and {"points": [...]} (each with its layers unless ``layers``
    is False)."""
    doc = envelope("whatif") | {"flops_convention": FLOPS_CONVENTION,
                                "options": asdict(options)}
    doc["points"] = [_summary(r) | ({"layer_results": [_layer_dict(x) for x in r.layers]}
                                    if layers else {}) for r in results]
    return json_text(doc)


def to_csv(results: Sequence[ModelResult]) -> str:
    """One row per (pattern, sparsity); accuracy is empty where unknown."""
    return csv_text(points(results), "whatif")


def _unit_cell(r: ModelResult) -> str:
    used = {(x.placement.detail, x.placement.unit) for x in r.layers
            if x.placement.storage != "dense"}
    if len(used) == 1:
        detail, unit = used.pop()
        return f"{detail} / {unit}"
    return "mixed"


def to_table(results: Sequence[ModelResult], title: str) -> Any:
    """A table fitted to the terminal: one row per pattern and sparsity level (the
    accuracy column only where some row has one)."""
    headers = ["pattern", "sparsity", "kernel / unit", "dense", "sparse", "speedup",
               "B+C dense", "B+C sparse", "mem-bound", "accuracy"]
    if all(r.accuracy is None for r in results):
        headers.remove("accuracy")
    rows = []
    for r in results:
        cells = {"pattern": r.pattern, "sparsity": f"{100 * r.sparsity:.4g} %",
                 "kernel / unit": _unit_cell(r), "dense": si(r.dense_s, "s"),
                 "sparse": si(r.sparse_s, "s"), "speedup": f"{r.speedup:.3f}x",
                 "B+C dense": f"{r.feature_share_dense:.1%}",
                 "B+C sparse": f"{r.feature_share_sparse:.1%}",
                 "mem-bound": f"{r.memory_bound_layers}/{r.layer_count}",
                 "accuracy": "" if r.accuracy is None else f"{r.accuracy:g}"}
        rows.append([cells[h] for h in headers])
    caption = _TABLE_NOTE
    held = max((r.launch_bound_layers for r in results), default=0)
    if held:
        n = results[0].layer_count
        caption += (f"\nthe launch floor binds the pruned kernels of up to {held} of {n} "
                    "layers: pruning cannot speed those up (--launches 0 leaves the "
                    "launch out)")
    return fitted_table(headers, rows, title=title, caption=caption,
                        left=("pattern", "kernel / unit"))


def to_layer_table(r: ModelResult) -> Any:
    """Per-layer detail of one (pattern, sparsity), fitted to the terminal; the kernel and
    unit are the same for most layers, so the title names the common one and a row names
    its own only where it differs."""
    common = _unit_cell(r)
    headers = ["layer", "x", "weights", "n", "kernel / unit", "dense SoL", "dense bound",
               "sparse SoL", "sparse bound", "speedup", "B+C sparse"]
    rows = []
    for x in r.layers:
        t = x.sparse_traffic
        kernel = f"{x.placement.detail} / {x.placement.unit}"
        rows.append([x.layer, str(x.count), f"{x.dense_traffic.a_values_stored:,.0f}",
                     str(t.width), "" if kernel == common else kernel,
                     si(x.dense.sol_s, "s"), x.dense.bound, si(x.sparse.sol_s, "s"),
                     x.sparse.bound, f"{x.speedup:.2f}x", f"{x.feature_share_sparse:.0%}"])
    keep = [i for i, h in enumerate(headers)
            if h != "kernel / unit" or any(row[i] for row in rows)]
    title = f"{r.model} {r.pattern} at {100 * r.sparsity:.4g} % on {r.spec}" + (
        f": {common}" if common != "mixed" else "")
    return fitted_table(headers, rows, title=title, keep=keep,
                        left=("layer", "kernel / unit", "dense bound", "sparse bound"))
