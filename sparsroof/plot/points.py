"""What the roofline plots draw: one flat record per (matrix, width, format, model).

Records come from :class:`~sparsroof.analysis.Analysis` objects in memory, from the
JSON that ``sparsroof analyze --output json`` writes, or from the tables of results that
``analyze -O csv`` and ``batch --export`` write (:mod:`.tabular`), so that any tool
producing those documents can be drawn. Fields are read by name; anything else in the
input is ignored. Every point read from a file goes through :func:`roof_point`, which
checks each of its numbers: a missing field, null, NaN, an infinity, a string or a
negative value is one error naming the file, the record and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import FigureError
from ..model.ridgeline import RankBound
from ..userfile import finite_numbers, read_json
from .tabular import TABLE_SUFFIXES, json_rows, read_table, table_points

__all__ = ["RoofPoint", "roof_points", "roof_point", "read_results", "read_distributed",
           "rank_bound", "OPTIMISTIC", "PESSIMISTIC", "NUMBERS"]

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


#: the fields of a RoofPoint that hold numbers (all >= 0); ``width`` is a whole number
NUMBERS = tuple(f.name for f in fields(RoofPoint) if f.type in ("float", "int"))
_INTEGERS = ("width",)
#: the roofs a point was bounded by: a figure divides by them (the ridge point)
_RATES = ("peak_flops", "bandwidth")


def roof_point(values: Mapping[str, Any], source: str, where: str = "", *,
               from_text: bool = False) -> RoofPoint:
    """A :class:`RoofPoint` from a flat mapping of its fields read from ``source``: every
    number checked (see :func:`~sparsroof.userfile.finite_numbers`; ``from_text`` for
    the string cells of a CSV file), the other fields taken as text.

    >>> p = dict(matrix="a", kernel="spmv", width=1, storage="csr", model="compulsory",
    ...          unit="cuda", precision="fp64", intensity=0.1, attainable_flops=2e11,
    ...          flops_useful=2e3, flops_executed=2e3, bytes_total=2e4, compute_s=1e-9,
    ...          memory_s=1e-8, launch_s=0, sol_s=1e-8, bound="memory",
    ...          memory_level="HBM", peak_flops=1e13, bandwidth=2e12)
    >>> roof_point(p, "r.json").sol_s
    1e-08
    >>> roof_point(p | {"sol_s": float("nan")}, "r.json", "results[2]")
    Traceback (most recent call last):
    ...
    sparsroof.errors.FigureError: r.json: results[2]: field 'sol_s' is NaN, expected a finite number
    """
    numbers = finite_numbers(values, NUMBERS, lambda problem: FigureError(
        f"{source}: {problem}"), where=where, from_text=from_text, minimum=0,
        integers=_INTEGERS, positive=_RATES)
    texts: dict[str, Any] = {f.name: str(_field(source, where or "record", values, f.name))
                             for f in fields(RoofPoint)
                             if f.name not in numbers and f.name != "role"}
    return RoofPoint(**texts, **numbers, role=str(values.get("role") or ""))


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
    if not isinstance(record, dict):
        raise FigureError(f"{source}: {where}: expected an object, not "
                          f"{type(record).__name__}")
    if key not in record:
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
        results = _field(source, where, m, "results")
        if not isinstance(results, list):
            raise FigureError(f"{source}: {where}.results: expected a list of results, "
                              f"not {type(results).__name__}")
        for j, r in enumerate(results):
            at = f"{where}.results[{j}]"
            t = _field(source, at, r, "traffic")
            b = _field(source, at, r, "bound")
            values = {k: _field(source, f"{at}.traffic", t, k) for k in _TRAFFIC}
            values |= {k: _field(source, f"{at}.bound", b, k) for k in _BOUND}
            points.append((roof_point(values | {"matrix": name, "role": r.get("role")},
                                      source, at), spec))
    return points


def read_results(path: str | Path, spec: str | None = None
                 ) -> tuple[list[RoofPoint], str | None]:
    """Points and spec name from saved results at ``path``: the JSON of ``analyze -O
    json``, the CSV of ``analyze -O csv``, or an export of ``batch --export`` (CSV,
    Parquet or JSON). Results of several specs keep only those of ``spec`` (a spec's
    name), which must then be one of them."""
    source = str(path)
    if Path(path).suffix.lower() in TABLE_SUFFIXES:
        pairs = [(roof_point(fields, where), spec) for fields, spec, where in read_table(path)]
    else:
        doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
        if not isinstance(doc, dict):
            raise FigureError(f"{source}: expected a JSON object")
        if doc.get("kind") == "batch":
            pairs = [(roof_point(fields, where), spec) for fields, spec, where in
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
        if spec and specs and spec != specs[0]:
            raise other_spec(source, specs[0], spec)
        return [p for p, _ in pairs], (specs[0] if specs else None)
    if spec not in specs:
        raise FigureError(f"{source}: results of {len(specs)} specs ({', '.join(specs)}): "
                          "pass --hw with one of them to draw its results")
    return [p for p, s in pairs if s == spec], spec


def other_spec(source: str, bounded_on: str, asked: str) -> FigureError:
    """The error of results bounded on one spec drawn under another's ceilings: their
    points would sit where that spec's bounds do not put them."""
    return FigureError(f"{source}: the results are bounds on {bounded_on}, not {asked}: "
                       f"drop --hw, or compute them again with --hw {asked}")


def read_distributed(path: str | Path) -> list[tuple[str, str, list[RankBound]]]:
    """(matrix name, spec, rank bounds) of every matrix of an analyze JSON document that
    holds distributed results (``analyze --ranks``), in the order of the document."""
    source = str(path)
    doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
    matrices = doc.get("matrices") if isinstance(doc, dict) else None
    if not isinstance(matrices, list):
        raise FigureError(f"{source}: expected the JSON of 'sparsroof analyze --output json' "
                          "(no 'matrices' list)")
    found = []
    for i, m in enumerate(matrices):
        rows = m.get("distributed") if isinstance(m, dict) else None
        if not rows:
            continue
        where = f"matrices[{i}]"
        name = str(_field(source, where, _field(source, where, m, "matrix"), "name"))
        if not isinstance(rows, list):
            raise FigureError(f"{source}: {where}.distributed: expected the rank bounds "
                              "of 'sparsroof analyze --ranks'")
        bounds = [rank_bound(source, f"{where}.distributed[{j}]", r)
                  for j, r in enumerate(rows)]
        found.append((name, str(m.get("spec", "")), bounds))
    return found


#: RankBound's numbers: those every document has, and those added later (kept at their
#: defaults where a document lacks them)
_RANK_NUMBERS = tuple(f.name for f in fields(RankBound) if f.type in ("float", "int")
                      and f.default is MISSING)
_RANK_LATER = tuple(f.name for f in fields(RankBound) if f.type in ("float", "int")
                    and f.default is not MISSING)


def rank_bound(source: str, where: str, r: Any) -> RankBound:
    """A :class:`~sparsroof.model.ridgeline.RankBound` from the object ``r`` at ``where``
    of ``source`` (the rank bounds of ``analyze --ranks`` or ``whatif --mlp``): every
    number checked as :func:`roof_point` checks them, ranks, width and the slowest rank
    whole numbers; the roofs added later to the documents default to 0 where absent."""
    if not isinstance(r, dict):
        raise FigureError(f"{source}: {where}: expected an object")
    names = _RANK_NUMBERS + tuple(k for k in _RANK_LATER if k in r)
    numbers = finite_numbers(r, names, lambda problem: FigureError(f"{source}: {problem}"),
                             where=where, minimum=0,
                             integers=("ranks", "width", "slowest_rank"))
    return RankBound(bound=str(_field(source, where, r, "bound")), **numbers)


def common(points: Sequence[RoofPoint], attr: str, source: str = "results") -> str:
    """The one value of ``attr`` shared by every point (precision, unit, kernel)."""
    values = sorted({str(getattr(p, attr)) for p in points})
    if len(values) != 1:
        raise FigureError(f"{source}: results mix {attr}s {', '.join(values)}; "
                          "plot them separately")
    return values[0]
