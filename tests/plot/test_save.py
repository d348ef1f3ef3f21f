"""A PNG is drawn once and cropped to what was drawn: the same picture as matplotlib's
tight box, nothing cut, and the tight box itself where something lies far outside."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib.image import imread

from sparsroof.plot.style import new_figure, save


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


def test_the_import_ahead_is_waited_for() -> None:
    # in a fresh process, drawing waits for the second thread's import: two threads
    # importing matplotlib's modules at once can meet one half imported (a spy of a
    # small file failed so, now and then)
    import subprocess
    import sys

    code = ("import sys\n"
            "from sparsroof.plot.style import import_ahead\n"
            "wait = import_ahead()\n"
            "wait()\n"
            "print('matplotlib.backends.backend_agg' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "True" and not done.stderr
