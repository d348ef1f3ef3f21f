"""plot reuse: the sparsity-aware roofline of Qian et al. (Fig. 2), one vertical line per
B-reuse model at its intensity, ending at the model's bound, with measured runs on top."""

from __future__ import annotations

import csv
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sparsroof.analysis import Config, analyze
from sparsroof.compare import judge, read_runs
from sparsroof.errors import FigureError
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import load
from sparsroof.plot import measured_points, read_results, reuse_figure, roof_points

from ..compare.test_papers_measured import TABLE_V
from ..conftest import DATA, ROOT, sparsroof

EPYC = load_spec("epyc-7763")
WIDTHS = (1, 4, 16, 64)
MODELS = ("compulsory", "random", "banded", "blocked", "scale-free", "cache-aware")
LAP, RND = DATA / "lap2d_64.mtx", DATA / "random_1000.mtx"


@pytest.fixture(scope="module")
def lines() -> list[Any]:
    """Both bundled matrices, every width and model, main memory's roof only."""
    config = Config(kernel="spmm", widths=WIDTHS, models=MODELS, cache_roof=False)
    return roof_points([analyze(load(p), EPYC, config) for p in (LAP, RND)])


def _artists(fig: Any, prefix: str) -> dict[str, Any]:
    return {a.get_gid(): a for ax in fig.axes for a in ax.get_children()
            if (a.get_gid() or "").startswith(prefix)}


def test_each_model_is_a_vertical_line_up_to_its_bound(lines: list[Any]) -> None:
    fig = reuse_figure(lines, EPYC)
    drawn = _artists(fig, "reuse|")
    assert len(drawn) == 2 * len(WIDTHS) * len(MODELS) == len(lines)
    beta, peak = 204.8e9, 3584e9  # the spec's peak DRAM bandwidth and fp64 peak
    for p in lines:
        line = drawn[f"reuse|{p.matrix}|{p.model}|{p.width}"]
        np.testing.assert_allclose(line.get_xdata(), [p.intensity] * 2, rtol=1e-12)
        # without cache roofs the top is where the vertical meets the DRAM roof
        assert line.get_ydata()[1] == pytest.approx(min(peak, beta * p.intensity), rel=1e-9)
        assert line.get_ydata()[0] == pytest.approx(line.axes.get_ylim()[0])


def test_the_random_line_stands_at_the_papers_intensity(lines: list[Any]) -> None:
    # random_1000: 1000 x 1000 with 9955 entries. Eq. (2) of Qian et al. with CSR's row
    # pointers: AI = 2·d·nnz / (12·nnz + 4·(n+1) + 8·d·nnz + 8·n·d)
    nnz, n = 9955, 1000
    drawn = _artists(reuse_figure(lines, EPYC), "reuse|random_1000|random|")
    for d in WIDTHS:
        ai = 2 * d * nnz / (12 * nnz + 4 * (n + 1) + 8 * d * nnz + 8 * n * d)
        assert drawn[f"reuse|random_1000|random|{d}"].get_xdata()[0] == pytest.approx(ai)


def test_coinciding_lines_are_striped_so_every_model_shows(lines: list[Any]) -> None:
    # on the 5-point Laplacian every column of B is used once per row band: compulsory,
    # banded and blocked traffic are the same, so those lines share a place
    ax = reuse_figure(lines, EPYC).axes[0]
    same = [a for a in ax.get_lines() if (a.get_gid() or "").startswith("reuse|lap2d_64|")
            and a.get_gid().endswith("|64")]
    xs = {a.get_gid().split("|")[2]: a.get_xdata()[0] for a in same}
    assert xs["compulsory"] == pytest.approx(xs["banded"])
    styles = {a.get_gid().split("|")[2]: a.get_linestyle() for a in same}
    assert styles["compulsory"] != "-" and styles["banded"] != "-"
    offsets = {a.get_gid().split("|")[2]: a._dash_pattern[0] for a in same}  # noqa: SLF001
    assert offsets["compulsory"] != offsets["banded"]


def _runs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "runs.csv"
    rows = [("lap2d_64.mtx", 1, "CSR", 2e-5), ("lap2d_64.mtx", 1, "CSB", 1e-5),
            ("lap2d_64.mtx", 16, "CSR", 1e-4), ("random_1000.mtx", 4, "MKL", 4e-5),
            ("random_1000.mtx", 4, "CSR", 1e-8)]  # the last: faster than any roof
    with path.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["matrix", "kernel", "d", "implementation", "time_s"])
        w.writerows([(str(DATA / m), "spmm", d, impl, t) for m, d, impl, t in rows])
    return path


def test_measured_runs_stand_on_their_class_models_line(lines: list[Any],
                                                          tmp_path: Path) -> None:
    runs, errors = read_runs(str(_runs_csv(tmp_path)))
    assert not errors
    measured = measured_points(judge(runs, "epyc-7763")[0])
    assert [m.implementation for m in measured] == ["CSR", "CSB", "CSR", "MKL", "CSR"]
    fig = reuse_figure(lines, EPYC, measured=measured)
    points = _artists(fig, "measured|")
    # the class models: banded for the Laplacian, random for the random matrix
    line = {(p.matrix, p.width, p.model): p for p in lines}
    csr_lap = points["measured|lap2d_64|CSR"].get_offsets()
    want = [(line[("lap2d_64", d, "banded")].intensity, 2 * 20224 * d / t)
            for d, t in ((1, 2e-5), (16, 1e-4))]
    np.testing.assert_allclose(csr_lap, want, rtol=1e-9)
    mkl = points["measured|random_1000|MKL"].get_offsets()
    np.testing.assert_allclose(mkl, [(line[("random_1000", 4, "random")].intensity,
                                      2 * 9955 * 4 / 4e-5)], rtol=1e-9)
    # one marker per implementation, the same in every panel
    markers = {gid.split("|")[2]: a.get_paths()[0].vertices.round(3).tobytes()
               for gid, a in points.items()}
    assert len({markers["CSR"], markers["CSB"], markers["MKL"]}) == 3
    above = _artists(fig, "above|")
    assert list(above) == ["above|random_1000"]
    np.testing.assert_allclose(above["above|random_1000"].get_offsets(),
                               [(line[("random_1000", 4, "random")].intensity,
                                 2 * 9955 * 4 / 1e-8)], rtol=1e-9)
    # --at puts them on another model's line
    fig = reuse_figure(lines, EPYC, measured=measured, at="compulsory")
    x = _artists(fig, "measured|")["measured|random_1000|MKL"].get_offsets()[0][0]
    assert x == pytest.approx(line[("random_1000", 4, "compulsory")].intensity)


def test_a_run_without_its_line_is_an_error(lines: list[Any], tmp_path: Path) -> None:
    runs, _ = read_runs(str(_runs_csv(tmp_path)))
    measured = measured_points(judge(runs, "epyc-7763")[0])
    with pytest.raises(FigureError, match="no scale-free-measured line for lap2d_64 at d=1"):
        reuse_figure(lines, EPYC, measured=measured, at="scale-free-measured")
    with pytest.raises(FigureError, match="no coo rows"):
        reuse_figure(lines, EPYC, storage="coo")


def test_roofs_in_the_legend_and_cache_roofs_where_they_bound(lines: list[Any]) -> None:
    fig = reuse_figure(lines, EPYC)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts[0] == "roof: DDR4 205 GB/s" and "cache-aware" in texts
    # with cache roofs the small widths of these small matrices end on a cache's roof
    config = Config(kernel="spmm", widths=(1, 64), models=("compulsory",))
    cached = roof_points([analyze(load(LAP), EPYC, config)])
    fig = reuse_figure(cached, EPYC)
    roofs = _artists(fig, "roof|")
    levels = {p.memory_level for p in cached}
    assert set(roofs) == {f"roof|{lv}" for lv in levels | {"DDR4"}}
    for p in cached:
        top = _artists(fig, "reuse|")[f"reuse|lap2d_64|compulsory|{p.width}"].get_ydata()[1]
        assert top == pytest.approx(p.attainable_flops)


def test_a_roof_has_one_style_in_every_panel_as_the_legend_shows_it() -> None:
    """On the A100 the L2 roof bounds a line of lap2d_64 but none of random_1000: it is
    still drawn solid in both panels, as the one legend entry that names it says."""
    config = Config(kernel="spmm", widths=WIDTHS, models=("compulsory", "random"))
    a100 = load_spec("a100")
    cached = roof_points([analyze(load(p), a100, config) for p in (LAP, RND)])
    fig = reuse_figure(cached, a100)
    drawn = [{a.get_gid(): (a.get_linestyle(), a.get_color()) for a in ax.get_children()
              if (a.get_gid() or "").startswith("roof|")} for ax in fig.axes if ax.get_visible()]
    assert len(drawn) == 2 and drawn[0] == drawn[1] and "roof|L2" in drawn[0]
    shown = {t.get_text().split()[1]: h for t, h in zip(fig.legends[0].get_texts(),
                                                       fig.legends[0].legend_handles,
                                                       strict=True)
             if t.get_text().startswith("roof:")}
    for gid, (ls, color) in drawn[0].items():
        handle = shown[gid.split("|")[1]]
        assert (handle.get_linestyle(), handle.get_color()) == (ls, color), gid


def test_bundled_table_v_cells_are_the_papers(tmp_path: Path) -> None:
    """data/qian-table-v.csv holds Table V of Qian et al. as run times: each GFLOP/s is
    2·nnz·d over the time."""
    with (DATA / "qian-table-v.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 24
    for r in rows:
        name = r["matrix"].removesuffix(".mtx")
        nnz, gflops = TABLE_V[name]
        d = int(r["d"])
        cell = WIDTHS.index(d) * 3 + ("CSR", "MKL", "CSB").index(r["implementation"])
        assert float(r["gflops_table_v"]) == gflops[cell]
        assert 2 * nnz * d / float(r["time_s"]) / 1e9 == pytest.approx(gflops[cell], rel=1e-6)
        assert (r["hw"], r["format"], r["kernel"]) == ("epyc-7763", "csr", "spmm")


def test_plot_reuse_command(tmp_path: Path) -> None:
    out = sparsroof("analyze", str(LAP), str(RND), "--hw", "epyc-7763", "--kernel", "spmm", "--d",
                    "1,4,16", "--model", "all", "-O", "json", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    results = tmp_path / "models.json"
    results.write_text(out.stdout)
    figure = tmp_path / "reuse.svg"

    def plot(*args: str) -> subprocess.CompletedProcess[str]:
        return sparsroof("plot", "reuse", str(results), *args, cwd=ROOT)

    done = plot("--measured", str(_runs_csv(tmp_path)), "-o", str(figure))
    assert done.returncode == 0, done.stderr
    svg = figure.read_text()
    points, _ = read_results(results)
    for p in points:
        assert f'id="reuse|{p.matrix}|{p.model}|{p.width}"' in svg
    assert 'id="measured|random_1000|MKL"' in svg
    for args, needle, code in ((["--at", "nope"], "invalid value for '--at'", 2),
                               (["--storage", "ell"], "no ell rows", 1),
                               (["--hw", "nope"], "no bundled hardware spec", 2)):
        bad = plot("--measured", str(_runs_csv(tmp_path)), *args, "-o", str(figure))
        assert bad.returncode == code and needle in bad.stderr, bad.stderr
        assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert json.loads(out.stdout)["kind"] == "analyze" and math.isfinite(points[0].intensity)


def test_launch_bound_tops_are_counted() -> None:
    """On an A100 the bundled matrices' small widths are bound by the launch overhead: their
    lines end at F / t_launch, below every roof, and the panel says how many do."""
    a100 = load_spec("a100")
    pts = roof_points([analyze(load(LAP), a100, Config(kernel="spmm", widths=WIDTHS))])
    ax = reuse_figure(pts, a100).axes[0]
    launched = [p for p in pts if p.bound == "launch"]
    assert launched and len(launched) < len(pts)
    note = [t for t in ax.texts if t.get_gid() == "launch-note"]
    assert note[0].get_text() == f"{len(launched)} of {len(pts)} tops: launch overhead"
    lines = _artists(ax.figure, "reuse|")
    for p in launched:
        top = lines[f"reuse|lap2d_64|{p.model}|{p.width}"].get_ydata()[1]
        assert top == pytest.approx(p.flops_useful / 1.3e-6)  # the spec's 1.3 us launch


@pytest.fixture(scope="module")
def spmm_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = sparsroof("analyze", str(LAP), "--hw", "epyc-7763", "--kernel", "spmm", "--d", "1,4",
                    "--model", "all", "-O", "json", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    results = tmp_path_factory.mktemp("reuse") / "models.json"
    results.write_text(out.stdout)
    return results


def _reuse(results: Path, runs: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return sparsroof("plot", "reuse", str(results), "--measured", str(runs), "-o", str(out),
                     cwd=ROOT)


def test_runs_of_another_format_are_counted_on_stderr(spmm_results: Path,
                                                      tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("matrix,kernel,d,format,time_s\n"
                    f"{LAP},spmm,1,csr,2e-5\n{LAP},spmm,4,coo,4e-5\n{LAP},spmm,1,ell,3e-5\n")
    figure = tmp_path / "reuse.svg"
    out = _reuse(spmm_results, runs, figure)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[0] == (
        "sparsroof: 2 of 3 measured runs are left out: their format (coo, ell) is not csr, "
        "the one drawn (choose it with --storage)")
    svg = figure.read_text()
    assert svg.count('id="measured|lap2d_64|') == 1  # the csr run alone


def test_a_bad_measured_row_is_a_one_line_error(spmm_results: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(f"matrix,kernel,d,time_s\n{LAP},spmm,1,2e-5\n{LAP},spmm,4,0\n"
                    f"{LAP},spmm,4,-1\n")
    figure = tmp_path / "reuse.png"
    out = _reuse(spmm_results, runs, figure)
    assert out.returncode == 1 and not figure.exists()
    assert out.stderr == (f"sparsroof: error: {runs}:3: time_s '0' is not a positive number "
                          f"of seconds (and 1 more: 'sparsroof compare {runs}' lists them)\n")


def test_a_panel_of_launch_bound_lines_draws_the_level_they_were_charged_at() -> None:
    """Every line of a tiny matrix on the A100 is launch-bound, its bytes charged at L2:
    the L2 roof is drawn (dashed, as it bounds none), not only main memory's, which the
    lines stand above."""
    from sparsroof.plot.reuse import roof_levels

    a100 = load_spec("a100")
    config = Config(kernel="spmm", widths=(1, 64), models=("compulsory", "random"))
    points = roof_points([analyze(load(RND), a100, config)])
    assert all(p.bound == "launch" and p.memory_level == "L2" for p in points)
    levels = roof_levels(points, a100)
    assert levels["L2"] == (5.5e12, False) and levels["HBM2e"][1] is False
