"""Bytes of B read by SpMM under each B-reuse model.

From *Sparsity-Aware Roofline Models for Sparse Matrix-Matrix Multiplication* (random,
diagonal, blocked and scale-free sparsity), written for any value size s_v and width d,
plus the compulsory bound of *The Sparsity Roofline* (with k_used, the non-empty columns
of A, in place of k) and a cache-aware model measured from the matrix itself.
"""

from __future__ import annotations

import math

__all__ = [
    "compulsory",
    "random",
    "blocked_columns",
    "blocked",
    "hub_entries",
    "scale_free",
    "cache_aware_height",
]


def compulsory(k_used: int, d: int, s_v: int) -> float:
    """Perfect cache: every row of B that A references is read once, k_used·d·s_v.
    This is also the banded/diagonal model (eq. 3 of the sparsity-aware SpMM paper reads
    B once: 8·n·d bytes for fp64).

    >>> compulsory(100, 4, 8)
    3200.0
    """
    return float(k_used * d * s_v)


def random(nnz: int, d: int, s_v: int) -> float:
    """No reuse: one row of B per stored entry, nnz·d·s_v (eq. 2, 8·d·nnz for fp64).

    >>> random(1000, 4, 8)
    32000.0
    """
    return float(nnz * d * s_v)


def blocked_columns(t: int, entries_per_block: float) -> float:
    """Expected occupied columns of a t x t block holding D random entries:
    z = t·(1 − e^(−D/t)).

    >>> round(blocked_columns(4, 4.0), 4)    # 4·(1 − e^-1)
    2.5285
    """
    return t * (1.0 - math.exp(-entries_per_block / t))


def blocked(n_blocks: int, t: int, nnz: int, d: int, s_v: int, reuse: float = 0.25) -> float:
    """Blocked sparsity: N·z·d·s_v·ρ, N non-empty t x t blocks, D = nnz/N,
    z = t·(1 − e^(−D/t)), ρ the share of B reads that reach memory (1/4 in the paper,
    from its measurements). For fp64 and ρ = 1/4 this is the paper's 2·d·N·z.

    >>> n, z = 10, blocked_columns(4, 4.0)
    >>> blocked(n, 4, 40, 2, 8) == 2 * 2 * n * z
    True
    """
    if n_blocks == 0:
        return 0.0
    z = blocked_columns(t, nnz / n_blocks)
    return n_blocks * z * d * s_v * reuse


def hub_entries(nnz: int, f: float, alpha: float) -> float:
    """Entries in the hub columns (the top fraction f by degree) of a power law with
    exponent α: nnz_hub = nnz·f^((α − 2)/(α − 1)) (eq. 5).

    >>> round(hub_entries(1_000_000, 0.001, 2.5))   # 0.001^(1/3) = 0.1
    100000
    """
    return nnz * f ** ((alpha - 2.0) / (alpha - 1.0))


def scale_free(nnz: int, nnz_hub: float, n_hub: float, d: int, s_v: int) -> float:
    """Scale-free: hub rows of B stay cached (read once each), the rest is random:
    d·s_v·((nnz − nnz_hub) + n_hub) (the B terms of eq. 6).

    >>> scale_free(1000, 100.0, 2.0, 4, 8)
    28864.0
    """
    return d * s_v * ((nnz - nnz_hub) + n_hub)


def cache_aware_height(panel_columns: dict[int, tuple[int, int]], d: int, s_v: int,
                       capacity: float) -> int:
    """Tallest row panel whose B working set (its distinct columns x d x s_v) fits the
    cache; 1 when even single rows overflow it (then B reuse is only within a row).

    ``panel_columns`` maps a panel height to (sum over panels of distinct columns,
    max over panels of distinct columns).

    >>> cache_aware_height({1: (50, 3), 2: (40, 5), 4: (30, 9)}, d=1, s_v=8, capacity=64)
    2
    """
    fitting = [h for h, (_, widest) in panel_columns.items() if widest * d * s_v <= capacity]
    return max(fitting) if fitting else 1
