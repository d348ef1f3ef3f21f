"""Rendering results: tables for people, JSON and CSV for programs.

The only place units are formatted. JSON and CSV carry raw SI numbers, the schema
version, the tool version and the spec's name.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

from .._version import __version__
from ..analysis import Analysis, Result
from ..model.ridgeline import RankBound
from ..model.traffic import Traffic

__all__ = [
    "SCHEMA_VERSION",
    "OUTPUTS",
    "si",
    "records",
    "to_json",
    "to_csv",
    "to_table",
    "to_ranks_table",
]

SCHEMA_VERSION = 1
FLOPS_CONVENTION = "FLOPs = 2 per stored entry per column of B (multiply + add)"
OUTPUTS = ("table", "json", "csv")
_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SMALL = ((1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"))


def si(value: float, unit: str, digits: int = 3) -> str:
    """Format ``value`` with an SI prefix and ``digits`` significant digits.

    >>> si(2.039e12, "B/s")
    '2.04 TB/s'
    >>> si(4.2e-6, "s")
    '4.2 us'
    >>> si(0, "B")
    '0 B'
    """
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    table = _SMALL if abs(value) < 1 and unit == "s" else _PREFIXES
    scale, prefix = next(((s, p) for s, p in table if abs(value) >= s), table[-1])
    return f"{value / scale:.{digits}g} {prefix}{unit}"


def _plain(value: float) -> str:
    """Three significant digits without exponent for table cells.

    >>> _plain(1012.7), _plain(0.0892)
    ('1,013', '0.0892')
    """
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _verdict_dict(a: Analysis) -> dict[str, Any] | None:
    v = a.verdict
    return v.to_dict() if v is not None and hasattr(v, "to_dict") else None


def _structure_dict(a: Analysis) -> dict[str, Any]:
    st = a.structure
    return st.to_dict() if hasattr(st, "to_dict") else asdict(st)


def _result_dict(r: Result) -> dict[str, Any]:
    t = r.traffic
    return {"traffic": asdict(t) | {"bytes_total": t.bytes_total, "intensity": t.intensity},
            "bound": asdict(r.bound), "role": r.role, "dense_sol_s": r.dense_sol_s,
            "speedup_vs_dense": r.speedup_vs_dense}


def _rank_dict(rb: RankBound) -> dict[str, Any]:
    mi = rb.memory_intensity
    return asdict(rb) | {"arithmetic_intensity": rb.arithmetic_intensity,
                         "memory_intensity": mi if math.isfinite(mi) else None}


def records(analyses: Iterable[Analysis]) -> list[dict[str, Any]]:
    """One flat dict per result row: matrix fields, traffic and bound, raw SI numbers."""
    rows = []
    for a in analyses:
        verdict = _verdict_dict(a) or {}
        base = {"matrix": a.matrix.name, "path": a.matrix.path, "spec": a.spec,
                "rows": a.matrix.rows, "cols": a.matrix.cols,
                "stored_entries": a.matrix.stored_entries,
                "numeric_nonzeros": a.matrix.numeric_nonzeros, "density": a.matrix.density,
                "class": verdict.get("label"), "class_confidence": verdict.get("confidence")}
        for r in a.results:
            t, b = r.traffic, r.bound
            row = dict(base)
            row.update(asdict(t))
            row["bytes_total"] = t.bytes_total
            row["intensity_flop_per_byte"] = t.intensity
            row.update({f"bound_{k}" if k == "unit" else k: v for k, v in asdict(b).items()})
            row.update({"role": r.role, "dense_sol_s": r.dense_sol_s,
                        "speedup_vs_dense": r.speedup_vs_dense})
            rows.append(row)
    return rows


def _envelope(kind: str) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "tool": "sparsroof", "version": __version__,
            "kind": kind}


def to_json(analyses: Sequence[Analysis], errors: Sequence[dict[str, str]] = ()) -> str:
    """JSON document: envelope, flops convention, one object per matrix, and errors."""
    doc = _envelope("analyze")
    doc["flops_convention"] = FLOPS_CONVENTION
    doc["matrices"] = [
        {"matrix": asdict(a.matrix), "spec": a.spec, "device": a.device,
         "structure": _structure_dict(a), "class": _verdict_dict(a),
         "results": [_result_dict(r) for r in a.results],
         "distributed": [_rank_dict(rb) for rb in a.distributed]}
        for a in analyses
    ]
    doc["errors"] = list(errors)
    return json.dumps(doc, indent=2, default=_json_default)


def _json_default(value: Any) -> Any:
    """numpy scalars and arrays in structure features."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def to_csv(analyses: Sequence[Analysis]) -> str:
    rows = records(analyses)
    out = io.StringIO()
    if rows:
        fields = ["schema_version", "version", *rows[0]]
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({"schema_version": SCHEMA_VERSION, "version": __version__, **row})
    return out.getvalue()


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
    return title


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

    table = Table(title=_title(analysis), title_justify="left",
                  caption=FLOPS_CONVENTION + "; roof = compute unit / memory level "
                  "(* the working set fits that cache)", caption_justify="left")
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
            _plain(b.attainable_flops / 1e9), f"{r.speedup_vs_dense:.3g}",
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
