"""What an analysis finds: the matrix's summary, one :class:`Result` per (width, format,
model), and the documents made of them (raw SI numbers) for JSON, CSV and the store."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .._version import envelope
from ..errors import OptionError
from ..matrix.header import complex_field
from ..model.bound import Bound
from ..model.traffic import Traffic
from ..structure.classify import Verdict
from ..structure.features import Structure
from ..units import si
from .config import MODEL_SYNONYMS

if TYPE_CHECKING:  # the distributed bounds (and numpy) load with --ranks
    from ..model.ridgeline import RankBound

__all__ = ["FLOPS_CONVENTION", "COMPLEX_CONVENTION", "MatrixInfo", "Result", "Skipped",
           "Analysis", "Gain",
           "Reordering", "records", "document", "rank_bound_dict"]

FLOPS_CONVENTION = "FLOPs = 2 per stored entry per column of B (multiply + add)"
#: the convention for a complex matrix: A, B and C complex at the chosen precision
COMPLEX_CONVENTION = ("FLOPs = 8 per stored entry per column of B (a complex multiply + "
                      "add); each value 2 reals")


@dataclass(frozen=True)
class MatrixInfo:
    """Summary of a matrix for reports (no arrays)."""

    name: str
    path: str
    rows: int
    cols: int
    stored_entries: int
    numeric_nonzeros: int
    density: float
    field: str
    symmetry: str

    @property
    def complex_values(self) -> bool:
        """Whether the values are complex."""
        return complex_field(self.field)


@dataclass(frozen=True)
class Result:
    """One (width, storage format, B-reuse model) of an analysis: the bytes and FLOPs it
    moves (:class:`~sparsroof.model.traffic.Traffic`), its bound on the spec
    (:class:`~sparsroof.model.bound.Bound`: SoL seconds, the binding term, attainable
    FLOP/s), the dense GEMM's SoL for the speedup, and the model's role in the table
    (the class's model, the optimistic or pessimistic edge, the measured one)."""

    traffic: Traffic
    bound: Bound
    dense_sol_s: float | None  # None where the spec has no peak for the dense GEMM
    role: str = ""  # "class", "optimistic", "pessimistic", "measured" or ""

    @property
    def valid(self) -> bool:
        """False for an N:M format that the pattern does not conform to."""
        c = self.traffic.conforming
        return c is None or c >= 1.0

    @property
    def speedup_vs_dense(self) -> float | None:
        """Speedup at SoL over the dense GEMM of the same shape (*The Sparsity Roofline*,
        eq. 3, for one layer); None when the dense baseline is absent."""
        if self.dense_sol_s is None:
            return None
        return self.dense_sol_s / self.bound.sol_s if self.bound.sol_s else 0.0


@dataclass(frozen=True)
class Skipped:
    """A requested model that could not be computed for this matrix, and why."""

    storage: str
    model: str
    reason: str
    role: str = ""


@dataclass(frozen=True)
class Analysis:
    """One matrix modelled on one spec: its summary, structure and class, one
    :class:`Result` per (width, format, model), fastest first within a width, what could
    not be computed and why, and (where asked for) distributed bounds and reorderings.

    In a notebook it shows as a short line (``repr``) or a table (HTML); ``to_records()``
    and ``to_frame()`` give one row per result, as ``analyze -O csv`` writes them.
    """

    matrix: MatrixInfo
    spec: str
    device: str
    structure: Structure
    verdict: Verdict | None
    results: tuple[Result, ...]
    distributed: tuple[RankBound, ...] = field(default=())
    skipped: tuple[Skipped, ...] = field(default=())
    reorderings: tuple[Reordering, ...] = field(default=())
    hw: Any = field(default=None, compare=False, repr=False)  # the HwSpec it was bound on

    def result(self, storage: str | None = None, *, d: int | None = None,
               model: str | None = None, role: str | None = None) -> Result:
        """The one result of format ``storage`` at width ``d``, under B model ``model``
        or in role ``role`` ("class": the class's model; "optimistic", "pessimistic",
        "measured": the band's edges and the cache-aware model); a criterion left None
        matches any. None found, or several, is an error that says what there is.

        >>> import scipy.sparse as sp
        >>> from sparsroof.analysis import analyze
        >>> a = analyze(sp.eye(3000, format="csr"), hw="a100", storage="csr,ell")
        >>> r = a.result("ell", role="class")
        >>> r.traffic.storage, r.traffic.model, r.bound.bound
        ('ell', 'banded', 'launch')
        >>> a.result("ell")
        Traceback (most recent call last):
        ...
        sparsroof.errors.OptionError: 4 results match storage='ell'; narrow them by model or role
        """
        def keys(r: Result) -> dict[str, object]:
            return {"storage": r.traffic.storage, "d": r.traffic.width,
                    "model": r.traffic.model, "role": r.role}

        model = MODEL_SYNONYMS.get(model, model) if isinstance(model, str) else model
        given = {k: v for k, v in
                 {"storage": storage, "d": d, "model": model, "role": role}.items()
                 if v is not None}
        found = [r for r in self.results if all(keys(r)[k] == v for k, v in given.items())]
        if len(found) == 1:
            return found[0]
        asked = " ".join(f"{k}={v!r}" for k, v in given.items()) or "no criterion"
        if found:
            free = [k for k in keys(found[0])
                    if k not in given and len({keys(r)[k] for r in found}) > 1]
            raise OptionError(f"{len(found)} results match {asked}; narrow them by "
                              f"{' or '.join(free) or 'iterating over results'}")
        held = {k: dict.fromkeys(keys(r)[k] for r in self.results) for k in given}
        have = "; ".join(f"{k}: {', '.join(str(v) for v in vals if v)}"
                         for k, vals in held.items())
        raise OptionError(f"no result matches {asked} (this analysis has {have})")

    def to_dict(self) -> dict[str, Any]:
        """The document ``sparsroof analyze -O json`` prints for this matrix: raw SI
        numbers, under ``matrices[0]``."""
        return document([self])

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per result (raw SI numbers), the rows ``analyze -O csv`` writes."""
        return records([self])

    def to_frame(self) -> Any:
        """The records as a pandas DataFrame (pandas is not a dependency: install it)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Analysis.to_frame needs pandas (pip install pandas); "
                              "to_records() gives the same rows as dicts") from None
        return pd.DataFrame.from_records(self.to_records())

    def __repr__(self) -> str:
        m, best = self.matrix, (self.results[0] if self.results else None)
        label = f", {self.verdict.label}" if self.verdict is not None else ""
        fastest = (f"; fastest {best.traffic.storage} {best.traffic.model} "
                   f"{si(best.bound.sol_s, 's')} ({best.bound.bound})" if best else "")
        return (f"<Analysis {m.name} {m.rows:,} x {m.cols:,}, {m.stored_entries:,} entries"
                f"{label}, on {self.spec}: {len(self.results)} results{fastest}>")

    def _repr_html_(self) -> str:
        """The notebook's view: the default table's numbers, one row per result."""
        import html

        cells = ["d", "format", "model", "bytes", "AI", "SoL", "bound", "GFLOP/s"]
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in (
                r.traffic.width, r.traffic.storage, r.traffic.model + (
                    f" ({r.role})" if r.role else ""), si(r.traffic.bytes_total, "B"),
                f"{r.traffic.intensity:.3g}", si(r.bound.sol_s, "s"), r.bound.bound,
                f"{r.bound.attainable_flops / 1e9:.3g}")) + "</tr>"
            for r in self.results)
        head = "".join(f"<th>{c}</th>" for c in cells)
        return (f"<p>{html.escape(repr(self))}</p><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{rows}</tbody></table>")


@dataclass(frozen=True)
class Gain:
    """One (width, format) of a reordered matrix beside the original order, both by the
    cache-aware model (an estimate, not a bound; its times are kept as ``sol_s`` and
    ``original_sol_s``): ``gain`` = original time / reordered time (above 1 is
    faster), the time ``saved_s`` per kernel run, and ``break_even_runs`` = the
    reordering's seconds / ``saved_s``, the kernel runs that pay for the reordering (None
    when it saves nothing). ``best``: the ordering of highest gain for this (width,
    format), when that gain is notable (see :mod:`sparsroof.analysis.reordering`)."""

    width: int
    storage: str
    bandwidth: int
    original_bandwidth: int
    bytes_b: float
    original_bytes_b: float
    sol_s: float
    original_sol_s: float
    gain: float
    saved_s: float
    break_even_runs: float | None
    best: bool = False


@dataclass(frozen=True)
class Reordering:
    """The analysis of the matrix permuted by ``ordering``, the seconds the reordering
    took on this host, and its gains over the original order."""

    ordering: str
    seconds: float
    analysis: Analysis
    gains: tuple[Gain, ...]


def _verdict_dict(a: Analysis) -> dict[str, Any] | None:
    v = a.verdict
    return v.to_dict() if v is not None and hasattr(v, "to_dict") else None


def _structure_dict(a: Analysis) -> dict[str, Any]:
    st = a.structure
    return st.to_dict() if hasattr(st, "to_dict") else asdict(st)


def _result_dict(r: Result) -> dict[str, Any]:
    t = r.traffic
    return {"traffic": asdict(t) | {"bytes_total": t.bytes_total, "intensity": t.intensity},
            "bound": asdict(r.bound), "role": r.role, "dense_sol_s": r.dense_sol_s,
            "speedup_vs_dense": r.speedup_vs_dense}


def rank_bound_dict(rb: RankBound) -> dict[str, Any]:
    """One rank bound as its JSON record: its fields and both intensities of the ridgeline
    plane (the memory intensity null when no byte crosses the network)."""
    mi = rb.memory_intensity
    return asdict(rb) | {"arithmetic_intensity": rb.arithmetic_intensity,
                         "memory_intensity": mi if math.isfinite(mi) else None}


def _reordering_dict(ro: Reordering) -> dict[str, Any]:
    """A reordering's full result (as a matrix of the document) with its ordering, its
    cost and its gains."""
    a = ro.analysis
    return {"ordering": ro.ordering, "reorder_s": ro.seconds,
            "gains": [asdict(g) for g in ro.gains],
            "structure": _structure_dict(a), "class": _verdict_dict(a),
            "results": [_result_dict(r) for r in a.results]}


def _gain_cells(ro: Reordering, row: dict[str, Any]) -> dict[str, Any]:
    """The gain and break-even of a reordered row of the model reorderings are judged by."""
    for g in ro.gains:
        if (row["model"], row["width"], row["storage"]) == ("cache-aware", g.width, g.storage):
            return {"gain": g.gain, "break_even_runs": g.break_even_runs, "best": g.best}
    return {}


def records(analyses: Iterable[Analysis]) -> list[dict[str, Any]]:
    """One flat dict per result row: matrix fields, traffic and bound, raw SI numbers.
    With reorderings, each reordered matrix adds its rows, and every row says its
    ``ordering`` ("original" for the matrix as given) and ``reorder_s``."""
    rows = []
    for a in analyses:
        if a.reorderings:
            rows += [r | {"ordering": "original", "reorder_s": 0.0} for r in records([
                Analysis(a.matrix, a.spec, a.device, a.structure, a.verdict, a.results)])]
            rows += [r | {"ordering": ro.ordering, "reorder_s": ro.seconds} | _gain_cells(ro, r)
                     for ro in a.reorderings for r in records([ro.analysis])]
            continue
        verdict = _verdict_dict(a) or {}
        base = {"matrix": a.matrix.name, "path": a.matrix.path, "spec": a.spec,
                "rows": a.matrix.rows, "cols": a.matrix.cols,
                "stored_entries": a.matrix.stored_entries,
                "numeric_nonzeros": a.matrix.numeric_nonzeros, "density": a.matrix.density,
                "class": verdict.get("label"), "class_confidence": verdict.get("confidence")}
        for r in a.results:
            t, b = r.traffic, r.bound
            row = dict(base)
            row.update(asdict(t))
            row["bytes_total"] = t.bytes_total
            row["intensity_flop_per_byte"] = t.intensity
            row.update({f"bound_{k}" if k == "unit" else k: v for k, v in asdict(b).items()})
            row.update({"role": r.role, "dense_sol_s": r.dense_sol_s,
                        "speedup_vs_dense": r.speedup_vs_dense})
            rows.append(row)
    return rows


def document(analyses: Iterable[Analysis], errors: Iterable[dict[str, str]] = ()
             ) -> dict[str, Any]:
    """The analysis document: envelope, FLOPs convention, one object per matrix (its
    info, structure, class, every result and the distributed bounds), and errors."""
    doc = envelope("analyze")
    analyses = list(analyses)
    doc["flops_convention"] = FLOPS_CONVENTION
    if any(r.traffic.complex_values for a in analyses for r in a.results):
        doc["complex_convention"] = COMPLEX_CONVENTION  # the results marked complex_values
    doc["matrices"] = [
        {"matrix": asdict(a.matrix), "spec": a.spec, "device": a.device,
         "structure": _structure_dict(a), "class": _verdict_dict(a),
         "results": [_result_dict(r) for r in a.results],
         "distributed": [rank_bound_dict(rb) for rb in a.distributed],
         "not_computed": [asdict(k) for k in a.skipped],
         "reorderings": [_reordering_dict(ro) for ro in a.reorderings]}
        for a in analyses
    ]
    doc["errors"] = list(errors)
    return doc
