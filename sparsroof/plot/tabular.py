"""Roofline points from tables of results: the CSV of ``sparsroof analyze -O csv`` and the
exports of ``sparsroof batch ... --export`` (CSV, Parquet, or the JSON of its rows), so
that a whole batch sweep can be drawn.

Every row is one (matrix, spec, kernel, width, format, model) result with flat columns of
raw SI numbers. Columns are read by name and others are ignored; a missing column, an
empty cell, a word where a number belongs, a non-finite or negative number is a one-line
error naming the file and the row (the numbers are checked by
:func:`~sparsroof.userfile.finite_numbers`, as every user file's are). Parquet needs
pyarrow (``pip install 'sparsroof[parquet]'``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import FigureError
from ..userfile import finite_numbers, iter_csv

__all__ = ["TABLE_SUFFIXES", "read_table", "table_points"]

TABLE_SUFFIXES = (".csv", ".parquet")

#: roofline point field -> the column that holds it, as analyze and the batch export name them
_TEXT = {"matrix": "matrix", "kernel": "kernel", "storage": "storage", "model": "model",
         "unit": "bound_unit", "precision": "precision", "bound": "bound",
         "memory_level": "memory_level"}
_NUMBER = {"intensity": "intensity_flop_per_byte", "attainable_flops": "attainable_flops",
           "flops_useful": "flops_useful", "flops_executed": "flops_executed",
           "bytes_total": "bytes_total", "compute_s": "compute_s", "memory_s": "memory_s",
           "launch_s": "launch_s", "sol_s": "sol_s", "peak_flops": "peak_flops",
           "bandwidth": "bandwidth"}
_COLUMNS = (*_TEXT.values(), "width", *_NUMBER.values())


def _text(value: Any, column: str, required: bool) -> str:
    text = "" if value is None else str(value).strip()
    if required and not text:
        raise ValueError(f"column {column!r} is empty")
    return text


Fields = dict[str, Any]  # the fields of a plot.points.RoofPoint


def _point(row: dict[str, Any], from_text: bool) -> tuple[Fields, str]:
    """One row as the fields of a roofline point and the spec it was bounded on; every
    number checked by :func:`~sparsroof.userfile.finite_numbers` (``from_text`` for the
    text cells of a CSV file), the problem naming the column."""
    numbers = finite_numbers(row, ("width", *_NUMBER.values()), ValueError, minimum=0,
                             from_text=from_text, integers=("width",))
    if numbers["width"] < 1:
        raise ValueError("field 'width' is 0, expected a positive whole number")
    values: Fields = {f: _text(row[c], c, f in ("matrix", "kernel", "storage", "model"))
                      for f, c in _TEXT.items()}
    ordering = _text(row.get("ordering"), "ordering", False)
    if ordering and ordering != "original":  # analyze --reorder: each ordering its own matrix
        values["matrix"] = f"{values['matrix']} ({ordering})"
    values |= {f: numbers[c] for f, c in _NUMBER.items()}
    values["width"] = numbers["width"]
    values["role"] = _text(row.get("role"), "role", False)
    return values, _text(row.get("spec"), "spec", False)


#: a row of a table of results: where it is ("file.csv:3", "file.parquet: row 3"), its
#: cells, and whether they are text to be parsed (CSV)
Row = tuple[str, dict[str, Any], bool]


def table_points(source: str, rows: Iterable[Row]) -> list[tuple[Fields, str, str]]:
    """(point fields, spec, where) per row, ``where`` naming the row for messages."""
    out = []
    for where, row, from_text in rows:
        try:
            out.append((*_point(row, from_text), where))
        except ValueError as err:
            raise FigureError(f"{where}: {err}") from None
    if not out:
        raise FigureError(f"{source}: no results to plot")
    return out


def _check_columns(source: str, columns: Iterable[str]) -> None:
    missing = [c for c in _COLUMNS if c not in set(columns)]
    if missing:
        raise FigureError(f"{source}: missing column{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)} (expected the CSV of 'sparsroof analyze -O "
                          "csv' or an export of 'sparsroof batch --export')")


def _csv_rows(path: Path) -> Iterator[Row]:
    """The rows of a CSV table, read one at a time (an export of a whole collection)."""
    with iter_csv(path, lambda problem: FigureError(f"{path}: {problem}")) as table:
        _check_columns(str(path), table.header)
        for line, row in table:
            yield f"{path}:{line}", row, True


def _parquet_rows(path: Path) -> Iterator[Row]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise FigureError(f"{path}: reading Parquet needs pyarrow: pip install "
                          "'sparsroof[parquet]' (or export .csv)") from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise FigureError(f"{path}: not a Parquet table ({err})") from None
    _check_columns(str(path), table.column_names)
    for i, row in enumerate(table.select(list(_COLUMNS) + [
            c for c in ("spec", "ordering", "role") if c in table.column_names]
            ).to_pylist(), 1):
        yield f"{path}: row {i}", row, False


def json_rows(source: str, rows: Any) -> Iterator[Row]:
    """The rows of a batch JSON export (``batch --export FILE.json``)."""
    if not isinstance(rows, list):
        raise FigureError(f"{source}: 'rows' is not a list")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise FigureError(f"{source}: rows[{i}]: expected an object")
        _check_columns(f"{source}: rows[{i}]", row)
        yield f"{source}: rows[{i}]", row, False


def read_table(path: str | Path) -> list[tuple[Fields, str, str]]:
    """(point fields, spec, where) of every row of a CSV or Parquet table of results at ``path``."""
    path = Path(path)
    if not os.path.isfile(path):
        raise FigureError(f"{path}: no such file")
    rows = _parquet_rows(path) if path.suffix.lower() == ".parquet" else _csv_rows(path)
    return table_points(str(path), rows)
