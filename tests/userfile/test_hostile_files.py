"""Hostile input files other than matrices (and the matrix inputs of whole runs): each
ends in results for the good files and one line for each bad one, never a traceback, a
hang, a huge allocation or a message that prints a megabyte.

One test per reported way a file could break a run: a bad file among good ones, type
confusion and overflow in measured runs, numbers past float range in saved results,
YAML aliases that expand exponentially, files that are not regular files, inputs that
ask for unbounded work, and large run files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparsroof.ci.budget import load_budget
from sparsroof.ci.inputs import load_baseline, load_measured
from sparsroof.compare import read_runs
from sparsroof.errors import BudgetError, FigureError, OptionError, SparsroofError, SpecError
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.collection import discover
from sparsroof.matrix.mtx import load
from sparsroof.plot.points import read_results
from sparsroof.userfile import capped
from sparsroof.whatif.patterns import parse_pattern

from ..conftest import ROOT, fresh_python

COO = b"%%MatrixMarket matrix coordinate real general\n"
SMALL = COO + b"2 2 1\n1 1 1\n"


def sparsroof(*args: str, cwd: Path | None = None, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sparsroof", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    (line,) = out.stderr.strip().splitlines()
    return line


# --- one bad file is one row of failure ---------------------------------------------------

def test_a_size_padded_with_zeros_is_read_as_its_number(tmp_path: Path) -> None:
    # Python refuses to convert more than 4,300 digits; the leading zeros are dropped first
    padded = tmp_path / "padded.mtx"
    padded.write_bytes(COO + b"0" * 4300 + b"2 2 1\n1 1 1\n")
    assert load(padded).shape == (2, 2)
    smtx = tmp_path / "padded.smtx"
    smtx.write_bytes(b"0" * 5000 + b"2, 2, 1\n0 1 1\n0\n")
    assert load(smtx).shape == (2, 2)


def test_analyze_keeps_the_good_results_around_a_huge_size(tmp_path: Path) -> None:
    (tmp_path / "a.mtx").write_bytes(SMALL)
    (tmp_path / "padded.mtx").write_bytes(COO + b"0" * 4300 + b"2 2 1\n1 1 1\n")
    (tmp_path / "huge.mtx").write_bytes(COO + b"9" * 5000 + b" 2 1\n1 1 1\n")
    (tmp_path / "b.mtx").write_bytes(SMALL)
    out = sparsroof("analyze", "a.mtx", "padded.mtx", "huge.mtx", "b.mtx", "-O", "csv",
                    cwd=tmp_path)
    assert out.returncode == 1
    assert one_line(out) == ("sparsroof: error: huge.mtx: line 2: a size above 2^63 - 1 "
                             "cannot be read")
    names = {line.split(",")[2] for line in out.stdout.splitlines()[1:]}
    assert names == {"a", "padded", "b"}


def test_batch_records_a_dangling_link_and_a_bad_header_and_goes_on(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.mtx").write_bytes(SMALL)
    (tree / "huge.mtx").write_bytes(COO + b"9" * 5000 + b" 2 1\n1 1 1\n")
    (tree / "padded.mtx").write_bytes(COO + b"0" * 4300 + b"2 2 1\n1 1 1\n")
    (tree / "gone.mtx").symlink_to(tmp_path / "no-such-file.mtx")
    found = discover([tree])
    assert [(s.name, s.problem) for s in found.sources if s.problem] == [
        ("gone", "a link to a missing file")]
    out = sparsroof("batch", str(tree), "--store", str(tmp_path / "s.db"))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr[-2000:]
    failed = sorted(line for line in out.stderr.splitlines() if "failed:" in line)
    assert failed == [
        f"sparsroof: failed: {tree / 'gone.mtx'}: a link to a missing file",
        f"sparsroof: failed: {tree / 'huge.mtx'}: line 2: a size above 2^63 - 1 "
        "cannot be read"]
    assert "2 analysed" in out.stderr


# --- measured runs: type confusion, overflow and silent acceptance ------------------------

GINKGO_RUN = {"time": 2000.0, "completed": True}


@pytest.mark.parametrize(("name", "doc", "says"), [
    ("spmv_list.json", [{"filename": "m.mtx", "spmv": [1]}],
     "[0].spmv: expected an object of format -> result, found a list"),
    ("filename_number.json", [{"filename": 5, "spmv": {"csr": GINKGO_RUN}}],
     "[0]: filename is 5, expected a path"),
    ("time_401_digits.json", "BIG",
     "[0].spmv.csr: time is a whole number of about 401 digits, expected a positive number"),
    ("time_true.json", [{"filename": "m.mtx", "spmv": {"csr": {"time": True}}}],
     "[0].spmv.csr: time is true, expected a positive number of seconds"),
    ("completed_string.json", [{"filename": "m.mtx", "spmv": {
        "csr": {"time": 2000.0, "completed": "false"}}}],
     "[0].spmv.csr: completed is the string 'false', expected true or false"),
    ("bench_width.json", {"kind": "bench", "results": [
        {"path": "m.mtx", "min_s": 1e-5, "kernel": "spmm", "width": 1e400}]},
     "results[0]: width is infinite, expected a whole number"),
    ("bench_row.json", {"kind": "bench", "results": [1]},
     "results[0]: expected an object, found 1"),
    ("bench_min_true.json", {"kind": "bench", "results": [{"path": "m.mtx", "min_s": True}]},
     "results[0]: min_s is true, expected a positive number of seconds"),
])
def test_measured_runs_in_json_are_checked_field_by_field(tmp_path: Path, name: str,
                                                           doc: object, says: str) -> None:
    (tmp_path / "m.mtx").write_bytes(SMALL)
    path = tmp_path / name
    if doc == "BIG":
        path.write_text('[{"filename": "m.mtx", "spmv": {"csr": {"time": 1' + "0" * 400
                        + ', "completed": true}}}]')
    else:
        path.write_text(json.dumps(doc))
    runs, errors = read_runs(str(path))
    assert runs == [] and len(errors) == 1
    assert str(errors[0]).startswith(f"{path}:{says}") and "\n" not in str(errors[0])


@pytest.mark.parametrize(("cell", "says"), [
    ("inf", "d is infinite, expected a whole number from 1 to 1048576"),
    ("2.5", "d is 2.5, expected a whole number from 1 to 1048576"),
    ("9" * 5000, "d is '99999999999999999...999999999999999999', expected a whole number "
                   "from 1 to 1048576"),
])
def test_a_width_in_a_csv_is_a_whole_number(tmp_path: Path, cell: str, says: str) -> None:
    (tmp_path / "m.mtx").write_bytes(SMALL)
    path = tmp_path / "runs.csv"
    path.write_text(f"matrix,time_s,kernel,d\nm.mtx,1e-5,spmm,{cell}\nm.mtx,1e-5,spmm,4\n")
    runs, errors = read_runs(str(path))
    assert [r.width for r in runs] == [4]
    assert [str(e) for e in errors] == [f"{path}:2: {says}"]


def test_a_results_field_that_is_not_a_list_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text('{"kind": "bench", "results": "abc"}')
    out = sparsroof("compare", str(path), "--hw", "a100")
    assert out.returncode == 1
    assert one_line(out) == (f"sparsroof: error: {path}: results: expected a list of "
                             "results, found the string 'abc'")


# --- saved results: numbers past float range, zero where a rate belongs -------------------

def _analysis(tmp_path: Path) -> dict:
    (tmp_path / "m.mtx").write_bytes(SMALL)
    out = sparsroof("analyze", str(tmp_path / "m.mtx"), "--hw", "a100", "-O", "json")
    return json.loads(out.stdout)


@pytest.mark.parametrize(("where", "value", "says"), [
    ("bound.bandwidth", 0, "field 'bandwidth' is 0, expected a positive number"),
    ("bound.peak_flops", 0, "field 'peak_flops' is 0, expected a positive number"),
    ("traffic.intensity", 1e308, "field 'intensity' is 1e+308, above 1e+30"),
    ("traffic.bytes_total", 10**400, "field 'bytes_total' is a whole number of about 401 "
                                     "digits, past the range of a float"),
    ("traffic.flops_executed", 1e-320, "field 'flops_executed' is 9.99989e-321, too close "
                                       "to zero"),
])
def test_saved_results_out_of_range_are_one_line(tmp_path: Path, where: str, value: object,
                                                 says: str) -> None:
    doc = _analysis(tmp_path)
    part, key = where.split(".")
    for result in doc["matrices"][0]["results"]:
        result[part][key] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(FigureError) as err:
        read_results(path)
    assert says in str(err.value) and "\n" not in str(err.value)
    out = sparsroof("plot", "roofline", str(path), "-o", str(tmp_path / "x.png"))
    assert out.returncode == 1 and says in one_line(out)


def test_check_inputs_past_float_range_are_one_line(tmp_path: Path) -> None:
    measured = tmp_path / "measured.json"
    measured.write_text('[{"matrix": "m", "kernel": "spmv", "width": 1, "seconds": 1'
                        + "0" * 400 + "}]")
    with pytest.raises(BudgetError, match="expected a positive number of seconds"):
        load_measured(measured)
    baseline = tmp_path / "base.json"
    entry = {"check": "c", "matrix": "m", "width": 1, "spec": "a", "kernel": "spmv",
             "dtype": "fp64", "index": "int32", "storage": "csr", "model": "compulsory",
             "unit": "simt", "sol_s": 1.0, "bytes_total": "X"}
    text = json.dumps({"kind": "baseline", "schema_version": 1, "entries": [entry]})
    baseline.write_text(text.replace('"X"', "1" + "0" * 400))
    with pytest.raises(BudgetError, match="'bytes_total' must be a number from 0 to 1e"):
        load_baseline(baseline)


# --- YAML aliases that expand exponentially -----------------------------------------------

def _bomb(levels: int = 30) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("args", "name", "text"), [
    (["hw", "show"], "spec.yaml", _bomb() + "name: *a29\n"),  # 10^30 values
    (["check"], "budget.yaml", _bomb() + "checks: *a29\n"),
    (["whatif"], "net.yaml", _bomb() + "name: *a29\nsource: s\nlayers: []\n"),
    (["hw", "show"], "self.yaml", "name: &n [*n]\n"),
])
def test_alias_bombs_are_refused_at_once_without_printing_the_value(
        tmp_path: Path, args: list[str], name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.RLIM_INFINITY))\n"
            "from sparsroof.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    start = time.perf_counter()
    out = fresh_python(code, *args, path, timeout=60)
    assert time.perf_counter() - start < 20
    line = one_line(out)
    assert out.returncode in (1, 2) and line.startswith(f"sparsroof: error: {path}: ")
    assert ("counting each alias (*name) as a copy of what it names" in line
            or "refers to the value that holds it" in line) and len(line) < 400


def test_a_long_value_is_shown_cut_short(tmp_path: Path) -> None:
    spec = (ROOT / "hwspecs" / "a100-80gb.yaml").read_text()
    path = tmp_path / "long.yaml"
    path.write_text(spec.replace("kind: gpu", "kind: " + "x" * 100_000, 1))
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert "kind: expected 'gpu' or 'cpu', found 'xxxx" in str(err.value)
    assert len(str(err.value)) < 300


# --- files that are not regular files ----------------------------------------------------

_READERS = """
import sys, time
from sparsroof.errors import SparsroofError
from sparsroof.ci.budget import load_budget
from sparsroof.compare import read_runs
from sparsroof.hardware.library import load_spec
from sparsroof.host.calibration import load as load_calibration
from sparsroof.plot.points import read_results
from sparsroof.whatif.manifest import load_manifest
from sparsroof.whatif.layertimes import read_layer_times
readers = [load_spec, load_budget, load_calibration, read_results, load_manifest,
           read_layer_times, read_runs]
for path in sys.argv[1:]:
    for reader in readers:
        start = time.perf_counter()
        try:
            reader(path)
            print("read", path, reader.__name__)
        except SparsroofError as err:
            print(round(time.perf_counter() - start, 3), err, flush=True)
"""


def test_devices_pipes_and_folders_are_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    out = fresh_python(_READERS, "/dev/zero", fifo, folder, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 3 * 7
    for line in lines:
        seconds, message = line.split(" ", 1)
        assert float(seconds) < 1, line
        assert message.endswith(("is not a regular file (a device): save its content to a "
                                 "file first",
                                 "is not a regular file (a named pipe): save its content to "
                                 "a file first",
                                 "is a directory, not a file")), line


def test_a_spec_past_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * (2 << 20) + "\nname: x\n")
    with pytest.raises(SpecError, match="is 2 MiB, more than the 1 MiB a file of this kind"):
        load_spec(path)


# --- bounded work from small inputs -----------------------------------------------------

def test_an_nm_group_past_256_is_refused_at_once() -> None:
    with pytest.raises(OptionError, match="'1:10000000': M may be at most 256"):
        parse_pattern("1:10000000")
    assert parse_pattern("2:256").m == 256
    out = sparsroof("whatif", "deit_small", "--hw", "a100", "--pattern", "1:10000000",
                    timeout=60)
    assert out.returncode == 2
    assert "M may be at most 256" in one_line(out)


@pytest.mark.parametrize("size", ["100000000 100000000 1", "300000000 1 1", "1 300000000 1"])
def test_a_hypersparse_shape_is_refused_whatever_memory_is_free(
        tmp_path: Path, size: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a few bytes must not cost gigabytes on a machine that happens to have them
    from sparsroof.errors import MatrixFileError
    from sparsroof.matrix import limits
    monkeypatch.setattr(limits, "memory_headroom", lambda: (2**62, "no known limit"))
    path = tmp_path / "hyper.mtx"
    path.write_bytes(COO + size.encode() + b"\n1 1 1\n")
    with pytest.raises(MatrixFileError, match=r"shape needs about .* for 1 entry "
                                              r"\(max_memory allows it\)"):
        load(path)
    # a shape that its entries justify, or one the user allows, is not this refusal
    assert limits.check_load(10**8, 10**8, 10**8, max_memory=1e13) is None
    assert limits.check_load(10**8, 10**8, 1, max_memory=1e13) is None
    out = sparsroof("analyze", str(path), "--no-cache", timeout=60)
    assert out.returncode == 1
    assert "hyper.mtx: too large to load: its" in one_line(out)
    assert one_line(out).endswith("(--max-memory allows it)")


def _budget(folder: Path, matrices: str) -> Path:
    path = folder / "budget.yaml"
    path.write_text(f"checks:\n  - name: c\n    hw: a100\n    matrices: {matrices}\n"
                    "    limits: {max_sol_latency: 1 s}\n")
    return path


def test_a_budget_glob_does_not_follow_folder_links(tmp_path: Path) -> None:
    # two links back up the tree at each of four levels: glob.glob walks 2^k copies
    folder = tmp_path / "ci"
    deep = folder / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    for level in (folder / "a", folder / "a" / "b", folder / "a" / "b" / "c", deep):
        (level / "m.mtx").write_bytes(SMALL)
        (level / "up").symlink_to(folder, target_is_directory=True)
        (level / "up2").symlink_to(folder, target_is_directory=True)
    (folder / "twin.mtx").symlink_to(folder / "a" / "m.mtx")  # the same file twice
    start = time.perf_counter()
    budget = load_budget(_budget(folder, '["**/*.mtx"]'))
    assert time.perf_counter() - start < 5
    found = [Path(p).relative_to(folder).as_posix() for p in budget.checks[0].matrices]
    assert found == ["a/b/c/d/m.mtx", "a/b/c/m.mtx", "a/b/m.mtx", "a/m.mtx"]


@pytest.mark.parametrize(("pattern", "says"), [
    ("/**/*.smtx", "searches the whole file system"),
    ("../**/*.mtx", "searches outside the budget's folder"),
])
def test_a_recursive_glob_out_of_bounds_is_refused(tmp_path: Path, pattern: str,
                                                   says: str) -> None:
    folder = tmp_path / "ci"
    folder.mkdir()
    with pytest.raises(BudgetError, match=says):
        load_budget(_budget(folder, f'["{pattern}"]'))


def test_a_sibling_folder_glob_still_works(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "m.mtx").write_bytes(SMALL)
    (tmp_path / "ci").mkdir()
    budget = load_budget(_budget(tmp_path / "ci", "../data/*.mtx"))
    assert budget.checks[0].matrices == (str(tmp_path / "data" / "m.mtx"),)


# --- large run files --------------------------------------------------------------------

_MEASURE = """
import resource, sys
from sparsroof.compare import read_runs
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
runs, errors = read_runs(sys.argv[1])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(runs), len(errors), (after - before) * 1024 / (len(runs) + len(errors)))
"""


def test_a_large_run_file_costs_under_1_kb_a_row(tmp_path: Path) -> None:
    (tmp_path / "m.mtx").write_bytes(SMALL)
    rows = 100_000
    path = tmp_path / "runs.csv"
    with path.open("w") as handle:
        handle.write("matrix,time_s,kernel,format,d,dtype,implementation,timing\n")
        for i in range(rows):
            handle.write(f"m.mtx,{1e-5 + i * 1e-12:.6e},spmv,csr,1,fp64,lib-{i % 7},graph\n")
    out = fresh_python(_MEASURE, path, check=True)
    good, bad, per_row = out.stdout.split()
    assert (int(good), int(bad)) == (rows, 0)
    assert float(per_row) < 1000, per_row


def test_a_large_ginkgo_file_costs_under_1_kb_a_run(tmp_path: Path) -> None:
    """A published benchmark list is parsed a case at a time, and its text checked without
    a copy per character: 100,000 runs (a 16 MB file) stay under 1 kB a run."""
    (tmp_path / "m.mtx").write_bytes(SMALL)
    formats = ("coo", "csr", "ell", "hybrid", "sellp")
    cases = [{"filename": "m.mtx", "problem": {"id": i, "name": "m"},
              "spmv": {f: {"storage": 100, "time": 1000.0 + i, "completed": True}
                       for f in formats}} for i in range(20_000)]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(cases, indent=4))
    out = fresh_python(_MEASURE, path, check=True)
    good, bad, per_run = out.stdout.split()
    assert (int(good), int(bad)) == (100_000, 0)
    assert float(per_run) < 1000, per_run


def test_a_file_of_bad_rows_prints_a_few_lines(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("matrix,time_s\n" + "m.mtx,fast\n" * 20_000 + "m.mtx,-1\n")
    out = sparsroof("compare", str(path), "--hw", "a100", "-O", "json")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert lines == [f"sparsroof: error: {path}:{n}: time_s 'fast' is not a number or a time "
                     "such as '21 us'" for n in (2, 3, 4)] + [
        "sparsroof: error: ... and 19,997 more like this",
        f"sparsroof: error: {path}:20002: time_s '-1' is not a positive number of seconds"]
    assert len(json.loads(out.stdout)["errors"]) == 20_001


def test_capped_keeps_order_and_counts() -> None:
    messages = ["f:1: bad 'x'", "f:2: other", "f:3: bad 'y'", "f:4: bad 'z'", "f:5: bad 'w'"]
    assert list(capped(messages, keep=2)) == ["f:1: bad 'x'", "f:2: other", "f:3: bad 'y'",
                                              "... and 2 more like this"]


def test_every_error_of_a_reader_is_a_sparsroof_error(tmp_path: Path) -> None:
    """The NUL byte and the over-long name: os.stat raises ValueError and OSError for
    them, which must not escape as such."""
    for name in ("a\0b.yaml", "x" * 5000 + ".yaml"):
        with pytest.raises(SparsroofError) as err:
            load_spec(str(tmp_path / name))
        assert len(str(err.value)) < 500


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_in_place_of_an_archive_or_a_store_is_refused_not_waited_on(
        tmp_path: Path) -> None:
    """A named pipe called F.tar in a batch folder, or given as a store to report or batch,
    would block the first read for ever: it is recorded or refused in one line."""
    folder = tmp_path / "one"
    folder.mkdir()
    os.mkfifo(folder / "F.tar")
    (folder / "a.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                  "2 2 1\n1 1 1.0\n")
    os.mkfifo(tmp_path / "pipe.db")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sparsroof", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)

    plan = run("batch", "one", "--dry-run")
    assert plan.returncode == 0 and "F.tar::F/F.mtx  is a pipe, not a file" in plan.stdout
    done = run("batch", "one", "--store", "s.db")
    assert done.returncode == 1 and "failed: " in done.stderr and "1 analysed" in done.stderr
    for args in (("report", "pipe.db"), ("report", "pipe.db", "--html", "p.html"),
                 ("batch", "one", "--store", "pipe.db")):
        out = run(*args)
        assert out.returncode != 0 and out.stderr.count("\n") == 1, (args, out.stderr)
        assert "pipe.db: " in out.stderr and "regular file" in out.stderr, out.stderr
