"""Who is working on a result store: claims on matrices and open writers.

Several ``batch`` processes may share one store. Before analysing a matrix a process
*claims* it: in one ``BEGIN IMMEDIATE`` transaction it checks that the matrix is still
not stored, then inserts a row into ``claims`` (unique per matrix file and parameters)
naming itself by host, process id and a random token. Another process that finds a
claim leaves the matrix alone while its owner lives, and takes the claim over when the
owner is dead (the same host, and no such process) or stale (its heartbeat is older than
:data:`LEASE_S`, which is how a claim of another host, or of a reused process id, ends).
A live owner refreshes the heartbeats of its claims every :data:`HEARTBEAT_S` from a
thread, so a matrix that takes hours is not taken from it. A stored result or failure
removes its claim in the same transaction that writes it.

``writers`` holds one row per open, writing :class:`~sparsroof.batch.store.Store`; a
clean close deletes it. A row whose owner is dead or stale says that a writer stopped
without closing (``kill -9``, a power cut), which is when the store is checked page by
page on opening.

``claim_log`` keeps one row per event (claim, take-over, analysed, failed) with the
process that caused it, so it can be seen which process analysed what, and that nothing
was analysed twice.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LEASE_S", "HEARTBEAT_S", "SCHEMA", "Owner", "owner_state", "pid_alive",
           "Heartbeat"]

#: seconds after its last heartbeat when a claim or a writer counts as stale
LEASE_S = 600.0
#: seconds between two heartbeats of a live process (well inside the lease)
HEARTBEAT_S = 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    path TEXT NOT NULL, member TEXT NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, params TEXT NOT NULL,
    owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
    started REAL NOT NULL, heartbeat REAL NOT NULL,
    UNIQUE (path, member, size, mtime_ns, params));
CREATE INDEX IF NOT EXISTS claims_owner ON claims (owner);
CREATE TABLE IF NOT EXISTS writers (
    owner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL,
    started REAL NOT NULL, heartbeat REAL NOT NULL);
CREATE TABLE IF NOT EXISTS claim_log (
    at REAL NOT NULL, event TEXT NOT NULL, owner TEXT NOT NULL, host TEXT NOT NULL,
    pid INTEGER NOT NULL, run_id INTEGER,
    path TEXT NOT NULL, member TEXT NOT NULL, params TEXT NOT NULL, detail TEXT);
"""


@dataclass(frozen=True)
class Owner:
    """One writing process (one open store): host, process id and a unique token."""

    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.time)


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (a zombie counts as dead).

    >>> pid_alive(os.getpid()), pid_alive(2**22 + 1)
    (True, False)
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def owner_state(host: str, pid: int, heartbeat: float, now: float | None = None) -> str:
    """``live``, ``dead`` (this host, no such process) or ``stale`` (no heartbeat for
    :data:`LEASE_S`) of the owner of a claim or writer row.

    >>> owner_state(socket.gethostname(), os.getpid(), time.time())
    'live'
    >>> owner_state("elsewhere", 1, time.time() - LEASE_S - 1)
    'stale'
    """
    now = time.time() if now is None else now
    if host == socket.gethostname() and not pid_alive(pid):
        return "dead"
    return "stale" if now - heartbeat > LEASE_S else "live"


class Heartbeat:
    """A thread that refreshes the heartbeat of ``owner``'s writer row and claims every
    :data:`HEARTBEAT_S`, on its own connection, until :meth:`stop`."""

    def __init__(self, path: Path, owner: Owner, every: float = HEARTBEAT_S) -> None:
        self.path, self.owner, self.every = path, owner, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="store-heartbeat",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.beat()

    def beat(self) -> None:
        """Refresh now; a store that cannot be written is left to the main thread to
        report (its next write meets the same problem)."""
        try:
            db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        except sqlite3.Error:
            return
        try:
            now, token = time.time(), self.owner.token
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE writers SET heartbeat = ? WHERE owner = ?", (now, token))
            db.execute("UPDATE claims SET heartbeat = ? WHERE owner = ?", (now, token))
            db.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        finally:
            db.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def log(db: sqlite3.Connection, owner: Owner, event: str, key: Any, run_id: int | None,
        detail: str = "") -> None:
    """Append one event about matrix ``key`` (a FileKey) to ``claim_log``."""
    db.execute("INSERT INTO claim_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (time.time(), event, owner.token, owner.host, owner.pid, run_id, key.path,
                key.member, key.params, detail or None))
