"""Every table fits the terminal it is printed in, at 80 and 100 columns: no line is wider,
no cell is cut with '…', and every number and name is printed whole on one line (text
wraps at spaces only). A table too wide folds into column groups."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ..conftest import ROOT, sparsroof

COMMANDS = [
    ("analyze", "data/lap2d_64.mtx", "--hw", "a100"),
    ("analyze", "data/lap2d_64.mtx", "--storage", "all", "--model", "all", "--wide"),
    ("analyze", "data/lap2d_64.mtx", "--hw", "a100,h100-sxm,mi300x"),
    ("analyze", "data/lap2d_64.mtx", "--hw", "v100-sxm2", "--reorder", "rcm,degree"),
    ("classify", "data/lap2d_64.mtx", "data/random_1000.mtx"),
    ("hw", "list"),
    ("hw", "list", "--wide"),
    ("formats", "data/lap2d_64.mtx", "--hw", "a100"),
    ("whatif", "deit_small", "--pattern", "2:4", "--layers"),
    ("whatif", "swin_tiny", "--pattern", "unstructured,block4,2:4"),
    # the rest of the README's commands that print a table
    ("analyze", "data/lap2d_64.mtx", "data/random_1000.mtx", "--kernel", "spmm", "--d",
     "1,4,16,64", "--dtype", "fp32"),
    ("hw", "show", "v100-measured"),
    ("check", "examples/budgets.yaml"),
    ("whatif", "--mlp", "4096,4096,16384", "--ranks", "1,4,16,64", "--hw", "clx-ridgeline",
     "--dtype", "fp32"),
    ("whatif", "resnet50", "--batch", "32", "--sparsity", "75,87.5"),
    ("compare", "{work}/measured.csv", "--hw", "v100-sxm2"),
    ("report", "{work}/results.db"),
]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder of what compare and report read: the README's measured runs and a store."""
    here = tmp_path_factory.mktemp("w")
    data = ROOT / "data"
    (here / "measured.csv").write_text(
        f"matrix,time_s,format\n{data / 'lap2d_64.mtx'},2.5e-5,csr\n"
        f"{data / 'random_1000.mtx'},9.0e-6,csr\n{data / 'lap2d_64.mtx'},3.1e-5,ell\n")
    batch = sparsroof("batch", "data", "--hw", "a100", "--store", str(here / "results.db"),
                      cwd=ROOT)
    assert batch.returncode == 0, batch.stderr
    batch = sparsroof("batch", "data", "--hw", "a100,v100-sxm2", "--store",
                      str(here / "two.db"), cwd=ROOT)
    assert batch.returncode == 0, batch.stderr
    return str(here)


def _run(args: tuple[str, ...], columns: int, work: str = "") -> str:
    env = {**os.environ, "COLUMNS": str(columns)}
    # a file of the work folder is named relative to it: a long temporary path is one
    # word no terminal width can hold
    cwd = work if any("{work}" in a for a in args) else ROOT
    args = tuple(a.replace("{work}/", "") for a in args)
    out = sparsroof(*args, cwd=cwd, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("columns", [80, 100])
def test_tables_fit_the_terminal(args: tuple[str, ...], columns: int, work: str) -> None:
    text = _run(args, columns, work)
    lines = text.splitlines()
    assert "…" not in text
    assert max(len(line) for line in lines) <= columns, "\n".join(
        line for line in lines if len(line) > columns)
    # every word and figure printed with room to spare is printed whole when narrow: text
    # wraps at spaces only
    roomy = {w for w in _run(args, 400, work).split() if set(w) - set("─━")}
    narrow = set(text.split())
    if "--reorder" in args:  # the reordering's time, figure and unit, is measured afresh
        roomy = {w for w in roomy
                 if not any(c.isdigit() for c in w) and w not in {"ns", "µs", "ms", "s"}}
    missing = roomy - narrow
    if "left out to fit" in text:  # a spare column left out rather than fold the table: its
        # figures are missing, the caption names it and no longer defines it
        names = re.search(rf"left out to fit {columns} columns: (.*) \(a wider", text)
        assert names is not None, text
        for name in names.group(1).split(", "):
            defined = re.search(rf"{re.escape(name)} = [^;\n]*", _run(args, 400, work))
            assert name.split()[-1] in {"peak", "margin"}, name
            said = [*name.split(), *(defined.group(0).split() if defined else ())]
            missing -= {*said, *(w + ";" for w in said)}
        missing = {w for w in missing if not w.strip("+-%").replace(".", "").isdigit()}
    assert not sorted(missing)[:10]


def test_a_table_of_several_specs_spares_a_column_rather_than_fold() -> None:
    text = _run(("analyze", "data/lap2d_64.mtx", "--hw", "a100,h100-sxm,mi250x-gcd"), 80)
    assert "columns 1 of" not in text and "% peak" not in text.split("FLOPs =")[0]
    assert "left out to fit 80 columns: % peak (a wider terminal shows it)" in text
    assert "% peak" in _run(("analyze", "data/lap2d_64.mtx", "--hw",
                             "a100,h100-sxm,mi250x-gcd"), 100).split("FLOPs =")[0]


def test_a_table_too_wide_folds_into_column_groups() -> None:
    text = _run(("analyze", "data/lap2d_64.mtx", "--storage", "all", "--model", "all",
                 "--wide"), 80)
    assert "columns 1 of" in text and "columns 2 of" in text
    # the key columns come again in every group
    headers = [line for line in text.splitlines() if line.startswith("d  format")]
    assert len(headers) >= 2


@pytest.mark.parametrize(("args", "keys", "columns"), [
    (("check", "examples/budgets.yaml"), "check  matrix  d  metric", 72),
    (("whatif", "swin_tiny", "--pattern", "unstructured,block4,2:4"),
     "pattern  sparsity  kernel / unit", 80),
])
def test_every_part_of_a_folded_table_names_its_rows(args: tuple[str, ...], keys: str,
                                                      columns: int) -> None:
    """Each part of a folded table repeats the columns that say what a row is: a budget
    check's metric on its matrix, and a study's rows keep their sparsity."""
    text = _run(args, columns)
    parts = text.count("columns ")
    heads = [" ".join(line.split()) for line in text.splitlines()
             if line.split()[:1] == keys.split()[:1]]
    assert parts >= 2 and len(heads) == parts, text
    assert all(h.startswith(" ".join(keys.split())) for h in heads), heads


def test_a_store_ranked_per_matrix_and_spec_names_both_in_every_part(work: str) -> None:
    """The report of a store analysed on two specs ranks a row per matrix and spec: each
    part of its folded tables repeats both, so two rows of one matrix stay apart."""
    text = _run(("report", "{work}/two.db"), 80, work)
    ranked = text[text.index("furthest from"):]
    heads = [line.split() for line in ranked.splitlines() if line.startswith("matrix ")]
    assert ranked.count("columns 1 of") == 2 and len(heads) >= 4, text
    assert all(h[:2] == ["matrix", "spec"] for h in heads), heads


def test_piped_output_keeps_its_full_width() -> None:
    """Without a terminal and without COLUMNS, a table keeps its natural width, so a file
    of results has one line per row."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run([sys.executable, "-m", "sparsroof", "hw", "list", "--wide"],
                         capture_output=True, text=True, cwd=ROOT, env=env)
    assert "columns 1 of" not in out.stdout
    assert any(len(line) > 150 for line in out.stdout.splitlines())



def _command_paths(group: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command under ``group`` (the lazy group's too), as its words."""
    import click

    paths = [prefix]
    if isinstance(group, click.Group):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            paths += _command_paths(group.get_command(ctx, name), (*prefix, name))
    return paths


def test_every_help_fits_80_columns() -> None:
    """Every --help, its examples included, fits an 80-column terminal: a long example
    goes on over lines that end with a backslash, as a shell reads them."""
    from click.testing import CliRunner

    from sparsroof.cli import cli

    wide, paths = [], _command_paths(cli)
    assert len(paths) > 20 and ("plot", "reuse") in paths, paths
    for path in paths:
        out = CliRunner().invoke(cli, [*path, "--help"], env={"COLUMNS": "80"},
                                 terminal_width=80)
        assert out.exit_code == 0, (path, out.output)
        wide += [f"{' '.join(path)}: {line}" for line in out.output.splitlines()
                 if len(line) > 80]
    assert not wide, "\n".join(wide)


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_a_label_wraps_into_two_lines_at_most(columns: int) -> None:
    """A squeezed table narrows its label columns (format, model, roof) only as far as
    two lines a cell, and folds into parts rather than stack a label's words one a line:
    every row of the wide analysis table takes one or two lines."""
    text = _run(("analyze", "data/lap2d_64.mtx", "--storage", "csr,ell,hyb", "--wide"),
                columns)
    heights, height = [], 0
    for line in text.splitlines():
        if line[:2] == "1 ":  # a row starts (d = 1)
            if height:
                heights.append(height)
            height = 1
        elif height and line.startswith("   ") and line.strip():
            height += 1
        elif height:
            heights.append(height)
            height = 0
    assert heights and max(heights) <= 2, text
