"""Running a budget: model every check's matrices, then judge each limit.

Each check's matrices are modelled with :func:`sparsroof.analysis.analyze` at every width;
each (matrix, width) is a :class:`Point` and each limit on it an :class:`Outcome` with its
value, limit, margin and status. The margin is the relative headroom, positive when the
limit is met::

    max limits: (limit − value) / limit        min limits: (value − limit) / limit

A measured time below the SoL is physically impossible under the model: its status is
``impossible`` (a model or a measurement error), which fails the run like an exceeded limit.
A baseline fails a point whose SoL latency or bytes moved grew by more than the tolerance.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from ..analysis import analyze
from ..errors import BudgetError, MatrixFileError, OptionError
from ..matrix.mtx import Matrix, load
from ..model.timing import describe
from .budget import LIMITS, Budget, Check, Limit
from .inputs import (
    BASELINE_CONFIG,
    MeasuredTimes,
    load_baseline,
    load_measured,
)

__all__ = [
    "PASS",
    "FAIL",
    "IMPOSSIBLE",
    "BASELINE_LIMITS",
    "METRICS",
    "Point",
    "Outcome",
    "CheckReport",
    "margin",
    "parse_tolerance",
    "run_checks",
]

PASS, FAIL, IMPOSSIBLE = "pass", "fail", "impossible"

#: the two comparisons a baseline adds to every point it has an entry for
BASELINE_LIMITS: dict[str, Limit] = {lim.key: lim for lim in (
    Limit("baseline_sol_latency", "SoL latency vs baseline", "s", "max"),
    Limit("baseline_bytes_moved", "bytes moved vs baseline", "B", "max"),
)}
METRICS: dict[str, Limit] = {**LIMITS, **BASELINE_LIMITS}


@dataclass(frozen=True)
class Point:
    """One check's model of one matrix at one width (SI units)."""

    check: str
    matrix: str
    path: str
    spec: str
    kernel: str
    width: int
    dtype: str
    index: str
    storage: str
    model: str
    unit: str
    sol_s: float
    bytes_total: float
    attainable_flops: float
    bound: str
    dense_sol_s: float | None

    @property
    def speedup_over_dense(self) -> float:
        """Dense GEMM SoL over sparse SoL on the same device (> 1: sparsity pays); NaN
        when the spec has no peak for the dense baseline."""
        if self.dense_sol_s is None:
            return float("nan")
        return self.dense_sol_s / self.sol_s if self.sol_s > 0 else float("inf")


@dataclass(frozen=True)
class Outcome:
    """One limit judged on one point."""

    check: str
    line: int | None
    matrix: str
    width: int
    key: str  # a key of METRICS
    value: float | str
    limit: float | str
    margin: float | None  # relative headroom; None for a bound name or a zero limit
    status: str  # PASS, FAIL or IMPOSSIBLE
    reference: float | None = None  # the measured seconds, or the baseline's value


@dataclass(frozen=True)
class CheckReport:
    budget: str
    specs: tuple[str, ...]
    points: tuple[Point, ...]
    outcomes: tuple[Outcome, ...]
    notes: tuple[str, ...]

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """0 when every outcome passes, 1 when any limit is exceeded or impossible."""
        return 0 if all(o.status == PASS for o in self.outcomes) else 1


def margin(value: float, limit: float, direction: str) -> float | None:
    """Relative headroom of ``value`` against ``limit``: positive passes, negative fails.

    >>> round(margin(12e-6, 15e-6, "max"), 6), round(margin(150e9, 100e9, "min"), 6)
    (0.2, 0.5)
    """
    if limit == 0:
        return None
    return (limit - value) / limit if direction == "max" else (value - limit) / limit


def parse_tolerance(text: str) -> float:
    """A tolerance written as ``"5%"`` or ``"0.05"`` (zero allowed). A bare number of 1
    or more is refused: ``5`` is 500 % as a fraction, and most likely meant 5 %.

    >>> parse_tolerance("5%"), parse_tolerance("0"), parse_tolerance("150%")
    (0.05, 0.0, 1.5)
    """
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1]) / 100 if percent else float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise OptionError(f"--tolerance {text!r} is not a percentage such as '5%' or a "
                          "fraction such as 0.05")
    if not percent and value >= 1:
        raise OptionError(f"--tolerance {text!r}: a fraction of {value:g} is "
                          f"{100 * value:g} %; write '{raw}%' for {raw} %, or a fraction "
                          "below 1")
    return value


def _judge(check: Check, key: str, p: Point, value: float | str, limit: float | str,
           reference: float | None = None) -> Outcome:
    direction = METRICS[key].direction
    if direction == "equal" or isinstance(value, str) or isinstance(limit, str):
        ok, room = value == limit, None
    else:
        ok = value <= limit if direction == "max" else value >= limit
        room = margin(value, limit, direction)
    return Outcome(check.name, check.line, p.matrix, p.width, key, value, limit, room,
                   PASS if ok else FAIL, reference)


def _fraction(check: Check, p: Point, limit: float, measured: MeasuredTimes | None,
              source: str) -> Outcome:
    config = check.config
    wanted: dict[str, Any] = {"kernel": p.kernel, "format": p.storage, "dtype": p.dtype,
                              "hw": p.spec, "timing": config.timing}
    if config.timing == "sync":
        wanted["calls_per_sync"] = config.calls_per_sync
    seconds = None if measured is None else measured.seconds(p.matrix, p.width, wanted)
    other = None if measured is None or seconds is not None \
        else measured.timed_otherwise(p.matrix, p.width, wanted)
    if other is not None:
        raise BudgetError(source, f"matrix {p.matrix!r} {p.storage} {p.dtype} d={p.width} "
                          f"was timed {describe(other.timing or '', other.calls_per_sync or 1)}"
                          f", and the check bounds runs timed "
                          f"{describe(config.timing, config.calls_per_sync)}: set the "
                          "check's 'timing' (and 'calls_per_sync') to how the runs were "
                          "timed", check.name, "timing")
    if seconds is None:
        raise BudgetError(source, f"no measured time for matrix {p.matrix!r}, kernel "
                          f"{p.kernel}, width {p.width}", check.name,
                          "limits.min_fraction_of_sol")
    outcome = _judge(check, "min_fraction_of_sol", p, p.sol_s / seconds, limit, seconds)
    if seconds < p.sol_s:  # faster than the speed of light: the model or the timing is wrong
        return replace(outcome, status=IMPOSSIBLE)
    return outcome


def _limits(check: Check, p: Point, measured: MeasuredTimes | None, source: str
            ) -> list[Outcome]:
    values: dict[str, float | str] = {
        "max_sol_latency": p.sol_s, "min_attainable": p.attainable_flops,
        "min_speedup_over_dense": p.speedup_over_dense, "max_bytes_moved": p.bytes_total,
        "expected_bound": p.bound,
    }
    out = []
    for key, limit in check.limits:
        if key == "min_fraction_of_sol":
            out.append(_fraction(check, p, float(limit), measured, source))
        else:
            out.append(_judge(check, key, p, values[key], limit))
    return out


def _against_baseline(check: Check, p: Point, entry: dict[str, Any], tolerance: float,
                      source: str) -> list[Outcome]:
    for field in BASELINE_CONFIG:
        if entry[field] != getattr(p, field):
            raise BudgetError(source, f"matrix {p.matrix!r} width {p.width} was recorded with "
                              f"{field} {entry[field]!r}, the budget now says "
                              f"{getattr(p, field)!r}; record a new baseline with "
                              "--write-baseline", check.name)
    return [
        _judge(check, key, p, getattr(p, attr), entry[attr] * (1 + tolerance), entry[attr])
        for key, attr in (("baseline_sol_latency", "sol_s"),
                          ("baseline_bytes_moved", "bytes_total"))
    ]


class _Matrices:
    """Loads each matrix once and keeps it only while a later check still names it."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.uses = Counter(p for c in budget.checks for p in c.matrices)
        self.kept: dict[str, Matrix] = {}

    def get(self, check: Check, path: str) -> Matrix:
        self.uses[path] -= 1
        try:
            matrix = self.kept.pop(path) if path in self.kept else load(path, values=False)
        except MatrixFileError as err:
            raise BudgetError(self.budget.path, str(err), check.name, "matrices") from None
        if self.uses[path] > 0:
            self.kept[path] = matrix
        return matrix


def _points(check: Check, matrices: _Matrices) -> list[Point]:
    points = []
    for path in check.matrices:
        matrix = matrices.get(check, path)
        analysis = analyze(matrix, check.spec, check.config)
        for r in analysis.results:
            t, b = r.traffic, r.bound
            points.append(Point(
                check=check.name, matrix=matrix.name, path=matrix.path, spec=analysis.spec,
                kernel=t.kernel, width=t.width, dtype=t.dtype, index=t.index,
                storage=t.storage, model=t.model, unit=b.unit, sol_s=b.sol_s,
                bytes_total=t.bytes_total, attainable_flops=b.attainable_flops,
                bound=b.bound, dense_sol_s=r.dense_sol_s,
            ))
    return points


def _measured(budget: Budget) -> tuple[MeasuredTimes | None, list[str]]:
    users = [c for c in budget.checks if any(k == "min_fraction_of_sol" for k, _ in c.limits)]
    if users and budget.measured is None:
        raise BudgetError(budget.path, "needs measured results: set 'measured' in the budget "
                          "file or pass --measured", users[0].name, "limits.min_fraction_of_sol")
    if budget.measured is None:
        return None, []
    if not users:
        return None, [f"measured results {budget.measured} not used: no check sets "
                      "min_fraction_of_sol"]
    measured = load_measured(budget.measured)
    return measured, list(measured.notes)


def run_checks(budget: Budget, baseline: str | None = None,
               tolerance: float = 0.0) -> CheckReport:
    """Model and judge every check of ``budget``; compare with ``baseline`` when given."""
    measured, notes = _measured(budget)
    old = load_baseline(baseline) if baseline is not None else None
    matrices = _Matrices(budget)
    points: list[Point] = []
    outcomes: list[Outcome] = []
    for check in budget.checks:
        for p in _points(check, matrices):
            points.append(p)
            outcomes.extend(_limits(check, p, measured, budget.measured or budget.path))
            if old is None or baseline is None:
                continue
            entry = old.get((p.check, p.matrix, p.width))
            if entry is None:
                notes.append(f"{baseline}: no entry for check {p.check!r}, matrix "
                             f"{p.matrix!r}, width {p.width}: not compared")
            else:
                outcomes.extend(_against_baseline(check, p, entry, tolerance, baseline))
    specs = tuple(dict.fromkeys(c.spec.name for c in budget.checks))
    return CheckReport(budget.path, specs, tuple(points), tuple(outcomes), tuple(notes))
