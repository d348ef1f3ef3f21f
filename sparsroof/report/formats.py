"""What ``formats`` shows: every storage format's bytes and time, and the best partition
of the rows into strips of formats."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..advisor.advice import Advice, FormatRow
from ..units import si
from .document import csv_text, json_text
from .tables import fitted_table

__all__ = ["formats_json", "formats_csv", "formats_report"]


def formats_json(name: str, spec: str, rows: list[FormatRow], advice: Advice) -> str:
    return json_text(envelope("formats") | {
        "matrix": name, "spec": spec, "prediction": advice.route,
        "formats": [asdict(r) for r in rows],
        "partition": asdict(advice) | {"gain": advice.gain, "bytes_total": advice.bytes_total}})


def formats_csv(name: str, spec: str, rows: list[FormatRow]) -> str:
    """One CSV row per storage format (the partition is in the JSON only)."""
    return csv_text([{"matrix": name, "spec": spec} | asdict(r) for r in rows], "formats")


def formats_report(name: str, spec: str, rows: list[FormatRow], advice: Advice
                   ) -> list[Any]:
    """The formats table, the partition's heading, its table and its total, in order."""
    table = fitted_table(
        ("format", "bytes", "useful FLOPs", "executed FLOPs", "SoL", "calibrated"),
        [[r.storage, si(r.bytes_total, "B"), si(r.flops_useful, ""), si(r.flops_executed, ""),
          si(r.sol_s, "s"), si(r.calibrated_s, "s") if r.calibrated_s is not None else "-"]
         for r in rows],
        left=("format",), title=f"{name}: SpMV storage formats on {spec}")
    a = advice
    n = a.n_strips
    by = "calibrated time" if a.route == "calibrated" else "SoL"
    heading = (f"partition into blocks of strips of {a.strip_rows:,} rows ({n:,} "
               f"strip{'s' if n != 1 else ''} here; the last may be shorter), by {by}: "
               f"{', '.join(a.single_s)} priced alike, for blocks and the whole matrix, "
               "as the paper's kernels read them (ELL and HYB read their padding)")
    if a.capped:
        heading += (f"\nblocks of at most {a.max_block:,} strips considered (the search's "
                    f"cap; --max-block {n} considers every block, in time growing with "
                    "its square)")
    part = fitted_table(
        ("strips", "rows", "format", "bytes", "predicted"),
        [[f"{b.first_strip + 1}-{b.last_strip + 1}", f"{b.first_row}-{b.last_row}", b.storage,
          si(b.bytes, "B"), si(b.seconds, "s")] for b in a.blocks], left=("format",))
    total = (f"total {si(a.total_s, 's')}; best single format {a.best_single} "
             f"{si(a.best_single_s, 's')}; gain {a.gain:.3f}x")
    return [table, heading, part, total]
