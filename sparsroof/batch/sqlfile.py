"""The SQLite file under a result store: connecting, transactions, damage, one-line errors.

SQLite reports a damaged page (torn by a crash on a disk that lied about syncing, or
overwritten) as ``database disk image is malformed`` when a statement meets it. Every
read and write of the store goes through :func:`reading` or :class:`Transaction`, which
turn that, and every other SQLite error, into one :class:`StoreError` naming the file.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from ..errors import StoreError

__all__ = ["connect", "damaged", "store_error", "reading", "Transaction", "table_names",
           "check_pages", "size_bytes"]


def connect(path: Path, readonly: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit). A path that is there
    but not a regular file (a pipe, a device) is refused: SQLite would wait on it, or
    call it a damaged disk."""
    try:
        regular = not path.exists() or path.is_file()
    except OSError:
        regular = True  # SQLite says what is wrong with it
    if not regular:
        raise StoreError(f"{path}: not a result store: not a regular file")
    if not readonly:
        return sqlite3.connect(str(path), timeout=30, isolation_level=None)
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError as err:
        if "locked" in str(err):
            db.close()
            raise
        # a WAL store on a read-only file system cannot make its -shm file: read it as
        # an immutable file (nothing else can be writing there either)
        db.close()
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)


def _damaged(err: sqlite3.DatabaseError) -> bool:
    return getattr(err, "sqlite_errorname", "").startswith("SQLITE_CORRUPT") \
        or "malformed" in str(err)


def damaged(path: Path, problem: str) -> StoreError:
    """The one line for a store with damaged pages: nothing in it is changed."""
    return StoreError(f"{path}: the result store is damaged ({problem}); what was committed "
                      f"before is kept in it: move it aside and run the batch again into a "
                      f"new --store ('sqlite3 {path.name} .recover' salvages the rows it "
                      f"still holds)")


def store_error(path: Path, err: sqlite3.DatabaseError, doing: str) -> StoreError:
    """One line for an SQLite error met while ``doing`` something with the store at
    ``path``; damaged pages get their own advice."""
    if _damaged(err):
        return damaged(path, str(err))
    if doing == "cannot write to the result store":
        return StoreError(f"{path}: {doing}: {err} (the results saved so far are kept; run "
                          f"again to go on)")
    return StoreError(f"{path}: {doing}: {err}")


@contextlib.contextmanager
def reading(path: Path) -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as err:
        raise store_error(path, err, "cannot read the result store") from None


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back when the block raises; a database that
    cannot be written (disk full, damaged, read-only) becomes a :class:`StoreError`.
    What was committed before stays in the store."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db, self.path = db, path

    def _failed(self, err: sqlite3.DatabaseError) -> StoreError:
        return store_error(self.path, err, "cannot write to the result store")

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


def table_names(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def size_bytes(db: sqlite3.Connection) -> int:
    """Bytes of the main database file (from its header: nothing else is read)."""
    return int(db.execute("PRAGMA page_count").fetchone()[0]
               * db.execute("PRAGMA page_size").fetchone()[0])


def check_pages(db: sqlite3.Connection, path: Path) -> None:
    """Read every page (``PRAGMA quick_check``); refuse a damaged file."""
    problems = [r[0] for r in db.execute("PRAGMA quick_check(1)")]
    if problems != ["ok"]:
        first = problems[0].strip().splitlines()[0]  # one problem may span lines
        raise damaged(path, first)
