"""The spy figure drawn with Pillow, checked against matplotlib's own colour map, tick
locator and log-axis labels, and read back from the PNG it writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from sparsroof.errors import FigureError
from sparsroof.matrix.mtx import Header, Matrix
from sparsroof.plot.raster import _bar_ticks, colours, spy_image, ticks, viridis
from sparsroof.plot.spy import GUIDE_COLOUR, density, spy_figure

from ..conftest import ROOT, sparsroof


def _matrix(name: str, rows: int, cols: int, row: np.ndarray, col: np.ndarray) -> Matrix:
    header = Header(name, "coordinate", "pattern", "general", rows, cols, row.size)
    return Matrix(name, name, rows, cols, row, col, None, header)


def test_the_colour_map_is_matplotlibs_viridis() -> None:
    import matplotlib
    from matplotlib.colors import LogNorm

    cmap = matplotlib.colormaps["viridis"]
    np.testing.assert_array_equal(viridis(), cmap(np.arange(256), bytes=True)[:, :3])
    counts = np.arange(0, 5000).reshape(50, 100)
    for top in (2, 3, 9, 10, 47, 1000, 4999):
        want = cmap(LogNorm(vmin=1, vmax=top)(np.ma.masked_equal(counts, 0)), bytes=True)
        got = colours(counts, top)
        inside = (counts > 0) & (counts <= top)
        np.testing.assert_array_equal(got[inside], want[inside][:, :3], err_msg=str(top))
        assert (got[counts == 0] == 255).all()


@pytest.mark.parametrize("high", [1, 3, 5, 7, 10, 64, 99, 777, 2000, 4096, 30_000,
                                  123_456, 1_000_000, 2**31 + 5])
@pytest.mark.parametrize("length_pt, room", [(330, 30), (450, 20), (100, 30), (40, 30)])
def test_tick_places_are_matplotlibs(high: int, length_pt: float, room: float) -> None:
    from matplotlib.ticker import MaxNLocator

    intervals = max(1, min(9, int(length_pt // room)))
    want = MaxNLocator(nbins=intervals, steps=[1, 2, 2.5, 5, 10]).tick_values(0, high)
    want = want[(want >= 0) & (want <= high * (1 + 1e-12))]
    np.testing.assert_allclose(ticks(high, length_pt, room), want)


@pytest.mark.parametrize("top", [2, 3, 5, 9, 10, 25, 300])
def test_colour_bar_labels_are_matplotlibs(top: int) -> None:
    """The counts the colour bar labels are those matplotlib's figure labels."""
    rows = np.repeat(np.arange(2), [top, 1])  # top entries in one cell, one in another
    m = _matrix("bar", 2, 2, rows, np.zeros(top + 1, np.int64))
    fig = spy_figure(m)
    fig.canvas.draw()  # type: ignore[no-untyped-call]
    axis = fig.axes[1].yaxis
    placed = [*zip(axis.get_majorticklocs(), axis.get_ticklabels(), strict=True),
              *zip(axis.get_minorticklocs(), axis.get_ticklabels(minor=True), strict=True)]
    want = {float(t.get_text()) for at, t in placed if 1 <= at <= top and t.get_text()}
    assert {v for v, _, shown in _bar_ticks(top) if shown} == want


def test_the_cells_stand_where_they_are_counted(tmp_path: Path) -> None:
    """An 8 x 8 checkerboard of one-entry cells with ten entries in the top-left cell:
    that cell's yellow square sits at the image's top-left corner, an eighth of it a
    side, and the centre of every cell shows that cell's colour."""
    r, c = np.mgrid[0:8, 0:8]
    r, c = r[(r + c) % 2 == 0], c[(r + c) % 2 == 0]
    row = np.concatenate([r, np.zeros(9, np.int64)])
    col = np.concatenate([c, np.zeros(9, np.int64)])
    m = _matrix("checker", 8, 8, row, col)
    d = density(m, bins=8)
    assert d.counts[0, 0] == 10 and d.counts.sum() == row.size
    pixels = np.asarray(spy_image(m, bins=8))
    # the yellow square nearest the top-left corner (the colour bar's top is yellow too)
    parts, _ = ndimage.label((pixels == viridis()[255]).all(axis=2))
    found = np.argwhere(parts)
    yellow = np.argwhere(parts == parts[tuple(found[found.sum(axis=1).argmin()])])
    (top, left), (bottom, right) = yellow.min(axis=0), yellow.max(axis=0)
    side = bottom - top + 1
    assert abs((right - left + 1) - side) <= 1 and side > 40
    want = colours(d.counts, 10)
    for i in range(8):
        for j in range(8):
            centre = pixels[top + int((i + 0.5) * side), left + int((j + 0.5) * side)]
            assert centre.tolist() == want[i, j].tolist(), (i, j)
    # the square's own edges: black spine above and to the left of the first cell
    assert (pixels[top - 1, left + side // 2] < 80).all()
    assert (pixels[top + side // 2, left - 1] < 80).all()


def test_overlays_and_marks_are_drawn() -> None:
    lap = _matrix("band", 64, 64, np.arange(64), np.arange(64))
    plain = np.asarray(spy_image(lap))
    guide = np.array([int(GUIDE_COLOUR[k:k + 2], 16) for k in (1, 3, 5)])

    def orange(p: np.ndarray) -> int:
        return int((np.abs(p.astype(int) - guide).sum(axis=2) < 60).sum())

    assert orange(plain) == 0
    assert orange(np.asarray(spy_image(lap, band=3))) > 500
    # a grid at 45 % opacity: orange-tinted white, neither white nor fully orange
    grid = np.asarray(spy_image(lap, block=16)).astype(int)
    tinted = (grid[..., 0] > 220) & (grid[..., 2] < 190) & (grid[..., 2] > 100)
    assert tinted.sum() > 500
    few = _matrix("few", 2000, 2000, np.array([0, 1999]), np.array([0, 1999]))
    marked = np.asarray(spy_image(few))
    purple = (marked == viridis()[0]).all(axis=2).sum()
    assert purple > 2 * 20  # two markers of about 9 x 9 pixels, not two 1-pixel cells


def test_the_figure_size_and_resolution_are_kept() -> None:
    m = _matrix("r", 3000, 1000, np.arange(1000) * 3, np.arange(1000))
    small, large = spy_image(m, size=(6, 5), dpi=100), spy_image(m, size=(6, 5), dpi=200)
    assert 5 * 100 < small.width <= 6 * 100 and 4 * 100 < small.height <= 5 * 100
    assert abs(large.width / small.width - 2) < 0.05
    assert abs(large.height / small.height - 2) < 0.05
    with pytest.raises(FigureError, match="pixels"):
        spy_image(m, size=(40, 40), dpi=600)


def test_cli_spy_png_draws_without_matplotlib(tmp_path: Path) -> None:
    """A PNG spy never imports matplotlib (its import alone outweighs the load of a
    large file); an SVG is still matplotlib's, with its named image."""
    png, svg = tmp_path / "s.png", tmp_path / "s.svg"
    code = ("import sys\nfrom sparsroof.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code\n"
            "print(sorted(m for m in sys.modules if m.startswith('matplotlib')))\n")
    out = subprocess.run([sys.executable, "-c", code, "spy", "data/lap2d_64.mtx", "-o",
                          str(png), "--band", "auto"], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    with Image.open(png) as image:
        assert image.info.get("Software") == "sparsroof"
        assert round(image.info["dpi"][0]) == 150
    done = sparsroof("spy", "data/lap2d_64.mtx", "-o", str(svg), cwd=ROOT)
    assert done.returncode == 0 and 'id="density' in svg.read_text()


@pytest.mark.parametrize("command", ["spy", "plot"])
def test_a_figure_of_too_many_pixels_is_refused(command: str, tmp_path: Path) -> None:
    lap = str(ROOT / "data" / "lap2d_64.mtx")
    if command == "spy":
        args = ["spy", lap, "-o", "big.png"]
    else:
        results = tmp_path / "r.json"
        done = sparsroof("analyze", lap, "-O", "json", cwd=tmp_path)
        results.write_text(done.stdout)
        args = ["plot", "roofline", str(results), "-o", "big.png"]
    done = sparsroof(*args, "--size", "40x40", "--dpi", "600", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "24,000 x 24,000 pixels" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "big.png").exists()


def test_band_guides_of_an_extreme_shape_are_dashed_only_where_seen() -> None:
    """A 2 x 1,000,000 matrix's guides run a million cells long; only the stretch inside
    the picture is dashed (it took minutes, dash by dash, before)."""
    row = np.array([0, 1, 1])
    wide = _matrix("wide", 2, 1_000_000, row, np.array([0, 1, 999_999]))
    pixels = np.asarray(spy_image(wide, band=0)).astype(int)
    guide = np.array([int(GUIDE_COLOUR[k:k + 2], 16) for k in (1, 3, 5)])
    assert (np.abs(pixels - guide).sum(axis=2) < 60).sum() > 10


def test_a_title_wider_than_the_figure_is_kept_whole() -> None:
    name = "a_matrix_name_long_enough_to_be_wider_than_a_small_figure_of_four_by_three"
    m = _matrix(name, 100, 100, np.arange(100), np.arange(100))
    image = spy_image(m, size=(4, 3), dpi=100)
    ink = (np.asarray(image).min(axis=2) < 128).any(axis=0)
    # ink starts at the crop's margin (a tenth of an inch), not at the picture's edge
    assert np.flatnonzero(ink)[0] >= 5 and np.flatnonzero(ink)[-1] <= image.width - 6
    assert image.width > 4 * 100
