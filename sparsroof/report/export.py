"""Exporting a result store to CSV, JSON or Parquet (raw SI numbers, one row per result).

Each row joins a result (matrix x spec x kernel x width x storage x model) with its
matrix summary; structure features become ``structure_<name>`` columns in CSV and
Parquet and stay a nested object in JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._version import SCHEMA_VERSIONS, envelope
from ..analysis import FLOPS_CONVENTION
from ..batch.store import Store, json_safe
from ..errors import ExportError
from ..userfile import replaced, write_text_whole
from .document import csv_text, json_text

__all__ = ["EXPORT_SUFFIXES", "check_export", "flat_rows", "export"]

EXPORT_SUFFIXES = (".csv", ".json", ".parquet")



def check_export(path: str | Path) -> None:
    """Fail now, before a long batch, when ``path`` cannot be exported to."""
    path = Path(path)
    if path.suffix not in EXPORT_SUFFIXES:
        raise ExportError(f"{path}: unknown export format; use one of "
                          f"{', '.join(EXPORT_SUFFIXES)}")
    if path.suffix == ".parquet":
        import importlib.util

        if importlib.util.find_spec("pyarrow") is None:
            raise ExportError(f"{path}: Parquet export needs pyarrow: "
                              "pip install 'sparsroof[parquet]' (or export .csv / .json)")


def _flatten(row: dict[str, Any]) -> dict[str, Any]:
    """Structure features as ``structure_<name>`` columns; non-scalars as JSON text.

    >>> _flatten({"matrix": "a", "structure": {"rows": 3, "hist": [1, 2]}})
    {'matrix': 'a', 'structure_rows': 3, 'structure_hist': '[1, 2]'}
    """
    flat = {k: v for k, v in row.items() if k != "structure"}
    for name, value in row.get("structure", {}).items():
        scalar = value is None or isinstance(value, str | int | float | bool)
        flat[f"structure_{name}"] = value if scalar else json.dumps(value)
    return flat


def flat_rows(store: Store) -> list[dict[str, Any]]:
    """Every result row of ``store``, flattened for tabular formats."""
    return [_flatten(row) for row in store.rows()]


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for row in rows for k in row))


def _write_csv(store: Store, path: Path) -> int:
    rows = flat_rows(store)
    write_text_whole(path, csv_text(rows, "batch"), lambda p: ExportError(f"{path}: {p}"))
    return len(rows)


def _write_json(store: Store, path: Path) -> int:
    doc = envelope("batch")
    doc["flops_convention"] = FLOPS_CONVENTION
    doc["rows"] = json_safe(list(store.rows()))
    doc["failures"] = store.failures()
    write_text_whole(path, json_text(doc, indent=1), lambda p: ExportError(f"{path}: {p}"))
    return len(doc["rows"])


def _write_parquet(store: Store, path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = flat_rows(store)
    columns = _columns(rows)
    table = pa.table({c: [row.get(c) for row in rows] for c in columns})
    with replaced(path) as new:  # whole or not at all
        pq.write_table(table.replace_schema_metadata(
            {"schema_version": str(SCHEMA_VERSIONS["batch"]), "tool": "sparsroof"}), new)
    return len(rows)


def export(store: Store, path: str | Path) -> int:
    """Write every result row of ``store`` to ``path`` (format from its suffix).

    Returns the number of rows written.
    """
    path = Path(path)
    check_export(path)
    writers = {".csv": _write_csv, ".json": _write_json, ".parquet": _write_parquet}
    try:
        return writers[path.suffix](store, path)
    except OSError as err:
        raise ExportError(f"{path}: cannot write: {err.strerror or err}") from None
