"""Figures ready for a paper: fonts embedded as text, series that stay apart, honest
legends, the networks of a Sparsity Roofline kept on their own lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_hex

from sparsroof.analysis import analyze
from sparsroof.batch.summary import MatrixPoint
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.generate import uniform_random
from sparsroof.plot import (
    SparsityPoint,
    read_sparsity_points,
    roof_points,
    roofline_figure,
    save,
    sparsity_roofline_figure,
    time_roofline_figure,
)
from sparsroof.plot.aggregate import aggregate_roofline_figure, unplottable

from .test_plot import A100, by_gid, matrix_of


@pytest.fixture(scope="module")
def twenty() -> list[Any]:
    return roof_points([analyze(matrix_of(f"m{i:02d}", uniform_random(200, 200, 400 + 53 * i,
                                                                      seed=i)), A100)
                        for i in range(20)])


def _looks(ax: Any, prefix: str) -> dict[str, set[tuple[str, str]]]:
    """(face, edge) colours of every matrix's markers, by matrix, read from the artists."""
    looks: dict[str, set[tuple[str, str]]] = {}
    for c in ax.collections:
        gid = c.get_gid() or ""
        if gid.startswith(prefix + "|"):
            face = to_hex(c.get_facecolor()[0])
            edge = to_hex(c.get_edgecolor()[0])
            looks.setdefault(gid.split("|")[1], set()).add((face, edge))
    return looks


def test_twenty_matrices_never_share_colour_and_fill(twenty: list[Any]) -> None:
    for fig, prefix in ((roofline_figure(twenty, A100), "points"),
                        (time_roofline_figure(twenty, A100), "time")):
        looks = _looks(fig.axes[0] if prefix == "points" else fig.axes[1], prefix)
        assert len(looks) == 20 and all(len(v) == 1 for v in looks.values())
        assert len({next(iter(v)) for v in looks.values()}) == 20
    # the 1st and the 8th share the palette's first colour: one filled, one hollow
    looks = _looks(roofline_figure(twenty, A100).axes[0], "points")
    assert looks["m00"] == {("#0072b2", "#ffffff")} and looks["m07"] == {("#ffffff", "#0072b2")}


def test_time_plot_numbers_its_matrices(twenty: list[Any]) -> None:
    fig = time_roofline_figure(twenty, A100)
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.texts if t.get_gid() == "label"]
        assert labels and set(labels) <= {str(i) for i in range(1, 21)}
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert legend[0] == "1  m00" and legend[19] == "20  m19"


def test_roofline_legend_names_the_widths_drawn() -> None:
    from sparsroof.analysis import Config
    from sparsroof.matrix.mtx import load

    from ..conftest import DATA

    a = analyze(load(DATA / "lap2d_64.mtx"), A100, Config(kernel="spmm", widths=(1, 4, 16, 64)))
    ax = roofline_figure(roof_points([a]), A100).axes[0]
    texts = [t.get_text() for leg in ax.findobj(lambda o: hasattr(o, "get_texts"))
             if leg.__class__.__name__ == "Legend" for t in leg.get_texts()]
    assert "d = 1, 4, 16, 64 joined" in texts


@pytest.mark.parametrize("suffix", [".pdf", ".svg"])
def test_text_stays_text(tmp_path: Path, twenty: list[Any], suffix: str) -> None:
    data = save(roofline_figure(twenty, A100), tmp_path / f"r{suffix}").read_bytes()
    if suffix == ".pdf":
        assert b"/Subtype /Type3" not in data
        assert re.search(rb"/Subtype /(TrueType|CIDFontType2)", data)
    else:
        text = data.decode()
        assert "<text" in text and "arithmetic intensity" in text


def test_sparsity_roofline_one_line_per_model_and_pattern(tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    # two networks at two levels each: joined by pattern alone they would zig-zag
    path.write_text("pattern,sparsity,speedup,accuracy,model\n"
                    "2:4,0.5,1.6,80.0,swin_tiny\n2:4,0.5,1.4,81.0,convnext_tiny\n"
                    "2:4,0.75,2.0,78.0,swin_tiny\n2:4,0.75,1.8,79.5,convnext_tiny\n")
    points = read_sparsity_points(path)
    assert points[1] == SparsityPoint("2:4", 0.5, 1.4, 81.0, "convnext_tiny")
    ax = sparsity_roofline_figure(points).axes[0]
    swin, convnext = by_gid(ax, "pattern|swin_tiny|2:4"), by_gid(ax, "pattern|convnext_tiny|2:4")
    assert list(swin.get_xdata()) == [1.6, 2.0] and list(swin.get_ydata()) == [80.0, 78.0]
    assert list(convnext.get_xdata()) == [1.4, 1.8]
    assert swin.get_color() == convnext.get_color()  # a pattern keeps its colour
    assert swin.get_linestyle() != convnext.get_linestyle()
    legends = [a for a in ax.get_children() if a.__class__.__name__ == "Legend"]
    titles = {leg.get_title().get_text(): [t.get_text() for t in leg.get_texts()]
              for leg in legends}
    assert titles["model"] == ["swin_tiny", "convnext_tiny"]


def _point(name: str, intensity: float, flops: float) -> MatrixPoint:
    return MatrixPoint(name, f"{name}.mtx", "", "banded", "a100", "spmv", 1, "csr",
                       "compulsory", intensity, flops, 9.7e12, 1.555e12, "memory",
                       "NVIDIA A100", "HBM", "simt")


def test_aggregate_labels_its_roofs_and_counts_empty_matrices() -> None:
    points = [_point("a", 0.1, 1.5e11), _point("empty", 0.0, 0.0)]
    assert unplottable(points) == ["empty"]
    ax = aggregate_roofline_figure(points).axes[0]
    assert by_gid(ax, "roof|a100").get_label() == "roof: a100 (NVIDIA A100)"
    assert by_gid(ax, "roof-label|a100|compute").get_text() == "simt 9.7 TFLOP/s"
    assert by_gid(ax, "roof-label|a100|memory").get_text().startswith("HBM 1.5")
    assert "1 matrix with no work not shown: empty" in by_gid(ax, "hidden").get_text()



def test_ridgeline_from_saved_results(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from sparsroof.analysis import Config
    from sparsroof.matrix.mtx import load
    from sparsroof.plot import read_distributed, ridge_points
    from sparsroof.report.analysis import to_json

    from ..conftest import DATA
    from .test_plot import run_here

    spec = load_spec("clx-ridgeline")
    a = analyze(load(DATA / "lap2d_64.mtx"), spec,
                Config(kernel="spmm", widths=(16,), dtype="fp32", ranks=(1, 2, 4, 8)))
    results = tmp_path / "ranks.json"
    results.write_text(to_json([a]))
    [(name, spec_name, bounds)] = read_distributed(results)
    assert (name, spec_name) == ("lap2d_64", spec.name)
    assert bounds == list(a.distributed)  # every field survives the round trip
    assert [p.ranks for p in ridge_points(a)] == [2, 4, 8]
    out = tmp_path / "ridge.svg"
    code, err = run_here(capsys, "plot", "ridgeline", str(results), "-o", str(out))
    assert code == 0, err
    svg = out.read_text()
    assert "P = 2, 4, 8 ranks" in svg and "<text" in svg  # the title names the ranks drawn
    # and why P = 1 is not; the peak is not called P beside the rank counts
    assert "P = 1 moves nothing over the network" in svg
    assert "peak 4.2 TFLOP/s per rank" in svg and "P = 4.2" not in svg
    plain = tmp_path / "plain.json"
    plain.write_text(to_json([analyze(load(DATA / "lap2d_64.mtx"), spec)]))
    code, err = run_here(capsys, "plot", "ridgeline", str(plain), "-o", str(out))
    assert code == 1 and "no distributed results" in err


def test_launch_ceiling_on_the_classic_roofline() -> None:
    from sparsroof.analysis import Config
    from sparsroof.matrix.mtx import load

    from ..conftest import DATA

    v100 = load_spec("v100-sxm2")
    launch = v100.launch_overhead.value if v100.launch_overhead else 0.0
    assert 1e-6 < launch < 3e-6
    a = analyze(load(DATA / "lap2d_64.mtx"), v100, Config(kernel="spmm", widths=(1, 64)))
    points = roof_points([a])
    ax = roofline_figure(points, v100).axes[0]
    for width in (1, 64):
        flops = next(p.flops_useful for p in points if p.width == width)
        tick = by_gid(ax, f"launch|lap2d_64|{width}")
        assert list(tick.get_ydata()) == pytest.approx([flops / launch] * 2)  # F / t_launch
        # a launch-bound kernel attains exactly its launch ceiling
        for p in points:
            if p.width == width and p.bound == "launch":
                assert p.attainable_flops == pytest.approx(flops / launch)
    cpu_spec = load_spec("epyc-7763")  # a CPU spec: no launch overhead, no ticks
    assert cpu_spec.launch_overhead is None
    cpu = roof_points([analyze(load(DATA / "lap2d_64.mtx"), cpu_spec)])
    ax = roofline_figure(cpu, cpu_spec).axes[0]
    assert not [x for x in ax.get_lines() if (x.get_gid() or "").startswith("launch|")]
