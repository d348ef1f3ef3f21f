"""What one CPU core spends on a sparse matrix-vector product besides moving bytes.

A bound counts bytes and FLOPs; a measured CSR SpMV on one core also pays for three
things the structure decides, and which the calibration (:mod:`sparsroof.host.calibration`)
fits a cost to:

* **x-line misses per cache level.** The gathers of x run through the core's caches
  while the matrix streams past them (:mod:`sparsroof.host.cachesim`): scattered columns
  miss where near-diagonal ones hit, and a miss costs more the further down it goes.
* **Mispredicted row exits.** Every row ends a loop; where row lengths vary, the branch
  that leaves it is mispredicted. The count is that of a predictor that knows how many
  entries of the row it has done and how long the previous row was, taking the likelier
  outcome in each case; rows longer than it can count mispredict once when their length
  changes. A real predictor also learns a repeated sequence of exits outright while it
  fits in its tables, which :func:`measure_branch_memory` measures on this host.
* **Long dependency chains.** A row's sum is one chain of dependent additions: short
  rows overlap in the out-of-order window, but entries beyond a few dozen in one row run
  at the adder's latency, not its throughput (entries past 32 and past 128 are counted).
* **Additions into y through memory.** COO's product, and a HYB's COO part, add each
  entry into y[row] in memory: an addition waits for the one before it into the same
  entry (a store, then a load forwarded from it), so a run of additions into one row is
  a chain, which the out-of-order window overlaps with the runs around it as far as it
  reaches. How much it reaches depends on the order of the runs, not only on their
  lengths: a long row among short ones stalls the window where the same rows sorted by
  length would not (:func:`chain_stall` simulates it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

import numpy as np

__all__ = ["CoreCounts", "CHAINS", "core_counts", "traversal", "mispredicted_exits",
           "chain_entries", "measure_branch_memory", "branch_memory_once", "scatter_runs",
           "chain_stall", "chain_stalls", "STALL_WINDOWS", "STALL_LATENCIES"]

#: row lengths past which entries count as a long chain
CHAINS = (32, 128)
LINE_BYTES = 64
WAYS = 8
_COUNTED = 64  # the longest row whose iterations the modelled predictor tells apart
#: the windows (additions in flight) and chain latencies (in issue slots of one addition)
#: among which a calibration chooses, per format, the pair whose :func:`chain_stall`
#: best predicts its own runs held out of the fit
STALL_WINDOWS = (8, 10, 12, 14, 16)
STALL_LATENCIES = (4.0, 6.0, 8.0, 10.0, 12.0)


@dataclass(frozen=True)
class CoreCounts:
    """The structure's core costs for one traversal order (rows for CSR)."""

    misses: dict[str, float] = field(default_factory=dict)  # x-line misses per cache level
    mispredicts: float = 0.0
    chains: dict[int, float] = field(default_factory=dict)  # entries past each CHAINS length


def mispredicted_exits(lengths: np.ndarray) -> float:
    """Row-exit mispredictions of the predictor described in the module docstring.

    >>> mispredicted_exits(np.array([4, 4, 4, 4]))  # constant lengths: none
    0.0
    >>> mispredicted_exits(np.array([2, 3, 2, 3, 2, 3]))  # alternating: the previous length tells
    0.0
    >>> mispredicted_exits(np.array([2, 2, 3, 2, 2, 3, 3, 2]))
    3.0
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return 0.0
    capped = np.minimum(lengths, _COUNTED)
    prev = np.concatenate([[0], capped[:-1]])
    n = _COUNTED + 1
    table = np.bincount(prev * n + capped, minlength=n * n).reshape(n, n)
    # rows of each (previous length, length) case that go on past each iteration
    longer = np.cumsum(table[:, ::-1], axis=1)[:, ::-1]
    longer = np.concatenate([longer[:, 1:], np.zeros((n, 1), longer.dtype)], axis=1)
    counted = float(np.minimum(table, longer).sum())
    uncounted = np.count_nonzero((lengths[1:] >= _COUNTED) & (lengths[1:] != lengths[:-1]))
    return counted + float(uncounted + (lengths[0] >= _COUNTED))


def chain_entries(lengths: np.ndarray, past: int) -> float:
    """Entries beyond the first ``past`` of every row.

    >>> chain_entries(np.array([10, 40, 100]), 32)
    76.0
    """
    return float(np.maximum(np.asarray(lengths, dtype=np.int64) - past, 0).sum())


def scatter_runs(lengths: np.ndarray, width: int = 0) -> np.ndarray:
    """The runs of additions into one y entry that a COO loop makes, in the order it makes
    them: each row's entries beyond the first ``width`` (a HYB's ELL width; 0 for COO),
    rows in order, empty runs left out.

    >>> scatter_runs(np.array([3, 0, 5, 1]), width=2).tolist()
    [1, 3]
    """
    runs = np.maximum(np.asarray(lengths, dtype=np.int64) - width, 0)
    return runs[runs > 0]


def chain_stall(runs: np.ndarray, latency: float, window: int) -> float:
    """The time beyond one issue slot per addition that a core spends on ``runs``
    (:func:`scatter_runs`), in issue slots.

    The model: additions issue one per slot, in order; at most ``window`` are in flight
    (one retires only when it and every addition before it are done); an addition starts
    no sooner than ``latency`` slots after the one before it into the same y entry, and is
    done ``latency`` slots after it starts. Independent additions (runs of one) stall
    only at the end; a run of n costs about n x ``latency`` slots, less what the window
    overlaps with its neighbours; runs of unequal length stall more in a mixed order than
    sorted, as measured.

    >>> chain_stall(np.ones(1000, np.int64), 4.0, 8)  # the last one's latency, less its slot
    3.0
    >>> round(chain_stall(np.full(10, 100, np.int64), 4.0, 8) / 1000, 2)  # nearly 3 each
    2.75
    >>> mixed = np.tile([1, 1, 1, 1, 1, 1, 1, 20], 50)
    >>> chain_stall(mixed, 6.0, 12) > chain_stall(np.sort(mixed), 6.0, 12)
    True
    """
    return float(chain_stalls(runs, [(int(window), float(latency))])[0])


def chain_stalls(runs: np.ndarray, pairs: Sequence[tuple[int, float]]) -> np.ndarray:
    """:func:`chain_stall` of ``runs`` at each (window, latency) of ``pairs``, in one call
    (the pairs on as many threads as the compiled passes use).

    >>> chain_stalls(np.full(10, 100, np.int64), [(8, 4.0), (16, 4.0)]).round(0).tolist()
    [2748.0, 2460.0]
    """
    runs = np.ascontiguousarray(runs, dtype=np.int64)
    out = np.zeros(len(pairs))
    if runs.size and len(pairs):
        windows = np.array([w for w, _ in pairs], np.int64)
        latencies = np.array([lat for _, lat in pairs], np.float64)
        _stalls()(runs, windows, latencies, out)
    return out


@cache
def _stalls() -> Callable[..., None]:
    from ..passes.compiled import njit, prange

    @njit(cache=True, parallel=True)
    def stalls(runs: Any, windows: Any, latencies: Any, out: Any) -> None:  # pragma: no cover
        for p in prange(windows.size):
            window, latency = windows[p], latencies[p]
            retired = np.zeros(window)  # retire times of the last ``window`` additions
            last_retired = 0.0
            i = 0
            for run in runs:
                started = -1e300
                for _ in range(run):
                    t = float(i)
                    if i >= window:
                        t = max(t, retired[i % window])
                    t = max(t, started + latency)
                    started = t
                    last_retired = max(last_retired, t + latency)
                    retired[i % window] = last_retired
                    i += 1
            out[p] = last_retired - i

    return stalls


def traversal(row: np.ndarray, col: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Row pointers and the columns in row order, increasing within each row (the order a
    CSR kernel reads them; pass columns as rows for CSC), by the compiled counting sort of
    :mod:`sparsroof.structure._jit`; the inputs are never reordered."""

    from ..structure import _jit

    k: Any = _jit
    row, col = np.ascontiguousarray(row), np.ascontiguousarray(col)
    indptr, grouped, in_order = k.group_by_row(row, col, rows)
    return indptr, grouped if in_order else k.sort_rows(indptr, grouped, grouped is col)


def core_counts(indptr: np.ndarray, colidx: np.ndarray, caches: Sequence[tuple[str, float]],
                value_bytes: int = 8, index_bytes: int = 4) -> CoreCounts:
    """The counts of one traversal: ``indptr``/``colidx`` in the order the kernel reads
    them (CSR for a row-ordered kernel), ``caches`` as (name, bytes one core sees),
    fastest first."""
    from .cachesim import line_misses

    lengths = np.diff(indptr)
    per_line = max(1, LINE_BYTES // value_bytes)
    sets = np.array([max(1, int(c // (LINE_BYTES * WAYS))) for _, c in caches], np.int64)
    misses: dict[str, float] = {}
    if len(caches):
        counted = line_misses(np.ascontiguousarray(colidx, dtype=np.int64), per_line, sets,
                              np.full(len(caches), WAYS, np.int64),
                              (value_bytes + index_bytes) / LINE_BYTES)
        misses = {name: float(n) for (name, _), n in zip(caches, counted, strict=True)}
    return CoreCounts(misses, mispredicted_exits(lengths),
                      {k: chain_entries(lengths, k) for k in CHAINS})


def _lognormal_rows(rows: int, mean: float, rng: np.random.Generator) -> np.ndarray:
    lengths = np.round(mean * np.exp(rng.standard_normal(rows) - 0.5))
    return np.maximum(1, lengths).astype(np.int64)


#: rows of the matrices :func:`measure_branch_memory` tries: half-octave steps, so that a
#: jump between two neighbours moves the estimate by at most a factor of 1.4
BRANCH_SIZES = tuple(int(round(2 ** (k / 2))) for k in range(22, 35))
#: passes of :func:`measure_branch_memory`, of which the median is kept
BRANCH_PASSES = 3


def measure_branch_memory(sizes: Sequence[int] = BRANCH_SIZES, mean: float = 4.0,
                          passes: int = BRANCH_PASSES, **timing: Any) -> float:
    """The median over ``passes`` of :func:`branch_memory_once`: one disturbed timing moves
    one pass's estimate, not the median (a single pass was seen to flip between 2,849 and
    5,731 exits on one host)."""
    return float(np.median([branch_memory_once(sizes, mean, **timing)
                            for _ in range(passes)]))


def branch_memory_once(sizes: Sequence[int] = BRANCH_SIZES, mean: float = 4.0,
                       **timing: Any) -> float:
    """How many mispredicted row exits this host's branch predictor learns outright when
    the same SpMV repeats (a count of exits; :func:`mispredicted_exits`).

    For each size, a matrix whose row lengths vary at random (contiguous columns, so x
    never misses) is timed against the same rows sorted by length; the extra time per
    exit is near zero while the predictor holds the whole sequence and jumps once it no
    longer can. The memory is the geometric mean of the exit counts either side of the
    jump (the smallest count tried when even that one is mispredicted, the largest when
    none is).
    """
    import scipy.sparse as sp

    from .stopwatch import time_call

    rng = np.random.default_rng(3)
    exits, extra = [], []
    for rows in sizes:
        lengths = _lognormal_rows(rows, mean, rng)
        times = []
        for order in (lengths, np.sort(lengths)):
            indptr = np.concatenate([[0], np.cumsum(order)])
            start = np.repeat(np.arange(rows) - indptr[:-1], order)
            cols = (np.arange(indptr[-1]) + start) % rows
            a = sp.csr_matrix((np.ones(cols.size), cols, indptr), shape=(rows, rows))
            times.append(time_call(partial(a.dot, np.ones(rows)), **timing).min_s)
        exits.append(mispredicted_exits(lengths))
        extra.append(max(0.0, times[0] - times[1]) / max(exits[-1], 1.0))
    jump = 0.5 * max(extra)
    above = [e > jump for e in extra]
    if jump < 0.5e-9 or not above[-1]:  # the largest sequence was learned too
        return float(exits[-1])
    first = min(i for i in range(len(above)) if all(above[i:]))
    if first == 0:
        return float(exits[0])
    return float(np.sqrt(exits[first - 1] * exits[first]))
