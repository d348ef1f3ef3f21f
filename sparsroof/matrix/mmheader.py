"""The Matrix Market banner, comments and size line, read with limits.

The header is read here rather than by the parser so that no file can make the reader
hold more than a bounded number of bytes before its body: a line may be at most
:data:`MAX_LINE` bytes, and banner plus comments at most :data:`MAX_HEADER` bytes (a
compressed file of nothing but comments would otherwise expand into gigabytes). Sizes
are checked as Python integers, so a number past 64 bits is an error, not an overflow.

The banner's words are matched without regard to case. A ``vector`` object of length n
is read as an n x 1 matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from ..errors import MatrixFileError
from ..units import binary

__all__ = ["MAX_LINE", "MAX_HEADER", "MMHeader", "read_mm_header", "size_numbers"]

MAX_LINE = 1 << 20
MAX_HEADER = 64 << 20
_INT64_MAX = 2**63 - 1

_OBJECTS = ("matrix", "vector")
_FORMATS = ("coordinate", "array")
_FIELDS = {"real": "real", "double": "real", "integer": "integer", "complex": "complex",
           "pattern": "pattern"}
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
#: numbers on the size line, by object and format
_SIZE_WORDS = {("matrix", "coordinate"): 3, ("matrix", "array"): 2,
               ("vector", "coordinate"): 2, ("vector", "array"): 1}


@dataclass(frozen=True)
class MMHeader:
    """What the header of a Matrix Market file declares."""

    object: str
    format: str
    field: str
    symmetry: str
    rows: int
    cols: int
    entries: int  # lines of data the body must hold (one triangle for symmetric files)
    head_bytes: int  # bytes of banner, comments and size line
    canonical: bool  # a banner the parser reads as written
    head_lines: int = 2  # lines of banner, comments and size line

    @property
    def head(self) -> bytes:
        """A banner and size line equivalent to the file's, without its comments."""
        sizes = {"matrix": (self.rows, self.cols), "vector": (self.rows,)}[self.object]
        if self.format == "coordinate":
            sizes = (*sizes, self.entries)
        banner = f"%%MatrixMarket {self.object} {self.format} {self.field} {self.symmetry}"
        return f"{banner}\n{' '.join(str(n) for n in sizes)}\n".encode("ascii")


def _line(stream: IO[bytes], label: str, lineno: int) -> bytes:
    line = stream.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise MatrixFileError(label, f"line {lineno} is longer than {binary(MAX_LINE)}: "
                                     f"not a Matrix Market file")
    if b"\0" in line:
        raise MatrixFileError(label, f"line {lineno} holds a NUL byte: not a text "
                                     f"Matrix Market file")
    return line


def _banner(line: bytes, label: str) -> tuple[str, str, str, str, bool]:
    words = line.decode("ascii", errors="replace").lower().split()
    if not words or words[0] != "%%matrixmarket":
        raise MatrixFileError(label, "missing banner: the first line must start with "
                                     "%%MatrixMarket")
    if len(words) != 5:
        raise MatrixFileError(label, "line 1: the banner needs four words after "
                                     "%%MatrixMarket (object, format, field, symmetry)")
    obj, fmt, field, symmetry = words[1:]
    for word, allowed, what in ((obj, _OBJECTS, "object"), (fmt, _FORMATS, "format"),
                                (field, tuple(_FIELDS), "field"),
                                (symmetry, _SYMMETRIES, "symmetry")):
        if word not in allowed:
            raise MatrixFileError(label, f"line 1: unknown {what} {word!r} (expected one "
                                         f"of {', '.join(allowed)})")
    if fmt == "array" and field == "pattern":
        raise MatrixFileError(label, "line 1: an array file cannot have the pattern field")
    if obj == "vector" and symmetry != "general":
        raise MatrixFileError(label, f"line 1: a vector cannot be {symmetry}")
    canonical = line.startswith(b"%%MatrixMarket") and field != "double"
    return obj, fmt, _FIELDS[field], symmetry, canonical


def _sizes(line: bytes, label: str, lineno: int, count: int) -> list[int]:
    words = line.decode("ascii", errors="replace").split()
    if len(words) != count or not all(w.isascii() and w.isdigit() for w in words):
        shown = line.decode("ascii", errors="replace").strip()[:60]
        raise MatrixFileError(label, f"line {lineno}: the size line must hold {count} "
                                     f"non-negative integers, found {shown!r}")
    numbers = size_numbers(words)
    if numbers is None:
        raise MatrixFileError(label, f"line {lineno}: a size above 2^63 - 1 cannot be read")
    return numbers


def size_numbers(words: list[str]) -> list[int] | None:
    """Words of digits as integers, None where one is above 2^63 - 1. Leading zeros are
    dropped before converting: Python refuses to convert more than 4,300 digits, and
    ``0000...0002`` is 2.

    >>> size_numbers(["0" * 5000 + "2", "3"]), size_numbers(["9" * 20])
    ([2, 3], None)
    """
    digits = [w.lstrip("0") or "0" for w in words]
    if any(len(d) > 19 for d in digits):
        return None
    numbers = [int(d) for d in digits]
    return None if max(numbers, default=0) > _INT64_MAX else numbers


def _shape(obj: str, fmt: str, symmetry: str, numbers: list[int]) -> tuple[int, int, int]:
    if obj == "vector":
        rows, cols = numbers[0], 1
    else:
        rows, cols = numbers[0], numbers[1]
    if fmt == "coordinate":
        return rows, cols, numbers[-1]
    n = rows
    values = {"general": rows * cols, "skew-symmetric": n * (n - 1) // 2}
    return rows, cols, values.get(symmetry, n * (n + 1) // 2)


def read_mm_header(stream: IO[bytes], label: str) -> MMHeader:
    """Read the header from a binary stream positioned at the start of the file."""
    first = stream.peek(2)[:3] if hasattr(stream, "peek") else b""
    for mark, what in ((b"\xef\xbb\xbf", "starts with a UTF-8 byte-order mark (bytes {}) "
                                          "before %%MatrixMarket"),
                       (b"\xff\xfe", "is UTF-16 text (it starts with bytes {})"),
                       (b"\xfe\xff", "is UTF-16 text (it starts with bytes {})")):
        if first.startswith(mark):  # a text editor's; the format is plain ASCII
            raise MatrixFileError(label, what.format(" ".join(f"{b:02X}" for b in mark))
                                  + ": save it as plain ASCII text")
    first = _line(stream, label, 1)
    obj, fmt, field, symmetry, canonical = _banner(first, label)
    consumed, lineno = len(first), 1
    while True:
        lineno += 1
        line = _line(stream, label, lineno)
        consumed += len(line)
        if not line:
            raise MatrixFileError(label, "the header ends before its size line")
        if consumed > MAX_HEADER:
            raise MatrixFileError(label, f"more than {binary(MAX_HEADER)} of comments "
                                         f"before the size line")
        stripped = line.strip()
        if stripped and not stripped.startswith(b"%"):
            break
    numbers = _sizes(line, label, lineno, _SIZE_WORDS[obj, fmt])
    rows, cols, entries = _shape(obj, fmt, symmetry, numbers)
    if symmetry != "general" and rows != cols:
        raise MatrixFileError(label, f"line {lineno}: a {symmetry} matrix must be square, "
                                     f"this one is {rows} x {cols}")
    return MMHeader(obj, fmt, field, symmetry, rows, cols, entries, consumed, canonical,
                    lineno)
