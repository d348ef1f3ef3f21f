"""Rendering the data-parallel MLP study (the Ridgeline case study): a table per rank
count for people, JSON for programs and for ``sparsroof plot ridgeline``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..analysis.results import rank_bound_dict
from ..model.ridgeline import RankBound
from ..whatif.mlp import MlpLayer
from .analysis import RANK_HEADERS, rank_cells
from .document import json_text
from .tables import fitted_table

__all__ = ["MLP_FORMULAS", "mlp_json", "mlp_table"]

MLP_FORMULAS = ("per rank, b = ceil(B/P) samples: F = 3 GEMMs x 2·b·K·M; B_M = s_v·(2·K·M + "
                "2·b·K + 2·b·M), each tensor of the step moved once; B_N = 2(P-1)/P · "
                "s_v·(K·M + M), a ring all-reduce of the weight and bias gradients")


def _title(layer: MlpLayer, spec: str, dtype: str, unit: str, precision: str) -> str:
    """The layer, the spec and what bounds its compute: fp32 values on tensor cores run
    at their tf32 peak, and the title says so.

    >>> _title(MlpLayer(4, 8, 16), "a100-80gb", "fp32", "tensor", "tf32")
    'MLP layer 4 -> 8, global batch 16, data parallel on a100-80gb (fp32, at the tensor tf32 peak)'
    """
    return (f"MLP layer {layer.inputs} -> {layer.outputs}, global batch {layer.batch}, "
            f"data parallel on {spec} ({dtype}, at the {unit} {precision} peak)")


def mlp_json(layer: MlpLayer, spec: str, unit: str, precision: str, dtype: str,
             rows: Sequence[RankBound]) -> str:
    """The envelope, the layer, and one rank bound per P (raw SI numbers)."""
    doc = envelope("whatif") | {
        "mlp": asdict(layer) | {"dtype": dtype}, "spec": spec, "unit": unit,
        "precision": precision, "formulas": MLP_FORMULAS,
        "distributed": [rank_bound_dict(rb) | {"batch_per_rank": rb.width} for rb in rows]}
    return json_text(doc)


def mlp_table(layer: MlpLayer, spec: str, dtype: str, rows: Sequence[RankBound],
              unit: str, precision: str) -> Any:
    """A table: per P the samples per rank, the Ridgeline coordinates, the three times of
    the busiest rank, the SoL and the resource that binds."""
    return fitted_table(("P", "b/rank", *RANK_HEADERS),
                        [[str(rb.ranks), str(rb.width), *rank_cells(rb)] for rb in rows],
                        left=("bound",), title=_title(layer, spec, dtype, unit, precision),
                        caption=MLP_FORMULAS)
