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
- ``claims``, ``writers``, ``claim_log``: which process works on which matrix, so that
  several batches can share the store (see :mod:`sparsroof.batch.claims`).

Everything one matrix produced is written in one transaction, in WAL mode with full
synchronisation: a killed process or a power cut loses at most the matrix being written
and never leaves half of one; readers may query the file while a batch writes to it.
A matrix's rows are written once: a second analysis of the same file, parameters and
spec keeps the rows stored first.

Opening checks every page (``PRAGMA quick_check``) only where that is cheap or needed:
for a store of at most :data:`CHECKED_SIZE` bytes, or when a writer did not close the
store cleanly. Otherwise damage is found where it is met: any read or write that meets a
damaged page ends in one :class:`StoreError` naming the store, and what was committed
before stays in it.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import StoreError
from . import claims
from .claims import Heartbeat, Owner, owner_state
from .records import FileKey, MatrixResult, SpecResult, json_safe
from .sqlfile import (
    Transaction,
    check_pages,
    connect,
    reading,
    size_bytes,
    store_error,
    table_names,
)

__all__ = [
    "STORE_SCHEMA",
    "CHECKED_SIZE",
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
#: a store of at most this many bytes has every page checked on each opening (0.3 s
#: more from a cold cache at this size); a larger one only after a writer did not close
#: it cleanly
CHECKED_SIZE = 16 * 2**20
#: seconds an opening waits for other processes opening or converting the same store
OPEN_WAIT_S = 30.0

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
""" + claims.SCHEMA

_KEY = "path = ? AND member = ? AND size = ? AND mtime_ns = ? AND params = ?"

_RESULT_COLUMNS = ("kernel", "width", "storage", "model", "intensity_flop_per_byte",
                   "attainable_flops", "peak_flops", "bandwidth", "sol_s", "bound")


def _busy(err: sqlite3.OperationalError) -> bool:
    return getattr(err, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) \
        or "locked" in str(err)


class Store:
    """A result store on disk; use as a context manager or call :meth:`close`.

    Opened for writing, it registers itself in ``writers`` (removed by a clean close) and
    keeps its claims alive from a heartbeat thread until closed.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.owner = Owner()
        self._heartbeat: Heartbeat | None = None
        self._closed = False
        if readonly and not self.path.is_file():
            raise StoreError(f"{self.path}: no such result store")
        try:
            self.db = connect(self.path, readonly)
        except sqlite3.DatabaseError as err:
            raise store_error(self.path, err, "cannot open result store") from None
        try:
            self._open(readonly)
        except BaseException as err:
            self.db.close()
            if isinstance(err, sqlite3.DatabaseError):
                raise store_error(self.path, err, "cannot open result store") from None
            raise
        if not readonly:
            self._heartbeat = Heartbeat(self.path, self.owner)

    def _open(self, readonly: bool) -> None:
        self.db.execute("PRAGMA foreign_keys = ON")
        if readonly:
            if not self._has_tables():
                raise StoreError(f"{self.path}: not a sparsroof result store")
            self._check_intact()
            return
        # SQLite answers "database is locked" at once, without waiting, to a change of
        # journal mode while another process opens the same new file, and to a write
        # that follows a stale read: several batches started together retry here
        deadline = time.monotonic() + OPEN_WAIT_S
        while True:
            try:
                self._prepare()
                return
            except sqlite3.OperationalError as err:
                if not _busy(err) or time.monotonic() > deadline:
                    raise
                time.sleep(random.uniform(0.01, 0.05))

    def _prepare(self) -> None:
        """Check the file, make it a WAL store with this schema and register as a writer;
        the schema and the registration are one transaction."""
        self._check_ours()
        unclean = self._check_intact()
        if self.db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self._check_version()
            # the pages were checked: those writers' deaths need no second check
            self.db.executemany("DELETE FROM writers WHERE owner = ?",
                                [(token,) for token in unclean])
            o = self.owner
            self.db.execute("INSERT INTO writers VALUES (?, ?, ?, ?, ?)",
                            (o.token, o.host, o.pid, o.started, time.time()))
            self.db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise

    def _unclean_writers(self) -> list[str]:
        """Tokens of writers that did not close the store: dead or stale processes."""
        if "writers" not in table_names(self.db):
            return []
        rows = self.db.execute("SELECT owner, host, pid, heartbeat FROM writers")
        return [token for token, host, pid, beat in rows
                if owner_state(host, pid, beat) != "live"]

    def _check_intact(self) -> list[str]:
        """Refuse a damaged database file (torn or overwritten pages) before using it:
        every page is checked in a small store, and in any store that a writer did not
        close cleanly. Returns the tokens of those writers."""
        unclean = self._unclean_writers()
        if size_bytes(self.db) <= CHECKED_SIZE or unclean:
            check_pages(self.db, self.path)
        return unclean

    def _check_ours(self) -> None:
        """Refuse to add tables to some other program's SQLite database."""
        names = table_names(self.db)
        if names and "meta" not in names:
            raise StoreError(f"{self.path}: an SQLite database of something else, not a "
                             f"sparsroof result store; give a new --store file")

    def _has_tables(self) -> bool:
        return {"matrices", "results", "failures"} <= table_names(self.db)

    def _check_version(self) -> None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(STORE_SCHEMA),))
        elif int(row[0]) != STORE_SCHEMA:
            raise StoreError(f"{self.path}: store schema {row[0]}, this sparsroof writes "
                             f"{STORE_SCHEMA}; use a new --store file")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        # after a store error (damage met, disk full) the next opening checks every page
        self.close(clean=not isinstance(exc, StoreError))

    def close(self, clean: bool = True) -> None:
        """Close; a clean close removes this process's unfinished claims and its writer
        row, so that the next opening need not check every page."""
        if self._closed:
            return
        self._closed = True
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        if clean and not self.readonly:
            # a store that cannot be written keeps the row: the next opening checks it
            with contextlib.suppress(StoreError), self._transaction():
                self.db.execute("DELETE FROM claims WHERE owner = ?", (self.owner.token,))
                self.db.execute("DELETE FROM writers WHERE owner = ?", (self.owner.token,))
            self._at_rest()
        self.db.close()

    def _at_rest(self) -> None:
        """Leave the store as one file in rollback-journal mode when no other process has
        it open (the next writer turns WAL on again): a reader opened read-only, as
        ``report`` opens it, cannot remove the -wal and -shm files a WAL store makes, and
        would leave them beside the user's store. Where another process has it open the
        mode stays WAL, without waiting."""
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("PRAGMA busy_timeout = 0")
            self.db.execute("PRAGMA journal_mode = DELETE").fetchone()

    def _reading(self) -> contextlib.AbstractContextManager[None]:
        return reading(self.path)

    def begin_run(self, argv: Sequence[str]) -> int:
        with self._transaction():
            cur = self.db.execute(
                "INSERT INTO runs (started, tool_version, argv) VALUES (?, ?, ?)",
                (time.time(), __version__, json.dumps(list(argv))))
        return int(cur.lastrowid or 0)

    def done_specs(self, key: FileKey) -> set[str]:
        """Hashes of the specs already analysed for ``key``."""
        with self._reading():
            rows = self.db.execute(
                "SELECT DISTINCT r.spec_hash FROM matrices m JOIN results r "
                "ON r.matrix_id = m.id WHERE m.path = ? AND m.member = ? AND m.size = ? "
                "AND m.mtime_ns = ? AND m.params = ?", key.as_tuple()).fetchall()
        return {r[0] for r in rows}

    def failure(self, key: FileKey) -> tuple[str, str] | None:
        """(kind, reason) of a recorded failure for ``key``, or None."""
        with self._reading():
            row = self.db.execute(f"SELECT kind, reason FROM failures WHERE {_KEY}",
                                  key.as_tuple()).fetchone()
        return (row[0], row[1]) if row else None

    def header_of(self, key: FileKey) -> tuple[int, int] | None:
        """(rows, stored entries) recorded for ``key``, or None."""
        with self._reading():
            row = self.db.execute(f"SELECT rows, stored_entries FROM matrices WHERE {_KEY}",
                                  key.as_tuple()).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def claim(self, key: FileKey, spec_hashes: Iterable[str], since: float,
              run_id: int | None = None) -> str:
        """Claim ``key`` for this process before analysing it on ``spec_hashes``.

        ``ours``: go ahead (a new claim, or one taken over from a dead or stale owner);
        ``busy``: a live process works on it; ``done``: it was stored meanwhile, or its
        failure recorded at or after ``since`` (by another process of this run's time).
        """
        with self._transaction():
            if set(spec_hashes) <= self.done_specs(key):
                return "done"
            failed = self.db.execute(f"SELECT at FROM failures WHERE {_KEY}",
                                     key.as_tuple()).fetchone()
            if failed and failed[0] is not None and failed[0] >= since:
                return "done"
            row = self.db.execute(f"SELECT owner, host, pid, heartbeat FROM claims "
                                  f"WHERE {_KEY}", key.as_tuple()).fetchone()
            if row is not None and row[0] == self.owner.token:
                return "ours"
            state = owner_state(*row[1:]) if row is not None else "free"
            if state == "live":
                return "busy"
            o, now = self.owner, time.time()
            self.db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key.as_tuple(), o.token, o.host, o.pid, now, now))
            detail = f"from pid {row[2]} on {row[1]} ({state})" if row is not None else ""
            claims.log(self.db, o, "take-over" if row is not None else "claim", key, run_id,
                       detail)
            return "ours"

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
        row = self.db.execute(f"SELECT id FROM matrices WHERE {_KEY}", k.as_tuple()).fetchone()
        return int(row[0])

    def save(self, result: MatrixResult, run_id: int) -> None:
        """Store one matrix's rows for every spec not stored yet, all in one transaction,
        and release this process's claim on it."""
        key = result.key
        with self._transaction():
            self._forget_stale(key)
            matrix_id = self._matrix_id(result, run_id)
            self.db.execute(f"DELETE FROM failures WHERE {_KEY}", key.as_tuple())
            kept = 0
            for spec in result.specs:
                if self.db.execute("SELECT 1 FROM results WHERE matrix_id = ? AND "
                                   "spec_hash = ? LIMIT 1", (matrix_id, spec.spec_hash)
                                   ).fetchone():
                    kept += 1  # stored by another process meanwhile: written once
                    continue
                self.db.executemany(
                    "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?)",
                    [(matrix_id, spec.spec, spec.spec_hash, spec.device,
                      *(rec.get(c) for c in _RESULT_COLUMNS),
                      json.dumps(json_safe(rec)), __version__, run_id)
                     for rec in spec.records])
            self.db.execute(f"DELETE FROM claims WHERE {_KEY} AND owner = ?",
                            (*key.as_tuple(), self.owner.token))
            claims.log(self.db, self.owner, "analysed", key, run_id,
                       f"{kept} of {len(result.specs)} specs were stored already" if kept
                       else "")

    def record_failure(self, key: FileKey, name: str, kind: str, reason: str,
                       run_id: int) -> None:
        """Record (or replace) why ``key`` could not be analysed, unless another process
        has taken the matrix over meanwhile (its result or failure will be recorded)."""
        with self._transaction():
            self._forget_stale(key)
            self.db.execute(f"DELETE FROM claims WHERE {_KEY} AND owner = ?",
                            (*key.as_tuple(), self.owner.token))
            if self.db.execute(f"SELECT 1 FROM claims WHERE {_KEY}", key.as_tuple()
                               ).fetchone():
                claims.log(self.db, self.owner, "failed", key, run_id,
                           f"{kind} (not recorded: another process took it over)")
                return
            self.db.execute(
                "INSERT OR REPLACE INTO failures (path, member, size, mtime_ns, params, name,"
                " kind, reason, tool_version, run_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?)", (*key.as_tuple(), name, kind, reason, __version__, run_id,
                          time.time()))
            claims.log(self.db, self.owner, "failed", key, run_id, kind)

    def _transaction(self) -> Transaction:
        return Transaction(self.db, self.path)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every result row joined with its matrix: flat dicts for export."""
        query = (
            "SELECT m.name, m.path, m.member, m.class, m.rows, m.cols, m.stored_entries,"
            " m.numeric_nonzeros, m.density, m.structure, r.spec, r.spec_hash, r.device,"
            " r.record, r.tool_version, r.run_id FROM results r"
            " JOIN matrices m ON m.id = r.matrix_id ORDER BY m.path, m.member, r.rowid")
        with self._reading():
            for row in self.db.execute(query):
                yield _flat_row(row)

    def failures(self) -> list[dict[str, Any]]:
        with self._reading():
            cur = self.db.execute("SELECT name, path, member, kind, reason, tool_version, "
                                  "run_id FROM failures ORDER BY path, member")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur]

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only query (for reports)."""
        with self._reading():
            return list(self.db.execute(sql, tuple(args)))


def _flat_row(row: tuple[Any, ...]) -> dict[str, Any]:
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
    return out

