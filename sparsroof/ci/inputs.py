"""Files a budget check reads besides the budget: measured results and baselines.

Measured results are JSON (a list of objects, or an object with a ``results`` list) or
CSV, with exactly the fields ``matrix``, ``kernel``, ``width`` and ``seconds``::

    matrix,kernel,width,seconds
    lap2d_64,spmv,1,2.1e-05

``matrix`` is the matrix's name or path (``data/lap2d_64.mtx`` and ``lap2d_64`` match the
same file); ``seconds`` is a number of seconds or a time with its unit ("21 us").

The JSON of ``sparsroof bench -O json`` (a host's or a GPU's runs) is read as well: each
run's fastest repetition (``min_s``) with its format, precision and timing method, so a
check finds the run of its own storage and dtype, timed as the check says its runs are.

A baseline is the JSON that ``sparsroof check --write-baseline`` writes: one entry per
check, matrix and width with the configuration it was modelled with and its values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._version import SCHEMA_VERSIONS
from ..analysis.config import MAX_WIDTH
from ..errors import BudgetError, UnitError
from ..units import parse_quantity
from ..userfile import (
    LARGEST,
    FieldError,
    number,
    read_csv,
    read_json,
    read_text,
    shown,
    whole_number,
)

__all__ = [
    "BASELINE_SCHEMA",
    "BASELINE_CONFIG",
    "BASELINE_VALUES",
    "MEASURED_FIELDS",
    "matrix_key",
    "bench_key",
    "load_measured",
    "load_baseline",
]

MEASURED_FIELDS = ("matrix", "kernel", "width", "seconds")
BASELINE_SCHEMA = SCHEMA_VERSIONS["baseline"]
#: what an entry was modelled with; a change means the baseline no longer applies
BASELINE_CONFIG = ("spec", "kernel", "dtype", "index", "storage", "model", "unit")
#: the values compared against the current run
BASELINE_VALUES = ("sol_s", "bytes_total")

#: (matrix, kernel, width), or for a bench run (matrix, kernel, width, storage, dtype,
#: timing, calls per synchronisation)
Key = tuple[Any, ...]


def matrix_key(text: str) -> str:
    """The name a matrix is matched by: its file name without the matrix suffix.

    >>> matrix_key("data/lap2d_64.mtx.gz"), matrix_key("lap2d_64")
    ('lap2d_64', 'lap2d_64')
    """
    name = Path(text).name
    for suffix in (".mtx.gz", ".smtx", ".mtx"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _read(path: str | Path) -> str:
    return read_text(path, lambda problem: BudgetError(path, problem))


def _seconds(value: object) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return parse_quantity(value, "time")
    try:
        return number(value, "seconds", positive=True, maximum=LARGEST)
    except FieldError:
        raise UnitError(f"{shown(value)} is not a positive number of seconds") from None


def _width(value: object) -> int:
    try:
        return whole_number(value, "width", from_text=isinstance(value, str),
                            maximum=MAX_WIDTH)
    except FieldError:
        raise ValueError(f"width {shown(value)} is not a whole number from 1 to "
                         f"{MAX_WIDTH:,}") from None


def _measured_row(row: object) -> tuple[Key, float]:
    if not isinstance(row, dict):
        raise ValueError(f"expected an object with {', '.join(MEASURED_FIELDS)}")
    unknown = [k for k in row if k not in MEASURED_FIELDS]
    if unknown:
        raise ValueError(f"unknown field {shown(unknown[0])} (expected "
                         f"{', '.join(MEASURED_FIELDS)})")
    missing = [k for k in MEASURED_FIELDS if row.get(k) in (None, "")]
    if missing:
        raise ValueError(f"missing {missing[0]!r}")
    if not isinstance(row["matrix"], str) or not isinstance(row["kernel"], str):
        raise ValueError("'matrix' and 'kernel' must be text")
    key = (matrix_key(row["matrix"]), row["kernel"], _width(row["width"]))
    return key, _seconds(row["seconds"])


def bench_key(matrix: str, kernel: str, width: int, storage: str, dtype: str, timing: str,
              calls_per_sync: int) -> Key:
    """The key of a bench run's time: what was run, and how it was timed.

    >>> bench_key("data/lap2d_64.mtx", "spmv", 1, "csr", "fp64", "stream", 8)
    ('lap2d_64', 'spmv', 1, 'csr', 'fp64', 'stream', 1)
    """
    return (matrix_key(matrix), kernel, width, storage, dtype, timing,
            calls_per_sync if timing == "sync" else 1)


def _bench_row(row: object) -> tuple[Key, float] | None:
    """A ``bench -O json`` result as (key, fastest seconds); None for a skipped kernel."""
    if not isinstance(row, dict):
        raise ValueError("expected an object")
    if row.get("min_s") is None:
        return None
    texts = {k: row.get(k) for k in ("kernel", "storage", "dtype")}
    for k, v in texts.items():
        if not isinstance(v, str):
            raise ValueError(f"{k!r} must be text")
    matrix = row.get("path") or row.get("matrix")
    if not isinstance(matrix, str) or not matrix:
        raise ValueError("no matrix path or name")
    timing = row.get("timing") or "stream"
    if not isinstance(timing, str):
        raise ValueError("'timing' must be text")
    per_sync = row.get("calls_per_sync") or 1
    return (bench_key(matrix, str(texts["kernel"]), _width(row.get("width")),
                      str(texts["storage"]), str(texts["dtype"]), timing, _width(per_sync)),
            _seconds(row["min_s"]))


def _bench_document(path: str | Path, rows: list[Any]) -> dict[Key, float]:
    table: dict[Key, float] = {}
    for i, row in enumerate(rows):
        try:
            found = _bench_row(row)
        except (UnitError, ValueError) as err:
            raise BudgetError(path, str(err), key=f"results[{i}]") from None
        if found is None:
            continue
        key, seconds = found
        if key in table:
            raise BudgetError(path, f"a second run of matrix {shown(key[0])}, {key[3]} "
                              f"{key[4]} d={key[2]} timed {key[5]}", key=f"results[{i}]")
        table[key] = seconds
    return table


def _measured_rows(path: str | Path) -> list[tuple[str, object]]:
    """(where, row) pairs from a JSON or CSV file; ``where`` names the row in messages."""
    if str(path).endswith(".json"):
        doc = read_json(path, lambda problem: BudgetError(path, problem))
        rows = doc.get("results") if isinstance(doc, dict) else doc
        if not isinstance(rows, list):
            raise BudgetError(path, "expected a list of results (or an object with 'results')")
        return [(f"results[{i}]", row) for i, row in enumerate(rows)]
    if str(path).endswith(".csv"):
        header, table = read_csv(path, lambda problem: BudgetError(path, problem))
        if not header:
            raise BudgetError(path, f"empty CSV: expected a header {','.join(MEASURED_FIELDS)}")
        rows_csv: list[tuple[str, object]] = []
        for line, row in table:
            if None in row:
                raise BudgetError(path, "more cells than header fields", key=f"line {line}")
            rows_csv.append((f"line {line}", row))
        return rows_csv
    raise BudgetError(path, "measured results must be a .json or .csv file")


def load_measured(path: str | Path) -> dict[Key, float]:
    """Measured seconds by (matrix name, kernel, width) from a JSON or CSV file, or by
    :func:`bench_key` from the JSON of ``sparsroof bench``."""
    if str(path).endswith(".json"):
        doc = read_json(path, lambda problem: BudgetError(path, problem))
        if isinstance(doc, dict) and doc.get("kind") == "bench":
            rows = doc.get("results")
            if not isinstance(rows, list):
                raise BudgetError(path, "expected a list", key="results")
            return _bench_document(path, rows)
    table: dict[Key, float] = {}
    for where, row in _measured_rows(path):
        try:
            key, seconds = _measured_row(row)
        except (UnitError, ValueError) as err:
            raise BudgetError(path, str(err), key=where) from None
        if key in table:
            raise BudgetError(path, f"a second time for matrix {shown(key[0])}, kernel "
                              f"{shown(key[1])}, "
                              f"width {key[2]} (give one time, e.g. the median)", key=where)
        table[key] = seconds
    return table


def _baseline_entry(entry: object) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ValueError("expected an object")
    for field in ("check", "matrix", *BASELINE_CONFIG):
        if not isinstance(entry.get(field), str):
            raise ValueError(f"missing or non-text {field!r}")
    _width(entry.get("width"))
    for field in BASELINE_VALUES:
        value = entry.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 <= value <= LARGEST:
            raise ValueError(f"{field!r} must be a number from 0 to {LARGEST:g}")
    return entry


def load_baseline(path: str | Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Baseline entries by (check, matrix name, width) from a ``--write-baseline`` file."""
    doc = read_json(path, lambda problem: BudgetError(path, problem))
    if not isinstance(doc, dict) or doc.get("kind") != "baseline":
        raise BudgetError(path, "not a baseline (write one with sparsroof check "
                          "--write-baseline)")
    if doc.get("schema_version") != BASELINE_SCHEMA:
        raise BudgetError(path, f"unsupported schema_version {shown(doc.get('schema_version'))} "
                          f"(this sparsroof reads {BASELINE_SCHEMA})", key="schema_version")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise BudgetError(path, "expected a list", key="entries")
    table: dict[tuple[str, str, int], dict[str, Any]] = {}
    for i, raw in enumerate(entries):
        try:
            entry = _baseline_entry(raw)
        except ValueError as err:
            raise BudgetError(path, str(err), key=f"entries[{i}]") from None
        table[(entry["check"], entry["matrix"], int(entry["width"]))] = entry
    return table
