"""The structure classes of several matrices: a table with each verdict's reason under it,
or the JSON document with every measured feature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._version import envelope
from ..structure.classify import Verdict
from ..structure.features import Structure
from .document import csv_text, json_text
from .tables import fitted_table

__all__ = ["Classified", "classify_json", "classify_csv", "classify_table"]

#: one matrix's name, path, measured structure and verdict
Classified = tuple[str, str, Structure, Verdict]


def classify_json(results: Sequence[Classified], errors: Sequence[dict[str, str]]) -> str:
    """Every verdict with the features it was decided on, and the files that failed."""
    doc = envelope("classify")
    doc["matrices"] = [{"matrix": name, "path": path, "verdict": v.to_dict(),
                        "features": s.to_dict()} for name, path, s, v in results]
    doc["errors"] = list(errors)
    return json_text(doc)


def classify_csv(results: Sequence[Classified]) -> str:
    """One row per matrix: its verdict (class, confidence, traits and parameters as
    ``k=v`` joined by ``;``, the reason) and every measured feature that is one number;
    the features that are lists and tables are in the JSON only."""
    rows = []
    for name, path, s, v in results:
        row: dict[str, Any] = {
            "matrix": name, "path": path, "class": v.label,
            "confidence": v.confidence,
            "traits": ";".join(x for x in v.traits if x != v.label),
            "params": ";".join(f"{k}={x}" for k, x in v.params.items()),
            "reason": v.reason}
        row |= {k: x for k, x in s.to_dict().items()
                if x is None or isinstance(x, (int, float, str))}
        rows.append(row)
    return csv_text(rows, "classify")


def _short(x: object) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def classify_table(results: Sequence[Classified]) -> Any:
    """One row per matrix; each verdict's reason under the table (a sentence: at the
    terminal's width, not in a column)."""
    headers = ("matrix", "rows x cols", "entries", "class", "conf", "traits", "params")
    rows = []
    for name, _, s, v in results:
        params = ", ".join(f"{k}={_short(x)}" for k, x in v.params.items())
        others = ", ".join(x for x in v.traits if x != v.label)
        rows.append([name, f"{s.rows:,} x {s.cols:,}", f"{s.stored_entries:,}", v.label,
                     f"{v.confidence:.2f}", others, params])
    why = "\n".join(f"why {name}: {v.reason}" for name, _, _, v in results)
    # a traits column without a trait in it is left out: it would only take room
    keep = [i for i, h in enumerate(headers) if h != "traits" or any(r[i] for r in rows)]
    return fitted_table(headers, rows,
                        title="structure classes (from the pattern only, never file comments)",
                        left=("matrix", "class", "traits", "params"), caption=why, keep=keep)
