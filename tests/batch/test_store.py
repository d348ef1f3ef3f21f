from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sparsroof.batch.claims import Owner
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


def _fill(path: Path, count: int, rows_per_spec: int = 20) -> None:
    with Store(path) as store:
        for i in range(count):
            store.save(_result(_key(params=f"p{i}"), rows_per_spec=rows_per_spec), run_id=1)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _overwrite(path: Path, first: int, last: int) -> None:
    """Overwrite bytes first..last of ``path`` (page headers included) with 0xa5."""
    data = bytearray(path.read_bytes())
    data[first:last] = b"\xa5" * (last - first)
    path.write_bytes(bytes(data))


def _page_of(path: Path, name: str) -> tuple[int, int]:
    """(first byte, page size) of the root page of table or index ``name``."""
    with sqlite3.connect(path) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                          (name,)).fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    return (root - 1) * size, size


def test_a_large_store_opens_without_reading_every_page_unless_a_writer_died(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.batch.store as store_module

    path = tmp_path / "r.db"
    _fill(path, 40)
    monkeypatch.setattr(store_module, "CHECKED_SIZE", 0)  # every store counts as large
    first, size = _page_of(path, "results_matrix")
    _overwrite(path, first, first + size)  # damage the results index only
    with Store(path, readonly=True) as store:  # the last writer closed cleanly: no check
        assert _count(store, "matrices") == 40
        with pytest.raises(StoreError, match="the result store is damaged") as info:
            store.query("SELECT COUNT(*) FROM results WHERE matrix_id = 3 "
                        "AND spec_hash = 'h-s1'")
        assert "\n" not in str(info.value) and "r.db" in str(info.value)
    child = subprocess.Popen(["true"])  # a writer whose process is gone did not close it
    child.wait()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO writers VALUES ('gone', ?, ?, 0, ?)",
                   (Owner().host, child.pid, time.time()))
    for readonly in (True, False):
        with pytest.raises(StoreError, match="damaged"):
            Store(path, readonly=readonly)


def test_damage_met_while_writing_is_one_line_and_keeps_what_was_committed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.batch.store as store_module

    path = tmp_path / "r.db"
    _fill(path, 40)
    monkeypatch.setattr(store_module, "CHECKED_SIZE", 0)
    first, size = _page_of(path, "sqlite_autoindex_matrices_1")  # the (file, params) key
    _overwrite(path, first, first + size)
    with pytest.raises(StoreError) as info, Store(path) as store:
        store.save(_result(_key(mtime=99)), run_id=2)
    message = str(info.value)
    assert message.startswith(f"{path}: the result store is damaged (database disk image "
                              "is malformed)") and "\n" not in message
    assert "move it aside" in message
    with sqlite3.connect(path) as db:  # not a clean close: once this process has gone,
        # the next opening checks every page
        assert db.execute("SELECT owner FROM writers").fetchall() == [(store.owner.token,)]
    with sqlite3.connect(path) as db:  # the 40 committed matrices are still in the file
        assert db.execute("SELECT COUNT(name) FROM matrices NOT INDEXED").fetchone()[0] == 40
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 40 * 20


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sparsroof", *args], capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).parents[2])


@pytest.mark.parametrize("count", [40, 700], ids=["small", "large"])
def test_a_store_damaged_in_the_middle_gives_one_line_to_report_and_batch(
        tmp_path: Path, count: int) -> None:
    """A small store is refused on opening; in a large one (past CHECKED_SIZE) the damage
    is met where a read or write reaches it: either way one line, exit 1."""
    from sparsroof.batch.store import CHECKED_SIZE
    from sparsroof.matrix.generate import stencil_2d, write

    path = tmp_path / "r.db"
    _fill(path, count, rows_per_spec=100)
    size = path.stat().st_size
    assert (size > CHECKED_SIZE) == (count == 700)
    _overwrite(path, int(size * 0.45), int(size * 0.55))
    folder = tmp_path / "m"
    folder.mkdir()
    write(stencil_2d(30), folder / "lap.mtx")
    batch = ["batch", str(folder), "--store", str(path), "--export", str(tmp_path / "o.csv")]
    for n, args in enumerate((["report", str(path)], batch, batch)):
        out = _cli(*args)
        assert out.returncode == 1, out.stderr
        *before, last = out.stderr.splitlines()
        assert last.startswith(f"sparsroof: error: {path}: the result store is damaged")
        assert "Traceback" not in out.stderr
        if n == 1 and count == 700:  # met by the export, after the analysis
            assert len(before) == 1 and "1 analysed" in before[0]
        else:  # met on opening (the last batch left its mark), or by the report's read
            assert before == []
