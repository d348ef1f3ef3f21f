"""Spy thumbnails for the HTML report: small PNG images as ``data:`` URIs.

Each is the binned density image of :func:`sparsroof.plot.spy.density` (stored entries
per cell, logarithmic colour, empty cells white), without axes or captions, drawn at the
size the page shows it, with Pillow (:func:`sparsroof.plot.raster.thumbnail_png`). A
matrix is drawn only where its file can still be read: a file that is gone, has changed
size since the batch analysed it, or holds more than :data:`MAX_ENTRIES` entries gets a
note instead, and so does every matrix past the first :data:`MAX_THUMBNAILS` (each one
is loaded from its file).
"""

from __future__ import annotations

import base64
from pathlib import Path

from ..errors import MatrixFileError
from ..matrix.collection import Source, load_source, peek_source
from ..matrix.mtx import Matrix
from ..report.html_data import UNCLASSIFIED, MatrixRef, Page
from .raster import thumbnail_png

__all__ = ["PIXELS", "MAX_ENTRIES", "MAX_THUMBNAILS", "spy_png", "add_pictures"]

#: width and height of a thumbnail in pixels
PIXELS = 132
#: matrices with more stored entries than this are not loaded for a thumbnail
MAX_ENTRIES = 20_000_000
#: thumbnails drawn for one page at most
MAX_THUMBNAILS = 500


def spy_png(matrix: Matrix, pixels: int = PIXELS) -> bytes:
    """A ``pixels`` x ``pixels`` PNG of the matrix's density; the longer side fills it."""
    return thumbnail_png(matrix, pixels)


def _why_not(ref: MatrixRef, drawn: int) -> str | None:
    """Why ``ref`` gets no thumbnail, or None when its file can be read."""
    if drawn >= MAX_THUMBNAILS:
        return f"not drawn: only the first {MAX_THUMBNAILS} matrices are"
    path = Path(ref.path)
    if not ref.path or not path.is_file():
        return "file not found"
    if ref.size is not None and path.stat().st_size != ref.size:
        return "file changed since it was analysed"
    return None


def _load(ref: MatrixRef) -> Matrix | str:
    """The matrix of ``ref``, or why it cannot be drawn."""
    source = Source(ref.path, ref.name, 0, 0, ref.member)
    try:
        entries = peek_source(source).expanded_entries_max
        if entries > MAX_ENTRIES:
            return f"{entries:,} entries: too large to draw here"
        return load_source(source)
    except MatrixFileError as err:
        return f"cannot read: {err.problem}"


def add_pictures(page: Page) -> None:
    """Give each matrix of ``page`` whose file can be read its spy thumbnail and, where
    the source left it unclassified (compare documents), its class, both from the one
    loading of the file; the others get a note saying why not."""
    from ..analysis import classify

    drawn = 0
    for ref in page.matrices.values():
        why = _why_not(ref, drawn)
        matrix = _load(ref) if why is None else why
        if isinstance(matrix, str):
            page.spy_notes[ref.key] = matrix
            continue
        png = spy_png(matrix)
        page.thumbnails[ref.key] = "data:image/png;base64," + base64.b64encode(png).decode()
        drawn += 1
        if ref.label == UNCLASSIFIED and page.kind == "compare":
            page.set_class(ref.key, classify(matrix).label)
        if ref.rows is None:
            ref.rows, ref.cols, ref.nnz = matrix.rows, matrix.cols, matrix.stored_entries
    missing = [k for k in page.spy_notes if page.spy_notes[k].startswith(("file", "cannot"))]
    if missing:
        page.notes.append(f"{len(missing)} matrix file(s) could not be read for a spy "
                          f"thumbnail (gone, changed or unreadable); see 'Matrices'")
