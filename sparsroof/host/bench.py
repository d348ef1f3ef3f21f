"""Real SpMV/SpMM runs on this host, judged against the roofline bound.

Each kernel is scipy's product in one storage format (CSR, CSC, COO, BSR, DIA), a
compiled ELL or HYB SpMV (:mod:`sparsroof.host.ell_kernels`), or cuSPARSE's through CuPy
where a GPU is present, timed by :func:`sparsroof.host.timing.time_call`; the median is
reported.

Achieved rates use the model's own counts: achieved bandwidth = bytes / t and achieved
FLOP/s = useful FLOPs / t, with bytes from :mod:`sparsroof.model.traffic` (format's A, the
compulsory rows of B, C written once). Each run is judged by the one judge of
:mod:`sparsroof.model.verdict`, on its fastest repetition (as ``compare`` judges a bench
file): % of SoL = 100 x SoL / fastest, and a run faster than its bound is a violation (the
model is wrong for this host), reported as such, never clipped. Host kernels are timed
back to back (``stream``); cuSPARSE's with a synchronisation after each call (``sync``),
and each is bounded for that method.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import OptionError
from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix
from ..model import verdict
from ..model.bound import bound
from ..model.traffic import Traffic, traffic
from ..structure.features import Structure
from .timing import Timing, time_call

__all__ = [
    "KERNEL_FORMATS",
    "Measurement",
    "scipy_matrix",
    "kernel_traffic",
    "bench",
    "cusparse_available",
    "other_device",
]

#: storage formats with a real kernel here (scipy, compiled ELL and HYB / cuSPARSE)
KERNEL_FORMATS = ("csr", "csc", "coo", "bsr", "dia", "ell", "hyb")
#: DIA, BSR and ELL are skipped when their padded slots exceed this many times the
#: stored entries
FILL_LIMIT = 20.0
_NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32}


@dataclass(frozen=True)
class Measurement:
    """One kernel measured on one matrix, beside its bound (SI units)."""

    matrix: str
    backend: str
    storage: str  # the traffic model's name: csr, csc, coo, bsr4, dia
    kernel: str
    width: int
    dtype: str
    timing: Timing | None
    bytes_total: float
    flops_useful: float
    flops_executed: float
    sol_s: float
    memory_level: str
    bound: str
    skipped: str = ""  # why the kernel was not run, when it was not
    method: str = "stream"  # how the run was timed (sparsroof.model.timing)

    @property
    def median_s(self) -> float | None:
        return self.timing.median_s if self.timing else None

    @property
    def achieved_bytes_per_s(self) -> float | None:
        return self.bytes_total / self.timing.median_s if self.timing else None

    @property
    def achieved_flops(self) -> float | None:
        return self.flops_useful / self.timing.median_s if self.timing else None

    @property
    def pct_sol(self) -> float | None:
        """100 x SoL / fastest repetition (100 = at the speed of light)."""
        return verdict.pct_sol(self.timing.min_s, self.sol_s) if self.timing else None

    def error_of(self, predicted_s: float | None) -> float | None:
        """|predicted - fastest| / fastest of a predicted time (None without both)."""
        if self.timing is None or predicted_s is None:
            return None
        return abs(predicted_s - self.timing.min_s) / self.timing.min_s

    @property
    def violation(self) -> bool:
        """True when the fastest repetition ran faster than the bound: a model error."""
        return self.timing is not None and verdict.is_violation(self.timing.min_s, self.sol_s)

    @property
    def status(self) -> str:
        """'ok', a violation's word, or '' for a kernel that did not run."""
        return verdict.status(self.timing.min_s, self.sol_s) if self.timing else ""

    def explanation(self, spec: str) -> str:
        """A violation in the words ``compare`` uses."""
        assert self.timing is not None
        return verdict.explain(f"{self.matrix} {self.storage} d={self.width} {self.dtype}",
                               self.timing.min_s, self.sol_s, spec,
                               f"{self.bound}, {self.memory_level} roof")


def _block_size(storage: str) -> int:
    return int(storage[3:]) if storage.startswith("bsr") and len(storage) > 3 else 4


def scipy_matrix(matrix: Matrix, storage: str, dtype: str = "fp64", csr: Any = None) -> Any:
    """``matrix`` as a scipy sparse matrix in ``storage`` (csr, csc, coo, bsrB, dia),
    with random values where the file has none (the kernel's speed does not depend on them).
    Every format is converted from one CSR with sorted columns and duplicates summed
    (``csr``, when the caller has built it already), so COO comes in row-major order.

    >>> m = Matrix.from_scipy(__import__("scipy.sparse").sparse.random(6, 7, density=0.4,
    ...                                                               random_state=1))
    >>> a = scipy_matrix(m, "csr")
    >>> all(np.allclose(scipy_matrix(m, f, csr=a).toarray()[:6, :7], a.toarray())
    ...     for f in ("csr", "csc", "coo", "bsr4", "dia"))
    True
    """
    import scipy.sparse as sp

    if csr is None:
        values = matrix.values
        if values is None or np.iscomplexobj(values):
            values = np.random.default_rng(0).random(matrix.stored_entries)
        data = np.asarray(values, dtype=_NUMPY_DTYPES[dtype])
        csr = sp.coo_matrix((data, (matrix.row, matrix.col)), shape=matrix.shape).tocsr()
        csr.sum_duplicates()  # sorts the columns of each row too
    if storage == "csr":
        return csr
    if storage == "coo":
        return csr.tocoo()
    if storage == "csc":
        return csr.tocsc()
    if storage.startswith("bsr"):  # scipy's BSR needs whole blocks: pad with empty rows/cols
        b = _block_size(storage)
        rows, cols = (-(-n // b) * b for n in csr.shape)
        indptr = np.concatenate([csr.indptr, np.full(rows - csr.shape[0], csr.indptr[-1],
                                                     csr.indptr.dtype)])
        whole = sp.csr_matrix((csr.data, csr.indices, indptr), shape=(rows, cols))
        return whole.tobsr(blocksize=(b, b))
    if storage == "dia":
        with warnings.catch_warnings():  # the fill limit has been checked by the caller
            warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
            return csr.todia()
    raise OptionError(f"no kernel for storage {storage!r} (choose from "
                      f"{', '.join(KERNEL_FORMATS)})")


def kernel_traffic(s: Structure, storage: str, kernel: str, width: int,
                   dtype: str) -> Traffic:
    """Bytes and FLOPs of one kernel under the compulsory B model (int32 indices, as scipy
    stores them for these sizes)."""
    t = traffic(s, kernel=kernel, width=width, storage=storage, model="compulsory",
                dtype=dtype, index="int32")
    assert t is not None  # the compulsory model applies to every format
    return t


def _skip_reason(s: Structure, storage: str, kernel: str = "spmv") -> str:
    if storage in ("ell", "hyb") and kernel != "spmv":
        return f"the {storage.upper()} kernel here multiplies one vector (spmv)"
    if storage == "ell" and s.max_row_length * s.rows > FILL_LIMIT * max(s.stored_entries, 1):
        return (f"ELL would pad {s.rows:,} rows to {s.max_row_length:,} entries, over "
                f"{FILL_LIMIT:g}x the entries")
    if storage == "dia" and s.n_diagonals * s.rows > FILL_LIMIT * max(s.stored_entries, 1):
        return (f"DIA would store {s.n_diagonals:,} diagonals x {s.rows:,} rows, over "
                f"{FILL_LIMIT:g}x the entries")
    if storage.startswith("bsr"):
        b = _block_size(storage)
        slots = s.blocks.get(b, 0) * b * b
        if slots > FILL_LIMIT * max(s.stored_entries, 1):
            return f"BSR {b}x{b} would store {slots:,} slots, over {FILL_LIMIT:g}x the entries"
    return ""


def _operand(cols: int, width: int, dtype: str, xp: Any = np) -> Any:
    rng = np.random.default_rng(1)
    shape = (cols,) if width == 1 else (cols, width)
    return xp.asarray(rng.random(shape).astype(_NUMPY_DTYPES[dtype]))


def _measure(m: Matrix, s: Structure, spec: HwSpec, storage: str, kernel: str,
             width: int, dtype: str, backend: str, run: Callable[[], Timing] | None,
             skipped: str) -> Measurement:
    t = kernel_traffic(s, storage, kernel, width, dtype)
    launches = 1 if spec.kind == "gpu" and spec.launch_overhead is not None else 0
    method = "sync" if backend == "cusparse" else "stream"
    b = bound(t, spec, unit="simt", precision=dtype, launches=launches,
              footprint=t.bytes_total, timing=method)
    timing = run() if run is not None and not skipped else None
    return Measurement(m.name, backend, storage, kernel, width, dtype, timing, t.bytes_total,
                       t.flops_useful, t.flops_executed, b.sol_s, b.memory_level, b.bound,
                       skipped, method)


def _storage_name(fmt: str, block: int) -> str:
    return f"bsr{block}" if fmt == "bsr" else fmt


def bench(m: Matrix, s: Structure, spec: HwSpec, *, formats: Sequence[str] = KERNEL_FORMATS,
          kernel: str = "spmv", width: int = 1, dtype: str = "fp64", block: int = 4,
          backend: str = "scipy", progress: Callable[[str], None] = lambda _: None,
          **timing: Any) -> list[Measurement]:
    """Measure each format's kernel on ``m`` (structure ``s``) and bound it on ``spec``.
    ``timing`` goes to :func:`time_call`."""
    if dtype not in _NUMPY_DTYPES:
        raise OptionError(f"measured kernels run in fp64 or fp32, not {dtype}")
    if kernel == "spmv" and width != 1:
        raise OptionError("spmv multiplies by one vector (d = 1); use --kernel spmm")
    out = []
    built: list[Any] = []  # the one CSR every host format is converted from

    def csr() -> Any:
        if not built:
            built.append(scipy_matrix(m, "csr", dtype))
        return built[0]

    for fmt in formats:
        storage = _storage_name(fmt, block)
        skipped = _skip_reason(s, storage, kernel)
        run = None
        if not skipped:
            progress(f"{m.name}: {backend} {storage} {kernel} d={width}")
            run = _runner(m, storage, width, dtype, backend, timing, csr)
        out.append(_measure(m, s, spec, storage, kernel, width, dtype, backend, run, skipped))
    return out


def _runner(m: Matrix, storage: str, width: int, dtype: str, backend: str,
            timing: dict[str, Any], csr: Callable[[], Any]) -> Callable[[], Timing]:
    if backend == "cusparse":
        return _cusparse_runner(m, storage, width, dtype, timing)
    if storage in ("ell", "hyb"):
        from .ell_kernels import padded, spmv

        product = spmv(padded(csr(), storage), _operand(m.cols, 1, dtype))
        return lambda: time_call(product, **timing)
    a = scipy_matrix(m, storage, dtype, csr())
    x = _operand(a.shape[1], width, dtype)
    return lambda: time_call(lambda: a @ x, **timing)


def cusparse_available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy
    except ImportError:
        return False
    try:
        return bool(cupy.cuda.runtime.getDeviceCount() > 0)
    except cupy.cuda.runtime.CUDARuntimeError:
        return False


def _cusparse_runner(m: Matrix, storage: str, width: int, dtype: str,
                     timing: dict[str, Any]) -> Callable[[], Timing]:
    if not cusparse_available():
        raise OptionError("the cusparse backend needs CuPy and a CUDA GPU; none found")
    import cupy
    import cupyx.scipy.sparse as csp

    if storage not in ("csr", "csc", "coo"):
        raise OptionError(f"cuSPARSE products here cover csr, csc and coo, not {storage}")
    host = scipy_matrix(m, storage, dtype)
    a = {"csr": csp.csr_matrix, "csc": csp.csc_matrix, "coo": csp.coo_matrix}[storage](host)
    x = _operand(a.shape[1], width, dtype, cupy)
    sync = cupy.cuda.get_current_stream().synchronize
    return lambda: time_call(lambda: a @ x, sync=sync, **timing)



def _plain(text: str) -> str:
    return " ".join(text.lower().replace("(r)", "").replace("(tm)", "").split())


def other_device(spec: HwSpec, backend: str = "scipy") -> str:
    """One line when ``spec`` describes another device than the one ``backend`` runs on
    here ('' when it is this one, as far as can be told): a GPU spec for CPU runs, a CPU
    spec for GPU runs, or a CPU spec naming another processor than this host's.

    >>> from sparsroof.hardware.library import load_spec
    >>> other_device(load_spec("c2050")).startswith("c2050 is a spec of another device")
    True
    """
    if backend == "cusparse":
        here = "this host's GPU"
        same = spec.kind == "gpu"
    else:
        from .probe import host_info

        here = host_info().model
        mine, theirs = _plain(here), _plain(spec.device)
        same = spec.kind == "cpu" and bool(theirs) and (mine in theirs or theirs in mine)
    if same:
        return ""
    return (f"{spec.name} is a spec of another device ({spec.device}) than the one the "
            f"runs are on ({here}): the runs are judged against its roofs, not this host's")
