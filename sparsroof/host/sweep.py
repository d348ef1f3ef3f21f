"""The benchmark matrices of a calibration: rows x entries per row x column pattern.

The paper *A Performance Modeling and Optimization Analysis Tool for SpMV on GPUs* sweeps
the rows and the entries per row; here each size also comes in five patterns, so that
every cost the fit charges (:mod:`sparsroof.host.core_cost`) varies across the sweep:

* ``band``: exactly ``per_row`` random columns near the diagonal (x stays cached);
* ``random``: uniformly random columns (x misses once it outgrows a cache);
* ``blocks``: dense 4 x 4 blocks at random block columns (misses shared by 4 columns);
* ``diagonals``: exact, widely spaced diagonals (prefetchable streams; DIA's case);
* ``skewed``: log-normal row lengths around the mean, random columns (mispredicted row
  exits; long rows).

Every matrix is made from a seed of its own name, so a sweep can be regenerated
exactly (the calibration times it in several rounds).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np

from ..matrix.mtx import Header, Matrix
from ..passes.arrays import distinct

__all__ = ["ROWS", "PER_ROW", "PATTERNS", "MAX_ENTRIES", "MAX_SLOTS", "plan", "generate"]

ROWS = (125, 1_000, 8_000, 64_000, 512_000)  # 125 rows: working sets in L1
PER_ROW = (2, 8, 32, 128, 512)
#: entries per row between those of PER_ROW, swept on the matrices of at most
#: BETWEEN_ROWS rows (cheap to time): most real matrices have 4 to 16 entries per row, and
#: the host ELL kernel's cost depends on whether a width is a multiple of 8, as every
#: width of PER_ROW but 2 is
BETWEEN = (5, 12)
BETWEEN_ROWS = 8_000
PATTERNS = ("band", "random", "blocks", "diagonals", "skewed")
MAX_ENTRIES = 4_200_000
#: a format is not timed on a matrix where its kernel would execute more slots than this
#: (padding and fill included: a 4 x 4 BSR of random columns stores 16 slots an entry),
#: so that no kernel costs the sweep much more than the largest CSR does
MAX_SLOTS = 2 * MAX_ENTRIES


def plan(rows: Iterable[int] = ROWS, per_row: Iterable[int] = PER_ROW,
         patterns: Iterable[str] = PATTERNS, max_entries: int = MAX_ENTRIES,
         between: Iterable[int] = BETWEEN) -> list[tuple[str, int, int]]:
    """(pattern, rows, entries per row) of the benchmark matrices, the largest skipped;
    ``between`` adds entries per row on the matrices of at most :data:`BETWEEN_ROWS` rows.

    >>> len(plan()), plan(rows=[1000], per_row=[8], patterns=["band"], between=[5])
    (120, [('band', 1000, 5), ('band', 1000, 8)])
    """
    return [(p, r, k) for p in patterns for r in rows
            for k in sorted({*per_row, *(b for b in between if r <= BETWEEN_ROWS)})
            if r * k <= max_entries and k < r]


def _distinct(rows: int, row: np.ndarray, col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In-range coordinates, duplicates removed, in row-major order (sort based)."""
    keep = (col >= 0) & (col < rows)
    key = distinct(row[keep] * rows + col[keep])
    return key // rows, key % rows


def coordinates(pattern: str, rows: int, per_row: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates of about ``per_row`` entries in each of ``rows`` rows (square)."""
    if pattern == "diagonals":
        offsets = (np.arange(per_row) - per_row // 2) * max(1, rows // (4 * per_row))
        row = np.repeat(np.arange(rows), per_row)
        return _distinct(rows, row, row + np.tile(offsets, rows))
    if pattern == "blocks":
        b = 4
        brow = np.repeat(np.arange(rows // b), max(1, per_row // b))
        bcol = rng.integers(0, rows // b, brow.size)
        r, c = np.meshgrid(np.arange(b), np.arange(b), indexing="ij")
        return _distinct(rows, (brow[:, None] * b + r.ravel()).ravel(),
                         (bcol[:, None] * b + c.ravel()).ravel())
    if pattern == "skewed":
        lengths = np.round(per_row * np.exp(rng.standard_normal(rows) - 0.5))
        row = np.repeat(np.arange(rows), np.clip(lengths, 1, rows).astype(np.int64))
        return _distinct(rows, row, rng.integers(0, rows, row.size))
    row = np.repeat(np.arange(rows), per_row)
    if pattern == "band":  # distinct offsets: gaps of 1 to 7, centred on the diagonal
        offsets = np.cumsum(rng.integers(1, 8, (rows, per_row)), axis=1)
        offsets -= offsets[:, -1:] // 2
        return _distinct(rows, row, row + offsets.ravel())
    if pattern == "random":
        return _distinct(rows, row, rng.integers(0, rows, row.size))
    raise ValueError(f"unknown sweep pattern {pattern!r} (choose from {', '.join(PATTERNS)})")


def generate(pattern: str, rows: int, per_row: int) -> Matrix:
    """The benchmark matrix ``PATTERN_ROWSxPER_ROW``, the same on every call.

    >>> m = generate("band", 1000, 8)
    >>> m.name, m.shape, m.stored_entries == generate("band", 1000, 8).stored_entries
    ('band_1000x8', (1000, 1000), True)
    """
    name = f"{pattern}_{rows}x{per_row}"
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    row, col = coordinates(pattern, rows, per_row, rng)
    header = Header(name, "coordinate", "real", "general", rows, rows, int(row.size))
    return Matrix(name, name, rows, rows, row.astype(np.int64), col.astype(np.int64),
                  rng.random(row.size), header)
