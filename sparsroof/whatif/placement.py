"""How a pruned weight matrix is stored and which compute unit runs it.

The unit choice follows *The Sparsity Roofline*, section 5: unstructured sparsity runs on
SIMT (CUDA) cores in CSR; block sparsity on dense tensor cores in BSR, multiplying the
zeros inside kept blocks; 2:4 on the sparse tensor cores. For other N:M patterns:

* today's hardware (default): a pattern whose every matrix is also 2:4 (1:4, 2:8, 2:16,
  ...) runs on the sparse tensor cores stored as 2:4; any other is read in its compressed
  N:M form and expanded on chip for the dense tensor cores, which multiply every entry;
* ``nm_native`` (the hardware architect's hypothetical): a unit that runs any N:M pattern
  natively, stored as N:M, at the same throughput as the 2:4 sparse tensor cores.

Sparse tensor-core peaks are quoted as dense-equivalent rates (a 2:4 GEMM counted as the
dense GEMM it replaces, twice the rate of the entries actually multiplied). sparsroof
counts the entries multiplied, so it charges them against half that peak.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ManifestError, MatrixFileError, OptionError
from ..hardware.spec import HwSpec
from ..matrix.mtx import load
from ..model import storage
from ..model.bound import resolve_unit
from ..model.storage import Storage
from ..model.timing import DEFAULT_TIMING, check_timing
from ..model.traffic import INDEX_BYTES, VALUE_BYTES
from .manifest import Layer
from .patterns import (
    Pattern,
    block_count,
    blocks_kept,
    entries,
    fits_2to4,
    nm_conforming,
    nm_entries,
)

__all__ = ["Options", "Placement", "dense_placement", "synthetic_placement",
           "file_placement"]

_SPARSE_TC = "tensor-sparse"


@dataclass(frozen=True)
class Options:
    """Study settings. ``unit`` overrides the unit of every pruned kernel (which then
    multiplies only its stored entries); ``im2col`` charges convolution inputs as the
    k x n im2col matrix instead of the feature map read once; ``cache_roof`` lets a cache
    level's bandwidth apply when a layer's working set fits it; ``launches`` kernels are
    charged per layer at the spec's launch floor for runs timed by ``timing`` (as
    ``analyze`` charges them; 0 is the paper's launch-free model)."""

    dtype: str = "fp16"
    index: str = "int32"
    batch: int = 1
    unit: str | None = None
    precision: str | None = None
    nm_native: bool = False
    im2col: bool = False
    cache_roof: bool = False
    launches: int = 1
    timing: str = DEFAULT_TIMING
    calls_per_sync: int = 1

    def __post_init__(self) -> None:
        check_timing(self.timing, self.calls_per_sync)
        if self.dtype not in VALUE_BYTES or self.index not in INDEX_BYTES:
            raise OptionError(f"unknown dtype {self.dtype!r} or index {self.index!r}")
        if self.batch < 1 or self.launches < 0:
            raise OptionError("the batch must be at least 1 and launches at least 0")


@dataclass(frozen=True)
class Placement:
    """A layer's weights in one format on one unit: bytes of A and entries multiplied."""

    storage: str
    unit: str
    precision: str
    a: Storage
    useful_entries: float
    executed_entries: float
    detail: str = ""
    source: str = "synthetic"


def _unit(spec: HwSpec, unit: str, options: Options, explicit: bool) -> tuple[str, str]:
    return resolve_unit(spec, unit, options.dtype, options.precision, explicit)


def dense_placement(layer: Layer, spec: HwSpec, options: Options) -> Placement:
    """The dense GEMM: m·k values on the tensor cores (SIMT where the spec has none)."""
    unit, precision = _unit(spec, "tensor", options, False)
    a = storage.dense(layer.m, layer.k, VALUE_BYTES[options.dtype])
    return Placement("dense", unit, precision, a, layer.m * layer.k, layer.m * layer.k)


def _nm_placement(layer: Layer, p: Pattern, spec: HwSpec, options: Options,
               nnz: int, conforming: float) -> Placement:
    s_v = VALUE_BYTES[options.dtype]
    native = storage.nm(nnz, p.n, p.m, conforming, s_v)
    if options.unit is not None or options.nm_native:
        unit, precision = _unit(spec, options.unit or _SPARSE_TC, options,
                                options.unit is not None)
        how = "native N:M" if unit == _SPARSE_TC else f"N:M on {unit}"
        return Placement("nm", unit, precision, native, nnz, nnz, how)
    unit, precision = _unit(spec, _SPARSE_TC, options, False)
    if unit == _SPARSE_TC and fits_2to4(p.n, p.m):
        slots = nm_entries(layer.m, layer.k, 2, 4)  # stored as 2:4, padding zeros included
        a = storage.nm(slots, 2, 4, 1.0, s_v)
        how = "2:4 on sparse TC" if (p.n, p.m) == (2, 4) else "stored as 2:4, sparse TC"
        return Placement("nm", unit, precision, a, nnz, slots, how)
    unit, precision = _unit(spec, "tensor", options, False)
    return Placement("nm", unit, precision, native, nnz, layer.m * layer.k,
                  f"expanded for dense {unit}")


def _block_placement(layer: Layer, p: Pattern, spec: HwSpec, options: Options, nnz: int,
                  n_blocks: int) -> Placement:
    a = storage.bsr(n_blocks, layer.m, p.b, VALUE_BYTES[options.dtype],
                    INDEX_BYTES[options.index])
    unit, precision = _unit(spec, options.unit or "tensor", options, options.unit is not None)
    return Placement(f"bsr{p.b}", unit, precision, a, nnz, a.executed_entries,
                  f"{p.b}x{p.b} blocks")


def _csr_placement(layer: Layer, spec: HwSpec, options: Options, nnz: int) -> Placement:
    a = storage.csr(nnz, layer.m, VALUE_BYTES[options.dtype], INDEX_BYTES[options.index])
    unit, precision = _unit(spec, options.unit or "simt", options, options.unit is not None)
    return Placement("csr", unit, precision, a, nnz, nnz, "CSR")


def synthetic_placement(layer: Layer, p: Pattern, sparsity: float, spec: HwSpec,
                     options: Options) -> Placement:
    """The layer pruned to ``sparsity`` with pattern ``p`` (N:M: its own sparsity).

    >>> from sparsroof.hardware.library import load_spec
    >>> from sparsroof.whatif.patterns import parse_pattern
    >>> k = synthetic_placement(Layer("fc", m=8, k=16, n=1), parse_pattern("block4"), 0.75,
    ...                      load_spec("a100"), Options())
    >>> k.unit, k.useful_entries, k.executed_entries   # 2·4 blocks, 2 kept, 16 entries each
    ('tensor', 32, 32)
    """
    if p.kind == "nm":
        return _nm_placement(layer, p, spec, options, nm_entries(layer.m, layer.k, p.n, p.m),
                          1.0)
    nnz = entries(layer.m, layer.k, sparsity)
    if p.kind == "block":
        return _block_placement(layer, p, spec, options, nnz,
                             blocks_kept(layer.m, layer.k, p.b, sparsity))
    return _csr_placement(layer, spec, options, nnz)


def file_placement(layer: Layer, p: Pattern, path: Path, spec: HwSpec,
                options: Options) -> Placement:
    """The layer's pruned weights read from ``path`` (an m x k Matrix Market or .smtx
    file): its stored entries, the BxB blocks they occupy, or its N:M conformance."""
    try:
        matrix = load(path)
    except MatrixFileError as err:  # say whose weights the file was to hold
        raise ManifestError(err.path, f"{err.problem} (the {p.label} weights of layer "
                            f"{layer.name!r})") from None
    if matrix.shape != (layer.m, layer.k):
        raise ManifestError(path, f"shape {matrix.rows}x{matrix.cols} does not match layer "
                            f"{layer.name!r} ({layer.m}x{layer.k})")
    nnz = matrix.stored_entries
    if p.kind == "nm":
        share = nm_conforming(matrix.row, matrix.col, matrix.rows, matrix.cols, p.n, p.m)
        if share < 1.0:
            raise ManifestError(path, f"only {share:.1%} of the groups of {p.m} hold at most "
                                f"{p.n} entries: not a {p.label} matrix")
        kernel = _nm_placement(layer, p, spec, options, nnz, share)
    elif p.kind == "block":
        kernel = _block_placement(layer, p, spec, options, nnz,
                               block_count(matrix.row, matrix.col, matrix.cols, p.b))
    else:
        kernel = _csr_placement(layer, spec, options, nnz)
    return replace(kernel, source=str(path))
