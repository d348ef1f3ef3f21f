"""The report's spy thumbnails."""

from __future__ import annotations

import numpy as np
import pytest

from sparsroof.matrix.mtx import Header, Matrix
from sparsroof.plot.thumbnail import PIXELS, spy_png


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (4, 6)])
def test_a_thumbnail_of_a_matrix_with_an_empty_side(shape: tuple[int, int]) -> None:
    """A side of length 0 spans one unit in the picture: no warning (the suite turns
    warnings into errors), a PNG of the thumbnail's size."""
    import io

    from matplotlib.image import imread

    rows, cols = shape
    empty = np.zeros(0, np.int64)
    m = Matrix("e", "e", rows, cols, empty, empty, None,
               Header("e", "coordinate", "pattern", "general", rows, cols, 0))
    png = spy_png(m)
    assert png.startswith(b"\x89PNG")
    assert imread(io.BytesIO(png)).shape[:2] == (PIXELS, PIXELS)
