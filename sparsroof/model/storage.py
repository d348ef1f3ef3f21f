"""Bytes of A and executed work per storage format (A read once).

Each function returns a :class:`Storage`: stored value slots (padding and fill included),
bytes of values, bytes of indices and metadata, and executed entries (stored slots the
kernel multiplies, padding included). Formulas follow the design brief; the ELL/HYB
layouts and the HYB width rule are Bell & Garland's, as modelled in *A Performance
Modeling and Optimization Analysis Tool for SpMV on GPUs*; the block and N:M formats
are those of *The Sparsity Roofline*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Storage",
    "csr",
    "csc",
    "coo",
    "ell",
    "hyb_width",
    "hyb_least_width",
    "hyb",
    "bsr",
    "dia",
    "nm",
    "dense",
]


@dataclass(frozen=True)
class Storage:
    """A in one storage format: slots stored, bytes, and entries the kernel executes."""

    values_stored: float
    value_bytes: float
    index_bytes: float
    executed_entries: float
    conforming: float | None = None  # N:M only: share of groups that fit the pattern
    detail: str = ""

    @property
    def bytes(self) -> float:
        return self.value_bytes + self.index_bytes


def csr(nnz: int, m: int, s_v: int, s_i: int) -> Storage:
    """CSR: nnz·(s_v + s_i) + (m + 1)·s_i.

    >>> csr(5, 3, 8, 4).bytes   # 5 values + 5 columns + 4 row pointers
    76.0
    """
    return Storage(nnz, float(nnz * s_v), float(nnz * s_i + (m + 1) * s_i), nnz)


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


def ell(m: int, width: int, s_v: int, s_i: int) -> Storage:
    """ELL of width K (the longest row): m·K·(s_v + s_i); padding is stored and executed.

    >>> ell(3, 2, 8, 4).bytes
    72.0
    """
    slots = m * width
    return Storage(slots, float(slots * s_v), float(slots * s_i), slots, detail=f"K={width}")


def hyb_width(row_length_counts: np.ndarray, m: int) -> int:
    """Bell & Garland's ELL width for HYB: the largest K such that at least
    max(4096, m/3) rows have K or more entries (0 when no K qualifies).

    >>> counts = np.bincount([1] * 5000 + [3] * 4500 + [9] * 10)   # row-length histogram
    >>> hyb_width(counts, 9510)    # 4510 rows have >= 3 entries, 10 have >= 4
    3
    """
    if row_length_counts.size <= 1:
        return 0
    rows_at_least = np.cumsum(row_length_counts[::-1])[::-1]  # rows_at_least[K]
    qualifying = np.flatnonzero(rows_at_least[1:] >= max(4096, m / 3))
    return int(qualifying[-1] + 1) if qualifying.size else 0


def hyb_least_width(row_length_counts: np.ndarray, m: int, s_v: int, s_i: int) -> int:
    """The ELL width K whose HYB split stores the fewest bytes: m·K ELL slots of s_v + s_i
    bytes plus the entries beyond K as COO (s_v + 2·s_i each). A HYB made by another rule
    (a library's own heuristic) moves at least these bytes.

    >>> counts = np.bincount([1] * 5000 + [3] * 4500 + [9] * 10)
    >>> hyb_least_width(counts, 9510, 8, 4)   # 1: pad 4,510 rows to 3 costs more than COO
    1
    """
    if row_length_counts.size <= 1:
        return 0
    rows_at_least = np.cumsum(row_length_counts[::-1])[::-1]  # rows with >= K entries
    # entries beyond width K: the sum over j > K of the rows with at least j entries
    beyond = np.concatenate([np.cumsum(rows_at_least[:0:-1])[::-1], [0]])
    widths = np.arange(row_length_counts.size)
    cost = m * widths * (s_v + s_i) + beyond * (s_v + 2 * s_i)
    return int(np.argmin(cost))


def hyb(row_length_counts: np.ndarray, m: int, s_v: int, s_i: int,
        width: int | None = None) -> Storage:
    """HYB: ELL of width K_h plus COO for the entries of each row beyond K_h (Bell &
    Garland's width unless ``width`` is given).

    >>> counts = np.bincount([1] * 5000 + [3] * 4500 + [9] * 10)
    >>> s = hyb(counts, 9510, 8, 4)
    >>> s.values_stored == 9510 * 3 + 10 * 6    # ELL slots + overflow entries
    True
    """
    width = hyb_width(row_length_counts, m) if width is None else width
    lengths = np.arange(row_length_counts.size)
    overflow = int(np.sum(np.maximum(lengths - width, 0) * row_length_counts))
    part_ell, part_coo = ell(m, width, s_v, s_i), coo(overflow, s_v, s_i)
    return Storage(
        part_ell.values_stored + overflow,
        part_ell.value_bytes + part_coo.value_bytes,
        part_ell.index_bytes + part_coo.index_bytes,
        part_ell.executed_entries + overflow,
        detail=f"K={width}, COO {overflow}",
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


def dia(n_diagonals: int, m: int, s_v: int, s_i: int) -> Storage:
    """DIA: n_diags·m·s_v + n_diags·s_i (each stored diagonal padded to m slots).

    >>> dia(3, 4, 8, 4).bytes
    108.0
    """
    slots = n_diagonals * m
    return Storage(slots, float(slots * s_v), float(n_diagonals * s_i), slots,
                   detail=f"{n_diagonals} diagonals")


def nm(nnz: int, n: int, m_group: int, conforming: float, s_v: int) -> Storage:
    """N:M structured: nnz·s_v plus ceil(log2 M) bits of position metadata per nonzero.
    Only a pattern whose every group of M holds at most N entries can be stored this way;
    ``conforming`` is the share of groups that do (1.0 for a valid N:M matrix).

    >>> nm(nnz=8, n=2, m_group=4, conforming=1.0, s_v=2).bytes   # 16 + 8·2 bits
    18.0
    """
    meta = nnz * math.ceil(math.log2(m_group)) / 8 if m_group > 1 else 0.0
    return Storage(nnz, float(nnz * s_v), float(meta), nnz, conforming=conforming,
                   detail=f"{n}:{m_group}")


def dense(m: int, k: int, s_v: int) -> Storage:
    """Dense: m·k·s_v, every cell stored and multiplied.

    >>> dense(3, 4, 8).bytes
    96.0
    """
    return Storage(m * k, float(m * k * s_v), 0.0, m * k)
