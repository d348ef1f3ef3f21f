"""A PNG is drawn once and cropped to what was drawn: the same picture as matplotlib's
tight box, nothing cut, and the tight box itself where something lies far outside."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.image import imread

from sparsroof.plot.style import new_figure, save

from ..conftest import fresh_python


def _figure(label_x: float = 0.5) -> matplotlib.figure.Figure:
    fig = new_figure((4.0, 3.0), dpi=100)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1e6])
    ax.set_ylabel("a long label on the left of the axes")
    ax.set_title("title")
    fig.text(label_x, -0.05, "a note under the figure", ha="center")
    return fig


def _tight(fig: matplotlib.figure.Figure, path: Path) -> np.ndarray:
    fig.savefig(path, format="png", dpi=fig.dpi, bbox_inches="tight")
    return imread(path)


def test_crop_holds_what_the_tight_box_holds(tmp_path: Path) -> None:
    fig = _figure()
    got = imread(save(fig, tmp_path / "once.png"))
    want = _tight(fig, tmp_path / "tight.png")
    # the tight box counts each text's whole line height, the crop only its ink
    assert abs(got.shape[0] - want.shape[0]) <= 8 and abs(got.shape[1] - want.shape[1]) <= 8
    pad = round(matplotlib.rcParams["savefig.pad_inches"] * fig.dpi)
    ink = (got != got[0, 0]).any(axis=2)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    # the pad on every side is blank, and ink starts right after it
    assert (rows[0], cols[0]) == (pad, pad)
    assert (rows[-1], cols[-1]) == (got.shape[0] - pad - 1, got.shape[1] - pad - 1)
    # the note under the figure and the label left of it are in the picture
    assert got.shape[0] > 3.0 * fig.dpi and got.shape[1] > 3.6 * fig.dpi


@pytest.mark.parametrize("label_x", [-2.0, 3.0])
def test_far_outside_falls_back_to_the_tight_box(tmp_path: Path, label_x: float) -> None:
    """A note farther out than the drawn margin would be cut: the tight box is measured."""
    fig = _figure(label_x)
    got = imread(save(fig, tmp_path / "far.png"))
    assert got.shape == _tight(fig, tmp_path / "tight.png").shape
    assert got.shape[1] > (4.0 + 2 * 1.0) * fig.dpi


@pytest.mark.parametrize("limits", [(0.01, 100.0), (3e-3, 7e4), (1e-12, 1e12)])
def test_minor_marks_sit_where_matplotlib_puts_its_minor_ticks(
        tmp_path: Path, limits: tuple[float, float]) -> None:
    # log_axis draws the minor ticks as one line of markers: the same places as
    # matplotlib's own minor ticks of an axis with the same view (none on a major tick,
    # none outside the view, none when the axis spans too many decades); a secondary
    # axis keeps matplotlib's ticks
    from sparsroof.plot.style import log_axis

    def axes(ours: bool) -> tuple[matplotlib.figure.Figure, matplotlib.axes.Axes]:
        fig = new_figure((4.0, 3.0), dpi=100)
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*limits)
        ax.set_ylim(*limits)
        ax.plot(limits, limits)
        if ours:
            log_axis(ax.xaxis, "")
            log_axis(ax.yaxis, "s")
        else:  # matplotlib's minor ticks under log_axis's major ones
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            for axis in (ax.xaxis, ax.yaxis):
                axis.set_major_locator(LogLocator(base=10, numticks=30))
                axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())
        return fig, ax

    ours, ax = axes(True)
    theirs, ref = axes(False)
    ours.canvas.draw()  # type: ignore[attr-defined]
    theirs.canvas.draw()  # type: ignore[attr-defined]
    marks = _marks(ax)
    assert len(marks) == 2 and not ax.xaxis.get_minorticklocs().size and not ax.lines[1:]
    for mark, axis in ((marks[0], ref.xaxis), (marks[1], ref.yaxis)):
        lo, hi = sorted(axis.get_view_interval())
        want = [t for t in axis.get_minorticklocs() if lo <= t <= hi]
        np.testing.assert_allclose(sorted(mark.places()), want)
    if limits == (0.01, 100.0):
        assert len(marks[0].places()) == 32  # 2..9 in each of 4 decades
    side = ax.secondary_xaxis("top")
    log_axis(side.xaxis, "")
    assert not _marks(side)


def _marks(ax: matplotlib.axes.Axes) -> list[object]:
    return [a for a in ax.get_children() if type(a).__name__ == "MinorMarks"]


def test_minor_marks_give_way_to_matplotlib_ticks() -> None:
    # an axis shared with another keeps matplotlib's ticks; one whose scale is set again
    # after log_axis, or whose axes are switched off, draws no marks
    from sparsroof.plot.style import log_axis

    fig = new_figure((4.0, 3.0), dpi=100)
    left, right = fig.subplots(1, 2, sharey=True)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(0.01, 100)
        ax.set_ylim(0.01, 100)
        log_axis(ax.xaxis, "")
        log_axis(ax.yaxis, "")
    assert [len(_marks(ax)) for ax in (left, right)] == [1, 1]  # x only: y is shared
    left.set_xscale("linear")
    left.set_xlim(1, 100)
    right.set_axis_off()
    fig.canvas.draw()  # type: ignore[attr-defined]
    for ax in (left, right):
        assert [m.places().size for m in _marks(ax)] == [0]  # type: ignore[attr-defined]
    assert left.xaxis.get_minorticklocs().size == 0  # linear: no minor ticks by default
    assert left.yaxis.get_minorticklocs().size > 0  # matplotlib's own, shared


def test_the_import_ahead_is_waited_for() -> None:
    # in a fresh process, drawing waits for the second thread's import: two threads
    # importing matplotlib's modules at once can meet one half imported (a spy of a
    # small file failed so, now and then)
    code = ("import sys\n"
            "from sparsroof.plot.style import import_ahead\n"
            "wait = import_ahead()\n"
            "wait()\n"
            "print('matplotlib.backends.backend_agg' in sys.modules)\n")
    done = fresh_python(code, check=True)
    assert done.stdout.strip() == "True" and not done.stderr


def test_an_opaque_png_is_rgb_and_a_transparent_one_rgba(tmp_path: Path) -> None:
    # an opaque figure loses nothing without its alpha channel (a quarter of the bytes
    # to compress); a figure that lets the page show through keeps it
    from PIL import Image

    opaque = save(_figure(), tmp_path / "opaque.png")
    clear = _figure()
    clear.patch.set_alpha(0.0)
    for ax in clear.axes:
        ax.patch.set_alpha(0.0)
    seen = save(clear, tmp_path / "clear.png")
    with Image.open(opaque) as a, Image.open(seen) as b:
        assert (a.mode, b.mode) == ("RGB", "RGBA")
        assert a.info["Software"] == "sparsroof" and round(a.info["dpi"][0]) == 100
        assert np.asarray(b)[0, 0, 3] == 0  # the corner lets the page through
