"""Mistakes a user makes, each refused in one line naming the file or option, before the
work it would have thrown away, with exit status 2 for an option and no traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from ..conftest import ROOT, sparsroof

LAP = str(ROOT / "data" / "lap2d_64.mtx")


def _one_line(done: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> None:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "s.db"
    done = sparsroof("batch", LAP, "--store", str(path))
    assert done.returncode == 0, done.stderr
    return path


@pytest.mark.parametrize("args", [
    ["whatif", "swin_tiny", "--points", "nodir/p.csv"],
    ["batch", LAP, "--store", "nodir/x.db"],
    ["check", str(ROOT / "examples" / "budgets.yaml"), "--junit", "nodir/r.xml"],
    ["check", str(ROOT / "examples" / "budgets.yaml"), "--write-baseline", "nodir/b.json"],
])
def test_an_output_in_a_missing_folder(args: list[str], tmp_path: Path) -> None:
    _one_line(sparsroof(*args, cwd=tmp_path), "nodir/", "cannot write: no directory nodir")


@pytest.mark.parametrize("option", ["--plot", "--html"])
def test_report_outputs_in_a_missing_folder(option: str, store: Path, tmp_path: Path) -> None:
    _one_line(sparsroof("report", str(store), option, "nodir/a.png" if option == "--plot"
                        else "nodir/a.html", cwd=tmp_path), "cannot write: no directory")


@pytest.mark.parametrize("args, needle", [
    (["whatif", "--mlp", "4096,4096,16", "--ranks", "1,0"],
     "--ranks: rank counts must be whole numbers from 1 to 16,777,216"),
    (["whatif", "--mlp", "4096,4096,16", "--ranks", "-3"],
     "--ranks: rank counts must be whole numbers from 1 to 16,777,216"),
    (["whatif", "--mlp", "4096,4096,16", "--ranks", "32"],
     "--ranks: 32 ranks for a batch of 16"),
    (["analyze", LAP, "--kernel", "spmm", "--d", "1,,4"],
     "--d: '1,,4' has an empty value (two commas together, or one at an end)"),
])
def test_counts_that_cannot_be(args: list[str], needle: str) -> None:
    _one_line(sparsroof(*args), needle)


def test_archives_say_what_reads_them(tmp_path: Path) -> None:
    shutil.copy(LAP, tmp_path / "lap.mtx")
    with zipfile.ZipFile(tmp_path / "lap.zip", "w") as z:
        z.write(tmp_path / "lap.mtx", "lap.mtx")
    with tarfile.open(tmp_path / "lap.tar.gz", "w:gz") as t:
        t.add(tmp_path / "lap.mtx", "lap/lap.mtx")
    (tmp_path / "lap.mtx").unlink()
    _one_line(sparsroof("analyze", str(tmp_path / "lap.zip")), "lap.zip: is a zip archive",
              "unpack it", code=1)
    _one_line(sparsroof("analyze", str(tmp_path / "lap.tar.gz")),
              "lap.tar.gz: is a tar archive; 'sparsroof batch' reads", code=1)
    # what analyze says holds: batch reads the tar archive
    done = sparsroof("batch", str(tmp_path / "lap.tar.gz"), "--store", str(tmp_path / "t.db"))
    assert done.returncode == 0 and "1 analysed" in done.stderr, done.stderr
    # a folder whose only archive is a zip: the batch says it found no matrix
    (tmp_path / "lap.tar.gz").unlink()
    done = sparsroof("batch", str(tmp_path), "--store", str(tmp_path / "z.db"))
    assert done.returncode == 0
    assert "no matrix found under" in done.stderr
    assert ".tar.gz, .tgz and .tar archives" in done.stderr


def test_measured_runs_of_another_spec_name_both_files(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text(f"matrix,time_s,format\n{LAP},2.5e-5,csr\n")
    judged = sparsroof("compare", "m.csv", "--hw", "v100-sxm2", "-O", "json", cwd=tmp_path)
    (tmp_path / "j.json").write_text(judged.stdout)
    results = sparsroof("analyze", LAP, "-O", "json", cwd=tmp_path)
    (tmp_path / "r.json").write_text(results.stdout)
    done = sparsroof("plot", "roofline", "r.json", "--measured", "j.json", "-o", "b.png",
                     cwd=tmp_path)
    _one_line(done, "j.json: its runs were bounded on v100-sxm2", "r.json holds a100-80gb")
    assert not (tmp_path / "b.png").exists()


def test_classify_help_names_every_class() -> None:
    from sparsroof.structure.classify import CLASSES

    text = " ".join(sparsroof("classify", "--help").stdout.split())
    listed = text.split("Classes: ", 1)[1].split(". The verdict", 1)[0]
    assert listed.replace("- ", "-").split(", ") == list(CLASSES)


def test_o_where_a_command_has_none_says_what_it_has() -> None:
    _one_line(sparsroof("analyze", LAP, "-o", "x.json"), "no such option '-o': sparsroof "
              "analyze has no -o; use -O/--output FORMAT for the result on stdout or --plot "
              "FILE for a figure")


@pytest.mark.parametrize("args, needle", [
    (["whatif", "swin_tiny", "--sparsity", "0"], "--sparsity: sparsity '0' must lie"),
    (["whatif", "swin_tiny", "--pattern", "5:4"], "--pattern: N:M pattern '5:4'"),
    (["analyze", LAP, "--hw", LAP], "is a matrix, not a hardware spec"),
])
def test_an_option_s_error_names_it(args: list[str], needle: str) -> None:
    done = sparsroof(*args)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    assert needle in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_classify_writes_csv(tmp_path: Path) -> None:
    """A row per matrix, in the order given, with the verdict of the table and the
    features of the JSON that are one number; a failed file is named on stderr only."""
    import csv
    import io
    import json

    files = [LAP, str(ROOT / "data" / "random_1000.mtx"), str(tmp_path / "gone.mtx")]
    done = sparsroof("classify", *files, "-O", "csv")
    assert done.returncode == 1 and "gone.mtx: no such file" in done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    doc = json.loads(sparsroof("classify", *files[:2], "-O", "json").stdout)
    assert [r["matrix"] for r in rows] == ["lap2d_64", "random_1000"]
    for row, kept in zip(rows, doc["matrices"], strict=True):
        assert row["class"] == kept["verdict"]["label"]
        assert float(row["confidence"]) == kept["verdict"]["confidence"]
        assert int(row["stored_entries"]) == kept["features"]["stored_entries"]
        assert float(row["pattern_symmetry"]) == kept["features"]["pattern_symmetry"]
    assert rows[0]["params"] == "bandwidth=64;diagonals=5"


def test_check_names_a_step_summary_it_cannot_write(tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    done = sparsroof("check", str(ROOT / "examples" / "budgets.yaml"), "--junit", str(junit),
                     env={"GITHUB_STEP_SUMMARY": str(tmp_path / "nodir" / "s.md")})
    _one_line(done, "GITHUB_STEP_SUMMARY: ", "cannot write: no directory")
    assert not junit.exists()  # refused before anything was written


def test_bench_refuses_two_block_sizes_even_the_default_one() -> None:
    """--block 4 given beside bsr8 is two block sizes, not bsr8 overriding a default."""
    _one_line(sparsroof("bench", LAP, "--hw", "epyc-7763", "--block", "4", "--storage",
                        "bsr8"), "--storage: one BSR block size a run (4, 8 given)")


def test_every_file_a_command_writes_is_given_by_dash_o_or_out(tmp_path: Path) -> None:
    """-o/--out names the file written by generate, spy, plot, calibrate and hw probe
    (-O/--output is the format everywhere): generate's --output is refused rather than
    write a file named after a format, and --output-file still works where it was the
    name, but help shows --out alone."""
    from click.testing import CliRunner

    from sparsroof.cli import cli

    runner = CliRunner()
    for path in (["generate", "banded"], ["spy"], ["plot", "roofline"], ["calibrate"],
                 ["hw", "probe"]):
        text = runner.invoke(cli, [*path, "--help"], env={"COLUMNS": "100"}).output
        assert "-o, --out FILE" in text and "--output-file" not in text, (path, text)
    refused = sparsroof("generate", "banded", "--n", "4", "--halfwidth", "1", "--output",
                        "json", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith(
        "sparsroof: error: no such option '--output'; did you mean '--out'?"), refused.stderr
    assert not (tmp_path / "json").exists()
    spec = tmp_path / "me.yaml"
    done = runner.invoke(cli, ["hw", "probe", "--quick", "--output-file", str(spec)])
    assert done.exit_code == 0, done.output
    assert "bandwidth" in spec.read_text(encoding="utf-8")


@pytest.mark.parametrize("args", [
    ("analyze", LAP, "--hw", ""), ("analyze", LAP, "--hw", ","), ("hw", "show", ""),
    ("whatif", ""), ("formats", LAP, "--hw", " "),
])
def test_an_empty_name_is_named_as_empty(args: tuple[str, ...], tmp_path: Path) -> None:
    """An empty spec or model name is not the current folder, nor a list of no specs: one
    line says the name is empty."""
    out = sparsroof(*args, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert any(said in out.stderr for said in ("is empty", "has an empty value", "'': no "))


def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path: Path) -> None:
    long = "a" * 300
    for args in (("analyze", str(tmp_path / f"{long}.mtx")),
                 ("analyze", LAP, "--plot", str(tmp_path / f"{long}.png"))):
        out = sparsroof(*args, cwd=tmp_path)
        assert out.returncode != 0 and out.stderr.count("\n") == 1, out.stderr
        assert "File name too long" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("args", [
    ("analyze", LAP, "--calibration", ""), ("formats", LAP, "--calibration", " "),
    ("batch", "data", "--export", ""), ("check", "examples/budgets.yaml", "--junit", ""),
    ("check", "examples/budgets.yaml", "--measured", ""),
    ("whatif", "swin_tiny", "--points", ""), ("whatif", "swin_tiny", "--accuracy", ""),
])
def test_a_file_option_given_an_empty_name_is_refused(args: tuple[str, ...],
                                                      tmp_path: Path) -> None:
    """An empty file name (an unset shell variable) is not the option left out: the
    export, the report or the calibration asked for would be silently missing."""
    out = sparsroof(*[a if a != "data" else str(ROOT / "data") for a in args],
                    cwd=ROOT if args[0] == "check" else tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "names no file (an unset variable?)" in out.stderr


@pytest.mark.parametrize("args, needle", [
    (["analyze", LAP, "--kernel", "spmm", "--d", "2000000"],
     "--d: widths must be whole numbers from 1 to 1,048,576"),
    (["batch", LAP, "--kernel", "spmm", "--d", "9223372036854775808"],
     "--d: widths must be whole numbers from 1 to 1,048,576"),
    (["analyze", LAP, "--ranks", "9223372036854775808"],
     "--ranks: rank counts must be whole numbers from 1 to 16,777,216"),
    (["generate", "random", "--rows", "9", "--cols", "9", "--nnz", "5", "--seed", "-1"],
     "'--seed': -1 is not in the range x>=0"),
    (["generate", "block-pruned", "--rows", "8", "--cols", "8", "--block", "0"],
     "'--block': 0 is not in the range x>=1"),
    (["generate", "random", "--rows", "0", "--cols", "3", "--nnz", "0"],
     "'--rows': 0 is not in the range x>=1"),
    (["generate", "pruned", "--rows", "8", "--cols", "8", "--spread", "400"],
     "--spread must lie from 0 to 6 (got 400)"),
    (["analyze", LAP, "--storage", ""], "--storage: '' is empty"),
    (["analyze", LAP, "--storage", "csr,,coo"], "--storage: 'csr,,coo' has an empty value"),
    (["analyze", LAP, "--model", "compulsory,"], "--model: 'compulsory,' has an empty value"),
    (["bench", LAP, "--hw", "epyc-7763", "--storage", ""], "--storage: '' is empty"),
    (["whatif", "swin_tiny", "--pattern", "block4,"], "--pattern: 'block4,' has an empty"),
    (["whatif", "swin_tiny", "--sparsity", ""], "--sparsity: '' is empty"),
    (["whatif", "swin_tiny", "--sparsity", "75,,90"], "--sparsity: '75,,90' has an empty"),
    (["analyze", LAP, "--hw", "a100,,h100-sxm"], "--hw: 'a100,,h100-sxm' has an empty"),
    (["analyze", LAP, "--model", "optimistic,,pessimistic"],
     "--model: 'optimistic,,pessimistic' has an empty"),
])
def test_values_out_of_reach_are_refused_in_one_line(args: list[str], needle: str,
                                                     tmp_path: Path) -> None:
    """Sizes no run can have (they had overflowed SQLite or a seed, divided by zero or
    written infinite weights) and blank items in a list (skipped by some commands, read
    as every format by bench)."""
    if args[0] in ("batch", "generate"):
        args = [*args, "--store" if args[0] == "batch" else "-o", str(tmp_path / "out")]
    _one_line(sparsroof(*args), needle)


def test_formats_takes_any_longest_block() -> None:
    """--max-block beyond the strips there are is every block (2^63 had overflowed)."""
    done = sparsroof("formats", LAP, "--max-block", "9223372036854775808")
    assert done.returncode == 0 and "total" in done.stdout, done.stderr


def test_bench_refuses_operands_beyond_its_memory() -> None:
    """B and C of 100,000 columns on a 4,096-row matrix (6.1 GiB at fp64, and as much
    again for a copy a kernel may make) under a 2 GiB address-space limit: one line,
    before anything is allocated or any narrower width is timed."""
    import sys

    done = subprocess.run(
        ["prlimit", f"--as={2 * 2**30}", sys.executable, "-m", "sparsroof", "bench", LAP,
         "--hw", "epyc-7763", "--kernel", "spmm", "--d", "1,100000", "--storage", "csr"],
        capture_output=True, text=True, cwd=ROOT)
    _one_line(done, "--d 100000: with B and C of lap2d_64", "needs about 12.2 GiB",
              "address-space limit (ulimit -v) leaves")


@pytest.mark.parametrize("args, needle", [
    (["analyze", LAP, "--ranks", "1,2", "-O", "csv"],
     "-O csv writes one row per result, without what --ranks adds"),
    (["analyze", LAP, "--calibration", str(ROOT / "tests" / "data" / "calibration-epyc" /
                                            "calibration-1.json"), "--hw", "epyc-7763",
      "-O", "csv"], "without what --calibration adds"),
    (["analyze", LAP, "--plot-kind", "time"], "--plot-kind time is the kind of --plot FILE"),
    (["whatif", "--mlp", "4096,4096,16384", "--ranks", "1,2", "--hw", "clx-ridgeline",
      "--dtype", "fp32", "--no-cache-roof"], "give it without --no-cache-roof"),
    (["whatif", "--mlp", "4096,4096,16384", "--ranks", "1,2", "--hw", "clx-ridgeline",
      "--dtype", "fp32", "--timing", "sync"], "give it without --timing"),
    (["spy", LAP, "-o", "s.png", "--size", "101x5"], "--size '101x5': at most 100 inches"),
    (["spy", LAP, "-o", "s.png", "--size", "8x"], "expected WIDTHxHEIGHT in inches"),
    (["spy", LAP, "-o", ""], "'' names no file (an unset variable?)"),
    (["analyze", LAP, "--plot", ""], "'' names no file (an unset variable?)"),
])
def test_options_whose_answer_would_be_lost_or_misread(args: list[str], needle: str,
                                                       tmp_path: Path) -> None:
    """CSV rows cannot hold rank bounds or calibrated times (they were left out unsaid), a
    figure kind needs a figure, an option --mlp does not use is named as it was typed,
    and an empty output name is not the working folder."""
    _one_line(sparsroof(*args, cwd=tmp_path), needle)


def test_an_alias_and_its_spec_are_one_spec() -> None:
    done = sparsroof("analyze", LAP, "--hw", "a100,a100-80gb", "-O", "json")
    assert done.returncode == 0, done.stderr
    assert [m["spec"] for m in json.loads(done.stdout)["matrices"]] == ["a100-80gb"]


def test_a_gpu_without_a_launch_floor_is_timed_as_asked() -> None:
    """The header names the timing method on a GPU spec that gives no launch floor (it
    had said 'warm', which no --timing is); a CPU's runs are warm or cold."""
    gpu = sparsroof("analyze", LAP, "--hw", "mi300x", "--timing", "sync")
    cpu = sparsroof("analyze", LAP, "--hw", "epyc-7763", "--timing", "sync")
    assert "spmv on mi300x, timed sync" in gpu.stdout
    assert "spmv on epyc-7763, timed warm" in cpu.stdout


def test_exbibytes_are_a_capacity() -> None:
    done = sparsroof("analyze", LAP, "--max-memory", "1 EiB", "-O", "json")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args, missing", [
    (["random", "--rows", "100", "--cols", "100"], "--nnz"),
    (["banded", "--n", "100"], "--halfwidth"),
    (["block"], "--block-rows"),
    (["powerlaw"], "--n"),
    (["stencil3d"], "--n"),
    (["dense", "--rows", "3"], "--cols"),
])
def test_a_generator_without_a_required_size_names_it(args: list[str], missing: str,
                                                      tmp_path: Path) -> None:
    """A size a generator needs and was not given (each had reached the generator as
    None and crashed on it, since click reads default=None as a value given)."""
    _one_line(sparsroof("generate", *args, "-o", str(tmp_path / "g.mtx")),
              f"missing option '{missing}'")


def test_a_slip_in_a_choice_is_named() -> None:
    _one_line(sparsroof("analyze", LAP, "--kernel", "spmmm"),
              "'spmmm' is not one of 'spmv', 'spmm'; did you mean 'spmm'?")


def test_a_spec_file_that_is_not_there_says_how_to_make_one(tmp_path: Path) -> None:
    _one_line(sparsroof("analyze", LAP, "--hw", "my host.yaml", cwd=tmp_path),
              "my host.yaml: no such file (a spec of this host: sparsroof hw probe -o "
              "'my host.yaml')")


def test_calls_per_sync_goes_with_sync() -> None:
    """A count of calls between synchronisations, for runs that do not synchronise, was
    accepted and did nothing."""
    _one_line(sparsroof("analyze", LAP, "--calls-per-sync", "4"),
              "--calls-per-sync counts the calls between two host synchronisations: it goes "
              "with --timing sync")
    assert sparsroof("analyze", LAP, "--calls-per-sync", "4", "--timing", "sync").returncode == 0


def test_a_model_parameter_no_model_read_is_said() -> None:
    """--reuse-factor on a banded matrix: the class's model is not the blocked one, so the
    value was taken and silently unused; with --model blocked it is read."""
    done = sparsroof("analyze", LAP, "--reuse-factor", "0.5")
    assert done.returncode == 0
    assert "note: --reuse-factor was not used: it is a parameter of the blocked model" \
        in done.stderr
    used = sparsroof("analyze", LAP, "--reuse-factor", "0.5", "--model", "blocked")
    assert used.returncode == 0 and "not used" not in used.stderr
