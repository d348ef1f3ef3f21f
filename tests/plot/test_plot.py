"""Figures: files are valid, and what is drawn equals what was computed."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.text import Text

from sparsroof.analysis import Analysis, Config, analyze
from sparsroof.cli import cli
from sparsroof.cli.common import run_guarded
from sparsroof.errors import FigureError
from sparsroof.hardware.library import load_spec, parse_spec
from sparsroof.hardware.spec import HwSpec
from sparsroof.matrix.generate import stencil_2d, uniform_random
from sparsroof.matrix.mtx import Header, Matrix, load
from sparsroof.plot import (
    RidgePoint,
    read_sparsity_points,
    ridge_region,
    ridgeline,
    ridgeline_figure,
    roof_points,
    roofline_figure,
    save,
    sparsity_roofline_figure,
    spy_figure,
    time_roofline_figure,
)
from sparsroof.plot.labels import overlaps
from sparsroof.plot.spy import density

from ..conftest import DATA, ROOT, sparsroof
from ..legibility import assert_near, coinciding, hidden_pairs, legend_clashes, moved_pt

A100 = load_spec("a100")
WIDTHS = (1, 4, 16)


def matrix_of(name: str, g: Any) -> Matrix:
    header = Header(name, "coordinate", "real", "general", g.rows, g.cols, g.nnz)
    return Matrix(name, name, g.rows, g.cols, g.row, g.col, g.values, header)


@pytest.fixture(scope="module")
def lap() -> Analysis:
    return analyze(load(DATA / "lap2d_64.mtx"), A100, Config(kernel="spmm", widths=WIDTHS))


def by_gid(ax: Any, gid: str) -> Any:
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


def test_roofline_markers_are_the_computed_points(lap: Analysis) -> None:
    """Each marker at its computed point; the banded model's coincide with compulsory's
    (a stencil's B rows are all reused), so those are set a few points apart, no further
    than the footnote says, and none covers another."""
    fig = roofline_figure(roof_points([lap]), A100)
    ax = fig.axes[0]
    for model in ("compulsory", "random"):
        rows = [r for r in lap.results if r.traffic.model == model]
        want = [(r.traffic.intensity, r.bound.attainable_flops) for r in rows]
        got = by_gid(ax, f"points|lap2d_64|csr|{model}").get_offsets()
        assert_near(ax, got, want, context=model)
        line = by_gid(ax, f"trajectory|lap2d_64|csr|{model}")  # joins the markers drawn
        np.testing.assert_allclose(np.column_stack([line.get_xdata(), line.get_ydata()]),
                                   got, rtol=1e-12)
    assert 0 < moved_pt(ax) <= 1.5 * np.sqrt(28) + 0.1  # at most 1.5 marker widths
    assert hidden_pairs(ax) == []


def test_roofline_ceilings_and_title(lap: Analysis) -> None:
    ax = roofline_figure(roof_points([lap]), A100).axes[0]
    # the 0.3 MB working set fits the L2, so the bold roof is simt fp64 over L2 and bends at
    # the ridge P/β = 9.7e12 / 5.5e12 = 1.7636 FLOP/B
    roof = by_gid(ax, "roof")
    assert roof.get_xdata()[1] == pytest.approx(1.7636, abs=1e-3)
    assert roof.get_ydata()[1] == pytest.approx(9.7e12)
    hbm = by_gid(ax, "ceiling|memory|HBM2e")
    x, y = hbm.get_xdata(), hbm.get_ydata()
    np.testing.assert_allclose(np.asarray(y) / np.asarray(x), 2.039e12)
    assert by_gid(ax, "ceiling|memory|L2") and by_gid(ax, "ceiling|compute|tensor")
    texts = " ".join(t.get_text() for t in ax.texts)
    for label in ("HBM2e 2.04 TB/s", "L2 5.5 TB/s", "simt fp64 9.7 TFLOP/s",
                  "tensor fp64 19.5 TFLOP/s"):
        assert label in texts
    assert "NVIDIA A100 80GB SXM4" in ax.get_title() and "fp64" in ax.get_title()


def test_band_spans_optimistic_to_pessimistic(lap: Analysis) -> None:
    ax = roofline_figure(roof_points([lap]), A100).axes[0]
    corners = by_gid(ax, "band|lap2d_64|csr").get_xy()[:-1]  # closed: first corner repeated
    opt = [r for r in lap.results if r.traffic.model == "compulsory"]
    pes = [r for r in lap.results if r.traffic.model == "random"][::-1]
    want = [(r.traffic.intensity, r.bound.attainable_flops) for r in opt + pes]
    assert_near(ax, corners, want)
    # the band's corners are the markers as drawn
    drawn = [*by_gid(ax, "points|lap2d_64|csr|compulsory").get_offsets(),
             *by_gid(ax, "points|lap2d_64|csr|random").get_offsets()[::-1]]
    np.testing.assert_allclose(corners, drawn, rtol=1e-12)


def test_fifty_matrices_stay_readable() -> None:
    analyses = [analyze(matrix_of(f"m{i:02d}", uniform_random(300, 300, 600 + 97 * i, seed=i)),
                        A100) for i in range(50)]
    fig = roofline_figure(roof_points(analyses), A100)
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    labels = [t for t in ax.texts if t.get_gid() == "label"]
    assert sorted(t.get_text() for t in labels) == sorted(str(i) for i in range(1, 51))
    # the text's own box: an annotation's extent would include its leader line
    boxes = [Text.get_window_extent(t, renderer).bounds for t in labels]
    boxes = [(x, y, x + w, y + h) for x, y, w, h in boxes]
    clashes = [(i, j) for i in range(50) for j in range(i) if overlaps(boxes[i], boxes[j])]
    assert clashes == []
    frame = ax.get_window_extent(renderer)
    assert all(frame.x0 <= b[0] and b[2] <= frame.x1 + 1 for b in boxes)
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(names) == 50 and names[0] == "1  m00"
    # the crowd of 150 markers is loosened, each at most three marker widths from its
    # place, and no legend sits on it
    assert 0 < moved_pt(ax) <= 3 * np.sqrt(28)
    assert coinciding(ax) == [] and legend_clashes(ax) == []


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ""])
def test_files_are_valid_by_suffix(tmp_path: Path, lap: Analysis, suffix: str) -> None:
    path = save(roofline_figure(roof_points([lap]), A100), tmp_path / f"roof{suffix}")
    data = path.read_bytes()
    if suffix in (".png", ""):
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    elif suffix == ".svg":
        assert ET.fromstring(data).tag.endswith("svg")
    else:
        assert data.startswith(b"%PDF-")


def test_bad_figure_paths(tmp_path: Path, lap: Analysis) -> None:
    fig = roofline_figure(roof_points([lap]), A100)
    with pytest.raises(FigureError, match="unknown figure format '.gif'"):
        save(fig, tmp_path / "roof.gif")
    with pytest.raises(FigureError, match="does not exist"):
        save(fig, tmp_path / "no" / "roof.png")


def spec_with_launch() -> HwSpec:
    src = {"value": "x", "source": "test"}
    return parse_spec({
        "name": "t", "device": "Test GPU", "kind": "gpu",
        "peaks": {"simt": {"fp64": src | {"value": "10 TFLOP/s"}}},
        "memory": [{"name": "DRAM", "bandwidth": src | {"value": "1 TB/s"}}],
        "launch_overhead": src | {"value": "5 us"},
    }, "test")


def test_time_roofline_planes_hold_the_computed_times() -> None:
    spec = spec_with_launch()
    a = analyze(load(DATA / "lap2d_64.mtx"), spec, Config(kernel="spmm", widths=WIDTHS))
    left, right = time_roofline_figure(roof_points([a]), spec).axes[:2]
    rows = [r for r in a.results if r.traffic.model == "random"]
    got = by_gid(left, "complexity|lap2d_64|csr|random").get_offsets()
    np.testing.assert_allclose(got, [(r.traffic.bytes_total, r.traffic.flops_executed)
                                     for r in rows], rtol=1e-12)
    got = by_gid(right, "time|lap2d_64|csr|random").get_offsets()
    np.testing.assert_allclose(got, [(r.bound.memory_s, r.bound.compute_s) for r in rows],
                               rtol=1e-12)
    # launch box: 5 us on the time plane; 1 TB/s x 5 us = 5 MB, 10 TFLOP/s x 5 us = 50 MFLOP
    box = by_gid(right, "launch")
    assert box.get_x() + box.get_width() == pytest.approx(5e-6)
    box = by_gid(left, "launch")
    assert box.get_x() + box.get_width() == pytest.approx(5e6)
    assert box.get_y() + box.get_height() == pytest.approx(5e7)
    # machine balance: 10 TFLOP/s / 1 TB/s = 10 FLOP/B
    line = by_gid(left, "balance")
    np.testing.assert_allclose(np.asarray(line.get_ydata()) / line.get_xdata(), 10.0)


def test_ridge_regions_by_hand() -> None:
    # Cascade Lake node of the Ridgeline paper: 4.2 TFLOP/s, 105 GB/s memory, 12 GB/s network;
    # balance point (105/12, 4200/105) = (8.75, 40). Times per network byte: x·y/P, x/β_M, 1/β_N.
    peak, mem, net = 4.2e12, 105e9, 12e9
    assert ridge_region(100, 100, peak, mem, net) == "compute"  # 2.4e-9 > 9.5e-10 > 8.3e-11
    assert ridge_region(100, 1, peak, mem, net) == "memory"  # 9.5e-10 > 8.3e-11 > 2.4e-11
    assert ridge_region(1, 1, peak, mem, net) == "network"  # 8.3e-11 is the largest
    assert ridge_region(2, 100, peak, mem, net) == "network"  # x·y = 200 < P/β_N = 350
    assert ridge_region(5, 100, peak, mem, net) == "compute"  # x·y = 500 > 350, y > 40


def test_ridgeline_points_and_balance(tmp_path: Path) -> None:
    points = [RidgePoint(4, 2.0, 50.0, "memory"), RidgePoint(1, 3.0, 200.0, "memory"),
              RidgePoint(16, 1.0, 3.0, "network")]
    fig = ridgeline_figure(points, 4.2e12, 105e9, 12e9, "test")
    ax = fig.axes[0]
    offsets = by_gid(ax, "points").get_offsets()
    np.testing.assert_allclose(offsets, [(200.0, 3.0), (50.0, 2.0), (3.0, 1.0)])  # by P
    star = by_gid(ax, "balance")
    assert (star.get_xdata()[0], star.get_ydata()[0]) == pytest.approx((8.75, 40.0))
    for region in ("compute", "memory", "network"):
        assert by_gid(ax, f"region|{region}")
    out = ridgeline(points, 4.2e12, 105e9, 12e9, "test", tmp_path / "ridge.svg")
    assert ET.fromstring(out.read_bytes()).tag.endswith("svg")


def test_sparsity_roofline_reads_csv_and_json(tmp_path: Path) -> None:
    csv_path = tmp_path / "points.csv"
    csv_path.write_text("pattern,sparsity,speedup,accuracy\n2:4,0.5,1.6,79.9\n"
                        "unstructured,0.9,2.5,76.0\nunstructured,0.5,1.1,80.1\n")
    points = read_sparsity_points(csv_path)
    json_path = tmp_path / "points.json"
    json_path.write_text(json.dumps({"points": [p.__dict__ for p in points]}))
    assert read_sparsity_points(json_path) == points
    ax = sparsity_roofline_figure(points).axes[0]
    line = by_gid(ax, "pattern|unstructured")
    assert list(line.get_xdata()) == [1.1, 2.5] and list(line.get_ydata()) == [80.1, 76.0]
    assert by_gid(ax, "pattern|2:4").get_xdata()[0] == 1.6


@pytest.mark.parametrize("text,needle", [
    ("pattern,sparsity,speedup,accuracy\nx,50,2,70\n", "not a fraction"),
    ("pattern,sparsity,speedup,accuracy\nx,0.5,,70\n", "missing speedup"),
    ("pattern,sparsity,speedup,accuracy\nx,0.5,fast,70\n",
     "field 'speedup' is 'fast', expected a finite number"),
])
def test_sparsity_points_errors_name_the_line(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(FigureError, match=needle) as err:
        read_sparsity_points(path)
    assert "bad.csv: line 2" in str(err.value)


def test_sparsity_points_without_an_accuracy_are_left_out(tmp_path: Path) -> None:
    """As whatif --points writes them: a row for every level, an accuracy for some."""
    path = tmp_path / "points.csv"
    path.write_text("pattern,sparsity,speedup,accuracy\n2:4,0.5,1.6,70\n2:4,0.75,2.1,\n"
                    "block4,0.5,1.2,72\n")
    points = read_sparsity_points(path)
    assert [(p.pattern, p.sparsity) for p in points] == [("2:4", 0.5), ("block4", 0.5)]
    path.write_text("pattern,sparsity,speedup\nx,0.5,2\n")
    with pytest.raises(FigureError, match="no point has an accuracy"):
        read_sparsity_points(path)


def test_spy_density_by_hand() -> None:
    g = stencil_2d(4)  # 16 x 16, 16 + 2·12 + 2·12 = 64 entries
    m = matrix_of("lap4", g)
    d = density(m, bins=4)  # cells of 4 x 4: rows 4k..4k+3 are one grid row of the stencil
    assert d.counts.shape == (4, 4) and d.counts.sum() == 64
    # a diagonal cell holds one grid row: 4 diagonal + 6 horizontal neighbours = 10;
    # the cells beside it hold the 4 vertical neighbours to the next or previous grid row
    assert d.counts.diagonal().tolist() == [10, 10, 10, 10]
    assert d.counts[0, 1] == 4 and d.counts[0, 2] == 0
    image = by_gid(spy_figure(m, bins=4).axes[0], "density").get_array()
    np.testing.assert_array_equal(np.ma.filled(image, 0), d.counts)


def test_spy_overlays(tmp_path: Path) -> None:
    m = matrix_of("lap8", stencil_2d(8))  # 64 x 64, bandwidth 8
    ax = spy_figure(m, block=16, band=8).axes[0]
    assert len(by_gid(ax, "grid").get_segments()) == 3  # columns 16, 32, 48
    bands = [a for a in ax.get_lines() if a.get_gid() == "band"]
    # one entry per cell: guides 1.5 cells outside j = i ± 8, clear of those diagonals
    assert sorted(tuple(b.get_ydata()) for b in bands) == [(-9.5, 54.5), (9.5, 73.5)]


def test_a_few_entries_in_a_large_image_are_marked() -> None:
    """A hypersparse pattern's handful of entries covers a few cells of under two pixels
    each: each occupied cell also gets a marker in its colour, at its centre, and the
    title says so; a pattern of many occupied cells gets none. Counts of one decade
    label their colour bar's minor ticks plainly (2, 3, not 2 x 10^0)."""
    rows = np.array([0, 1, 5, 1999, 1999, 1999])
    cols = np.array([0, 1, 5, 0, 1999, 1998])
    header = Header("few", "coordinate", "real", "general", 2000, 2000, rows.size)
    few = Matrix("few", "few", 2000, 2000, rows, cols, np.ones(rows.size), header)
    fig = spy_figure(few)
    ax = fig.axes[0]
    d = density(few)
    occupied = np.nonzero(d.counts)
    centres = np.array(sorted(map(tuple, by_gid(ax, "marks").get_offsets().tolist())))
    want = np.array(sorted(zip((occupied[1] + 0.5) * d.cell_cols,
                               (occupied[0] + 0.5) * d.cell_rows, strict=True)))
    np.testing.assert_allclose(centres, want)
    assert f"each of the {len(occupied[0])} occupied cells marked" in ax.get_title()
    fig.canvas.draw()
    bar_labels = {t.get_text() for t in fig.axes[1].yaxis.get_ticklabels(minor=True)}
    assert "2" in bar_labels and not any("10^" in t or "times" in t for t in bar_labels)
    many = matrix_of("lap8", stencil_2d(64))
    assert not [a for a in spy_figure(many).axes[0].collections if a.get_gid() == "marks"]


def test_spy_of_a_real_matrix(corpus: Path, tmp_path: Path) -> None:
    m = load(corpus / "bcsstk13.mtx")
    d = density(m, bins=256)
    assert d.counts.sum() == m.stored_entries and max(d.counts.shape) == 256
    path = save(spy_figure(m, bins=256, block=32), tmp_path / "bcsstk13.png")
    assert path.read_bytes().startswith(b"\x89PNG")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=ROOT)


def run_here(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The command line in this process (faster than a subprocess): exit code, stderr."""
    code = run_guarded(cli, list(args))
    return code, capsys.readouterr().err


def test_cli_analyze_plot_and_plot_from_json(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    fig = tmp_path / "roof.svg"
    out = run("analyze", "data/lap2d_64.mtx", "--output", "json", "--plot", str(fig))
    assert out.returncode == 0, out.stderr
    assert ET.fromstring(fig.read_bytes()).tag.endswith("svg")
    assert json.loads(out.stdout)["schema_version"] == 1  # stdout still only results
    results = tmp_path / "results.json"
    results.write_text(out.stdout)
    for kind, name in (("roofline", "r.png"), ("time", "t.pdf")):
        code, err = run_here(capsys, "plot", kind, str(results), "-o", str(tmp_path / name),
                             "--size", "6x4", "--dpi", "80")
        assert code == 0, err
        assert (tmp_path / name).read_bytes()[:4] in (b"\x89PNG", b"%PDF")


def test_cli_spy_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, _ = run_here(capsys, "spy", "data/lap2d_64.mtx", "-o", str(tmp_path / "s.png"),
                       "--band", "auto")
    assert code == 0 and (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")
    for args, needle in ((["spy", "nope.mtx"], "nope.mtx: no such file"),
                         (["spy", "data/lap2d_64.mtx", "-o", "x.gif"], "unknown figure format"),
                         (["spy", "data/lap2d_64.mtx", "--band", "wide"], "--band 'wide'"),
                         (["plot", "roofline", "data/lap2d_64.mtx", "-o", "x.png"],
                          "not valid JSON"),
                         (["plot", "sparsity-roofline", "p.csv", "-o", "x.png",
                           "--size", "big"], "")):
        code, err = run_here(capsys, *args)
        assert code != 0 and needle in err and err.count("\n") == 1


def test_matplotlib_stays_out_of_other_commands() -> None:
    code = "import sparsroof.cli, sys; assert 'matplotlib' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_ridgeline_of_analyze_ranks(tmp_path: Path) -> None:
    from sparsroof.plot import ridge_points
    from sparsroof.plot.ridge import ridgeline_figure

    spec = load_spec("clx-ridgeline")
    a = analyze(load(DATA / "lap2d_64.mtx"), spec,
                Config(kernel="spmm", widths=(16,), dtype="fp32", ranks=(1, 2, 4, 8)))
    points = ridge_points(a)
    # P = 1 moves nothing over the network and has no place on the plane
    assert [p.ranks for p in points] == [2, 4, 8]
    want = [(rb.memory_intensity, rb.arithmetic_intensity) for rb in a.distributed[1:]]
    first = a.distributed[0]
    ax = ridgeline_figure(points, first.peak_flops, first.bandwidth, first.network,
                          "t").axes[0]
    got = [tuple(xy) for c in ax.collections for xy in c.get_offsets()
           if len(c.get_offsets()) and c.get_gid() != "balance"]
    for xy in want:
        assert any(np.allclose(xy, g) for g in got), xy
    out = tmp_path / "ridge.png"
    result = sparsroof("analyze", "data/lap2d_64.mtx", "--hw", "clx-ridgeline", "--dtype",
                       "fp32", "--kernel", "spmm", "--d", "16", "--ranks", "1,2,4,8", "--plot",
                       str(out), "--plot-kind", "ridgeline", "-O", "json", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_roofline_without_a_compute_roof_is_a_one_line_error(tmp_path: Path) -> None:
    """clx-ridgeline gives fp32 peaks only: an fp64 analysis has no compute roof to draw."""
    out = sparsroof("analyze", "data/lap2d_64.mtx", "--hw", "clx-ridgeline", "--plot",
                    str(tmp_path / "r.png"), cwd=Path(__file__).parents[2])
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "has no fp64 peak" in out.stderr and "--dtype fp32" in out.stderr


def test_several_specs_share_one_roofline(tmp_path: Path) -> None:
    """analyze --hw a,b --plot: one figure, each device's roofs in its colour and each
    matrix's points on each device in that colour."""
    from sparsroof.analysis import Config, analyze
    from sparsroof.hardware.library import load_spec
    from sparsroof.matrix.mtx import load
    from sparsroof.plot.devices import devices_figure

    specs = [load_spec("a100"), load_spec("v100-sxm2")]
    m = load(Path(__file__).parents[2] / "data" / "lap2d_64.mtx")
    groups = [[analyze(m, s, Config()) for s in specs]]
    path = devices_figure(groups, specs, tmp_path / "d.png")
    assert path.exists() and path.stat().st_size > 10_000
    out = sparsroof("analyze", "data/lap2d_64.mtx", "--hw", "a100,v100-sxm2", "--plot",
                    str(tmp_path / "e.svg"), cwd=Path(__file__).parents[2])
    assert out.returncode == 0, out.stderr
    svg = (tmp_path / "e.svg").read_text()
    # a roof per memory level of each device, and the matrix's points on each device
    for gid in ("roof|a100-80gb|HBM2e", "roof|a100-80gb|L2", "roof|v100-sxm2|HBM2",
                "points|a100-80gb|lap2d_64", "points|v100-sxm2|lap2d_64"):
        assert f'id="{gid}' in svg, gid


def test_spy_axes_count_rows_in_si_without_an_offset() -> None:
    # a 1M x 1M matrix's axes used to read 0.0 ... 1.0 with "1e6" printed over the corner
    m = matrix_of("big", uniform_random(1_000_000, 1_000_000, 1000, seed=3))
    fig = spy_figure(m, bins=64)
    fig.canvas.draw()  # type: ignore[no-untyped-call]
    ax = fig.axes[0]
    for axis in (ax.xaxis, ax.yaxis):
        labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
        assert labels[0] == "0" and "1 M" in labels and "200 k" in labels
        assert axis.get_offset_text().get_text() == ""
    cell = 1_000_000 / 64
    assert f"cell = {cell:,.0f} x {cell:,.0f}" in ax.figure.axes[1].get_ylabel()


def test_every_format_of_a_bench_has_a_shape_of_its_own() -> None:
    """A bench of every kernel format (seven) draws seven shapes, none of them the
    measured runs' circle or cross."""
    from types import SimpleNamespace

    from sparsroof.plot.roof import model_markers

    formats = ["csr", "csc", "coo", "bsr4", "dia", "ell", "hyb", "sell", "bsr2", "dcsr"]
    shapes = model_markers([SimpleNamespace(storage=f, model="compulsory")  # type: ignore[misc]
                            for f in formats])
    assert len(set(shapes.values())) == len(formats)
    assert not {"o", "X"} & set(shapes.values())
