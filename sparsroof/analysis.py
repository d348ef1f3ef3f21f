"""The pipeline: Matrix -> Structure (+ class) -> Traffic per (width, format, model) -> Bound.

Which B model applies depends on the structure class (the sparsity-aware SpMM paper's
models); the optimistic (compulsory) and pessimistic (random) bounds bracket it, and the
cache-aware model measured from the matrix is shown beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ._version import envelope
from .errors import OptionError
from .hardware.spec import UNITS, HwSpec
from .matrix.mtx import Matrix
from .model.bound import Bound, auto_unit, bound, resolve_unit
from .model.ridgeline import RankBound, distributed_bounds
from .model.traffic import (
    INDEX_BYTES,
    KERNELS,
    MODELS,
    STORAGES,
    VALUE_BYTES,
    ModelParams,
    Traffic,
    dense_traffic,
    nm_pattern,
    traffic,
    unavailable,
)
from .structure.features import Structure, measure

__all__ = [
    "CLASS_MODEL",
    "Config",
    "MatrixInfo",
    "Result",
    "Analysis",
    "Skipped",
    "analyze",
    "document",
    "records",
    "analyze_structure",
    "expand_choice",
    "needs_pattern",
    "parse_widths",
]

#: structure class -> the B model the sparsity-aware SpMM paper gives for it
CLASS_MODEL = {
    "banded": "banded",
    "block": "blocked",
    "block-pruned": "blocked",
    "scale-free": "scale-free",
    "random": "random",
    "unstructured-pruned": "random",
    "nm": "random",
    "dense": "compulsory",
    "graph": "scale-free-measured",
}
_ROLES = {"compulsory": "optimistic", "random": "pessimistic", "cache-aware": "measured"}
FLOPS_CONVENTION = "FLOPs = 2 per stored entry per column of B (multiply + add)"


@dataclass(frozen=True)
class Config:
    """What to model. ``models`` may hold "auto" (the class's model, the cache-aware one
    and the optimistic/pessimistic band); ``unit`` None picks the unit per format;
    ``launches`` None means one launch where the spec has a launch overhead."""

    kernel: str = "spmv"
    widths: tuple[int, ...] = (1,)
    dtype: str = "fp64"
    index: str = "int32"
    storages: tuple[str, ...] = ("csr",)
    models: tuple[str, ...] = ("auto",)
    unit: str | None = None
    precision: str | None = None
    launches: int | None = None
    ranks: tuple[int, ...] = ()
    cache_roof: bool = True
    reuse_factor: float = 0.25
    hub_fraction: float = 0.001
    block_size: int | None = None

    def __post_init__(self) -> None:
        checks = (
            (self.kernel in KERNELS, f"unknown kernel {self.kernel!r}"),
            (self.dtype in VALUE_BYTES, f"unknown dtype {self.dtype!r}"),
            (self.index in INDEX_BYTES, f"unknown index type {self.index!r}"),
            (bool(self.widths) and all(w >= 1 for w in self.widths),
             "widths must be whole numbers of at least 1"),
            (self.kernel != "spmv" or set(self.widths) == {1},
             "spmv multiplies by one vector (d = 1); use --kernel spmm for wider B"),
            (all(s in STORAGES for s in self.storages),
             f"unknown storage in {self.storages} (choose from {', '.join(STORAGES)})"),
            (all(m in (*MODELS, "auto") for m in self.models),
             f"unknown model in {self.models} (choose from auto, {', '.join(MODELS)})"),
            (self.unit is None or self.unit in UNITS, f"unknown unit {self.unit!r}"),
            (all(p >= 1 for p in self.ranks), "rank counts must be at least 1"),
            (0 < self.reuse_factor <= 1, "the reuse factor must lie in (0, 1]"),
            (0 < self.hub_fraction < 1, "the hub fraction must lie in (0, 1)"),
            (self.launches is None or self.launches >= 0, "launches must be 0 or more"),
            (self.block_size is None or self.block_size in (2, 4, 8, 16, 32),
             "the block size must be 2, 4, 8, 16 or 32"),
        )
        for ok, message in checks:
            if not ok:
                raise OptionError(message)


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


@dataclass(frozen=True)
class Result:
    traffic: Traffic
    bound: Bound
    dense_sol_s: float
    role: str = ""  # "class", "optimistic", "pessimistic", "measured" or ""

    @property
    def valid(self) -> bool:
        """False for an N:M format that the pattern does not conform to."""
        c = self.traffic.conforming
        return c is None or c >= 1.0

    @property
    def speedup_vs_dense(self) -> float:
        """Speedup at SoL over the dense GEMM of the same shape (*The Sparsity Roofline*,
        eq. 3, for one layer)."""
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
    matrix: MatrixInfo
    spec: str
    device: str
    structure: Structure
    verdict: Any
    results: tuple[Result, ...]
    distributed: tuple[RankBound, ...] = field(default=())
    skipped: tuple[Skipped, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The document ``sparsroof analyze -O json`` prints for this matrix: raw SI
        numbers, under ``matrices[0]``."""
        return document([self])


def expand_choice(values: Sequence[str], table: Sequence[str], extra: Sequence[str] = ()
                  ) -> tuple[str, ...]:
    """Split comma lists and expand "all".

    >>> expand_choice(["csr,ell", "csr"], ["csr", "ell", "coo"])
    ('csr', 'ell')
    >>> expand_choice(["all"], ["csr", "ell"])
    ('csr', 'ell')
    """
    names: list[str] = []
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if part == "all":
                names.extend(table)
            elif part:
                if part not in table and part not in extra:
                    raise OptionError(f"unknown choice {part!r} (choose from "
                                      f"{', '.join([*extra, *table, 'all'])})")
                names.append(part)
    return tuple(dict.fromkeys(names))


def _models(config: Config, class_model: str | None) -> list[tuple[str, str]]:
    """(model, role) pairs to compute, "auto" expanded for the matrix's class."""
    chosen: list[tuple[str, str]] = []
    for name in config.models:
        if name == "auto":
            auto = [class_model or "compulsory", "cache-aware", "compulsory", "random"]
            chosen += [(m, "class" if i == 0 and class_model else _ROLES.get(m, ""))
                       for i, m in enumerate(auto)]
        else:
            chosen.append((name, "class" if name == class_model else _ROLES.get(name, "")))
    seen: dict[str, str] = {}
    for name, role in chosen:
        seen.setdefault(name, role)
    return list(seen.items())


def _cache_bytes(spec: HwSpec) -> float | None:
    caches = [lvl.capacity.value for lvl in spec.memory[:-1] if lvl.capacity is not None]
    return max(caches) if caches else None


def _launches(config: Config, spec: HwSpec) -> int:
    if config.launches is not None:
        return config.launches
    return 1 if spec.kind == "gpu" and spec.launch_overhead is not None else 0


def _classify(s: Structure) -> Any:
    from .structure.classify import classify

    return classify(s)


@dataclass(frozen=True)
class _Plan:
    """What stays fixed across widths: models, parameters, launches, N:M group."""

    models: list[tuple[str, str]]
    params: ModelParams
    launches: int
    nm_group: tuple[int, int] | None
    block: int | None


def _plan(s: Structure, spec: HwSpec, config: Config, verdict: Any) -> _Plan:
    class_model = CLASS_MODEL.get(verdict.label) if verdict is not None else None
    block = verdict.params.get("block") if verdict is not None else None
    return _Plan(
        models=_models(config, class_model),
        params=ModelParams(config.reuse_factor, config.hub_fraction, config.block_size,
                           _cache_bytes(spec)),
        launches=_launches(config, spec),
        nm_group=nm_pattern(s.nm_conformance)[:2] if "nm" in config.storages else None,
        block=int(block) if block else None,
    )


def _dense_sol(s: Structure, spec: HwSpec, config: Config, width: int, launches: int) -> float:
    """SoL of the dense GEMM of the same shape (on tensor units where the spec has them)."""
    t = dense_traffic(s.rows, s.cols, width, config.dtype)
    unit, precision = resolve_unit(spec, config.unit or "tensor", config.dtype,
                                   config.precision, config.unit is not None)
    return bound(t, spec, unit=unit, precision=precision, launches=launches,
                 footprint=t.bytes_total if config.cache_roof else None).sol_s


def _skipped(s: Structure, config: Config, plan: _Plan) -> list[Skipped]:
    """The requested (storage, model) pairs that :func:`traffic` cannot compute here."""
    common = dict(kernel=config.kernel, width=config.widths[0], dtype=config.dtype,
                  index=config.index, params=plan.params, verdict_block=plan.block)
    return [Skipped(storage, model, unavailable(s, storage, model, plan.params, plan.block), role)
            for storage in config.storages for model, role in plan.models
            if traffic(s, storage=storage, model=model, **common) is None]  # type: ignore[arg-type]


def _width_results(s: Structure, spec: HwSpec, config: Config, plan: _Plan,
                   width: int) -> list[Result]:
    dense_sol = _dense_sol(s, spec, config, width, plan.launches)
    common = dict(kernel=config.kernel, width=width, dtype=config.dtype, index=config.index,
                  params=plan.params, verdict_block=plan.block)
    results = []
    for storage in config.storages:
        unit, precision = resolve_unit(spec, config.unit or auto_unit(storage, plan.nm_group),
                                       config.dtype, config.precision, config.unit is not None)
        # the working set (A, the rows of B it touches, C) decides which level is the roof
        working_set = traffic(s, storage=storage, model="compulsory", **common)  # type: ignore[arg-type]
        footprint = working_set.bytes_total if (config.cache_roof and working_set) else None
        for model, role in plan.models:
            t = traffic(s, storage=storage, model=model, **common)  # type: ignore[arg-type]
            if t is not None:
                b = bound(t, spec, unit=unit, precision=precision, launches=plan.launches,
                          footprint=footprint)
                results.append(Result(t, b, dense_sol, role))
    return results


def analyze_structure(info: MatrixInfo, s: Structure, spec: HwSpec, config: Config,
                      verdict: Any = None) -> Analysis:
    """Model every (width, storage, model) combination of ``config`` for structure ``s``,
    fastest first within each width; an N:M format the pattern does not fit comes last
    (it cannot hold the matrix, so its time is not attainable)."""
    plan = _plan(s, spec, config, verdict)
    results = [r for w in config.widths for r in _width_results(s, spec, config, plan, w)]
    results.sort(key=lambda r: (r.traffic.width, not r.valid, r.bound.sol_s))
    return Analysis(info, spec.name, spec.device, s, verdict, tuple(results),
                    skipped=tuple(_skipped(s, config, plan)))


def _distributed(matrix: Matrix, spec: HwSpec, config: Config) -> tuple[RankBound, ...]:
    if not config.ranks:
        return ()
    if spec.network is None:
        raise OptionError(f"{spec.name} has no network bandwidth: --ranks needs one")
    unit, precision = resolve_unit(spec, config.unit or "simt", config.dtype,
                                   config.precision, config.unit is not None)
    level = spec.dram
    return tuple(
        distributed_bounds(
            matrix.row, matrix.col, matrix.shape, ranks=p, width=w,
            s_v=VALUE_BYTES[config.dtype], s_i=INDEX_BYTES[config.index],
            peak_flops=spec.peak(unit, precision).value, bandwidth=level.bandwidth.value,
            network=spec.network.value)
        for w in config.widths for p in config.ranks
    )


#: B models and storage formats that read the pattern features (or the power-law fit)
_PATTERN_MODELS = frozenset({"auto", "blocked", "cache-aware", "scale-free"})
_PATTERN_STORAGES = frozenset({"dia", "nm", *(s for s in STORAGES if s.startswith("bsr"))})


def needs_pattern(config: Config) -> bool:
    """Whether ``config`` needs the full pattern features (and so the class).

    >>> needs_pattern(Config()), needs_pattern(Config(models=("compulsory", "random")))
    (True, False)
    """
    return bool(_PATTERN_MODELS.intersection(config.models)
                or _PATTERN_STORAGES.intersection(config.storages))


def analyze(matrix: Matrix, spec: HwSpec, config: Config | None = None) -> Analysis:
    """Measure and classify ``matrix``, then model it on ``spec``. The pattern features
    and the class are measured only when a chosen model or format needs them (the class
    is then None)."""
    config = config or Config()
    full = needs_pattern(config)
    s = measure(matrix, pattern=full)
    info = MatrixInfo(
        name=matrix.name, path=matrix.path, rows=matrix.rows, cols=matrix.cols,
        stored_entries=s.stored_entries, numeric_nonzeros=s.numeric_nonzeros,
        density=s.density, field=matrix.header.field, symmetry=matrix.header.symmetry,
    )
    result = analyze_structure(info, s, spec, config, _classify(s) if full else None)
    ranks = _distributed(matrix, spec, config)
    return Analysis(result.matrix, result.spec, result.device, result.structure,
                    result.verdict, result.results, ranks, result.skipped)


def parse_widths(values: Sequence[str]) -> tuple[int, ...]:
    """Parse ``["1,4", "16"]`` into ``(1, 4, 16)``.

    >>> parse_widths(["1,4", "16"])
    (1, 4, 16)
    """
    widths: list[int] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                widths.append(int(part))
            except ValueError:
                raise OptionError(f"{part!r} is not a whole number") from None
    return tuple(dict.fromkeys(widths))


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


def _rank_dict(rb: RankBound) -> dict[str, Any]:
    mi = rb.memory_intensity
    return asdict(rb) | {"arithmetic_intensity": rb.arithmetic_intensity,
                         "memory_intensity": mi if math.isfinite(mi) else None}


def records(analyses: Iterable[Analysis]) -> list[dict[str, Any]]:
    """One flat dict per result row: matrix fields, traffic and bound, raw SI numbers."""
    rows = []
    for a in analyses:
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
    doc["flops_convention"] = FLOPS_CONVENTION
    doc["matrices"] = [
        {"matrix": asdict(a.matrix), "spec": a.spec, "device": a.device,
         "structure": _structure_dict(a), "class": _verdict_dict(a),
         "results": [_result_dict(r) for r in a.results],
         "distributed": [_rank_dict(rb) for rb in a.distributed],
         "not_computed": [asdict(k) for k in a.skipped]}
        for a in analyses
    ]
    doc["errors"] = list(errors)
    return doc
