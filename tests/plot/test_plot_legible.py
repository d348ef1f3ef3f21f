"""Figures that can be read: legends that count what they name and cover nothing drawn,
every marker visible (none hidden under another series'), markers set apart stay near
their true place and the figure says how near, launch-bound points have the launch
ceiling that holds them, labels inside the axes. Checked on the figure objects, for the
aggregate roofline of a batch store, the roofline of several devices, the ridgeline and
the roofline of measured runs."""

from __future__ import annotations

import math
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sparsroof.analysis import Config, analyze
from sparsroof.batch.store import Store
from sparsroof.batch.summary import MatrixPoint, store_points
from sparsroof.compare import judge, read_runs
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import load
from sparsroof.plot import measured_points, roofline_figure
from sparsroof.plot.aggregate import aggregate_roofline_figure, class_counts
from sparsroof.plot.devices import devices_roofline_figure
from sparsroof.plot.ridge import ridgeline_figure

from ..conftest import CORPUS, DATA, ROOT, sparsroof
from ..legibility import (
    assert_near,
    coinciding,
    hidden_pairs,
    legend_clashes,
    markers,
    moved_pt,
    renderer,
)


def by_gid(ax: Any, gid: str) -> Any:
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


def legend_texts(ax: Any) -> dict[str, list[str]]:
    from matplotlib.legend import Legend

    return {leg.get_title().get_text(): [t.get_text() for t in leg.get_texts()]
            for leg in ax.get_children() if isinstance(leg, Legend)}


# -- the aggregate roofline of a batch store --------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real corpus (some files malformed on purpose) on two GPUs, SpMV, then SpMM at
    d = 1, 16 into the same store: every matrix has four best rows."""
    path = tmp_path_factory.mktemp("agg") / "r.db"
    for kernel in (["--kernel", "spmv"], ["--kernel", "spmm", "--d", "1,16"]):
        out = sparsroof("batch", str(CORPUS), "--hw", "a100", "--hw", "v100-sxm2", "--store",
                        str(path), *kernel, cwd=ROOT)
        assert out.returncode in (0, 1), out.stderr  # 1: the malformed files failed
    return path


def _store_points(path: Path) -> list[MatrixPoint]:
    with Store(path) as s:
        return store_points(s)


def test_aggregate_legend_counts_matrices_not_rows(store: Path) -> None:
    points = _store_points(store)
    fig = aggregate_roofline_figure(points)
    shown = [p for p in points if p.intensity > 0 and p.attainable_flops > 0]
    with sqlite3.connect(store) as db:  # matrices per class, straight from the store
        want = dict(db.execute("SELECT COALESCE(class, 'unclassified'),"
                               " COUNT(DISTINCT path || '::' || member) FROM matrices"
                               " WHERE id IN (SELECT matrix_id FROM results"
                               " WHERE intensity > 0 AND attainable_flops > 0) GROUP BY 1"))
    assert len(shown) > 2 * sum(want.values())  # rows: two specs and two kernels each
    assert class_counts(shown) == want
    legend = legend_texts(fig.axes[-1])["class (matrices)"]
    assert legend == [f"{label} ({n})" for label, n in sorted(want.items())]
    assert "banded (12)" in legend


def test_aggregate_marks_kernels_and_specs_apart(store: Path) -> None:
    fig = aggregate_roofline_figure(_store_points(store))
    assert [ax.get_title().split(" ")[0] for ax in fig.axes] == ["a100-80gb", "v100-sxm2"]
    shapes: dict[str, set[bytes]] = {}
    for ax in fig.axes:
        for c in ax.collections:
            gid = c.get_gid() or ""
            if gid.startswith("points|"):
                kernel = "|".join(gid.split("|")[3:])
                shapes.setdefault(kernel, set()).add(c.get_paths()[0].vertices.tobytes())
    # SpMV and SpMM d=16 (the best width of every SpMM row here): one shape each, apart
    assert set(shapes) == {"spmv|1", "spmm|16"}
    assert all(len(v) == 1 for v in shapes.values())
    assert shapes["spmv|1"] != shapes["spmm|16"]
    assert legend_texts(fig.axes[-1])["kernel (marker)"][:2] == ["SpMV", "SpMM d=16"]


def test_aggregate_draws_the_launch_ceiling_of_launch_bound_rows(store: Path) -> None:
    points = [p for p in _store_points(store) if p.intensity > 0]
    fig = aggregate_roofline_figure(points)
    bound = [p for p in points if p.bound == "launch"]
    assert len(bound) > 50
    for p in bound:
        ax = fig.axes[0 if p.spec == "a100-80gb" else 1]
        tick = by_gid(ax, f"launch|{p.spec}|{p.name}|{p.kernel}|{p.width}")
        ceiling = p.flops_useful / p.launch_s  # F / t_launch
        assert list(tick.get_ydata()) == pytest.approx([ceiling] * 2)
        assert p.attainable_flops == pytest.approx(ceiling)  # the row sits on its ceiling
        lo, hi = tick.get_xdata()
        assert lo < p.intensity < hi
    assert any("launch ceiling F / t_launch (1.3 us, 1.9 us)" in t
               for t in legend_texts(fig.axes[-1])["kernel (marker)"])


def test_aggregate_keeps_every_marker_visible_and_legends_clear(store: Path) -> None:
    points = _store_points(store)
    fig = aggregate_roofline_figure(points)
    for ax, spec in zip(fig.axes, ("a100-80gb", "v100-sxm2"), strict=True):
        mine = sorted((p for p in points if p.spec == spec and p.intensity > 0),
                      key=lambda p: (p.label, p.kernel, p.width))
        assert coinciding(ax) == [] and hidden_pairs(ax) == []
        assert legend_clashes(ax) == []
        drawn = [xy for c in ax.collections if (c.get_gid() or "").startswith("points|")
                 for xy in c.get_offsets()]
        assert len(drawn) == len(mine)
    assert 0 < moved_pt(fig.axes[0]) <= 1.5 * math.sqrt(22) + 0.1


def _pile(n: int) -> list[MatrixPoint]:
    base = MatrixPoint("r0", "r0.mtx", "", "random", "a100-80gb", "spmv", 1, "csr", "random",
                       0.0943, 3.07e10, 9.7e12, 5.5e12, "launch", "NVIDIA A100", "L2",
                       "simt", 40000.0, 1.3e-6)
    return [replace(base, name=f"r{i}", path=f"r{i}.mtx") for i in range(n)]


def test_a_pile_of_twelve_is_spread_near_its_place_and_counted() -> None:
    pile = [*_pile(12), replace(_pile(1)[0], name="lap", path="lap.mtx", label="banded",
                                intensity=0.125, attainable_flops=3.07e10)]
    fig = aggregate_roofline_figure(pile)
    ax = fig.axes[0]
    assert legend_texts(ax)["class (matrices)"] == ["banded (1)", "random (12)"]
    # twelve markers of one series on one spot: every one visible, none hidden by another
    assert hidden_pairs(ax, share=0.5, same_series=True) == []
    c = by_gid(ax, "points|a100-80gb|random|spmv|1")
    assert_near(ax, c.get_offsets(), [(0.0943, 3.07e10)] * 12)
    shift = moved_pt(ax)
    assert 0 < shift <= 3 * math.sqrt(22)  # within three marker widths
    note = by_gid(ax, "footnote").get_text()
    assert "from their true place" in note and "12 shared one spot" in note
    # the same points give the same figure
    again = by_gid(aggregate_roofline_figure(pile).axes[0], "points|a100-80gb|random|spmv|1")
    np.testing.assert_array_equal(again.get_offsets(), c.get_offsets())


def test_report_plot_writes_the_aggregate(store: Path, tmp_path: Path) -> None:
    out = sparsroof("report", str(store), "--plot", str(tmp_path / "a.svg"), cwd=ROOT)
    assert out.returncode == 1  # the store records the malformed files' failures
    svg = (tmp_path / "a.svg").read_text()
    assert "banded (12)" in svg and 'id="launch|a100-80gb|' in svg
    assert "shared one spot" in svg or "from their true place" in svg


# -- several devices on one roofline ----------------------------------------------------


def _devices(names: tuple[str, ...]) -> tuple[Any, list[Any]]:
    specs = [load_spec(n) for n in names]
    groups = [[analyze(load(DATA / f"{m}.mtx"), s, Config()) for s in specs]
              for m in ("lap2d_64", "random_1000")]
    return devices_roofline_figure(groups, specs), specs


@pytest.mark.parametrize("names", [("a100", "h100-sxm", "mi250x-gcd"),
                                   ("a100", "h100-sxm", "h200")])
def test_every_device_keeps_its_points_visible(names: tuple[str, ...]) -> None:
    """H100 and H200 share a launch floor and an L2 bandwidth, so their launch-bound
    points fall on one spot; A100's floor is 8 % slower, a marker's width below."""
    fig, specs = _devices(names)
    ax = fig.axes[0]
    assert coinciding(ax) == [] and hidden_pairs(ax) == []
    for spec in specs:  # each device's points, near where its results put them
        for m in ("lap2d_64", "random_1000"):
            got = by_gid(ax, f"points|{spec.name}|{m}").get_offsets()
            a = analyze(load(DATA / f"{m}.mtx"), spec, Config())
            want = {(r.traffic.intensity, r.bound.attainable_flops) for r in a.results}
            match = [min(want, key=lambda w: math.dist(np.log(w), np.log(g))) for g in got]
            assert len(got) == len(want) == len(set(match))  # models that agree: one marker
            assert_near(ax, got, match, context=f"{spec.name} {m}")
        assert by_gid(ax, f"launch|{spec.name}|lap2d_64|1")  # each device's launch ceiling
    assert legend_clashes(ax) == []


def test_the_devices_legend_covers_no_roof() -> None:
    fig, _ = _devices(("a100", "h100-sxm", "mi250x-gcd"))
    ax = fig.axes[0]
    assert legend_clashes(ax) == []
    # the roofs it used to sit on are all there, cache roofs included
    assert by_gid(ax, "roof|h100-sxm|L2") and by_gid(ax, "roof|mi250x-gcd|L2")
    texts = legend_texts(ax)["device (colour), matrix (marker)"]
    assert texts[0].startswith("a100-80gb: NVIDIA A100")


# -- the ridgeline ----------------------------------------------------------------------


def _ridge() -> Any:
    from sparsroof.plot import ridge_points

    spec = load_spec("clx-ridgeline")
    a = analyze(load(DATA / "lap2d_64.mtx"), spec,
                Config(kernel="spmm", widths=(16,), dtype="fp32", ranks=(1, 2, 4, 8, 16)))
    first = a.distributed[0]
    return ridgeline_figure(ridge_points(a), first.peak_flops, first.bandwidth, first.network,
                            "lap2d_64")


def test_the_balance_label_stays_off_the_axes() -> None:
    from matplotlib.text import Text

    ax = _ridge().axes[0]
    r = renderer(ax)
    label = by_gid(ax, "balance-label")
    box = Text.get_window_extent(label, r)
    frame = ax.get_window_extent(r)
    assert frame.x0 < box.x0 and box.x1 < frame.x1 and frame.y0 < box.y0 and box.y1 < frame.y1
    ticks = [t.get_window_extent(r) for t in ax.get_yticklabels() if t.get_text()]
    assert ticks and not any(box.overlaps(t) for t in ticks)
    # nor on a border, a point or a rank label
    star = ax.transData.transform([by_gid(ax, "balance").get_xydata()[0]])[0]
    assert not box.contains(*star)
    for t in ax.texts:
        if t is not label and t.get_text():
            assert not box.overlaps(Text.get_window_extent(t, r)), t.get_text()
    assert legend_clashes(ax) == []


# -- measured runs beside their bound ---------------------------------------------------


def test_two_formats_on_one_bound_stay_visible(tmp_path: Path) -> None:
    """The README's compare figure: lap2d_64's CSR and ELL runs are both launch-bound on
    the V100, so their bounds (a triangle and a square) fall a marker's width apart."""
    path = tmp_path / "measured.csv"
    path.write_text("matrix,time_s,format\n"
                    f"{(DATA / 'lap2d_64.mtx').as_posix()},2.5e-5,csr\n"
                    f"{(DATA / 'random_1000.mtx').as_posix()},9.0e-6,csr\n"
                    f"{(DATA / 'lap2d_64.mtx').as_posix()},3.1e-5,ell\n")
    runs, _ = read_runs(str(path))
    measured = measured_points(judge(runs, "v100-sxm2")[0])
    ax = roofline_figure([], load_spec("v100-sxm2"), measured=measured).axes[0]
    csr = by_gid(ax, "points|lap2d_64|csr|compulsory")
    ell = by_gid(ax, "points|lap2d_64|ell|compulsory")
    truth = {m.bound.storage: (m.bound.intensity, m.bound.attainable_flops)
             for m in measured if m.bound.matrix == "lap2d_64"}
    assert_near(ax, csr.get_offsets(), [truth["csr"]])
    assert_near(ax, ell.get_offsets(), [truth["ell"]])
    # their true places are closer than a marker's width: drawn, they are (nearly) apart
    a, b = ax.transData.transform([truth["csr"], truth["ell"]])
    width = math.sqrt(28) * ax.get_figure().dpi / 72
    assert math.dist(a, b) < 0.7 * width
    assert hidden_pairs(ax, share=0.85) == []
    assert len(markers(ax)) == 3
    assert legend_clashes(ax) == []
    # each gap line starts at its bound's marker as drawn and ends at its run's
    for i, m in enumerate(measured):
        gap = by_gid(ax, f"roofline-gap|{i}")
        start = (gap.get_xdata()[0], gap.get_ydata()[0])
        drawn = by_gid(ax, f"points|{m.bound.matrix}|{m.bound.storage}|compulsory")
        assert any(np.allclose(start, xy, rtol=1e-12) for xy in drawn.get_offsets())
