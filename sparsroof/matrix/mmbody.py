"""The body of a Matrix Market file, handed to fast_matrix_market only in a form it
parses safely.

The parser is fast because it trusts its input, and some input makes it read outside
its buffer: a line with characters after its last number and no newline before the end
of the data (a last line ending in a space, a bare CR or an extra token), or a NUL byte
after a line's numbers; an array file with no rows makes it divide by zero. So:

- a plain file goes to the parser as it is when one scan for NUL bytes (memchr over the
  file, a few percent of the parse) finds none and it ends with a newline;
- anything else (compressed files, archive members, a missing final newline, a banner
  the parser does not read) goes through :class:`CheckedBody`: the header is rewritten
  from what :mod:`.mmheader` read, NUL bytes are refused, every line ends with a newline,
  lines are at most :data:`~.mmheader.MAX_LINE` bytes, comment lines among the entries
  are dropped, and a compressed body may expand to at most
  :data:`BYTES_PER_LINE` bytes per declared line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import MatrixFileError
from ..units import binary
from .mmheader import MAX_LINE, MMHeader

__all__ = ["BYTES_PER_LINE", "CheckedBody", "body_budget", "count_lines", "fmm_problem",
           "has_comment_lines", "needs_count", "parse_body", "plain_file_is_safe",
           "read_body"]

#: most bytes a data line may take on average in a compressed file (two 20-digit
#: indices and two 25-digit values take about 100)
BYTES_PER_LINE = 256
_SLACK = 16 << 20
_BLOCK = 1 << 20


def body_budget(header: MMHeader) -> int:
    """Bytes the decompressed file may hold: its header and, for each declared data
    line, :data:`BYTES_PER_LINE` bytes, plus room for blank and comment lines."""
    return header.head_bytes + BYTES_PER_LINE * header.entries + _SLACK


def plain_file_is_safe(path: Path, label: str) -> bool:
    """Whether the parser may read ``path`` directly: it must end with a newline.

    Raises :class:`MatrixFileError` when the file holds a NUL byte anywhere. The scan
    reads through one small buffer (memchr speed, memory flat), not a mapping of the
    whole file, which would count against ``ulimit -v``.
    """
    buffer = bytearray(_BLOCK)
    offset, last = 0, -1
    with open(path, "rb", buffering=0) as handle:
        while n := handle.readinto(buffer):
            at = buffer.find(b"\0", 0, n)
            if at >= 0:
                raise MatrixFileError(label, f"holds a NUL byte at byte {offset + at}: "
                                             f"not a text Matrix Market file")
            offset, last = offset + n, buffer[n - 1]
    return last == ord("\n")


def has_comment_lines(path: Path, start: int) -> bool:
    """Whether a ``%`` appears in ``path`` after byte ``start`` (a comment among entries)."""
    buffer = bytearray(_BLOCK)
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        while n := handle.readinto(buffer):
            if buffer.find(b"%", 0, n) >= 0:
                return True
    return False


def _drop_comments(lines: bytes) -> bytes:
    return b"".join(line for line in lines.splitlines(keepends=True)
                    if not line.lstrip().startswith(b"%"))


class CheckedBody(io.RawIOBase):
    """A read-only stream: ``header.head``, then the body of ``stream`` (positioned just
    after the size line) in whole lines, each ending with a newline, checked as it goes.

    >>> body = io.BytesIO(b"1 1 1\\n% note\\n2 2 1 ")
    >>> h = MMHeader("matrix", "coordinate", "real", "general", 2, 2, 2, 30, True)
    >>> CheckedBody(h, body, "m.mtx").read()
    b'%%MatrixMarket matrix coordinate real general\\n2 2 2\\n1 1 1\\n2 2 1 \\n'
    """

    def __init__(self, header: MMHeader, stream: IO[bytes], label: str,
                 budget: int | None = None) -> None:
        self._out = memoryview(header.head)
        self._stream = stream
        self._label = label
        self._budget = budget
        self._carry = b""
        self._offset = header.head_bytes  # file offset of the next byte of stream
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._out and not self._done:
            self._out = memoryview(self.next_lines())
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def next_lines(self) -> bytes:
        """The next whole lines of the body (b"" when none is complete yet or at the end)."""
        raw = self._stream.read(_BLOCK)
        if not raw:
            self._done = True
            tail, self._carry = self._carry, b""
            return self._checked(tail + b"\n", self._offset - len(tail)) if tail else b""
        start = self._offset - len(self._carry)
        self._offset += len(raw)
        if self._budget is not None and self._offset > self._budget:
            raise MatrixFileError(self._label, f"expands to more than {self._budget:,} "
                                               f"bytes, more than its size line allows")
        data = self._carry + raw if self._carry else raw
        cut = data.rfind(b"\n") + 1
        self._carry = data[cut:]
        if len(self._carry) > MAX_LINE:
            raise MatrixFileError(self._label, f"a line after byte {start + cut} is longer "
                                               f"than {binary(MAX_LINE)}")
        return self._checked(data[:cut], start)

    def _checked(self, lines: bytes, start: int) -> bytes:
        at = lines.find(b"\0")
        if at >= 0:
            raise MatrixFileError(self._label, f"holds a NUL byte at byte {start + at}: "
                                               f"not a text Matrix Market file")
        return _drop_comments(lines) if b"%" in lines else lines

    def rest(self) -> bytes:
        """The rest of the body, checked, without the rewritten header."""
        parts = []
        while not self._done:
            parts.append(self.next_lines())
        return b"".join(parts)


def count_lines(lines: bytes) -> int:
    """Lines of ``lines`` (each ending in a newline) that hold more than white space.

    >>> count_lines(b"1\\n\\n  \\n2 3\\n")
    2
    """
    data = np.frombuffer(lines, np.uint8)
    ends = np.flatnonzero(data == 10)
    if ends.size == 0:
        return 0
    filled = np.concatenate(([0], np.cumsum(data > 32)))
    starts = np.concatenate(([0], ends[:-1] + 1))
    return int(np.count_nonzero(filled[ends] > filled[starts]))


def parse_body(source: str | IO[bytes], header: MMHeader, label: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Coordinates and values from ``source`` (a path the caller has checked, or a
    :class:`CheckedBody`); the parser's own errors become :class:`MatrixFileError`.

    The parser is fast_matrix_market; where that package is missing, scipy's ``mmread``
    reads the body (from scipy 1.12 on, the same parser, bundled in scipy), so a matrix
    still loads, a little slower (scipy builds its sparse matrix first)."""
    # the parser picks 64-bit indices itself; its long_type means long double values
    itype = np.int64 if max(header.rows, header.cols) > 2**31 - 1 else np.int32
    read_array, read_coo = _parser(header.entries)
    try:
        if header.format == "array":
            dense = read_array(source)
            shape = dense.shape
            row, col = (a.ravel() for a in np.indices(dense.shape, dtype=itype))
            values = dense.ravel(order="C")
        else:
            (values, (row, col)), shape = read_coo(source)
    except (ValueError, RuntimeError, OverflowError) as err:
        # a stream read through CheckedBody starts with the rewritten two-line header
        # (head): the file's comment lines before its size line go back into the count
        # (comment lines among the entries, rare, are dropped as read and not counted)
        shift = 0 if isinstance(source, str) else header.head_lines - 2
        raise MatrixFileError(label, fmm_problem(err, shift)) from None
    if tuple(shape) != (header.rows, header.cols):  # pragma: no cover - parser disagrees
        raise MatrixFileError(label, f"the parser read a {shape} matrix, the size line "
                                     f"says {header.rows} x {header.cols}")
    return row, col, None if header.field == "pattern" else values


#: bodies of fewer entries are parsed on one thread: the parser's parallel pipeline
#: gains nothing on them, and its threads share counters without a lock (a data race
#: reported to scipy, whose reader is the same code). A crash inside that reader, met
#: twice in seven runs of the test suite on small mutated files and never in a child
#: process of its own, is likely that race
_ONE_THREAD = 1 << 16


def _parser(entries: int) -> tuple[Callable[[Any], np.ndarray], Callable[[Any], Any]]:
    """(read_array, read_coo) of fast_matrix_market for a body of ``entries`` declared
    entries (on one thread under :data:`_ONE_THREAD`), or the same two through scipy.io."""
    try:
        import fast_matrix_market as fmm
    except ImportError:
        from scipy.io import mmread

        def read_array(source: Any) -> np.ndarray:
            return np.asarray(mmread(source))

        def read_coo(source: Any) -> Any:
            m = mmread(source)
            return (m.data, (m.row, m.col)), m.shape

        return read_array, read_coo
    threads = 1 if entries < _ONE_THREAD else None  # None: the parser's own choice
    return (lambda source: fmm.read_array(source, parallelism=threads),
            lambda source: fmm.read_coo(source, parallelism=threads))


def fmm_problem(err: Exception, shift: int = 0) -> str:
    """The parser's message, lower-cased, its line number moved on by ``shift`` (the
    lines the parser did not see before the one it names), and with a hint where one
    helps.

    >>> fmm_problem(ValueError("Line 2768: Invalid floating-point value."), 1)
    'line 2769: invalid floating-point value'
    >>> fmm_problem(ValueError("truncated file. Expected another 11 lines"))
    'truncated file: expected another 11 lines'
    """
    text = str(err).strip().rstrip(".") or "unreadable Matrix Market data"
    # one clause after another, in lower case as every message of the tool (a word in
    # capitals, an acronym, kept)
    text = re.sub(r"(^|: |\. )([A-Z])(?=[a-z])",
                  lambda m: (": " if m[1] == ". " else m[1]) + m[2].lower(), text)
    found = re.match(r"line (\d+):", text)
    if found and shift:
        text = f"line {int(found[1]) + shift}:{text[found.end():]}"
    if "index out of bounds" in text:
        text += " (Matrix Market indices are 1-based and must lie within the size line)"
    if "out of range" in text:
        text += " (a number does not fit in 64 bits)"
    return text


def needs_count(header: MMHeader) -> bool:
    """Array files the parser would fill with zeros when values are missing (every
    symmetric kind), and empty arrays, which it cannot read at all."""
    return header.format == "array" and (header.symmetry != "general"
                                         or header.rows * header.cols == 0)


def read_body(header: MMHeader, stream: IO[bytes], label: str, budget: int | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Coordinates and values of the body of ``stream`` (positioned after the size line)."""
    body = CheckedBody(header, stream, label, budget)
    if not needs_count(header):
        return parse_body(io.BufferedReader(body, _BLOCK), header, label)
    text = body.rest()
    found = count_lines(text)
    if found != header.entries:
        raise MatrixFileError(label, f"has {found:,} value lines, its {header.symmetry} "
                                     f"{header.rows} x {header.cols} size line needs "
                                     f"{header.entries:,}")
    if header.rows * header.cols == 0:
        itype = np.int32
        return np.zeros(0, itype), np.zeros(0, itype), np.zeros(0)
    return parse_body(io.BytesIO(header.head + text), header, label)
