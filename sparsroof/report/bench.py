"""What ``bench`` shows: each measured run beside its bound (and its calibrated
prediction), as a table, JSON or CSV."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from .._version import envelope
from ..host.bench import Measurement
from ..model.timing import describe
from ..units import si
from .document import csv_text, json_text
from .tables import fitted_table, pick

__all__ = ["record", "bench_json", "bench_csv", "bench_table"]


def record(r: Measurement, predicted: dict[str, float]) -> dict[str, Any]:
    """One run as a flat dict of raw SI numbers (with its calibrated prediction, if any)."""
    d = asdict(r)
    d.pop("timing")
    d.pop("method")
    return d | {"median_s": r.median_s, "min_s": r.timing.min_s if r.timing else None,
                "repeats": len(r.timing.samples) if r.timing else 0,
                "calls_per_region": getattr(r.timing, "calls_per_region", 1),
                "timer": getattr(r.timing, "timer", "host clock"),
                "achieved_bytes_per_s": r.achieved_bytes_per_s,
                "achieved_flops": r.achieved_flops, "pct_sol": r.pct_sol,
                "violation": r.violation, "status": r.status, "timing": r.method,
                "calibrated_s": predicted.get(r.storage),
                "calibrated_error": r.error_of(predicted.get(r.storage))}


def bench_json(results: list[Measurement], spec: str, predicted: dict[str, float],
               path: str, spec_file: str | None = None,
               calibration: str | None = None, device: dict[str, Any] | None = None) -> str:
    """The runs with the matrix's path and, where the spec is the user's own YAML file, its
    absolute path, and the calibration whose roofs bounded them, so that ``sparsroof
    compare`` can bound them again as ``bench`` did; with the GPU (``device``: name,
    memory, SMs, L2, driver and runtime versions) where the runs were on one."""
    doc = envelope("bench") | {"spec": spec}
    if device is not None:
        doc["device"] = device
    if spec_file is not None and Path(spec_file).is_file():
        doc["spec_file"] = str(Path(spec_file).resolve())
    if calibration is not None:
        doc["calibration"] = str(Path(calibration).resolve())
    return json_text(doc | {"results": [
        record(r, predicted) | {"path": path} for r in results]})


def bench_csv(results: list[Measurement], predicted: dict[str, float]) -> str:
    return csv_text([record(r, predicted) for r in results], "bench")


#: the columns of the bench table; the default leaves out the backend
BENCH_COLUMNS = ("backend", "d", "format", "median", "best", "GB/s", "GFLOP/s", "SoL", "roof",
                 "% SoL", "calibrated", "error %", "status")


def _cells(r: Measurement, predicted: dict[str, float]) -> list[str]:
    if r.timing is None:
        return [r.backend, str(r.width), r.storage, "-", "-", "-", "-", si(r.sol_s, "s"),
                r.memory_level, "-", "-", "-", f"skipped: {r.skipped}"]
    err = r.error_of(predicted.get(r.storage))
    return [r.backend, str(r.width), r.storage, si(r.timing.median_s, "s"),
            si(r.timing.min_s, "s"), f"{r.achieved_bytes_per_s / 1e9:.3g}",  # type: ignore[operator]
            f"{r.achieved_flops / 1e9:.3g}", si(r.sol_s, "s"), r.memory_level,  # type: ignore[operator]
            f"{r.pct_sol:.1f}",
            si(predicted[r.storage], "s") if r.storage in predicted else "-",
            f"{100 * err:.1f}" if err is not None else "-",
            r.status]


def bench_table(results: list[Measurement], spec: str, predicted: dict[str, float],
                wide: bool = False, where: str = "") -> Any:
    """A table with one row per run, a run faster than its bound flagged; the calibrated
    columns only with a calibration, the backend only when ``wide``; ``where`` names the
    GPU the runs were on (this host when empty)."""
    name = results[0].matrix if results else ""
    shown = set(BENCH_COLUMNS) - ({"calibrated", "error %"} if not predicted else set())
    if not wide:
        shown.discard("backend")
    return fitted_table(BENCH_COLUMNS, [_cells(r, predicted) for r in results],
                        left=("backend", "format", "roof", "status"),
                        title=f"{name}: measured on {where or 'this host'}, bound on {spec}"
                              + (", timed " + ", ".join(dict.fromkeys(
                                  describe(r.method, r.calls_per_sync) for r in results))
                                 if results and where else ""),
                        keep=pick(BENCH_COLUMNS, shown, wide=False))
