"""Rendering results: tables for people, JSON and CSV for programs.

The only place units are formatted. JSON and CSV carry raw SI numbers, the schema
version, the tool version and the spec's name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..analysis import (
    COMPLEX_CONVENTION,
    FLOPS_CONVENTION,
    Analysis,
    Result,
    document,
    records,
)
from ..model.traffic import Traffic
from ..units import plain, si
from .document import csv_text, json_text
from .tables import fitted_table, pick

__all__ = [
    "OUTPUTS",
    "to_json",
    "to_csv",
    "to_table",
    "COLUMNS",
    "CORE_COLUMNS",
    "to_ranks_table",
    "rank_cells",
    "RANK_HEADERS",
    "not_computed",
]

OUTPUTS = ("table", "json", "csv")
#: under the per-rank table: what its terms are
RANKS_NOTE = ("the Ridgeline model of the busiest rank of a row partition balanced by "
              "entries: compute, memory (its device's caches credited, as above: P = 1 is "
              "the single-device CSR bound) and network terms, and its launch floor; F/B_M "
              "= FLOPs per memory byte, B_M/B_N = memory bytes per network byte")


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


def _notes(group: Sequence[Analysis]) -> list[str]:
    """What the bounds leave out, once each: a missing peak, an absent dense baseline."""
    notes: dict[str, None] = {}
    for analysis in group:
        notes |= dict.fromkeys(r.bound.note for r in analysis.results if r.bound.note)
        if any(r.dense_sol_s is None for r in analysis.results):
            notes[f"x dense absent: {analysis.spec} has no peak for the dense GEMM at this "
                  "precision"] = None
    return [f"note: {n}" for n in notes]


def not_computed(analysis: Analysis) -> list[str]:
    """One line per requested model that could not be computed, with the reason
    (storage formats that share a reason are listed together)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for k in analysis.skipped:
        grouped.setdefault((k.model, k.reason), []).append(k.storage)
    # models left out of the same formats for the same reason: one line
    merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (model, reason), storages in grouped.items():
        merged.setdefault((reason, tuple(storages)), []).append(model)
    return [f"not computed: {', '.join(models)} model{'s' if len(models) > 1 else ''} "
            f"({', '.join(storages)}): {reason}"
            for (reason, storages), models in merged.items()]


def _title(group: Sequence[Analysis]) -> str:
    analysis = group[0]
    m = analysis.matrix
    first = analysis.results[0] if analysis.results else None
    kernel = first.traffic.kernel if first else ""
    title = (f"{m.name}  {m.rows:,} x {m.cols:,}  stored {m.stored_entries:,}  "
             f"nonzero {m.numeric_nonzeros:,}  density {m.density:.3g}\n"
             f"{kernel} on {', '.join(a.spec for a in group)}"
             + (f", timed {_method(group, first)}" if first else ""))
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


def _method(group: Sequence[Analysis], first: Result) -> str:
    """How the runs are timed, in words: on CPU specs (no launch floor) the launch
    methods are one and the same, and only a cold run differs from a warm one; a GPU's
    run is named by its method, whether or not its spec gives the floor."""
    if first.bound.timing != "cold" and all(
            a.hw is not None and a.hw.kind == "cpu" and a.hw.launch_overhead is None
            for a in group):
        return "warm (graph, stream and sync alike on a CPU)"
    return first.bound.method


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


#: every column of the analysis table; the default table shows :data:`CORE_COLUMNS`
COLUMNS = ("hw", "d", "format", "model", "roof", "FLOPs", "A", "B", "C", "bytes", "AI",
           "SoL", "bound", "GFLOP/s", "% peak", "x dense")
#: the numbers people came for (in 80 terminal columns, % peak is spared where it alone
#: would fold the table)
CORE_COLUMNS = ("hw", "d", "format", "model", "bytes", "AI", "SoL", "bound", "GFLOP/s",
                "% peak")
_TEXT = ("hw", "format", "model", "roof", "bound")


def _cells(spec: str, r: Result) -> list[str]:
    t, b = r.traffic, r.bound
    # '+': main memory binds but is charged less than the bytes, the caches holding the
    # rest of the working set
    held = not b.in_cache and b.memory_s * b.bandwidth < t.bytes_total * (1 - 1e-9)
    roof = f"{b.unit} {b.precision} / {b.memory_level}{'*' if b.in_cache else '+' if held else ''}"
    share = b.attainable_flops / b.peak_flops if b.peak_flops else None
    return [spec, str(t.width), _format_cell(t), _model_cell(r), roof,
            si(t.flops_executed, ""), si(t.bytes_a, "B"), si(t.bytes_b, "B"),
            si(t.bytes_c, "B"), si(t.bytes_total, "B"), f"{t.intensity:.3g}", si(b.sol_s, "s"),
            b.bound, plain(b.attainable_flops / 1e9),
            "-" if share is None else plain(100 * share),
            "-" if r.speedup_vs_dense is None else f"{r.speedup_vs_dense:.3g}"]


def to_table(analyses: Analysis | Sequence[Analysis], wide: bool = False) -> Any:
    """A rich Table for one matrix: one row per width x format x model, fastest first.

    Given the analyses of one matrix on several specs, one table compares them: a row
    group per spec. The default columns fit the terminal (at 80 columns, a table of
    several specs leaves out % peak rather than fold); ``wide`` shows all.
    """
    group = [analyses] if isinstance(analyses, Analysis) else list(analyses)
    rows: list[list[str]] = []
    sections = []
    for a in group:
        sections.append(len(rows))
        rows += [_cells(a.spec, r) for r in a.results]
    shown = set(COLUMNS if wide else CORE_COLUMNS) - ({"hw"} if len(group) == 1 else set())
    complex_values = any(r.traffic.complex_values for a in group for r in a.results)
    caption = "\n".join([
        COMPLEX_CONVENTION if complex_values else FLOPS_CONVENTION,
        "AI = FLOPs per byte; % peak = share of the compute roof's peak"
        + ("; roof = compute unit / memory level (* the working set fits that cache; + "
           "the caches hold part of it, main memory is charged the rest)"
           if wide else "; --wide: every column"),
        *_notes(group), *(line for a in group for line in not_computed(a))])
    return fitted_table(COLUMNS, rows, left=_TEXT, title=_title(group), caption=caption,
                        keep=pick(COLUMNS, shown, wide=False), sections=sections,
                        spare=() if wide else ("% peak",))


def rank_cells(rb: Any) -> list[str]:
    """The Ridgeline coordinates and times of one rank count's busiest rank, as the
    per-rank tables show them: F/B_M, B_M/B_N, compute, memory, network, SoL, bound."""
    mi = rb.memory_intensity
    return [f"{rb.arithmetic_intensity:.3g}", f"{mi:.3g}" if math.isfinite(mi) else "no network",
            si(rb.compute_s, "s"), si(rb.memory_s, "s"), si(rb.network_s, "s"),
            si(rb.sol_s, "s"), rb.bound]


#: the headers of :func:`rank_cells`
RANK_HEADERS = ("F/B_M", "B_M/B_N", "compute", "memory", "network", "SoL", "bound")


def to_ranks_table(analysis: Analysis) -> Any:
    """Distributed SpMM per rank count: the Ridgeline coordinates and the bound."""
    rows = [[str(rb.width), str(rb.ranks), *rank_cells(rb), f"{rb.imbalance:.2f}"]
            for rb in analysis.distributed]
    return fitted_table(("d", "P", *RANK_HEADERS, "imbalance"), rows, left=("bound",),
                        title=f"{analysis.matrix.name}: 1-D row partition, balanced by entries",
                        caption=RANKS_NOTE)
