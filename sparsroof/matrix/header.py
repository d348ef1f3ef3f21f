"""What a matrix file says about itself before its body is read, and the matrix's name.

Kept apart from the reader so that a structure read from the cache is reported without
loading numpy or the parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Header", "complex_field", "name_of"]


def complex_field(field: str) -> bool:
    """Whether a Matrix Market field holds complex values.

    >>> complex_field("complex"), complex_field("real")
    (True, False)
    """
    return field == "complex"


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
    def complex_values(self) -> bool:
        """Whether the values are complex (a hermitian file's field is complex too)."""
        return complex_field(self.field)

    @property
    def expanded_entries_max(self) -> int:
        """Upper bound on the entries after symmetric expansion."""
        if self.format == "array":
            return self.rows * self.cols
        return self.entries if self.symmetry == "general" else 2 * self.entries


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
