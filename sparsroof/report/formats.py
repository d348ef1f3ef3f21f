"""What ``formats`` shows: every storage format's bytes and time, and the best partition
of the rows into strips of formats."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..advisor.partition import Advice, FormatRow
from ..units import si
from .document import json_text

__all__ = ["formats_json", "formats_report"]


def formats_json(name: str, spec: str, rows: list[FormatRow], advice: Advice,
                 calibrated: bool) -> str:
    return json_text(envelope("formats") | {
        "matrix": name, "spec": spec, "prediction": "calibrated" if calibrated else "sol",
        "formats": [asdict(r) for r in rows],
        "partition": asdict(advice) | {"gain": advice.gain}})


def formats_report(name: str, spec: str, rows: list[FormatRow], advice: Advice,
                   calibrated: bool) -> list[Any]:
    """The formats table, the partition's heading, its table and its total, in order."""
    from rich.table import Table

    table = Table(title=f"{name}: SpMV storage formats on {spec}", title_justify="left")
    for h in ("format", "bytes", "useful FLOPs", "executed FLOPs", "SoL", "calibrated"):
        table.add_column(h, justify="left" if h == "format" else "right")
    for r in rows:
        table.add_row(r.storage, si(r.bytes_total, "B"), si(r.flops_useful, ""),
                      si(r.flops_executed, ""), si(r.sol_s, "s"),
                      si(r.calibrated_s, "s") if r.calibrated_s is not None else "-")
    a = advice
    n = a.n_strips
    # printed apart: a table title wraps at the (narrow) table's width
    heading = (f"partition into blocks of strips: {n} strip{'s' if n != 1 else ''} of "
               f"{a.strip_rows} rows, by {'calibrated' if calibrated else 'SoL'} time")
    part = Table()
    for h in ("strips", "rows", "format", "predicted"):
        part.add_column(h, justify="left" if h == "format" else "right")
    for b in a.blocks:
        part.add_row(f"{b.first_strip + 1}-{b.last_strip + 1}", f"{b.first_row}-{b.last_row}",
                     b.storage, si(b.seconds, "s"))
    total = (f"total {si(a.total_s, 's')}; best single format {a.best_single} "
             f"{si(a.best_single_s, 's')}; gain {a.gain:.3f}x")
    return [table, heading, part, total]
