"""Figures of a what-if study, read back from their artists: the roofline of every layer's
dense GEMM and sparse kernel (The Sparsity Roofline, Figs. 1 and 6).

A100 at fp16 (see test_whatif): HBM 2039 GB/s, SIMT 78 TFLOP/s, tensor 312 TFLOP/s.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sparsroof.plot import layer_roofline_figure, read_whatif_layers

from ..conftest import ROOT, sparsroof
from .test_plot import by_gid

BW = 2039e9
#: fc: 64 x 128 weights, n = 16; head: 8 x 16, n = 1, kept dense
MANIFEST = """name: toy
source: made up for the test
layers:
  - {name: fc, m: 64, k: 128, n: 16}
  - {name: head, m: 8, k: 16, n: 1, prune: false}
"""


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=cwd)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("layers")
    (base / "toy.yaml").write_text(MANIFEST)
    out = cli("whatif", str(base / "toy.yaml"), "--hw", "a100", "--pattern",
              "unstructured,2:4", "--sparsity", "75", "--launches", "0", "-O", "json")
    assert out.returncode == 0, out.stderr
    (base / "toy.json").write_text(out.stdout)
    return base / "toy.json"


def test_layer_points_are_the_studys_flops_over_bytes(study: Path) -> None:
    points, spec = read_whatif_layers(study)
    assert spec == "a100-80gb"
    by = {(p.pattern, p.layer): p for p in points}
    # two dense GEMMs (once each), one sparse kernel per pattern for fc, none for head
    assert sorted(by) == [("2:4", "fc"), ("dense", "fc"), ("dense", "head"),
                          ("unstructured", "fc")]
    # dense fc: F = 2·64·128·16 = 262144; bytes A 16384 + B 4096 + C 2048 = 22528
    assert by[("dense", "fc")].intensity == pytest.approx(262144 / 22528)
    # unstructured 75 %: nnz 2048, F = 2·2048·16 = 65536; CSR 2048·6 + 65·4 = 12548 + 6144
    sparse = by[("unstructured", "fc")]
    assert sparse.intensity == pytest.approx(65536 / 18692)
    assert sparse.attainable_flops == pytest.approx(BW * 65536 / 18692)  # memory bound
    ax = layer_roofline_figure(points).axes[0]
    dense = sorted(map(tuple, by_gid(ax, "dense").get_offsets().tolist()))
    # head: F = 2·8·16 = 256 over 8·16·2 + 16·2 + 8·2 = 304 bytes
    assert [x for x, _ in dense] == pytest.approx([256 / 304, 262144 / 22528])
    assert [y for _, y in dense] == pytest.approx([BW * 256 / 304, BW * 262144 / 22528])
    got = by_gid(ax, "sparse|unstructured|0.75").get_offsets()
    assert got.tolist()[0] == pytest.approx([65536 / 18692, BW * 65536 / 18692])
    # sparse kernels are filled, dense GEMMs hollow
    assert by_gid(ax, "sparse|unstructured|0.75").get_facecolor()[0][3] > 0
    assert len(by_gid(ax, "dense").get_facecolor()) == 0 or \
        by_gid(ax, "dense").get_facecolor()[0][3] == 0
    # the roofs are the ones the study charged: SIMT 78 T (CSR) and tensor 312 T
    roofs = {a.get_gid(): a.get_ydata()[-1] for a in ax.lines if (a.get_gid() or "")
             .startswith("roof|")}
    assert roofs["roof|simt|HBM2e"] == pytest.approx(78e12)
    assert roofs["roof|tensor|HBM2e"] == pytest.approx(312e12)
    # 2:4: nnz 4096, F = 131072 over 4096·2 + 2 bits·4096 + 6144 = 15360 bytes, 8.533
    # FLOP/B; median of 3.506 / 11.636 = 0.301 and 8.533 / 11.636 = 0.733 is 0.517
    assert "intensity x0.52," in ax.get_title()
    # launches 0: no kernel is held by its launch, and no tick is drawn
    assert not any((a.get_gid() or "").startswith("launch|") for a in ax.lines)


def test_a_layer_its_launch_holds_carries_its_launch_tick(tmp_path: Path) -> None:
    """With the A100's 1.3 us launch, the toy's small kernels are held by their launch:
    each sits on a dotted tick at F / 1.3 us (F its useful FLOPs), and the legend counts
    them (the launch-free study of the test above draws none)."""
    (tmp_path / "toy.yaml").write_text(MANIFEST)
    out = cli("whatif", str(tmp_path / "toy.yaml"), "--hw", "a100", "--pattern",
              "unstructured,2:4", "--sparsity", "75", "-O", "json")
    assert out.returncode == 0, out.stderr
    (tmp_path / "toy.json").write_text(out.stdout)
    points, _ = read_whatif_layers(tmp_path / "toy.json")
    assert all(p.launch_s == pytest.approx(1.3e-6) and p.launch_bound for p in points)
    ax = layer_roofline_figure(points).axes[0]
    ticks = {a.get_gid(): a.get_ydata()[0] for a in ax.lines
             if (a.get_gid() or "").startswith("launch|")}
    assert ticks == pytest.approx({f"launch|toy|{p.layer}|{p.pattern}|{p.sparsity:g}":
                                   p.flops_useful / 1.3e-6 for p in points})
    for p in points:  # each point sits on its tick
        assert p.attainable_flops == pytest.approx(p.flops_useful / 1.3e-6)
    labels = [t.get_text() for leg in (ax.get_legend(), *ax.artists) if leg is not None
              and hasattr(leg, "get_texts") for t in leg.get_texts()]
    assert f"launch ceiling F / 1.3 us: holds {len(points)} of {len(points)}" in labels


def test_plot_roofline_draws_a_whatif_study(study: Path, tmp_path: Path) -> None:
    out = cli("plot", "roofline", str(study), "-o", str(tmp_path / "l.svg"))
    assert out.returncode == 0, out.stderr
    assert "<svg" in (tmp_path / "l.svg").read_text()
    out = cli("plot", "time", str(study), "-o", str(tmp_path / "t.png"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "drawn by 'plot roofline'" in out.stderr
    points_only = tmp_path / "p.json"
    doc = json.loads(study.read_text())
    for p in doc["points"]:
        del p["layer_results"]
    points_only.write_text(json.dumps(doc))
    out = cli("plot", "roofline", str(points_only), "-o", str(tmp_path / "p.png"))
    assert out.returncode == 1 and "no layer_results" in out.stderr


def test_accuracy_panels_are_the_points_given(tmp_path: Path) -> None:
    """Figure 5: accuracy against sparsity (%) and against the pruned network's FLOPs."""
    from sparsroof.plot.accuracy import accuracy_figure, read_accuracy_points

    (tmp_path / "toy.yaml").write_text(MANIFEST)
    (tmp_path / "acc.csv").write_text("pattern,sparsity,accuracy\nunstructured,50,80\n"
                                      "unstructured,75,78.5\n")
    out = cli("whatif", "toy.yaml", "--pattern", "unstructured,2:4", "--sparsity", "50,75",
              "--accuracy", "acc.csv", "--points", "toy.csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    points, skipped = read_accuracy_points(tmp_path / "toy.csv")
    assert skipped == 1  # 2:4 has no accuracy
    # fc: 64·128 weights, n = 16, half kept: 2·4096·16 = 131072; head kept dense: 2·8·16
    # = 256; a quarter kept: 2·2048·16 + 256 = 65792
    assert [(p.sparsity, p.flops, p.accuracy) for p in points] == [
        (0.5, 131072 + 256, 80.0), (0.75, 65792, 78.5)]
    fig = accuracy_figure(points)
    top, bottom = fig.axes[0], fig.axes[1]
    assert by_gid(top, "sparsity|toy|unstructured").get_xydata().tolist() == [
        [50.0, 80.0], [75.0, 78.5]]
    assert by_gid(bottom, "flops|toy|unstructured").get_xydata().tolist() == [
        [131328.0, 80.0], [65792.0, 78.5]]
    assert bottom.get_xscale() == "log"
    fig_out = cli("plot", "accuracy", "toy.csv", "-o", "a.svg", cwd=tmp_path)
    assert fig_out.returncode == 0 and "1 point(s) have no accuracy" in fig_out.stderr
    (tmp_path / "bad.csv").write_text("pattern,sparsity,accuracy\nunstructured,0.5,80\n")
    bad = cli("plot", "accuracy", "bad.csv", "-o", "b.png", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
    assert "bad.csv: line 2: missing flops_useful" in bad.stderr


#: (where in the study's JSON, the JSON text put there, what the error says)
BAD_LAYER_NUMBERS = [
    (("points", 0, "sparsity"), '"abc"', "points[0]: field 'sparsity' is the string 'abc', "
     "expected a finite number"),
    (("points", 0, "sparsity"), "1.5", "points[0]: sparsity 1.5 is not a fraction in [0, 1]"),
    (("points", 0, "layer_results", 0, "dense", "bound", "bandwidth"), "0",
     "points[0].layer_results[0].dense.bound: field 'bandwidth' is 0, expected a positive "
     "number"),
    (("points", 0, "layer_results", 0, "sparse", "bound", "attainable_flops"), "NaN",
     "points[0].layer_results[0].sparse.bound: field 'attainable_flops' is NaN, expected a "
     "finite number"),
    (("points", 0, "layer_results", 0, "sparse", "bound", "attainable_flops"), "true",
     "points[0].layer_results[0].sparse.bound: field 'attainable_flops' is true, expected "
     "a finite number"),
    (("points", 0, "layer_results", 0, "sparse", "bound", "attainable_flops"), "-1",
     "points[0].layer_results[0].sparse.bound: field 'attainable_flops' is -1, below 0"),
    (("points", 0, "layer_results", 0, "dense", "traffic", "bytes_b"), '"12"',
     "points[0].layer_results[0].dense.traffic: field 'bytes_b' is the string '12', "
     "expected a finite number"),
    (("points", 0, "layer_results", 0, "dense", "bound", "unit"), "null",
     "points[0].layer_results[0].dense.bound: missing field 'unit'"),
]


@pytest.mark.parametrize("path,text,says", BAD_LAYER_NUMBERS,
                         ids=[f"{c[0][-1]}={c[1]}" for c in BAD_LAYER_NUMBERS])
def test_a_bad_number_in_a_whatif_study_is_one_line(study: Path, tmp_path: Path,
                                                     path: tuple[object, ...], text: str,
                                                     says: str) -> None:
    doc = json.loads(study.read_text())
    node: Any = doc
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = "@@BAD@@"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc).replace('"@@BAD@@"', text))
    out = cli("plot", "roofline", str(bad), "-o", str(tmp_path / "f.png"))
    assert out.returncode == 1
    assert out.stderr == f"sparsroof: error: {bad}: {says}\n"
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize("row,says", [
    ('"sparsity": true, "accuracy": 80', "field 'sparsity' is true, expected a finite "
     "number"),
    ('"sparsity": 0.5, "accuracy": NaN', "field 'accuracy' is NaN, expected a finite "
     "number"),
    ('"sparsity": "0.5", "accuracy": 80', "field 'sparsity' is the string '0.5', expected "
     "a finite number"),
    ('"sparsity": 50, "accuracy": 80', "sparsity 50 is not a fraction in [0, 1] (write "
     "0.5 for 50 %)"),
])
def test_a_bad_number_in_accuracy_points_is_one_line(tmp_path: Path, row: str,
                                                     says: str) -> None:
    points = tmp_path / "p.json"
    points.write_text('{"points": [{"pattern": "2:4", "sparsity": 0.5, "accuracy": 79, '
                      f'"flops_useful": 1e9}}, {{"pattern": "x", {row}, '
                      '"flops_useful": 1e9}]}')
    out = cli("plot", "accuracy", str(points), "-o", str(tmp_path / "a.png"))
    assert out.returncode == 1
    assert out.stderr == f"sparsroof: error: {points}: point 1: {says}\n"
    assert not (tmp_path / "a.png").exists()


def test_a_bad_cell_in_accuracy_points_names_its_line(tmp_path: Path) -> None:
    points = tmp_path / "p.csv"
    points.write_text("pattern,sparsity,accuracy,flops_useful\n2:4,0.5,79,1e9\n"
                      "x,0.5,nan,1e9\n")
    out = cli("plot", "accuracy", str(points), "-o", str(tmp_path / "a.png"))
    assert out.returncode == 1
    assert out.stderr == (f"sparsroof: error: {points}: line 3: field 'accuracy' is NaN, "
                          "expected a finite number\n")


def test_a_file_that_is_not_points_is_said_in_one_line(tmp_path: Path) -> None:
    """A matrix given where points are read is not 20,000 points without an accuracy; a
    file of points none of which has one is named, in one line."""
    mtx = ROOT / "data" / "lap2d_64.mtx"
    out = sparsroof("plot", "accuracy", str(mtx), "-o", str(tmp_path / "a.png"))
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert f"{mtx}: not a file of points: none of the columns" in out.stderr
    bare = tmp_path / "bare.csv"
    bare.write_text("pattern,sparsity,accuracy,flops_useful\n2:4,0.5,,100\n")
    out = sparsroof("plot", "accuracy", str(bare), "-o", str(tmp_path / "a.png"))
    assert out.returncode == 1 and out.stderr == (
        f"sparsroof: error: {bare}: no point has an accuracy ('sparsroof whatif --accuracy "
        "ACC.csv --points FILE' writes them)\n")
