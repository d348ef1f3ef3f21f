"""Sparsity patterns of pruned weight matrices: unstructured, BxB blocks and N:M.

The patterns of *The Sparsity Roofline* (section 5): unstructured (global magnitude)
pruning, square blocks of 2 to 32, and N:M structure (at most N nonzeros in every M
consecutive weights of a row, along the reduction dimension k). An N:M pattern fixes its
own sparsity, 1 − N/M; unstructured and block patterns take the sparsity as a parameter.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..passes.arrays import distinct
from ..userfile import shown

__all__ = [
    "BLOCK_RANGE",
    "MAX_GROUP",
    "Pattern",
    "parse_pattern",
    "parse_patterns",
    "parse_sparsity",
    "entries",
    "blocks_kept",
    "nm_entries",
    "fits_2to4",
    "block_count",
    "nm_conforming",
]

#: smallest and largest block edge B of a BxB pattern
BLOCK_RANGE = (2, 32)
#: largest group M of an N:M pattern: hardware groups 4 or 8 weights, papers study up to
#: 1:32; the work of a study grows with M, so a mistyped 1:10000000 is refused at once
MAX_GROUP = 256
_BLOCK = re.compile(r"^(?:block|bsr)\s*(\d{1,9})(?:x(\d{1,9}))?$")
_NM = re.compile(r"^(\d{1,9})\s*:\s*(\d{1,9})$")


@dataclass(frozen=True)
class Pattern:
    """``kind`` is "unstructured", "block" (edge ``b``) or "nm" (``n`` of every ``m``)."""

    kind: str
    b: int = 0
    n: int = 0
    m: int = 0

    @property
    def label(self) -> str:
        """Canonical name: "unstructured", "block4", "2:4"."""
        if self.kind == "block":
            return f"block{self.b}"
        if self.kind == "nm":
            return f"{self.n}:{self.m}"
        return "unstructured"

    @property
    def fixed_sparsity(self) -> float | None:
        """The sparsity an N:M pattern imposes (1 − N/M); None for the others."""
        return 1.0 - self.n / self.m if self.kind == "nm" else None


def parse_pattern(text: str) -> Pattern:
    """Parse "unstructured", "block4" (or "block4x4", "bsr4") and "N:M".

    >>> parse_pattern("block8x8").label, parse_pattern("2:16").fixed_sparsity
    ('block8', 0.875)
    """
    t = text.strip().lower()
    if t in ("unstructured", "csr"):
        return Pattern("unstructured")
    block = _BLOCK.match(t)
    if block:
        b = int(block.group(1))
        if block.group(2) is not None and int(block.group(2)) != b:
            raise OptionError(f"block pattern {shown(text)}: only square blocks BxB are modelled")
        if not BLOCK_RANGE[0] <= b <= BLOCK_RANGE[1]:
            raise OptionError(f"block pattern {shown(text)}: B must lie in "
                              f"{BLOCK_RANGE[0]}..{BLOCK_RANGE[1]}")
        return Pattern("block", b=b)
    nm = _NM.match(t)
    if nm:
        n, m = int(nm.group(1)), int(nm.group(2))
        if not 0 < n < m:
            raise OptionError(f"N:M pattern {shown(text)}: needs 0 < N < M")
        if m > MAX_GROUP:
            raise OptionError(f"N:M pattern {shown(text)}: M may be at most {MAX_GROUP}")
        return Pattern("nm", n=n, m=m)
    raise OptionError(f"unknown sparsity pattern {shown(text)} (use unstructured, blockB with B "
                      f"in {BLOCK_RANGE[0]}..{BLOCK_RANGE[1]}, or N:M such as 2:4)")


def parse_patterns(values: list[str] | tuple[str, ...]) -> tuple[Pattern, ...]:
    """Comma lists of patterns, duplicates dropped.

    >>> [p.label for p in parse_patterns(["unstructured,block4", "2:4,block4"])]
    ['unstructured', 'block4', '2:4']
    """
    from ..errors import empty_item

    found = []
    for value in values:
        for part in value.split(","):
            if not part.strip():
                raise empty_item(value)
            found.append(parse_pattern(part))
    return tuple(dict.fromkeys(found))


def parse_sparsity(value: str | float) -> float:
    """A sparsity level as a fraction: percentages above 1 ("87.5", "87.5%"), fractions
    at most 1 ("0.875"). It must lie strictly between 0 and 1.

    >>> parse_sparsity("87.5%"), parse_sparsity(0.5), parse_sparsity("96.875")
    (0.875, 0.5, 0.96875)
    """
    text = str(value).strip().rstrip("%")
    try:
        x = float(text)
    except ValueError:
        raise OptionError(f"sparsity {shown(value)} is not a number") from None
    x = x / 100.0 if x > 1 else x
    if not 0.0 < x < 1.0 or not math.isfinite(x):
        raise OptionError(f"sparsity {shown(value)} must lie strictly between 0 and 100 %")
    return round(x, 12)


def entries(m: int, k: int, sparsity: float) -> int:
    """Nonzeros of an m x k weight matrix pruned to ``sparsity``: round((1 − s)·m·k).

    >>> entries(64, 147, 0.75)
    2352
    """
    return round((1.0 - sparsity) * m * k)


def blocks_kept(m: int, k: int, b: int, sparsity: float) -> int:
    """BxB blocks left by block pruning: round((1 − s)·ceil(m/B)·ceil(k/B)); edge blocks
    of a shape that B does not divide count as whole blocks.

    >>> blocks_kept(96, 48, 4, 0.75)    # 24·12 blocks, a quarter kept
    72
    """
    return round((1.0 - sparsity) * math.ceil(m / b) * math.ceil(k / b))


def nm_entries(m: int, k: int, n: int, group: int) -> int:
    """Nonzeros of an N:M matrix with every group full: its N:M slots (see
    :func:`sparsroof.model.storage.nm_slots`), m·(N·floor(k/M) + min(N, k mod M)).

    >>> nm_entries(2, 10, 2, 4)    # per row 2 + 2 + min(2, 2)
    12
    """
    from ..model.storage import nm_slots

    return nm_slots(m, k, n, group)


def fits_2to4(n: int, group: int) -> bool:
    """Whether every N:M matrix is also a 2:4 matrix: no aligned window of 4 along a row
    can hold more than 2 of its nonzeros (so 2:4 sparse tensor cores can run it).

    >>> [fits_2to4(*p) for p in ((1, 4), (2, 8), (2, 16), (1, 2), (3, 8), (2, 6))]
    [True, True, True, True, False, False]
    """
    period = math.lcm(4, group)
    for start in range(0, period, 4):
        window = range(start, start + 4)
        per_group: dict[int, int] = {}
        for position in window:
            per_group[position // group] = per_group.get(position // group, 0) + 1
        if sum(min(n, size) for size in per_group.values()) > 2:
            return False
    return True


def block_count(row: np.ndarray, col: np.ndarray, cols: int, b: int) -> int:
    """Distinct BxB blocks that hold an entry (vectorised over all entries).

    >>> block_count(np.array([0, 1, 5]), np.array([0, 1, 5]), 8, 4)
    2
    """
    if row.size == 0:
        return 0
    key = (row.astype(np.int64) // b) * math.ceil(cols / b) + col.astype(np.int64) // b
    return int(distinct(key).size)


def nm_conforming(row: np.ndarray, col: np.ndarray, rows: int, cols: int, n: int,
                  group: int) -> float:
    """Share of groups of M (along each row) that hold at most N entries.

    >>> nm_conforming(np.array([0, 0, 0]), np.array([0, 1, 2]), 1, 8, 2, 4)
    0.5
    """
    per_row = math.ceil(cols / group)
    total = rows * per_row
    if total == 0:
        return 1.0
    key = row.astype(np.int64) * per_row + col.astype(np.int64) // group
    counts = np.bincount(key, minlength=total)
    return float(np.count_nonzero(counts <= n) / total)
