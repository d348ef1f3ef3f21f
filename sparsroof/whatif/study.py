"""Whole-model Sparsity Roofline: what-if pruning studies over a model manifest.

After *The Sparsity Roofline: Understanding the Hardware Limits of Sparse Neural
Networks*, section 3.2. For every weight GEMM of a model, the dense layer and the pruned
layer get the same roofline bound (:func:`sparsroof.roofline.bound`):

    SoL_layer = max(F_exec / P_unit, bytes / β)                      (eq. 2)
    SoL_model = Σ_layers count · SoL_layer,  speedup = Σ dense / Σ sparse   (eq. 3)

with bytes = A (the weights in their storage format) + B (input features) + C (output
features) read or written once (eq. 1). F counts 2 FLOPs per stored entry per column
(multiply and add); the paper counts nnz·n, half as many, which only changes the compute
term. Which unit runs a pattern, and what it executes, is decided in
:mod:`sparsroof.whatif.placement`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import AccuracyError, SparsroofError
from ..hardware.spec import HwSpec
from ..model.bound import Bound, bound
from ..model.traffic import VALUE_BYTES, Traffic, c_bytes
from ..userfile import FieldError, number, read_csv, shown
from .manifest import Layer, Manifest
from .patterns import Pattern, parse_pattern, parse_sparsity
from .placement import (
    Options,
    Placement,
    dense_placement,
    file_placement,
    synthetic_placement,
)

__all__ = [
    "DEFAULT_SPARSITIES",
    "LayerResult",
    "ModelResult",
    "layer_traffic",
    "evaluate_layer",
    "evaluate_model",
    "study",
    "levels_for",
    "read_accuracy",
]

#: the sparsity levels of *The Sparsity Roofline* (halving the nonzeros each step)
DEFAULT_SPARSITIES = (0.5, 0.75, 0.875, 0.9375, 0.96875)



@dataclass(frozen=True)
class LayerResult:
    """One layer (standing for ``count`` identical ones): its dense GEMM, and its pruned
    weights' placement (format and unit) with their bound."""

    layer: str
    count: int
    placement: Placement
    dense_traffic: Traffic
    dense: Bound
    sparse_traffic: Traffic
    sparse: Bound

    @property
    def dense_s(self) -> float:
        return self.count * self.dense.sol_s

    @property
    def sparse_s(self) -> float:
        return self.count * self.sparse.sol_s

    @property
    def speedup(self) -> float:
        return self.dense_s / self.sparse_s if self.sparse_s else math.inf

    @property
    def feature_share_dense(self) -> float:
        """Share of the dense layer's traffic spent on input and output features."""
        return _feature_share(self.dense_traffic)

    @property
    def feature_share_sparse(self) -> float:
        """The same for the pruned layer (pruning cannot remove these bytes)."""
        return _feature_share(self.sparse_traffic)


def _feature_share(t: Traffic) -> float:
    return (t.bytes_b + t.bytes_c) / t.bytes_total if t.bytes_total else 0.0


@dataclass(frozen=True)
class ModelResult:
    """A whole model at one (pattern, sparsity): sums over its layers."""

    model: str
    spec: str
    pattern: str
    sparsity: float
    layers: tuple[LayerResult, ...]
    accuracy: float | None = None

    @property
    def dense_s(self) -> float:
        return sum(r.dense_s for r in self.layers)

    @property
    def sparse_s(self) -> float:
        return sum(r.sparse_s for r in self.layers)

    @property
    def speedup(self) -> float:
        """Speedup at SoL: Σ dense SoL / Σ sparse SoL (eq. 3)."""
        return self.dense_s / self.sparse_s if self.sparse_s else math.inf

    def _bytes(self, dense: bool, features_only: bool) -> float:
        total = 0.0
        for r in self.layers:
            t = r.dense_traffic if dense else r.sparse_traffic
            total += r.count * ((t.bytes_b + t.bytes_c) if features_only else t.bytes_total)
        return total

    @property
    def feature_share_dense(self) -> float:
        """Share of all the dense model's bytes that are input and output features."""
        return self._bytes(True, True) / self._bytes(True, False)

    @property
    def feature_share_sparse(self) -> float:
        return self._bytes(False, True) / self._bytes(False, False)

    @property
    def flops_useful(self) -> float:
        """Useful FLOPs of the pruned model: Σ count · 2·nnz·n over its layers."""
        return sum(r.count * r.sparse_traffic.flops_useful for r in self.layers)

    @property
    def dense_flops(self) -> float:
        """FLOPs of the dense model: Σ count · 2·m·k·n."""
        return sum(r.count * r.dense_traffic.flops_useful for r in self.layers)

    @property
    def memory_bound_layers(self) -> int:
        """Layers (counting repeats) whose pruned kernel is memory bound."""
        return sum(r.count for r in self.layers if r.sparse.bound == "memory")

    @property
    def launch_bound_layers(self) -> int:
        """Layers (counting repeats) whose pruned kernel takes its launch floor: pruning
        cannot make them faster."""
        return sum(r.count for r in self.layers if r.sparse.bound == "launch")

    @property
    def layer_count(self) -> int:
        return sum(r.count for r in self.layers)


def layer_traffic(layer: Layer, placement: Placement, options: Options) -> Traffic:
    """Bytes and FLOPs of one layer's kernel: A as stored, B = the input features read
    once, C = m·n·s_v written once; useful F = 2·nnz·n, executed F = 2·executed·n.

    >>> from sparsroof.whatif.placement import Options, dense_placement
    >>> from sparsroof.hardware.library import load_spec
    >>> lay = Layer("fc", m=4, k=8, n=2)
    >>> t = layer_traffic(lay, dense_placement(lay, load_spec("a100"), Options()), Options())
    >>> t.bytes_a, t.bytes_b, t.bytes_c, t.flops_useful    # fp16: 32·2, 16·2, 8·2, 2·32·2
    (64.0, 32.0, 16.0, 128.0)
    """
    s_v = VALUE_BYTES[options.dtype]
    n = layer.width(options.batch)
    return Traffic(
        kernel="gemm" if placement.storage == "dense" else "spmm", width=n,
        storage=placement.storage, model="compulsory", dtype=options.dtype,
        index="-" if placement.storage == "dense" else options.index,
        flops_useful=2.0 * placement.useful_entries * n,
        flops_executed=2.0 * placement.executed_entries * n,
        bytes_a=placement.a.bytes,
        bytes_b=float(layer.input_elements(options.batch, options.im2col) * s_v),
        bytes_c=c_bytes(layer.m, n, s_v), a_values_stored=placement.a.values_stored,
        a_stored_bytes=placement.a.stored_bytes,
        a_index_bytes=placement.a.index_bytes, storage_detail=placement.detail,
        model_detail="features read once", conforming=placement.a.conforming,
    )


def _bound(t: Traffic, placement: Placement, spec: HwSpec, options: Options) -> Bound:
    # sparse tensor cores are charged per entry multiplied, at half their quoted peak
    return bound(t, spec, unit=placement.unit, precision=placement.precision,
                 launches=options.launches,
                 footprint=t.bytes_total if options.cache_roof else None,
                 timing=options.timing, calls_per_sync=options.calls_per_sync)


def evaluate_layer(layer: Layer, pattern: Pattern, sparsity: float, spec: HwSpec,
                   options: Options) -> LayerResult:
    """Dense and pruned SoL of one layer; a layer with ``prune: false`` stays dense, and a
    pruned weight file named in the manifest replaces the synthetic pattern."""
    dense = dense_placement(layer, spec, options)
    if not layer.prune:
        placement = dense
    elif (pattern.label, sparsity) in layer.weights:
        placement = file_placement(layer, pattern, layer.weights[(pattern.label, sparsity)], spec,
                             options)
    else:
        placement = synthetic_placement(layer, pattern, sparsity, spec, options)
    dt, st = layer_traffic(layer, dense, options), layer_traffic(layer, placement, options)
    return LayerResult(layer.name, layer.count, placement, dt, _bound(dt, dense, spec, options),
                       st, _bound(st, placement, spec, options))


def evaluate_model(manifest: Manifest, pattern: Pattern, sparsity: float, spec: HwSpec,
                   options: Options) -> ModelResult:
    """Every layer of ``manifest`` pruned with ``pattern`` at ``sparsity`` (eq. 3)."""
    layers = tuple(evaluate_layer(layer, pattern, sparsity, spec, options)
                   for layer in manifest.layers)
    return ModelResult(manifest.name, spec.name, pattern.label, sparsity, layers)


def levels_for(pattern: Pattern, sparsities: Sequence[float]) -> tuple[float, ...]:
    """The levels a pattern is evaluated at: an N:M pattern only at its own 1 − N/M.

    >>> levels_for(parse_pattern("2:8"), (0.5, 0.75)), levels_for(parse_pattern("block4"), (0.5,))
    ((0.75,), (0.5,))
    """
    fixed = pattern.fixed_sparsity
    return (round(fixed, 12),) if fixed is not None else tuple(sparsities)


def study(manifest: Manifest, spec: HwSpec, patterns: Sequence[Pattern],
          sparsities: Sequence[float], options: Options,
          accuracy: dict[tuple[str, float], float] | None = None) -> list[ModelResult]:
    """One :class:`ModelResult` per pattern and level, with accuracy where it is known."""
    results = []
    for pattern in patterns:
        for level in levels_for(pattern, sparsities):
            r = evaluate_model(manifest, pattern, level, spec, options)
            results.append(replace(r, accuracy=(accuracy or {}).get((pattern.label, level))))
    return results


def read_accuracy(path: str | Path) -> dict[tuple[str, float], float]:
    """(pattern label, sparsity fraction) -> accuracy, from a CSV with the columns
    pattern, sparsity (percent above 1, else a fraction) and accuracy."""
    source = str(path)
    header, rows = read_csv(path, lambda problem: AccuracyError(f"{source}: {problem}"))
    missing = {"pattern", "sparsity", "accuracy"} - set(header)
    if missing:
        raise AccuracyError(f"{source}: missing column(s) {', '.join(sorted(missing))} "
                            "(expected pattern, sparsity, accuracy)")
    table: dict[tuple[str, float], float] = {}
    for line, row in rows:
        where = f"{source}: line {line}"
        try:
            pattern = parse_pattern(row["pattern"] or "")
            level = parse_sparsity(row["sparsity"] or "")
            table[(pattern.label, level)] = number(row["accuracy"] or "", "accuracy",
                                                   from_text=True)
        except SparsroofError as err:
            raise AccuracyError(f"{where}: {err}") from None
        except FieldError:
            raise AccuracyError(f"{where}: accuracy {shown(row['accuracy'])} is not a "
                                "finite number") from None
    return table
