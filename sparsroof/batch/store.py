"""The batch result store: one SQLite file, safe to interrupt and to read while written.

Tables (the schema version is in ``meta``):

- ``matrices``: one row per matrix file identity (path, archive member, size, mtime) and
  parameter key (kernel, widths, precision, ... hashed), with the matrix summary, its
  structure features as JSON and its class label (NULL where no classifier ran).
- ``results``: one row per matrix x spec x kernel x width x storage x model, with the
  spec's identity (name and a hash of its content), the main figures as columns and the
  whole flattened record as JSON.
- ``failures``: what could not be analysed and why (kind and reason).
- ``runs``: one row per batch invocation (the tool version and command line).

Everything one matrix produced is written in one transaction, in WAL mode with full
synchronisation: a killed process or a power cut loses at most the matrix being written
and never leaves half of one; readers may query the file while a batch writes to it.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .._version import __version__
from ..errors import StoreError

__all__ = [
    "STORE_SCHEMA",
    "RETRIED_KINDS",
    "FileKey",
    "SpecResult",
    "MatrixResult",
    "Store",
    "json_safe",
]

STORE_SCHEMA = 1
#: failure kinds tried again by a re-run (a file that cannot be read is not, until it changes)
RETRIED_KINDS = ("timeout", "crash", "memory", "bug")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started REAL, tool_version TEXT, argv TEXT);
CREATE TABLE IF NOT EXISTS matrices (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL, member TEXT NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, params TEXT NOT NULL, config TEXT,
    name TEXT, rows INTEGER, cols INTEGER, stored_entries INTEGER,
    numeric_nonzeros INTEGER, density REAL, field TEXT, symmetry TEXT,
    structure TEXT, class TEXT, verdict TEXT,
    tool_version TEXT, run_id INTEGER, seconds REAL, finished REAL,
    UNIQUE (path, member, size, mtime_ns, params));
CREATE TABLE IF NOT EXISTS results (
    matrix_id INTEGER NOT NULL REFERENCES matrices(id) ON DELETE CASCADE,
    spec TEXT NOT NULL, spec_hash TEXT NOT NULL, device TEXT,
    kernel TEXT, width INTEGER, storage TEXT, model TEXT,
    intensity REAL, attainable_flops REAL, peak_flops REAL, bandwidth REAL,
    sol_s REAL, bound TEXT, record TEXT NOT NULL,
    tool_version TEXT, run_id INTEGER);
CREATE INDEX IF NOT EXISTS results_matrix ON results (matrix_id, spec_hash);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL, member TEXT NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, params TEXT NOT NULL,
    name TEXT, kind TEXT NOT NULL, reason TEXT NOT NULL,
    tool_version TEXT, run_id INTEGER, at REAL,
    UNIQUE (path, member, size, mtime_ns, params));
"""



@dataclass(frozen=True)
class FileKey:
    """Identity of one matrix file with the parameters it is analysed under."""

    path: str
    member: str
    size: int
    mtime_ns: int
    params: str

    def as_tuple(self) -> tuple[str, str, int, int, str]:
        return (self.path, self.member, self.size, self.mtime_ns, self.params)


@dataclass(frozen=True)
class SpecResult:
    """The rows one spec produced for one matrix."""

    spec: str
    spec_hash: str
    device: str
    records: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class MatrixResult:
    """Everything the analysis of one matrix produced, ready to store."""

    key: FileKey
    config: dict[str, Any]
    info: dict[str, Any]
    structure: dict[str, Any]
    class_label: str | None
    verdict: dict[str, Any] | None
    specs: tuple[SpecResult, ...]
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def json_safe(value: Any) -> Any:
    """Plain JSON types for numpy scalars and arrays, tuples, sets and non-finite floats.

    >>> import numpy as np
    >>> json_safe({"a": np.int64(3), "b": (np.float32(0.5), float("nan")), "c": {1}})
    {'a': 3, 'b': [0.5, None], 'c': [1]}
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return json_safe(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_RESULT_COLUMNS = ("kernel", "width", "storage", "model", "intensity_flop_per_byte",
                   "attainable_flops", "peak_flops", "bandwidth", "sol_s", "bound")


class Store:
    """A result store on disk; use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly and not self.path.is_file():
            raise StoreError(f"{self.path}: no such result store")
        try:
            self.db = self._connect(readonly)
            self.db.execute("PRAGMA foreign_keys = ON")
            self._check_intact()
            if not readonly:
                self._check_ours()
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = FULL")
                self.db.executescript(_SCHEMA)
                self._check_version()
            elif not self._has_tables():
                raise StoreError(f"{self.path}: not a sparsroof result store")
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path}: cannot open result store: {err}") from None

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        if not readonly:
            return sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            # a WAL store on a read-only file system cannot make its -shm file: read it as
            # an immutable file (nothing else can be writing there either)
            db.close()
            return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)

    def _check_intact(self) -> None:
        """Refuse a damaged database file (torn or overwritten pages) before using it."""
        problems = [r[0] for r in self.db.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise StoreError(f"{self.path}: the result store is damaged ({problems[0]}); "
                             f"move it aside and run the batch again into a new --store")

    def _check_ours(self) -> None:
        """Refuse to add tables to some other program's SQLite database."""
        names = {r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if names and "meta" not in names:
            raise StoreError(f"{self.path}: an SQLite database of something else, not a "
                             f"sparsroof result store; give a new --store file")

    def _has_tables(self) -> bool:
        names = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        return {"matrices", "results", "failures"} <= names

    def _check_version(self) -> None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(STORE_SCHEMA),))
        elif int(row[0]) != STORE_SCHEMA:
            raise StoreError(f"{self.path}: store schema {row[0]}, this sparsroof writes "
                             f"{STORE_SCHEMA}; use a new --store file")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def begin_run(self, argv: Sequence[str]) -> int:
        cur = self.db.execute("INSERT INTO runs (started, tool_version, argv) VALUES (?, ?, ?)",
                              (time.time(), __version__, json.dumps(list(argv))))
        return int(cur.lastrowid or 0)

    def done_specs(self, key: FileKey) -> set[str]:
        """Hashes of the specs already analysed for ``key``."""
        rows = self.db.execute(
            "SELECT DISTINCT r.spec_hash FROM matrices m JOIN results r ON r.matrix_id = m.id "
            "WHERE m.path = ? AND m.member = ? AND m.size = ? AND m.mtime_ns = ? "
            "AND m.params = ?", key.as_tuple())
        return {r[0] for r in rows}

    def failure(self, key: FileKey) -> tuple[str, str] | None:
        """(kind, reason) of a recorded failure for ``key``, or None."""
        row = self.db.execute(
            "SELECT kind, reason FROM failures WHERE path = ? AND member = ? AND size = ? "
            "AND mtime_ns = ? AND params = ?", key.as_tuple()).fetchone()
        return (row[0], row[1]) if row else None

    def header_of(self, key: FileKey) -> tuple[int, int] | None:
        """(rows, stored entries) recorded for ``key``, or None."""
        row = self.db.execute(
            "SELECT rows, stored_entries FROM matrices WHERE path = ? AND member = ? "
            "AND size = ? AND mtime_ns = ? AND params = ?", key.as_tuple()).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def _forget_stale(self, key: FileKey) -> None:
        """Drop rows of the same file and parameters recorded for an older version of it."""
        stale = ("path = ? AND member = ? AND params = ? AND NOT (size = ? AND mtime_ns = ?)")
        args = (key.path, key.member, key.params, key.size, key.mtime_ns)
        self.db.execute(f"DELETE FROM matrices WHERE {stale}", args)
        self.db.execute(f"DELETE FROM failures WHERE {stale}", args)

    def _matrix_id(self, r: MatrixResult, run_id: int) -> int:
        info, k = r.info, r.key
        self.db.execute(
            "INSERT OR IGNORE INTO matrices (path, member, size, mtime_ns, params, config, name,"
            " rows, cols, stored_entries, numeric_nonzeros, density, field, symmetry,"
            " structure, class, verdict, tool_version, run_id, seconds, finished)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*k.as_tuple(), json.dumps(r.config), info["name"], info["rows"], info["cols"],
             info["stored_entries"], info["numeric_nonzeros"], info["density"],
             info.get("field"), info.get("symmetry"), json.dumps(json_safe(r.structure)),
             r.class_label, json.dumps(json_safe(r.verdict)) if r.verdict else None,
             __version__, run_id, r.seconds, time.time()))
        row = self.db.execute(
            "SELECT id FROM matrices WHERE path = ? AND member = ? AND size = ? AND "
            "mtime_ns = ? AND params = ?", k.as_tuple()).fetchone()
        return int(row[0])

    def save(self, result: MatrixResult, run_id: int) -> None:
        """Store one matrix's rows for every spec, all in one transaction."""
        with self._transaction():
            self._forget_stale(result.key)
            matrix_id = self._matrix_id(result, run_id)
            self.db.execute(
                "DELETE FROM failures WHERE path = ? AND member = ? AND size = ? "
                "AND mtime_ns = ? AND params = ?", result.key.as_tuple())
            for spec in result.specs:
                self.db.execute("DELETE FROM results WHERE matrix_id = ? AND spec_hash = ?",
                                (matrix_id, spec.spec_hash))
                self.db.executemany(
                    "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?)",
                    [(matrix_id, spec.spec, spec.spec_hash, spec.device,
                      *(rec.get(c) for c in _RESULT_COLUMNS),
                      json.dumps(json_safe(rec)), __version__, run_id)
                     for rec in spec.records])

    def record_failure(self, key: FileKey, name: str, kind: str, reason: str,
                       run_id: int) -> None:
        """Record (or replace) why ``key`` could not be analysed."""
        with self._transaction():
            self._forget_stale(key)
            self.db.execute(
                "INSERT OR REPLACE INTO failures (path, member, size, mtime_ns, params, name,"
                " kind, reason, tool_version, run_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?)", (*key.as_tuple(), name, kind, reason, __version__, run_id,
                          time.time()))

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db, self.path)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every result row joined with its matrix: flat dicts for export."""
        query = (
            "SELECT m.name, m.path, m.member, m.class, m.rows, m.cols, m.stored_entries,"
            " m.numeric_nonzeros, m.density, m.structure, r.spec, r.spec_hash, r.device,"
            " r.record, r.tool_version, r.run_id FROM results r"
            " JOIN matrices m ON m.id = r.matrix_id ORDER BY m.path, m.member, r.rowid")
        for row in self.db.execute(query):
            (name, path, member, label, rows, cols, stored, numeric, density, structure,
             spec, spec_hash, device, record, version, run_id) = row
            out: dict[str, Any] = {
                "matrix": name, "path": path, "member": member, "class": label,
                "rows": rows, "cols": cols, "stored_entries": stored,
                "numeric_nonzeros": numeric, "density": density,
                "spec": spec, "spec_hash": spec_hash, "device": device}
            for k, v in json.loads(record).items():
                out.setdefault(k, v)
            out["structure"] = json.loads(structure) if structure else {}
            out.update({"tool_version": version, "run_id": run_id})
            yield out

    def failures(self) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT name, path, member, kind, reason, tool_version, run_id "
                              "FROM failures ORDER BY path, member")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only query (for reports)."""
        return list(self.db.execute(sql, tuple(args)))


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back when the block raises; a database that
    cannot be written (disk full, damaged, read-only) becomes a :class:`StoreError`.
    What was committed before stays in the store."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    def _failed(self, err: BaseException) -> StoreError:
        return StoreError(f"{self.path}: cannot write to the result store: {err} (the "
                          f"results saved so far are kept; run again to go on)")

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as err:
            raise self._failed(err) from None

    def __exit__(self, exc_type: object, exc: BaseException | None, *rest: object) -> None:
        try:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        except sqlite3.DatabaseError as err:
            if exc is None:
                raise self._failed(err) from None
        if isinstance(exc, sqlite3.DatabaseError):
            raise self._failed(exc) from None
