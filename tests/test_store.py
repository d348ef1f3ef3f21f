from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsroof.batch.store import FileKey, MatrixResult, SpecResult, Store
from sparsroof.errors import StoreError


def _key(mtime: int = 1, params: str = "p") -> FileKey:
    return FileKey("/m/a.mtx", "", 100, mtime, params)


def _result(key: FileKey, specs: tuple[str, ...] = ("s1",), rows_per_spec: int = 2
            ) -> MatrixResult:
    info = {"name": "a", "rows": 3, "cols": 3, "stored_entries": 5, "numeric_nonzeros": 5,
            "density": 5 / 9, "field": "real", "symmetry": "general"}
    records = tuple({"kernel": "spmv", "width": 1, "storage": "csr", "model": f"m{i}",
                     "sol_s": 1e-6 * (i + 1), "bound": "memory", "attainable_flops": 1e9,
                     "peak_flops": 1e13, "intensity_flop_per_byte": 0.1,
                     "bytes_total": np.float64(100.0)} for i in range(rows_per_spec))
    return MatrixResult(key, {"kernel": "spmv"}, info,
                        {"rows": np.int64(3), "degrees": np.array([1, 2, 2])}, None, None,
                        tuple(SpecResult(s, f"h-{s}", "dev", records) for s in specs), 0.01)


def _count(store: Store, table: str) -> int:
    return int(store.query(f"SELECT COUNT(*) FROM {table}")[0][0])


def test_save_then_rows_round_trip(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        assert store.query("PRAGMA journal_mode")[0][0] == "wal"
        key = _key()
        assert store.done_specs(key) == set()
        store.save(_result(key, specs=("s1", "s2")), run_id=1)
        assert store.done_specs(key) == {"h-s1", "h-s2"}
        assert store.done_specs(_key(params="other")) == set()
        rows = list(store.rows())
    assert len(rows) == 4  # 2 specs x 2 models
    assert rows[0]["structure"] == {"rows": 3, "degrees": [1, 2, 2]}
    assert rows[0]["bytes_total"] == 100.0 and rows[0]["spec_hash"] == "h-s1"
    assert rows[0]["class"] is None and rows[0]["tool_version"]


def test_a_changed_file_replaces_its_old_rows(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        store.save(_result(_key(mtime=1)), run_id=1)
        store.record_failure(_key(mtime=1, params="q"), "a", "error", "bad", run_id=1)
        store.save(_result(_key(mtime=2)), run_id=2)
        assert store.done_specs(_key(mtime=1)) == set()
        assert _count(store, "matrices") == 1 and _count(store, "results") == 2
        assert _count(store, "failures") == 1  # other parameters: kept


def test_success_clears_an_earlier_failure(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        store.record_failure(_key(), "a", "timeout", "timed out after 1 s", run_id=1)
        assert store.failure(_key()) == ("timeout", "timed out after 1 s")
        store.save(_result(_key()), run_id=2)
        assert store.failure(_key()) is None


def test_a_save_that_fails_half_way_leaves_nothing(tmp_path: Path) -> None:
    bad = _result(_key())
    bad.specs[0].records[1]["oops"] = object()  # not JSON: the second row cannot be written
    with Store(tmp_path / "r.db") as store:
        with pytest.raises(TypeError):
            store.save(bad, run_id=1)
        assert _count(store, "matrices") == 0 and _count(store, "results") == 0
        store.save(_result(_key()), run_id=1)  # the store is still usable
        assert _count(store, "results") == 2


def test_readers_see_committed_rows_while_a_writer_is_busy(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        store.save(_result(_key()), run_id=1)
        store.db.execute("BEGIN IMMEDIATE")  # a writer in the middle of a transaction
        store.db.execute("DELETE FROM results")
        with Store(tmp_path / "r.db", readonly=True) as reader:
            assert _count(reader, "results") == 2
        store.db.execute("ROLLBACK")


def test_bad_stores_are_reported(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such result store"):
        Store(tmp_path / "missing.db", readonly=True)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="not a sparsroof result store"):
        Store(other, readonly=True)
    text = tmp_path / "text.db"
    text.write_text("hello, not a database at all " * 10)
    with pytest.raises(StoreError, match="cannot open result store"):
        Store(text)


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(StoreError, match="something else, not a sparsroof result store"):
        Store(path)
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert tables == {"people"}


def test_a_store_with_damaged_pages_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store(path) as store:
        for mtime in range(40):
            store.save(_result(_key(mtime=mtime), rows_per_spec=20), run_id=1)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
    assert pages > 4
    data = bytearray(path.read_bytes())
    data[2 * page + 8: 4 * page - 8] = b"\xa5" * (2 * page - 16)  # pages 3 and 4
    path.write_bytes(bytes(data))
    for readonly in (False, True):
        with pytest.raises(StoreError, match="r.db: ") as info:
            Store(path, readonly=readonly)
        assert "\n" not in str(info.value)


def test_a_full_disk_is_a_clean_error_and_keeps_what_was_saved(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store(path) as store:
        store.save(_result(_key(mtime=0)), run_id=1)
        used = store.query("PRAGMA page_count")[0][0]
        store.query(f"PRAGMA max_page_count = {used}")  # no room for another page
        with pytest.raises(StoreError, match="cannot write to the result store: database "
                                             "or disk is full"):
            for mtime in range(1, 50):
                store.save(_result(_key(mtime=mtime), rows_per_spec=50), run_id=1)
    with Store(path, readonly=True) as store:
        assert store.done_specs(_key(mtime=0)) == {"h-s1"}


def test_a_store_on_a_read_only_file_system_is_readable(tmp_path: Path) -> None:
    # a read-only bind mount in a private mount namespace (needs root and unshare)
    folder = tmp_path / "ro"
    folder.mkdir()
    with Store(folder / "r.db") as store:
        store.save(_result(_key()), run_id=1)
    read = (f"from sparsroof.batch.store import Store, FileKey\n"
            f"s = Store({str(folder / 'r.db')!r}, readonly=True)\n"
            f"print(sorted(s.done_specs(FileKey('/m/a.mtx', '', 100, 1, 'p'))))\n")
    script = (f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && "
              f"! touch {folder}/x 2>/dev/null && exec {sys.executable} -c \"$0\"")
    try:
        out = subprocess.run(["unshare", "-m", "sh", "-c", script, read],
                             capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        pytest.skip("no unshare here")
    if "mount" in out.stderr or "unshare" in out.stderr or out.returncode == 1 and \
            not out.stdout and "Traceback" not in out.stderr and "Error" not in out.stderr:
        pytest.skip(f"cannot make a read-only mount here: {out.stderr.strip()[:80]}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['h-s1']"
