"""Measured layer times of a pruned network judged against their speed of light (*The
Sparsity Roofline*, section 3.4), rendered as ``sparsroof compare`` renders runs: the
per-layer rows are compare's own judged runs and table, with a per-model table (the sums
over the measured layers) beside them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..compare.judge import Judged
from ..compare.runs import MeasuredRun, RowError
from ..units import si
from ..whatif.layertimes import DENSE, MeasuredLayer, ModelTotal
from .compare import compare_json
from .tables import fitted_table

__all__ = ["judged_layers", "layer_errors", "models_table", "layer_times_json"]


def _kernel_name(m: MeasuredLayer) -> str:
    """'fc (unstructured 75 %)', 'fc (dense)': the layer and what was timed."""
    if m.dense:
        return f"{m.time.layer} ({DENSE})"
    return f"{m.time.layer} ({m.time.pattern} {100 * m.sparsity:.4g} %)"


def judged_layers(measured: Sequence[MeasuredLayer], spec: str) -> list[Judged]:
    """Each measured layer as a run judged against its bound, as ``compare`` judges."""
    judged = []
    for m in measured:
        t = m.traffic
        run = MeasuredRun(m.time.source, m.time.layer, m.time.time_s, t.kernel, t.storage,
                          t.width, t.dtype, spec)
        judged.append(Judged(run, spec, _kernel_name(m), int(t.a_values_stored),
                             t.bytes_total, t.flops_useful, t.flops_executed, m.bound))
    return judged


def layer_errors(errors: Sequence[tuple[str, str]]) -> list[RowError]:
    return [RowError(source, problem) for source, problem in errors]


def _total_dict(t: ModelTotal) -> dict[str, Any]:
    sol, meas = t.speedups if t.speedups else (None, None)
    return asdict(t) | {"pct_sol": t.pct_sol, "speedup_sol": sol, "speedup_measured": meas}


def layer_times_json(judged: Sequence[Judged], summary: Any, errors: Sequence[RowError],
                     totals: Sequence[ModelTotal]) -> str:
    """compare's document with the per-model sums added under ``models``."""
    return compare_json(judged, summary, errors,
                        extra={"models": [_total_dict(t) for t in totals]})


def models_table(totals: Sequence[ModelTotal], title: str) -> Any:
    """A rich Table: per pattern and level the summed SoL and measured times (one model:
    the title names it)."""
    headers = ("pattern", "sparsity", "layers", "SoL", "measured", "% SoL", "x SoL", "x meas.")
    rows = []
    for t in totals:
        sol, meas = t.speedups if t.speedups else (None, None)
        rows.append((t.pattern, "" if t.pattern == DENSE else f"{100 * t.sparsity:.4g} %",
                     str(t.layers), si(t.sol_s, "s"), si(t.measured_s, "s"),
                     f"{t.pct_sol:.1f}", "" if sol is None else f"{sol:.2f}",
                     "" if meas is None else f"{meas:.2f}"))
    return fitted_table(headers, rows, left=("pattern",), title=title, caption=(
        "% SoL = Σ SoL / Σ measured over the measured layers, each counted as often as it "
        "occurs; x SoL, x meas.: speedup over dense at SoL and measured, over the layers "
        "timed both dense and pruned (equal when both reach the same % of SoL)"))
