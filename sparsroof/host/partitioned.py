"""A row partition run on this host: one kernel per block, each writing its rows of y.

The measured side of the format advisor (*A Performance Modeling and Optimization Analysis
Tool for SpMV on GPUs*, section 5.2, its Fig. 19: the partitioned SpMV against single
formats). Each block of rows [first, last) is stored in its format and multiplied by its
host kernel (scipy's product for CSR, CSC, COO, DIA and BSR; the compiled ELL and HYB of
:mod:`sparsroof.host.ell_kernels`), and the blocks run one after another in one timed call.
A single format is the partition of one block, run by the same code, so that the two are
timed alike (each block's product lands in its slice of one y, a copy of the block's rows
of y that a single format pays too). y is checked against scipy's CSR product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SparsroofError
from ..matrix.mtx import Matrix
from .bench import FILL_LIMIT, scipy_matrix
from .stopwatch import Timing, time_call

__all__ = ["PartitionRun", "run_partition", "measure_answers", "fill_reason", "TOLERANCE"]

#: largest |y - y_scipy| / max |y_scipy| a run may show (fp64 sums in another order)
TOLERANCE = 1e-10


@dataclass(frozen=True)
class PartitionRun:
    """One partition timed here: its blocks (first row, last row exclusive, storage), the
    timing of a whole product, and y's largest relative difference from scipy's."""

    blocks: tuple[tuple[int, int, str], ...]
    timing: Timing
    error: float


def fill_reason(m: Matrix, storage: str) -> str:
    """Why ``storage`` would store far more slots than ``m`` has entries ('' when not)."""
    if not m.stored_entries or m.rows == 0:
        return ""
    lengths = np.bincount(m.row, minlength=m.rows)
    if storage == "ell":
        slots = float(lengths.max()) * m.rows
    elif storage == "dia":
        slots = float(np.unique(m.col.astype(np.int64) - m.row).size) * m.rows
    elif storage.startswith("bsr"):
        b = int(storage[3:] or 4)
        keys = (m.row.astype(np.int64) // b) * (m.cols // b + 1) + m.col // b
        slots = float(np.unique(keys).size) * b * b
    else:
        return ""
    if slots > FILL_LIMIT * m.stored_entries:
        return f"{storage} would store {slots:,.0f} slots, over {FILL_LIMIT:g}x the entries"
    return ""


def _rows(csr: Any, first: int, last: int, name: str) -> Matrix:
    return Matrix.from_scipy(csr[first:last], name=name)


def _product(block: Matrix, storage: str, x: np.ndarray, dtype: str
             ) -> Callable[[], np.ndarray]:
    if storage in ("ell", "hyb"):
        from .ell_kernels import padded, spmv

        return spmv(padded(scipy_matrix(block, "csr", dtype), storage), x)
    a = scipy_matrix(block, storage, dtype)
    if a.shape[1] != x.size:  # BSR pads its columns to whole blocks
        xp = np.zeros(a.shape[1], x.dtype)
        xp[:x.size] = x
        return lambda: a @ xp
    return lambda: a @ x


def run_partition(m: Matrix, blocks: Sequence[tuple[int, int, str]], dtype: str = "fp64",
                  **timing: Any) -> PartitionRun:
    """Time the SpMV of ``m`` split into ``blocks`` (first row, last row exclusive,
    storage), one kernel per block; ``timing`` goes to :func:`time_call`. A y that differs
    from scipy's CSR product is an error."""
    csr = scipy_matrix(m, "csr", dtype)
    x = np.random.default_rng(1).random(m.cols).astype(csr.dtype)
    y = np.zeros(m.rows, dtype=csr.dtype)
    parts = []
    for first, last, storage in blocks:
        block = _rows(csr, first, last, m.name)
        parts.append((first, last, _product(block, storage, x, dtype)))

    def call() -> None:
        for first, last, product in parts:
            y[first:last] = product()[:last - first]  # BSR pads its rows to whole blocks

    call()
    expect = csr @ x
    scale = float(np.abs(expect).max(initial=0.0)) or 1.0
    error = float(np.abs(y - expect).max(initial=0.0)) / scale
    if error > TOLERANCE:
        raise SparsroofError(f"{m.name}: the partitioned product differs from scipy's by "
                             f"{error:.3g} of its largest entry")
    return PartitionRun(tuple(blocks), time_call(call, **timing), error)


def measure_answers(m: Matrix, blocks: Sequence[tuple[int, int, str]],
                    singles: Sequence[str], dtype: str = "fp64",
                    progress: Callable[[str], None] = lambda _: None, **timing: Any
                    ) -> dict[str, PartitionRun | str]:
    """The partition ``blocks`` (key "partition") and each format of ``singles`` for the
    whole matrix, timed alike by :func:`run_partition`; a format that would store far more
    slots than entries is not run, and its value is the reason. A partition that is one
    of the formats for the whole matrix is that format's run (the same object), not a
    second timing of the same kernel."""
    out: dict[str, PartitionRun | str] = {}
    whole = [storage for first, last, storage in blocks if (first, last) == (0, m.rows)]
    if not (whole and whole[0] in singles):
        progress(f"{m.name}: the partition, {len(blocks)} "
                 f"block{'s' if len(blocks) != 1 else ''}")
        out["partition"] = run_partition(m, blocks, dtype, **timing)
    for storage in singles:
        reason = fill_reason(m, storage)
        if reason:
            out[storage] = reason
            continue
        progress(f"{m.name}: {storage} for the whole matrix")
        out[storage] = run_partition(m, [(0, m.rows, storage)], dtype, **timing)
    if "partition" not in out:
        alone = out[whole[0]]
        out["partition"] = (alone if isinstance(alone, PartitionRun) else
                            run_partition(m, blocks, dtype, **timing))
    return {"partition": out.pop("partition"), **out}
