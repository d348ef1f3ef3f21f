"""The summary of a batch result store: its tables (counts by class, by bound and by
failure, the failed files, the matrices furthest from and closest to the compute roof) or
the same as one JSON document."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..batch.summary import MatrixPoint, StoreSummary
from ..units import plain, si
from .document import json_text
from .tables import fitted_table

__all__ = ["SHOWN_FAILURES", "store_tables", "store_json"]

#: failed files listed by name in the table (all of them in the JSON)
SHOWN_FAILURES = 20


def _table(title: str, headers: tuple[str, ...], rows: list[tuple[Any, ...]],
           keys: tuple[str, ...] | None = None) -> Any:
    numbers = ("n", "d", "AI F/B", "attainable", "of peak")
    return fitted_table(headers, [[str(c) for c in row] for row in rows], title=title,
                        left=[h for h in headers if h not in numbers], keys=keys)


def _failed_files(failures: list[dict[str, Any]]) -> Any:
    rows = [(f["path"] + (f":{f['member']}" if f["member"] else ""), f["kind"], f["reason"])
            for f in failures[:SHOWN_FAILURES]]
    more = len(failures) - SHOWN_FAILURES
    title = "failed files" + (f" (first {SHOWN_FAILURES}; {more} more with -O json)"
                               if more > 0 else "")
    return _table(title, ("file", "kind", "reason"), rows)


def _points_rows(points: list[MatrixPoint]) -> list[tuple[Any, ...]]:
    return [(p.name, p.label, p.spec, p.kernel, p.width, p.storage, p.model,
             f"{p.intensity:.3g}", si(p.attainable_flops, "FLOP/s"),
             f"{plain(100 * p.roof_fraction)}%", p.bound) for p in points]


def store_tables(s: StoreSummary, failures: list[dict[str, Any]]) -> list[Any]:
    """What ``report`` prints, in order: a line of counts, then the tables."""
    shown: list[Any] = [f"{s.matrices} matrices analysed, {s.failed} failed",
                        _table("matrices by class", ("class", "n"), list(s.by_class)),
                        _table("results by bound", ("spec", "kernel", "d", "format", "model",
                                                    "bound", "n"), list(s.by_bound))]
    if s.by_failure:
        shown += [_table("failures", ("kind", "reason", "n"), list(s.by_failure)),
                  _failed_files(failures)]
    heads = ("matrix", "class", "spec", "kernel", "d", "format", "model", "AI F/B",
             "attainable", "of peak", "bound")
    note = (" (best row of each matrix on each spec in each batch run; of peak = "
            "attainable / peak FLOP/s)")
    keys = ("matrix", "spec")  # a row is the best of one matrix on one spec
    ranked = [_table("furthest from the compute roof" + note, heads, _points_rows(s.furthest),
                     keys),
              _table("closest to the compute roof" + note, heads, _points_rows(s.closest),
                     keys)]
    if s.no_work:
        ranked.append(f"not ranked, with no work to do (no entries): {', '.join(s.no_work)}")
    return [*shown, *ranked]


def store_json(s: StoreSummary, failures: list[dict[str, Any]]) -> str:
    """The summary as the ``report`` JSON document (every failed file listed)."""
    doc = envelope("report")
    doc["roof_fraction"] = ("attainable / peak FLOP/s of the best row of each matrix on "
                            "each spec in each batch run")
    doc.update({
        "matrices": s.matrices, "failed": s.failed,
        "by_class": [{"class": c, "matrices": n} for c, n in s.by_class],
        "by_bound": [dict(zip(("spec", "kernel", "width", "storage", "model", "bound",
                               "results"), r, strict=True)) for r in s.by_bound],
        "failures": [{"kind": k, "reason": r, "matrices": n} for k, r, n in s.by_failure],
        "failed_files": failures,
        "furthest": [asdict(p) | {"roof_fraction": p.roof_fraction} for p in s.furthest],
        "closest": [asdict(p) | {"roof_fraction": p.roof_fraction} for p in s.closest],
        "not_ranked": s.no_work,
    })
    return json_text(doc)
