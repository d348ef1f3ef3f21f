"""What ``bench`` shows: each measured run beside its bound (and its calibrated
prediction), as a table, JSON or CSV."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..host.bench import Measurement
from ..units import si
from .document import csv_text, json_text

__all__ = ["record", "bench_json", "bench_csv", "bench_table"]


def record(r: Measurement, predicted: dict[str, float]) -> dict[str, Any]:
    """One run as a flat dict of raw SI numbers (with its calibrated prediction, if any)."""
    d = asdict(r)
    d.pop("timing")
    return d | {"median_s": r.median_s, "min_s": r.timing.min_s if r.timing else None,
                "repeats": len(r.timing.samples) if r.timing else 0,
                "achieved_bytes_per_s": r.achieved_bytes_per_s,
                "achieved_flops": r.achieved_flops, "sol_share": r.sol_share,
                "beats_bound": r.beats_bound, "calibrated_s": predicted.get(r.storage),
                "calibrated_error": r.error_of(predicted.get(r.storage))}


def bench_json(results: list[Measurement], spec: str, predicted: dict[str, float],
               path: str) -> str:
    """The runs with the matrix's path, so that ``sparsroof compare`` can bound them again."""
    return json_text(envelope("bench") | {"spec": spec, "results": [
        record(r, predicted) | {"path": path} for r in results]})


def bench_csv(results: list[Measurement], predicted: dict[str, float]) -> str:
    return csv_text([record(r, predicted) for r in results], "bench")


def bench_table(results: list[Measurement], spec: str, predicted: dict[str, float]) -> Any:
    """A rich Table: one row per run, a run faster than its bound flagged."""
    from rich.table import Table

    name = results[0].matrix if results else ""
    table = Table(title=f"{name}: measured on this host, bound on {spec}", title_justify="left")
    extra = ("calibrated", "error %") if predicted else ()
    for h in ("backend", "format", "median", "best", "GB/s", "GFLOP/s", "SoL", "roof",
              "% of SoL", *extra, "note"):
        table.add_column(h, justify="left" if h in ("backend", "format", "roof", "note")
                         else "right")
    for r in results:
        if r.timing is None:
            table.add_row(r.backend, r.storage, "-", "-", "-", "-", si(r.sol_s, "s"),
                          r.memory_level, "-", *["-" for _ in extra], f"skipped: {r.skipped}")
            continue
        err = r.error_of(predicted.get(r.storage))
        cells = ((si(predicted[r.storage], "s") if r.storage in predicted else "-",
                  f"{100 * err:.1f}" if err is not None else "-") if predicted else ())
        table.add_row(r.backend, r.storage, si(r.timing.median_s, "s"), si(r.timing.min_s, "s"),
                      f"{r.achieved_bytes_per_s / 1e9:.3g}", f"{r.achieved_flops / 1e9:.3g}",  # type: ignore[operator]
                      si(r.sol_s, "s"), r.memory_level, f"{100 * r.sol_share:.1f}",  # type: ignore[operator]
                      *cells, "FASTER THAN BOUND: model error" if r.beats_bound else "")
    return table
