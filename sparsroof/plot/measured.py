"""Measured runs beside their bound, for the figures: each run is its bound as a
:class:`~sparsroof.plot.points.RoofPoint` plus the time it took.

Runs come from judged runs in memory (:func:`sparsroof.compare.judge`), from the JSON of
``sparsroof compare -O json`` (read as it is), or from anything ``compare`` reads (a CSV of
times, ``bench -O json``, Ginkgo's JSON), which is judged here first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compare import Judged, judge, read_runs
from ..errors import FigureError
from ..userfile import finite_numbers, read_json
from .points import OPTIMISTIC, RoofPoint, roof_point

__all__ = ["MeasuredPoint", "measured_points", "read_measured", "measured_spec", "other_specs"]


@dataclass(frozen=True)
class MeasuredPoint:
    """One measured run: where its bound sits and how long the run took (SI)."""

    bound: RoofPoint
    measured_s: float
    spec: str
    source: str
    implementation: str = ""  # the code that ran, where the runs say

    @property
    def ratio(self) -> float:
        """Measured time over the bound (1 = at the speed of light, < 1 = violation)."""
        return self.measured_s / self.bound.sol_s if self.bound.sol_s > 0 else float("inf")

    @property
    def violation(self) -> bool:
        return self.measured_s < self.bound.sol_s

    @property
    def measured_flops(self) -> float:
        """Useful FLOP/s the run reached: its place on the roofline, below its bound."""
        return self.bound.flops_useful / self.measured_s

    def time_scale(self, seconds: float) -> float:
        """Factor that moves the bound's (memory time, compute time) onto the iso-time
        curve max(t_m, t_c) = ``seconds``, keeping their ratio (0 if neither is positive).

        With ``seconds`` the bound's SoL time a launch-bound run moves out to the edge of
        the launch square; with the measured time, to where the run is.
        """
        longest = max(self.bound.memory_s, self.bound.compute_s)
        return seconds / longest if longest > 0 else 0.0


def measured_points(judged: Iterable[Judged]) -> list[MeasuredPoint]:
    """Judged runs as measured points (the bound is the optimistic one ``compare`` uses)."""
    out = []
    for j in judged:
        b = j.bound
        point = RoofPoint(
            matrix=j.matrix, kernel=j.run.kernel, width=j.run.width, storage=j.run.storage,
            model=OPTIMISTIC, unit=b.unit, precision=b.precision,
            intensity=j.flops_useful / j.bytes_total if j.bytes_total else 0.0,
            attainable_flops=b.attainable_flops, flops_useful=j.flops_useful,
            flops_executed=j.flops_executed, bytes_total=j.bytes_total,
            compute_s=b.compute_s, memory_s=b.memory_s, launch_s=b.launch_s,
            sol_s=b.sol_s, bound=b.bound, memory_level=b.memory_level,
            peak_flops=b.peak_flops, bandwidth=b.bandwidth)
        out.append(MeasuredPoint(point, j.run.time_s, j.spec, j.run.source,
                                 j.run.implementation))
    return out


#: a compare JSON run's field -> the RoofPoint field it fills
_RECORD = {"matrix": "matrix", "kernel": "kernel", "d": "width", "format": "storage",
           "unit": "unit", "precision": "precision", "attainable_flops": "attainable_flops",
           "flops_useful": "flops_useful", "flops_executed": "flops_executed",
           "bytes_total": "bytes_total", "compute_s": "compute_s", "memory_s": "memory_s",
           "launch_s": "launch_s", "bound_s": "sol_s", "bound": "bound",
           "memory_level": "memory_level", "peak_flops": "peak_flops",
           "bandwidth": "bandwidth"}


def _from_record(source: str, i: int, r: Any) -> MeasuredPoint:
    where = f"{source}: runs[{i}]"
    if not isinstance(r, dict):
        raise FigureError(f"{where}: expected an object")
    missing = [k for k in (*_RECORD, "measured_s", "spec") if k not in r]
    if missing:
        raise FigureError(f"{where}: missing {', '.join(missing)} (write it with this "
                          "version's 'sparsroof compare -O json')")
    def fail(problem: str) -> FigureError:
        return FigureError(f"{source}: {problem}")

    checked = finite_numbers(r, ("flops_useful", "bytes_total", "measured_s"), fail,
                             where=f"runs[{i}]", minimum=0)
    if checked["measured_s"] == 0:
        raise FigureError(f"{where}: field 'measured_s' is 0, expected a positive time")
    flops, nbytes = checked["flops_useful"], checked["bytes_total"]
    values = {field: r[key] for key, field in _RECORD.items()}
    point = roof_point(values | {"model": OPTIMISTIC,
                                 "intensity": flops / nbytes if nbytes else 0.0},
                       source, f"runs[{i}]")
    return MeasuredPoint(point, checked["measured_s"], str(r["spec"]),
                         str(r.get("source", where)), str(r.get("implementation") or ""))


def read_measured(path: str | Path, *, hw: str = "a100", time_unit: str = "s"
                  ) -> list[MeasuredPoint]:
    """Measured points from ``path``: a ``compare -O json`` document as it is; any other
    file ``compare`` reads is judged first (``hw`` for runs that name no spec). A file of
    row that cannot be judged is an error naming it (and counting the others)."""
    source = str(path)
    doc = None
    if source.lower().endswith(".json"):
        doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
    if isinstance(doc, dict) and doc.get("kind") == "compare":
        points = [_from_record(source, i, r) for i, r in enumerate(doc.get("runs") or [])]
    else:
        runs, errors = read_runs(source, time_unit=time_unit)
        judged, more = judge(runs, hw)
        # a note (a column not read, a format with no model) is no error of a run
        errors = [e for e in (*errors, *more) if not e.skipped]
        if errors:  # a figure of some of the runs would hide the others
            rest = (f" (and {len(errors) - 1} more: 'sparsroof compare {source}' lists "
                    "them)" if len(errors) > 1 else "")
            raise FigureError(f"{errors[0]}{rest}")
        points = measured_points(judged)
    if not points:
        raise FigureError(f"{source}: no measured run could be judged "
                          "(run 'sparsroof compare' on it to see why)")
    return points


def measured_spec(points: Sequence[MeasuredPoint], source: str = "measured runs") -> str:
    """The one spec every run was bounded on: a figure's ceilings belong to one device."""
    specs = sorted({p.spec for p in points})
    if len(specs) != 1:
        raise FigureError(f"{source}: runs were bounded on {', '.join(specs)}; "
                          "plot each spec's runs separately")
    return specs[0]


def other_specs(points: Sequence[MeasuredPoint], spec: str) -> list[str]:
    """The specs, other than ``spec``, that some of ``points`` were bounded on (a figure
    of ``spec`` cannot draw them)."""
    return sorted({p.spec for p in points} - {spec})
