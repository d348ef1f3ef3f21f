"""Rendering measured runs judged against their bound: a table with a summary, or the same
as JSON (``compare`` envelope) or CSV (one row per run). Raw SI numbers in JSON and CSV."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .._version import envelope
from ..compare.judge import Judged, Summary
from ..compare.runs import RowError
from ..units import counted, si
from .document import csv_text, json_pieces
from .tables import fitted_table

__all__ = ["record", "compare_json", "compare_json_pieces", "compare_csv", "compare_table",
           "summary_lines"]


def record(j: Judged) -> dict[str, Any]:
    """One run as a flat dict of raw SI numbers."""
    b = j.bound
    return {"source": j.run.source, "matrix": j.matrix, "path": j.run.matrix,
            "stored_entries": j.stored_entries, "kernel": j.run.kernel,
            "format": j.run.storage, "implementation": j.run.implementation,
            "d": j.run.width, "dtype": j.run.dtype, "spec": j.spec,
            "measured_s": j.run.time_s, "bound_s": b.sol_s, "pct_sol": j.pct_sol,
            "measured_over_bound": j.ratio, "bound": b.bound, "band": j.band,
            "timing": b.method, "memory_level": b.memory_level, "bytes_total": j.bytes_total,
            "flops_useful": j.flops_useful, "flops_executed": j.flops_executed,
            "compute_s": b.compute_s, "memory_s": b.memory_s, "launch_s": b.launch_s,
            "unit": b.unit, "precision": b.precision, "peak_flops": b.peak_flops,
            "bandwidth": b.bandwidth, "attainable_flops": b.attainable_flops,
            "violation": j.violation, "note": b.note}


def compare_json(judged: Sequence[Judged], summary: Summary,
                 errors: Sequence[RowError], extra: dict[str, Any] | None = None) -> str:
    """The judged runs, their summary, violations and errors (and ``extra`` fields)."""
    return "".join(compare_json_pieces(judged, summary, errors, extra))


def compare_json_pieces(judged: Sequence[Judged], summary: Summary,
                        errors: Sequence[RowError], extra: dict[str, Any] | None = None
                        ) -> Iterator[str]:
    """:func:`compare_json` a piece at a time: each run's record is made as it is written,
    so a file of 200,000 runs never holds its document whole."""
    doc = envelope("compare") | {
        "bound": "optimistic (compulsory traffic of B), launch floor and cache roofs of "
                 "the spec; pct_sol = 100 x bound / measured",
        "runs": (record(j) for j in judged), "summary": summary.to_dict(),
        "violations": (j.explanation() for j in judged if j.violation),
        "errors": [{"source": e.source, "message": e.message} for e in errors
                   if not e.skipped],
        "skipped": [{"source": e.source, "message": e.message} for e in errors
                    if e.skipped]}
    return json_pieces(doc | (extra or {}))


def compare_csv(judged: Sequence[Judged]) -> str:
    """One CSV row per run; rows are made one at a time (a file of a million runs)."""
    if not judged:
        return ""
    return csv_text((record(j) for j in judged), "compare", columns=list(record(judged[0])))


def summary_lines(summary: Summary) -> list[str]:
    """The summary in words: counts, quartiles of % of SoL, tightness per band."""
    q = summary.pct_sol_quartiles
    lines = [f"{counted(summary.count, 'run')} judged, {summary.violations:,} faster than "
             f"their bound (violations), {counted(summary.errors, 'row')} with errors"]
    if q:
        lines.append(f"% of SoL: median {q[1]:.1f}, quartiles {q[0]:.1f} - {q[2]:.1f}")
    for band, (n, ratio) in summary.bands.items():
        if band == "empty":
            lines.append(f"  nothing to compute (no entries): {counted(n, 'run')}, no kernel "
                         "need run")
        elif ratio is not None:
            lines.append(f"  {band}-bound: {counted(n, 'run')}, median measured/bound "
                         f"{ratio:.2f}x")
    return lines


def _one_file(judged: Sequence[Judged]) -> str | None:
    """The file every run was read from, when there is one (its rows then need only the
    part after it)."""
    files = {j.run.source.rpartition(":")[0] for j in judged}
    return files.pop() if len(files) == 1 else None


#: runs a table shows at most: every violation first, then the others in the file's order
#: (the summary, JSON and CSV cover every run)
TABLE_ROWS = 200


def _shown(judged: Sequence[Judged], limit: int) -> list[Judged]:
    """At most ``limit`` runs, every violation first, in the file's order."""
    faster = [i for i, j in enumerate(judged) if j.violation][:limit]
    others = [i for i, j in enumerate(judged) if not j.violation][:limit - len(faster)]
    return [judged[i] for i in sorted(faster + others)]


def compare_table(judged: Sequence[Judged], summary: Summary, title: str,
                  limit: int = TABLE_ROWS) -> Any:
    """A table fitted to the terminal: one row per run, at most ``limit`` of them (every
    violation first); the summary as caption. Runs of one file show their row only, runs
    of one spec name it in the title, and runs timed in several ways say each one's way
    (which sets its bound's launch floor)."""
    caption = summary_lines(summary)
    if len(judged) > limit:
        caption.append(f"the table shows {limit:,} of the {len(judged):,} runs (every "
                       f"violation first); -O csv or -O json lists them all")
        judged = _shown(judged, limit)
    specs = {j.spec for j in judged}
    one_file = _one_file(judged)
    # the column names of analyze's table: SoL the time, bound the term that sets it
    headers = ["row", "matrix", "format", "d", "timing", "spec", "measured", "SoL", "% SoL",
               "bound", "roof", "status"]
    if len(specs) == 1:
        headers.remove("spec")
        title = f"{title}, on {next(iter(specs))}"
    if len({j.bound.method for j in judged}) <= 1:  # each bound is its method's: say which
        headers.remove("timing")
    rows = []
    for j in judged:
        b = j.bound
        row = (j.run.source[len(one_file) + 1:] if one_file
               else j.run.source.rsplit("/", 1)[-1])
        cells = {"row": row, "matrix": j.matrix, "format": j.run.storage,
                 "d": str(j.run.width), "timing": b.method, "spec": j.spec,
                 "measured": si(j.run.time_s, "s"),
                 "SoL": si(b.sol_s, "s"), "% SoL": f"{j.pct_sol:.1f}", "bound": b.bound,
                 "roof": b.memory_level, "status": j.status}
        rows.append([cells[h] for h in headers])
    return fitted_table(headers, rows, title=title, caption="\n".join(caption),
                        left=("row", "matrix", "format", "timing", "spec", "bound", "roof",
                              "status"))
