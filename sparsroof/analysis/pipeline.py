"""The pipeline: Matrix -> Structure (+ class) -> Traffic per (width, format, model) -> Bound.

Which B model applies depends on the structure class (the sparsity-aware SpMM paper's
models); the optimistic (compulsory) and pessimistic (random) bounds bracket it, and the
cache-aware model measured from the matrix is shown beside it.
"""


from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, overload

from ..errors import OptionError
from ..hardware.library import load_spec
from ..hardware.spec import HwSpec
from ..model.bound import (
    auto_unit,
    bound,
    call_floor,
    entry_peak,
    launches_for,
    memory_time,
    resolve_unit,
)
from ..model.timing import launch_floor
from ..model.traffic import (
    INDEX_BYTES,
    STORAGES,
    ModelParams,
    dense_traffic,
    nm_pattern,
    traffic,
    unavailable,
    value_terms,
)
from ..structure.cache import Measured, measured
from ..structure.classify import Verdict
from ..structure.classify import classify as classify_structure
from ..structure.features import Structure
from .config import Config, OptionValue
from .reordering import compare
from .results import Analysis, MatrixInfo, Reordering, Result, Skipped

if TYPE_CHECKING:  # the reader, the distributed bounds and numpy load where they are used:
    # an analysis of a structure from the cache needs none of them
    from ..matrix.mtx import Matrix, MatrixLike
    from ..model.ridgeline import RankBound

__all__ = ["CLASS_MODEL", "analyze", "analyze_measured", "analyze_structure", "classify",
           "measure_for", "needs_pattern", "with_reorderings"]

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
    return launches_for(spec)


def _classify(s: Structure) -> Verdict:
    return classify_structure(s)


@dataclass(frozen=True)
class _Plan:
    """What stays fixed across widths: models, parameters, launches, N:M group."""

    models: list[tuple[str, str]]
    params: ModelParams
    launches: int
    nm_group: tuple[int, int] | None
    block: int | None
    complex_values: bool = False  # the matrix's field is complex (or hermitian)


def _plan(s: Structure, spec: HwSpec, config: Config, verdict: Verdict | None) -> _Plan:
    class_model = CLASS_MODEL.get(verdict.label) if verdict is not None else None
    block = verdict.params.get("block") if verdict is not None else None
    return _Plan(
        models=_models(config, class_model),
        params=ModelParams(config.reuse_factor, config.hub_fraction, config.block_size,
                           _cache_bytes(spec), config.hyb_split),
        launches=_launches(config, spec),
        nm_group=nm_pattern(s.nm_conformance)[:2] if "nm" in config.storages else None,
        block=int(block) if block else None,
    )


def _dense_sol(s: Structure, spec: HwSpec, config: Config, width: int, launches: int,
               complex_values: bool = False) -> float | None:
    """SoL of the dense GEMM of the same shape (on tensor units where the spec has them);
    None when the spec has no peak at the precision (the baseline is then absent)."""
    t = dense_traffic(s.rows, s.cols, width, config.dtype, complex_values)
    try:
        unit, precision = resolve_unit(spec, config.unit or "tensor", config.dtype,
                                       config.precision, config.unit is not None)
    except OptionError:
        return None
    return bound(t, spec, unit=unit, precision=precision, launches=launches,
                 footprint=t.bytes_total if config.cache_roof else None,
                 timing=config.timing, calls_per_sync=config.calls_per_sync).sol_s


def _unit(spec: HwSpec, config: Config, auto: str) -> tuple[str, str]:
    """The unit and precision to bound with. A spec without a peak at the precision still
    bounds a memory-bound kernel: the compute term is then left out (see ``bound``). A unit
    chosen by name must have the peak."""
    try:
        return resolve_unit(spec, config.unit or auto, config.dtype, config.precision,
                            config.unit is not None)
    except OptionError:
        if config.unit is not None:
            raise
        return auto, config.precision or config.dtype


def _skipped(s: Structure, config: Config, plan: _Plan) -> list[Skipped]:
    """The requested (storage, model) pairs that :func:`traffic` cannot compute here."""
    common = dict(kernel=config.kernel, width=config.widths[0], dtype=config.dtype,
                  index=config.index, params=plan.params, verdict_block=plan.block,
                  complex_values=plan.complex_values)
    return [Skipped(storage, model, unavailable(s, storage, model, plan.params, plan.block), role)
            for storage in config.storages for model, role in plan.models
            if traffic(s, storage=storage, model=model, **common) is None]  # type: ignore[arg-type]


def _width_results(s: Structure, spec: HwSpec, config: Config, plan: _Plan,
                   width: int) -> list[Result]:
    dense_sol = _dense_sol(s, spec, config, width, plan.launches, plan.complex_values)
    common = dict(kernel=config.kernel, width=width, dtype=config.dtype, index=config.index,
                  params=plan.params, verdict_block=plan.block,
                  complex_values=plan.complex_values)
    results = []
    for storage in config.storages:
        unit, precision = _unit(spec, config, auto_unit(storage, plan.nm_group))
        # the working set (A, the rows of B it touches, C) decides which level is the roof
        working_set = traffic(s, storage=storage, model="compulsory", **common)  # type: ignore[arg-type]
        footprint = working_set.bytes_total if (config.cache_roof and working_set) else None
        for model, role in plan.models:
            t = traffic(s, storage=storage, model=model, **common)  # type: ignore[arg-type]
            if t is not None:
                b = bound(t, spec, unit=unit, precision=precision, launches=plan.launches,
                          footprint=footprint, timing=config.timing,
                          calls_per_sync=config.calls_per_sync)
                results.append(Result(t, b, dense_sol, role))
    return results


def analyze_structure(info: MatrixInfo, s: Structure, spec: HwSpec, config: Config,
                      verdict: Verdict | None = None) -> Analysis:
    """Model every (width, storage, model) combination of ``config`` for structure ``s``,
    fastest first within each width; an N:M format the pattern does not fit comes last
    (it cannot hold the matrix, so its time is not attainable)."""
    plan = replace(_plan(s, spec, config, verdict), complex_values=info.complex_values)
    results = [r for w in config.widths for r in _width_results(s, spec, config, plan, w)]
    results.sort(key=lambda r: (r.traffic.width, not r.valid, r.bound.sol_s))
    return Analysis(info, spec.name, spec.device, s, verdict, tuple(results),
                    skipped=tuple(_skipped(s, config, plan)), hw=spec)


def _distributed(matrix: Matrix, spec: HwSpec, config: Config) -> tuple[RankBound, ...]:
    if not config.ranks:
        return ()
    from ..model.ridgeline import distributed_bounds

    if spec.network is None:
        raise OptionError(f"{spec.name} has no network bandwidth: {{opt:ranks}} needs one")
    unit, precision = resolve_unit(spec, config.unit or "simt", config.dtype,
                                   config.precision, config.unit is not None)
    level = spec.dram
    s_v, flops = value_terms(config.dtype, matrix.header.complex_values)

    def rank_memory(nbytes: float) -> float:
        """A rank's bytes through its device's hierarchy, as the single-device bound
        charges them (its working set in a cache where it fits, one device each)."""
        return memory_time(spec, nbytes, nbytes if config.cache_roof else None,
                           config.timing)[1]

    launch_s = _launches(config, spec) * launch_floor(spec, config.timing,
                                                       config.calls_per_sync)[0]
    return tuple(
        distributed_bounds(
            matrix.row, matrix.col, matrix.shape, ranks=p, width=w,
            s_v=s_v, s_i=INDEX_BYTES[config.index],
            peak_flops=entry_peak(spec, unit, precision), bandwidth=level.bandwidth.value,
            network=spec.network.value, flops_per_entry=flops,
            memory_time=rank_memory, launch_s=launch_s,
            call_time=lambda read: call_floor(spec, read))
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


#: what ``hw`` takes: a bundled spec's name, a path to a YAML spec, or a spec
SpecLike = str | Path | HwSpec


@overload
def analyze(matrix: MatrixLike, hw: SpecLike = ..., config: Config | None = ..., *,
            cache: bool = ..., name: str | None = ..., **options: OptionValue) -> Analysis: ...


@overload
def analyze(matrix: MatrixLike, hw: list[SpecLike] | tuple[SpecLike, ...],
            config: Config | None = ..., *,
            cache: bool = ..., name: str | None = ..., **options: OptionValue
            ) -> list[Analysis]: ...


def analyze(matrix: MatrixLike,
            hw: SpecLike | list[SpecLike] | tuple[SpecLike, ...] = "a100",
            config: Config | None = None, *, cache: bool = True, name: str | None = None,
            **options: OptionValue) -> Analysis | list[Analysis]:
    """Measure and classify ``matrix``, then model it on the spec ``hw``.

    ``matrix`` is a path to a matrix file, a scipy sparse matrix or array (any format),
    a dense 2-D array, or a :class:`Matrix`; ``name`` names it in tables and records
    (an in-memory matrix is otherwise "matrix"). ``hw`` is a bundled spec's name, a path
    to a YAML spec or an :class:`HwSpec`; a list of them gives a list of analyses, the
    matrix measured once. Options are the command line's, by the same names (``kernel``,
    ``d``, ``dtype``, ``index``, ``storage``, ``model``, ``unit``, ``timing``, ...; see
    :meth:`Config.from_options`), or one ``config``. Times are in seconds, traffic in
    bytes, rates in FLOP/s and bytes/s. The pattern features and the class are measured
    only when a chosen model or format needs them (the class is None otherwise). A
    file's structure is kept in the structure cache (:mod:`sparsroof.structure.cache`)
    and read from it the next time; ``cache`` False neither reads nor writes it.

    >>> import scipy.sparse as sp
    >>> a = analyze(sp.random(50, 50, density=0.1, format="csr", random_state=0), hw="a100",
    ...             kernel="spmm", d="1,4", name="toy")
    >>> [r.traffic.width for r in a.results][:1], a.results[0].bound.sol_s > 0, a.matrix.name
    ([1], True, 'toy')
    >>> [b.spec for b in analyze(sp.eye(64), hw=["a100", "h100-sxm"], model="compulsory")]
    ['a100-80gb', 'h100-sxm']
    """
    if config is not None and options:
        raise OptionError("give either a Config or options, not both")
    if config is not None and not isinstance(config, Config):
        raise OptionError(f"config: a Config (Config.from_options makes one), not "
                          f"{type(config).__name__}")
    if name is not None and not isinstance(name, str):
        raise OptionError(f"name: a text, not {name!r}")
    if isinstance(hw, str) and "," in hw:
        raise OptionError(f"hw={hw!r}: give several specs as a list, e.g. "
                          f"hw={[h.strip() for h in hw.split(',')]!r}")
    config = config or Config.from_options(**options)
    several = isinstance(hw, (list, tuple))
    given: Sequence[SpecLike] = hw if isinstance(hw, (list, tuple)) else [hw]
    if not given:
        raise OptionError(f"hw={hw!r}: name at least one spec")
    specs = [h if isinstance(h, HwSpec) else load_spec(h) for h in given]
    m = measure_for(matrix, config, cache=cache)
    if name is not None:
        m = replace(m, name=name)
    found = [analyze_measured(m, spec, config) for spec in specs]
    return found if several else found[0]


def measure_for(matrix: MatrixLike, config: Config, *, cache: bool = True,
                need_matrix: bool = False, max_memory: float | None = None) -> Measured:
    """What ``config`` needs measured of ``matrix`` (the pattern features or the counts
    only), from the structure cache where it holds them; the matrix is kept where
    ``need_matrix`` or the distributed bounds ask for it."""
    return measured(matrix, needs_pattern(config), cache=cache,
                    need_matrix=need_matrix or bool(config.ranks) or bool(config.reorder),
                    max_memory=max_memory)


def analyze_measured(m: Measured, spec: HwSpec, config: Config) -> Analysis:
    """:func:`analyze` of a measured matrix (see :func:`measure_for`) on one spec."""
    s = m.structure
    info = MatrixInfo(
        name=m.name, path=m.path, rows=s.rows, cols=s.cols,
        stored_entries=s.stored_entries, numeric_nonzeros=s.numeric_nonzeros,
        density=s.density, field=m.header.field, symmetry=m.header.symmetry,
    )
    verdict = _classify(s) if needs_pattern(config) else None
    result = analyze_structure(info, s, spec, config, verdict)
    if not (config.ranks or config.reorder):
        return result
    assert m.matrix is not None, "measure_for keeps the matrix for ranks and reorderings"
    result = replace(result, distributed=_distributed(m.matrix, spec, config))
    return replace(result, reorderings=_reorderings(m.matrix, spec, config, result))


def _check_reorder(spec: HwSpec) -> None:
    if _cache_bytes(spec) is None:
        raise OptionError(f"{spec.name} gives no cache capacity: {{opt:reorder}} compares the "
                          "cache-aware model, which needs one")


def _reorderings(m: Matrix, spec: HwSpec, config: Config, original: Analysis
                 ) -> tuple[Reordering, ...]:
    """Each ordering of ``config.reorder``: permute ``m``, analyse it afresh (structure,
    class, every result), and set it beside ``original``."""
    if not config.reorder:
        return ()
    from ..structure.reorder import reorder

    _check_reorder(spec)
    plain = replace(config, reorder=(), ranks=())
    found = []
    for name in config.reorder:
        r = reorder(m, name)
        found.append((name, r.seconds, analyze(r.matrix, spec, plain)))
    return compare(original, found)


def with_reorderings(original: Analysis, reordered: Sequence[Reordering], spec: HwSpec,
                     config: Config) -> Analysis:
    """``original`` (an analysis on ``spec``) with the reorderings of another spec's
    analysis of the same matrix modelled on ``spec`` too: their structures are reused,
    not measured again."""
    if not reordered:
        return original
    _check_reorder(spec)
    plain = replace(config, reorder=(), ranks=())
    found = [(ro.ordering, ro.seconds,
              analyze_structure(ro.analysis.matrix, ro.analysis.structure, spec, plain,
                                ro.analysis.verdict)) for ro in reordered]
    return replace(original, reorderings=compare(original, found))


def classify(matrix: MatrixLike, *, cache: bool = True) -> Verdict:
    """The structure class of ``matrix`` (a path, scipy matrix, array or :class:`Matrix`),
    with its confidence, parameters and the features that decided it; a file's structure
    comes from the structure cache where it is there (``cache`` False: not).

    >>> import numpy as np
    >>> classify(np.eye(64)).label
    'banded'
    """
    return classify_structure(measured(matrix, cache=cache).structure)
