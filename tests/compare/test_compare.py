"""``sparsroof compare``: measured runs judged against their bound, bad rows reported one
line each while the rest are judged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sparsroof.compare import judge, read_runs, summarise

from ..conftest import DATA, ROOT, sparsroof

LAP = (DATA / "lap2d_64.mtx").as_posix()
RND = (DATA / "random_1000.mtx").as_posix()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=ROOT)


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "measured.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_rows_judged_with_violation_and_bad_rows(tmp_path: Path) -> None:
    path = _csv(tmp_path, "matrix,time_s,format,d,dtype,hw,kernel\n"
                f"{LAP},5.0e-6,csr,1,fp64,,\n"          # 2.6x the 1.9 us launch floor
                f"{LAP},1.0e-6,csr,1,fp64,,\n"          # faster than one launch: violation
                f"{RND},8.0e-6,csr,16,fp32,a100,spmm\n"  # its own spec: A100, 1.3 us floor
                "nosuch.mtx,4e-6,csr,1,fp64,,\n"
                f"{LAP},fast,csr,1,fp64,,\n")
    out = run("compare", str(path), "--hw", "v100-sxm2", "-O", "json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["kind"] == "compare"
    runs = doc["runs"]
    assert [r["spec"] for r in runs] == ["v100-sxm2", "v100-sxm2", "a100-80gb"]
    assert [r["bound_s"] for r in runs] == pytest.approx([1.9e-6, 1.9e-6, 1.3e-6])
    assert [r["violation"] for r in runs] == [False, True, False]
    # % of SoL = 100 x bound / measured: 1.9/5 = 38, 1.9/1 = 190 and 1.3/8 = 16.25
    assert [r["pct_sol"] for r in runs] == pytest.approx([38.0, 190.0, 16.25])
    s = doc["summary"]
    assert (s["count"], s["violations"], s["errors"]) == (3, 1, 2)
    # quartiles of (16.25, 38, 190), inclusive method: 27.125, 38, 114
    assert (s["pct_sol_q1"], s["pct_sol_median"], s["pct_sol_q3"]) == pytest.approx(
        (27.125, 38.0, 114.0))
    assert s["bands"]["launch"]["runs"] == 3
    assert "launch: one kernel takes at least 1.9 us on v100-sxm2" in doc["violations"][0]
    errors = out.stderr.strip().splitlines()
    assert f"{path}:5: matrix file not found" in out.stderr
    assert f"{path}:6: time_s 'fast' is not a number" in out.stderr
    assert sum("error:" in line for line in errors) == 2 and "Traceback" not in out.stderr
    assert sum("violation:" in line for line in errors) == 1


def test_memory_bound_run_by_hand(tmp_path: Path) -> None:
    # CSR fp64/int32 SpMV of lap2d_64: A 20,224 x 12 + 4,097 x 4 = 259,076 B, x and y
    # 4,096 x 8 each: 324,612 B; it fits the EPYC's 2 MiB of L1d (64 x 64 B/clk x 3.5 GHz)
    runs, errors = read_runs(str(_csv(tmp_path, f"matrix,time_s\n{LAP},2e-6\n")))
    judged, more = judge(runs, "epyc-7763")
    assert errors == more == []
    j = judged[0]
    assert j.bytes_total == 324_612
    assert j.bound.memory_level == "L1d" and j.band == "cache"
    assert j.bound.sol_s == pytest.approx(324_612 / 14_336e9)
    assert j.ratio == pytest.approx(2e-6 / (324_612 / 14_336e9))
    assert summarise(judged).bands["cache"][0] == 1


def test_runs_of_a_matrix_without_entries_stand_apart(tmp_path: Path) -> None:
    # nothing to compute: no kernel need run, so no launch term, no measured / bound, and no
    # share of the speed of light among the kernels' (cuSPARSE ran such a product on an H100
    # in less than an empty kernel's time)
    empty = ROOT / "tests" / "corpus" / "empty.mtx"
    text = "matrix,time_s\n" + f"{empty},1e-6\n" * 3 + f"{LAP},5e-6\n"
    runs, errors = read_runs(str(_csv(tmp_path, text)))
    judged, more = judge(runs, "h100-sxm")
    assert errors == more == [] and [j.band for j in judged] == ["empty"] * 3 + ["launch"]
    assert all(j.bound.launch_s == 0 and not j.violation for j in judged[:3])
    summary = summarise(judged)
    assert summary.bands["empty"] == (3, None)
    lap = judged[3].pct_sol
    assert summary.pct_sol_quartiles == (lap, lap, lap)


def test_bench_json_is_read_back(tmp_path: Path) -> None:
    doc = {"kind": "bench", "schema_version": 1, "spec": "epyc-7763", "results": [
        {"matrix": "lap2d_64", "path": LAP, "storage": "csr", "kernel": "spmv", "width": 1,
         "dtype": "fp64", "min_s": 3e-5, "median_s": 4e-5},
        {"matrix": "lap2d_64", "path": LAP, "storage": "dia", "kernel": "spmv", "width": 1,
         "dtype": "fp64", "min_s": None}]}  # a skipped kernel has no time
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    runs, errors = read_runs(str(path))
    assert errors == [] and len(runs) == 1
    assert runs[0].time_s == 3e-5 and runs[0].hw == "epyc-7763"


def test_ginkgo_json_formats_and_time_unit(tmp_path: Path) -> None:
    doc = [{"filename": LAP, "spmv": {
        "csr": {"storage": 324612, "time": 6000.0, "repetitions": 10, "completed": True},
        "coo": {"time": 7000.0, "completed": True},
        "sellp": {"time": 5000.0, "completed": True},
        "csr_mixed_fp16": {"time": 4000.0, "completed": True},
        "ell": {"completed": False}}},
        {"problem": {}}]
    path = tmp_path / "ginkgo.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    runs, errors = read_runs(str(path), time_unit="ns")
    assert [r.storage for r in runs] == ["csr", "coo", "sell"]
    assert [r.time_s for r in runs] == pytest.approx([6e-6, 7e-6, 5e-6])
    # a format without a traffic model is a skipped row, not an error
    assert [(str(e).split(": ", 1)[1], e.skipped) for e in errors] == [
        ("skipped: no traffic model for Ginkgo format 'csr_mixed_fp16'", True),
        ("expected an object with 'filename' and 'spmv'", False)]


PUBLISHED = Path(__file__).parents[1] / "data" / "ginkgo_published"


def test_a_published_ginkgo_file_goes_through_with_matrix_dir() -> None:
    """Ginkgo's published A100 result for HB/494_bus, as the benchmark machine wrote it: its
    matrix path is that machine's, so without --matrix-dir every run is an error; with it,
    the matrix is found by name, every format (SELL-P, the HYB strategies, cuSPARSE's) is
    judged, and since none beats its bound the file exits 0."""
    source = str(PUBLISHED / "a100_494_bus.json")
    lost = run("compare", source, "--hw", "a100-40gb", "--time-unit", "ns")
    assert lost.returncode == 1 and "--matrix-dir DIR looks for it by name" in lost.stderr
    out = run("compare", source, "--hw", "a100-40gb", "--time-unit", "ns", "--matrix-dir",
              str(PUBLISHED), "--timing", "sync", "-O", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["errors"] == [] and doc["skipped"] == [] and doc["summary"]["violations"] == 0
    runs = doc["runs"]
    assert len(runs) == 23 and {r["timing"] for r in runs} == {"sync"}
    assert {r["format"] for r in runs} == {"csr", "coo", "ell", "hyb", "sell"}
    assert all(r["path"].endswith("HB/494_bus.mtx") for r in runs)


def test_a_runs_own_timing_wins_and_cold_gets_no_cache_credit(tmp_path: Path) -> None:
    """lap2d_64's SpMV (324,612 B) on the A100 80GB: timed through a graph it is bound by
    the launch floor; timed cold (caches flushed) every byte comes from HBM2e (2039 GB/s),
    whose 159 ns still sit under the floor, and the row says which method it used."""
    runs = tmp_path / "runs.csv"
    runs.write_text(f"matrix,time_s,timing\n{LAP},2e-6,\n{LAP},2e-6,cold\n{LAP},2e-6,warm\n",
                    encoding="utf-8")
    out = run("compare", str(runs), "--hw", "a100-80gb", "-O", "json")
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and "unknown timing 'warm'" in out.stderr
    graph, cold = doc["runs"]
    assert (graph["timing"], cold["timing"]) == ("graph", "cold")
    assert graph["memory_level"] == "L2" and cold["memory_level"] == "HBM2e"
    assert cold["memory_s"] == pytest.approx(324_612 / 2039e9)


def test_a_file_without_the_columns_is_one_line_error(tmp_path: Path) -> None:
    path = _csv(tmp_path, "name,runtime\nx,1\n")
    out = run("compare", str(path))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip().count("\n") == 0
    assert "line 1: the header needs the columns matrix, time_s" in out.stderr


@pytest.mark.parametrize("name,text", [("runs.csv", "matrix,time_s\n"), ("runs.json", "[]")])
def test_a_file_of_no_runs_fails_rather_than_passing_a_check_of_nothing(
        tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    out = run("compare", str(path))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == f"sparsroof: error: {path}: holds no runs (a header or an empty " \
        "list only)\n"


@pytest.mark.parametrize("tail,says", [
    (b"\xff\n", "line 3: not UTF-8 text (byte 0xFF)"),
    (b"x" * 200_000 + b"\n", "line 3: not a CSV table (field larger than field limit"),
])
def test_a_broken_later_line_is_one_line_error(tmp_path: Path, tail: bytes,
                                               says: str) -> None:
    """Bytes that are not UTF-8, or a field the csv module refuses, on the third line."""
    path = tmp_path / "measured.csv"
    path.write_bytes(f"matrix,time_s\n{LAP},5.0e-6\n{LAP},".encode() + tail)
    for command in (("compare", str(path)),
                    ("plot", "roofline", "--measured", str(path), "-o",
                     str(tmp_path / "f.png"))):
        out = run(*command)
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.startswith(f"sparsroof: error: {path}: ")
        assert says in out.stderr and out.stderr.count("\n") == 1


def test_table_output_lists_runs_and_summary(tmp_path: Path) -> None:
    path = _csv(tmp_path, f"matrix,time_s\n{LAP},5e-6\n{RND},6e-6\n")
    out = run("compare", str(path), "--hw", "v100-sxm2")
    assert out.returncode == 0, out.stderr
    assert "2 runs judged, 0 faster than their bound" in out.stdout
    assert "launch-bound: 2 runs" in out.stdout and "lap2d_64" in out.stdout


def test_a_bench_document_on_the_users_own_spec_is_judged_in_every_format(
        tmp_path: Path) -> None:
    """A bench run against a spec file records the file, so compare bounds it on that
    spec; BSR and DIA need the pattern features, which compare then measures."""
    spec = tmp_path / "myhost.yaml"
    spec.write_text((ROOT / "hwspecs" / "epyc-7763.yaml").read_text().replace(
        "name: epyc-7763", "name: myhost"), encoding="utf-8")
    doc = {"schema_version": 1, "tool": "sparsroof", "kind": "bench", "spec": "myhost",
           "spec_file": str(spec), "results": [
               {"matrix": "lap2d_64", "path": LAP, "storage": s, "kernel": "spmv",
                "width": 1, "dtype": "fp64", "min_s": 1e-3} for s in ("csr", "bsr4", "dia")]}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = run("compare", str(path), "-O", "json")
    assert out.returncode == 0, out.stderr
    judged = json.loads(out.stdout)
    assert sorted(r["format"] for r in judged["runs"]) == ["bsr4", "csr", "dia"]
    assert {r["spec"] for r in judged["runs"]} == {"myhost"}


def test_runs_bench_timed_with_a_calibration_are_bounded_by_its_roofs(tmp_path: Path) -> None:
    """bench with --calibration bounds its runs with the measured cache roofs; the bench
    document names the calibration, so compare bounds them with the same roofs, and a CSV
    gets them from --calibration."""
    from ..host.test_calibrate import SPEC, _synthetic_calibration

    spec = tmp_path / "tiny.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    cal = _synthetic_calibration(tmp_path / "cal.json")  # L2 measured at 200 GB/s, not 50
    doc = {"schema_version": 1, "tool": "sparsroof", "kind": "bench", "spec": "tiny-cpu",
           "spec_file": str(spec), "calibration": str(cal), "results": [
               {"matrix": "lap2d_64", "path": LAP, "storage": "csr", "kernel": "spmv",
                "width": 1, "dtype": "fp64", "min_s": 1e-3}]}
    (tmp_path / "bench.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "runs.csv").write_text(f"matrix,time_s\n{LAP},1e-3\n", encoding="utf-8")
    plain = {**doc}
    del plain["calibration"]
    (tmp_path / "plain.json").write_text(json.dumps(plain), encoding="utf-8")

    def bound_of(*args: str) -> tuple[float, str]:
        out = run("compare", *args, "-O", "json")
        assert out.returncode == 0, out.stderr
        r = json.loads(out.stdout)["runs"][0]
        return r["memory_s"], r["memory_level"]

    calibrated = bound_of(str(tmp_path / "bench.json"))
    # lap2d_64 in CSR: 20,224 entries x 12 bytes + 4,097 x 4 + x and y 4,096 x 8 each =
    # 324,612 bytes, all of them in the 1 MiB L2, read at its calibrated 200 GB/s
    assert calibrated == (pytest.approx(324_612 / 200e9, rel=1e-9), "L2")
    assert bound_of(str(tmp_path / "plain.json")) == (pytest.approx(324_612 / 50e9, rel=1e-9),
                                                       "L2")
    assert bound_of(str(tmp_path / "runs.csv"), "--hw", str(spec),
                    "--calibration", str(cal)) == calibrated
    missing = run("compare", str(tmp_path / "runs.csv"), "--calibration", "nope.json")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "sparsroof: error: nope.json: no such file"


def test_a_measured_hyb_is_bounded_at_the_split_that_stores_least(tmp_path: Path) -> None:
    """The library that ran a HYB split it by its own rule; the bound must hold for any
    split, so compare charges the width at which a kernel must read the fewest bytes,
    found here by trying every width."""
    import numpy as np

    from sparsroof.model.storage import hyb, hyb_least_width

    rng = np.random.default_rng(5)
    for _ in range(100):
        lengths = rng.integers(0, 12, size=int(rng.integers(1, 300)))
        lengths[rng.integers(0, lengths.size)] = rng.integers(50, 400)  # one long row
        counts, m = np.bincount(lengths), lengths.size
        least = min(hyb(counts, m, 8, 4, k).bytes for k in range(counts.size))
        assert hyb(counts, m, 8, 4, hyb_least_width(counts, m, 8, 4)).bytes == least
    # a matrix of 5,000 rows of 1 entry, 4,500 of 3 and 10 of 9: width 3 reads least (every
    # entry in ELL but 10 x 6 in COO; 5,000 short rows end at a padding slot)
    rows = np.repeat(np.arange(9510), [1] * 5000 + [3] * 4500 + [9] * 10)
    cols = np.concatenate([np.arange(k) for k in [1] * 5000 + [3] * 4500 + [9] * 10])
    path = tmp_path / "skew.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                    f"9510 9510 {rows.size}\n"
                    + "".join(f"{r + 1} {c + 1}\n" for r, c in zip(rows, cols, strict=True)),
                    encoding="utf-8")
    runs = tmp_path / "runs.csv"
    runs.write_text(f"matrix,time_s,format\n{path.name},1e-3,hyb\n", encoding="utf-8")
    out = run("compare", str(runs), "--hw", "a100", "-O", "json")
    assert out.returncode == 0, out.stderr
    judged = json.loads(out.stdout)["runs"][0]
    # width 3: 18,530 entries in ELL x 12 bytes, 5,000 end marks x 4, 60 in COO x 16; width
    # 1 (9,510 x 12 + 9,080 x 16 = 259,400) and no ELL (18,590 x 16) read more
    a_bytes = 18_530 * 12 + 5_000 * 4 + 60 * 16
    # x: the 9 columns referenced, y: every row, fp64
    assert judged["bytes_total"] == a_bytes + 9 * 8 + 9510 * 8


def test_a_long_table_shows_every_violation_and_says_what_it_left_out() -> None:
    from rich.console import Console

    from sparsroof.compare.runs import MeasuredRun
    from sparsroof.report.compare import compare_table

    runs = [MeasuredRun(f"runs.csv:{i + 2}", LAP, 1e-5) for i in range(30)]
    runs[25] = MeasuredRun("runs.csv:27", LAP, 1e-9)  # faster than any launch
    judged, errors = judge(runs, "v100-sxm2")
    assert not errors and [j.violation for j in judged].count(True) == 1
    console = Console(width=100, record=True)
    console.print(compare_table(judged, summarise(judged), "runs", limit=10))
    text = console.export_text()
    assert "30 runs judged, 1 faster than their bound" in text
    assert "the table shows 10 of the 30 runs (every violation first)" in text
    shown = [line.split()[0] for line in text.splitlines() if "lap2d_64" in line]
    assert shown == ["2", "3", "4", "5", "6", "7", "8", "9", "10", "27"]
    assert "VIOLATION" in text


def test_the_json_of_many_runs_is_written_a_run_at_a_time() -> None:
    """compare -O json makes each run's record as it writes it: consuming the pieces of
    5,000 runs' document peaks far below the document's own size (joined whole, as the
    writer once did, the peak is the text and more), and the pieces join to the text."""
    import tracemalloc

    from sparsroof.compare.runs import MeasuredRun
    from sparsroof.report.compare import compare_json, compare_json_pieces

    runs = [MeasuredRun(f"runs.csv:{i + 2}", LAP, 1e-5 + 1e-9 * i) for i in range(5_000)]
    judged, errors = judge(runs, "v100-sxm2")
    summary = summarise(judged)
    size = 0
    tracemalloc.start()
    for piece in compare_json_pieces(judged, summary, errors):
        size += len(piece)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert size > 4_000_000  # about 930 bytes a run
    assert peak < size / 20, (peak, size)
    text = compare_json(judged, summary, errors)
    assert len(text) == size and json.loads(text)["summary"]["count"] == 5_000


@pytest.mark.parametrize(("unit", "words"), [("s", "seconds"), ("ms", "milliseconds"),
                                             ("ns", "nanoseconds")])
def test_a_bad_time_is_named_in_the_unit_the_file_is_read_in(tmp_path: Path, unit: str,
                                                              words: str) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(f"matrix,time_s\n{DATA / 'lap2d_64.mtx'},-3\n{DATA / 'lap2d_64.mtx'},2\n")
    found, errors = read_runs(str(runs), time_unit=unit)
    assert len(found) == 1 and found[0].time_s == pytest.approx(
        2 * {"s": 1, "ms": 1e-3, "ns": 1e-9}[unit])
    assert [str(e) for e in errors] == [
        f"{runs}:2: time_s '-3' is not a positive number of {words}"]


def test_a_folder_named_as_a_matrix_is_called_a_folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    path = _csv(tmp_path, "matrix,time_s\ndata,1e-5\n")
    out = run("compare", str(path))
    assert out.returncode == 1
    assert f"{path}:2: {tmp_path / 'data'} is a folder, not a matrix file" in out.stderr


def test_a_row_with_more_cells_than_the_header_is_not_judged(tmp_path: Path) -> None:
    """A comma too many shifts every cell after it: the row is an error, the next is
    judged."""
    path = _csv(tmp_path, "matrix,time_s\ndata/lap2d_64.mtx,1e-5,3,4\n"
                          "data/lap2d_64.mtx,1e-5\n")
    out = run("compare", str(path), "--matrix-dir", str(ROOT))
    assert out.returncode == 1
    assert f"{path}:2: 4 cells where the header names 2 columns" in out.stderr
    assert "1 run judged" in out.stdout


def test_notes_and_errors_come_in_the_files_order(tmp_path: Path) -> None:
    """A row that fails, then one skipped (a format without a model): the error first, as
    the rows stand, whatever their kind."""
    import json

    path = tmp_path / "ginkgo.json"
    path.write_text(json.dumps([
        {"filename": str(ROOT / "data" / "lap2d_64.mtx"),
         "spmv": {"csr": {"time": None, "completed": True}}},
        {"filename": str(ROOT / "data" / "lap2d_64.mtx"),
         "spmv": {"weird": {"time": 1000.0, "completed": True}}}]))
    out = run("compare", str(path))
    lines = [line.split(": ", 2)[1] for line in out.stderr.splitlines()
             if line.startswith("sparsroof: ")]
    assert lines[:2] == ["error", "note"], out.stderr


def test_the_figure_of_runs_judged_on_a_users_spec_file_draws_that_spec(
        tmp_path: Path) -> None:
    """--hw FILE: the figure's ceilings come from the spec the runs were judged on, not a
    bundled spec looked up by its name."""
    text = (ROOT / "hwspecs" / "epyc-7763.yaml").read_text().replace(
        "name: epyc-7763", "name: mine").replace("aliases: [epyc7763, milan]", "")
    spec = tmp_path / "mine.yaml"
    spec.write_text(text)
    path = _csv(tmp_path, f"matrix,time_s\n{ROOT / 'data' / 'lap2d_64.mtx'},2e-5\n")
    figure = tmp_path / "runs.png"
    out = run("compare", str(path), "--hw", str(spec), "--plot", str(figure))
    assert out.returncode == 0, out.stderr
    assert figure.read_bytes()[:4] == b"\x89PNG"


def test_a_bench_document_saved_elsewhere_finds_its_matrices_from_here(
        tmp_path: Path) -> None:
    """bench records a matrix as given (data/lap2d_64.mtx, from the repository's root):
    the document saved in another folder is judged from the same place."""
    import json

    doc = json.loads((ROOT / "tests" / "data" / "gpu-bench-format-fixture.json").read_text())
    for r in doc["results"]:
        r["path"] = "data/lap2d_64.mtx"
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    out = run("compare", str(path))
    assert "matrix file not found" not in out.stderr, out.stderr
    assert " 0 runs judged" not in out.stdout


def test_a_csv_names_its_matrices_from_its_own_folder_only(tmp_path: Path) -> None:
    """A CSV's relative path is the CSV's folder's: a file of that name where the command
    runs is not taken instead (it could be another matrix), as only bench records paths
    from where it ran."""
    path = _csv(tmp_path, "matrix,time_s\ndata/lap2d_64.mtx,1e-5\n")
    out = run("compare", str(path))  # runs in the repository, which has data/lap2d_64.mtx
    assert out.returncode == 1
    assert f"matrix file not found: {tmp_path / 'data' / 'lap2d_64.mtx'}" in out.stderr
