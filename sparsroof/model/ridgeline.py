"""Distributed SpMM with a 1-D row partition: per-rank compute, memory and network.

Follows *Ridgeline: A 2D Roofline Model for Distributed Systems*: the network is a third
resource beside compute and memory. Rows of A (and of C) are split into P contiguous
blocks balanced by stored entries; rows of B are owned like the rows of A when A is
square (else split evenly). Each rank receives the remote rows of B it references:

    B_N(r) = (distinct columns of rank r's entries owned elsewhere) · d · s_v
    B_M(r) = A bytes of its rows (CSR) + (distinct columns it reads) · d · s_v + rows · d · s_v
    F(r)   = 2 · nnz(r) · d,   t(r) = max(F/P_u, B_M/β, B_N/β_net)

SoL is the slowest rank's time; the plane's coordinates are the arithmetic intensity
F / B_M and the memory intensity B_M / B_N (totals over ranks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bound import sol_seconds

__all__ = ["RankBound", "partition_rows", "rank_columns", "distributed_bounds"]


@dataclass(frozen=True)
class RankBound:
    """Bound of SpMM on P ranks (seconds, bytes, FLOPs; totals over ranks)."""

    ranks: int
    width: int
    flops: float
    bytes_memory: float
    bytes_network: float
    compute_s: float
    memory_s: float
    network_s: float
    sol_s: float
    bound: str  # "compute", "memory", "network" or "launch" (of the slowest rank)
    slowest_rank: int
    imbalance: float  # max entries per rank / mean entries per rank
    peak_flops: float = 0.0  # the roofs it was bounded by
    bandwidth: float = 0.0  # main memory's (a rank's caches are credited in memory_s)
    network: float = 0.0
    launch_s: float = 0.0  # the slowest rank's launch floor, part of sol_s

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.bytes_memory if self.bytes_memory else 0.0

    @property
    def memory_intensity(self) -> float:
        return self.bytes_memory / self.bytes_network if self.bytes_network else float("inf")


def partition_rows(row_lengths: np.ndarray, ranks: int) -> np.ndarray:
    """Rank of each row: contiguous blocks balanced by entries (a row goes to the rank
    in whose share its first entry falls).

    >>> partition_rows(np.array([4, 0, 1, 1, 2]), 2).tolist()   # entries before: 0,4,4,5,6
    [0, 1, 1, 1, 1]
    """
    m = row_lengths.size
    nnz = int(row_lengths.sum())
    if nnz == 0:
        return (np.arange(m, dtype=np.int64) * ranks) // max(m, 1)
    before = np.cumsum(row_lengths) - row_lengths
    return np.minimum((before * ranks) // nnz, ranks - 1).astype(np.int64)


def _kernel() -> Any:
    from ..passes.compiled import njit

    @njit(cache=True)
    def rank_columns_kernel(entry_rank, col, col_owner, ranks, k):
        start = np.zeros(ranks + 1, np.int64)
        for e in range(entry_rank.size):
            start[entry_rank[e] + 1] += 1
        for r in range(ranks):
            start[r + 1] += start[r]
        fill = start[:-1].copy()
        order = np.empty(entry_rank.size, np.int64)
        for e in range(entry_rank.size):
            order[fill[entry_rank[e]]] = e
            fill[entry_rank[e]] += 1
        stamp = np.full(k, -1, np.int64)
        distinct = np.zeros(ranks, np.int64)
        remote = np.zeros(ranks, np.int64)
        for r in range(ranks):
            for i in range(start[r], start[r + 1]):
                c = col[order[i]]
                if stamp[c] != r:
                    stamp[c] = r
                    distinct[r] += 1
                    if col_owner[c] != r:
                        remote[r] += 1
        return distinct, remote

    return rank_columns_kernel


_KERNEL: Any = None


def rank_columns(row: np.ndarray, col: np.ndarray, row_rank: np.ndarray,
                 col_owner: np.ndarray, ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct columns, distinct remote columns) referenced by each rank's entries.

    >>> row, col = np.array([0, 0, 1, 2]), np.array([0, 2, 2, 1])
    >>> owner = np.array([0, 1, 1])            # rank 0 owns B row 0; rank 1 rows 1, 2
    >>> d, r = rank_columns(row, col, np.array([0, 0, 1]), owner, 2)  # rows 0, 1 on rank 0
    >>> d.tolist(), r.tolist()    # rank 0 reads columns {0, 2} (2 is remote); rank 1 {1}
    ([2, 1], [1, 0])
    """
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = _kernel()
    entry_rank = row_rank[row]
    distinct, remote = _KERNEL(entry_rank, col, col_owner, ranks, col_owner.size)
    return distinct, remote


def _each_value(time_of: Callable[[float], float], nbytes: np.ndarray) -> np.ndarray:
    """``time_of`` of each rank's bytes, called once per distinct count: ranks of equal
    bytes (a balanced partition's, or the empty ranks of more ranks than rows) share one
    call, so millions of ranks cost a sort, not millions of Python calls.

    >>> _each_value(lambda b: b / 2, np.array([4.0, 0.0, 4.0])).tolist()
    [2.0, 0.0, 2.0]
    """
    values, where = np.unique(nbytes, return_inverse=True)
    return np.array([time_of(float(b)) for b in values])[where.reshape(-1)]


def distributed_bounds(row: np.ndarray, col: np.ndarray, shape: tuple[int, int], *,
                       ranks: int, width: int, s_v: int, s_i: int, peak_flops: float,
                       bandwidth: float, network: float, flops_per_entry: float = 2.0,
                       memory_time: Callable[[float], float] | None = None,
                       launch_s: float = 0.0,
                       call_time: Callable[[float], float] | None = None) -> RankBound:
    """SoL of SpMM on ``ranks`` ranks with a row partition balanced by entries;
    ``flops_per_entry`` per stored entry per column of B (8 for complex values, whose
    ``s_v`` is then two reals). A rank's memory time is ``memory_time`` of its bytes (a
    device's hierarchy, its caches credited as the single-device bound credits them), or
    its bytes over ``bandwidth``; a rank with work to do takes at least ``launch_s`` (a
    device's launch floor) and ``call_time`` of the bytes it reads (a CPU call's least
    time, :func:`~sparsroof.model.bound.call_floor`)."""
    m, k = shape
    row_lengths = np.bincount(row, minlength=m)
    row_rank = partition_rows(row_lengths, ranks)
    col_owner = row_rank if k == m else (np.arange(k, dtype=np.int64) * ranks) // max(k, 1)
    distinct, remote = rank_columns(row, col, row_rank, col_owner, ranks)
    nnz_r = np.bincount(row_rank, weights=row_lengths, minlength=ranks)
    rows_r = np.bincount(row_rank, minlength=ranks)
    a_bytes = nnz_r * (s_v + s_i) + (rows_r + 1) * s_i  # CSR of each rank's rows
    mem_r = a_bytes + distinct * width * s_v + rows_r * width * s_v
    net_r = remote * float(width * s_v)
    flops_r = flops_per_entry * nnz_r * width
    mem_s = mem_r / bandwidth if memory_time is None else _each_value(memory_time, mem_r)
    calls = (np.zeros(ranks) if call_time is None else
             _each_value(call_time, a_bytes + distinct * width * s_v))
    # a rank without entries runs nothing
    launch_r = np.where(flops_r > 0, np.maximum(launch_s, calls), 0.0)
    times = np.maximum.reduce([flops_r / peak_flops, mem_s, net_r / network, launch_r])
    slow = int(np.argmax(times))
    compute_s, memory_s, network_s = (flops_r[slow] / peak_flops, float(mem_s[slow]),
                                      net_r[slow] / network)
    rank_launch = float(launch_r[slow])
    sol, name = sol_seconds(compute_s, memory_s, max(network_s, rank_launch))
    if name == "launch":
        name = "network" if network_s >= rank_launch else "launch"
    return RankBound(
        ranks=ranks, width=width, flops=float(flops_r.sum()), bytes_memory=float(mem_r.sum()),
        bytes_network=float(net_r.sum()), compute_s=compute_s, memory_s=memory_s,
        network_s=network_s, sol_s=sol, bound=name, slowest_rank=slow, launch_s=rank_launch,
        imbalance=float(nnz_r.max() / nnz_r.mean()) if nnz_r.sum() else 1.0,
        peak_flops=peak_flops, bandwidth=bandwidth, network=network,
    )
