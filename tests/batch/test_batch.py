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

from sparsroof.analysis import Config, analyze
from sparsroof.batch.plan import Task, analyse_task, make_plan, spec_identity
from sparsroof.batch.runner import run_plan
from sparsroof.batch.store import MatrixResult, Store
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.collection import SizeFilter, discover, load_source

from .. import sstree
from ..conftest import ROOT, sparsroof

A100 = load_spec("a100")


def expected_rows(tree: Path, names: tuple[str, ...] | list[str]) -> int:
    """Rows the notebook API gives for these matrices (default config, a100)."""
    found = {s.name: s for s in discover([tree]).sources}
    return sum(len(analyze(load_source(found[n]), A100, Config()).results) for n in names)


PLAIN_HB = ["karate", "lund_a", "west0479", "494_bus"]  # the good matrices of _plan()


@pytest.fixture
def tree(corpus: Path, tmp_path: Path) -> Path:
    return sstree.build(corpus, tmp_path / "ss")


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=ROOT)


def count(db: Path, sql: str) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute(sql).fetchone()[0])


# Work functions for the runner (module level, so that worker processes can import them)

def slow_work(task: Task) -> MatrixResult:
    """karate never finishes in time; the rest are analysed normally."""
    if task.source.name == "karate":
        time.sleep(60)
    return analyse_task(task)


def crashing_work(task: Task) -> MatrixResult:
    """The worker dies hard on karate, as a segfaulting extension would."""
    if task.source.name == "karate":
        os.kill(os.getpid(), signal.SIGSEGV)
    return analyse_task(task)


def throttled_work(task: Task) -> MatrixResult:
    """Each matrix takes at least 0.4 s, so a run can be killed part-way."""
    time.sleep(0.4)
    return analyse_task(task)


def logged_work(task: Task) -> MatrixResult:
    """Log start, end and planned memory to $SPARSROOF_TEST_LOG to check what overlapped."""
    start = time.monotonic()
    time.sleep(0.15)
    result = analyse_task(task)
    with open(os.environ["SPARSROOF_TEST_LOG"], "a") as log:
        log.write(f"{start} {time.monotonic()} {task.memory}\n")
    return result


def test_batch_cli_records_results_and_failures_then_resumes(tree: Path, tmp_path: Path
                                                             ) -> None:
    db, csv_path = tmp_path / "r.db", tmp_path / "r.csv"
    out = cli("batch", str(tree), "--store", str(db), "-j", "2")
    assert out.returncode == 1, out.stderr  # broken files are in the tree
    assert f"{len(sstree.GOOD)} analysed" in out.stderr and out.stdout == ""
    names = {r for (r,) in sqlite3.connect(db).execute("SELECT name FROM matrices")}
    assert names == set(sstree.GOOD)
    rows = expected_rows(tree, sstree.GOOD)
    assert count(db, "SELECT COUNT(*) FROM results") == rows
    with sqlite3.connect(db) as con:
        failures = dict(con.execute("SELECT name, reason FROM failures").fetchall())
    assert set(failures) == set(sstree.BAD)
    assert "unknown symmetry 'bogus'" in failures["bad_header"]
    assert "index out of bounds" in failures["wrong"]
    assert "cannot read archive" in failures["junk"]
    assert "archive holds no NoMain/NoMain.mtx" in failures["NoMain"]
    assert "1 auxiliary files skipped" in out.stderr

    again = cli("batch", str(tree), "--store", str(db), "--export", str(csv_path))
    assert again.returncode == 0, again.stderr  # nothing failed in this run
    assert "0 analysed" in again.stderr and f"{len(sstree.GOOD)} already in the store" \
        in again.stderr
    assert count(db, "SELECT COUNT(*) FROM runs") == 2
    assert count(db, "SELECT COUNT(*) FROM results WHERE run_id = 2") == 0
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 1 + rows
    assert "structure_nonempty_cols" in lines[0].split(",")
    strict = cli("batch", str(tree), "--store", str(db), "--strict")
    assert strict.returncode == 1  # the broken files of the first run are still broken
    assert f"{len(sstree.BAD)} failed before" in strict.stderr


def test_good_tree_exits_zero_and_report_summarises(tree: Path, tmp_path: Path) -> None:
    db, plot = tmp_path / "r.db", tmp_path / "roof.png"
    out = cli("batch", str(tree / "plain"), str(tree / "HB"), "--store", str(db), "-j", "1",
              "--export", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["schema_version"] and doc["kind"] == "batch" and doc["failures"] == []
    rows = expected_rows(tree, PLAIN_HB)
    assert len(doc["rows"]) == rows
    rep = cli("report", str(db), "--output", "json", "--plot", str(plot), "--top", "2")
    assert rep.returncode == 0, rep.stderr
    summary = json.loads(rep.stdout)
    assert summary["matrices"] == 4 and summary["failed"] == 0
    assert sum(c["matrices"] for c in summary["by_class"]) == 4
    assert sum(b["results"] for b in summary["by_bound"]) == rows
    far, near = summary["furthest"], summary["closest"]
    assert len(far) == len(near) == 2
    assert far[0]["roof_fraction"] <= far[1]["roof_fraction"] <= near[1]["roof_fraction"] \
        <= near[0]["roof_fraction"]
    assert plot.read_bytes()[:4] == b"\x89PNG"
    # the store at rest is one file: the report, which opens it read-only, leaves no -wal
    # or -shm beside it
    assert sorted(p.name for p in tmp_path.glob("r.db*")) == ["r.db"]


def test_report_exit_code_says_failures_exist(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    cli("batch", str(tree / "Broken"), str(tree / "plain"), "--store", str(db), "-j", "1")
    rep = cli("report", str(db))
    assert rep.returncode == 1 and "failures" in rep.stdout
    assert cli("report", str(tmp_path / "none.db")).stderr.startswith(
        "sparsroof: error: ")


def test_dry_run_lists_and_writes_nothing(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    out = cli("batch", str(tree), "--store", str(db), "--dry-run", "--max-nnz", "1100")
    assert out.returncode == 0, out.stderr
    assert not db.exists()
    rows = [line.split()[:2] for line in out.stdout.splitlines()
            if line.split() and line.split()[0] in ("run", "cached", "failed", "filtered",
                                                    "memory", "error", "auxiliary")]
    status = {name: s for s, name in rows}
    # entries declared by the size lines: karate 78, 494_bus 1080, wrong 2 (its bad index
    # is only found on loading); west0479 1910, lund_a 1298, Erdos971 1314, swin 4608
    assert {n for n, s in status.items() if s == "run"} == {"karate", "494_bus", "wrong"}
    assert {n for n, s in status.items() if s == "filtered"} == {
        "west0479", "lund_a", "Erdos971", sstree.GOOD[3]}
    assert {n for n, s in status.items() if s == "error"} == {"bad_header", "junk", "NoMain"}
    assert status["Erdos971_nodename"] == "auxiliary"


def test_killed_run_resumes_without_losing_or_repeating(tree: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from sparsroof.analysis import Config\n"
        "from sparsroof.batch.plan import make_plan\n"
        "from sparsroof.matrix.collection import discover\n"
        "from sparsroof.hardware.library import load_spec\n"
        "from sparsroof.batch.runner import run_plan\n"
        "from sparsroof.batch.store import Store\n"
        "from tests.batch.test_batch import throttled_work\n"
        f"store = Store({str(db)!r})\n"
        f"plan = make_plan(discover([{str(tree)!r}]), [load_spec('a100')], Config(), store)\n"
        "run_plan(plan, store, store.begin_run([]), workers=1, work=throttled_work)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 60
    done = 0
    while time.monotonic() < deadline and done < 2:
        time.sleep(0.05)
        if db.exists():
            try:
                done = count(db, "SELECT COUNT(*) FROM matrices")
            except sqlite3.OperationalError:  # tables not created yet
                done = 0
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = sqlite3.connect(db).execute(
        "SELECT id, name, run_id, finished FROM matrices ORDER BY id").fetchall()
    assert 2 <= len(before) < len(sstree.GOOD), "the run should be killed part-way"
    # every committed matrix is complete: all its rows are there
    assert count(db, "SELECT COUNT(*) FROM results") == expected_rows(
        tree, [name for _, name, _, _ in before])

    out = cli("batch", str(tree), "--store", str(db), "-j", "2")
    assert f"{len(sstree.GOOD) - len(before)} analysed" in out.stderr, out.stderr
    after = sqlite3.connect(db).execute(
        "SELECT id, name, run_id, finished FROM matrices ORDER BY id").fetchall()
    assert after[: len(before)] == before  # nothing committed was lost or recomputed
    assert sorted(name for _, name, _, _ in after) == sorted(sstree.GOOD)
    rows = expected_rows(tree, sstree.GOOD)
    assert count(db, "SELECT COUNT(*) FROM results") == rows


def _plan(tree: Path, store: Store, **kw: object) -> object:
    return make_plan(discover([tree / "plain", tree / "HB"]), [A100], Config(), store, **kw)


def test_timeout_is_recorded_and_the_batch_goes_on(tree: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        plan = _plan(tree, store)
        summary = run_plan(plan, store, 1, workers=2, timeout=1.0, work=slow_work)
        assert summary.analysed == 3
        assert [(kind, reason) for _, kind, reason in summary.failures] == [
            ("timeout", "timed out after 1 s")]
        # a timeout is tried again by the next run; a finished matrix is not
        assert [t.source.name for t in _plan(tree, store).tasks] == ["karate"]


def test_a_crashed_worker_is_recorded_and_replaced(tree: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        summary = run_plan(_plan(tree, store), store, 1, workers=1, work=crashing_work)
        assert summary.analysed == 3
        (failure,) = summary.failures
        assert failure[0].endswith("karate.mtx") and failure[1] == "crash"
        assert "killed by SIGSEGV" in failure[2]


def test_memory_budget_limits_what_runs_at_once(tree: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "times.log"
    monkeypatch.setenv("SPARSROOF_TEST_LOG", str(log))
    with Store(tmp_path / "r.db") as store:
        plan = _plan(tree, store, budget=10**9)
        sizes = sorted(t.memory for t in plan.tasks)
        plan.budget = sizes[-1]  # the biggest never runs beside another one
        assert sizes[-1] + sizes[0] > plan.budget
        summary = run_plan(plan, store, 1, workers=2, work=logged_work)
        assert summary.analysed == 4
    spans = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    for start, _, _ in spans:
        in_flight = sum(mem for s, e, mem in spans if s <= start < e)
        assert in_flight <= plan.budget


def test_a_matrix_larger_than_the_budget_is_skipped_with_a_reason(tree: Path,
                                                                  tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        plan = _plan(tree, store, budget=145_000)
        skipped = {p.source.name: p.reason for p in plan.others if p.status == "memory"}
        # per entry (4 + 4 + 8) bytes x 2 copies, per row and column 32 bytes, x 1.5:
        # west0479 (479 x 479, 1910 entries): (61,120 + 32 x 960) x 1.5 = 137,760 B fits;
        # 494_bus (494 x 494, symmetric 1080 -> 2160): (69,120 + 32 x 990) x 1.5 = 151,200
        assert "494_bus" in skipped and "west0479" not in skipped
        assert "memory budget is" in skipped["494_bus"]
        summary = run_plan(plan, store, 1, workers=1)
        assert {kind for _, kind, _ in summary.failures} == {"memory"}


def test_size_filter_and_extra_spec_only_compute_what_is_missing(tree: Path, tmp_path: Path
                                                                 ) -> None:
    other_yaml = tmp_path / "other.yaml"
    text = (ROOT / "sparsroof" / "hwspecs" / "a100-80gb.yaml").read_text()
    other_yaml.write_text(text.replace("name: a100-80gb", "name: other-gpu")
                          .replace("2039 GB/s", "1000 GB/s"))
    other = load_spec(other_yaml)
    assert spec_identity(other)[1] != spec_identity(A100)[1]
    with Store(tmp_path / "r.db") as store:
        small = _plan(tree, store, size=SizeFilter(max_rows=100))
        assert [t.source.name for t in small.tasks] == ["karate"]
        run_plan(_plan(tree, store), store, 1, workers=1)
        both = make_plan(discover([tree / "plain", tree / "HB"]), [A100, other], Config(),
                         store)
        assert all(t.specs == (other,) for t in both.tasks) and len(both.tasks) == 4
        run_plan(both, store, 2, workers=1)
        by_run = dict(store.query("SELECT spec, COUNT(DISTINCT run_id) FROM results "
                                  "GROUP BY spec"))
    assert by_run == {"a100-80gb": 1, "other-gpu": 1}


def test_class_label_comes_from_the_classifier_and_is_counted(tree: Path, tmp_path: Path
                                                               ) -> None:
    from sparsroof.batch.summary import summarise_store
    from sparsroof.structure.classify import classify
    from sparsroof.structure.features import measure

    found = {s.name: s for s in discover([tree]).sources}
    expected = {n: classify(measure(load_source(found[n]))).label for n in PLAIN_HB}
    with Store(tmp_path / "r.db") as store:
        run_plan(_plan(tree, store), store, 1, workers=1)
        stored = dict(store.query("SELECT name, class FROM matrices"))
        verdict = json.loads(store.query("SELECT verdict FROM matrices")[0][0])
        by_class = summarise_store(store).by_class
    assert stored == expected
    assert {"label", "confidence", "params", "evidence"} <= set(verdict)
    counts: dict[str, int] = {}
    for label in expected.values():
        counts[label] = counts.get(label, 0) + 1
    assert dict(by_class) == counts


def test_dask_cluster_runs_the_same_work(tree: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster, \
            Store(tmp_path / "r.db") as store:
        summary = run_plan(_plan(tree, store), store, 1, scheduler=cluster.scheduler_address)
    assert summary.analysed == 4 and summary.failures == []


def test_parquet_export_or_a_clear_error(tree: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from sparsroof.errors import ExportError
    from sparsroof.report.export import check_export, export

    with Store(tmp_path / "r.db") as store:
        run_plan(_plan(tree, store), store, 1, workers=1)
        if importlib.util.find_spec("pyarrow") is not None:
            import pyarrow.parquet as pq

            rows = expected_rows(tree, PLAIN_HB)
            assert export(store, tmp_path / "r.parquet") == rows
            table = pq.read_table(tmp_path / "r.parquet")
            assert table.num_rows == rows and "sol_s" in table.column_names
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec",
                            lambda name, *a: None if name == "pyarrow" else real(name, *a))
        with pytest.raises(ExportError, match="Parquet export needs pyarrow"):
            check_export(tmp_path / "again.parquet")
        with pytest.raises(ExportError, match="unknown export format"):
            check_export(tmp_path / "r.xlsx")


def test_store_keys_of_bundled_specs_are_stable_across_versions(tmp_path: Path) -> None:
    # the bundled A100 and EPYC specs gained a launch floor, cache roofs and (EPYC) a peak
    # DRAM roof, and the A100 its floor per timing method, and the EPYC its compute peaks at
    # the boost clock and its L1 latency, so their results are new results with new keys
    assert spec_identity(A100) == ("a100-80gb", "e59fc8f2425d4781")
    assert spec_identity(load_spec("epyc-7763")) == ("epyc-7763", "cb1299fbf023bf2b")
    # a spec that says no kind of figure hashes as it did before kinds existed: the A100
    # spec as written by earlier versions keeps the key its stored results were filed under
    old = tmp_path / "old.yaml"
    text = (Path(__file__).resolve().parents[2] / "hwspecs" / "a100-80gb.yaml").read_text(
        encoding="utf-8")
    old.write_text(_earlier_a100(text), encoding="utf-8")
    assert spec_identity(load_spec(str(old))) == ("a100-80gb", "48a20d0670ba0646")


def _earlier_a100(text: str) -> str:
    """The A100 spec as it stood before kinds, launch floors and the measured L2 roof."""
    import re

    text = re.sub(r", kind: \w+\}", "}", text)
    text = re.sub(r"\nlaunch_overhead: .*", "", text)
    text = re.sub(r"\nlaunch_floors:(\n +[^\n]*)*", "", text)
    return re.sub(r"    bandwidth: \{value: 5.5 TB/s, [^\n]*", "    bandwidth: {value: 7219 GB/s, "
                  'source: "derived: 5120 bytes/clock L2 read bandwidth (NVIDIA A100 Tensor '
                  'Core GPU Architecture whitepaper, 2020) x 1410 MHz boost clock"}', text)


def test_a_scheduler_address_that_is_not_one_is_a_clean_error() -> None:
    pytest.importorskip("distributed")
    from sparsroof.batch.runner import _dask_client
    from sparsroof.errors import BatchError

    with pytest.raises(BatchError, match="'garbage' is not a Dask scheduler address"):
        _dask_client("garbage")


def test_a_bug_traceback_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    from sparsroof.batch.plan import Plan
    from sparsroof.batch.runner import RunCounts
    from sparsroof.cli.batch import _tell

    trace = "internal error: Traceback (most recent call last):\n  File x\nKeyError: 'k'"
    _tell(Plan(), RunCounts(failures=[("a.mtx", "bug", trace)]), "r.db")
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "sparsroof: failed: a.mtx (bug): KeyError: 'k' (traceback above)" in err


def test_progress_off_a_terminal_is_a_line_at_a_steady_interval() -> None:
    """Off a terminal the progress is one line every interval, with the matrices done, the
    rate, the time left and the failures; a run shorter than the interval prints none."""
    from types import SimpleNamespace

    from sparsroof.report.progress import LineProgress

    now = [0.0]
    lines: list[str] = []
    p = LineProgress(10, interval=60, echo=lines.append, clock=lambda: now[0])
    for i in range(10):
        now[0] = 25.0 * (i + 1)  # a matrix of 1,000 entries every 25 s
        p.advance(SimpleNamespace(ok=i != 4, entries=1000), failures=int(i >= 4))
    # lines at 75 s (3 done), 150 s (6 done) and 225 s (9 done)
    assert lines == [
        "sparsroof: batch: 3 of 10 matrices, 40 nnz/s, about 2 min 55 s left, 0 failed",
        "sparsroof: batch: 6 of 10 matrices, 33.3 nnz/s, about 1 min 40 s left, 1 failed",
        "sparsroof: batch: 9 of 10 matrices, 35.6 nnz/s, about 25 s left, 1 failed"]
    assert p.done == 10


def test_an_interrupted_batch_says_what_it_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during a batch: exit 130 and a line saying how many matrices this run
    finished, where they are kept and how to go on."""
    from types import SimpleNamespace

    from sparsroof.cli import batch as batch_cli
    from sparsroof.cli.common import run_guarded

    def interrupted(*args: object, progress: object, **kwargs: object) -> None:
        progress.advance(SimpleNamespace(ok=True, entries=10), 0)  # type: ignore[attr-defined]
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_cli, "run_plan", interrupted)
    store = tmp_path / "k.db"
    assert run_guarded(batch_cli.command, [str(ROOT / "data"), "--store", str(store)]) == 130
    assert (f"sparsroof: batch: interrupted; the 1 matrix finished in this run is kept "
            f"in {store}: the same command goes on from there") in capsys.readouterr().err


def test_an_export_into_a_missing_folder_fails_before_the_batch(tree: Path,
                                                                 tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    out = cli("batch", str(tree / "plain"), "--store", str(db), "--export",
              str(tmp_path / "no" / "r.csv"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "r.csv: cannot write: no directory" in out.stderr
    assert not db.exists()  # no matrix was analysed


def test_a_matrix_without_work_is_not_ranked_by_the_report(tmp_path: Path) -> None:
    """A matrix without entries has no intensity and no rate: the report ranks only the
    matrices with work near or far from the roof, and names the others."""
    import shutil

    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("empty.mtx", "a00.mtx"):
        shutil.copy(ROOT / "tests" / "corpus" / name, folder / name)
    shutil.copy(ROOT / "data" / "lap2d_64.mtx", folder / "lap2d_64.mtx")
    db = tmp_path / "r.db"
    assert cli("batch", str(folder), "--store", str(db), "-j", "1").returncode == 0
    doc = json.loads(cli("report", str(db), "-O", "json").stdout)
    ranked = {p["name"] for p in doc["furthest"] + doc["closest"]}
    assert ranked == {"lap2d_64"} and doc["not_ranked"] == ["a00", "empty"]
    text = cli("report", str(db)).stdout
    assert "not ranked, with no work to do (no entries): a00, empty" in text


def test_two_runs_of_one_file_rank_it_once_per_run(tmp_path: Path) -> None:
    """An SpMV run and an SpMM run of the same files into one store: the report ranks each
    matrix on its spec once per run, by that run's best row, and its title says so."""
    db = tmp_path / "r.db"
    assert cli("batch", str(ROOT / "data"), "--store", str(db), "-j", "1").returncode == 0
    assert cli("batch", str(ROOT / "data"), "--store", str(db), "-j", "1", "--kernel", "spmm",
               "--d", "1,16").returncode == 0
    doc = json.loads(cli("report", str(db), "-O", "json").stdout)
    ranked = doc["furthest"]
    assert sorted(p["name"] for p in ranked) == ["lap2d_64", "lap2d_64", "random_1000",
                                                  "random_1000"]
    assert {(p["kernel"], p["width"]) for p in ranked} == {("spmv", 1), ("spmm", 16)}
    assert "in each batch run" in doc["roof_fraction"]
    assert "best row of each matrix on each spec in each batch run" in cli("report",
                                                                            str(db)).stdout
