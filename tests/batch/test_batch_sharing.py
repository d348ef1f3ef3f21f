"""Batches sharing one store: claims, take-overs, kill -9, results written once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparsroof.batch import claims
from sparsroof.batch.claims import LEASE_S, Heartbeat, Owner, owner_state
from sparsroof.batch.store import FileKey, Store

from ..conftest import ROOT, sparsroof
from .test_store import _result

COUNT = 20


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 five-point Laplacians of 10,000 to 84,100 rows (about 0.1 s each to analyse)."""
    from sparsroof.matrix.generate import stencil_2d, write

    root = tmp_path_factory.mktemp("grids")
    for i in range(COUNT):
        write(stencil_2d(100 + 10 * i), root / f"lap_{i:02d}.mtx")
    return root


def batch(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "sparsroof", "batch", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchall()


def analyses(db: Path) -> dict[str, list[int]]:
    """Matrix file name -> the pids that analysed it, from the claim log."""
    out: dict[str, list[int]] = {}
    for path, pid in rows(db, "SELECT path, pid FROM claim_log WHERE event = 'analysed'"):
        out.setdefault(Path(path).name, []).append(pid)
    return out


def test_two_batches_on_one_store_share_the_work(matrices: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    procs = [batch(str(matrices), "--store", str(db), "-j", "1") for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    done = analyses(db)
    assert sorted(done) == sorted(p.name for p in matrices.iterdir())
    assert all(len(pids) == 1 for pids in done.values()), done  # each exactly once
    by_pid = {pid for (pid,) in done.values()}
    # usually both did some of it; on a loaded machine one may finish before the other
    # starts, so only which processes did it is checked
    assert by_pid <= {p.pid for p in procs}
    analysed = [int(err.split(" analysed")[0].rsplit(" ", 1)[-1]) for _, err in outs]
    assert sum(analysed) == COUNT
    assert rows(db, "SELECT COUNT(*) FROM claims") == [(0,)]
    assert rows(db, "SELECT COUNT(*) FROM writers") == [(0,)]  # both closed cleanly
    report = sparsroof("report", str(db), "-O", "json", cwd=ROOT)
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    assert doc["matrices"] == COUNT
    per_matrix = rows(db, "SELECT COUNT(*) FROM results GROUP BY matrix_id")
    assert len(per_matrix) == COUNT and len(set(per_matrix)) == 1  # rows written once


def test_kill_9_loses_nothing_and_repeats_nothing(matrices: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    proc = batch(str(matrices), "--store", str(db), "-j", "2")
    deadline = time.monotonic() + 120
    done = held = 0
    while time.monotonic() < deadline and not (done >= 3 and held >= 1):
        time.sleep(0.02)
        try:
            done = rows(db, "SELECT COUNT(*) FROM matrices")[0][0]
            held = rows(db, "SELECT COUNT(*) FROM claims")[0][0]
        except sqlite3.OperationalError:  # not created yet, or busy
            continue
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = rows(db, "SELECT name, run_id, finished FROM matrices ORDER BY id")
    orphaned = rows(db, "SELECT path, pid FROM claims")
    assert 3 <= len(before) < COUNT, "the batch should be killed part-way"
    # the killed process held claims when it died (almost always: two workers keep claims
    # in flight; only the instant between one release and the next claim has none)
    assert all(pid == proc.pid for _, pid in orphaned)
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]
    # every committed matrix is whole: as many rows as every other
    per_matrix = {n for (n,) in rows(db, "SELECT COUNT(*) FROM results GROUP BY matrix_id")}
    assert len(per_matrix) == 1

    again = batch(str(matrices), "--store", str(db), "-j", "2")
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert f"{COUNT - len(before)} analysed" in err
    after = rows(db, "SELECT name, run_id, finished FROM matrices ORDER BY id")
    assert after[: len(before)] == before  # kept, not recomputed
    assert len(after) == COUNT
    done_by = analyses(db)
    assert len(done_by) == COUNT and all(len(p) == 1 for p in done_by.values())
    taken = rows(db, "SELECT path, pid, detail FROM claim_log WHERE event = 'take-over'")
    assert sorted(p for p, _, _ in taken) == sorted(p for p, _ in orphaned)
    assert all(pid == again.pid and f"from pid {proc.pid} " in detail and "(dead)" in detail
               for _, pid, detail in taken)
    assert rows(db, "SELECT COUNT(*) FROM claims") == [(0,)]
    assert rows(db, "SELECT COUNT(*) FROM writers") == [(0,)]
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]


KEY = FileKey("/m/a.mtx", "", 100, 1, "p")


def _claim_row(db: Path, host: str, pid: int, heartbeat: float) -> None:
    with sqlite3.connect(db) as con:
        con.execute("INSERT INTO claims VALUES (?, ?, ?, ?, ?, 'someone', ?, ?, ?, ?)",
                    (*KEY.as_tuple(), host, pid, heartbeat, heartbeat))


def _finished_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_live_claim_is_left_alone_and_a_stored_matrix_is_done(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store(path) as a, Store(path) as b:
        assert a.claim(KEY, ["h-s1"], since=0) == "ours"
        assert a.claim(KEY, ["h-s1"], since=0) == "ours"  # again: still ours
        assert b.claim(KEY, ["h-s1"], since=0) == "busy"  # a's process lives
        a.save(_result(KEY), run_id=1)
        assert a.query("SELECT COUNT(*) FROM claims") == [(0,)]
        assert b.claim(KEY, ["h-s1"], since=0) == "done"
        assert b.claim(KEY, ["h-s1", "h-s2"], since=0) == "ours"  # a spec still missing


def test_claims_of_dead_and_stale_owners_are_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    Store(path).close()
    now = time.time()
    for host, pid, beat, state in [
            (Owner().host, _finished_pid(), now, "dead"),
            ("elsewhere", 1, now - LEASE_S - 1, "stale"),
            ("elsewhere", 1, now, None)]:  # another host, fresh: alive as far as we know
        with sqlite3.connect(path) as con:
            con.execute("DELETE FROM claims")
        _claim_row(path, host, pid, beat)
        with Store(path) as store:
            got = store.claim(KEY, ["h-s1"], since=0, run_id=7)
            if state is None:
                assert got == "busy"
                continue
            assert got == "ours"
            (row,) = store.query("SELECT event, detail, run_id FROM claim_log "
                                 "ORDER BY rowid DESC LIMIT 1")
            assert row == ("take-over", f"from pid {pid} on {host} ({state})", 7)


def test_a_failure_recorded_by_another_process_during_the_run_counts_as_done(
        tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store(path) as a, Store(path) as b:
        a.record_failure(KEY, "a", "timeout", "timed out after 1 s", run_id=1)
        assert b.claim(KEY, ["h-s1"], since=time.time() + 10) == "ours"  # an old failure
        b.close()
        assert a.claim(KEY, ["h-s1"], since=0) == "done"  # recorded after this run began


def test_rows_are_written_once_per_matrix_and_spec(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store(path) as a, Store(path) as b:
        a.save(_result(KEY), run_id=1)
        b.save(_result(KEY, specs=("s1", "s2")), run_id=2)  # s1 again, and s2
        by_spec = dict(a.query("SELECT spec, group_concat(DISTINCT run_id) FROM results "
                               "GROUP BY spec"))
        log = a.query("SELECT detail FROM claim_log WHERE event = 'analysed' ORDER BY rowid")
    assert by_spec == {"s1": "1", "s2": "2"}
    assert log == [(None,), ("1 of 2 specs were stored already",)]


def test_a_failure_is_not_recorded_over_a_take_over(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store(path) as a, Store(path) as b:
        assert a.claim(KEY, ["h-s1"], since=0) == "ours"
        with sqlite3.connect(path) as con:  # a's claim went stale and b took it
            con.execute("UPDATE claims SET heartbeat = 0, host = 'elsewhere'")
        assert b.claim(KEY, ["h-s1"], since=0) == "ours"
        a.record_failure(KEY, "a", "timeout", "timed out after 1 s", run_id=1)
        assert a.failure(KEY) is None
        assert b.query("SELECT owner FROM claims") == [(b.owner.token,)]


def test_heartbeats_keep_claims_fresh_and_a_clean_close_removes_them(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = Store(path)
    store.claim(KEY, ["h-s1"], since=0)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE claims SET heartbeat = 0")
        con.execute("UPDATE writers SET heartbeat = 0")
    beat = Heartbeat(path, store.owner, every=0.05)
    deadline = time.monotonic() + 30
    while rows(path, "SELECT MIN(heartbeat) FROM claims")[0][0] == 0:
        assert time.monotonic() < deadline, "no heartbeat came"
        time.sleep(0.05)
    beat.stop()
    assert rows(path, "SELECT MIN(heartbeat) FROM writers")[0][0] > 0
    (host, pid, heartbeat), = rows(path, "SELECT host, pid, heartbeat FROM claims")
    assert owner_state(host, pid, heartbeat) == "live"
    store.close()
    assert rows(path, "SELECT COUNT(*) FROM claims") == [(0,)]
    assert rows(path, "SELECT COUNT(*) FROM writers") == [(0,)]


def test_the_claim_log_names_the_process(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        claims.log(store.db, store.owner, "claim", KEY, 3, "x")
        (row,) = store.query("SELECT event, host, pid, run_id, path, detail FROM claim_log")
    assert row == ("claim", store.owner.host, os.getpid(), 3, KEY.path, "x")


def test_many_openings_of_one_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    """Batches started together on a new store: the first creates the schema and the
    version row once, the others wait for it (sixteen at once, twenty new stores)."""
    import threading

    def open_close(path: Path, barrier: threading.Barrier, errors: list[str]) -> None:
        barrier.wait()
        try:
            Store(path).close()
        except Exception as err:  # noqa: BLE001 - collected and shown below
            errors.append(str(err))

    for i in range(20):
        path = tmp_path / f"s{i}.db"
        errors: list[str] = []
        barrier = threading.Barrier(16)
        threads = [threading.Thread(target=open_close, args=(path, barrier, errors))
                   for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        with Store(path, readonly=True) as store:
            rows = store.db.execute("SELECT count(*) FROM meta WHERE key = 'schema'")
            assert rows.fetchone()[0] == 1
            assert store.db.execute("SELECT count(*) FROM writers").fetchone()[0] == 0
