"""Rendering the data-parallel MLP study (the Ridgeline case study): a table per rank
count for people, JSON for programs and for ``sparsroof plot ridgeline``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..analysis.results import rank_bound_dict
from ..model.mlp import MlpLayer
from ..model.ridgeline import RankBound
from ..units import si
from .document import json_text

__all__ = ["MLP_FORMULAS", "mlp_json", "mlp_table"]

MLP_FORMULAS = ("per rank, b = ceil(B/P) samples: F = 3 GEMMs x 2·b·K·M; B_M = s_v·(2·K·M + "
                "2·b·K + 2·b·M), each tensor of the step moved once; B_N = 2(P-1)/P · "
                "s_v·(K·M + M), a ring all-reduce of the weight and bias gradients")


def _title(layer: MlpLayer, spec: str, dtype: str) -> str:
    return (f"MLP layer {layer.inputs} -> {layer.outputs}, global batch {layer.batch}, "
            f"data parallel on {spec} ({dtype})")


def mlp_json(layer: MlpLayer, spec: str, unit: str, precision: str, dtype: str,
             rows: Sequence[RankBound]) -> str:
    """The envelope, the layer, and one rank bound per P (raw SI numbers)."""
    doc = envelope("whatif") | {
        "mlp": asdict(layer) | {"dtype": dtype}, "spec": spec, "unit": unit,
        "precision": precision, "formulas": MLP_FORMULAS,
        "distributed": [rank_bound_dict(rb) | {"batch_per_rank": rb.width} for rb in rows]}
    return json_text(doc)


def mlp_table(layer: MlpLayer, spec: str, dtype: str, rows: Sequence[RankBound]) -> Any:
    """A rich Table: per P the samples per rank, the Ridgeline coordinates, the three
    times of the busiest rank, the SoL and the resource that binds."""
    from rich.table import Table

    table = Table(title=_title(layer, spec, dtype), title_justify="left",
                  caption=MLP_FORMULAS, caption_justify="left")
    for header in ("P", "b/rank", "F/B_M", "B_M/B_N", "compute", "memory", "network", "SoL",
                   "bound"):
        table.add_column(header, justify="left" if header == "bound" else "right")
    for rb in rows:
        mi = rb.memory_intensity
        table.add_row(str(rb.ranks), str(rb.width), f"{rb.arithmetic_intensity:.3g}",
                      f"{mi:.3g}" if math.isfinite(mi) else "no network",
                      si(rb.compute_s, "s"), si(rb.memory_s, "s"), si(rb.network_s, "s"),
                      si(rb.sol_s, "s"), rb.bound)
    return table
