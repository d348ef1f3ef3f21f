"""Memory traffic and arithmetic of SpMV/SpMM by storage format and B-reuse model.

Notation (the design brief, after *The Sparsity Roofline* and *Sparsity-Aware Roofline
Models for Sparse Matrix-Matrix Multiplication*): A is m x k with nnz stored entries,
C = A·B with B k x d dense; SpMV is d = 1. s_v bytes per value, s_i bytes per index.

Useful work is F = 2·nnz·d: one multiply and one add per stored entry per column of B.
(*The Sparsity Roofline* counts nnz·d, one fused multiply-add; sparsroof counts both
halves, as peak FLOP/s figures do.) Formats whose fill a kernel must compute on (BSR
blocks, DIA diagonals, dense) execute more: F_exec = 2·(executed slots)·d; padding a kernel
can skip (ELL, HYB, SELL) is stored (``a_stored_bytes``) but neither read nor executed in
the bound (:mod:`sparsroof.model.storage`).

A complex matrix (Matrix Market field ``complex`` or ``hermitian``) multiplies complex A,
B and C at the precision of ``dtype``: each value is two of them (2·s_v bytes), and a
complex multiply-add is 4 real multiplies and 4 real adds, F = 8·nnz·d
(:data:`COMPLEX_PARTS`).

A is charged by its storage format for every B model. The sparsity-aware SpMM paper
charges A 12·nnz in its text (8-byte value + 4-byte index) but writes 8·nnz in its blocked
equation (4); sparsroof follows the text, since the indices must be read, and adds the
format's own index structure (e.g. CSR row pointers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import OptionError, unknown_choice
from ..structure.features import Structure
from . import reuse
from . import storage as formats
from .storage import Storage

__all__ = [
    "VALUE_BYTES",
    "INDEX_BYTES",
    "COMPLEX_PARTS",
    "COMPLEX_FLOPS",
    "value_terms",
    "KERNELS",
    "STORAGES",
    "MODELS",
    "ModelParams",
    "Traffic",
    "useful_flops",
    "storage_of",
    "b_bytes",
    "c_bytes",
    "traffic",
    "dense_traffic",
    "nm_pattern",
    "unavailable",
]

#: bytes per stored value, by precision name
VALUE_BYTES: dict[str, int] = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}
#: bytes per stored index, by index type
INDEX_BYTES: dict[str, int] = {"int32": 4, "int64": 8}
KERNELS = ("spmv", "spmm")
BLOCK_SIZES = (2, 4, 8, 16, 32)
#: storage formats of A
STORAGES = ("csr", "csc", "coo", "ell", "hyb", "sell", *(f"bsr{b}" for b in BLOCK_SIZES), "dia",
            "dcsr", "nm", "dense")
#: B-reuse models
MODELS = ("compulsory", "random", "banded", "blocked", "scale-free", "scale-free-measured",
          "cache-aware")


@dataclass(frozen=True)
class ModelParams:
    """Parameters of the B models: reuse factor ρ of the blocked model, hub fraction f of
    the scale-free model, block size t (None: the classifier's, else 4), cache capacity
    for the cache-aware model (None: that model is not available)."""

    reuse_factor: float = 0.25
    hub_fraction: float = 0.001
    block_size: int | None = None
    cache_bytes: float | None = None
    hyb_split: str = "rule"  # "rule": Bell & Garland's width; "least": the fewest bytes


#: a complex value is this many real values, and its multiply-add this many times the
#: real one's FLOPs (4 multiplies and 4 adds against 1 and 1)
COMPLEX_PARTS, COMPLEX_FLOPS = 2, 4


def value_terms(dtype: str, complex_values: bool = False) -> tuple[int, float]:
    """(bytes of one value, FLOPs of one multiply-add) at ``dtype``: a complex value is
    :data:`COMPLEX_PARTS` reals and its multiply-add :data:`COMPLEX_FLOPS` times the real
    one's 2 FLOPs.

    >>> value_terms("fp64"), value_terms("fp64", complex_values=True)
    ((8, 2.0), (16, 8.0))
    """
    if complex_values:
        return VALUE_BYTES[dtype] * COMPLEX_PARTS, 2.0 * COMPLEX_FLOPS
    return VALUE_BYTES[dtype], 2.0


@dataclass(frozen=True)
class Traffic:
    """Bytes moved and FLOPs of one kernel on one matrix, in one format and reuse model."""

    kernel: str
    width: int
    storage: str
    model: str
    dtype: str
    index: str
    flops_useful: float
    flops_executed: float
    bytes_a: float
    bytes_b: float
    bytes_c: float
    a_values_stored: float = 0.0
    a_index_bytes: float = 0.0
    a_stored_bytes: float = 0.0  # bytes A occupies, padding included (>= bytes_a)
    storage_detail: str = ""
    model_detail: str = ""
    conforming: float | None = None  # N:M: share of groups that fit; None elsewhere
    complex_values: bool = False  # A, B and C complex: 2 values and 4x the FLOPs each

    @property
    def bytes_total(self) -> float:
        return self.bytes_a + self.bytes_b + self.bytes_c

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in useful FLOP per byte."""
        return self.flops_useful / self.bytes_total if self.bytes_total else 0.0


def useful_flops(nnz: int, d: int) -> float:
    """F = 2·nnz·d (multiply and add per stored entry per column of B).

    >>> useful_flops(10, 4)
    80.0
    """
    return 2.0 * nnz * d


def c_bytes(m: int, d: int, s_v: int) -> float:
    """C written once: m·d·s_v.

    >>> c_bytes(m=3, d=2, s_v=4)
    24.0
    """
    return float(m * d * s_v)


def nm_pattern(conformance: dict[str, float]) -> tuple[int, int, float]:
    """The sparsest N:M pattern the matrix fully conforms to, else 2:4 with its share.

    >>> nm_pattern({"2:4": 1.0, "1:4": 1.0, "1:2": 0.5})
    (1, 4, 1.0)
    >>> nm_pattern({"2:4": 0.8, "1:4": 0.3})
    (2, 4, 0.8)
    >>> nm_pattern({})    # no entries (no groups measured): every pattern fits
    (1, 8, 1.0)
    """
    from ..structure.features import NM_PATTERNS

    parsed = [(int(n), int(m), share) for key, share in conformance.items()
              for n, m in [key.split(":")]] or [(n, m, 1.0) for n, m in NM_PATTERNS]
    fitting = [p for p in parsed if p[2] >= 1.0]
    if fitting:
        return min(fitting, key=lambda p: (p[0] / p[1], p[1]))
    return 2, 4, conformance.get("2:4", 0.0)


def storage_of(s: Structure, name: str, s_v: int, s_i: int, hyb_split: str = "rule"
               ) -> Storage:
    """A of structure ``s`` stored in format ``name``; HYB split by Bell & Garland's rule or
    (``hyb_split="least"``) at the width that stores the fewest bytes."""
    if name.startswith("bsr"):
        b = int(name[3:])
        # a matrix without entries has no blocks (its pattern passes are not run)
        return formats.bsr(s.blocks[b] if s.stored_entries else 0, s.rows, b, s_v, s_i)
    if name == "nm":
        n, m_group, share = nm_pattern(s.nm_conformance)
        return formats.nm(formats.nm_slots(s.rows, s.cols, n, m_group), n, m_group, share, s_v)
    table: dict[str, Callable[[], Storage]] = {
        "csr": lambda: formats.csr(s.stored_entries, s.rows, s_v, s_i),
        "csc": lambda: formats.csc(s.stored_entries, s.cols, s_v, s_i),
        "dcsr": lambda: formats.dcsr(s.stored_entries, s.nonempty_rows, s_v, s_i),
        "coo": lambda: formats.coo(s.stored_entries, s_v, s_i),
        "ell": lambda: formats.ell(s.row_length_counts, s.rows, s_v, s_i),
        "sell": lambda: formats.sell(s.row_length_counts, s.rows, s_v, s_i),
        "hyb": lambda: formats.hyb(
            s.row_length_counts, s.rows, s_v, s_i,
            formats.hyb_least_width(s.row_length_counts, s.rows, s_v, s_i)
            if hyb_split == "least" else None),
        "dia": lambda: formats.dia(s.n_diagonals, s.diagonal_cells, s.rows, s_v, s_i),
        "dense": lambda: formats.dense(s.rows, s.cols, s_v),
    }
    return table[name]()


def _block_size(params: ModelParams, verdict_block: int | None) -> int:
    return params.block_size or verdict_block or 4


def b_bytes(s: Structure, model: str, d: int, s_v: int, params: ModelParams,
            verdict_block: int | None = None) -> tuple[float, str] | None:
    """(bytes of B, detail) under ``model``; None when the model cannot apply here
    (no power-law fit, no cache capacity in the spec, or an unknown block size).

    No model reads less than the compulsory traffic: every referenced row of B must be
    read once. The blocked model's reuse factor and the scale-free model with α <= 2 can
    fall below it; they are raised to it, and the detail says so.
    """
    found = _b_model(s, model, d, s_v, params, verdict_block)
    if found is None:
        return None
    floor = reuse.compulsory(s.nonempty_cols, d, s_v)
    if found[0] < floor:
        return floor, (found[1] + ", " if found[1] else "") + "raised to the compulsory floor"
    return found


def _b_model(s: Structure, model: str, d: int, s_v: int, params: ModelParams,
             verdict_block: int | None) -> tuple[float, str] | None:
    nnz = s.stored_entries
    if model in ("compulsory", "banded"):
        return reuse.compulsory(s.nonempty_cols, d, s_v), f"{s.nonempty_cols} rows of B"
    if model == "random":
        return reuse.random(nnz, d, s_v), ""
    if model == "blocked":
        t = _block_size(params, verdict_block)
        if t not in s.blocks:
            return None
        return (reuse.blocked(s.blocks[t], t, nnz, d, s_v, params.reuse_factor),
                f"t={t}, rho={params.reuse_factor:g}")
    if model == "scale-free":
        alpha = s.col_alpha
        if alpha is None:
            return None
        hub = min(float(nnz), reuse.hub_entries(nnz, params.hub_fraction, alpha))
        n_hub = params.hub_fraction * s.cols
        fits = (s.col_llr_exponential or 0.0) > 0 and (s.col_llr_p or 1.0) < 0.1
        return (reuse.scale_free(nnz, hub, n_hub, d, s_v),
                f"alpha={alpha:.2f}, f={params.hub_fraction:g}, hub share {hub / max(nnz, 1):.2f}"
                + ("" if fits else ", a poor fit: an exponential tail fits as well or better"))
    if model == "scale-free-measured":
        key = {0.001: "0.1%", 0.01: "1%"}.get(params.hub_fraction)
        if key is None or key not in s.hub_share:
            return None
        hub = s.hub_share[key] * nnz
        n_hub = max(1, math.ceil(params.hub_fraction * s.cols))
        return (reuse.scale_free(nnz, hub, n_hub, d, s_v),
                f"measured hub share {s.hub_share[key]:.2f} of top {n_hub} columns")
    if model == "cache-aware":
        if params.cache_bytes is None or not s.panel_columns:
            return None
        h = reuse.cache_aware_height(s.panel_columns, d, s_v, params.cache_bytes)
        return float(s.panel_columns[h][0] * d * s_v), f"panels of {h} rows"
    raise ValueError(f"unknown B model {model!r}")


def unavailable(s: Structure, storage: str, model: str, params: ModelParams | None = None,
                verdict_block: int | None = None) -> str:
    """Why :func:`traffic` returned None for this storage and model: one line for the user.

    >>> from sparsroof.structure.features import Structure
    >>> s = Structure(rows=3, cols=3, stored_entries=3, numeric_nonzeros=3, nonempty_rows=3,
    ...               nonempty_cols=3, max_row_length=1)
    >>> unavailable(s, "csr", "scale-free")
    'no power law can be fitted to the column degrees: 3 non-empty columns (at least 10 needed)'
    """
    params = params or ModelParams()
    if storage == "dense":
        return "a dense A multiplies every row of B: only the compulsory model applies"
    if model == "scale-free":
        if s.nonempty_cols < 10:
            return (f"no power law can be fitted to the column degrees: {s.nonempty_cols} "
                    "non-empty columns (at least 10 needed)")
        return "no power law was fitted (the pattern features were not measured)"
    if model == "scale-free-measured":
        return (f"the hub share is measured for the top 0.1 % and 1 % of columns only, "
                f"not f={params.hub_fraction:g}")
    if model == "cache-aware":
        if params.cache_bytes is None:
            return "the hardware spec gives no cache capacity"
        return "the panel counts were not measured"
    if model == "blocked":
        return f"no {_block_size(params, verdict_block)}-block counts were measured"
    return "not applicable to this matrix"


def traffic(s: Structure, *, kernel: str, width: int, storage: str, model: str, dtype: str,
            index: str, params: ModelParams | None = None,
            verdict_block: int | None = None, complex_values: bool = False
            ) -> Traffic | None:
    """Traffic of one kernel configuration on a matrix of structure ``s`` (None when the
    model does not apply to this matrix or spec); ``complex_values``: A, B and C complex.

    >>> from sparsroof.structure.features import Structure
    >>> s = Structure(rows=2, cols=2, stored_entries=2, numeric_nonzeros=2, nonempty_rows=2,
    ...               nonempty_cols=2, max_row_length=1)
    >>> real, cplx = (traffic(s, kernel="spmv", width=1, storage="coo", model="compulsory",
    ...               dtype="fp64", index="int32", complex_values=c) for c in (False, True))
    >>> real.bytes_total, cplx.bytes_total   # (2·16 + 2·8 + 2·8) ; (2·24 + 2·16 + 2·16)
    (64.0, 112.0)
    >>> real.flops_useful, cplx.flops_useful
    (4.0, 16.0)
    """
    _check_names(kernel, width, storage, model, dtype, index)
    params = params or ModelParams()
    (s_v, fma), s_i = value_terms(dtype, complex_values), INDEX_BYTES[index]
    a = storage_of(s, storage, s_v, s_i, params.hyb_split)
    if storage == "dense":  # a dense A multiplies every row of B: one model only
        b: tuple[float, str] | None = (
            (float(s.cols * width * s_v), "all of B") if model == "compulsory" else None)
    else:
        b = b_bytes(s, model, width, s_v, params, verdict_block)
    if b is None:
        return None
    return Traffic(
        kernel=kernel, width=width, storage=storage, model=model, dtype=dtype, index=index,
        flops_useful=fma / 2.0 * useful_flops(s.stored_entries, width),
        flops_executed=fma * a.executed_entries * width,
        bytes_a=a.bytes, bytes_b=b[0], bytes_c=c_bytes(s.rows, width, s_v),
        a_values_stored=a.values_stored, a_index_bytes=a.index_bytes,
        a_stored_bytes=a.stored_bytes, storage_detail=a.detail, model_detail=b[1],
        conforming=a.conforming, complex_values=complex_values,
    )


def _check_names(kernel: str, width: int, storage: str, model: str, dtype: str,
                 index: str) -> None:
    """A name :func:`traffic` does not know, or a width its kernel cannot have, is a usage
    error naming the parameter (a library caller gives them as they come).

    >>> _check_names("spmv", 1, "CSR", "compulsory", "fp64", "int32")
    Traceback (most recent call last):
    ...
    sparsroof.errors.OptionError: storage: unknown choice 'CSR'; did you mean 'csr'? (choose ...
    """
    for part, given, known in (("kernel", kernel, KERNELS), ("storage", storage, STORAGES),
                               ("model", model, MODELS), ("dtype", dtype, VALUE_BYTES),
                               ("index", index, INDEX_BYTES)):
        if given not in known:
            raise unknown_choice(str(given), tuple(known), f"{part}: ")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise OptionError(f"width: a whole number of columns of B, at least 1 (not {width!r})")
    if kernel == "spmv" and width != 1:
        raise OptionError(f"width: spmv multiplies one vector (width 1, not {width}); "
                          "spmm multiplies several")


def dense_traffic(m: int, k: int, width: int, dtype: str, complex_values: bool = False
                  ) -> Traffic:
    """The dense GEMM of the same shape, the baseline for speedup:
    F = 2·m·k·d, bytes = (m·k + k·d + m·d)·s_v.

    >>> t = dense_traffic(4, 5, 2, "fp32")
    >>> t.flops_useful, t.bytes_total     # 2·4·5·2 ; (20 + 10 + 8)·4
    (80.0, 152.0)
    """
    s_v, fma = value_terms(dtype, complex_values)
    flops = fma * m * k * width
    return Traffic(
        kernel="gemm", width=width, storage="dense", model="compulsory", dtype=dtype,
        index="-", flops_useful=flops, flops_executed=flops,
        bytes_a=float(m * k * s_v), bytes_b=float(k * width * s_v),
        bytes_c=c_bytes(m, width, s_v), a_values_stored=m * k,
        a_stored_bytes=float(m * k * s_v), complex_values=complex_values,
    )
