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

import gzip
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, Union

import numpy as np

from ..errors import MatrixFileError

if TYPE_CHECKING:
    from scipy.sparse import sparray, spmatrix

__all__ = ["Header", "Matrix", "MatrixLike", "as_matrix", "peek", "load", "estimate_memory",
           "name_of", "MATRIX_SUFFIXES"]

MATRIX_SUFFIXES = (".mtx", ".mtx.gz", ".smtx")
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Header:
    """What a file says about itself before its body is read."""

    path: str
    format: str  # "coordinate", "array" or "smtx"
    field: str  # real, integer, complex, pattern
    symmetry: str  # general, symmetric, skew-symmetric, hermitian
    rows: int
    cols: int
    entries: int  # stored in the file (one triangle for symmetric files)

    @property
    def expanded_entries_max(self) -> int:
        """Upper bound on the entries after symmetric expansion."""
        if self.format == "array":
            return self.rows * self.cols
        return self.entries if self.symmetry == "general" else 2 * self.entries


@dataclass(frozen=True, eq=False)
class Matrix:
    """A sparse matrix as coordinate arrays, expanded to its full pattern.

    ``values`` is None for pattern files (every stored entry counts as a nonzero).
    """

    name: str
    path: str
    rows: int
    cols: int
    row: np.ndarray
    col: np.ndarray
    values: np.ndarray | None
    header: Header

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def stored_entries(self) -> int:
        return int(self.row.size)

    @cached_property
    def numeric_nonzeros(self) -> int:
        if self.values is None:
            return self.stored_entries
        return int(np.count_nonzero(self.values))

    @property
    def density(self) -> float:
        cells = self.rows * self.cols
        return self.stored_entries / cells if cells else 0.0

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


def name_of(path: Path) -> str:
    """The matrix's name: the file name without its suffix.

    >>> name_of(Path("data/lap2d_64.mtx.gz"))
    'lap2d_64'
    """
    name = path.name
    for suffix in (".mtx.gz", ".smtx", ".mtx", ".gz"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise MatrixFileError(path, "no such file")
    if path.is_dir():
        raise MatrixFileError(path, "is a directory, not a matrix file")
    if not os.access(path, os.R_OK):
        raise MatrixFileError(path, "permission denied")


def _fmm_problem(err: Exception) -> str:
    """fast_matrix_market's message, lower-cased and with a hint where one helps."""
    text = str(err).strip().rstrip(".")
    text = text[0].lower() + text[1:] if text else "unreadable Matrix Market data"
    if "index out of bounds" in text:
        text += " (Matrix Market indices are 1-based and must lie within the size line)"
    if "missing banner" in text:
        text += " (the first line must start with %%MatrixMarket)"
    return text


def _open_text(path: Path) -> TextIO:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="ascii", errors="replace")
    return open(path, encoding="ascii", errors="replace")


def _smtx_size_line(path: Path, handle: TextIO) -> tuple[int, int, int]:
    for lineno, line in enumerate(handle, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        parts = stripped.replace(",", " ").split()
        try:
            rows, cols, nnz = (int(p) for p in parts)
        except ValueError:
            raise MatrixFileError(
                path, f"line {lineno}: expected the .smtx size line 'rows, cols, nnz', "
                f"found {stripped[:40]!r}"
            ) from None
        if min(rows, cols, nnz) < 0:
            raise MatrixFileError(path, f"line {lineno}: negative size in {stripped!r}")
        return rows, cols, nnz
    raise MatrixFileError(path, "empty file: no .smtx size line")


def _mm_header(path: Path) -> Header:
    import fast_matrix_market as fmm

    try:
        h = fmm.read_header(str(path))
    except (ValueError, RuntimeError) as err:
        raise MatrixFileError(path, _fmm_problem(err)) from None
    except (OSError, EOFError) as err:
        raise MatrixFileError(path, f"cannot read: {err}") from None
    if h.object != "matrix":
        raise MatrixFileError(
            path, f"is a Matrix Market {h.object}, not a matrix (banner object must be 'matrix')"
        )
    rows, cols = (int(x) for x in h.shape)
    entries = int(h.nnz) if h.format == "coordinate" else rows * cols
    return Header(str(path), h.format, h.field, h.symmetry, rows, cols, entries)


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
    path = Path(path)
    _check_readable(path)
    if path.name.endswith(".smtx"):
        with _open_text(path) as handle:
            rows, cols, nnz = _smtx_size_line(path, handle)
        return Header(str(path), "smtx", "pattern", "general", rows, cols, nnz)
    return _mm_header(path)


def estimate_memory(header: Header) -> int:
    """Bytes of memory a load of this file needs at its peak (a planning estimate).

    Coordinates are kept as two index arrays and one float64 value array; the reader
    briefly holds a second copy while expanding symmetric files.
    """
    index_bytes = 4 if max(header.rows, header.cols) <= _INT32_MAX else 8
    per_entry = 2 * index_bytes + 8
    return 2 * header.expanded_entries_max * per_entry + 8 * (header.rows + 1)


def _available_memory() -> int:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 2**62


def _check_fits(header: Header) -> None:
    need, have = estimate_memory(header), _available_memory()
    if need > have:
        raise MatrixFileError(
            header.path,
            f"too large to load: needs about {need / 2**30:.1f} GiB of memory, "
            f"{have / 2**30:.1f} GiB available",
        )


def _load_mm(path: Path, header: Header) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    import fast_matrix_market as fmm

    long = max(header.rows, header.cols) > _INT32_MAX
    try:
        if header.format == "array":
            dense = fmm.read_array(str(path), long_type=long)
            row, col = np.indices(dense.shape, dtype=np.int64 if long else np.int32)
            values = dense.ravel(order="C")
            return row.ravel(), col.ravel(), values
        (values, (row, col)), _ = fmm.read_coo(str(path), long_type=long)
    except (ValueError, RuntimeError) as err:
        raise MatrixFileError(path, _fmm_problem(err)) from None
    except (OSError, EOFError) as err:
        raise MatrixFileError(path, f"cannot read: {err}") from None
    return row, col, (None if header.field == "pattern" else values)


def _parse_ints(path: Path, text: str, expected: int, what: str) -> np.ndarray:
    try:
        arr = np.array(text.split(), dtype=np.int64)
    except ValueError:
        raise MatrixFileError(path, f"{what} contain something that is not an integer") from None
    if arr.size != expected:
        raise MatrixFileError(path, f"expected {expected} {what}, found {arr.size}")
    return arr


def _load_smtx(path: Path, header: Header) -> tuple[np.ndarray, np.ndarray, None]:
    with _open_text(path) as handle:
        _smtx_size_line(path, handle)
        offsets_line = handle.readline()
        columns_line = handle.readline()
    rows, cols, nnz = header.rows, header.cols, header.entries
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


def load(path: str | Path) -> Matrix:
    """Read a matrix file into a :class:`Matrix`, expanding symmetric storage.

    Raises :class:`MatrixFileError` naming the file and the problem.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tiny.mtx"
    >>> banner = "%%MatrixMarket matrix coordinate real symmetric\\n"
    >>> _ = p.write_text(banner + "3 3 2\\n1 1 1.0\\n2 1 0.0\\n")
    >>> m = load(p)
    >>> (m.shape, m.stored_entries, m.numeric_nonzeros)
    ((3, 3), 3, 1)
    """
    path = Path(path)
    header = peek(path)
    _check_fits(header)
    if header.format == "smtx":
        row, col, values = _load_smtx(path, header)
    else:
        row, col, values = _load_mm(path, header)
    return Matrix(name_of(path), str(path), header.rows, header.cols, row, col, values, header)


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
    return Matrix.from_scipy(matrix)
