"""Time-based roofline: the shaded compute-, memory- and launch-bound regions hold the
kernels the model bounds so, and the complexity-time plane (Fig. 2(d) of Wang et al.) puts
each kernel's complexity and time on one plane."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.path import Path as MplPath

from sparsroof.analysis import Config, analyze
from sparsroof.compare import judge, read_runs
from sparsroof.hardware.library import parse_spec
from sparsroof.hardware.spec import HwSpec
from sparsroof.matrix.mtx import load
from sparsroof.plot import (
    complexity_time_figure,
    measured_points,
    roof_points,
    time_roofline_figure,
)
from sparsroof.plot.complexity_time import time_at

from ..conftest import DATA, ROOT, sparsroof

LAP, RND = DATA / "lap2d_64.mtx", DATA / "random_1000.mtx"


def balanced_spec() -> HwSpec:
    """One memory level and a slow core, so that SpMM of the bundled matrices lands in all
    three regions: balance 400 GFLOP/s / 1 TB/s = 0.4 FLOP/B, launch 1 us."""
    src = {"value": "x", "source": "test"}
    return parse_spec({
        "name": "slow", "device": "Test device", "kind": "gpu",
        "peaks": {"simt": {"fp64": src | {"value": "400 GFLOP/s"}}},
        "memory": [{"name": "DRAM", "bandwidth": src | {"value": "1 TB/s"}}],
        "launch_overhead": src | {"value": "1 us"},
    }, "test")


SPEC = balanced_spec()


@pytest.fixture(scope="module")
def points() -> list[Any]:
    config = Config(kernel="spmm", widths=(1, 4, 16, 64), models=("compulsory", "random"))
    return roof_points([analyze(load(p), SPEC, config) for p in (LAP, RND)])


def by_gid(ax: Any, gid: str) -> Any:
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


def _region(ax: Any, gid: str) -> MplPath:
    """A shaded patch as a path in log10 of data coordinates (where its edges are
    straight)."""
    patch = by_gid(ax, gid)
    corners = patch.get_xy() if hasattr(patch, "get_xy") and gid != "launch" else None
    if corners is None:
        x, y, w, h = patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()
        corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    return MplPath(np.log10(np.asarray(corners, dtype=float)))


def _where(ax: Any, xy: tuple[float, float]) -> set[str]:
    """The shaded regions a point lies in."""
    point = np.log10(xy)
    return {name for name in ("compute", "memory", "launch")
            if _region(ax, f"region|{name}" if name != "launch" else "launch")
            .contains_point(point)}


def test_every_kernel_lies_in_the_region_of_its_bound(points: list[Any]) -> None:
    left, right = time_roofline_figure(points, SPEC).axes[:2]
    bounds = {p.bound for p in points}
    assert bounds == {"compute", "memory", "launch"}  # the spec was chosen for it
    for p in points:
        assert _where(right, (p.memory_s, p.compute_s)) == {p.bound}, p
        assert _where(left, (p.bytes_total, p.flops_executed)) == {p.bound}, p


def test_the_regions_meet_where_the_model_says(points: list[Any]) -> None:
    left, right = time_roofline_figure(points, SPEC).axes[:2]
    # time plane: the launch square of side 1 us, compute above the diagonal outside it
    box = by_gid(right, "launch")
    assert (box.get_x() + box.get_width(), box.get_y() + box.get_height()) == \
        pytest.approx((1e-6, 1e-6))
    compute = by_gid(right, "region|compute").get_xy()
    floor = [(x, y) for x, y in compute if y < right.get_ylim()[1]]
    for x, y in floor:  # the lower edge: max(t_launch, t_m)
        assert y == pytest.approx(max(1e-6, x))
    # complexity plane: the box's corner (beta t, P t) = (1 MB, 400 kFLOP) on the balance
    box = by_gid(left, "launch")
    corner = (box.get_x() + box.get_width(), box.get_y() + box.get_height())
    assert corner == pytest.approx((1e6, 4e5))
    memory = by_gid(left, "region|memory").get_xy()
    for x, y in memory:
        if x < left.get_xlim()[1]:  # the left edge: max(beta t, F / balance)
            assert x == pytest.approx(max(1e6, y / 0.4))
    names = [t.get_text() for t in right.get_legend().get_texts()]
    assert {"compute-bound", "memory-bound", "launch-bound (< 1 us)"} <= set(names)
    names = [t.get_text() for t in left.get_legend().get_texts()]
    assert "launch-bound (< 1 us)" in names


def test_no_launch_overhead_no_launch_region() -> None:
    src = {"value": "x", "source": "test"}
    cpu = parse_spec({"name": "cpu", "device": "CPU", "kind": "cpu",
                      "peaks": {"simt": {"fp64": src | {"value": "1 TFLOP/s"}}},
                      "memory": [{"name": "DRAM", "bandwidth": src | {"value": "100 GB/s"}}]},
                     "test")
    pts = roof_points([analyze(load(LAP), cpu, Config())])
    for ax in time_roofline_figure(pts, cpu).axes[:2]:
        assert not [a for a in ax.get_children() if a.get_gid() == "launch"]
        assert by_gid(ax, "region|compute") and by_gid(ax, "region|memory")


def test_complexity_time_plane_puts_both_symbols_of_each_kernel(points: list[Any]) -> None:
    fig = complexity_time_figure(points, SPEC)
    ax = fig.axes[0]
    for model in ("compulsory", "random"):
        mine = [p for p in points if p.matrix == "lap2d_64" and p.model == model]
        closed = by_gid(ax, f"complexity|lap2d_64|csr|{model}").get_offsets()
        np.testing.assert_allclose(closed, [(p.bytes_total, p.flops_executed) for p in mine],
                                   rtol=1e-12)
        opened = by_gid(ax, f"time|lap2d_64|csr|{model}").get_offsets()
        for p, (x, y) in zip(mine, opened, strict=True):
            if p.bound == "launch":  # moved out to the launch box's edge, at its ratio
                assert max(x / 1e12, y / 400e9) == pytest.approx(1e-6)
                assert y / x == pytest.approx(p.flops_executed / p.bytes_total)
            else:  # at its bound the time point is the complexity point
                assert (x, y) == pytest.approx((p.bytes_total, p.flops_executed))
    # the secondary axes are the primary ones over beta and P (set when drawn)
    fig.canvas.draw()
    top, right = ax.child_axes
    np.testing.assert_allclose(top.get_xlim(), np.asarray(ax.get_xlim()) / 1e12)
    np.testing.assert_allclose(right.get_ylim(), np.asarray(ax.get_ylim()) / 400e9)
    assert top.get_xlabel().startswith("memory time")
    # regions shaded as in the complexity plane, balance P/beta
    line = by_gid(ax, "balance")
    np.testing.assert_allclose(np.asarray(line.get_ydata()) / line.get_xdata(), 0.4)
    for p in points:
        assert _where(ax, (p.bytes_total, p.flops_executed)) == {p.bound}


def test_time_at_by_hand() -> None:
    p = roof_points([analyze(load(RND), SPEC, Config(kernel="spmm", widths=(64,)))])[0]
    # 3x slower than the bound: 3x further out along the kernel's intensity
    x, y = time_at(p, 3 * p.sol_s, 400e9, 1e12)
    assert p.bound in ("compute", "memory")
    assert (x, y) == pytest.approx((3 * p.memory_s * 1e12 * p.sol_s / max(p.memory_s,
                                                                           p.compute_s),
                                    3 * p.compute_s * 400e9 * p.sol_s
                                    / max(p.memory_s, p.compute_s)))
    assert y / x == pytest.approx(p.flops_executed / p.bytes_total)


def test_measured_runs_on_the_complexity_time_plane(tmp_path: Path) -> None:
    runs_csv = tmp_path / "runs.csv"
    runs_csv.write_text(f"matrix,kernel,d,time_s\n{LAP},spmm,16,1e-4\n{RND},spmm,4,5e-7\n")
    runs, errors = read_runs(str(runs_csv))
    assert not errors
    spec_file = tmp_path / "slow.yaml"
    spec_file.write_text("name: slow\ndevice: Test device\nkind: gpu\npeaks:\n  simt:\n"
                         "    fp64: {value: 400 GFLOP/s, source: test}\nmemory:\n"
                         "  - name: DRAM\n    bandwidth: {value: 1 TB/s, source: test}\n"
                         "launch_overhead: {value: 1 us, source: test}\n")
    measured = measured_points(judge(runs, str(spec_file))[0])
    ax = complexity_time_figure([], SPEC, measured=measured).axes[0]
    for i, m in enumerate(measured):
        gap = by_gid(ax, f"combined-gap|{i}")
        b = m.bound
        np.testing.assert_allclose(gap.get_xdata()[0], b.bytes_total)
        np.testing.assert_allclose(gap.get_ydata()[0], b.flops_executed)
        x, y = gap.get_xdata()[1], gap.get_ydata()[1]
        # at the measured time on the scaled axes, along the kernel's intensity
        assert max(x / 1e12, y / 400e9) == pytest.approx(m.measured_s)
        assert y / x == pytest.approx(b.flops_executed / b.bytes_total)
    # 0.5 us on the random matrix beat its 1 us launch floor: a violation, crossed
    assert by_gid(ax, "combined-violations").get_offsets().shape == (1, 2)


def test_complexity_time_commands(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return sparsroof(*args, cwd=ROOT)

    out = run("analyze", str(LAP), "--hw", "v100-sxm2", "--kernel", "spmm", "--d", "1,16",
              "-O", "json", "--plot", str(tmp_path / "a.svg"), "--plot-kind",
              "complexity-time")
    assert out.returncode == 0, out.stderr
    results = tmp_path / "r.json"
    results.write_text(out.stdout)
    done = run("plot", "complexity-time", str(results), "-o", str(tmp_path / "b.svg"))
    assert done.returncode == 0, done.stderr
    for svg in ("a.svg", "b.svg"):
        text = (tmp_path / svg).read_text()
        assert 'id="region|compute"' in text and 'id="launch"' in text
        assert 'id="time|lap2d_64|csr|' in text and "Complexity-time roofline" in text


def test_complexity_time_refuses_results_bounded_by_several_roofs() -> None:
    """The plane scales time by one P and one β: kernels bounded by the A100's L2 (small
    widths) and its HBM (d = 2048) cannot share it, so the figure names both roofs
    instead of drawing half of the kernels off their bound."""
    from sparsroof.errors import FigureError
    from sparsroof.hardware.library import load_spec

    a100 = load_spec("a100")
    config = Config(kernel="spmm", widths=(4, 2048), models=("compulsory",))
    pts = roof_points([analyze(load(DATA / "lap2d_64.mtx"), a100, config)])
    assert {p.memory_level for p in pts} == {"L2", "HBM2e"}
    with pytest.raises(FigureError, match=r"bounded by 2 roofs \(HBM2e .*, L2 .*\)"):
        complexity_time_figure(pts, a100)
