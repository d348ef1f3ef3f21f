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

from ._version import __version__
from .analysis import Analysis

__all__ = [
    "SCHEMA_VERSION",
    "OUTPUTS",
    "si",
    "records",
    "to_json",
    "to_csv",
    "to_table",
]

SCHEMA_VERSION = 1
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


def records(analyses: Iterable[Analysis]) -> list[dict[str, Any]]:
    """One flat dict per result row: matrix fields, traffic and bound, raw SI numbers."""
    rows = []
    for a in analyses:
        base = {"matrix": a.matrix.name, "path": a.matrix.path, "spec": a.spec,
                "rows": a.matrix.rows, "cols": a.matrix.cols,
                "stored_entries": a.matrix.stored_entries,
                "numeric_nonzeros": a.matrix.numeric_nonzeros, "density": a.matrix.density}
        for r in a.results:
            t, b = r.traffic, r.bound
            row = dict(base)
            row.update(asdict(t))
            row["bytes_total"] = t.bytes_total
            row["intensity_flop_per_byte"] = t.intensity
            row.update({f"bound_{k}" if k == "unit" else k: v for k, v in asdict(b).items()})
            rows.append(row)
    return rows


def _envelope(kind: str) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "tool": "sparsroof", "version": __version__,
            "kind": kind}


def to_json(analyses: Sequence[Analysis], errors: Sequence[dict[str, str]] = ()) -> str:
    """JSON document: envelope, flops convention, one object per matrix, and errors."""
    doc = _envelope("analyze")
    doc["flops_convention"] = "2 FLOPs (multiply + add) per stored entry per column of B"
    doc["matrices"] = [
        {"matrix": asdict(a.matrix), "spec": a.spec, "device": a.device,
         "structure": a.structure.to_dict(),
         "results": [{"traffic": asdict(r.traffic) | {"bytes_total": r.traffic.bytes_total,
                                                      "intensity": r.traffic.intensity},
                      "bound": asdict(r.bound)} for r in a.results]}
        for a in analyses
    ]
    doc["errors"] = list(errors)
    return json.dumps(doc, indent=2)


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


def to_table(analysis: Analysis) -> Any:
    """A rich Table for one matrix: one row per width x format x model."""
    from rich.table import Table

    m = analysis.matrix
    first = analysis.results[0] if analysis.results else None
    kernel = first.traffic.kernel if first else ""
    title = (f"{m.name}  {m.rows:,} x {m.cols:,}  stored {m.stored_entries:,}  "
             f"nonzero {m.numeric_nonzeros:,}  density {m.density:.3g}  {kernel} on "
             f"{analysis.spec}")
    caption = "FLOPs = 2 per stored entry per column of B (multiply + add)"
    if first:
        b = first.bound
        caption = (f"roofs: {b.unit} {b.precision} {si(b.peak_flops, 'FLOP/s')}, "
                   f"{b.memory_level} {si(b.bandwidth, 'B/s')}.  " + caption)
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for header in ("d", "format", "model", "FLOPs", "A", "B", "C", "total", "AI F/B",
                   "SoL", "bound", "GFLOP/s"):
        left = header in ("format", "model", "bound")
        table.add_column(header, justify="left" if left else "right", no_wrap=True)
    for r in analysis.results:
        t, b = r.traffic, r.bound
        table.add_row(
            str(t.width), t.storage, t.model, si(t.flops_useful, ""),
            si(t.bytes_a, "B"), si(t.bytes_b, "B"), si(t.bytes_c, "B"), si(t.bytes_total, "B"),
            f"{t.intensity:.3g}", si(b.sol_s, "s"), b.bound,
            _plain(b.attainable_flops / 1e9),
        )
    return table
