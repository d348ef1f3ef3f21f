"""Bytes of A and executed work per storage format (A read once).

Each function returns a :class:`Storage`: stored value slots (padding and fill included),
the bytes a kernel must read (values, then indices and metadata), the entries it must
multiply, and the bytes the format occupies in memory. Formulas follow the design brief;
the ELL/HYB layouts and the HYB width rule are Bell & Garland's, as modelled in *A
Performance Modeling and Optimization Analysis Tool for SpMV on GPUs*; the block and N:M
formats are those of *The Sparsity Roofline*; SELL-C-sigma is Kreutzer et al.'s.

A bound is a promise for any correct kernel, so the bytes are what every kernel must read.
Formats whose padding a kernel can skip (ELL, HYB's ELL part, SELL) are charged their real
entries plus what marks the end of each row: a kernel that stops at a row's first padding
slot reads one index (or value) there, and never the rest of the padding. Their stored
footprint, padding included, is reported beside (``stored_bytes``). Formats whose fill is
part of the layout a kernel computes on (BSR blocks, DIA diagonals, N:M groups) read their
fill: a block, the part of a diagonal within the matrix, or a group's N slots is read
whole, the kernel cannot know which of its slots are zero without reading them. A DIA
diagonal is stored padded to m slots, but the slots that fall outside the matrix (column
j - i + offset out of range) are never read by a kernel that checks the column before it
loads (CUSP's, scipy's), so they are part of the stored footprint only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the first format that reads the row-length histogram
    import numpy as np

__all__ = [
    "Storage",
    "csr",
    "dcsr",
    "csc",
    "coo",
    "ell",
    "sell",
    "SELL_SLICE",
    "hyb_width",
    "hyb_least_width",
    "hyb",
    "bsr",
    "dia",
    "nm_slots",
    "nm",
    "dense",
]


#: rows per slice of the SELL-C-sigma footprint (a warp of 32 threads, one row each)
SELL_SLICE = 32


@dataclass(frozen=True)
class Storage:
    """A in one storage format: slots stored, bytes every kernel must read, entries every
    kernel must multiply, and (where padding makes it larger) the bytes stored."""

    values_stored: float
    value_bytes: float
    index_bytes: float
    executed_entries: float
    conforming: float | None = None  # N:M only: share of groups that fit the pattern
    detail: str = ""
    stored: float | None = None  # bytes in memory where they exceed the bytes read

    @property
    def bytes(self) -> float:
        """Bytes a kernel must read."""
        return self.value_bytes + self.index_bytes

    @property
    def stored_bytes(self) -> float:
        """Bytes the format occupies, padding included."""
        return self.bytes if self.stored is None else self.stored


def csr(nnz: int, m: int, s_v: int, s_i: int) -> Storage:
    """CSR: nnz·(s_v + s_i) + (m + 1)·s_i.

    >>> csr(5, 3, 8, 4).bytes   # 5 values + 5 columns + 4 row pointers
    76.0
    """
    return Storage(nnz, float(nnz * s_v), float(nnz * s_i + (m + 1) * s_i), nnz)


def dcsr(nnz: int, nonempty_rows: int, s_v: int, s_i: int) -> Storage:
    """DCSR (doubly compressed sparse rows; Buluç and Gilbert, *On the Representation and
    Multiplication of Hypersparse Matrices*): CSR of the non-empty rows only, with their
    row numbers: nnz·(s_v + s_i) + r·s_i + (r + 1)·s_i, r the non-empty rows. Fewer bytes
    than CSR where more than about half the rows are empty.

    >>> dcsr(5, 2, 8, 4).bytes   # 5 values + 5 columns + 2 row numbers + 3 pointers
    80.0
    """
    index = nnz * s_i + nonempty_rows * s_i + (nonempty_rows + 1) * s_i
    return Storage(nnz, float(nnz * s_v), float(index), nnz)


def csc(nnz: int, k: int, s_v: int, s_i: int) -> Storage:
    """CSC: nnz·(s_v + s_i) + (k + 1)·s_i.

    >>> csc(5, 7, 8, 4).bytes
    92.0
    """
    return Storage(nnz, float(nnz * s_v), float(nnz * s_i + (k + 1) * s_i), nnz)


def coo(nnz: int, s_v: int, s_i: int) -> Storage:
    """COO: nnz·(s_v + 2·s_i).

    >>> coo(5, 8, 4).bytes
    80.0
    """
    return Storage(nnz, float(nnz * s_v), float(2 * nnz * s_i), nnz)


def _lengths(row_length_counts: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.arange(row_length_counts.size)


def ell(row_length_counts: np.ndarray, m: int, s_v: int, s_i: int) -> Storage:
    """ELL of width K (the longest row). Stored: m·K·(s_v + s_i). Read by any kernel:
    nnz·(s_v + s_i) plus one end mark of min(s_v, s_i) bytes for each row shorter than K
    (the first padding slot, where a kernel leaves the row); only real entries multiply.

    >>> import numpy as np
    >>> counts = np.bincount([2, 1, 0])   # rows of 2, 1 and 0 entries: K = 2
    >>> e = ell(counts, 3, 8, 4)
    >>> e.bytes, e.stored_bytes, e.executed_entries   # 3·12 + 2 marks·4 ; 3·2·12
    (44.0, 72.0, 3)
    """
    import numpy as np

    width = row_length_counts.size - 1 if row_length_counts.size else 0
    nnz = int(np.dot(_lengths(row_length_counts), row_length_counts))
    short = m - int(row_length_counts[-1]) if width > 0 else 0
    slots = m * width
    return Storage(slots, float(nnz * s_v), float(nnz * s_i + short * min(s_v, s_i)), nnz,
                   detail=f"K={width}", stored=float(slots * (s_v + s_i)))


def sell(row_length_counts: np.ndarray, m: int, s_v: int, s_i: int,
         slice_rows: int = SELL_SLICE) -> Storage:
    """SELL-C-sigma (Kreutzer et al.; Ginkgo's SELL-P, PETSc's SELL): slices of C rows, each
    padded to its own longest row, rows sorted by length within windows of sigma rows.

    Read by any kernel: nnz·(s_v + s_i). The slice offsets (one index per C rows) and the
    end marks of short rows depend on C, sigma and the row order; they are not charged, so
    the bound holds for every C and sigma. Stored (reported): C = ``slice_rows`` with sigma
    = m (every row sorted, longest first): Σ over slices of C·(slice width)·(s_v + s_i)
    plus one offset per slice.

    >>> import numpy as np
    >>> counts = np.bincount([5, 1, 1, 1])   # one slice of 4 rows, padded to 5
    >>> s = sell(counts, 4, 8, 4, slice_rows=4)
    >>> s.bytes, s.stored_bytes     # 8·12 ; 4·5·12 + 2 offsets·4
    (96.0, 248.0)
    """
    import numpy as np

    nnz = int(np.dot(_lengths(row_length_counts), row_length_counts))
    # sorted longest first, the slice starting at row p is as wide as the p-th longest row
    rows_longer = np.cumsum(row_length_counts[::-1])  # rows with length >= L, L descending
    starts = np.arange(0, m, slice_rows)
    widths = (row_length_counts.size - 1) - np.searchsorted(rows_longer, starts, side="right")
    heights = np.minimum(slice_rows, m - starts)
    slots = int(np.dot(np.maximum(widths, 0), heights))
    stored = float(slots * (s_v + s_i) + (starts.size + 1) * s_i)
    return Storage(slots, float(nnz * s_v), float(nnz * s_i), nnz,
                   detail=f"C={slice_rows}", stored=stored)


def hyb_width(row_length_counts: np.ndarray, m: int) -> int:
    """Bell & Garland's ELL width for HYB: the largest K such that at least
    max(4096, m/3) rows have K or more entries (0 when no K qualifies).

    >>> import numpy as np
    >>> counts = np.bincount([1] * 5000 + [3] * 4500 + [9] * 10)   # row-length histogram
    >>> hyb_width(counts, 9510)    # 4510 rows have >= 3 entries, 10 have >= 4
    3
    """
    import numpy as np

    if row_length_counts.size <= 1:
        return 0
    rows_at_least = np.cumsum(row_length_counts[::-1])[::-1]  # rows_at_least[K]
    qualifying = np.flatnonzero(rows_at_least[1:] >= max(4096, m / 3))
    return int(qualifying[-1] + 1) if qualifying.size else 0


def _hyb_split(row_length_counts: np.ndarray, m: int, widths: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entries in the ELL part, rows shorter than the width, entries beyond it) for each
    ELL width in ``widths``."""
    import numpy as np

    rows_at_least = np.cumsum(row_length_counts[::-1])[::-1]  # rows with >= L entries
    in_ell = np.concatenate([[0], np.cumsum(rows_at_least[1:])])  # Σ min(length, K)
    nnz = int(in_ell[-1])
    capped = np.minimum(widths, row_length_counts.size - 1)
    short = m - np.where(widths < rows_at_least.size, rows_at_least[capped], 0)
    short = np.where(widths == 0, 0, short)
    return in_ell[capped], short, nnz - in_ell[capped]


def hyb_least_width(row_length_counts: np.ndarray, m: int, s_v: int, s_i: int) -> int:
    """The ELL width K whose HYB split any kernel must read the fewest bytes of: the ELL
    part's entries at s_v + s_i and an end mark per row shorter than K, the entries beyond
    K as COO (s_v + 2·s_i each). A HYB split by any other rule (a library's own heuristic)
    reads at least these bytes.

    >>> import numpy as np
    >>> counts = np.bincount([1] * 5000 + [3] * 4500 + [9] * 10)
    >>> hyb_least_width(counts, 9510, 8, 4)   # 3: every entry in ELL but 10·6 in COO
    3
    """
    import numpy as np

    if row_length_counts.size <= 1:
        return 0
    widths = np.arange(row_length_counts.size)
    in_ell, short, beyond = _hyb_split(row_length_counts, m, widths)
    cost = in_ell * (s_v + s_i) + short * min(s_v, s_i) + beyond * (s_v + 2 * s_i)
    return int(np.argmin(cost))


def hyb(row_length_counts: np.ndarray, m: int, s_v: int, s_i: int,
        width: int | None = None) -> Storage:
    """HYB: ELL of width K_h plus COO for the entries of each row beyond K_h (Bell &
    Garland's width unless ``width`` is given). The ELL part is charged as :func:`ell`
    charges it (real entries and an end mark per short row), the COO part whole.

    >>> import numpy as np
    >>> counts = np.bincount([1] * 5000 + [3] * 4500 + [9] * 10)
    >>> s = hyb(counts, 9510, 8, 4)
    >>> s.values_stored == 9510 * 3 + 10 * 6    # ELL slots + overflow entries
    True
    >>> s.bytes == (5000 + 4510 * 3) * 12 + 5000 * 4 + 10 * 6 * 16   # entries, marks, COO
    True
    """
    import numpy as np

    width = hyb_width(row_length_counts, m) if width is None else width
    in_ell, short, beyond = (int(v[0]) for v in
                             _hyb_split(row_length_counts, m, np.array([width])))
    slots = m * width
    coo_part = coo(beyond, s_v, s_i)
    return Storage(
        slots + beyond,
        float(in_ell * s_v) + coo_part.value_bytes,
        float(in_ell * s_i + short * min(s_v, s_i)) + coo_part.index_bytes,
        in_ell + beyond,
        detail=f"K={width}, COO {beyond}",
        stored=float(slots * (s_v + s_i)) + coo_part.bytes,
    )


def bsr(n_blocks: int, m: int, b: int, s_v: int, s_i: int) -> Storage:
    """BSR with b x b blocks: n_blocks·b²·s_v + n_blocks·s_i + (ceil(m/b) + 1)·s_i.
    Every stored block is dense: its explicit zeros are stored and multiplied.

    >>> bsr(n_blocks=2, m=4, b=2, s_v=8, s_i=4).bytes   # 2·4·8 + 2·4 + 3·4
    84.0
    """
    slots = n_blocks * b * b
    index = n_blocks * s_i + (math.ceil(m / b) + 1) * s_i
    return Storage(slots, float(slots * s_v), float(index), slots, detail=f"{b}x{b}")


def dia(n_diagonals: int, cells: int, m: int, s_v: int, s_i: int) -> Storage:
    """DIA: each stored diagonal padded to m slots (stored: n_diags·m·s_v + n_diags·s_i);
    read and multiplied: the ``cells`` of the diagonals that lie within the matrix, whose
    zeros a kernel cannot skip, plus the offsets: cells·s_v + n_diags·s_i.

    >>> d = dia(3, 10, 4, 8, 4)   # a 4 x 4 tridiagonal: 4 + 3 + 3 cells in range
    >>> d.bytes, d.stored_bytes, d.executed_entries    # 10·8 + 3·4 ; 3·4·8 + 3·4
    (92.0, 108.0, 10)
    """
    slots = n_diagonals * m
    return Storage(slots, float(cells * s_v), float(n_diagonals * s_i), cells,
                   detail=f"{n_diagonals} diagonals",
                   stored=float(slots * s_v + n_diagonals * s_i))


def nm_slots(rows: int, cols: int, n: int, m_group: int) -> int:
    """Value slots of a rows x cols matrix stored as N:M: N per group of M consecutive
    columns of a row, the last (shorter) group holding min(N, its width), a group with
    fewer entries padded with zeros: rows·(N·floor(cols/M) + min(N, cols mod M)).

    >>> nm_slots(2, 10, 2, 4)    # per row 2 + 2 + min(2, 2)
    12
    """
    return rows * (n * (cols // m_group) + min(n, cols % m_group))


def nm(slots: int, n: int, m_group: int, conforming: float, s_v: int) -> Storage:
    """N:M structured: ``slots`` values (see :func:`nm_slots`: N per group of M, zeros
    where a group holds fewer entries) plus ceil(log2 M) bits of position metadata each;
    every slot is read and multiplied. Only a pattern whose every group of M holds at most
    N entries can be stored this way; ``conforming`` is the share of groups that do (1.0
    for a valid N:M matrix).

    >>> nm(slots=8, n=2, m_group=4, conforming=1.0, s_v=2).bytes   # 16 + 8·2 bits
    18.0
    """
    meta = slots * math.ceil(math.log2(m_group)) / 8 if m_group > 1 else 0.0
    return Storage(slots, float(slots * s_v), float(meta), slots, conforming=conforming,
                   detail=f"{n}:{m_group}")


def dense(m: int, k: int, s_v: int) -> Storage:
    """Dense: m·k·s_v, every cell stored and multiplied.

    >>> dense(3, 4, 8).bytes
    96.0
    """
    return Storage(m * k, float(m * k * s_v), 0.0, m * k)
