"""Rendering results: tables for people, JSON and CSV for programs.

The only place units are formatted. JSON and CSV carry raw SI numbers, the schema
version, the tool version and the spec's name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..analysis import FLOPS_CONVENTION, Analysis, Result, document, records
from ..model.traffic import Traffic
from ..units import plain, si
from .document import csv_text, json_text

__all__ = [
    "OUTPUTS",
    "to_json",
    "to_csv",
    "to_table",
    "to_ranks_table",
    "not_computed",
]

OUTPUTS = ("table", "json", "csv")


def to_json(analyses: Sequence[Analysis], errors: Sequence[dict[str, str]] = (),
            calibrated: Sequence[dict[str, Any]] | None = None) -> str:
    """The JSON document of :func:`sparsroof.analysis.document`, with the calibrated
    predictions under ``calibrated`` where there are some."""
    doc = document(analyses, errors)
    if calibrated is not None:
        doc["calibrated"] = list(calibrated)
    return json_text(doc)


def to_csv(analyses: Sequence[Analysis]) -> str:
    """One CSV row per result (:func:`sparsroof.analysis.records`)."""
    return csv_text(records(analyses), "analyze")


def _notes(analysis: Analysis) -> str:
    """What the bounds leave out, once each: a missing peak, an absent dense baseline."""
    notes = dict.fromkeys(r.bound.note for r in analysis.results if r.bound.note)
    if any(r.dense_sol_s is None for r in analysis.results):
        notes[f"x dense absent: {analysis.spec} has no peak for the dense GEMM at this "
              "precision"] = None
    return "".join(f"\nnote: {n}" for n in notes)


def _title(analysis: Analysis) -> str:
    m = analysis.matrix
    first = analysis.results[0] if analysis.results else None
    kernel = first.traffic.kernel if first else ""
    title = (f"{m.name}  {m.rows:,} x {m.cols:,}  stored {m.stored_entries:,}  "
             f"nonzero {m.numeric_nonzeros:,}  density {m.density:.3g}  {kernel} on "
             f"{analysis.spec}")
    v = analysis.verdict
    if v is not None:
        params = ", ".join(f"{k}={_short(x)}" for k, x in getattr(v, "params", {}).items())
        title += f"\nclass: {v.label}" + (f" ({params})" if params else "")
        title += f", confidence {v.confidence:.2f}"
        others = [x for x in getattr(v, "traits", ()) if x != v.label]
        if others:
            title += f"; also {', '.join(others)}"
        if getattr(v, "reason", ""):
            title += f"\nwhy: {v.reason}"
    return title


def not_computed(analysis: Analysis) -> list[str]:
    """One line per requested model that could not be computed, with the reason
    (storage formats that share a reason are listed together)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for k in analysis.skipped:
        grouped.setdefault((k.model, k.reason), []).append(k.storage)
    return [f"not computed: {model} model ({', '.join(storages)}): {reason}"
            for (model, reason), storages in grouped.items()]


def _short(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _model_cell(r: Result) -> str:
    t = r.traffic
    label = t.model + (f" ({r.role})" if r.role else "")
    return label


def _format_cell(t: Traffic) -> str:
    detail = t.storage_detail
    if t.conforming is not None and t.conforming < 1.0:
        detail += f", only {t.conforming:.0%} conform"
    return t.storage + (f" {detail}" if detail and not t.storage.startswith("bsr") else "")


def to_table(analysis: Analysis) -> Any:
    """A rich Table for one matrix: one row per width x format x model, fastest first."""
    from rich.table import Table

    caption = "\n".join([FLOPS_CONVENTION + "; roof = compute unit / memory level "
                         "(* the working set fits that cache)" + _notes(analysis),
                         *not_computed(analysis)])
    table = Table(title=_title(analysis), title_justify="left", caption=caption,
                  caption_justify="left")
    for header in ("d", "format", "model", "roof", "FLOPs", "A", "B", "C", "total",
                   "AI F/B", "SoL", "bound", "GFLOP/s", "x dense"):
        left = header in ("format", "model", "roof", "bound")
        table.add_column(header, justify="left" if left else "right", no_wrap=True)
    for r in analysis.results:
        t, b = r.traffic, r.bound
        roof = f"{b.unit} {b.precision} / {b.memory_level}{'*' if b.in_cache else ''}"
        table.add_row(
            str(t.width), _format_cell(t), _model_cell(r), roof, si(t.flops_executed, ""),
            si(t.bytes_a, "B"), si(t.bytes_b, "B"), si(t.bytes_c, "B"), si(t.bytes_total, "B"),
            f"{t.intensity:.3g}", si(b.sol_s, "s"), b.bound,
            plain(b.attainable_flops / 1e9),
            "-" if r.speedup_vs_dense is None else f"{r.speedup_vs_dense:.3g}",
        )
    return table


def to_ranks_table(analysis: Analysis) -> Any:
    """Distributed SpMM per rank count: the Ridgeline coordinates and the bound."""
    from rich.table import Table

    table = Table(title=f"{analysis.matrix.name}: 1-D row partition, balanced by entries",
                  title_justify="left")
    for header in ("d", "P", "F/B_M", "B_M/B_N", "compute", "memory", "network", "SoL",
                   "bound", "imbalance"):
        table.add_column(header, justify="left" if header == "bound" else "right")
    for rb in analysis.distributed:
        mi = rb.memory_intensity
        table.add_row(str(rb.width), str(rb.ranks), f"{rb.arithmetic_intensity:.3g}",
                      f"{mi:.3g}" if math.isfinite(mi) else "no network",
                      si(rb.compute_s, "s"), si(rb.memory_s, "s"), si(rb.network_s, "s"),
                      si(rb.sol_s, "s"), rb.bound, f"{rb.imbalance:.2f}")
    return table
