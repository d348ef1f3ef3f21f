"""Numbers in plot inputs: every bad value is one line naming the file, record and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparsroof.errors import FigureError
from sparsroof.plot.points import NUMBERS, roof_point
from sparsroof.userfile import finite_numbers

from ..conftest import ROOT
from .test_plot import run, run_here

#: (text written into the JSON in place of the number, what the error says about it)
BAD = [
    ("NaN", "is NaN"),
    ("Infinity", "is infinite"),
    ("-Infinity", "is -infinite"),
    ("null", "is null"),
    ('"1e9"', "is the string '1e9'"),
    ("true", "is true"),
    ("[1]", "is a list"),
    ("-2.5", "is -2.5, below 0"),
]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Good documents of each kind: analyze JSON with ranks, and compare JSON."""
    folder = tmp_path_factory.mktemp("plot-inputs")
    out = run("analyze", "data/lap2d_64.mtx", "--hw", "clx-ridgeline", "--dtype", "fp32",
              "--kernel", "spmm", "--d", "16", "--ranks", "1,2,4", "--output", "json")
    assert out.returncode == 0, out.stderr
    measured = folder / "measured.csv"
    measured.write_text(f"matrix,time_s\n{ROOT / 'data/lap2d_64.mtx'},2.5e-5\n")
    judged = run("compare", str(measured), "--hw", "a100", "-O", "json")
    assert judged.returncode == 0, judged.stderr  # 2.5e-5 s is slower than its bound
    return {"analyze": json.loads(out.stdout), "compare": json.loads(judged.stdout),
            "folder": folder}


def _with(doc: dict[str, Any], path: tuple[Any, ...], text: str, out: Path) -> Path:
    """Write ``doc`` with the number at ``path`` replaced by the JSON ``text``."""
    node = doc = json.loads(json.dumps(doc))
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = "@@BAD@@"
    out.write_text(json.dumps(doc).replace('"@@BAD@@"', text))
    return out


#: (command, document, where the bad number goes, what the error names)
CASES = [
    ("roofline", "analyze", ("matrices", 0, "results", 0, "bound", "sol_s"),
     "matrices[0].results[0]: field 'sol_s'"),
    ("roofline", "analyze", ("matrices", 0, "results", 1, "traffic", "bytes_total"),
     "matrices[0].results[1]: field 'bytes_total'"),
    ("time", "analyze", ("matrices", 0, "results", 0, "bound", "memory_s"),
     "matrices[0].results[0]: field 'memory_s'"),
    ("time", "analyze", ("matrices", 0, "results", 0, "bound", "peak_flops"),
     "matrices[0].results[0]: field 'peak_flops'"),
    ("ridgeline", "analyze", ("matrices", 0, "distributed", 2, "bytes_network"),
     "matrices[0].distributed[2]: field 'bytes_network'"),
    ("ridgeline", "analyze", ("matrices", 0, "distributed", 1, "flops"),
     "matrices[0].distributed[1]: field 'flops'"),
    ("measured", "compare", ("runs", 0, "measured_s"), "runs[0]: field 'measured_s'"),
    ("measured", "compare", ("runs", 0, "bound_s"), "runs[0]: field 'sol_s'"),
]


@pytest.mark.parametrize("text,says", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("command,kind,path,names", CASES,
                         ids=[f"{c[0]}-{c[2][-1]}" for c in CASES])
def test_a_bad_number_in_a_plot_input_is_one_line(
        inputs: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        command: str, kind: str, path: tuple[Any, ...], names: str, text: str,
        says: str) -> None:
    bad = _with(inputs[kind], path, text, tmp_path / "bad.json")
    args = (["plot", "roofline", "--measured", str(bad)] if command == "measured"
            else ["plot", command, str(bad)])
    code, err = run_here(capsys, *args, "-o", str(tmp_path / "f.png"))
    assert code == 1
    assert err.strip() == f"sparsroof: error: {bad}: {names} {says}" + (
        "" if "below" in says else ", expected a finite number")
    assert not (tmp_path / "f.png").exists()


def test_the_good_documents_draw(inputs: dict[str, Any], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The same documents unchanged: the checks refuse only the bad numbers."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(inputs["analyze"]))
    judged = tmp_path / "judged.json"
    judged.write_text(json.dumps(inputs["compare"]))
    for args in (["roofline", str(good)], ["time", str(good)], ["ridgeline", str(good)],
                 ["roofline", "--measured", str(judged)]):
        code, err = run_here(capsys, "plot", *args, "-o", str(tmp_path / "f.png"))
        assert code == 0, err


@pytest.mark.parametrize("cell,says", [("nan", "is NaN"), ("inf", "is infinite"),
                                       ("abc", "is 'abc'"), (" ", "is empty")])
def test_bad_cells_of_a_sparsity_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     cell: str, says: str) -> None:
    points = tmp_path / "p.csv"
    points.write_text(f"pattern,sparsity,speedup,accuracy\n2:4,0.5,1.6,79\nx,0.5,2,{cell}\n")
    code, err = run_here(capsys, "plot", "sparsity-roofline", str(points), "-o",
                         str(tmp_path / "s.png"))
    assert code == 1
    assert err.strip() == (f"sparsroof: error: {points}: line 3: field 'accuracy' {says}, "
                           "expected a finite number")


@pytest.mark.parametrize("text,says", BAD[:6], ids=[b[0] for b in BAD[:6]])
def test_bad_values_in_sparsity_json(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     text: str, says: str) -> None:
    points = tmp_path / "p.json"
    points.write_text('{"points": [{"pattern": "2:4", "sparsity": 0.5, "speedup": 1.6, '
                      f'"accuracy": 79}}, {{"pattern": "x", "sparsity": 0.5, "speedup": '
                      f'{text}, "accuracy": 70}}]}}')
    code, err = run_here(capsys, "plot", "sparsity-roofline", str(points), "-o",
                         str(tmp_path / "s.png"))
    assert code == 1
    assert err.strip() == (f"sparsroof: error: {points}: point 1: field 'speedup' {says}, "
                           "expected a finite number")


def test_one_check_for_every_number_of_a_point() -> None:
    """roof_point checks each numeric field of RoofPoint, whichever reader calls it."""
    good = {"matrix": "a", "kernel": "spmv", "storage": "csr", "model": "compulsory",
            "unit": "cuda", "precision": "fp64", "bound": "memory", "memory_level": "HBM",
            **{name: 1.0 for name in NUMBERS}, "width": 1}
    assert roof_point(good, "x.csv").width == 1
    assert roof_point({k: str(v) for k, v in good.items()}, "x.csv",
                      from_text=True).sol_s == 1.0
    for name in NUMBERS:
        with pytest.raises(FigureError, match=f"x.csv: row 7: field '{name}' is NaN"):
            roof_point(good | {name: float("nan")}, "x.csv", "row 7")
    with pytest.raises(FigureError, match="field 'width' is 1.5, expected a whole number"):
        roof_point(good | {"width": 1.5}, "x.csv")
    with pytest.raises(FigureError, match="missing field 'sol_s'"):
        roof_point({k: v for k, v in good.items() if k != "sol_s"}, "x.csv")


def test_finite_numbers_reads_csv_cells_only_when_asked() -> None:
    assert finite_numbers({"a": " 2e3 "}, ["a"], ValueError, from_text=True) == {"a": 2000.0}
    with pytest.raises(ValueError, match="is the string '2e3'"):
        finite_numbers({"a": "2e3"}, ["a"], ValueError)


#: (the document, what the error says): records of the wrong type in an analyze JSON
WRONG_TYPES = [
    ('{"matrices": [{"matrix": {"name": "a"}, "results": 5}]}',
     "matrices[0].results: expected a list of results, not int"),
    ('{"matrices": [{"matrix": {"name": "a"}, "results": [5]}]}',
     "matrices[0].results[0]: expected an object, not int"),
    ('{"matrices": [5]}', "matrices[0]: expected an object, not int"),
    ('{"matrices": [{"matrix": "a", "results": []}]}',
     "matrices[0]: expected an object, not str"),
]


@pytest.mark.parametrize("command", ["roofline", "time", "complexity-time", "reuse"])
@pytest.mark.parametrize("text,says", WRONG_TYPES, ids=range(len(WRONG_TYPES)))
def test_records_of_the_wrong_type_are_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, text: str,
        says: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    code, err = run_here(capsys, "plot", command, str(bad), "-o", str(tmp_path / "f.png"))
    assert code == 1
    assert err.strip() == f"sparsroof: error: {bad}: {says}"


def test_a_bad_figure_size_is_a_usage_error(tmp_path: Path) -> None:
    """--size is an option value: a bad one is a usage error (exit 2), one line."""
    out = run("plot", "roofline", str(ROOT / "data" / "lap2d_64.mtx"), "-o",
              str(tmp_path / "f.png"), "--size", "12by5")
    assert out.returncode == 2
    assert out.stderr.strip() == ("sparsroof: error: --size '12by5': expected WIDTHxHEIGHT "
                                  "in inches, e.g. 8x5")
    # a size whose text would overlap is refused too: any figure under 4x3, and a figure
    # of panels under 3.5x3 inches a panel
    small = run("plot", "roofline", str(ROOT / "data" / "lap2d_64.mtx"), "-o",
                str(tmp_path / "f.png"), "--size", "3x2")
    assert small.returncode == 2 and "at least 4x3 inches" in small.stderr
    doc = tmp_path / "two.json"
    doc.write_text(run("analyze", str(ROOT / "data" / "lap2d_64.mtx"),
                       str(ROOT / "data" / "random_1000.mtx"), "--kernel", "spmm", "--d",
                       "1,8", "--model", "all", "-O", "json").stdout)
    panels = run("plot", "reuse", str(doc), "-o", str(tmp_path / "r.png"), "--size", "5x3")
    assert panels.returncode == 2
    assert panels.stderr == ("sparsroof: error: --size 5x3: 2 panels of 2 per row need at "
                             "least 7x4.5 inches\n")


def test_results_are_drawn_only_under_the_spec_they_were_bounded_on(tmp_path: Path) -> None:
    """--hw names the ceilings; results bounded on another spec would sit under roofs that
    are not theirs (their launch ceiling, their peaks), so the plot refuses in one line.
    The same spec, named by an alias, draws."""
    doc = run("analyze", "data/lap2d_64.mtx", "--hw", "a100", "-O", "json")
    assert doc.returncode == 0, doc.stderr
    results = tmp_path / "a100.json"
    results.write_text(doc.stdout)
    study = run("whatif", "swin_tiny", "--hw", "a100", "-O", "json")
    assert study.returncode == 0, study.stderr
    layers = tmp_path / "layers.json"
    layers.write_text(study.stdout)
    for kind, source in (("roofline", results), ("reuse", results), ("roofline", layers)):
        out = run("plot", kind, str(source), "--hw", "h100-sxm", "-o", str(tmp_path / "x.png"))
        assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
        assert out.stderr == (f"sparsroof: error: {source}: the results are bounds on "
                              "a100-80gb, not h100-sxm: drop --hw, or compute them again "
                              "with --hw h100-sxm\n")
        out = run("plot", kind, str(source), "--hw", "a100", "-o", str(tmp_path / "x.png"))
        assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("shape", ["0 0", "5 0", "0 3"])
def test_spy_of_a_matrix_without_cells_is_one_line(tmp_path: Path, shape: str) -> None:
    """No cells: nothing to draw, said in one line (not matplotlib's warnings and a blank
    frame of made-up extent), and no figure written."""
    path = tmp_path / "none.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n{shape} 0\n")
    figure = tmp_path / "none.png"
    out = run("spy", str(path), "-o", str(figure))
    rows, cols = shape.split()
    assert out.returncode == 1 and not figure.exists()
    assert out.stderr == (f"sparsroof: error: {path}: a {rows} x {cols} matrix has no cells "
                          "to draw\n")


def test_a_whatif_study_given_to_another_kind_of_plot_says_which_draws_it(
        tmp_path: Path) -> None:
    doc = tmp_path / "swin.json"
    out = run("whatif", "swin_tiny", "-O", "json")
    assert out.returncode == 0, out.stderr
    doc.write_text(out.stdout)
    wrong = run("plot", "time", str(doc), "-o", str(tmp_path / "x.png"))
    assert wrong.returncode == 2
    assert wrong.stderr == (f"sparsroof: error: {doc}: a whatif study is drawn by 'plot "
                            "roofline' (not 'plot time')\n")


def test_plot_reuse_grows_its_default_size_to_hold_every_panel(tmp_path: Path) -> None:
    """Three matrices need two rows of panels: without --size the figure is made tall
    enough, not refused for a size the user never gave."""
    doc = tmp_path / "three.json"
    doc.write_text(run("analyze", str(ROOT / "data" / "lap2d_64.mtx"),
                       str(ROOT / "data" / "random_1000.mtx"),
                       str(ROOT / "tests" / "corpus" / "bcsstk13.mtx"), "--kernel", "spmm",
                       "--d", "1,8", "--model", "all", "-O", "json").stdout)
    out = run("plot", "reuse", str(doc), "-o", str(tmp_path / "r.png"))
    assert out.returncode == 0, out.stderr
