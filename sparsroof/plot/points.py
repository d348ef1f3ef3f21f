"""What the roofline plots draw: one flat record per (matrix, width, format, model).

Records come from :class:`~sparsroof.analysis.Analysis` objects in memory, from the
JSON that ``sparsroof analyze --output json`` writes, or from the tables of results that
``analyze -O csv`` and ``batch --export`` write (:mod:`.tabular`), so that any tool
producing those documents can be drawn. Fields are read by name; anything else in the
input is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import FigureError
from ..model.ridgeline import RankBound
from ..userfile import read_json
from .tabular import TABLE_SUFFIXES, json_rows, read_table, table_points

__all__ = ["RoofPoint", "roof_points", "read_results", "read_distributed", "OPTIMISTIC",
           "PESSIMISTIC"]

#: the B-reuse models that bracket every other: perfect reuse and none
OPTIMISTIC = "compulsory"
PESSIMISTIC = "random"


@dataclass(frozen=True)
class RoofPoint:
    """One modelled kernel: where it sits on the roofline and in the time plane (SI)."""

    matrix: str
    kernel: str
    width: int
    storage: str
    model: str
    unit: str
    precision: str
    intensity: float  # useful FLOP per byte
    attainable_flops: float  # FLOP/s
    flops_useful: float
    flops_executed: float
    bytes_total: float
    compute_s: float
    memory_s: float
    launch_s: float
    sol_s: float
    bound: str
    memory_level: str
    peak_flops: float  # the roof this point was bounded by
    bandwidth: float
    role: str = ""  # the model's role: class, optimistic, pessimistic, measured or ""


_TRAFFIC = ("kernel", "width", "storage", "model", "intensity", "flops_useful",
            "flops_executed", "bytes_total")
_BOUND = ("unit", "precision", "attainable_flops", "compute_s", "memory_s", "launch_s",
          "sol_s", "bound", "memory_level", "peak_flops", "bandwidth")


def roof_points(analyses: Iterable[Any]) -> list[RoofPoint]:
    """Flatten analyses (objects with ``matrix.name`` and ``results``) into points."""
    points = []
    for a in analyses:
        for r in a.results:
            t, b = r.traffic, r.bound
            values = {k: getattr(t, k) for k in _TRAFFIC}
            values |= {k: getattr(b, k) for k in _BOUND}
            points.append(RoofPoint(matrix=a.matrix.name, role=r.role, **values))
    return points


def _field(source: str, where: str, record: Any, key: str) -> Any:
    if not isinstance(record, dict) or key not in record:
        raise FigureError(f"{source}: {where}: missing {key!r}")
    return record[key]


def _points_of(source: str, doc: dict[str, Any]) -> list[tuple[RoofPoint, str]]:
    matrices = doc.get("matrices")
    if not isinstance(matrices, list):
        raise FigureError(f"{source}: expected the JSON of 'sparsroof analyze --output json' "
                          "(no 'matrices' list)")
    points = []
    for i, m in enumerate(matrices):
        where = f"matrices[{i}]"
        name = _field(source, where, _field(source, where, m, "matrix"), "name")
        spec = str(m.get("spec") or "")
        for j, r in enumerate(_field(source, where, m, "results")):
            at = f"{where}.results[{j}]"
            t = _field(source, at, r, "traffic")
            b = _field(source, at, r, "bound")
            values = {k: _field(source, f"{at}.traffic", t, k) for k in _TRAFFIC}
            values |= {k: _field(source, f"{at}.bound", b, k) for k in _BOUND}
            points.append((RoofPoint(matrix=str(name), role=str(r.get("role") or ""),
                                     **values), spec))
    return points


def read_results(path: str | Path, spec: str | None = None
                 ) -> tuple[list[RoofPoint], str | None]:
    """Points and spec name from saved results at ``path``: the JSON of ``analyze -O
    json``, the CSV of ``analyze -O csv``, or an export of ``batch --export`` (CSV,
    Parquet or JSON). Results of several specs keep only those of ``spec`` (a spec's
    name), which must then be one of them."""
    source = str(path)
    if Path(path).suffix.lower() in TABLE_SUFFIXES:
        pairs = [(RoofPoint(**fields), spec) for fields, spec in read_table(path)]
    else:
        doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
        if not isinstance(doc, dict):
            raise FigureError(f"{source}: expected a JSON object")
        if doc.get("kind") == "batch":
            pairs = [(RoofPoint(**fields), spec) for fields, spec in
                     table_points(source, json_rows(source, doc.get("rows")))]
        else:
            pairs = _points_of(source, doc)
    if not pairs:
        raise FigureError(f"{source}: no results to plot")
    return _of_one_spec(source, pairs, spec)


def _of_one_spec(source: str, pairs: list[tuple[RoofPoint, str]], spec: str | None
                 ) -> tuple[list[RoofPoint], str | None]:
    """The points of the one spec the results hold, or of ``spec`` among several."""
    specs = sorted({s for _, s in pairs if s})
    if len(specs) <= 1:
        return [p for p, _ in pairs], (specs[0] if specs else None)
    if spec not in specs:
        raise FigureError(f"{source}: results of {len(specs)} specs ({', '.join(specs)}): "
                          "pass --hw with one of them to draw its results")
    return [p for p, s in pairs if s == spec], spec


def read_distributed(path: str | Path) -> list[tuple[str, str, list[RankBound]]]:
    """(matrix name, spec, rank bounds) of every matrix of an analyze JSON document that
    holds distributed results (``analyze --ranks``), in the order of the document."""
    source = str(path)
    doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
    matrices = doc.get("matrices") if isinstance(doc, dict) else None
    if not isinstance(matrices, list):
        raise FigureError(f"{source}: expected the JSON of 'sparsroof analyze --output json' "
                          "(no 'matrices' list)")
    names = {f.name for f in fields(RankBound)}
    found = []
    for i, m in enumerate(matrices):
        rows = m.get("distributed") if isinstance(m, dict) else None
        if not rows:
            continue
        where = f"matrices[{i}]"
        name = str(_field(source, where, _field(source, where, m, "matrix"), "name"))
        try:
            bounds = [RankBound(**{k: v for k, v in r.items() if k in names}) for r in rows]
        except (TypeError, AttributeError):
            raise FigureError(f"{source}: {where}.distributed: expected the rank bounds "
                              "of 'sparsroof analyze --ranks'") from None
        found.append((name, str(m.get("spec", "")), bounds))
    return found


def common(points: Sequence[RoofPoint], attr: str, source: str = "results") -> str:
    """The one value of ``attr`` shared by every point (precision, unit, kernel)."""
    values = sorted({str(getattr(p, attr)) for p in points})
    if len(values) != 1:
        raise FigureError(f"{source}: results mix {attr}s {', '.join(values)}; "
                          "plot them separately")
    return values[0]
