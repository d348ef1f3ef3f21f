"""The structure-only read of a plain coordinate file: what an analysis needs, read at
the speed of the bytes.

A structure analysis needs every entry's coordinates, how many stored values are zero
(the numeric nonzeros) and a strided sample of at most :data:`VALUE_SAMPLE` values (the
value features), not every value as a double. :func:`read_structure` reads exactly that
through the C pass of ``_native.c``: two threads read the two halves of the body side by
side, each line checked against a strict grammar, no array of values made and the file
read once (the parser's own read is preceded by a scan of the whole file for NUL bytes).
Each thread also counts the entries of every row (:class:`RowCounts`), which spares the
structure passes a count of their own. A symmetric file is expanded as the full parser
expands it, and its value sample, which reaches into the mirrored entries, is taken in a
second pass that converts only the sampled lines.

The pass reads only the plain lines every writer of the format produces. On anything
else it gives up and returns None, and the caller reads the file with the full parser,
which reads it or refuses it with its message: a file that reads here reads there to the
same coordinates, zero count and sample (a test compares the two on every file of
``data/``, the corpus and mutated lines).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

import numpy as np

from ..passes.arrays import compiled, distinct, two_threads
from .limits import INDEX32_MAX
from .mmheader import MMHeader

__all__ = ["VALUE_SAMPLE", "Read", "RowCounts", "ValueSummary", "read_structure", "sample_step"]

#: most values a strided sample of a matrix's values holds
VALUE_SAMPLE = 1 << 16
_VERSION = 4
_KINDS = {"pattern": 0, "real": 1, "integer": 2}
#: below this many bytes of body one thread reads it all
_SPLIT = 4 << 20
#: the share of the body the calling thread reads: the other first counts its lines
_FIRST_SHARE = 0.52


@dataclass(frozen=True, eq=False)
class ValueSummary:
    """What the value features read of a matrix's values: how many are not zero and
    every :func:`sample_step`-th value in file order."""

    nonzeros: int
    sample: np.ndarray


def sample_step(entries: int) -> int:
    """The stride of the value sample: every value up to :data:`VALUE_SAMPLE`, then
    every n-th.

    >>> sample_step(10), sample_step(200_000)
    (1, 3)
    """
    return max(1, entries // VALUE_SAMPLE)


@lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The C pass, or None where it is not built (or stale, or ``SPARSROOF_NO_NATIVE``)."""
    return compiled(f"{__package__}._native", _VERSION)


@dataclass(frozen=True, eq=False)
class RowCounts:
    """The entries per row of the coordinate array ``row``, counted as the file was read
    (in two parts where two threads read it: entries before ``split`` and from it), and
    whether each part came in row order, and in column order within each row. The
    structure passes take their row pointers from it instead of a pass of their own, for
    this very array only (``counted.row is row``)."""

    row: np.ndarray
    split: int
    first: np.ndarray
    second: np.ndarray | None
    in_order: tuple[bool, bool]
    sorted: tuple[bool, bool]


@dataclass(frozen=True, eq=False)
class Read:
    """What :func:`read_structure` read: the coordinates (a symmetric file's expanded),
    the value summary (None for a pattern) and the row counts (None where not counted)."""

    row: np.ndarray
    col: np.ndarray
    summary: ValueSummary | None
    row_counts: RowCounts | None


def read_structure(path: str, mm: MMHeader) -> Read | None:
    """What an analysis needs of the plain coordinate file ``path``, whose header
    :func:`~.mmheader.read_mm_header` read as ``mm``; None where the C pass is missing or
    the file holds anything but plain lines."""
    k = native()
    if k is None or mm.format != "coordinate" or mm.field not in _KINDS or not mm.canonical:
        return None
    n = mm.entries
    itype = np.int64 if max(mm.rows, mm.cols) > INDEX32_MAX else np.int32
    row, col = np.empty(n, itype), np.empty(n, itype)
    mirrored = mm.symmetry != "general"
    # a symmetric file's sample reaches into the mirrored entries: it is read afterwards
    step = n + 1 if mirrored else sample_step(n)
    vtype = np.int64 if mm.field == "integer" else np.float64
    sample = np.empty(-(-n // step), vtype)
    try:
        end = os.path.getsize(path)
    except OSError:
        return None
    if not _plain_head(path, mm.head_bytes):
        return None
    # the rows are counted as they are read (a symmetric file's expanded entries are
    # not the ones read; a hypersparse file's two counts would outweigh its entries)
    body = _Body(k, path, mm, mm.head_bytes, end, row, col, step, sample,
                 not mirrored and mm.rows <= n)
    scanned = body.scan()
    if scanned is None:
        return None
    if not mirrored:
        summary = None if mm.field == "pattern" else ValueSummary(n - scanned.zeros, sample)
        return Read(row, col, summary, scanned.row_counts)
    off = np.flatnonzero(row != col)
    full_row, full_col = np.concatenate((row, col[off])), np.concatenate((col, row[off]))
    if mm.field == "pattern":
        return Read(full_row, full_col, None, None)
    taken = _mirrored_sample(k, path, mm.head_bytes, end, _KINDS[mm.field], vtype, off, n,
                             -1 if mm.symmetry == "skew-symmetric" else 1)
    if taken is None:
        return None
    # a mirrored entry is zero where its file entry is (an off-diagonal one)
    nonzeros = (n - scanned.zeros) + (off.size - (scanned.zeros - scanned.diagonal))
    return Read(full_row, full_col, ValueSummary(nonzeros, taken), None)


@dataclass(frozen=True)
class _Scanned:
    """What the C pass counted over the whole body."""

    zeros: int
    diagonal: int  # zeros on the main diagonal
    row_counts: RowCounts | None


@dataclass(frozen=True, eq=False)
class _Body:
    """One read of the body of ``path`` (bytes ``start`` to ``end``) into the caller's
    arrays, by one thread or, past :data:`_SPLIT` bytes, two."""

    k: ModuleType
    path: str
    mm: MMHeader
    start: int
    end: int
    row: np.ndarray
    col: np.ndarray
    step: int
    sample: np.ndarray
    counted: bool

    def _tally(self) -> np.ndarray:
        return np.zeros(self.mm.rows if self.counted else 0, np.int64)

    def _part(self, lo: int, hi: int, first: int, counts: np.ndarray
              ) -> tuple[int, int, int, int, bool, bool]:
        return self.k.scan(self.path, lo, hi, _KINDS[self.mm.field], self.mm.rows,
                           self.mm.cols, self.row, self.col, first, self.step, self.sample,
                           counts)

    def scan(self) -> _Scanned | None:
        """The counts of the whole body, or None where the pass gave up."""
        n, counts = self.mm.entries, self._tally()
        middle = _split(self.path, self.start, self.end)
        if middle is None:
            lines, zeros, diagonal, _, order, srt = self._part(self.start, self.end, 0, counts)
            if lines != n:
                return None
            return _Scanned(zeros, diagonal, RowCounts(self.row, n, counts, None,
                                                       (order, True), (srt, True))
                            if self.counted else None)
        more_counts = self._tally()
        second: list[tuple[int, int, int, int, int, bool, bool]] = []

        def later() -> None:
            before = self.k.count_lines(self.path, self.start, middle)
            if 0 <= before <= n:
                second.append((before, *self._part(middle, self.end, before, more_counts)))

        helper = threading.Thread(target=later, name="sparsroof-scan", daemon=True)
        helper.start()
        try:  # a bad line in this half still waits for the other half's reader
            lines, zeros, diagonal, _, order, srt = self._part(self.start, middle, 0, counts)
        finally:
            helper.join()
        if not second:
            return None
        split, more, more_zeros, more_diagonal, _, order2, srt2 = second[0]
        if lines != split or more < 0 or lines + more != n:
            return None
        return _Scanned(zeros + more_zeros, diagonal + more_diagonal,
                        RowCounts(self.row, split, counts, more_counts, (order, order2),
                                  (srt, srt2)) if self.counted else None)


def _mirrored_sample(k: ModuleType, path: str, start: int, end: int, kind: int,
                     vtype: type, off: np.ndarray, n: int, sign: int) -> np.ndarray | None:
    """The value sample of a symmetric file expanded as the full parser expands it (the
    file's values, then each off-diagonal one mirrored, negated where skew-symmetric):
    the values of the lines it takes, read in a second pass over the body."""
    total = n + off.size
    at = np.arange(0, total, sample_step(total))
    lines = np.concatenate((at[at < n], off[at[at >= n] - n]))
    wanted = distinct(lines)
    values: np.ndarray = np.empty(wanted.size, vtype)
    if k.pick(path, start, end, kind, wanted, values) != wanted.size:
        return None
    taken = values[np.searchsorted(wanted, lines)]
    if sign < 0:
        taken[np.count_nonzero(at < n):] *= -1
    return taken


def _plain_head(path: str, size: int) -> bool:
    """Whether the first ``size`` bytes of ``path`` are a header every reader reads alike:
    the banner and comment lines, each starting with ``%``, then a size line of three
    numbers (spaces and tabs around them); no CR and no NUL byte."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(size)
    except OSError:
        return False
    lines = head.split(b"\n")
    return (len(head) == size and b"\r" not in head and b"\0" not in head
            and lines[-1] == b"" and all(line.startswith(b"%") for line in lines[:-2])
            and re.fullmatch(rb"[ \t]*[0-9]+[ \t]+[0-9]+[ \t]+[0-9]+[ \t]*", lines[-2])
            is not None)


def _split(path: str, start: int, end: int) -> int | None:
    """The byte just after the first newline past the calling thread's share of the
    body, or None for a body read by one thread."""
    if end - start < _SPLIT or not two_threads():
        return None
    at = start + int((end - start) * _FIRST_SHARE)
    try:
        with open(path, "rb") as handle:
            handle.seek(at)
            found = handle.read(1 << 16).find(b"\n")
    except OSError:
        return None
    return at + found + 1 if found >= 0 and at + found + 1 < end else None
