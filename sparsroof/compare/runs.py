"""Reading measured run times: a simple CSV, sparsroof's own ``bench -O json``, and the JSON
of Ginkgo's SpMV benchmark.

- CSV: a header with ``matrix`` and ``time_s``, and optionally ``kernel`` (spmv/spmm),
  ``format`` (a storage name), ``d`` (width of B), ``dtype``, ``hw`` (a spec name or
  path), ``implementation`` (the code that ran: a library, a kernel variant; runs of
  one format by several codes stay apart in figures) and ``timing`` (how the run was
  timed: graph, stream, sync or cold; see :mod:`sparsroof.model.timing`). Matrix paths are
  relative to the CSV's folder.
- ``bench -O json``: each result's fastest repetition (``min_s``), its format, width,
  dtype, backend (the implementation) and the spec it was run against (the user's YAML
  file where the document names one, else the spec's name), with the calibration whose
  measured roofs ``bench`` used; the matrix is the result's ``path``.
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
problem; the other rows are still read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import MeasuredRunsError
from ..model.timing import TIMINGS
from ..model.traffic import KERNELS, STORAGES, VALUE_BYTES
from ..userfile import read_csv, read_json

__all__ = ["MeasuredRun", "RowError", "read_runs", "GINKGO_FORMATS", "TIME_UNITS",
           "find_matrix"]

#: seconds per unit of a time column
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


def _check(run: MeasuredRun) -> str | None:
    """What is wrong with a run, or None."""
    if not (math.isfinite(run.time_s) and run.time_s > 0):
        return f"time {run.time_s!r} is not a positive number of seconds"
    if run.timing is not None and run.timing not in TIMINGS:
        return f"unknown timing {run.timing!r} (choose from {', '.join(TIMINGS)})"
    if run.kernel not in KERNELS:
        return f"unknown kernel {run.kernel!r} (choose from {', '.join(KERNELS)})"
    if run.storage not in STORAGES:
        return f"unknown format {run.storage!r} (choose from {', '.join(STORAGES)})"
    if run.dtype not in VALUE_BYTES:
        return f"unknown dtype {run.dtype!r} (choose from {', '.join(VALUE_BYTES)})"
    if run.width < 1 or (run.kernel == "spmv" and run.width != 1):
        return f"d = {run.width} does not fit kernel {run.kernel}"
    if not Path(run.matrix).is_file():
        return (f"matrix file not found: {run.matrix} (--matrix-dir DIR looks for it by "
                "name)")
    return None


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None


def _csv_run(row: dict[str, str], source: str, base: Path, d: _Defaults) -> MeasuredRun:
    matrix = (row.get("matrix") or "").strip()
    if not matrix:
        raise ValueError("no matrix named")
    width = row.get("d") or ""
    kernel = (row.get("kernel") or "").strip() or d.kernel
    return MeasuredRun(
        source=source, matrix=str(base / matrix),
        time_s=_number((row.get("time_s") or "").strip(), "time_s")
        * TIME_UNITS[d.time_unit],
        kernel=kernel, storage=(row.get("format") or "").strip().lower() or "csr",
        width=int(_number(width, "d")) if width.strip() else d.width,
        dtype=(row.get("dtype") or "").strip() or d.dtype,
        hw=(row.get("hw") or "").strip() or None,
        implementation=(row.get("implementation") or "").strip(),
        timing=(row.get("timing") or "").strip().lower() or None)


def _read_csv(path: Path, d: _Defaults) -> tuple[list[MeasuredRun], list[RowError]]:
    header, rows = read_csv(path, lambda problem: MeasuredRunsError(f"{path}: {problem}"))
    missing = [c for c in ("matrix", "time_s") if c not in header]
    if missing:
        raise MeasuredRunsError(f"{path}: line 1: the header needs the columns "
                                f"{', '.join(missing)} (found: {', '.join(header)})")
    runs, errors = [], []
    for line, row in rows:
        try:
            runs.append(_csv_run(row, f"{path}:{line}", path.parent, d))
        except (ValueError, TypeError) as err:
            errors.append(RowError(f"{path}:{line}", str(err)))
    return runs, errors


def _bench_runs(doc: dict[str, Any], path: Path) -> list[MeasuredRun]:
    base = path.parent
    out = []
    for i, r in enumerate(doc.get("results", [])):
        if r.get("min_s") is None:  # skipped kernels have no time
            continue
        matrix = r.get("path") or f"{r.get('matrix')}.mtx"
        out.append(MeasuredRun(
            source=f"{path}:results[{i}]", matrix=str(base / matrix), time_s=float(r["min_s"]),
            kernel=r.get("kernel", "spmv"), storage=r.get("storage", "csr"),
            width=int(r.get("width", 1)), dtype=r.get("dtype", "fp64"),
            hw=doc.get("spec_file") or doc.get("spec"), calibration=doc.get("calibration"),
            implementation=str(r.get("backend") or ""),
            timing=r.get("timing") if isinstance(r.get("timing"), str) else None))
    return out


def _ginkgo_runs(doc: list[Any], path: Path, d: _Defaults
                 ) -> tuple[list[MeasuredRun], list[RowError]]:
    runs, errors = [], []
    for i, case in enumerate(doc):
        where = f"{path}:[{i}]"
        if not isinstance(case, dict) or "filename" not in case:
            errors.append(RowError(where, "expected an object with 'filename' and 'spmv'"))
            continue
        for name, result in (case.get("spmv") or {}).items():
            here = f"{where}.spmv.{name}"
            if not isinstance(result, dict) or not result.get("completed", True):
                continue
            storage = GINKGO_FORMATS.get(name)
            if storage is None:
                errors.append(RowError(here, f"skipped: no traffic model for Ginkgo format "
                                             f"{name!r}", skipped=True))
                continue
            try:
                time_s = float(result["time"]) * TIME_UNITS[d.time_unit]
            except (KeyError, TypeError, ValueError):
                errors.append(RowError(here, "no numeric 'time'"))
                continue
            runs.append(MeasuredRun(here, str(path.parent / case["filename"]), time_s,
                                    d.kernel, storage, d.width, d.dtype))
    return runs, errors


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
    if matrix_dir is None or path.is_file():
        return recorded
    root = Path(matrix_dir)
    for candidate in (root / path.name, root / Path(*path.parts[-2:])):
        if candidate.is_file():
            return str(candidate)
    if index is not None:
        if not index:
            for found in root.rglob("*"):
                if found.is_file():
                    index.setdefault(found.name, []).append(found)
            index.setdefault("", [])  # built, even when the folder is empty
        hits = index.get(path.name, [])
        if len(hits) == 1:
            return str(hits[0])
    return recorded


def read_runs(path: str, *, kernel: str = "spmv", width: int = 1, dtype: str = "fp64",
              time_unit: str = "s", matrix_dir: str | None = None
              ) -> tuple[list[MeasuredRun], list[RowError]]:
    """The usable runs of ``path`` and one error per unusable row (a row with nothing to
    judge it by is a skipped one, :attr:`RowError.skipped`). The defaults fill what a row
    does not say; ``time_unit`` is the unit of CSV ``time_s`` and Ginkgo ``time``; a
    matrix missing where the row says is looked for under ``matrix_dir``
    (:func:`find_matrix`)."""
    p = Path(path)
    if not p.is_file():
        raise MeasuredRunsError(f"{path}: no such file")
    d = _Defaults(kernel, width, dtype, time_unit)
    if p.suffix.lower() != ".json":
        runs, errors = _read_csv(p, d)
    else:
        doc = read_json(p, lambda problem: MeasuredRunsError(f"{path}: {problem}"))
        if isinstance(doc, dict) and doc.get("kind") == "bench":
            runs, errors = _bench_runs(doc, p), []
        elif isinstance(doc, list):
            runs, errors = _ginkgo_runs(doc, p, d)
        else:
            raise MeasuredRunsError(f"{path}: neither a 'sparsroof bench -O json' document nor "
                                    "a Ginkgo benchmark list")
    good = []
    index: dict[str, list[Path]] = {}
    for run in runs:
        found = find_matrix(run.matrix, matrix_dir, index)
        if found != run.matrix:
            run = replace(run, matrix=found)
        problem = _check(run)
        if problem:
            errors.append(RowError(run.source, problem))
        else:
            good.append(run)
    return good, errors
