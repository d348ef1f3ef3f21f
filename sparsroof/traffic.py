"""Memory traffic and arithmetic of SpMV/SpMM by storage format and B-reuse model.

Notation (the design brief, after *The Sparsity Roofline* and *Sparsity-Aware Roofline
Models for Sparse Matrix-Matrix Multiplication*): A is m x k with nnz stored entries,
C = A·B with B k x d dense; SpMV is d = 1. s_v bytes per value, s_i bytes per index.

Useful work is F = 2·nnz·d: one multiply and one add per stored entry per column of B.
(The Sparsity Roofline counts nnz·d, one fused multiply-add; we count both halves.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .structure import Structure

__all__ = [
    "VALUE_BYTES",
    "INDEX_BYTES",
    "KERNELS",
    "STORAGES",
    "MODELS",
    "Traffic",
    "useful_flops",
    "csr_bytes",
    "b_bytes_compulsory",
    "b_bytes_random",
    "c_bytes",
    "traffic",
]

#: bytes per stored value, by precision name
VALUE_BYTES: dict[str, int] = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2}
#: bytes per stored index, by index type
INDEX_BYTES: dict[str, int] = {"int32": 4, "int64": 8}
KERNELS = ("spmv", "spmm")


@dataclass(frozen=True)
class Traffic:
    """Bytes moved and FLOPs of one kernel on one matrix, in one format and reuse model."""

    kernel: str
    width: int
    storage: str
    model: str
    dtype: str
    index: str
    flops_useful: float
    flops_executed: float
    bytes_a: float
    bytes_b: float
    bytes_c: float

    @property
    def bytes_total(self) -> float:
        return self.bytes_a + self.bytes_b + self.bytes_c

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in useful FLOP per byte."""
        return self.flops_useful / self.bytes_total if self.bytes_total else 0.0


def useful_flops(nnz: int, d: int) -> float:
    """F = 2·nnz·d (multiply and add per stored entry per column of B).

    >>> useful_flops(10, 4)
    80.0
    """
    return 2.0 * nnz * d


def csr_bytes(nnz: int, m: int, s_v: int, s_i: int) -> float:
    """Bytes of A in CSR, read once: nnz·(s_v + s_i) + (m + 1)·s_i.

    >>> csr_bytes(nnz=5, m=3, s_v=8, s_i=4)  # 5·12 values+columns, 4·4 row pointers
    76.0
    """
    return float(nnz * (s_v + s_i) + (m + 1) * s_i)


def b_bytes_compulsory(k_used: int, d: int, s_v: int) -> float:
    """B read once, perfect cache: k_used·d·s_v, k_used = non-empty columns of A.

    *The Sparsity Roofline* writes k·d; empty columns of A are never read, so k_used is
    the honest count (with many empty columns, k·d overstates traffic).

    >>> b_bytes_compulsory(k_used=3, d=4, s_v=8)
    96.0
    """
    return float(k_used * d * s_v)


def b_bytes_random(nnz: int, d: int, s_v: int) -> float:
    """No reuse: a row of B is fetched for every stored entry, nnz·d·s_v.

    >>> b_bytes_random(nnz=5, d=1, s_v=8)
    40.0
    """
    return float(nnz * d * s_v)


def c_bytes(m: int, d: int, s_v: int) -> float:
    """C written once: m·d·s_v.

    >>> c_bytes(m=3, d=2, s_v=4)
    24.0
    """
    return float(m * d * s_v)


StorageModel = Callable[[Structure, int, int], tuple[float, float]]
ReuseModel = Callable[[Structure, int, int], float]


def _csr(s: Structure, s_v: int, s_i: int) -> tuple[float, float]:
    """(bytes of A, executed entries) for CSR: no padding, so executed = stored."""
    return csr_bytes(s.stored_entries, s.rows, s_v, s_i), float(s.stored_entries)


#: storage format -> (bytes of A, executed entries)
STORAGES: dict[str, StorageModel] = {"csr": _csr}

#: B-reuse model -> bytes of B
MODELS: dict[str, ReuseModel] = {
    "compulsory": lambda s, d, s_v: b_bytes_compulsory(s.nonempty_cols, d, s_v),
    "random": lambda s, d, s_v: b_bytes_random(s.stored_entries, d, s_v),
}


def traffic(
    s: Structure,
    *,
    kernel: str,
    width: int,
    storage: str,
    model: str,
    dtype: str,
    index: str,
) -> Traffic:
    """Traffic of one kernel configuration on a matrix of structure ``s``."""
    s_v, s_i = VALUE_BYTES[dtype], INDEX_BYTES[index]
    bytes_a, executed_entries = STORAGES[storage](s, s_v, s_i)
    return Traffic(
        kernel=kernel,
        width=width,
        storage=storage,
        model=model,
        dtype=dtype,
        index=index,
        flops_useful=useful_flops(s.stored_entries, width),
        flops_executed=2.0 * executed_entries * width,
        bytes_a=bytes_a,
        bytes_b=MODELS[model](s, width, s_v),
        bytes_c=c_bytes(s.rows, width, s_v),
    )
