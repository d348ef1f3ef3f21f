from __future__ import annotations

import sqlite3
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
