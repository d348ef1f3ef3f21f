"""Rendering measured runs judged against their bound: a table with a summary, or the same
as JSON (``compare`` envelope) or CSV (one row per run). Raw SI numbers in JSON and CSV."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._version import envelope
from ..compare.judge import Judged, Summary
from ..compare.runs import RowError
from ..units import si
from .document import csv_text, json_text

__all__ = ["record", "compare_json", "compare_csv", "compare_table", "summary_lines"]


def record(j: Judged) -> dict[str, Any]:
    """One run as a flat dict of raw SI numbers."""
    b = j.bound
    return {"source": j.run.source, "matrix": j.matrix, "path": j.run.matrix,
            "stored_entries": j.stored_entries, "kernel": j.run.kernel,
            "format": j.run.storage, "implementation": j.run.implementation,
            "d": j.run.width, "dtype": j.run.dtype, "spec": j.spec,
            "measured_s": j.run.time_s, "bound_s": b.sol_s, "pct_sol": j.pct_sol,
            "measured_over_bound": j.ratio, "bound": b.bound, "band": j.band,
            "memory_level": b.memory_level, "bytes_total": j.bytes_total,
            "flops_useful": j.flops_useful, "flops_executed": j.flops_executed,
            "compute_s": b.compute_s, "memory_s": b.memory_s, "launch_s": b.launch_s,
            "unit": b.unit, "precision": b.precision, "peak_flops": b.peak_flops,
            "bandwidth": b.bandwidth, "attainable_flops": b.attainable_flops,
            "violation": j.violation, "note": b.note}


def compare_json(judged: Sequence[Judged], summary: Summary,
                 errors: Sequence[RowError]) -> str:
    doc = envelope("compare") | {
        "bound": "optimistic (compulsory traffic of B), launch floor and cache roofs of "
                 "the spec; pct_sol = 100 x bound / measured",
        "runs": [record(j) for j in judged], "summary": summary.to_dict(),
        "violations": [j.explanation() for j in judged if j.violation],
        "errors": [{"source": e.source, "message": e.message} for e in errors]}
    return json_text(doc)


def compare_csv(judged: Sequence[Judged]) -> str:
    return csv_text([record(j) for j in judged], "compare")


def summary_lines(summary: Summary) -> list[str]:
    """The summary in words: counts, quartiles of % of SoL, tightness per band."""
    q = summary.pct_sol_quartiles
    lines = [f"{summary.count} runs judged, {summary.violations} faster than their bound "
             f"(violations), {summary.errors} rows with errors"]
    if q:
        lines.append(f"% of SoL: median {q[1]:.1f}, quartiles {q[0]:.1f} - {q[2]:.1f}")
    for band, (n, ratio) in summary.bands.items():
        lines.append(f"  {band}-bound: {n} runs, median measured/bound {ratio:.2f}x")
    return lines


def compare_table(judged: Sequence[Judged], summary: Summary, title: str) -> Any:
    """A rich Table: one row per run; the summary as caption."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", caption="\n".join(summary_lines(summary)),
                  caption_justify="left")
    for header in ("row", "matrix", "format", "d", "spec", "measured", "bound", "% SoL",
                   "bound by", "roof", "status"):
        left = header in ("row", "matrix", "format", "spec", "bound by", "roof", "status")
        table.add_column(header, justify="left" if left else "right", no_wrap=True)
    for j in judged:
        b = j.bound
        table.add_row(j.run.source.rsplit("/", 1)[-1], j.matrix, j.run.storage,
                      str(j.run.width), j.spec, si(j.run.time_s, "s"), si(b.sol_s, "s"),
                      f"{j.pct_sol:.1f}", b.bound, b.memory_level,
                      "VIOLATION" if j.violation else "ok")
    return table
