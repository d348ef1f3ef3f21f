"""Real SpMV/SpMM runs on this host, judged against the roofline bound.

Each kernel is scipy's product in one storage format (CSR, CSC, COO, BSR, DIA), a
compiled ELL or HYB SpMV (:mod:`sparsroof.host.ell_kernels`), timed by
:func:`sparsroof.host.stopwatch.time_call`, or cuSPARSE's through CuPy where a GPU is present;
the median is reported.

Achieved rates use the model's own counts: achieved bandwidth = bytes / t and achieved
FLOP/s = useful FLOPs / t, with bytes from :mod:`sparsroof.model.traffic` (format's A, the
compulsory rows of B, C written once). Each run is judged by the one judge of
:mod:`sparsroof.compare.verdict`, on its fastest repetition (as ``compare`` judges a bench
file): % of SoL = 100 x SoL / fastest, and a run faster than its bound is a violation (the
model is wrong for this host), reported as such, never clipped. Host kernels are timed
back to back (``stream``). cuSPARSE's (:mod:`sparsroof.host.gpu`) are timed by any of the
four methods of :mod:`sparsroof.model.timing` with CUDA events, and each run is bounded
for the method it was timed by (a graph that could not be captured is a stream run).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compare import verdict
from ..errors import OptionError
from ..hardware.spec import HwSpec
from ..matrix.mtx import Matrix
from ..model.bound import bound
from ..model.timing import check_timing
from ..model.traffic import Traffic, traffic
from ..structure.features import Structure
from .stopwatch import Timing, shifted, time_call

if TYPE_CHECKING:
    from .gpu.device import Device

__all__ = [
    "KERNEL_FORMATS",
    "check_operands",
    "Measurement",
    "scipy_matrix",
    "kernel_traffic",
    "bench",
    "bound_again",
    "other_device",
    "time_host",
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
    calls_per_sync: int = 1  # calls per host synchronisation (method sync)
    note: str = ""  # how a GPU product ran, and why its method differs from the one asked
    checked_error: float | None = None  # a GPU result's error against scipy's / allowed

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
    if storage in ("ell", "hyb", "sell") and kernel != "spmv":
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
    """The x of a product: the same values on every call, at a random place
    (:func:`~sparsroof.host.stopwatch.shifted`) on the host."""
    rng = np.random.default_rng(1)
    shape = (cols,) if width == 1 else (cols, width)
    x = rng.random(shape).astype(_NUMPY_DTYPES[dtype])
    return shifted(x) if xp is np else xp.asarray(x)


def _measure(m: Matrix, s: Structure, spec: HwSpec, storage: str, kernel: str,
             width: int, dtype: str, backend: str, run: Callable[[], Timing] | None,
             skipped: str, method: str, calls_per_sync: int = 1,
             note: str = "", checked: float | None = None) -> Measurement:
    timing = run() if run is not None and not skipped else None
    method = getattr(timing, "method", method)  # a graph that was not captured ran as stream
    note = "; ".join(n for n in (note, getattr(timing, "note", "")) if n)
    calls_per_sync = calls_per_sync if method == "sync" else 1
    r = Measurement(m.name, backend, storage, kernel, width, dtype, timing, 0.0, 0.0, 0.0, 0.0,
                    "", "", skipped, method, calls_per_sync, note, checked)
    return bound_again(r, s, spec)


def bound_again(r: Measurement, s: Structure, spec: HwSpec) -> Measurement:
    """``r`` (a run on the matrix of structure ``s``) bounded on ``spec``, for the method it
    was timed by: the same run judged on another spec (a probed one beside a bundled
    one)."""
    t = kernel_traffic(s, r.storage, r.kernel, r.width, r.dtype)
    b = bound(t, spec, unit="simt", precision=r.dtype, timing=r.method,
              calls_per_sync=r.calls_per_sync)
    return dataclasses.replace(r, bytes_total=t.bytes_total, flops_useful=t.flops_useful,
                               flops_executed=t.flops_executed, sol_s=b.sol_s,
                               memory_level=b.memory_level, bound=b.bound)


def _storage_name(fmt: str, block: int) -> str:
    return f"bsr{block}" if fmt == "bsr" else fmt


def check_operands(m: Matrix, width: int, dtype: str) -> None:
    """B and C of width ``width`` (and a copy of each that a kernel may make) must fit
    this process's memory: a usage error before anything is allocated, not a crash."""
    from ..matrix.limits import check_fits

    need = 2 * (m.rows + m.cols) * width * np.dtype(_NUMPY_DTYPES[dtype]).itemsize
    problem = check_fits(need)
    if problem is not None:
        raise OptionError(f"{{opt:d}} {width}: with B and C of {m.name} ({m.cols:,} and "
                          f"{m.rows:,} rows) the product {problem}")


def bench(m: Matrix, s: Structure, spec: HwSpec, *, formats: Sequence[str] = KERNEL_FORMATS,
          kernel: str = "spmv", width: int = 1, dtype: str = "fp64", block: int = 4,
          backend: str = "scipy", progress: Callable[[str], None] = lambda _: None,
          method: str = "stream", calls_per_sync: int = 1, device: Device | None = None,
          methods: Sequence[str] = (), **timing: Any) -> list[Measurement]:
    """Measure each format's kernel on ``m`` (structure ``s``) and bound it on ``spec``.
    Host kernels run back to back (``method`` stream); cuSPARSE's run on ``device`` (the
    first CUDA device when None) timed by ``method``, or by each of ``methods`` in turn
    (one run per method, the product prepared and checked once). ``timing`` (warmup,
    repeat, min_time, max_repeat) goes to :func:`time_call` or, on a GPU,
    :func:`sparsroof.host.gpu.stopwatch.time_on_device`."""
    methods = tuple(methods) or (method,)
    if dtype not in _NUMPY_DTYPES:
        raise OptionError(f"measured kernels run in fp64 or fp32, not {dtype}")
    if kernel == "spmv" and width != 1:
        raise OptionError("spmv multiplies by one vector (d = 1); use --kernel spmm")
    check_operands(m, width, dtype)
    for method in methods:
        check_timing(method, calls_per_sync)
        if backend == "scipy" and method != "stream":
            raise OptionError(f"--timing {method}: the scipy backend times its kernels back "
                              "to back on this host (stream); the other methods need a GPU")
    if backend == "cusparse" and device is None:
        from .gpu.cuda import open_device

        device = open_device()
    out = []
    built: list[Any] = []  # the one CSR every host format is converted from

    def csr() -> Any:
        if not built:
            built.append(scipy_matrix(m, "csr", dtype))
        return built[0]

    for fmt in formats:
        storage = _storage_name(fmt, block)
        skipped = _skip_reason(s, storage, kernel) or _sell_skip_reason(storage, csr)
        time_by: Callable[[str], Timing] | None = None
        note, checked = "", None
        if not skipped:
            progress(f"{m.name}: {backend} {storage} {kernel} d={width}")
            if device is not None:
                time_by, note, checked = _gpu_runner(device, m, storage, width, dtype,
                                                     calls_per_sync, timing)
            else:
                host_run = _runner(m, storage, width, dtype, timing, csr)
                time_by = lambda _method, run=host_run: run()  # noqa: E731
        for method in methods:
            run = (lambda method=method, by=time_by: by(method)) if time_by else None
            out.append(_measure(m, s, spec, storage, kernel, width, dtype, backend, run,
                                skipped, method, calls_per_sync, note, checked))
    return out


def _sell_skip_reason(storage: str, built: Callable[[], Any]) -> str:
    """Why cuSPARSE's sliced ELL of the CSR matrix ``built()`` is not run: padded past the
    fill limit, or an empty matrix (nothing for its descriptor to point at)."""
    if storage != "sell":
        return ""
    from .gpu.sell import SELL_SLICE, sell_slots

    csr = built()
    slots = sell_slots(csr.indptr)
    if csr.nnz == 0:
        return "SELL of a matrix without entries: nothing to store"
    if slots > FILL_LIMIT * csr.nnz or slots >= 2**31:
        return (f"SELL of {SELL_SLICE}-row slices would store {slots:,} slots, over "
                f"{FILL_LIMIT:g}x the entries")
    return ""


def time_host(m: Matrix, storages: Sequence[str], dtype: str = "fp64", **timing: Any
              ) -> dict[str, Timing]:
    """``m``'s SpMV on this host in each of ``storages`` (as :func:`bench` names them,
    none skipped), timed as :func:`bench` times it, without bounds: a calibration's later
    passes, which repeat the runs of its first."""
    built: list[Any] = []

    def csr() -> Any:
        if not built:
            built.append(scipy_matrix(m, "csr", dtype))
        return built[0]

    return {storage: _runner(m, storage, 1, dtype, timing, csr)() for storage in storages}


def _runner(m: Matrix, storage: str, width: int, dtype: str,
            timing: dict[str, Any], csr: Callable[[], Any]) -> Callable[[], Timing]:
    if storage in ("ell", "hyb"):
        from .ell_kernels import padded, spmv

        product = spmv(padded(csr(), storage), _operand(m.cols, 1, dtype))
        return lambda: time_call(product, **timing)
    a = scipy_matrix(m, storage, dtype, csr())
    x = _operand(a.shape[1], width, dtype)
    return lambda: time_call(lambda: a @ x, **timing)


def _gpu_runner(device: Device, m: Matrix, storage: str, width: int, dtype: str,
                calls_per_sync: int, timing: dict[str, Any]
                ) -> tuple[Callable[[str], Timing], str, float]:
    """The product on the GPU timed by a method, which call runs it, and its checked
    error."""
    from .gpu.bench import cusparse_runner

    a = scipy_matrix(m, "csr" if storage == "sell" else storage, dtype)  # SELL from CSR
    return cusparse_runner(device, a, _operand(a.shape[1], width, dtype), storage,
                           f"{m.name} {storage} d={width}", calls_per_sync, timing)


def _plain(text: str) -> str:
    return " ".join(text.lower().replace("(r)", "").replace("(tm)", "").split())


def _gpu_traits(name: str) -> tuple[set[str], set[str], bool]:
    """(model names, memory sizes, PCIe) in a GPU's name.

    >>> _gpu_traits("NVIDIA A100-SXM4-80GB")
    ({'a100'}, {'80'}, False)
    >>> _gpu_traits("NVIDIA GeForce RTX 4090"), _gpu_traits("NVIDIA H100 PCIe")[2]
    (({'4090'}, set(), False), True)
    >>> sorted(_gpu_traits("NVIDIA GH200 Grace Hopper Superchip, H100 GPU with 96 GB HBM3")[0])
    ['gh200', 'h100']
    """
    text = name.lower()
    sizes = set(re.findall(r"(\d+)\s*gb\b", text))
    words = set(re.findall(r"[a-z]*\d+[a-z]*", re.sub(r"\d+\s*gb\b", " ", text)))
    models = {w for w in words if not re.fullmatch(r"(sxm|hbm|pcie|gddr)\d*[a-z]?", w)}
    return models, sizes, "pcie" in text


def _same_gpu(gpu: str, spec_device: str) -> bool:
    """Whether a GPU named ``gpu`` can be the one ``spec_device`` names: a shared model name,
    and neither a different memory size nor PCIe on one side only (true when a name says
    nothing to tell them apart)."""
    mine, theirs = _gpu_traits(gpu), _gpu_traits(spec_device)
    if not mine[0] or not theirs[0]:
        return True
    if not mine[0] & theirs[0]:
        return False
    if mine[1] and theirs[1] and not mine[1] & theirs[1]:
        return False
    return mine[2] == theirs[2]


def other_device(spec: HwSpec, backend: str = "scipy", gpu: str | None = None) -> str:
    """One line when ``spec`` describes another device than the one ``backend`` runs on
    here ('' when it is this one, as far as can be told): a GPU spec for CPU runs, a CPU
    spec for GPU runs, a CPU spec naming another processor than this host's, or a GPU spec
    naming another model, memory size or form (PCIe) than ``gpu`` (the name of the GPU the
    runs are on).

    >>> from sparsroof.hardware.library import load_spec
    >>> other_device(load_spec("c2050")).startswith("c2050 is a spec of another device")
    True
    >>> other_device(load_spec("h100-sxm"), "cusparse", "NVIDIA H100 80GB HBM3")
    ''
    >>> [bool(other_device(load_spec(n), "cusparse", "NVIDIA H100 80GB HBM3"))
    ...  for n in ("h100-pcie", "a100-40gb", "a100-80gb", "gh200")]  # 96 GB on a GH200
    [True, True, True, True]
    >>> other_device(load_spec("a100-80gb"), "cusparse", "NVIDIA H100 80GB HBM3").split(":")[0]
    'a100-80gb is a spec of another device (NVIDIA A100 80GB SXM4) than the one the runs are \
on (NVIDIA H100 80GB HBM3)'
    """
    if backend == "cusparse":
        here = gpu or "this host's GPU"
        same = spec.kind == "gpu" and (gpu is None or _same_gpu(gpu, spec.device))
    else:
        from .probe import host_info

        here = host_info().model
        mine_cpu, theirs_cpu = _plain(here), _plain(spec.device)
        same = spec.kind == "cpu" and bool(theirs_cpu) and (mine_cpu in theirs_cpu or
                                                            theirs_cpu in mine_cpu)
    if same:
        return ""
    return (f"{spec.name} is a spec of another device ({spec.device}) than the one the "
            f"runs are on ({here}): the runs are judged against its roofs, not this host's")
