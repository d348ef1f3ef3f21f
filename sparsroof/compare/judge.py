"""Bound each measured run and judge it: % of the speed of light, which term bound it, and
whether the run was faster than the bound (a violation: a bound is a promise that no real
run beats it, so the model or the spec is wrong for that run).

The bound is the optimistic one ``analyze`` prints (compulsory traffic of B: each row of B
the matrix references read once), for the run's format, width and precision, with the
spec's launch floor and cache roofs.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis import Config, MatrixInfo, analyze_structure, needs_pattern
from ..errors import OptionError, SparsroofError, SpecError
from ..hardware.library import load_spec
from ..hardware.spec import HwSpec
from ..matrix.mtx import load
from ..model.bound import Bound
from ..model.timing import DEFAULT_TIMING, check_timing
from ..structure.features import Structure, measure
from ..units import si
from .runs import MeasuredRun, RowError
from .verdict import BANDS, band, explain, is_violation, pct_sol, ratio, status

__all__ = ["BANDS", "Judged", "Summary", "judge", "summarise"]


@dataclass(frozen=True, slots=True)
class Judged:
    """One measured run beside its bound (seconds, bytes)."""

    run: MeasuredRun
    spec: str
    matrix: str
    stored_entries: int
    bytes_total: float
    flops_useful: float
    flops_executed: float
    bound: Bound

    @property
    def ratio(self) -> float | None:
        """Measured time over the bound (1 = at the speed of light, < 1 = violation); None
        for a bound of zero and for a product with nothing to compute."""
        return None if self.band == "empty" else ratio(self.run.time_s, self.bound.sol_s)

    @property
    def pct_sol(self) -> float:
        """The bound as a share of the measured time, in % (100 = at the speed of light)."""
        return pct_sol(self.run.time_s, self.bound.sol_s)

    @property
    def violation(self) -> bool:
        return is_violation(self.run.time_s, self.bound.sol_s)

    @property
    def status(self) -> str:
        return status(self.run.time_s, self.bound.sol_s)

    @property
    def band(self) -> str:
        return band(self.bound, self.flops_executed)

    def term(self) -> str:
        """The binding term in words: 'memory: 325 kB at L2 2.82 TB/s'."""
        b = self.bound
        if b.bound == "launch":
            return f"launch: one kernel takes at least {si(b.launch_s, 's')} on {self.spec}"
        if b.bound == "compute":
            return f"compute: {b.unit} {b.precision} at {si(b.peak_flops, 'FLOP/s')}"
        return (f"memory: {si(self.bytes_total, 'B')} at {b.memory_level} "
                f"{si(b.bandwidth, 'B/s')}")

    def explanation(self) -> str:
        """Why a violation is one: the run, its bound and the term that set it."""
        return explain(f"{self.run.source}: {self.matrix} {self.run.storage} "
                       f"d={self.run.width} {self.run.dtype}", self.run.time_s,
                       self.bound.sol_s, self.spec, self.term())


@dataclass(frozen=True)
class Summary:
    count: int
    violations: int
    errors: int
    pct_sol_quartiles: tuple[float, float, float] | None  # q1, median, q3
    #: band -> (runs, median measured/bound; None for the empty band and where every bound
    #: is zero)
    bands: dict[str, tuple[int, float | None]]

    def to_dict(self) -> dict[str, Any]:
        q = self.pct_sol_quartiles
        return {"count": self.count, "violations": self.violations, "errors": self.errors,
                "pct_sol_q1": q[0] if q else None, "pct_sol_median": q[1] if q else None,
                "pct_sol_q3": q[2] if q else None,
                "bands": {k: {"runs": n, "median_measured_over_bound": r}
                          for k, (n, r) in self.bands.items()}}


def _quartiles(values: Sequence[float]) -> tuple[float, float, float] | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def summarise(judged: Sequence[Judged], errors: int = 0) -> Summary:
    """Counts, quartiles of % of SoL (of the runs that compute something), and the median
    measured/bound per band.

    >>> summarise([]).to_dict()["pct_sol_median"] is None
    True
    """
    bands = {}
    for name in BANDS:
        runs = [j for j in judged if j.band == name]
        ratios = [r for r in (j.ratio for j in runs) if r is not None]
        if runs:
            bands[name] = (len(runs), statistics.median(ratios) if ratios else None)
    return Summary(len(judged), sum(j.violation for j in judged), errors,
                   _quartiles([j.pct_sol for j in judged if j.band != "empty"]), bands)


#: a spec by name or path, with the measured roofs of a calibration file (or None) applied
SpecLoader = Callable[[str, str | None], HwSpec]


def _plain_spec(name: str, calibration: str | None) -> HwSpec:
    if calibration is not None:
        raise SpecError(calibration, "a calibration needs a spec loader that applies it")
    return load_spec(name)


def _once(table: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """``make()`` for ``key``, computed once: a failure is kept and raised again for the
    next run that needs it (a million runs of one broken matrix read it once)."""
    if key not in table:
        try:
            table[key] = make()
        except SparsroofError as err:
            table[key] = err
    found = table[key]
    if isinstance(found, SparsroofError):
        raise found
    return found


class _Cache:
    """Specs, measured matrices and bounds, each worked out once."""

    def __init__(self, load_spec_with: SpecLoader) -> None:
        self.load_spec_with = load_spec_with
        self.specs: dict[tuple[str, str | None], HwSpec] = {}
        self.matrices: dict[tuple[str, bool], tuple[MatrixInfo, Structure]] = {}
        self.bounds: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def spec(self, name: str, calibration: str | None) -> HwSpec:
        return _once(self.specs, (name, calibration),
                     lambda: self.load_spec_with(name, calibration))

    def matrix(self, path: str, pattern: bool) -> tuple[MatrixInfo, Structure]:
        """The matrix's summary and structure, with the pattern features where a format
        (DIA, BSR, N:M) needs them."""
        def make() -> tuple[MatrixInfo, Structure]:
            m = load(path, values=False)
            s = measure(m, pattern=pattern)
            return (MatrixInfo(m.name, m.path, m.rows, m.cols, s.stored_entries,
                               s.numeric_nonzeros, s.density, m.header.field,
                               m.header.symmetry), s)

        return _once(self.matrices, (path, pattern), make)


def _bound(run: MeasuredRun, hw: str, calibration: str | None, cache: _Cache, timing: str,
           calls_per_sync: int) -> tuple[Any, ...]:
    """What :class:`Judged` holds beside the run: spec, matrix, entries, bytes, FLOPs and
    the bound."""
    spec = cache.spec(run.hw or hw, run.calibration or calibration)
    # a measured HYB was split by its library's own rule: bound the split that reads least
    method = run.timing or timing
    per_sync = run.calls_per_sync or calls_per_sync
    config = Config(kernel=run.kernel, widths=(run.width,), dtype=run.dtype,
                    storages=(run.storage,), models=("compulsory",), hyb_split="least",
                    timing=method, calls_per_sync=per_sync if method == "sync" else 1)
    info, s = cache.matrix(run.matrix, needs_pattern(config))
    result = analyze_structure(info, s, spec, config).results[0]
    t = result.traffic
    return (spec.name, info.name, info.stored_entries, t.bytes_total, t.flops_useful,
            t.flops_executed, result.bound)


def _judge_one(run: MeasuredRun, hw: str, calibration: str | None, cache: _Cache,
               timing: str, calls_per_sync: int) -> Judged:
    # runs of one matrix, spec and configuration share one bound (and its memory)
    key = (run.matrix, run.hw or hw, run.calibration or calibration, run.kernel, run.width,
           run.dtype, run.storage, run.timing or timing, run.calls_per_sync)
    found = _once(cache.bounds, key,
                  lambda: _bound(run, hw, calibration, cache, timing, calls_per_sync))
    return Judged(run, *found)


def judge(runs: Iterable[MeasuredRun], hw: str | HwSpec,
          progress: Callable[[str], None] | None = None, *,
          calibration: str | None = None, load_spec_with: SpecLoader = _plain_spec,
          timing: str = DEFAULT_TIMING, calls_per_sync: int = 1
          ) -> tuple[list[Judged], list[RowError]]:
    """Each run beside its bound on its own spec (``hw`` where the run names none), with the
    measured roofs of its calibration (``calibration`` where the run names none), which
    ``load_spec_with`` applies, for the way it was timed (the run's own ``timing``, else
    ``timing`` with ``calls_per_sync`` calls per host synchronisation). A run whose matrix
    or spec cannot be read becomes an error; the others are still judged. ``hw`` is a
    spec's name or path, or a spec itself (then without a ``calibration``)."""
    check_timing(timing, calls_per_sync)
    cache = _Cache(load_spec_with)
    if isinstance(hw, HwSpec):
        if calibration is not None:
            raise OptionError("a calibration is applied to a spec read by name: give hw "
                              "as its name or path")
        cache.specs[(hw.name, None)] = hw
        hw = hw.name
    elif not isinstance(hw, str):
        raise OptionError(f"hw: one spec, by name, path or HwSpec (a run may name its own), "
                          f"not {type(hw).__name__}")
    if isinstance(runs, (str, bytes)) or not hasattr(runs, "__iter__"):
        raise OptionError(f"runs: MeasuredRun objects (read_runs reads a file of them), not "
                          f"{type(runs).__name__}")
    judged: list[Judged] = []
    errors: list[RowError] = []
    for run in runs:
        if not isinstance(run, MeasuredRun):
            raise OptionError(f"runs: MeasuredRun objects, not {type(run).__name__}")
        if progress:
            progress(f"{run.source}: {run.matrix}")
        try:
            judged.append(_judge_one(run, hw, calibration, cache, timing, calls_per_sync))
        except SparsroofError as err:
            errors.append(RowError(run.source, str(err)))
    return judged, errors
