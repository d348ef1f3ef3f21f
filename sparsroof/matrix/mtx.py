"""Reading sparse matrices: Matrix Market (.mtx, .mtx.gz) and DLMC/sputnik .smtx.

Matrix Market files are parsed by fast_matrix_market; symmetric, skew-symmetric and
hermitian files are expanded to the full matrix, because every kernel model reads the
whole matrix. ``.smtx`` is the CSR-pattern text format of the Deep Learning Matrix
Collection: a size line ``rows, cols, nnz`` (commas optional, ``%`` comments allowed),
a line of ``rows + 1`` row offsets and a line of ``nnz`` zero-based column indices.

Stored entries are what the file holds after expansion, explicit zeros included;
numeric nonzeros leave the explicit zeros out. Both are reported.
"""

from __future__ import annotations

import os
import stat
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO, Union

import numpy as np

from ..errors import MatrixFileError, OptionError
from ..units import binary
from . import limits
from .header import Header, name_of
from .mmbody import (
    body_budget,
    has_comment_lines,
    needs_count,
    parse_body,
    plain_file_is_safe,
    read_body,
)
from .mmheader import MAX_HEADER, MAX_LINE, MMHeader, read_mm_header, size_numbers
from .scan import RowCounts, ValueSummary, read_structure, sample_step

if TYPE_CHECKING:
    from scipy.sparse import coo_array, sparray, spmatrix

__all__ = ["Header", "Matrix", "MatrixLike", "as_matrix", "peek", "load", "estimate_memory",
           "check_header", "name_of", "MATRIX_SUFFIXES"]

MATRIX_SUFFIXES = (".mtx", ".mtx.gz", ".smtx")
_INT32_MAX = limits.INDEX32_MAX
_ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")


@dataclass(frozen=True, eq=False)
class Matrix:
    """A sparse matrix as coordinate arrays, expanded to its full pattern.

    ``values`` is None for pattern files (every stored entry counts as a nonzero) and
    for a file loaded without them (``load(path, values=False)``), whose ``summary``
    then holds what the value features read: the count of nonzero values and a sample.
    """

    name: str
    path: str
    rows: int
    cols: int
    row: np.ndarray
    col: np.ndarray
    values: np.ndarray | None
    header: Header
    summary: ValueSummary | None = None
    #: entries per row as the reader counted them (for ``row`` only: see RowCounts)
    row_counts: RowCounts | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns)."""
        return (self.rows, self.cols)

    @property
    def stored_entries(self) -> int:
        """Entries the coordinate arrays hold, explicit zeros included (a symmetric file's
        mirrored entries counted)."""
        return int(self.row.size)

    @cached_property
    def numeric_nonzeros(self) -> int:
        """Stored entries whose value is not zero (all of them for a pattern)."""
        if self.summary is not None:
            return self.summary.nonzeros
        if self.values is None:
            return self.stored_entries
        return int(np.count_nonzero(self.values))

    def value_sample(self) -> np.ndarray | None:
        """Every :func:`~.scan.sample_step`-th stored value in file order (at most
        :data:`~.scan.VALUE_SAMPLE` of them), or None for a pattern.

        >>> h = Header("v", "coordinate", "real", "general", 1, 3, 3)
        >>> Matrix("v", "", 1, 3, np.zeros(3, int), np.arange(3), np.array([1.0, 0, 2]),
        ...        h).value_sample().tolist()
        [1.0, 0.0, 2.0]
        """
        if self.summary is not None:
            return self.summary.sample
        if self.values is None:
            return None
        return self.values[:: sample_step(self.values.size)]

    @property
    def density(self) -> float:
        """Stored entries over rows x columns (0 for a matrix without cells)."""
        cells = self.rows * self.cols
        return self.stored_entries / cells if cells else 0.0

    def to_scipy(self) -> coo_array:
        """This matrix as a scipy COO array: its values, or ones for a pattern (or a
        matrix loaded without values); the way back from :meth:`from_scipy`, which reads
        a pattern's ones as a pattern again with ``pattern=True`` (read as values, ones
        weigh in the value features, and a pruned pattern may classify otherwise).

        >>> import scipy.sparse as sp
        >>> Matrix.from_scipy(sp.csr_array([[1.0, 0.0], [0.0, 2.0]])).to_scipy().toarray()
        array([[1., 0.],
               [0., 2.]])
        """
        import scipy.sparse as sp

        data = self.values if self.values is not None else np.ones(self.row.size)
        return sp.coo_array((data, (self.row, self.col)), shape=self.shape)

    @classmethod
    def from_scipy(cls, a: object, name: str = "matrix", *, pattern: bool = False) -> Matrix:
        """A :class:`Matrix` from a scipy sparse matrix or array (any format) or a dense
        2-D array. Duplicate entries are summed; explicit zeros stay stored entries, as
        in a file. ``pattern`` drops the values (every stored entry then counts as a
        nonzero).

        >>> import scipy.sparse as sp
        >>> m = Matrix.from_scipy(sp.csr_array([[1.0, 0.0], [0.0, 2.0]]), "two")
        >>> (m.name, m.shape, m.stored_entries, m.header.field)
        ('two', (2, 2), 2, 'real')
        """
        import scipy.sparse as sp

        try:
            coo = sp.coo_array(a)
        except (TypeError, ValueError) as err:
            raise MatrixFileError(name, f"not a matrix scipy can read: {err}") from None
        if coo.ndim != 2:
            raise MatrixFileError(name, f"a matrix has 2 dimensions, this has {coo.ndim}")
        coo.sum_duplicates()
        rows, cols = (int(n) for n in coo.shape)
        itype = np.int32 if max(rows, cols) <= _INT32_MAX else np.int64
        kind = coo.dtype.kind
        field = "pattern" if pattern else {"c": "complex", "i": "integer", "u": "integer",
                                           "b": "integer"}.get(kind, "real")
        header = Header(name, "coordinate", field, "general", rows, cols, int(coo.nnz))
        values = None if pattern else np.asarray(coo.data)
        return cls(name, "", rows, cols, coo.row.astype(itype), coo.col.astype(itype),
                   values, header)


def _a_path(path: object, reader: str) -> Path:
    """``path`` as a Path; anything else is named (a matrix in memory is analysed, not
    read: ``analyze`` and ``Matrix.from_scipy`` take one)."""
    if not isinstance(path, (str, os.PathLike)):
        raise MatrixFileError(f"a {type(path).__name__}", f"not a path: {reader} reads a "
                                                           "file (analyze and "
                                                           "Matrix.from_scipy take a matrix)")
    return Path(path)


def _check_memory_option(max_memory: object) -> None:
    """``max_memory``: None (the limits this process has) or a positive finite number of
    bytes."""
    from ..userfile.fields import FieldError, number

    if max_memory is None:
        return
    try:
        number(max_memory, "{opt:max_memory}", positive=True)
    except FieldError as err:
        raise OptionError(str(err)) from None


def _check_readable(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise MatrixFileError(path, "no such file") from None
    except OSError as err:
        raise MatrixFileError(path, f"cannot read: {err.strerror or err}") from None
    except ValueError:  # a NUL byte in the name
        raise MatrixFileError(path, "cannot read: the file name holds a NUL byte") from None
    if stat.S_ISDIR(mode):
        raise MatrixFileError(path, "is a directory, not a matrix file (to analyse every "
                                    "matrix in it, use 'sparsroof batch')")
    if not stat.S_ISREG(mode):
        raise MatrixFileError(path, "is not a regular file (a pipe or a device); save the "
                                    "matrix to a file first")
    if path.name.lower().endswith(".zip"):
        raise MatrixFileError(path, "is a zip archive, which sparsroof does not read: unpack "
                                    "it (or pack it as .tar.gz for 'sparsroof batch')")
    if path.name.lower().endswith(_ARCHIVES):
        raise MatrixFileError(path, "is a tar archive; 'sparsroof batch' reads the matrices "
                                    "inside it (as the SuiteSparse collection packs them, "
                                    "Name/Name.mtx)")
    if not os.access(path, os.R_OK):
        raise MatrixFileError(path, "permission denied")


def _open_binary(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        import gzip  # here, not at import: most files are not compressed

        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _open_text(path: Path) -> TextIO:
    if path.name.endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", encoding="ascii", errors="replace")
    return open(path, encoding="ascii", errors="replace")


def _smtx_size_line(path: Path, handle: TextIO) -> tuple[int, int, int]:
    lineno, consumed = 0, 0
    while True:
        lineno += 1
        line = handle.readline(MAX_LINE + 1)
        consumed += len(line)
        if not line:
            raise MatrixFileError(path, "no .smtx size line")
        if len(line) > MAX_LINE or consumed > MAX_HEADER:
            raise MatrixFileError(path, f"line {lineno}: no .smtx size line in the first "
                                        f"{binary(MAX_HEADER)}")
        stripped = line.strip()
        if stripped and not stripped.startswith("%"):
            break
    parts = stripped.replace(",", " ").split()
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
        raise MatrixFileError(path, f"line {lineno}: expected the .smtx size line "
                                    f"'rows, cols, nnz' of non-negative integers, "
                                    f"found {stripped[:40]!r}")
    numbers = size_numbers(parts)
    if numbers is None:
        raise MatrixFileError(path, f"line {lineno}: a size above 2^63 - 1 cannot be read")
    rows, cols, nnz = numbers
    return rows, cols, nnz


def _header_of(label: str, mm: MMHeader) -> Header:
    return Header(label, mm.format, mm.field, mm.symmetry, mm.rows, mm.cols, mm.entries)


def _mm_header(path: Path) -> MMHeader:
    try:
        with _open_binary(path) as stream:
            return read_mm_header(stream, str(path))
    except (OSError, EOFError, zlib.error) as err:
        raise MatrixFileError(path, f"cannot read: {err}") from None


def peek(path: str | Path) -> Header:
    """Read only the banner and size line of a matrix file.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tiny.mtx"
    >>> banner = "%%MatrixMarket matrix coordinate real symmetric\\n"
    >>> _ = p.write_text(banner + "3 3 2\\n1 1 1.0\\n2 1 5.0\\n")
    >>> h = peek(p)
    >>> (h.rows, h.cols, h.entries, h.symmetry)
    (3, 3, 2, 'symmetric')
    """
    path = _a_path(path, "peek")
    _check_readable(path)
    if path.name.endswith(".smtx"):
        with _open_text(path) as handle:
            rows, cols, nnz = _smtx_size_line(path, handle)
        return Header(str(path), "smtx", "pattern", "general", rows, cols, nnz)
    return _header_of(str(path), _mm_header(path))


def estimate_memory(header: Header) -> int:
    """Bytes of memory a load and analysis of this file need at their peak (a planning
    estimate; see :func:`sparsroof.matrix.limits.estimate_memory`)."""
    return limits.estimate_memory(header.rows, header.cols, header.expanded_entries_max,
                                  _value_bytes(header))


def _value_bytes(header: Header) -> int:
    """Bytes a value of this file takes loaded: complex128 for a complex field."""
    return 16 if header.complex_values else 8


def check_header(header: Header, max_memory: float | None, label: str | None = None
                 ) -> None:
    """Raise :class:`MatrixFileError` when the matrix this header declares may not be
    loaded (see :func:`sparsroof.matrix.limits.check_load`)."""
    problem = limits.check_load(header.rows, header.cols, header.expanded_entries_max,
                                max_memory, _value_bytes(header))
    if problem is not None:
        if "{opt:max_memory}" not in problem:
            problem += " (a larger {opt:max_memory} overrides the limit)"
        raise MatrixFileError(label or header.path, f"too large to load: {problem}")


def _load_mm(path: Path, mm: MMHeader) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    label = str(path)
    gz = path.name.endswith(".gz")
    try:
        if not gz and plain_file_is_safe(path, label) and mm.canonical \
                and not needs_count(mm):
            try:
                return parse_body(label, mm, label)
            except MatrixFileError:
                if not has_comment_lines(path, mm.head_bytes):
                    raise  # else: read again below, without the comment lines
        with _open_binary(path) as stream:
            stream.seek(mm.head_bytes)
            return read_body(mm, stream, label, body_budget(mm) if gz else None)
    except (OSError, EOFError, zlib.error) as err:
        raise MatrixFileError(path, f"cannot read: {err}") from None


def _parse_ints(path: Path, text: str, expected: int, what: str) -> np.ndarray:
    try:
        arr = np.array(text.split(), dtype=np.int64)
    except (ValueError, OverflowError):
        raise MatrixFileError(path, f"{what} hold something that is not a 64-bit "
                                    f"integer") from None
    if arr.size != expected:
        raise MatrixFileError(path, f"expected {expected} {what}, found {arr.size}")
    return arr


def _load_smtx(path: Path, header: Header) -> tuple[np.ndarray, np.ndarray, None]:
    rows, cols, nnz = header.rows, header.cols, header.entries
    with _open_text(path) as handle:
        _smtx_size_line(path, handle)
        # a number takes at most 20 digits and a separator
        offsets_line = handle.readline(24 * (rows + 1) + MAX_LINE)
        columns_line = handle.readline(24 * nnz + MAX_LINE)
    offsets = _parse_ints(path, offsets_line, rows + 1, "row offsets")
    columns = _parse_ints(path, columns_line, nnz, "column indices")
    if offsets[0] != 0 or offsets[-1] != nnz or np.any(np.diff(offsets) < 0):
        raise MatrixFileError(
            path, f"row offsets must rise from 0 to nnz={nnz} without decreasing"
        )
    if nnz and (columns.min() < 0 or columns.max() >= cols):
        raise MatrixFileError(
            path, f"column index out of range: .smtx indices are 0-based and below {cols}"
        )
    itype = np.int32 if max(rows, cols) <= _INT32_MAX else np.int64
    row = np.repeat(np.arange(rows, dtype=itype), np.diff(offsets))
    return row, columns.astype(itype), None


def load(path: str | Path, *, max_memory: float | None = None, values: bool = True
         ) -> Matrix:
    """Read a matrix file into a :class:`Matrix`, expanding symmetric storage.

    Declared sizes are checked against the memory this process may use (or
    ``max_memory`` bytes) before anything is allocated. Raises
    :class:`MatrixFileError` naming the file and the problem. With ``values`` False, a
    plain coordinate file is read without an array of its values (see
    :mod:`sparsroof.matrix.scan`): the structure and value features measure the same,
    faster and in less memory; any other file loads with its values.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tiny.mtx"
    >>> banner = "%%MatrixMarket matrix coordinate real symmetric\\n"
    >>> _ = p.write_text(banner + "3 3 2\\n1 1 1.0\\n2 1 0.0\\n")
    >>> m = load(p)
    >>> (m.shape, m.stored_entries, m.numeric_nonzeros)
    ((3, 3), 3, 1)
    """
    path = _a_path(path, "load")
    _check_memory_option(max_memory)
    _check_readable(path)
    if path.name.endswith(".smtx"):
        header = peek(path)
        check_header(header, max_memory)
        row, col, stored = _load_smtx(path, header)
    else:
        mm = _mm_header(path)
        header = _header_of(str(path), mm)
        check_header(header, max_memory)
        found = None if values or path.name.endswith(".gz") else read_structure(str(path), mm)
        if found is not None:
            return Matrix(name_of(path), str(path), header.rows, header.cols, found.row,
                          found.col, None, header, found.summary, found.row_counts)
        row, col, stored = _load_mm(path, mm)
    return Matrix(name_of(path), str(path), header.rows, header.cols, row, col, stored, header)


#: what the Python API takes as a matrix: a path to a file, a scipy sparse matrix or
#: array, a dense 2-D array, or a Matrix
MatrixLike = Union["Matrix", str, os.PathLike[str], "sparray", "spmatrix", np.ndarray]


def as_matrix(matrix: MatrixLike) -> Matrix:
    """``matrix`` as a :class:`Matrix`: a path is loaded, anything else taken from scipy.

    >>> as_matrix([[0, 1], [1, 0]]).stored_entries
    2
    """
    if isinstance(matrix, Matrix):
        return matrix
    if isinstance(matrix, (str, os.PathLike)):
        return load(os.fspath(matrix))
    if isinstance(matrix, (list, tuple)) and matrix and all(
            isinstance(m, (str, os.PathLike, Matrix)) for m in matrix):
        raise OptionError(f"{len(matrix)} matrices given where one is taken: analyze each "
                          "(a list of paths is not a matrix)")
    return Matrix.from_scipy(matrix)
