"""The format advisor's answer: the best partition of the rows into blocks of strips, each
in its best format, against the best single format, every candidate priced by one model.

After *A Performance Modeling and Optimization Analysis Tool for SpMV on GPUs* (sections
4 and 5.2): the candidates are every partition the dynamic program
(:mod:`sparsroof.advisor.partition`) can find and, among them, the whole matrix in each
format (a partition of one block). All are priced by the same rules, so that a one-block
partition costs exactly what the whole matrix does in its format.

**One price for an answer.** A partition runs its blocks one after another, and a warm
repeated run of the sequence holds the working set of all of them, W = Σ bytes of the
blocks (A, y and x). The memory hierarchy credits that working set as the bound does for a
whole matrix (:func:`sparsroof.model.bound.memory_terms`): level j supplies the bytes its
faster levels cannot hold, and the memory time of the run is M(W) = max_j bytes_j/β_j. Each
block is charged its share of M(W) by its bytes, M(W)·bytes_b/W, so that every byte of an
answer gets the same credit, whether it sits in one block or in many; a block also takes at
least its launch floor and its compute time:

    t_b = max(launch, 2·slots_b/P, M(W)·bytes_b/W),   T = Σ_b t_b

For one block this is the roofline bound of the whole matrix (same bytes, same credit). As
M(W)/W depends on the answer, the program is run at the rate of the best single format's
working set, then again at the rate of the partition it found, until the partition stops
changing (at most :data:`SEARCH_ROUNDS` rounds); the final answer and every single format
are priced exactly, each at its own W. With timing ``cold`` no cache credits anything.

From a calibration, the level is the one whose capacity holds W (:meth:`Calibration.level_of`)
and each format's fitted costs price the block; the whole-matrix prediction of a format
(the core's costs included: x misses, mispredicted exits, long chains) exceeds the fitted
costs of its one block by a residual that is spread over the format's slots, so that a
one-block partition again costs what the whole-matrix prediction does.

**Blocks.** Any whole number of strips in any format (the paper's Table 3 holds ELL blocks of
42, 59 and 74 strips of 672 rows). The program considers blocks of up to
``max_block`` strips; by default every block, up to :data:`BLOCK_CAP` strips, a cap the
answer reports when it binds. Neighbouring blocks in one format are merged when the merged
block costs no more (a program without a launch floor finds equal-cost cuts in a run of one
format, and they are one block).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix
from ..model.timing import DEFAULT_TIMING, launch_floor
from .partition import (
    DP_FORMATS,
    CostModel,
    Strips,
    block_price,
    partition,
    strip_rows,
    strips,
)

__all__ = ["BLOCK_CAP", "SEARCH_ROUNDS", "Prices", "Block", "Advice", "FormatRow",
           "sol_prices", "calibrated_prices", "prediction", "format_rows", "advise",
           "storage_name"]

#: the longest block, in strips, the program considers by default (its work grows with
#: the square of the strips up to this length, then linearly)
BLOCK_CAP = 2048
#: rounds of the program at the rate of the working set it found
SEARCH_ROUNDS = 4


def storage_name(fmt: str, block: int = 4) -> str:
    """The storage's name in the formats table ("bsr" of b x b blocks is "bsr{b}")."""
    return f"bsr{block}" if fmt == "bsr" else fmt


@dataclass(frozen=True)
class Prices:
    """How every candidate is priced: ``at(W)`` gives each format's cost model for an answer
    whose working set is W bytes; ``targets`` (calibrated) the whole-matrix seconds a
    one-block answer must cost; ``route`` "sol" or "calibrated"."""

    route: str
    at: Callable[[float], dict[str, CostModel]]
    targets: Mapping[str, float] = field(default_factory=dict)


def sol_prices(spec: HwSpec, precision: str = "fp64", timing: str = DEFAULT_TIMING,
               calls_per_sync: int = 1, flops_per_slot: float = 2.0) -> Prices:
    """Roofline prices (see the module docstring): the memory time M(W) of the spec's
    hierarchy spread over the bytes, the launch floor of ``timing`` on a GPU with one,
    the fp64 (``precision``) SIMT peak for ``flops_per_slot`` FLOPs per stored slot (8
    for a complex matrix).

    >>> from sparsroof.hardware.library import load_spec
    >>> p = sol_prices(load_spec("c2050"))   # 768 KiB of L2, then 144 GB/s of GDDR5
    >>> w = 4_595_680.0
    >>> round(p.at(w)["csr"].u * w * 1e6, 2)   # (W - 786,432 B) / 144 GB/s
    26.45
    >>> round(sol_prices(load_spec("c2050"), timing="cold").at(w)["csr"].u * w * 1e6, 2)
    31.91
    """
    from ..model.bound import credited, entry_peak, memory_terms

    peak = entry_peak(spec, "simt", precision) if ("simt", precision) in spec.peaks else 0.0
    launches = 1 if spec.kind == "gpu" and spec.launch_overhead else 0
    floor = launches * launch_floor(spec, timing, calls_per_sync)[0]
    z = flops_per_slot / peak if peak else 0.0

    def at(w: float) -> dict[str, CostModel]:
        if w <= 0:
            rate = 1 / spec.dram.bandwidth.value
        else:
            terms = memory_terms(spec, w, credited(w, timing))
            rate = max(t for _, t in terms) / w
        return {f: CostModel(0.0, rate, 0.0, 0.0, z, floor) for f in DP_FORMATS}

    return Prices("sol", at)


def calibrated_prices(calibration: Any, targets: Mapping[str, float], block: int = 4
                      ) -> Prices:
    """Prices from a host calibration's fits (:mod:`sparsroof.host.calibration`): the
    constant, the cost per row, per slot and per byte at the level that holds W, for the
    formats it calibrated; ``targets`` are its whole-matrix predictions by storage."""
    def at(w: float) -> dict[str, CostModel]:
        level = calibration.level_of(w)
        out = {}
        for f in DP_FORMATS:
            fit = calibration.fits.get(storage_name(f, block))
            if fit is not None:
                c = fit.coefficients
                out[f] = CostModel(c["constant"], c.get(f"bytes@{level}", 0.0), c["rows"],
                                   c["slots"], 0.0)
        return out

    return Prices("calibrated", at, {f: targets[storage_name(f, block)] for f in DP_FORMATS
                                     if storage_name(f, block) in targets})


@dataclass(frozen=True)
class Block:
    first_strip: int
    last_strip: int  # inclusive
    first_row: int
    last_row: int  # exclusive
    storage: str
    seconds: float
    bytes: float = 0.0  # A, y and the block's share of x


@dataclass(frozen=True)
class Advice:
    strip_rows: int  # the grid: blocks start and end on multiples of it
    n_strips: int
    blocks: tuple[Block, ...]
    total_s: float
    best_single: str
    best_single_s: float
    route: str = "sol"  # "sol" or "calibrated"
    single_s: dict[str, float] = field(default_factory=dict)  # each format, one block
    max_block: int = 0  # the longest block the program considered, in strips
    capped: bool = False  # max_block was cut to BLOCK_CAP (the matrix has more strips)
    strip_rule: str = ""  # how the strips were sized, in words (partition.strip_rule)

    @property
    def gain(self) -> float:
        """Predicted speedup of the partition over the best single format (>= 1)."""
        return self.best_single_s / self.total_s if self.total_s else 1.0

    @property
    def bytes_total(self) -> float:
        return sum(b.bytes for b in self.blocks)


Parts = list[tuple[int, int, str]]


def _priced(st: Strips, parts: Parts, at: Callable[[float], dict[str, CostModel]],
            s_v: int, s_i: int, xpr: float) -> tuple[list[tuple[float, float]], float]:
    """[(seconds, bytes)] of each block of ``parts`` at the rate of its own working set W
    (the sum of the blocks' bytes), and W."""
    ones = at(1.0)  # the bytes do not depend on the rate
    w = sum(block_price(st, i, j, f, ones[f], s_v, s_i, xpr)[1] for i, j, f in parts)
    models = at(w)
    out = [block_price(st, i, j, f, models[f], s_v, s_i, xpr)[:2] for i, j, f in parts]
    return out, w


def _merged(st: Strips, parts: Parts, models: dict[str, CostModel], s_v: int, s_i: int,
            xpr: float) -> Parts:
    """``parts`` with each run of neighbours in one format joined where the joined block
    costs no more than its pieces."""
    out: Parts = []
    for i, j, f in parts:
        if out and out[-1][2] == f:
            a = out[-1][0]
            apart = (block_price(st, a, i - 1, f, models[f], s_v, s_i, xpr)[0]
                     + block_price(st, i, j, f, models[f], s_v, s_i, xpr)[0])
            if block_price(st, a, j, f, models[f], s_v, s_i, xpr)[0] <= apart * (1 + 1e-12):
                out[-1] = (a, j, f)
                continue
        out.append((i, j, f))
    return out


def _with_core(prices: Prices, st: Strips, s_v: int, s_i: int, xpr: float
               ) -> Callable[[float], dict[str, CostModel]]:
    """``prices.at`` with each calibrated format's residual per slot added (see the
    module docstring); the SoL prices as they are."""
    if not prices.targets:
        return prices.at
    n = st.rows.size
    core = {}
    for f, target in prices.targets.items():
        plain = _priced(st, [(0, n - 1, f)], prices.at, s_v, s_i, xpr)[0][0][0]
        slots = block_price(st, 0, n - 1, f, CostModel(0, 0, 0, 0, 0), s_v, s_i, xpr)[2]
        core[f] = (target - plain) / slots if slots else 0.0

    def at(w: float) -> dict[str, CostModel]:
        return {f: replace(c, w=c.w + core.get(f, 0.0)) for f, c in prices.at(w).items()}

    return at


def advise(m: Matrix, prices: Prices, *, size: int, s_v: int | None = None, s_i: int = 4,
           block: int = 4, max_block: int | None = None, x_bytes: float = 0.0) -> Advice:
    """The best partition of ``m`` into blocks of strips of ``size`` rows against the best
    single format, all priced by ``prices`` (see the module docstring). ``max_block``:
    the longest block the program considers (default: every block, up to
    :data:`BLOCK_CAP` strips). The blocks share the ``x_bytes`` of x by rows. ``s_v``:
    bytes of a value, by default an fp64 of the file's field (two for a complex one)."""
    from ..model.traffic import value_terms

    if s_v is None:
        s_v = value_terms("fp64", m.header.complex_values)[0]
    st = strips(m, size, block)
    n = st.rows.size
    xpr = x_bytes / max(m.rows, 1)
    capped = max_block is None and n > BLOCK_CAP
    limit = max(1, min(n, BLOCK_CAP) if max_block is None else max_block)
    at = _with_core(prices, st, s_v, s_i, xpr)
    names = list(at(1.0))
    single: dict[str, tuple[float, float]] = {}
    for f in names:
        single[f] = _priced(st, [(0, n - 1, f)], at, s_v, s_i, xpr)[0][0]
    best = min(names, key=lambda f: single[f])  # on a tie (a launch floor), fewer bytes
    w, parts, seen = single[best][1], [(0, n - 1, best)], []
    for _ in range(SEARCH_ROUNDS):
        found, _ = partition(st, at(w), s_v, s_i, limit, xpr)
        parts = [(i, j, f) for i, j, f, _ in found]
        if parts in seen:
            break
        seen.append(parts)
        w = _priced(st, parts, at, s_v, s_i, xpr)[1]
    parts = _merged(st, parts, at(w), s_v, s_i, xpr)
    priced, w = _priced(st, parts, at, s_v, s_i, xpr)
    total = sum(t for t, _ in priced)
    if single[best][0] <= total:
        parts, priced, total = [(0, n - 1, best)], [single[best]], single[best][0]
    blocks = tuple(Block(i, j, i * size, min((j + 1) * size, m.rows),
                         storage_name(f, block), t, b)
                   for (i, j, f), (t, b) in zip(parts, priced, strict=True))
    return Advice(size, n, blocks, total, storage_name(best, block), single[best][0],
                  prices.route, {storage_name(f, block): t for f, (t, _) in single.items()},
                  limit, capped)


@dataclass(frozen=True)
class FormatRow:
    """One storage format of the whole matrix: bytes, work, predicted times."""

    storage: str
    bytes_total: float
    flops_useful: float
    flops_executed: float
    sol_s: float
    calibrated_s: float | None


def format_rows(s: Any, spec: HwSpec, calibrated: dict[str, float] | None = None,
                dtype: str = "fp64", timing: str = DEFAULT_TIMING,
                complex_values: bool = False) -> list[FormatRow]:
    """Every storage format of SpMV for structure ``s``, fastest first: the calibrated
    ones (``calibrated``: seconds per storage) by calibrated time, then the rest by SoL
    (the bound for any kernel, for runs timed by ``timing``); among equal times (a launch
    floor), the one that moves fewer bytes first, as the advisor picks it.
    ``complex_values``: a complex matrix (see :mod:`sparsroof.model.traffic`)."""
    from ..model.bound import bound
    from ..model.traffic import STORAGES, traffic

    rows = []
    for storage in STORAGES:
        if storage in ("nm", "dense"):
            continue
        t = traffic(s, kernel="spmv", width=1, storage=storage, model="compulsory",
                    dtype=dtype, index="int32", complex_values=complex_values)
        if t is None:
            continue
        b = bound(t, spec, unit="simt", precision=dtype, timing=timing)
        rows.append(FormatRow(storage, t.bytes_total, t.flops_useful, t.flops_executed,
                              b.sol_s, (calibrated or {}).get(storage)))
    return sorted(rows, key=lambda r: (r.calibrated_s is None, r.calibrated_s or r.sol_s,
                                       r.bytes_total))


def prediction(spec: HwSpec, s: Any, rows: list[FormatRow], calibration: Any = None,
               timing: str = DEFAULT_TIMING, complex_values: bool = False
               ) -> tuple[int, Prices, float]:
    """(rows per strip, the prices of every candidate, bytes of x read once) from the SoL
    model for runs timed by ``timing``, or from ``calibration`` when given; a complex
    matrix (``complex_values``) has values of two fp64 and 8 FLOPs per slot."""
    from ..model.traffic import value_terms

    csr = next(r for r in rows if r.storage == "csr")
    size = strip_rows(spec, csr.bytes_total / max(s.rows, 1))
    s_v, fma = value_terms("fp64", complex_values)
    x_bytes = s.nonempty_cols * s_v
    if calibration is not None and any(storage_name(f, 4) in calibration.fits
                                       for f in DP_FORMATS):  # else it prices none of them
        targets = {r.storage: r.calibrated_s for r in rows if r.calibrated_s is not None}
        return size, calibrated_prices(calibration, targets), x_bytes
    return size, sol_prices(spec, "fp64", timing, flops_per_slot=fma), x_bytes
