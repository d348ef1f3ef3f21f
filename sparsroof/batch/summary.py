"""Summaries of a result store: counts by class, bound and failure, and roof positions.

The *roof fraction* of a result row is attainable FLOP/s divided by the peak FLOP/s of
the compute unit it runs on (the compute roof): 1 means the kernel could run at the
compute peak, 0.01 that its speed of light is a hundredth of it, held back by memory
traffic or launch overhead. Per matrix and spec the summary keeps the row with the
highest fraction, i.e. the best case among the modelled widths, formats and reuse models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .store import Store

__all__ = ["UNCLASSIFIED", "MatrixPoint", "StoreSummary", "summarise_store", "store_points"]

UNCLASSIFIED = "unclassified"


@dataclass(frozen=True)
class MatrixPoint:
    """The best row of one matrix on one spec."""

    name: str
    path: str
    member: str
    label: str  # class, or "unclassified"
    spec: str
    kernel: str
    width: int
    storage: str
    model: str
    intensity: float  # useful FLOP per byte
    attainable_flops: float
    peak_flops: float
    bandwidth: float
    bound: str
    device: str = ""
    memory_level: str = ""  # of the roof that bounded the row
    unit: str = ""  # compute unit of that roof
    flops_useful: float = 0.0  # the row's work F
    launch_s: float = 0.0  # and its launch floor: F / launch_s is its launch ceiling

    @property
    def roof_fraction(self) -> float:
        """Attainable over peak FLOP/s.

        >>> p = MatrixPoint("a", "p", "", "x", "s", "spmv", 1, "csr", "compulsory", 0.1, 2e11,
        ...               1e13, 2e12, "memory")
        >>> p.roof_fraction
        0.02
        """
        return self.attainable_flops / self.peak_flops if self.peak_flops else 0.0

    @property
    def has_work(self) -> bool:
        """Whether the row has work to place on a roofline (a matrix without entries has
        none: no intensity, no rate)."""
        return self.intensity > 0 and self.attainable_flops > 0


@dataclass
class StoreSummary:
    matrices: int = 0
    failed: int = 0
    by_class: list[tuple[str, int]] = field(default_factory=list)
    by_bound: list[tuple[Any, ...]] = field(default_factory=list)
    by_failure: list[tuple[str, str, int]] = field(default_factory=list)
    furthest: list[MatrixPoint] = field(default_factory=list)
    closest: list[MatrixPoint] = field(default_factory=list)
    no_work: list[str] = field(default_factory=list)  # matrices not ranked: nothing to do


def store_points(store: Store) -> list[MatrixPoint]:
    """The best row (highest roof fraction) of every matrix on every spec in each run the
    store holds: a file run for SpMV and again for SpMM has a best row in each."""
    # SQLite fills the bare columns of a MAX() aggregate from the row holding the maximum
    rows = store.query(
        "SELECT m.name, m.path, m.member, COALESCE(m.class, ?), r.spec, r.kernel, r.width,"
        " r.storage, r.model, r.intensity, r.attainable_flops, r.peak_flops, r.bandwidth,"
        " r.bound, COALESCE(r.device, ''), COALESCE(json_extract(r.record, '$.memory_level'),"
        " ''), COALESCE(json_extract(r.record, '$.bound_unit'), ''),"
        " COALESCE(json_extract(r.record, '$.flops_useful'), 0),"
        " COALESCE(json_extract(r.record, '$.launch_s'), 0),"
        " MAX(r.attainable_flops / r.peak_flops) FROM results r"
        " JOIN matrices m ON m.id = r.matrix_id WHERE r.peak_flops > 0"
        " GROUP BY r.matrix_id, r.spec_hash", (UNCLASSIFIED,))
    return [MatrixPoint(*row[:-1]) for row in rows]


def summarise_store(store: Store, top: int = 5) -> StoreSummary:
    """Counts by class, bound and failure, and the ``top`` matrices furthest from and
    closest to the compute roof."""
    s = StoreSummary()
    s.matrices = store.query("SELECT COUNT(DISTINCT path || '::' || member) FROM matrices")[0][0]
    s.failed = store.query("SELECT COUNT(*) FROM failures")[0][0]
    s.by_class = [(str(r[0]), int(r[1])) for r in store.query(
        "SELECT COALESCE(class, ?), COUNT(DISTINCT path || '::' || member) FROM matrices"
        " GROUP BY 1 ORDER BY 2 DESC, 1", (UNCLASSIFIED,))]
    s.by_bound = store.query(
        "SELECT spec, kernel, width, storage, model, bound, COUNT(*) FROM results"
        " GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 7 DESC")
    s.by_failure = [(str(r[0]), str(r[1]), int(r[2])) for r in store.query(
        "SELECT kind, reason, COUNT(*) FROM failures GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2")]
    every = store_points(store)
    # a matrix without entries has no work to put near or far from a roof: not ranked
    s.no_work = sorted({p.name for p in every if not p.has_work})
    points = sorted((p for p in every if p.has_work),
                    key=lambda p: (p.roof_fraction, p.name, p.spec))
    s.furthest = points[:top]
    s.closest = points[::-1][:top]
    return s
