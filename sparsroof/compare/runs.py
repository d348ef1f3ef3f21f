"""Reading measured run times: a simple CSV, sparsroof's own ``bench -O json``, and the JSON
of Ginkgo's SpMV benchmark.

- CSV, the one measured-runs dialect that ``compare``, ``check`` and ``plot`` read: a
  header with ``matrix`` and ``time_s``, and optionally ``kernel`` (spmv/spmm),
  ``format`` (a storage name), ``d`` (width of B), ``dtype``, ``hw`` (a spec name or
  path), ``implementation`` (the code that ran: a library, a kernel variant; runs of
  one format by several codes stay apart in figures) and ``timing`` (how the run was
  timed: graph, stream, sync or cold; see :mod:`sparsroof.model.timing`), with
  ``calls_per_sync`` for sync. Matrix paths are relative to the CSV's folder. A time is a
  number in the reader's time unit or a time with its own unit ("21 us"). ``seconds``
  and ``width``, the columns budget files once used, are read as ``time_s`` and ``d``;
  any other column is noted and not read.
- The same fields as JSON records: a list of objects with ``matrix`` (or an object whose
  ``results`` is that list).
- ``bench -O json``: each result's fastest repetition (``min_s``), its format, width,
  dtype, backend (the implementation), timing method and calls per synchronisation (a
  GPU run's; a host run's is stream) and the spec it was run against (the user's YAML
  file where the document names one, looked for beside the document where that path
  does not exist, written on another machine; else the spec's name), with the
  calibration whose measured roofs ``bench`` used; the matrix is the result's ``path``.
- Ginkgo benchmark JSON (a list of objects, each with ``filename`` and an ``spmv`` mapping of
  format name to ``{"time": ..., "completed": true}``): every completed format's time, in
  the unit ``time_unit`` says (Ginkgo's releases differ: check your version's output).
  Every format name Ginkgo writes for its own kernels and for cuSPARSE's and hipSPARSE's is
  mapped to the storage whose bytes its kernel must read (:data:`GINKGO_FORMATS`); a name
  without a traffic model (a mixed-precision or vendor-opaque kernel) is noted and skipped.

A matrix path that does not exist (a benchmark machine's absolute path) is looked for by
file name under ``matrix_dir``: the file itself, then the path's last two parts (the
collection's group and name), then any file of that name below it.
A row that cannot be used becomes a :class:`RowError` naming the file, the row and the
problem; the other rows are still read. Every field is checked for its type and range
(:mod:`sparsroof.userfile`): a time is a positive finite number (true is not 1 s), a width
a whole number (2.5 is not 2), ``completed`` a boolean (the string "false" is not true).
A CSV file is read a row at a time, and each matrix path is looked up once, so a file of
millions of rows costs a few hundred bytes per run.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.config import MAX_WIDTH
from ..errors import SOURCE_CHARS, MeasuredRunsError, OptionError, UnitError, clip
from ..model.timing import TIMINGS
from ..model.traffic import KERNELS, STORAGES, VALUE_BYTES
from ..units import parse_quantity
from ..userfile import (
    FieldError,
    described,
    flag,
    iter_csv,
    optional_text,
    read_json_items,
    shown,
    whole_number,
)

__all__ = ["MeasuredRun", "RowError", "read_runs", "GINKGO_FORMATS", "TIME_UNITS",
           "RUN_COLUMNS", "COLUMN_ALIASES", "find_matrix"]

#: the columns of the measured-runs CSV (and fields of its JSON records)
RUN_COLUMNS = ("matrix", "time_s", "kernel", "format", "d", "dtype", "hw", "implementation",
               "timing", "calls_per_sync")
#: older column names read as the dialect's own: ``seconds`` and ``width`` of budgets
COLUMN_ALIASES = {"seconds": "time_s", "width": "d"}

#: seconds per unit of a time column
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: each unit of :data:`TIME_UNITS` in words, for a message
_UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds",
               "ns": "nanoseconds"}
#: Ginkgo's format names -> the storage whose traffic its kernel moves
GINKGO_FORMATS = {
    "csr": "csr", "csri": "csr", "csrm": "csr", "csrc": "csr", "csrs": "csr",
    "coo": "coo", "ell": "ell", "hybrid": "hyb", "ell_mixed": "ell", "coo_mixed": "coo",
    "cusparse_csr": "csr", "cusparse_csrmp": "csr", "cusparse_csrmm": "csr",
    "cusparse_coo": "coo", "cusparse_ell": "ell", "cusparse_hybrid": "hyb",
    "cusparse_gcsr": "csr", "cusparse_gcoo": "coo", "hipsparse_csr": "csr",
    # cuSPARSE's CSR and generic CSR/COO as Ginkgo's older releases name them
    "cusp_csr": "csr", "cusp_csrmp": "csr", "cusp_csrmm": "csr", "cusp_gcsr": "csr",
    "cusp_gcsr2": "csr", "cusp_gcoo": "coo", "cusp_coo": "coo", "cusp_ell": "ell",
    "cusp_hybrid": "hyb",
    # HYB split by Ginkgo's strategies (bounded at the split that stores least)
    **{f"hybrid{k}": "hyb" for k in ("0", "25", "33", "40", "60", "80", "limit0", "limit25",
                                     "limit33", "minstorage")},
    "hipsparse_coo": "coo", "hipsparse_ell": "ell", "hipsparse_hybrid": "hyb",
    "hipsparse_csrmm": "csr", "hipsparse_csrmp": "csr", "hipsparse_gcsr": "csr",
    "hipsparse_gcsr2": "csr", "hipsparse_gcoo": "coo", "cusparse_gcsr2": "csr",
    "cusparse_csrex": "csr", "hipsparse_csrex": "csr",
    # SELL-P: slices of rows padded to their longest (bounded as SELL-C-sigma, any C)
    "sellp": "sell", "sellp_mixed": "sell",
    # oneMKL's CSR (Ginkgo's DPC++ backend)
    "onemkl_csr": "csr", "onemkl_optimized_csr": "csr",
}


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    """One measured kernel time, with what is needed to bound it."""

    source: str   # file and row, for messages: "runs.csv:3"
    matrix: str   # path of the Matrix Market file
    time_s: float
    kernel: str = "spmv"
    storage: str = "csr"
    width: int = 1
    dtype: str = "fp64"
    hw: str | None = None  # None: the spec given on the command line
    timing: str | None = None  # how the run was timed; None: the method given to judge
    calibration: str | None = None  # a calibration's file: its measured roofs bound the run
    implementation: str = ""  # the code that ran (a library, a backend), where known
    calls_per_sync: int | None = None  # with timing sync; None: the count given to judge
    #: the fields the row itself gave (RUN_COLUMNS names); the others are defaults
    given: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        """A run made in code is held to what a file's row is: a positive finite time, a
        path, names where names go, a timing method and a count of calls it knows.

        >>> MeasuredRun("mine", "a.mtx", 0.0)
        Traceback (most recent call last):
        ...
        sparsroof.errors.OptionError: mine: time_s is 0.0, expected a positive number of seconds
        >>> MeasuredRun("mine", "a.mtx", 1e-5, timing="sync", calls_per_sync=0)
        Traceback (most recent call last):
        ...
        sparsroof.errors.OptionError: mine: calls_per_sync is 0, expected a whole number, 1 or more
        """
        try:
            _seconds(self.time_s, "time_s")
        except FieldError as err:
            raise OptionError(f"{self.source}: {err}") from None
        wrong = _wrong_field(self)
        if wrong:
            raise OptionError(f"{self.source}: {wrong}")


def _whole(value: object, most: int = 2**31 - 1) -> bool:
    """Whether ``value`` is a whole number from 1 to ``most``, as a file's field must be."""
    try:
        whole_number(value, "", maximum=most)
    except FieldError:
        return False
    return True


def _wrong_field(run: MeasuredRun) -> str:
    """What a run made in code holds that no file's row could, in words ("" when
    nothing)."""
    checks: list[tuple[str, object, bool, str]] = [
        ("matrix", run.matrix, isinstance(run.matrix, (str, os.PathLike)), "a path"),
        ("kernel", run.kernel, isinstance(run.kernel, str), "a name"),
        ("storage", run.storage, isinstance(run.storage, str), "a name"),
        ("dtype", run.dtype, isinstance(run.dtype, str), "a name"),
        ("width", run.width, _whole(run.width, MAX_WIDTH), f"a whole number from 1 to "
         f"{MAX_WIDTH:,}"),
        ("hw", run.hw, run.hw is None or isinstance(run.hw, str), "a spec's name or path"),
        ("timing", run.timing, run.timing is None or run.timing in TIMINGS,
         f"one of {', '.join(TIMINGS)}"),
        ("calls_per_sync", run.calls_per_sync, run.calls_per_sync is None
         or _whole(run.calls_per_sync), "a whole number, 1 or more"),
    ]
    return next((f"{name} is {shown(value)}, expected {what}"
                 for name, value, ok, what in checks if not ok), "")


@dataclass(frozen=True, slots=True)
class RowError:
    """A row that could not be judged; ``skipped`` where the row is fine but sparsroof has
    nothing to judge it with (a note, not an error: the file still passes)."""

    source: str
    message: str
    skipped: bool = False

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass(frozen=True)
class _Defaults:
    kernel: str
    width: int
    dtype: str
    time_unit: str


def _seconds(value: Any, what: str, unit: str = "s", from_text: bool = False) -> float:
    """A time field in ``unit`` (a key of :data:`TIME_UNITS`) as seconds: a positive
    finite number (never true/false, and in JSON never a string)."""
    scale, words = TIME_UNITS[unit], _UNIT_WORDS[unit]
    if from_text and isinstance(value, str):
        try:
            seconds = float(value.strip()) * scale
        except ValueError:
            try:  # a time with its own unit: "21 us"
                return parse_quantity(value, "time")
            except UnitError:
                raise FieldError(f"{what} {shown(value.strip())} is not a number or a time "
                                 "such as '21 us'") from None
        if not (math.isfinite(seconds) and seconds > 0):
            raise FieldError(f"{what} {shown(value.strip())} is not a positive number of "
                             f"{words}")
        return seconds
    wanted = f"{what} is {described(value)}, expected a positive number of {words}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldError(wanted)
    try:
        seconds = float(value) * scale
    except OverflowError:
        raise FieldError(wanted) from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise FieldError(wanted)
    return seconds


def _width(value: Any, what: str, default: int, from_text: bool = False) -> int:
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    return whole_number(value, what, from_text=from_text, maximum=MAX_WIDTH)


def _per_sync(value: Any, from_text: bool = False) -> int | None:
    """A run's calls per host synchronisation, where it gives one."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return whole_number(value, "calls_per_sync", from_text=from_text, maximum=2**31 - 1)


def _choices(record: dict[Any, Any], d: _Defaults, names: tuple[str, str, str]
             ) -> tuple[str, str, str]:
    """Kernel, storage and dtype of a record, whose fields are called ``names``."""
    kernel = optional_text(record, names[0], d.kernel, choices=KERNELS)
    storage = optional_text(record, names[1], "csr", choices=STORAGES, lower=True)
    dtype = optional_text(record, names[2], d.dtype, choices=VALUE_BYTES)
    assert kernel is not None and storage is not None and dtype is not None  # defaults
    return kernel, storage, dtype


def _fits(kernel: str, width: int) -> None:
    if kernel == "spmv" and width != 1:
        raise FieldError(f"d = {width} does not fit kernel {kernel}")


class _Matrices:
    """Matrix paths as written -> the file to load, each looked up once (and each path
    string shared by the runs that name it); a file that is not found is the row's
    error."""

    def __init__(self, base: Path, matrix_dir: str | None, locate: bool = True) -> None:
        self.base = base
        self.matrix_dir = matrix_dir
        self.locate = locate
        self.index: dict[str, list[Path]] = {}
        self.found: dict[str, tuple[str, bool]] = {}
        #: the document records paths from where its command ran (bench -O json), not
        #: from its own folder: the folder this command runs in is tried after that one
        self.from_here = False

    def __call__(self, written: str) -> str:
        if not self.locate:
            return written
        if written not in self.found:
            path = find_matrix(str(self.base / written), self.matrix_dir, self.index)
            if self.from_here and not os.path.isfile(path) and not os.path.isabs(written) \
                    and os.path.isfile(written):
                path = written  # relative to where bench ran, as it records a path
            self.found[written] = (path, os.path.isfile(path))
        path, exists = self.found[written]
        if not exists and os.path.isdir(path):
            raise FieldError(f"{clip(path, SOURCE_CHARS)} is a folder, not a matrix file")
        if not exists:
            raise FieldError(f"matrix file not found: {clip(path, SOURCE_CHARS)} (--matrix-dir "
                             "DIR looks for it by name)")
        return path


def _canonical(row: dict[Any, Any]) -> dict[str, Any]:
    """A row with the old column names (``seconds``, ``width``) under the dialect's own."""
    if not any(k in COLUMN_ALIASES for k in row):
        return row
    out = {k: v for k, v in row.items() if k not in COLUMN_ALIASES}
    for old, new in COLUMN_ALIASES.items():
        if old in row and row[old] not in (None, ""):
            if out.get(new) not in (None, ""):
                raise FieldError(f"both {new} and {old} (its older name): give one")
            out[new] = row[old]
    return out


class _Given:
    """The set of fields a row gave, one shared frozenset per distinct set."""

    def __init__(self) -> None:
        self.seen: dict[frozenset[str], frozenset[str]] = {}

    def __call__(self, row: dict[Any, Any]) -> frozenset[str]:
        given = frozenset(k for k in RUN_COLUMNS
                          if isinstance(k, str) and row.get(k) not in (None, ""))
        return self.seen.setdefault(given, given)


def _record_run(row: dict[Any, Any], source: str, d: _Defaults, matrices: _Matrices,
                given: _Given) -> MeasuredRun:
    """A run from a CSV row or a JSON record of the same fields (JSON numbers stay
    numbers: true is not a time)."""
    row = _canonical(row)
    matrix = row.get("matrix")
    if not isinstance(matrix, str) or not matrix.strip():
        raise FieldError("no matrix named")
    raw = row.get("time_s")
    if raw is None or raw == "":
        raise FieldError("no time_s given")
    time_s = _seconds(raw, "time_s", d.time_unit, isinstance(raw, str))
    kernel, storage, dtype = _choices(row, d, ("kernel", "format", "dtype"))
    width = _width(row.get("d"), "d", d.width, from_text=isinstance(row.get("d"), str))
    _fits(kernel, width)
    timing = optional_text(row, "timing", None, choices=TIMINGS, lower=True)
    per_sync = row.get("calls_per_sync")
    return MeasuredRun(source, matrices(matrix.strip()), time_s, kernel, storage, width,
                       dtype, optional_text(row, "hw"), timing,
                       implementation=optional_text(row, "implementation", "") or "",
                       calls_per_sync=_per_sync(per_sync, from_text=isinstance(per_sync, str)),
                       given=given(row))


def _unread(columns: list[Any], source: str) -> Iterator[RowError]:
    """A note per column the dialect does not read (a misspelt 'fromat' would else pass
    for csr)."""
    for column in columns:
        if isinstance(column, str) and column not in RUN_COLUMNS \
                and column not in COLUMN_ALIASES:
            yield RowError(source, f"column {shown(column)} is not read (the columns are "
                                   f"{', '.join(RUN_COLUMNS)})", skipped=True)


def _csv_runs(path: Path, d: _Defaults, matrices: _Matrices
              ) -> Iterator[MeasuredRun | RowError]:
    with iter_csv(path, lambda problem: MeasuredRunsError(f"{path}: {problem}")) as table:
        header = table.header
        missing = [c for c in ("matrix", "time_s")
                   if c not in header and not any(COLUMN_ALIASES.get(h) == c for h in header)]
        if missing:
            raise MeasuredRunsError(f"{path}: line 1: the header needs the columns "
                                    f"{', '.join(missing)} (found: "
                                    f"{shown(', '.join(header), 80)})")
        yield from _unread(header, f"{path}:1")
        given = _Given()
        for line, row in table:
            source = f"{path}:{line}"
            extra = row.get(None)
            if extra:  # a comma too many shifts every cell after it: not a run to judge
                yield RowError(source, f"{len(header) + len(extra)} cells where the header "
                                       f"names {len(header)} columns")
                continue
            try:
                yield _record_run(row, source, d, matrices, given)
            except FieldError as err:
                yield RowError(source, str(err))


def _records(rows: Iterable[Any], path: Path, d: _Defaults, matrices: _Matrices
             ) -> Iterator[MeasuredRun | RowError]:
    given = _Given()
    unread: set[str] = set()
    for i, row in enumerate(rows):
        source = f"{path}:[{i}]"
        if not isinstance(row, dict):
            yield RowError(source, f"expected an object with matrix and time_s, found "
                                   f"{described(row)}")
            continue
        yield from _unread([k for k in row if k not in unread], source)
        unread.update(k for k in row if isinstance(k, str))
        try:
            yield _record_run(row, source, d, matrices, given)
        except FieldError as err:
            yield RowError(source, str(err))


def _doc_text(doc: dict[str, Any], key: str, path: Path) -> str | None:
    value = doc.get(key)
    if value is not None and not isinstance(value, str):
        raise MeasuredRunsError(f"{path}: {key}: expected text, found {described(value)}")
    return value or None


def _spec_file(doc: dict[str, Any], path: Path) -> str | None:
    """The document's own spec file; where that path does not exist (the file was written
    on another machine), a file of that name beside the document."""
    written = _doc_text(doc, "spec_file", path)
    if written is None or os.path.isfile(written):
        return written
    beside = path.parent / Path(written).name
    return str(beside) if beside.is_file() else written


def _bench_run(r: Any, source: str, doc: dict[str, Any], path: Path, matrices: _Matrices
               ) -> MeasuredRun | None:
    if not isinstance(r, dict):
        raise FieldError(f"expected an object, found {described(r)}")
    if r.get("min_s") is None:  # skipped kernels have no time
        return None
    time_s = _seconds(r["min_s"], "min_s")
    written = r.get("path") or f"{optional_text(r, 'matrix') or ''}.mtx"
    if not isinstance(written, str) or written == ".mtx":
        raise FieldError(f"path is {described(r.get('path'))}, expected a matrix file")
    kernel, storage, dtype = _choices(r, _Defaults("spmv", 1, "fp64", "s"),
                                      ("kernel", "storage", "dtype"))
    width = _width(r.get("width"), "width", 1)
    _fits(kernel, width)
    timing = r.get("timing")
    per_sync = _per_sync(r.get("calls_per_sync"))
    # what a check matches a bench run by: what ran, and how it was timed where it says
    given = frozenset({"kernel", "format", "dtype"} | ({"timing"} if timing else set())
                      | ({"calls_per_sync"} if per_sync is not None else set()))
    return MeasuredRun(source, matrices(written), time_s, kernel, storage, width, dtype,
                       _spec_file(doc, path) or _doc_text(doc, "spec", path),
                       optional_text(r, "timing", choices=TIMINGS) if timing else None,
                       _doc_text(doc, "calibration", path),
                       optional_text(r, "backend", "") or "", per_sync, given)


def _bench_runs(doc: dict[str, Any], path: Path, matrices: _Matrices
                ) -> Iterator[MeasuredRun | RowError]:
    results = doc.get("results", [])
    if not isinstance(results, list):
        raise MeasuredRunsError(f"{path}: results: expected a list of results, found "
                                f"{described(results)}")
    matrices.from_here = True
    for i, r in enumerate(results):
        source = f"{path}:results[{i}]"
        try:
            run = _bench_run(r, source, doc, path, matrices)
        except FieldError as err:
            yield RowError(source, str(err))
            continue
        if run is not None:
            yield run


def _ginkgo_run(name: str, result: Any, here: str, filename: str, d: _Defaults,
                matrices: _Matrices) -> MeasuredRun | RowError | None:
    if not isinstance(result, dict):
        return RowError(here, f"expected an object with 'time' and 'completed', found "
                              f"{described(result)}")
    try:
        if not flag(result.get("completed", True), "completed"):
            return None
        storage = GINKGO_FORMATS.get(name)
        if storage is None:
            return RowError(here, f"skipped: no traffic model for Ginkgo format "
                                  f"{shown(name)}", skipped=True)
        if result.get("time") is None:
            return RowError(here, "no numeric 'time'")
        time_s = _seconds(result["time"], "time", d.time_unit)
        return MeasuredRun(here, matrices(filename), time_s, d.kernel, storage, d.width,
                           d.dtype)
    except FieldError as err:
        return RowError(here, str(err))


def _ginkgo_runs(doc: Iterable[Any], path: Path, d: _Defaults, matrices: _Matrices
                 ) -> Iterator[MeasuredRun | RowError]:
    for i, case in enumerate(doc):
        where = f"{path}:[{i}]"
        if not isinstance(case, dict) or "filename" not in case:
            yield RowError(where, "expected an object with 'filename' and 'spmv'")
            continue
        filename, results = case["filename"], case.get("spmv") or {}
        if not isinstance(filename, str) or not filename.strip():
            yield RowError(where, f"filename is {described(filename)}, expected a path")
            continue
        if not isinstance(results, dict):
            yield RowError(f"{where}.spmv", f"expected an object of format -> result, found "
                                            f"{described(results)}")
            continue
        for name, result in results.items():
            found = _ginkgo_run(name, result, f"{where}.spmv.{shown(name)[1:-1]}", filename,
                                d, matrices)
            if found is not None:
                yield found


def find_matrix(recorded: str, matrix_dir: str | Path | None,
                index: dict[str, list[Path]] | None = None) -> str:
    """``recorded`` where that file exists, else the file of its name under ``matrix_dir``:
    ``matrix_dir``/name, then ``matrix_dir``/group/name (the path's last two parts), then
    the one file of that name anywhere below (``index``, built on first use, maps names to
    files). Unfound, ``recorded`` is returned as it was.

    >>> find_matrix("/cluster/ss/HB/bcsstk01.mtx", None)
    '/cluster/ss/HB/bcsstk01.mtx'
    """
    path = Path(recorded)
    if matrix_dir is None or os.path.isfile(path):
        return recorded
    root = Path(matrix_dir)
    for candidate in (root / path.name, root / Path(*path.parts[-2:])):
        if os.path.isfile(candidate):
            return str(candidate)
    if index is not None:
        if not index:
            for found in root.rglob("*"):
                if os.path.isfile(found):
                    index.setdefault(found.name, []).append(found)
            index.setdefault("", [])  # built, even when the folder is empty
        hits = index.get(path.name, [])
        if len(hits) == 1:
            return str(hits[0])
    return recorded


def read_runs(path: str, *, kernel: str = "spmv", width: int = 1, dtype: str = "fp64",
              time_unit: str = "s", matrix_dir: str | None = None, locate: bool = True
              ) -> tuple[list[MeasuredRun], list[RowError]]:
    """The usable runs of ``path`` and one error per unusable row, in the file's order (a
    row with nothing to judge it by is a skipped one, :attr:`RowError.skipped`). The
    defaults fill what a row does not say; ``time_unit`` is the unit of CSV ``time_s`` and
    Ginkgo ``time``; a matrix missing where the row says is looked for under
    ``matrix_dir`` (:func:`find_matrix`); with ``locate`` false a matrix is kept as
    written (a name, matched by the caller). A file that cannot be read at all, or holds
    no row, raises :class:`~sparsroof.errors.MeasuredRunsError`."""
    p = Path(path)
    d = _Defaults(kernel, width, dtype, time_unit)
    matrices = _Matrices(p.parent, matrix_dir, locate)
    found: Iterator[MeasuredRun | RowError]
    if p.suffix.lower() != ".json":
        found = _csv_runs(p, d, matrices)
    else:
        # a list (Ginkgo's, or records) is parsed an item at a time: a run file of a
        # million runs is held as text and runs, never as a million parsed objects
        doc, items = read_json_items(p, lambda problem: MeasuredRunsError(f"{path}: "
                                                                          f"{problem}"))
        if items is not None:
            first = next(items, None)
            listed = itertools.chain([] if first is None else [first], items)
            found = (_ginkgo_runs(listed, p, d, matrices)
                     if isinstance(first, dict) and "filename" in first
                     else _records(listed, p, d, matrices))
        elif isinstance(doc, dict) and doc.get("kind") == "bench":
            found = _bench_runs(doc, p, matrices)
        elif isinstance(doc, dict) and isinstance(doc.get("results"), list):
            found = _records(doc["results"], p, d, matrices)
        else:
            raise MeasuredRunsError(f"{path}: neither a 'sparsroof bench -O json' document, "
                                    "a list of runs nor a Ginkgo benchmark list")
    good: list[MeasuredRun] = []
    errors: list[RowError] = []
    for item in found:
        (good if isinstance(item, MeasuredRun) else errors).append(item)  # type: ignore[arg-type]
    if not good and not errors:  # a check of nothing must not pass
        raise MeasuredRunsError(f"{path}: holds no runs (a header or an empty list only)")
    return good, errors
