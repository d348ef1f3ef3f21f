"""Host calibration: measured kernel times fitted per storage format.

The two phases of *A Performance Modeling and Optimization Analysis Tool for SpMV on GPUs*:

* **instrumenting**: benchmark matrices sweep the rows R and the entries per row P (the
  paper's benchmark criteria) in five column patterns (:mod:`sparsroof.host.sweep`); each
  format's kernel is timed (:mod:`sparsroof.host.bench`) in several rounds over the whole
  sweep, and each sample keeps its fastest run, the one least disturbed by other work;
  the memory of the branch predictor is measured on its own
  (:func:`sparsroof.host.core_cost.measure_branch_memory`);
* **modelling**: per format, the kernel time is fitted as a non-negative sum of costs::

      t = a + c·rows + e·slots + b_L·bytes + Σ_l g_l·misses_l + p·mispredicts
            + h_32·chain_32 + h_128·chain_128 + (COO, HYB) q·scattered + r·runs
            + Σ_k u_k·ychain_k + v·stall

  with ``slots`` the entries the kernel executes (padding included), ``bytes`` the SpMV
  traffic (A in its format, x once, y once) charged at the level L whose capacity holds
  it, and the core's costs of :mod:`sparsroof.host.core_cost`: x-line misses at each cache
  level, mispredicted row exits (counted only beyond what the predictor learns), and
  entries past 32 and 128 in one row; for COO and a HYB's COO part, the runs of additions
  into y through memory and their simulated stall (:func:`stall_of`; for COO what the
  order of its rows costs beyond the same rows sorted by length; the window and latency
  of the simulation the calibration chooses per format among
  :data:`~sparsroof.host.core_cost.STALL_WINDOWS` x
  :data:`~sparsroof.host.core_cost.STALL_LATENCIES`, by the error on held-out runs).
  Capacities are what one core sees (a level's capacity over its ``instances``), since
  the kernels run on one core. The fit minimises the median-like sum of |relative
  errors| (least absolute deviations, by iteratively reweighted non-negative least
  squares), so that a few disturbed runs do not pull it.
  The level that holds the working set is the fastest whose capacity, times a share
  ``fill`` of 1, 3/4 or 1/2, holds it (the rest of the cache serves other data and other
  programs); the calibration keeps the share whose fit best predicts runs held out of it
  (5-fold cross-validation), and reports that error. The paper fits time against strips
  and entries per row on a GPU; on a CPU the same quantities enter through rows and slots.

The calibration checks itself. Its roofs must not fall down the memory hierarchy (a
cache measured below main memory on a busy host would give larger working sets faster
bounds): such a level is raised to the slower level's roof and the calibration is flagged
(:attr:`Calibration.repaired`), and a file whose roofs fall is refused on loading. When
more than :data:`NOISY_SHARE` of the runs differ between passes by more than
:data:`NOISE_TOLERANCE`, something disturbed the host (other work, or on a virtual
machine its neighbours: a quiet 2-core host saw two thirds of its runs differ by more than
20 % from one pass to the next) and the calibration is marked noisy
(:attr:`Calibration.noisy`).

The result is saved as JSON with ``schema_version`` and read back by :func:`load`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._version import SCHEMA_VERSIONS, envelope
from ..errors import CalibrationError
from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix
from ..model.storage import hyb_width
from ..structure.features import Structure, measure
from ..userfile import (
    LARGEST,
    FieldError,
    flag,
    number,
    read_json,
    replaced,
    shown,
    text,
    whole_number,
)
from .bench import KERNEL_FORMATS, bench, kernel_traffic, time_host
from .core_cost import (
    CHAINS,
    STALL_LATENCIES,
    STALL_WINDOWS,
    CoreCounts,
    chain_stalls,
    core_counts,
    measure_branch_memory,
    scatter_runs,
)
from .memory_roofs import effective_roofs, monotone_roofs, with_roofs
from .stopwatch import NOISE_TOLERANCE

__all__ = ["FormatFit", "Calibration", "Sample", "features", "executed", "scattered_entries",
           "kernel_loops", "stall_of", "stalls_of", "SORTED_EXCESS", "fit", "held_out_error",
           "held_out_errors", "choose_fill", "choose_stall", "calibrate", "save", "load",
           "SCHEMA_VERSION", "FILLS", "NOISE_TOLERANCE", "NOISY_SHARE", "SWEEP_TIMING",
           "checked_roofs"]

SCHEMA_VERSION = SCHEMA_VERSIONS["calibration"]
#: shares of a cache's capacity a working set may fill and still be served from it (other
#: data and other programs use the cache too); a calibration keeps the one that best
#: predicts its own runs held out of the fit
FILLS = (1.0, 0.75, 0.5)
#: a calibration with more than this share of disturbed runs is marked noisy
NOISY_SHARE = 0.1
#: run lengths past which the additions into one y entry through memory are counted (COO's
#: product and a HYB's COO part add each entry into y[row] in turn: an addition waits for
#: the one before it in the same row, and runs longer than the core's window serialise)
YCHAINS = (4, 16, 64, 256)
#: slots of the host ELL kernel's inner loop per unrolled iteration, as numba compiles it
#: here: a row of K slots runs K // 8 of them and finishes the rest in a loop of its own
#: (2,000 rows of K slots: 5.25 ns a row at K = 8, 5.83 at K = 7, 10.25 at K = 16 and
#: 10.20 at K = 15); a row with a leftover is a cost of its own (:func:`kernel_loops`)
ELL_UNROLL = 8
#: how the sweep times each kernel (:func:`sparsroof.host.stopwatch.time_call`): one warm-up
#: call, then at least 3 calls and 20 ms; each pass over the sweep adds its fastest run
SWEEP_TIMING = {"warmup": 1, "repeat": 3, "min_time": 0.02}



@dataclass(frozen=True)
class Sample:
    """One timed kernel: the counts the fit uses and the fastest time."""

    matrix: str
    storage: str
    rows: int
    slots: float
    bytes: float
    level: str
    seconds: float
    misses: dict[str, float] = field(default_factory=dict)  # x-line misses per cache level
    mispredicts: float = 0.0
    chains: dict[str, float] = field(default_factory=dict)  # entries past 32, 128 in a row
    spread: float = 0.0  # slowest pass / fastest pass - 1: how disturbed the runs were
    scattered: float = 0.0  # entries a HYB's COO part adds into y one by one
    ychains: dict[str, float] = field(default_factory=dict)  # see :func:`kernel_loops`
    stall: float = 0.0  # the COO loop's simulated stall (:func:`stall_of`)

    @property
    def counts(self) -> CoreCounts:
        return CoreCounts(self.misses, self.mispredicts,
                          {int(k): v for k, v in self.chains.items()})


def scattered_entries(s: Structure, storage: str) -> float:
    """Entries of ``storage`` added into y one at a time, a COO scatter inside the format:
    a HYB's entries beyond its ELL width (0 for every other format, whose fit has its own
    cost per entry).

    >>> from sparsroof.host.sweep import generate
    >>> [scattered_entries(measure(generate(p, 8000, 8)), "hyb") > 0 for p in ("band", "skewed")]
    [False, True]
    """
    if storage != "hyb":
        return 0.0
    width = hyb_width(s.row_length_counts, s.rows)
    lengths = np.arange(s.row_length_counts.size)
    return float(np.sum(np.maximum(lengths - width, 0) * s.row_length_counts))


def executed(s: Structure, storage: str, dtype: str = "fp64") -> tuple[float, float]:
    """(slots, bytes) that this host's SpMV kernel in ``storage`` executes and moves on a
    matrix of structure ``s``: every slot it stores, padding included, and the bytes of A
    as stored, with x and y once.

    This is a prediction's input, not a bound's: the bound charges only real entries
    (:func:`sparsroof.model.traffic.traffic`), since a kernel could skip the padding, but
    the host's ELL kernel (:mod:`sparsroof.host.ell_kernels`) loops over every row's K
    slots, the longest row's length, and a HYB's ELL part over its width; both read the
    padding's values and columns. Every other format executes what it stores.

    >>> from sparsroof.host.sweep import generate
    >>> s = measure(generate("skewed", 8000, 8))
    >>> executed(s, "csr")                         # what the bound charges CSR
    (62562.0, 910716.0)
    >>> executed(s, "ell")[0] == s.rows * s.max_row_length == 1_336_000
    True
    """
    t = kernel_traffic(s, storage, "spmv", 1, dtype)
    return float(t.a_values_stored), t.a_stored_bytes + t.bytes_b + t.bytes_c


def kernel_loops(s: Structure, storage: str, counts: CoreCounts
                 ) -> tuple[CoreCounts, dict[str, float]]:
    """The core's counts as ``storage``'s kernel meets them, and its additions into y
    through memory.

    ``counts`` are taken in row order, as CSR's loop meets them: a row exit per row (whose
    mispredictions the branch predictor may not learn) and a register sum per row (whose
    dependency chain grows with the row). COO's product is one loop over the entries, each
    added into y[row] in memory: no row exits and no register chains, but runs of
    additions into one y entry, each waiting for the one before. ELL loops over the
    longest row's K slots in every row, and a HYB's ELL part over its width K: a fixed
    trip count (no mispredicted exits) and a chain of K in every row; a HYB's COO part adds
    the entries beyond K as COO does. The second value holds those runs: ``runs``, the rows
    that have one, and for each k of :data:`YCHAINS` the additions past the k-th of a run;
    and for ELL and a HYB's ELL part, ``leftover``: the rows whose K is no multiple of
    :data:`ELL_UNROLL`, which finish in a second loop.

    >>> from sparsroof.matrix.mtx import Header, Matrix
    >>> row = np.repeat([0, 1, 3], [6, 1, 20])            # rows of 6, 1, 0 and 20 entries
    >>> col = np.concatenate([np.arange(6), [0], np.arange(20)])
    >>> m = Matrix("m", "m", 4, 20, row, col, None, Header("m", "coordinate", "pattern",
    ...                                                   "general", 4, 20, 27))
    >>> c, y = kernel_loops(measure(m), "coo", CoreCounts({}, 3.0, {32: 1.0}))
    >>> c.mispredicts, c.chains, y     # past the 4th: 2 + 16; past the 16th: 4
    (0.0, {}, {'runs': 3.0, '4': 18.0, '16': 4.0, '64': 0.0, '256': 0.0})
    >>> kernel_loops(measure(m), "csr", CoreCounts({}, 3.0, {32: 1.0}))[0].mispredicts
    3.0
    >>> kernel_loops(measure(m), "ell", CoreCounts({}, 3.0, {32: 1.0}))   # K = 20 in 4 rows
    (CoreCounts(misses={}, mispredicts=0.0, chains={}), {'leftover': 4.0})
    """
    if storage == "ell":
        width = s.max_row_length
        return (CoreCounts(counts.misses, 0.0, {k: float(s.rows * (width - k)) for k in CHAINS
                                                if width > k}),
                {"leftover": float(s.rows) if width % ELL_UNROLL else 0.0})
    if storage not in ("coo", "hyb"):
        return counts, {}
    width = hyb_width(s.row_length_counts, s.rows) if storage == "hyb" else 0
    lengths = np.arange(s.row_length_counts.size)
    number = s.row_length_counts
    run = np.maximum(lengths - width, 0)
    chains = {k: float(s.rows * (width - k)) for k in CHAINS if width > k}
    ychains = {"runs": float(np.sum(number[run > 0]))}
    if storage == "hyb":
        ychains["leftover"] = float(s.rows) if width % ELL_UNROLL else 0.0
    for k in YCHAINS:
        ychains[str(k)] = float(np.sum(np.maximum(run - k, 0) * number))
    return CoreCounts(counts.misses, 0.0, chains), ychains


#: formats whose kernels a stall is fitted for (:func:`stall_of`)
STALLED = ("coo", "hyb")


def stall_of(lengths: np.ndarray, s: Structure, storage: str, window: int, latency: float
             ) -> float:
    """The stall of ``storage``'s additions into y through memory
    (:func:`~sparsroof.host.core_cost.chain_stall`), for a matrix of structure ``s``
    whose rows have ``lengths`` in order. A HYB's COO part adds the entries beyond its
    ELL width, and its stall is the simulation's; COO is below; every other format sums
    in registers (0).

    COO adds every entry, a row's entries one chain, and its stall is what their order
    costs beyond the same rows sorted by length, shortest first (:data:`SORTED_EXCESS`;
    an order that stalls less, the longest rows first for one, counts 0): rows of equal
    length (no excess) cost the kernel a time per row that grows with the row's length
    piece by piece, which the runs' own counts (:func:`kernel_loops`) fit, while the
    simulated stall levels off.

    >>> from sparsroof.host.sweep import generate
    >>> m = generate("skewed", 1000, 2)
    >>> lengths = np.bincount(m.row, minlength=m.rows)
    >>> [round(stall_of(order, measure(m), "hyb", 12, 6.0)) for order in
    ...  (lengths, np.sort(lengths))]   # 1,000 rows: HYB's width is 0, all scattered
    [2270, 1511]
    >>> [round(stall_of(order, measure(m), "coo", 12, 6.0)) for order in
    ...  (lengths, np.sort(lengths))]           # COO: the excess over the rows sorted
    [759, 0]
    >>> stall_of(lengths, measure(m), "csr", 12, 6.0)
    0.0
    """
    return float(stalls_of(lengths, s, storage, [(window, latency)])[0])


#: formats whose stall is the excess of their rows' order over the same rows sorted by
#: length, shortest first (:func:`stall_of`)
SORTED_EXCESS = ("coo",)


def stalls_of(lengths: np.ndarray, s: Structure, storage: str,
              pairs: Sequence[tuple[int, float]]) -> np.ndarray:
    """:func:`stall_of` at each (window, latency) of ``pairs``, the runs found once."""
    if storage not in STALLED:
        return np.zeros(len(pairs))
    width = hyb_width(s.row_length_counts, s.rows) if storage == "hyb" else 0
    stalls = chain_stalls(scatter_runs(lengths, width), pairs)
    if storage in SORTED_EXCESS:  # an order that stalls less than sorted counts 0
        stalls = np.maximum(stalls - chain_stalls(scatter_runs(np.sort(lengths), width),
                                                  pairs), 0.0)
    return stalls


def features(rows: float, slots: float, bytes_: float, level: str, levels: Iterable[str],
             counts: CoreCounts | None = None, branch_memory: float = 0.0,
             scattered: float = 0.0, ychains: dict[str, float] | None = None,
             stall: float = 0.0) -> dict[str, float]:
    """Feature vector of one kernel for :func:`fit`: bytes at the level that holds the
    working set, x-line misses at each cache level, the mispredicted row exits the
    predictor does not learn, long-chain entries, the entries a HYB's COO part
    scatters into y one by one (they cost as COO's do, not as an ELL slot), the runs
    of additions into y through memory (:func:`kernel_loops`) and their stall
    (:func:`stall_of`).

    >>> f = features(10, 30, 400.0, "L2", ["L2", "DRAM"], CoreCounts({"L2": 5}, 9.0, {32: 2.0}),
    ...              branch_memory=100)
    >>> {k: v for k, v in f.items() if v}
    {'constant': 1.0, 'rows': 10, 'slots': 30, 'bytes@L2': 400.0, 'misses@L2': 5, 'chain@32': 2.0}
    """
    names = list(levels)
    c = counts or CoreCounts()
    out: dict[str, float] = {"constant": 1.0, "rows": rows, "slots": slots}
    for name in names:
        out[f"bytes@{name}"] = bytes_ if name == level else 0.0
    for name in names[:-1]:
        out[f"misses@{name}"] = c.misses.get(name, 0.0)
    out["mispredicts"] = c.mispredicts if c.mispredicts > branch_memory else 0.0
    for k in CHAINS:
        out[f"chain@{k}"] = c.chains.get(k, 0.0)
    out["scattered"] = scattered
    y = ychains or {}
    out["yruns"] = y.get("runs", 0.0)
    for k in YCHAINS:
        out[f"ychain@{k}"] = y.get(str(k), 0.0)
    out["ystall"] = stall
    out["leftover"] = y.get("leftover", 0.0)
    return out


@dataclass(frozen=True)
class FormatFit:
    """Fitted coefficients of one format (seconds per unit of each feature)."""

    coefficients: dict[str, float]
    samples: int
    median_error: float  # median |predicted - measured| / measured over the samples
    max_error: float
    held_out_median: float | None = None  # the same, each sample left out of its fit

    def predict(self, x: dict[str, float]) -> float:
        """Seconds for the feature vector ``x`` (:func:`features`)."""
        return sum(self.coefficients.get(k, 0.0) * v for k, v in x.items())


@dataclass(frozen=True)
class Calibration:
    """A host's fitted kernel-time model and its measured memory roofs."""

    spec: str
    device: str
    dtype: str
    levels: tuple[tuple[str, float | None], ...]  # (name, bytes one core sees), fastest first
    roofs: dict[str, float]  # measured bandwidth per level, bytes/s
    fits: dict[str, FormatFit]
    branch_memory: float = 0.0  # mispredicted exits the branch predictor learns outright
    fill: float = 1.0  # share of a cache's capacity a working set may take and stay there
    held_out_error: float | None = None  # mean |relative error| on runs left out of the fit
    repaired: tuple[str, ...] = ()  # roofs raised to a slower level's, one line each
    noisy: bool = False  # passes over the sweep disagreed: a busy host
    #: per format whose chains of additions stall its core: (window, latency) of the stall
    stall: dict[str, tuple[int, float]] = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        """Whether a roof was repaired or the runs were noisy."""
        return bool(self.repaired) or self.noisy

    def level_of(self, footprint: float) -> str:
        """The fastest level whose capacity, times :attr:`fill`, holds ``footprint`` bytes
        (else main memory)."""
        for name, capacity in self.levels[:-1]:
            if capacity is not None and footprint <= capacity * self.fill:
                return name
        return self.levels[-1][0]

    def counts(self, m: Matrix, storage: str = "csr") -> CoreCounts:
        """The core's counts for ``m`` in the order ``storage``'s kernel reads it (by
        columns for CSC, by rows otherwise)."""
        from .core_cost import traversal

        by_column = storage == "csc"
        indptr, colidx = (traversal(m.col, m.row, m.cols) if by_column
                          else traversal(m.row, m.col, m.rows))
        caches = [(n, c) for n, c in self.levels[:-1] if c is not None]
        return core_counts(indptr, colidx, caches, 4 if self.dtype == "fp32" else 8)

    def predict(self, storage: str, rows: float, slots: float, bytes_: float,
                counts: CoreCounts | None = None, footprint: float | None = None,
                scattered: float = 0.0, ychains: dict[str, float] | None = None,
                stall: float = 0.0) -> float | None:
        """Predicted kernel seconds, or None when ``storage`` was not calibrated."""
        f = self.fits.get(storage)
        if f is None:
            return None
        level = self.level_of(bytes_ if footprint is None else footprint)
        return f.predict(features(rows, slots, bytes_, level, [n for n, _ in self.levels],
                                  counts, self.branch_memory, scattered, ychains, stall))

    def predict_matrix(self, m: Matrix, s: Structure, storages: Iterable[str]
                       ) -> dict[str, float]:
        """Predicted SpMV seconds of ``m`` (structure ``s``) in each calibrated storage."""
        out: dict[str, float] = {}
        by_order: dict[bool, CoreCounts] = {}
        lengths = None
        for storage in storages:
            if storage not in self.fits:
                continue
            order = storage == "csc"
            if order not in by_order:
                by_order[order] = self.counts(m, storage)
            slots, bytes_ = executed(s, storage, self.dtype)
            counts, ychains = kernel_loops(s, storage, by_order[order])
            stall = 0.0
            if storage in self.stall:
                if lengths is None:
                    lengths = np.bincount(m.row, minlength=m.rows)
                stall = stall_of(lengths, s, storage, *self.stall[storage])
            seconds = self.predict(storage, s.rows, slots, bytes_,
                                   counts, scattered=scattered_entries(s, storage),
                                   ychains=ychains, stall=stall)
            assert seconds is not None
            out[storage] = seconds
        return out


def fit(samples: list[Sample], levels: Iterable[str], branch_memory: float = 0.0,
        rounds: int = 40) -> dict[str, FormatFit]:
    """Per format, non-negative least absolute relative deviations of time on the
    features, by iteratively reweighted non-negative least squares."""
    from scipy.optimize import nnls

    names = list(levels)
    fits = {}
    for storage in sorted({s.storage for s in samples}):
        mine = [s for s in samples if s.storage == storage]
        rows = [features(s.rows, s.slots, s.bytes, s.level, names, s.counts, branch_memory,
                         s.scattered, s.ychains, s.stall)
                for s in mine]
        keys = list(rows[0])
        x = np.array([[r[k] for k in keys] for r in rows], dtype=float)
        y = np.array([s.seconds for s in mine])
        scale = np.maximum(x.max(axis=0), 1e-300)  # columns of comparable size for nnls
        a = (x / scale) / y[:, None]
        weight = np.ones_like(y)
        for _ in range(rounds):  # weights 1/sqrt|r| turn squares into absolute values
            coef, _ = nnls(a * weight[:, None], weight)
            weight = 1 / np.sqrt(np.maximum(np.abs(a @ coef - 1), 1e-3))
        coef = coef / scale
        err = np.abs(x @ coef - y) / y
        fits[storage] = FormatFit(dict(zip(keys, coef.tolist(), strict=True)), len(mine),
                                  float(np.median(err)), float(err.max()))
    return fits


def held_out_errors(samples: list[Sample], levels: Iterable[str], branch_memory: float,
                    folds: int = 5) -> dict[str, list[float]]:
    """|relative error| of every sample predicted by a fit made without it
    (``folds``-fold cross-validation), by format."""
    names = list(levels)
    errors: dict[str, list[float]] = {}
    for k in range(folds):
        fits = fit([s for i, s in enumerate(samples) if i % folds != k], names, branch_memory)
        for s in samples[k::folds]:
            if s.storage in fits:
                x = features(s.rows, s.slots, s.bytes, s.level, names, s.counts, branch_memory,
                             s.scattered, s.ychains, s.stall)
                errors.setdefault(s.storage, []).append(
                    abs(fits[s.storage].predict(x) - s.seconds) / s.seconds)
    return errors


def held_out_error(samples: list[Sample], levels: Iterable[str], branch_memory: float,
                   folds: int = 5) -> float:
    """Mean |relative error| of the samples, each predicted by a fit made without it,
    over all formats."""
    errors = held_out_errors(samples, levels, branch_memory, folds)
    return float(np.mean([e for v in errors.values() for e in v])) if errors else 0.0


def choose_fill(samples: list[Sample], levels: tuple[tuple[str, float | None], ...],
                branch_memory: float) -> tuple[float, float, list[Sample]]:
    """The share of :data:`FILLS` whose memory levels predict held-out samples best, that
    error, and the samples relabelled with their levels at that share."""
    names = [n for n, _ in levels]
    best: tuple[float, float, list[Sample]] | None = None
    for fill in FILLS:
        level_of = Calibration("", "", "", levels, {}, {}, fill=fill).level_of
        mine = [dataclasses.replace(s, level=level_of(s.bytes)) for s in samples]
        error = held_out_error(mine, names, branch_memory)
        if best is None or error < best[1]:
            best = (fill, error, mine)
    assert best is not None
    return best


def choose_stall(samples: list[Sample], levels: Iterable[str], branch_memory: float,
                   stalls: dict[tuple[str, str], dict[tuple[int, float], float]]
                   ) -> tuple[dict[str, tuple[int, float]], list[Sample]]:
    """Per format with stalls (COO, HYB), the (window, latency) of :func:`stall_of` whose
    fit best predicts that format's samples held out of it, and the samples carrying the
    chosen stalls. ``stalls`` holds, per (matrix, storage), the stall at every pair."""
    names = list(levels)
    chosen: dict[str, tuple[int, float]] = {}
    for storage in sorted({s.storage for s in samples if (s.matrix, s.storage) in stalls}):
        mine = [s for s in samples if s.storage == storage]
        best: tuple[float, tuple[int, float]] | None = None
        for pair in [(w, lat) for w in STALL_WINDOWS for lat in STALL_LATENCIES]:
            tried = [dataclasses.replace(s, stall=stalls[(s.matrix, storage)][pair])
                     for s in mine]
            error = float(np.mean(held_out_errors(tried, names, branch_memory)[storage]))
            if best is None or error < best[0]:
                best = (error, pair)
        assert best is not None
        chosen[storage] = best[1]
    return chosen, [dataclasses.replace(s, stall=stalls[(s.matrix, s.storage)][chosen[s.storage]])
                    if s.storage in chosen else s for s in samples]


def checked_roofs(spec: HwSpec, roofs: dict[str, float]
                  ) -> tuple[dict[str, float], tuple[str, ...]]:
    """The measured ``roofs`` (bytes/s by level) with ``spec``'s published ones beneath
    them, repaired so that no level is slower than a slower level
    (:func:`~sparsroof.host.memory_roofs.monotone_roofs`), and the lines saying which
    were raised. The result holds the measured levels and the raised ones."""
    effective = effective_roofs(with_roofs(spec, roofs, "measured"))
    repaired, notes = monotone_roofs(effective, [lvl.name for lvl in spec.memory])
    return {n: r for n, r in repaired.items() if n in roofs or r != effective[n]}, notes


Key = tuple[str, str]  # (matrix, storage)
Stalls = dict[Key, dict[tuple[int, float], float]]


def _first_pass(spec: HwSpec, todo: list[tuple[str, int, int]], formats: Sequence[str],
                dtype: str, timing: dict[str, Any], partial: Calibration,
                report: Callable[[int, str], None]
                ) -> tuple[dict[Key, Sample], Stalls, dict[str, list[str]]]:
    """The sweep's first pass: each matrix generated, measured and timed in every format
    it is timed in, with the core's counts and the stalls; returns a sample per (matrix,
    storage), the stalls and the storages timed per matrix."""
    from .sweep import MAX_SLOTS, generate

    samples: dict[Key, Sample] = {}
    stalls: Stalls = {}
    timed: dict[str, list[str]] = {}
    pairs = [(w, lat) for w in STALL_WINDOWS for lat in STALL_LATENCIES]
    for i, (pattern, rows, per_row) in enumerate(todo):
        m = generate(pattern, rows, per_row)
        report(i, m.name)
        s = measure(m)
        by_order: dict[bool, CoreCounts] = {}
        mine = [f for f in formats
                if executed(s, "bsr4" if f == "bsr" else f, dtype)[0] <= MAX_SLOTS]
        timed[m.name] = []
        for run in bench(m, s, spec, formats=mine, dtype=dtype, **timing):
            if run.timing is None:
                continue
            timed[m.name].append(run.storage)
            order = run.storage == "csc"
            if order not in by_order:
                by_order[order] = partial.counts(m, run.storage)
            c, ychains = kernel_loops(s, run.storage, by_order[order])
            key = (m.name, run.storage)
            if run.storage in STALLED:
                lengths = np.bincount(m.row, minlength=m.rows)
                stalls[key] = dict(zip(pairs, stalls_of(lengths, s, run.storage, pairs)
                                       .tolist(), strict=True))
            slots, bytes_ = executed(s, run.storage, dtype)
            samples[key] = Sample(m.name, run.storage, rows, slots, bytes_,
                                  partial.level_of(bytes_), run.timing.min_s, c.misses,
                                  c.mispredicts, {str(k): v for k, v in c.chains.items()},
                                  scattered=scattered_entries(s, run.storage),
                                  ychains=ychains)
    return samples, stalls, timed


def _later_pass(todo: list[tuple[str, int, int]], timed: dict[str, list[str]], dtype: str,
                timing: dict[str, Any], report: Callable[[int, str], None]
                ) -> dict[Key, float]:
    """A later pass: the first pass's runs timed again, the fastest call of each."""
    from .sweep import generate

    out: dict[Key, float] = {}
    for i, (pattern, rows, per_row) in enumerate(todo):
        m = generate(pattern, rows, per_row)
        report(i, m.name)
        for storage, run in time_host(m, timed[m.name], dtype, **timing).items():
            out[(m.name, storage)] = run.min_s
    return out


def _pass_child(queue: Any, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """What a pass's own process runs: ``work(*args, report)``, its steps and its result
    (or its error) sent back through ``queue``."""
    try:
        queue.put(("done", work(*args, lambda i, name: queue.put(("step", i, name)))))
    except BaseException as err:  # noqa: BLE001 - every failure goes back to calibrate
        queue.put(("error", f"{type(err).__name__}: {err}"))


def _in_own_process(work: Callable[..., Any], args: tuple[Any, ...],
                    report: Callable[[int, str], None]) -> Any:
    """``work(*args, report)`` in a fresh process (see :func:`calibrate`)."""
    import multiprocessing
    import queue as queues

    context = multiprocessing.get_context("spawn")
    channel = context.Queue()
    child = context.Process(target=_pass_child, args=(channel, work, args), daemon=True)
    child.start()
    try:
        while True:
            try:
                message = channel.get(timeout=1.0)
            except queues.Empty:
                if not child.is_alive():
                    raise RuntimeError("a calibration pass ended without a result (exit "
                                       f"code {child.exitcode})") from None
                continue
            if message[0] == "step":
                report(message[1], message[2])
            elif message[0] == "done":
                return message[1]
            else:
                raise RuntimeError(f"a calibration pass failed: {message[1]}")
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()


def calibrate(spec: HwSpec, roofs: dict[str, float], *, dtype: str = "fp64",
              formats: Sequence[str] = KERNEL_FORMATS,
              matrices: list[tuple[str, int, int]] | None = None, rounds: int = 3,
              progress: Callable[[int, int, str], None] = lambda *_: None,
              separate: bool = False, **timing: Any) -> tuple[Calibration, list[Sample]]:
    """Run the sweep on this host ``rounds`` times, fit every format, and return the
    calibration and the samples (each the fastest of its rounds). ``spec`` should carry
    the measured roofs (:func:`sparsroof.host.memory_roofs.with_roofs`) so that the runs
    are bounded by the right level; roofs that fall down the hierarchy are repaired and
    flagged (:func:`checked_roofs`). ``timing`` goes to
    :func:`sparsroof.host.stopwatch.time_call`.

    ``separate``: each pass in a fresh process. A process keeps the layout of its code and
    arrays from its first run to its last, and on some layouts every kernel of a small
    matrix runs 1.3 to 1.8 times slower (eight processes timing one 2,628-entry matrix
    on a 2-core virtual machine: CSR 5.7 us in two, 9.2 to 10.2 us in six); passes in
    processes of their own let the fastest pass escape a slow one."""
    from .sweep import plan as sweep_plan

    timing = SWEEP_TIMING | timing
    roofs, repaired = checked_roofs(spec, roofs)
    spec = with_roofs(spec, roofs, "measured by sparsroof calibrate")
    levels = tuple((lvl.name, lvl.capacity_per_instance) for lvl in spec.memory)
    todo = matrices if matrices is not None else sweep_plan()
    steps = rounds * len(todo)
    progress(0, steps, "branch predictor memory")
    memory = measure_branch_memory(**timing)
    partial = Calibration(spec.name, spec.device, dtype, levels, roofs, {}, memory)

    def run(r: int, work: Callable[..., Any], *args: Any) -> Any:
        def report(i: int, name: str) -> None:
            progress(r * len(todo) + i, steps, f"{name} (round {r + 1} of {rounds})")

        return _in_own_process(work, args, report) if separate else work(*args, report)

    first, stalls, timed = run(0, _first_pass, spec, todo, formats, dtype, timing, partial)
    passes: dict[Key, list[float]] = {k: [b.seconds] for k, b in first.items()}
    for r in range(1, rounds):
        for key, seconds in run(r, _later_pass, todo, timed, dtype, timing).items():
            passes[key].append(seconds)
    progress(steps, steps, "fitting")
    measured = [dataclasses.replace(b, seconds=min(passes[k]),
                                    spread=max(passes[k]) / min(passes[k]) - 1)
                for k, b in first.items()]
    disturbed = sum(s.spread > NOISE_TOLERANCE for s in measured)
    noisy = rounds > 1 and disturbed > NOISY_SHARE * len(measured)
    fill, error, samples = choose_fill(measured, levels, memory)
    names = [n for n, _ in levels]
    stall, samples = choose_stall(samples, names, memory, stalls)
    error = held_out_error(samples, names, memory) if stall else error
    held = held_out_errors(samples, names, memory)
    fits = {k: dataclasses.replace(f, held_out_median=float(np.median(held[k])))
            if held.get(k) else f for k, f in fit(samples, names, memory).items()}
    return Calibration(spec.name, spec.device, dtype, levels, roofs, fits, memory, fill,
                       error, repaired, noisy, stall), samples


def save(c: Calibration, samples: list[Sample], path: str | Path) -> None:
    """Write ``c`` (and the samples it was fitted on) as JSON."""
    from dataclasses import asdict

    doc = envelope("calibration") | {
        "spec": c.spec, "device": c.device, "dtype": c.dtype,
        "kernel": "spmv", "branch_memory_exits": c.branch_memory,
        "working_set_fill": c.fill, "held_out_error": c.held_out_error,
        "flagged": c.flagged, "roofs_repaired": list(c.repaired), "noisy": c.noisy,
        "noise_tolerance": NOISE_TOLERANCE,
        "stall": {k: {"window": w, "latency": lat} for k, (w, lat) in c.stall.items()},
        "levels": [{"name": n, "capacity_bytes": cap} for n, cap in c.levels],
        "roofs_bytes_per_s": c.roofs,
        "fits": {k: asdict(f) for k, f in c.fits.items()},
        "samples": [asdict(s) for s in samples]}
    with replaced(path) as new:  # whole or not at all
        new.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def _real(value: Any, what: str, positive: bool = False, nonnegative: bool = False) -> float:
    found = number(value, what, positive=positive, maximum=LARGEST)
    if nonnegative and found < 0:
        raise FieldError(f"{what}: {found:g} is negative")
    return found


def _fit(f: Any, name: str) -> FormatFit:
    held = f.get("held_out_median")
    coefficients = f["coefficients"]
    if "constant" not in coefficients:
        raise FieldError(f"fits.{name}.coefficients: no constant")
    # fitted without negative terms (non-negative least squares): a negative one would
    # price a format's run below zero
    return FormatFit({str(n): _real(v, f"fits.{name}.coefficients.{n}", nonnegative=True)
                      for n, v in coefficients.items()},
                     whole_number(f["samples"], f"fits.{name}.samples", minimum=0,
                                  maximum=2**40),
                     _real(f["median_error"], f"fits.{name}.median_error"),
                     _real(f["max_error"], f"fits.{name}.max_error"),
                     None if held is None else _real(held, f"fits.{name}.held_out_median"))


def _calibration(doc: dict[str, Any]) -> Calibration:
    """The calibration a document holds, every field checked: rates positive, every
    number finite, texts text and flags true or false."""
    fits = {str(k): _fit(f, str(k)) for k, f in doc["fits"].items()}
    levels = tuple((text(lv["name"], "levels.name"),
                    None if lv["capacity_bytes"] is None
                    else _real(lv["capacity_bytes"], "levels.capacity_bytes", positive=True))
                   for lv in doc["levels"])
    if not levels:
        raise FieldError("levels: no memory level (main memory at least)")
    if doc["dtype"] not in ("fp64", "fp32"):
        raise FieldError(f"dtype: {shown(doc['dtype'])} is not fp64 or fp32, the types "
                         "sparsroof calibrate times")
    error = doc.get("held_out_error")
    return Calibration(
        text(doc["spec"], "spec"), text(doc["device"], "device"), text(doc["dtype"], "dtype"),
        levels, {str(k): _real(v, f"roofs_bytes_per_s.{k}", positive=True)
                 for k, v in doc["roofs_bytes_per_s"].items()},
        fits, _real(doc["branch_memory_exits"], "branch_memory_exits", nonnegative=True),
        _real(doc["working_set_fill"], "working_set_fill", positive=True),
        None if error is None else _real(error, "held_out_error"),
        tuple(text(n, "roofs_repaired") for n in doc.get("roofs_repaired", ())),
        flag(doc.get("noisy", False), "noisy"),
        {str(k): (whole_number(v["window"], f"stall.{k}.window", minimum=1, maximum=4096),
                  _real(v["latency"], f"stall.{k}.latency", positive=True))
         for k, v in doc.get("stall", {}).items()})


def load(path: str | Path) -> Calibration:
    """Read a calibration file; a clear error when it is missing or malformed."""
    doc = read_json(path, lambda problem: CalibrationError(path, problem))
    if not isinstance(doc, dict) or doc.get("kind") != "calibration":
        raise CalibrationError(path, "not a sparsroof calibration file")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise CalibrationError(path, f"schema_version {shown(doc.get('schema_version'))} is "
                               f"not {SCHEMA_VERSION}; run sparsroof calibrate again")
    try:
        cal = _calibration(doc)
    except KeyError as err:
        raise CalibrationError(path, f"malformed calibration: no {shown(err.args[0])}; run "
                               "sparsroof calibrate again") from None
    except (FieldError, TypeError, AttributeError) as err:
        raise CalibrationError(path, f"malformed calibration ({str(err)[:200]})") from None
    _, falling = monotone_roofs(cal.roofs, [n for n, _ in cal.levels])
    if falling:
        raise CalibrationError(path, f"impossible roofs: {'; '.join(falling)}; run sparsroof "
                               "calibrate again, on a quiet host")
    return cal
