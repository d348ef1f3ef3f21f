"""plot roofline from tables of results: analyze -O csv and the exports of a real batch
run (CSV, JSON, Parquet), each point drawn where its row puts it; bad rows get one-line
errors naming the file and the row."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsroof.errors import FigureError
from sparsroof.hardware.library import load_spec
from sparsroof.plot import read_results, roofline_figure
from sparsroof.plot.tabular import read_table

from ..conftest import DATA, ROOT, sparsroof
from ..legibility import assert_near

_FIELDS = {"intensity": "intensity_flop_per_byte", "attainable": "attainable_flops"}


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=cwd)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A batch of three matrices on two specs, exported to CSV and JSON."""
    base = tmp_path_factory.mktemp("sweep")
    tree = base / "mats"
    tree.mkdir()
    for name in ("lap2d_64.mtx", "random_1000.mtx"):
        shutil.copy(DATA / name, tree / name)
    out = cli("generate", "banded", "--n", "3000", "--halfwidth", "3", "-o",
              str(tree / "band3.mtx"))
    assert out.returncode == 0, out.stderr
    for export in ("r.csv", "r.json"):
        out = cli("batch", str(tree), "--store", str(base / "r.db"), "--kernel", "spmm",
                  "--d", "1,16", "--hw", "a100", "--hw", "v100-sxm2", "--export",
                  str(base / export))
        assert out.returncode == 0, out.stderr
    return base


def _rows(path: Path, spec: str) -> dict[tuple[str, str, str], list[tuple[float, float]]]:
    """(matrix, storage, model) -> (intensity, attainable) by width, read with csv alone."""
    rows: dict[tuple[str, str, str], list[tuple[int, float, float]]] = {}
    with path.open(newline="") as handle:
        for r in csv.DictReader(handle):
            if r["spec"] == spec:
                rows.setdefault((r["matrix"], r["storage"], r["model"]), []).append(
                    (int(r["width"]), float(r[_FIELDS["intensity"]]),
                     float(r[_FIELDS["attainable"]])))
    return {k: [(x, y) for _, x, y in sorted(v)] for k, v in rows.items()}


def _drawn(ax: object) -> dict[tuple[str, str, str], list[tuple[float, float]]]:
    out = {}
    for c in ax.collections:  # type: ignore[attr-defined]
        gid = c.get_gid() or ""
        if gid.startswith("points|"):
            _, matrix, storage, model = gid.split("|")
            out[(matrix, storage, model)] = [tuple(p) for p in c.get_offsets()]
    return out


def test_a_batch_export_is_drawn_row_by_row(sweep: Path) -> None:
    for spec in ("v100-sxm2", "a100-80gb"):
        points, name = read_results(sweep / "r.csv", spec)
        assert name == spec
        want = _rows(sweep / "r.csv", spec)
        # three matrices, two widths, the default models: every row of the spec is drawn
        assert {m for m, _, _ in want} == {"lap2d_64", "random_1000", "band3"}
        assert len(points) == sum(len(v) for v in want.values())
        ax = roofline_figure(points, load_spec(spec)).axes[0]
        drawn = _drawn(ax)
        assert drawn.keys() == want.keys()
        for key, xy in want.items():  # where its row puts it, or within the footnote's shift
            assert_near(ax, drawn[key], xy, context=str(key))


def test_the_json_export_gives_the_same_points(sweep: Path) -> None:
    from_csv, _ = read_results(sweep / "r.csv", "a100-80gb")
    from_json, _ = read_results(sweep / "r.json", "a100-80gb")
    key = lambda p: (p.matrix, p.width, p.storage, p.model)  # noqa: E731
    assert sorted(from_csv, key=key) == sorted(from_json, key=key)


def test_plot_roofline_command_on_exports(sweep: Path, tmp_path: Path) -> None:
    out = cli("plot", "roofline", str(sweep / "r.csv"), "-o", str(tmp_path / "r.svg"))
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert "results of 2 specs (a100-80gb, v100-sxm2): pass --hw" in out.stderr
    for export in ("r.csv", "r.json"):
        out = cli("plot", "roofline", str(sweep / export), "--hw", "v100-sxm2", "-o",
                  str(tmp_path / "r.svg"))
        assert out.returncode == 0, out.stderr
        svg = (tmp_path / "r.svg").read_text()
        assert 'id="points|band3|csr|compulsory' in svg and "V100" in svg


def test_analyze_csv_is_drawn(tmp_path: Path) -> None:
    out = cli("analyze", "data/lap2d_64.mtx", "--kernel", "spmm", "--d", "1,4", "--reorder",
              "rcm", "-O", "csv")
    assert out.returncode == 0, out.stderr
    path = tmp_path / "a.csv"
    path.write_text(out.stdout)
    points, spec = read_results(path)
    assert spec == "a100-80gb"
    # the reordered matrix is a matrix of its own
    assert {p.matrix for p in points} == {"lap2d_64", "lap2d_64 (rcm)"}
    ax = roofline_figure(points, load_spec("a100")).axes[0]
    drawn = _drawn(ax)
    with path.open(newline="") as handle:
        first = next(csv.DictReader(handle))
    assert first["ordering"] == "original"
    xy = (float(first[_FIELDS["intensity"]]), float(first[_FIELDS["attainable"]]))
    mine = drawn[("lap2d_64", first["storage"], first["model"])]
    assert_near(ax, [min(mine, key=lambda p: abs(np.log(p[0] / xy[0])))], [xy])


def _bad(tmp_path: Path, sweep: Path, line: int, column: str, value: str | None) -> Path:
    """The CSV export with one cell changed (or, with ``value`` None, one column gone)."""
    with (sweep / "r.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    at = rows[0].index(column)
    for row in rows if value is None else [rows[line - 1]]:
        if value is None:
            del row[at]
        else:
            row[at] = value
    path = tmp_path / "bad.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


@pytest.mark.parametrize(("line", "column", "value", "needle"), [
    (3, "attainable_flops", "inf", "bad.csv:3: field 'attainable_flops' is infinite, "
                                   "expected a finite number"),
    (4, "sol_s", "", "bad.csv:4: field 'sol_s' is empty, expected a finite number"),
    (5, "bandwidth", "fast", "bad.csv:5: field 'bandwidth' is 'fast', expected a finite "
                             "number"),
    (6, "width", "1.5", "bad.csv:6: field 'width' is 1.5, expected a whole number"),
    (6, "width", "0", "bad.csv:6: field 'width' is 0, expected a positive whole number"),
    (5, "sol_s", "-1e-06", "bad.csv:5: field 'sol_s' is -1e-06, below 0"),
    (4, "bandwidth", "true", "bad.csv:4: field 'bandwidth' is 'true', expected a finite "
                             "number"),
    (7, "matrix", "", "bad.csv:7: column 'matrix' is empty"),
    (2, "intensity_flop_per_byte", "nan", "bad.csv:2: field 'intensity_flop_per_byte' is "
                                          "NaN, expected a finite number"),
    (0, "bound_unit", None, "bad.csv: missing column bound_unit (expected the CSV of "
                            "'sparsroof analyze -O csv'"),
])
def test_bad_rows_name_the_file_and_row(tmp_path: Path, sweep: Path, line: int, column: str,
                                        value: str | None, needle: str) -> None:
    path = _bad(tmp_path, sweep, line, column, value)
    with pytest.raises(FigureError) as info:
        read_table(path)
    assert needle in str(info.value) and "\n" not in str(info.value)
    out = cli("plot", "roofline", str(path), "--hw", "a100", "-o", str(tmp_path / "x.png"))
    assert out.returncode == 1 and needle in out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_an_empty_or_foreign_table(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    foreign = tmp_path / "points.csv"
    foreign.write_text("pattern,sparsity,speedup,accuracy\n2:4,0.5,1.6,79.9\n")
    for path, needle in ((empty, "missing columns matrix, kernel"),
                         (foreign, "missing columns matrix, kernel")):
        with pytest.raises(FigureError, match=needle):
            read_table(path)


def test_parquet_without_pyarrow_is_one_line(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = tmp_path / "r.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(FigureError, match=r"r.parquet: reading Parquet needs pyarrow: "
                                          r"pip install 'sparsroof\[parquet\]'"):
        read_results(path)


def test_a_parquet_export_is_drawn_row_by_row(sweep: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "r.parquet"
    out = cli("batch", str(sweep / "mats"), "--store", str(sweep / "r.db"), "--kernel", "spmm",
              "--d", "1,16", "--hw", "a100", "--hw", "v100-sxm2", "--export", str(path))
    assert out.returncode == 0, out.stderr
    points, _ = read_results(path, "a100-80gb")
    ax = roofline_figure(points, load_spec("a100")).axes[0]
    drawn = _drawn(ax)
    for key, xy in _rows(sweep / "r.csv", "a100-80gb").items():
        assert_near(ax, drawn[key], xy, context=str(key))
    # a null where a number belongs: the row is named
    table = pq.read_table(path)
    column = table.column_names.index("sol_s")
    values = table.column("sol_s").to_pylist()
    values[2] = None
    import pyarrow as pa

    pq.write_table(table.set_column(column, "sol_s", pa.array(values)), path)
    with pytest.raises(FigureError, match=r"r.parquet: row 3: field 'sol_s' is null"):
        read_results(path, "a100-80gb")
    values[2] = -1e-6  # a negative time: the row is named too
    pq.write_table(table.set_column(column, "sol_s", pa.array(values)), path)
    with pytest.raises(FigureError, match=r"r.parquet: row 3: field 'sol_s' is -1e-06, "
                                          "below 0"):
        read_results(path, "a100-80gb")
