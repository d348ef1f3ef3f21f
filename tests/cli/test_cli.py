from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from ..conftest import DATA, ROOT, fresh_python, loaded_by_command, sparsroof


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=ROOT)


def test_analyze_json_carries_versions_and_numbers() -> None:
    out = run("analyze", "data/lap2d_64.mtx", "--kernel", "spmm", "--d", "1,4", "--output",
              "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema_version"] == 1 and doc["version"]
    (matrix,) = doc["matrices"]
    assert matrix["matrix"]["stored_entries"] == 20224 and matrix["spec"] == "a100-80gb"
    widths = [r["traffic"]["width"] for r in matrix["results"]]
    assert widths == [1] * 4 + [4] * 4
    # the class picks the banded model; the measured model and the band come beside it
    assert matrix["class"]["label"] == "banded"
    roles = {r["traffic"]["model"]: r["role"] for r in matrix["results"]}
    assert roles == {"banded": "class", "cache-aware": "measured",
                     "compulsory": "optimistic", "random": "pessimistic"}
    first = matrix["results"][0]["traffic"]
    # CSR fp64 int32: 20224 x 12 + 4097 x 4 bytes of A
    assert first["bytes_a"] == 20224 * 12 + 4097 * 4
    assert doc["errors"] == []


def test_analyze_csv_has_one_row_per_width_and_model() -> None:
    out = run("analyze", "data/random_1000.mtx", "--kernel", "spmm", "--d", "1,16",
              "--output", "csv")
    lines = out.stdout.strip().splitlines()
    # a random matrix: its class model is random itself, so 3 models (random, cache-aware,
    # compulsory) x 2 widths
    assert out.returncode == 0 and len(lines) == 1 + 2 * 3
    assert lines[0].startswith("schema_version,version,matrix")


def test_good_files_reported_when_one_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 3 1.0\n")
    out = run("analyze", "data/lap2d_64.mtx", str(bad), "data/random_1000.mtx",
              "--output", "json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert [m["matrix"]["name"] for m in doc["matrices"]] == ["lap2d_64", "random_1000"]
    assert doc["errors"][0]["path"] == str(bad)
    assert "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and str(bad) in out.stderr


@pytest.mark.parametrize("args,code,needle", [
    (["analyze", "nope.mtx"], 1, "nope.mtx: no such file"),
    (["analyze", "data/lap2d_64.mtx", "--hw", "a10O"], 2, "did you mean 'a100'"),
    (["analyse", "data/lap2d_64.mtx"], 2, "no command 'analyse'; did you mean 'analyze'?"),
    (["analyze", "data/lap2d_64.mtx", "--dtype", "int8", "--unit", "simt"], 2,
     "try --dtype fp32 or --unit tensor"),
    (["analyze", "data/lap2d_64.mtx", "--hw", "c2050", "--dtype", "bf16", "--unit", "simt"], 2,
     "try --dtype fp32"),
    (["analyze", "data/lap2d_64.mtx", "--plot", "out.jpg"], 2, "unknown figure format"),
    (["analyze", "data/lap2d_64.mtx", "--plot", "r.png", "--plot-kind", "ridgeline"], 2,
     "give --ranks"),
    (["analyze", "data/lap2d_64.mtx", "--hw", "a100,v100", "--plot", "r.png", "--plot-kind",
      "time"], 2, "give --hw one spec"),
    (["analyze", "data/lap2d_64.mtx", "--d", "4"], 2, "spmv multiplies by one vector"),
    (["analyze", "data/lap2d_64.mtx", "--kernel", "spmm", "--d", "x"], 2,
     "--d: 'x' is not a whole number"),
    (["analyze", "data/lap2d_64.mtx", "--kernel", "spmm", "--d", "0"], 2, "--d: widths must"),
    (["analyze", "data/lap2d_64.mtx", "--ranks", "0"], 2, "--ranks: rank counts must"),
    (["spy", "data/lap2d_64.mtx", "-o", "x.bmp"], 2, "-o x.bmp: unknown figure format"),
    (["plot", "time", "results.json", "-o", "/nonexistent/dir/t.png"], 2, "cannot write"),
    (["analyze", "data/lap2d_64.mtx", "--dtype", "fp8"], 2, "invalid value"),
])
def test_errors_are_one_line_with_exit_code(args: list[str], code: int, needle: str) -> None:
    result = run(*args)
    assert result.returncode == code, result.stderr
    assert needle in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""  # before any work


def test_table_output_lists_every_column() -> None:
    out = run("analyze", "data/lap2d_64.mtx")
    assert out.returncode == 0
    for header in ("FLOPs", "SoL", "bound", "GFLOP/s", "compulsory", "random"):
        assert header in out.stdout


def test_quick_start_command_from_readme(tmp_path: Path) -> None:
    """Run the README's first quick-start command (skipping the install part)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block, "README has no ```sh quick-start block"
    commands = [c for c in block.group(1).splitlines() if c.strip().startswith("pip install")]
    first = commands[0]
    run_part = first.split("&&")[-1].strip()
    assert run_part.startswith("sparsroof analyze")
    argv = shlex.split(run_part)
    env = dict(os.environ)
    # the installed entry point where there is one (CI installs the project), else -m
    exe = shutil.which("sparsroof")
    prefix = [exe] if exe else [sys.executable, "-m", "sparsroof"]
    result = subprocess.run([*prefix, *argv[1:]], cwd=ROOT,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert "lap2d_64" in result.stdout and re.search(r"\b(memory|compute|launch)\b", result.stdout)
    assert (DATA / "lap2d_64.mtx").exists()


def test_broken_pipe_is_quiet() -> None:
    cmd = f"{shlex.quote(sys.executable)} -m sparsroof analyze data/lap2d_64.mtx --kernel spmm " \
          f"--d {','.join(str(i) for i in range(1, 400))} --output csv | head -1"
    result = subprocess.run(cmd, shell=True, cwd=ROOT, capture_output=True, text=True)
    assert result.stdout.startswith("schema_version")
    assert "Traceback" not in result.stderr and "Error" not in result.stderr


def _subcommands(group: click.Group, ctx: click.Context,
                 prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found += _subcommands(command, click.Context(command, parent=ctx), f"{prefix}{name} ")
    return found


def test_every_command_has_help_and_is_in_the_readme_or_docs() -> None:
    """Every command is in the README; every subcommand in the README or docs/."""
    from sparsroof.cli import cli

    readme = (ROOT / "README.md").read_text()
    docs = readme + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    commands = _subcommands(cli, click.Context(cli))
    assert len(commands) >= 13
    for name, command in commands:
        assert (command.help or "").strip(), f"{name} has no help text"
        where = readme if " " not in name else docs
        assert f"sparsroof {name}" in where, f"'sparsroof {name}' is not documented"


def test_one_command_imports_only_its_own_module() -> None:
    heavy, _, _ = loaded_by_command(["hw", "list", "-O", "csv"], (
        "sparsroof.batch.plan", "sparsroof.whatif.study", "sparsroof.host.calibration",
        "matplotlib", "numba"), cwd=ROOT)
    assert heavy == []


def test_hw_is_one_option_everywhere(tmp_path: Path) -> None:
    """--hw takes repeated and comma separated names alike; a command that compares specs
    gets them all, one that bounds on one spec refuses the extra names as a usage error, and
    an unknown name is one usage error before any work, never one per row."""
    both = run("analyze", "data/lap2d_64.mtx", "--hw", "a100", "--hw", "h100-sxm,a100",
               "--model", "compulsory", "-O", "json")
    assert both.returncode == 0, both.stderr
    assert [m["spec"] for m in json.loads(both.stdout)["matrices"]] == ["a100-80gb", "h100-sxm"]
    store = tmp_path / "s.db"
    batch = run("batch", "data/lap2d_64.mtx", "--hw", "a100,v100-sxm2", "--store", str(store),
                "--model", "compulsory")
    assert batch.returncode == 0, batch.stderr
    report = json.loads(run("report", str(store), "-O", "json").stdout)
    assert {row["spec"] for row in report["by_bound"]} == {"a100-80gb", "v100-sxm2"}
    runs = tmp_path / "runs.csv"
    runs.write_text(f"matrix,time_s\n{DATA / 'lap2d_64.mtx'},1e-5\n"
                    f"{DATA / 'random_1000.mtx'},1e-5\n", encoding="utf-8")
    for args in (("compare", str(runs), "--hw", "a100,v100-sxm2"),
                 ("formats", "data/lap2d_64.mtx", "--hw", "a100", "--hw", "h200"),
                 ("whatif", "deit_small", "--hw", "a100,h200")):
        out = run(*args)
        assert out.returncode == 2 and "bounds on one spec" in out.stderr, args
        assert len(out.stderr.strip().splitlines()) == 1, args
    unknown = run("compare", str(runs), "--hw", "nosuch")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "nosuch: no bundled hardware spec" in unknown.stderr


USAGE_ERRORS = [
    # (arguments, text of the one error line, files that must not be written)
    (("analyze", "data/lap2d_64.mtx", "--hw", "a100,nosuch"), "nosuch: no bundled", ()),
    (("analyze", "data/lap2d_64.mtx", "--d", "0"), "--d: widths must be whole", ()),
    (("analyze", "data/lap2d_64.mtx", "--plot", "{d}/x.xyz"), "--plot", ()),
    (("batch", "data", "--hw", "nosuch", "--store", "{d}/s.db"), "nosuch: no bundled",
     ("s.db",)),
    (("compare", "{d}/bad.csv", "--hw", "nosuch"), "nosuch: no bundled", ()),
    (("compare", "{d}/bad.csv", "--plot", "{d}/x.xyz"), "--plot", ()),
    (("formats", "data/lap2d_64.mtx", "--hw", "nosuch"), "nosuch: no bundled", ()),
    (("whatif", "deit_small", "--hw", "nosuch", "--points", "{d}/p.csv"),
     "nosuch: no bundled", ("p.csv",)),
    (("whatif", "deit_small", "--accuracy", "{d}/acc.csv", "--plot", "{d}/x.xyz"), "--plot",
     ()),
    (("check", "examples/budgets.yaml", "--tolerance", "5%", "--junit", "{d}/r.xml"),
     "--tolerance applies to a --baseline", ("r.xml",)),
    (("spy", "data/lap2d_64.mtx", "-o", "{d}/x.xyz"), "-o", ()),
    (("hw", "show", "nosuch"), "nosuch: no bundled", ()),
]


@pytest.mark.parametrize("args,says,unwritten", USAGE_ERRORS,
                         ids=[" ".join(a[:2]) + f" {i}" for i, (a, _, _) in
                              enumerate(USAGE_ERRORS)])
def test_a_usage_error_is_one_line_exit_2_before_any_work(
        tmp_path: Path, args: tuple[str, ...], says: str, unwritten: tuple[str, ...]) -> None:
    """A bad option is one line and exit 2 before anything is read or written: the runs
    file's bad rows (one error each, were it read) never show, and no output file is made."""
    (tmp_path / "bad.csv").write_text("matrix,time_s\nm.mtx,fast\nm.mtx,fast\n")
    (tmp_path / "acc.csv").write_text("pattern,sparsity,accuracy\n2:4,,0.8\n")
    out = run(*(a.format(d=tmp_path) for a in args))
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sparsroof: error: "), out.stderr
    assert says in lines[0]
    for name in unwritten:
        assert not (tmp_path / name).exists(), name


def test_plot_sparsity_roofline_and_accuracy_skip_the_same_rows(tmp_path: Path) -> None:
    """Both figures of whatif --points leave out the levels without an accuracy, and say
    how many: all rows but the two levels the accuracy file gives."""
    acc = tmp_path / "acc.csv"
    acc.write_text("pattern,sparsity,accuracy\nunstructured,0.75,0.7\nblock4,0.5,0.75\n")
    points = tmp_path / "points.csv"
    made = run("whatif", "deit_small", "--accuracy", str(acc), "--points", str(points))
    assert made.returncode == 0, made.stderr
    rows = points.read_text().splitlines()[1:]
    assert len(rows) > 2
    for kind in ("sparsity-roofline", "accuracy"):
        out = run("plot", kind, str(points), "-o", str(tmp_path / f"{kind}.png"))
        assert out.returncode == 0, out.stderr
        assert f"{len(rows) - 2} point(s) have no accuracy and are left out" in out.stderr
        assert (tmp_path / f"{kind}.png").stat().st_size > 0


def test_a_command_run_in_process_exits_as_a_fresh_interpreter_would(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The tests' in-process runner: an escaped exception is a traceback and status 1, a
    warning is shown on stderr, and the folder and environment are as they were after."""
    import warnings

    from sparsroof.cli import guard as entry  # the entry point calls its run_guarded

    def escapes(command: click.Command, argv: list[str] | None) -> int:
        warnings.warn("shown", UserWarning, stacklevel=1)
        os.environ["SPARSROOF_LEFT_BEHIND"] = "1"
        raise ValueError("escaped")

    here, columns = os.getcwd(), os.environ.get("COLUMNS")
    monkeypatch.setattr(entry, "run_guarded", escapes)
    out = sparsroof("classify", cwd=tmp_path, env={"COLUMNS": "91"})
    assert out.returncode == 1 and "UserWarning: shown" in out.stderr
    assert "Traceback (most recent call last)" in out.stderr and "ValueError: escaped" in out.stderr
    assert os.getcwd() == here and "SPARSROOF_LEFT_BEHIND" not in os.environ
    assert os.environ.get("COLUMNS") == columns


@pytest.mark.parametrize(("args", "preset", "want"), [
    (["classify", str(DATA / "lap2d_64.mtx"), "--no-cache"], None, "1"),
    (["classify", str(DATA / "lap2d_64.mtx"), "--no-cache"], "3", "3"),
    (["hw", "list", "-O", "csv"], None, None),
])
def test_numpys_blas_starts_with_one_thread_but_for_hw(
        args: list[str], preset: str | None, want: str | None) -> None:
    """A command that multiplies no dense matrices starts OpenBLAS with one thread (its
    pool of a thread per core costs every process CPU at import); ``hw`` (whose probe
    times matrix multiplies) and a count the user set are left alone."""
    code = ("import os, sys\nfrom sparsroof.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as stop:\n"
            "    assert not stop.code, stop.code\n"
            "print('\\nBLAS', os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    out = fresh_python(code, *args, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr.rsplit("\nBLAS ", 1)[1].strip() == str(want)


def test_bsr_is_named_alike_in_analyze_and_bench() -> None:
    """analyze names a BSR by its block (bsr2 ... bsr32); bench takes those names too (as
    bsr with --block), and a bare 'bsr' in analyze asks for the block size."""
    import json

    from ..conftest import ROOT, sparsroof

    out = sparsroof("analyze", "data/lap2d_64.mtx", "--storage", "csr,bsr", cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr == ("sparsroof: error: --storage: 'bsr' needs its block size here: "
                          "bsr2, bsr4, bsr8, bsr16, bsr32\n")
    ran = sparsroof("bench", "data/lap2d_64.mtx", "--hw", "epyc-7763", "--storage",
                    "csr,bsr8", "--repeat", "1", "-O", "json", cwd=ROOT)
    assert ran.returncode in (0, 3), ran.stderr
    assert [r["storage"] for r in json.loads(ran.stdout)["results"]] == ["csr", "bsr8"]
    both = sparsroof("bench", "data/lap2d_64.mtx", "--hw", "epyc-7763", "--storage",
                     "bsr8,bsr4", cwd=ROOT)
    assert both.returncode == 2 and "one BSR block size a run (4, 8 given)" in both.stderr


def test_a_cpu_table_says_warm_or_cold_not_a_launch_method() -> None:
    """graph, stream and sync differ by their launch floors; a CPU spec has none, so its
    table says the runs are warm (or cold), and a GPU's names the method."""
    from ..conftest import ROOT, sparsroof

    def second_line(*args: str) -> str:
        out = sparsroof("analyze", "data/lap2d_64.mtx", *args, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()[1]

    assert second_line("--hw", "epyc-7763") == ("spmv on epyc-7763, timed warm (graph, stream "
                                                "and sync alike on a CPU)")
    assert second_line("--hw", "epyc-7763", "--timing", "cold") == \
        "spmv on epyc-7763, timed cold"
    assert second_line("--hw", "a100") == "spmv on a100-80gb, timed graph"


def test_a_complex_matrix_run_here_says_its_kernels_multiply_reals(tmp_path: Path) -> None:
    """bench (and formats --run) time real kernels: of a complex matrix they run its
    pattern with real values, judged against real bounds, and say so."""
    from ..conftest import ROOT, sparsroof

    path = tmp_path / "c.mtx"
    path.write_text("%%MatrixMarket matrix coordinate complex general\n3 3 2\n"
                    "1 1 1 0\n2 3 2 1\n")
    out = sparsroof("bench", str(path), "--hw", "epyc-7763", "--storage", "csr",
                    "--repeat", "1", cwd=ROOT)
    assert out.returncode in (0, 3), out.stderr
    assert "sparsroof: note: c is complex: its kernels here multiply real values in its " \
        "pattern, and are judged against real bounds" in out.stderr
