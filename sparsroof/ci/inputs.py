"""Files a budget check reads besides the budget: measured results and baselines.

MeasuredTimes results are in the measured-runs dialect that ``sparsroof compare`` reads
(:mod:`sparsroof.compare.runs`): a CSV with ``matrix`` and ``time_s`` and optionally
``kernel``, ``format``, ``d``, ``dtype``, ``hw``, ``implementation`` and ``timing``; the
same fields as JSON records; ``sparsroof bench -O json``; or Ginkgo's benchmark JSON::

    matrix,kernel,d,time_s
    lap2d_64,spmv,1,2.1e-05

``matrix`` is the matrix's name or path (``data/lap2d_64.mtx`` and ``lap2d_64`` match the
same file); a time is a number of seconds or a time with its unit ("21 us"). The older
columns ``width`` and ``seconds`` are read as ``d`` and ``time_s``. A run matches a check's
point when its matrix and width agree, and so does every other field the row gives
(kernel, format, dtype, hw, timing); a row that leaves ``d`` out is width 1.

A baseline is the JSON that ``sparsroof check --write-baseline`` writes: one entry per
check, matrix and width with the configuration it was modelled with and its values.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import SCHEMA_VERSIONS
from ..analysis.config import MAX_WIDTH
from ..compare.runs import MeasuredRun, read_runs
from ..errors import BudgetError, MeasuredRunsError
from ..userfile import (
    LARGEST,
    FieldError,
    read_json,
    shown,
    whole_number,
)

__all__ = [
    "BASELINE_SCHEMA",
    "BASELINE_CONFIG",
    "BASELINE_VALUES",
    "MeasuredTimes",
    "matrix_key",
    "load_measured",
    "load_baseline",
]

BASELINE_SCHEMA = SCHEMA_VERSIONS["baseline"]
#: what an entry was modelled with; a change means the baseline no longer applies
BASELINE_CONFIG = ("spec", "kernel", "dtype", "index", "storage", "model", "unit")
#: the values compared against the current run
BASELINE_VALUES = ("sol_s", "bytes_total")


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


def _where(run_source: str, path: str) -> str:
    """'line 3' (CSV) or '[3]' (JSON) from a run's source 'path:3'."""
    tail = run_source[len(path) + 1:] if run_source.startswith(f"{path}:") else run_source
    return f"line {tail}" if tail.isdigit() else tail


@dataclass
class MeasuredTimes:
    """The runs of a measured-results file by (matrix name, width), and its notes."""

    path: str
    runs: dict[tuple[str, int], list[MeasuredRun]] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    def seconds(self, matrix: str, width: int, point: dict[str, Any]) -> float | None:
        """The one time measured for ``matrix`` at ``width`` whose given fields agree with
        ``point`` (kernel, format, dtype, hw, timing, calls_per_sync); None when none does.
        Two that agree are a :class:`BudgetError`: the file cannot say which was meant."""
        found = [r for r in self.runs.get((matrix, width), ())
                 if all(_agrees(r, name, point[name]) for name in r.given if name in point)]
        if len(found) > 1:
            raise BudgetError(self.path, f"{len(found)} times for matrix {shown(matrix)}, "
                              f"kernel {point['kernel']}, width {width} (give one time, e.g. "
                              "the median, or columns that tell them apart)",
                              key=_where(found[1].source, self.path))
        return found[0].time_s if found else None

    def timed_otherwise(self, matrix: str, width: int, point: dict[str, Any]
                        ) -> MeasuredRun | None:
        """A run of what ``point`` describes that says it was timed by another method (or
        another count of calls per synchronisation), where one is."""
        for r in self.runs.get((matrix, width), ()):
            same = all(_agrees(r, name, point[name]) for name in r.given
                       if name in point and name not in ("timing", "calls_per_sync"))
            if same and "timing" in r.given:
                return r
        return None


def _agrees(run: MeasuredRun, name: str, want: Any) -> bool:
    """Whether the run's field ``name`` is ``want`` (a spec given as a file agrees with
    the spec of that file's name)."""
    if name == "hw":
        return run.hw is not None and want in (run.hw, Path(run.hw).stem)
    value = {"kernel": run.kernel, "format": run.storage, "dtype": run.dtype,
             "timing": run.timing, "calls_per_sync": run.calls_per_sync}[name]
    return value == want


def load_measured(path: str | Path) -> MeasuredTimes:
    """The runs of a measured-results file, for matching to a budget's points; a row that
    cannot be used is a :class:`BudgetError` (a budget judges every row or none)."""
    path = str(path)
    if not path.endswith((".csv", ".json")):
        raise BudgetError(path, "measured results must be a .json or .csv file")
    try:
        # spmm by default fits any width: a row's kernel counts only where it gives one
        runs, errors = read_runs(path, kernel="spmm", locate=False)
    except MeasuredRunsError as err:
        raise BudgetError(path, str(err).removeprefix(f"{path}: ")) from None
    failed = [e for e in errors if not e.skipped]
    if failed:
        raise BudgetError(path, failed[0].message, key=_where(failed[0].source, path))
    table: dict[tuple[str, int], list[MeasuredRun]] = defaultdict(list)
    for run in runs:
        table[(matrix_key(run.matrix), run.width)].append(run)
    return MeasuredTimes(path, dict(table), [str(e) for e in errors])


def _width(value: object) -> int:
    try:
        return whole_number(value, "width", from_text=isinstance(value, str),
                            maximum=MAX_WIDTH)
    except FieldError:
        raise ValueError(f"width {shown(value)} is not a whole number from 1 to "
                         f"{MAX_WIDTH:,}") from None


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
