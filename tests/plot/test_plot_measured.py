"""MeasuredTimes runs on the figures: each run drawn where its time puts it, joined to its bound."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sparsroof.compare import judge, read_runs
from sparsroof.errors import FigureError
from sparsroof.hardware.library import load_spec
from sparsroof.plot import (
    measured_points,
    plot_measured,
    read_measured,
    roofline_figure,
    time_roofline_figure,
)

from ..conftest import DATA, ROOT, sparsroof

LAP = (DATA / "lap2d_64.mtx").as_posix()
RND = (DATA / "random_1000.mtx").as_posix()
V100 = load_spec("v100-sxm2")


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "measured.csv"
    path.write_text("matrix,time_s,format\n"
                    f"{LAP},5.0e-6,csr\n"     # 2.5x the 2.0 us launch floor
                    f"{LAP},1.0e-6,csr\n"     # faster than one launch: a violation
                    f"{RND},8.0e-6,coo\n", encoding="utf-8")
    return path


def by_gid(ax: object, gid: str) -> object:
    found = [a for a in ax.get_children() if a.get_gid() == gid]  # type: ignore[attr-defined]
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


def test_roofline_draws_each_run_below_its_bound(tmp_path: Path) -> None:
    runs, _ = read_runs(str(_csv(tmp_path)))
    measured = measured_points(judge(runs, "v100-sxm2")[0])
    ax = roofline_figure([], V100, measured=measured).axes[0]
    for i, m in enumerate(measured):
        # the run sits at its useful FLOPs over its time, straight below (or above) its
        # bound at the same intensity: lap2d_64, the 5-point stencil on a 64 x 64 grid, has
        # 5 x 4096 - 4 x 64 = 20,224 entries, so 40,448 FLOPs
        gap = by_gid(ax, f"roofline-gap|{i}")
        np.testing.assert_allclose(gap.get_xdata(), [m.bound.intensity] * 2)  # type: ignore[attr-defined]
        np.testing.assert_allclose(gap.get_ydata(),  # type: ignore[attr-defined]
                                   [m.bound.attainable_flops,
                                    m.bound.flops_useful / m.measured_s])
    lap = [m for m in measured if m.bound.matrix == "lap2d_64"]
    assert lap[0].bound.flops_useful == 40448
    got = by_gid(ax, "roofline-measured|lap2d_64").get_offsets()  # type: ignore[attr-defined]
    np.testing.assert_allclose(got, [(m.bound.intensity, 40448 / m.measured_s) for m in lap])
    # the 1 us run beat its 2 us launch floor: one red cross, at the run
    crosses = by_gid(ax, "roofline-violations").get_offsets()  # type: ignore[attr-defined]
    np.testing.assert_allclose(crosses, [(lap[1].bound.intensity, 40448 / 1e-6)])
    assert "3 measured runs" in ax.get_title() and "1 faster than it" in ax.get_title()


def test_time_plane_puts_each_run_on_its_iso_time_curve(tmp_path: Path) -> None:
    runs, _ = read_runs(str(_csv(tmp_path)))
    measured = measured_points(judge(runs, "v100-sxm2")[0])
    fig = time_roofline_figure([], V100, measured=measured)
    right = fig.axes[1]
    for i, m in enumerate(measured):
        gap = by_gid(right, f"time-gap|{i}")
        xs, ys = gap.get_xdata(), gap.get_ydata()  # type: ignore[attr-defined]
        # from the bound's iso-time curve (the 2 us launch floor here) to the run's, at the
        # model's ratio of compute to memory time
        assert max(xs[0], ys[0]) == pytest.approx(m.bound.sol_s)
        assert max(xs[1], ys[1]) == pytest.approx(m.measured_s)
        assert ys[1] / xs[1] == pytest.approx(m.bound.compute_s / m.bound.memory_s)
        # every run here is launch-bound: a grey line leads from its model point
        floor = by_gid(right, f"time-floor|{i}")
        assert floor.get_xdata()[0] == pytest.approx(m.bound.memory_s)  # type: ignore[attr-defined]
        # and a diamond marks the bound where it is, on the floor's iso-time curve, so a run
        # faster than it sits on its left
        sol = by_gid(right, f"time-sol|{i}").get_offsets()[0]  # type: ignore[attr-defined]
        assert max(sol) == pytest.approx(m.bound.sol_s)


def test_compare_json_reads_back_as_the_same_points(tmp_path: Path) -> None:
    csv = _csv(tmp_path)
    out = sparsroof("compare", str(csv), "--hw", "v100-sxm2", "-O", "json", cwd=ROOT)
    assert out.returncode == 1  # the violation
    doc = tmp_path / "judged.json"
    doc.write_text(out.stdout, encoding="utf-8")
    again = read_measured(doc)
    direct = measured_points(judge(read_runs(str(csv))[0], "v100-sxm2")[0])
    assert [m.bound for m in again] == [m.bound for m in direct]
    assert [m.measured_s for m in again] == [5e-6, 1e-6, 8e-6]
    # a CSV is judged on the way in
    assert [m.bound for m in read_measured(csv, hw="v100-sxm2")] == [m.bound for m in direct]


def test_runs_and_figure_must_share_a_spec(tmp_path: Path) -> None:
    runs, _ = read_runs(str(_csv(tmp_path)))
    measured = measured_points(judge(runs, "v100-sxm2")[0])
    with pytest.raises(FigureError, match="bounded on v100-sxm2, not a100-80gb"):
        plot_measured(measured, tmp_path / "x.png", spec="a100")
    with pytest.raises(FigureError, match="no measured runs"):
        plot_measured([], tmp_path / "x.png")


def test_cli_compare_plot_and_plot_measured(tmp_path: Path) -> None:
    csv = _csv(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return sparsroof(*args, cwd=ROOT)

    png, time_png = tmp_path / "cmp.png", tmp_path / "time.png"
    out = run("compare", str(csv), "--hw", "v100-sxm2", "--plot", str(png), "-O", "json")
    assert out.returncode == 1 and f"wrote {png}" in out.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    judged = tmp_path / "judged.json"
    judged.write_text(out.stdout, encoding="utf-8")
    out = run("plot", "time", "--measured", str(judged), "-o", str(time_png))
    assert out.returncode == 0, out.stderr
    assert time_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = run("compare", str(csv), "--plot", str(tmp_path / "cmp.gif"))
    assert out.returncode != 0 and "gif" in out.stderr and "Traceback" not in out.stderr
    out = run("plot", "roofline", "-o", str(tmp_path / "none.png"))
    assert out.returncode == 2 and "--measured" in out.stderr
    results = tmp_path / "results.json"
    results.write_text(run("analyze", LAP, "--hw", "v100-sxm2", "-O", "json").stdout,
                       encoding="utf-8")
    both = tmp_path / "both.png"
    out = run("plot", "roofline", str(results), "--measured", str(judged), "-o", str(both))
    assert out.returncode == 0, out.stderr
    assert json.loads(judged.read_text())["kind"] == "compare"
