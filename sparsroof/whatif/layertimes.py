"""Measured layer times of a pruned network beside their speed of light: *The Sparsity
Roofline*, section 3.4.

The speedup at SoL equals the measured speedup when the dense and the sparse kernels
are equally optimised, i.e. reach the same share of their SoL (% of SoL = SoL time /
measured time, at most 100 %: a run faster than its SoL breaks the bound). Per layer
and per model (the sums over its layers) this module gives the SoL of each measured
kernel; the judging and the tables are those of ``sparsroof compare``.

The CSV has a header with the columns ``layer``, ``pattern`` (a whatif pattern, or
``dense`` for the dense GEMM), ``sparsity`` (percent above 1, else a fraction; empty for
``dense`` and N:M, which fix their own) and ``time_s`` (one instance of the layer), and
optionally ``model`` (the manifest's name: rows of other models are errors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from ..compare import verdict
from ..errors import MeasuredRunsError, SparsroofError
from ..hardware.spec import HwSpec
from ..model.bound import Bound
from ..model.traffic import Traffic
from ..userfile import iter_csv, shown
from .manifest import Layer, Manifest
from .patterns import Pattern, parse_pattern, parse_sparsity
from .placement import Options
from .study import evaluate_layer

__all__ = ["DENSE", "LayerTime", "MeasuredLayer", "ModelTotal", "read_layer_times",
           "measured_layers", "model_totals"]

#: the pattern name of a dense GEMM's time
DENSE = "dense"
_COLUMNS = ("layer", "pattern", "sparsity", "time_s")


@dataclass(frozen=True, slots=True)
class LayerTime:
    """One measured time of one instance of a layer's kernel."""

    source: str  # "times.csv:3"
    model: str  # "" when the file does not say
    layer: str
    pattern: str  # a whatif pattern label, or "dense"
    sparsity: float | None  # None: dense, or the N:M pattern's own level
    time_s: float


@dataclass(frozen=True)
class MeasuredLayer:
    """A measured time beside the traffic and bound of the kernel it timed."""

    time: LayerTime
    model: str
    count: int  # identical instances of the layer in the network
    sparsity: float  # the level the bound was computed at (0 for dense)
    traffic: Traffic
    bound: Bound

    @property
    def dense(self) -> bool:
        return self.time.pattern == DENSE


def _row(row: dict[str, str], source: str) -> LayerTime:
    layer = (row.get("layer") or "").strip()
    if not layer:
        raise ValueError("no layer named")
    text = (row.get("time_s") or "").strip()
    try:
        time_s = float(text)
    except ValueError:
        raise ValueError(f"time_s {shown(text)} is not a number") from None
    if not (math.isfinite(time_s) and time_s > 0):
        raise ValueError(f"time_s {shown(text)} is not a positive number of seconds")
    name = (row.get("pattern") or "").strip()
    level_text = (row.get("sparsity") or "").strip()
    try:
        pattern = DENSE if name.lower() == DENSE else parse_pattern(name).label
        level = parse_sparsity(level_text) if level_text and pattern != DENSE else None
    except SparsroofError as err:
        raise ValueError(str(err)) from None
    return LayerTime(source, (row.get("model") or "").strip(), layer, pattern, level, time_s)


def read_layer_times(path: str | Path) -> tuple[list[LayerTime], list[tuple[str, str]]]:
    """The usable rows of a layer-times CSV and (source, problem) for each other row."""
    source = str(path)
    times, errors = [], []
    with iter_csv(path, lambda problem: MeasuredRunsError(f"{source}: {problem}")) as table:
        missing = [c for c in _COLUMNS if c not in table.header]
        if missing:
            raise MeasuredRunsError(f"{source}: line 1: the header needs the columns "
                                    f"{', '.join(missing)} (expected {', '.join(_COLUMNS)}, "
                                    "optionally model)")
        for line, row in table:
            where = f"{source}:{line}"
            try:
                times.append(_row(row, where))
            except ValueError as err:
                errors.append((where, str(err)))
    return times, errors


def _level(t: LayerTime, pattern: Pattern) -> float:
    fixed = pattern.fixed_sparsity
    if fixed is not None:
        if t.sparsity is not None and not math.isclose(t.sparsity, fixed, abs_tol=1e-9):
            raise ValueError(f"{t.pattern} fixes its sparsity at {100 * fixed:.4g} %, "
                             f"not {100 * t.sparsity:.4g} %")
        return round(fixed, 12)
    if t.sparsity is None:
        raise ValueError(f"pattern {t.pattern} needs a sparsity level")
    return t.sparsity


def _measure(t: LayerTime, layer: Layer, manifest: Manifest, spec: HwSpec,
             options: Options) -> MeasuredLayer:
    pattern = parse_pattern("unstructured" if t.pattern == DENSE else t.pattern)
    level = 0.5 if t.pattern == DENSE else _level(t, pattern)
    r = evaluate_layer(layer, pattern, level, spec, options)
    if t.pattern == DENSE:
        return MeasuredLayer(t, manifest.name, layer.count, 0.0, r.dense_traffic, r.dense)
    if not layer.prune:
        raise ValueError(f"layer {shown(layer.name)} is kept dense (prune: false): time it as "
                         f"pattern {DENSE}")
    return MeasuredLayer(t, manifest.name, layer.count, level, r.sparse_traffic, r.sparse)


def measured_layers(times: list[LayerTime], manifest: Manifest, spec: HwSpec,
                    options: Options) -> tuple[list[MeasuredLayer], list[tuple[str, str]]]:
    """Each time beside its layer's kernel bound; an unknown layer or model, or a pattern
    the layer cannot take, becomes a (source, problem) error and the rest are kept.

    A measured time is judged against the bound ``compare`` uses, whatever the study's
    own options say: the cache level a layer's working set fits (not main memory) and
    one kernel launch, so that no real run can beat it."""
    options = replace(options, cache_roof=True, launches=max(options.launches, 1))
    by_name = {layer.name: layer for layer in manifest.layers}
    found, errors = [], []
    for t in times:
        try:
            if t.model and t.model != manifest.name:
                raise ValueError(f"model {shown(t.model)} is not {shown(manifest.name)}, "
                                 "the network studied")
            if t.layer not in by_name:
                raise ValueError(f"{manifest.name} has no layer {shown(t.layer)}")
            found.append(_measure(t, by_name[t.layer], manifest, spec, options))
        except (ValueError, SparsroofError) as err:
            errors.append((t.source, str(err)))
    return found, errors


@dataclass(frozen=True)
class ModelTotal:
    """The measured layers of one (pattern, level) summed over the network: each layer
    counts as many times as it occurs (a layer timed once stands for its repeats)."""

    model: str
    pattern: str
    sparsity: float
    layers: int  # layer instances measured
    sol_s: float
    measured_s: float
    #: over the layers measured both dense and at this pattern: (SoL, measured) speedup
    speedups: tuple[float, float] | None = None

    @property
    def pct_sol(self) -> float:
        """Σ SoL / Σ measured, in % (section 3.4's per-model % of SoL)."""
        return verdict.pct_sol(self.measured_s, self.sol_s)


def _speedups(mine: list[MeasuredLayer], dense: dict[str, MeasuredLayer]
              ) -> tuple[float, float] | None:
    both = [m for m in mine if m.time.layer in dense]
    if not both or mine[0].dense:
        return None
    sol = sum(m.count * dense[m.time.layer].bound.sol_s for m in both) / \
        sum(m.count * m.bound.sol_s for m in both)
    meas = sum(m.count * dense[m.time.layer].time.time_s for m in both) / \
        sum(m.count * m.time.time_s for m in both)
    return sol, meas


def model_totals(measured: list[MeasuredLayer]) -> list[ModelTotal]:
    """One total per (model, pattern, level), in order of first appearance; a layer timed
    twice at one pattern and level counts once (its first time).

    >>> from sparsroof.hardware.library import load_spec
    >>> net = Manifest("toy", "t", "", "made up", (Layer("fc", 64, 128, 16, count=2),))
    >>> t = [LayerTime("t:2", "", "fc", "dense", None, 2.6e-6),
    ...      LayerTime("t:3", "", "fc", "unstructured", 0.75, 2e-6)]
    >>> found, _ = measured_layers(t, net, load_spec("a100"), Options())
    >>> [(m.pattern, m.layers, round(m.pct_sol, 1)) for m in model_totals(found)]  # 1.3 us
    [('dense', 2, 50.0), ('unstructured', 2, 65.0)]
    """
    groups: dict[tuple[str, str, float], dict[str, MeasuredLayer]] = {}
    for m in measured:
        groups.setdefault((m.model, m.time.pattern, m.sparsity), {}).setdefault(m.time.layer, m)
    totals = []
    for (model, pattern, level), by_layer in groups.items():
        mine = list(by_layer.values())
        dense = groups.get((model, DENSE, 0.0), {})
        totals.append(ModelTotal(
            model, pattern, level, sum(m.count for m in mine),
            sum(m.count * m.bound.sol_s for m in mine),
            sum(m.count * m.time.time_s for m in mine), _speedups(mine, dense)))
    return totals
