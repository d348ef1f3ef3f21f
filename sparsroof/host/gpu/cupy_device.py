"""The :class:`~.device.Device` of a CUDA GPU, through CuPy (runs only where one is).

Every piece of work runs on one non-blocking stream of the first device. Products call
cuSPARSE's generic SpMV/SpMM with descriptors, output and work buffer made once, so one
call is one library call that allocates nothing (and so can be captured into a graph);
where CuPy's internals differ from what this expects, the product falls back to
``cupyx.cusparse.spmv``/``spmm``, which allocate their buffer per call, and says so. The
probe's kernels are CUDA C compiled by CuPy at first use.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from .device import CaptureError, DeviceInfo, Kernel, Product, Work

__all__ = ["CupyDevice", "KERNELS_SOURCE"]

#: threads per block of the probe's kernels
_BLOCK = 256

#: the probe's kernels: nothing; a triad; reads of a working set past the L1
#: (``ld.global.cg`` caches in the L2 only), four independent loads per step; chains of
#: fused multiply-adds, eight independent ones per thread
KERNELS_SOURCE = r"""
extern "C" __global__ void sr_empty() {}

extern "C" __global__ void sr_triad(double* a, const double* b, const double* c,
                                    double s, long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    a[i] = b[i] + s * c[i];
}

/* two doubles loaded past the L1 (cached in the L2 only), in PTX: no header needed */
__device__ __forceinline__ double sr_ldcg2(const double2* p) {
  double x, y;
  asm volatile("ld.global.cg.v2.f64 {%0, %1}, [%2];" : "=d"(x), "=d"(y) : "l"(p));
  return x + y;
}

extern "C" __global__ void sr_read(const double2* a, long long n, int passes,
                                   double* out) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (int p = 0; p < passes; ++p) {
    long long i = first;
    for (; i + 3 * stride < n; i += 4 * stride) {
      s0 += sr_ldcg2(a + i); s1 += sr_ldcg2(a + i + stride);
      s2 += sr_ldcg2(a + i + 2 * stride); s3 += sr_ldcg2(a + i + 3 * stride);
    }
    for (; i < n; i += stride) s0 += sr_ldcg2(a + i);
  }
  double s = s0 + s1 + s2 + s3;
  if (s == -1.0) out[0] = s;  /* never true (the data is positive); keeps the loads */
}

#define SR_FMA(T, NAME, FMA)                                                     \
extern "C" __global__ void NAME(T* out, int iters) {                             \
  T a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4,         \
    a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;                                         \
  const T m = (T)0.9999, c = (T)0.0001;                                            \
  for (int i = 0; i < iters; ++i) {                                                \
    a0 = FMA(a0, m, c); a1 = FMA(a1, m, c); a2 = FMA(a2, m, c); a3 = FMA(a3, m, c); \
    a4 = FMA(a4, m, c); a5 = FMA(a5, m, c); a6 = FMA(a6, m, c); a7 = FMA(a7, m, c); \
  }                                                                                \
  T s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;                                     \
  if (s == (T)-1) out[0] = s;                                                      \
}
SR_FMA(double, sr_fma64, fma)
SR_FMA(float, sr_fma32, fmaf)
"""
#: fused multiply-adds per thread per launch of the FMA kernel (8 chains)
_FMA_ITERS = 4096


def _version(code: int) -> str:
    """CUDA's version integer as text.

    >>> _version(12040), _version(13000)
    ('12.4', '13.0')
    """
    return f"{code // 1000}.{code % 1000 // 10}"


def device_info(cupy: Any) -> DeviceInfo:
    """What CuPy reports of the current device."""
    rt = cupy.cuda.runtime
    dev = cupy.cuda.Device()

    def attribute(name: str) -> int | None:
        try:
            return int(rt.deviceGetAttribute(getattr(rt, name), dev.id))
        except (AttributeError, rt.CUDARuntimeError):
            return None

    name = rt.getDeviceProperties(dev.id)["name"]
    clock = attribute("cudaDevAttrClockRate")
    memory_clock = attribute("cudaDevAttrMemoryClockRate")
    cc = dev.compute_capability
    return DeviceInfo(
        name=name.decode() if isinstance(name, bytes) else str(name),
        memory_bytes=int(dev.mem_info[1]),
        sms=attribute("cudaDevAttrMultiProcessorCount") or 0,
        l2_bytes=attribute("cudaDevAttrL2CacheSize") or 0,
        compute_capability=f"{cc[:-1]}.{cc[-1]}",
        driver_version=_version(rt.driverGetVersion()),
        runtime_version=_version(rt.runtimeGetVersion()),
        clock_hz=clock * 1e3 if clock else None,                # reported in kHz
        memory_clock_hz=memory_clock * 1e3 if memory_clock else None,
        memory_bus_bits=attribute("cudaDevAttrGlobalMemoryBusWidth"),
        threads_per_sm=attribute("cudaDevAttrMaxThreadsPerMultiProcessor"),
        library=f"cupy {cupy.__version__}",
    )


class CupyDevice:  # pragma: no cover - runs only where a GPU is
    """One CUDA device through CuPy, all work on one non-blocking stream."""

    def __init__(self, cupy: Any) -> None:
        self.cp = cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.info = device_info(cupy)
        self._module: Any = None

    # -- timing -----------------------------------------------------------------------
    def clock(self) -> float:
        return time.perf_counter()

    def synchronize(self) -> None:
        self.stream.synchronize()

    def elapsed(self, work: Work) -> float:
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        with self.stream:
            start.record(self.stream)
            work()
            end.record(self.stream)
        end.synchronize()
        return float(self.cp.cuda.get_elapsed_time(start, end)) * 1e-3

    def capture(self, work: Work) -> Work:
        failure: BaseException | None = None
        graph = None
        with self.stream:
            self.stream.begin_capture()
            try:
                work()
            except RuntimeError as err:  # CUDA, cuSPARSE and CuPy errors all derive from it
                failure = err
            try:
                graph = self.stream.end_capture()
            except RuntimeError as err:
                failure = failure or err
        if failure is not None or graph is None:
            raise CaptureError(str(failure).splitlines()[0] if failure else "no graph")
        stream = self.stream
        return lambda: graph.launch(stream=stream)

    def scrubber(self, nbytes: int) -> Work:
        buffer = self.cp.empty(max(1, nbytes // 4), dtype=self.cp.int32)
        count = [0]

        def scrub() -> None:
            count[0] += 1
            with self.stream:
                buffer.fill(count[0])
        return scrub

    # -- cuSPARSE -----------------------------------------------------------------------
    def product(self, matrix: Any, storage: str, operand: Any) -> Product:
        import cupyx.scipy.sparse as csp

        if storage == "sell":
            return self._sell_product(matrix, operand)
        kinds = {"csr": csp.csr_matrix, "csc": csp.csc_matrix, "coo": csp.coo_matrix}
        cp = self.cp
        with self.stream:
            a = kinds[storage](matrix)
            a.sum_duplicates()  # cuSPARSE's generic API wants the canonical form
            x = cp.asfortranarray(cp.asarray(operand))
            shape = (a.shape[0],) if x.ndim == 1 else (a.shape[0], x.shape[1])
            y = cp.zeros(shape, dtype=a.dtype, order="F")
        self.stream.synchronize()
        try:
            call, how = _prepared(cp, a, x, y, self.stream)
        except (AttributeError, ImportError, TypeError) as err:
            call, how = _library_call(a, x, y), f"cupyx.cusparse (prepared call: {err})"
        return self._on_stream(call, y, how)

    def _sell_product(self, matrix: Any, operand: Any) -> Product:
        """cuSPARSE's sliced-ELL SpMV of the scipy CSR ``matrix`` (:mod:`.sell`)."""
        cp = self.cp
        with self.stream:
            x = cp.asarray(operand)
            y = cp.zeros(matrix.shape[0], dtype=matrix.dtype)
        call, how = _prepared_sell(cp, matrix, x, y, self.stream)
        return self._on_stream(call, y, how)

    def _on_stream(self, call: Work, y: Any, how: str) -> Product:
        """A prepared call run on the device's stream, its output ``y`` copied back."""

        def run() -> None:
            with self.stream:
                call()

        def result() -> Any:
            self.stream.synchronize()
            return self.cp.asnumpy(y)

        return Product(run, result, how)

    # -- probe kernels --------------------------------------------------------------------
    def _kernel(self, name: str) -> Any:
        if self._module is None:
            self._module = self.cp.RawModule(code=KERNELS_SOURCE)
        return self._module.get_function(name)

    def _grid(self, per_sm: int = 4) -> tuple[int]:
        return (max(1, self.info.sms) * per_sm,)

    def copy_kernel(self, nbytes: int) -> Kernel:
        cp, stream = self.cp, self.stream
        src, dst = cp.ones(nbytes // 8), cp.empty(nbytes // 8)
        n = src.nbytes
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        return Kernel(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, n,
                                                          kind, stream.ptr), 2.0 * n)

    def triad_kernel(self, nbytes: int) -> Kernel:
        cp, n = self.cp, nbytes // 8
        a, b, c = cp.empty(n), cp.ones(n), cp.ones(n)
        f, grid = self._kernel("sr_triad"), self._grid()

        def launch() -> None:
            with self.stream:
                f(grid, (_BLOCK,), (a, b, c, np.float64(3.0), np.int64(n)))
        return Kernel(launch, 3.0 * 8 * n)

    def read_kernel(self, nbytes: int, passes: int) -> Kernel:
        cp, n2 = self.cp, max(1, nbytes // 16)
        a, out = cp.ones(2 * n2), cp.zeros(1)
        f, grid = self._kernel("sr_read"), self._grid()

        def launch() -> None:
            with self.stream:
                f(grid, (_BLOCK,), (a, np.int64(n2), np.int32(passes), out))
        return Kernel(launch, 16.0 * n2 * passes)

    def empty_kernel(self) -> Kernel:
        f = self._kernel("sr_empty")

        def launch() -> None:
            with self.stream:
                f((1,), (1,), ())
        return Kernel(launch)

    def fma_kernel(self, precision: str) -> Kernel:
        dtype = self.cp.float64 if precision == "fp64" else self.cp.float32
        out = self.cp.zeros(1, dtype=dtype)
        f = self._kernel("sr_fma64" if precision == "fp64" else "sr_fma32")
        grid = self._grid(per_sm=8)

        def launch() -> None:
            with self.stream:
                f(grid, (_BLOCK,), (out, np.int32(_FMA_ITERS)))
        return Kernel(launch, flops=2.0 * 8 * _FMA_ITERS * grid[0] * _BLOCK)

    def release(self) -> None:
        self.stream.synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()


def _cusparse_library() -> Any:  # pragma: no cover - needs a GPU
    """The cuSPARSE library CuPy loaded into this process, through ctypes.

    CuPy's wrappers refuse to run while a stream is being captured, though cuSPARSE's
    SpMV and SpMM with a work buffer made beforehand can be; called straight, with CuPy's
    own handle and descriptors, the same entry points can be captured into a graph."""
    import ctypes

    maps = Path("/proc/self/maps")
    paths = {line.split()[-1] for line in maps.read_text().splitlines()
             if "libcusparse.so" in line} if maps.exists() else set()
    if not paths:
        raise OSError("the cuSPARSE library CuPy loaded was not found")
    lib = ctypes.CDLL(min(paths))
    p, i = ctypes.c_void_p, ctypes.c_int
    lib.cusparseSetStream.argtypes = [p, p]
    lib.cusparseSpMV.argtypes = [p, i, p, p, p, p, p, i, i, p]
    lib.cusparseSpMM.argtypes = [p, i, i, p, p, p, p, p, i, i, p]
    return lib


def _prepared(cp: Any, a: Any, x: Any, y: Any, stream: Any
              ) -> tuple[Work, str]:  # pragma: no cover - needs a GPU
    """One cuSPARSE generic-API call with everything made beforehand (the calls
    ``cupyx.cusparse.spmv`` makes, hoisted out of the timed call), made straight into the
    library so that it can be captured into a graph."""
    import cupyx.cusparse as cxs
    from cupy._core import _dtype
    from cupy.cuda import device as cuda_device
    from cupy_backends.cuda.libs import cusparse as lib

    try:
        direct, how = _cusparse_library(), "cusparseSpMV/SpMM, descriptors made once"
    except OSError as err:  # CuPy's wrappers run the same calls, though not in a graph
        direct, how = None, f"cusparseSpMV/SpMM through CuPy, descriptors made once ({err})"
    transposed = a.format == "csc"  # a CSC matrix is the transpose of a CSR one
    stored = a.T if transposed else a
    op = lib.CUSPARSE_OPERATION_TRANSPOSE if transposed else \
        lib.CUSPARSE_OPERATION_NON_TRANSPOSE
    plain = lib.CUSPARSE_OPERATION_NON_TRANSPOSE
    desc_a = cxs.SpMatDescriptor.create(stored)
    alpha, beta = np.ones(1, a.dtype), np.zeros(1, a.dtype)
    dtype = _dtype.to_cuda_dtype(a.dtype)
    handle = cuda_device.get_cusparse_handle()
    if x.ndim == 1:
        desc_x, desc_y = cxs.DnVecDescriptor.create(x), cxs.DnVecDescriptor.create(y)
        alg = lib.CUSPARSE_MV_ALG_DEFAULT
        size = lib.spMV_bufferSize(handle, op, alpha.ctypes.data, desc_a.desc, desc_x.desc,
                                   beta.ctypes.data, desc_y.desc, dtype, alg)
        args: tuple[Any, ...] = (op, alpha.ctypes.data, desc_a.desc, desc_x.desc,
                                 beta.ctypes.data, desc_y.desc, dtype, alg)
        entry, dense = direct.cusparseSpMV if direct else lib.spMV, (desc_x, desc_y)
    else:
        desc_b, desc_c = cxs.DnMatDescriptor.create(x), cxs.DnMatDescriptor.create(y)
        alg = lib.CUSPARSE_MM_ALG_DEFAULT
        size = lib.spMM_bufferSize(handle, op, plain, alpha.ctypes.data, desc_a.desc,
                                   desc_b.desc, beta.ctypes.data, desc_c.desc, dtype, alg)
        args = (op, plain, alpha.ctypes.data, desc_a.desc, desc_b.desc, beta.ctypes.data,
                desc_c.desc, dtype, alg)
        entry, dense = direct.cusparseSpMM if direct else lib.spMM, (desc_b, desc_c)
    buffer = cp.empty(max(1, size), cp.int8)
    # the descriptors (freed with their objects) and the arrays they point into
    kept = (stored, x, y, alpha, beta, desc_a, dense, buffer)

    def call() -> None:
        if direct is None:
            entry(handle, *args, buffer.data.ptr)
            return
        status = (direct.cusparseSetStream(handle, stream.ptr) or
                  entry(handle, *args, buffer.data.ptr))
        if status != 0:
            raise RuntimeError(f"cuSPARSE status {status}")
        _keep = kept  # noqa: F841
    return call, how


def _prepared_sell(cp: Any, a: Any, x: Any, y: Any, stream: Any
                   ) -> tuple[Work, str]:  # pragma: no cover - needs a GPU
    """cuSPARSE's SpMV of ``a`` (scipy CSR) stored as sliced ELL, everything made once: the
    SELL arrays on the device, the matrix's descriptor (``cusparseCreateSlicedEll``, which
    CuPy does not wrap), the vectors' descriptors and the work buffer."""
    import ctypes
    import weakref

    import cupyx.cusparse as cxs
    from cupy._core import _dtype
    from cupy.cuda import device as cuda_device

    from .sell import SELL_SLICE, sell_arrays

    lib = _cusparse_library()
    p, i, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    lib.cusparseCreateSlicedEll.argtypes = [ctypes.POINTER(p), i64, i64, i64, i64, i64,
                                            p, p, p, i, i, i, i]
    lib.cusparseDestroySpMat.argtypes = [p]
    lib.cusparseSpMV_bufferSize.argtypes = [p, i, p, p, p, p, p, i, i,
                                            ctypes.POINTER(ctypes.c_size_t)]
    values, cols, offsets = sell_arrays(a, SELL_SLICE)
    with stream:
        arrays = [cp.asarray(v) for v in (values, cols, offsets)]
    stream.synchronize()
    dtype = _dtype.to_cuda_dtype(a.dtype)
    index32, base0, sell_alg1, plain = 2, 0, 5, 0  # CUSPARSE_INDEX_32I, ..._SPMV_SELL_ALG1
    desc = p()
    status = lib.cusparseCreateSlicedEll(
        ctypes.byref(desc), a.shape[0], a.shape[1], a.nnz, values.size, SELL_SLICE,
        arrays[2].data.ptr, arrays[1].data.ptr, arrays[0].data.ptr, index32, index32, base0,
        dtype)
    if status != 0:
        raise RuntimeError(f"cusparseCreateSlicedEll: cuSPARSE status {status}")
    owner = type("SellDescriptor", (), {})()
    weakref.finalize(owner, lib.cusparseDestroySpMat, desc)
    desc_x, desc_y = cxs.DnVecDescriptor.create(x), cxs.DnVecDescriptor.create(y)
    alpha, beta = np.ones(1, a.dtype), np.zeros(1, a.dtype)
    handle = cuda_device.get_cusparse_handle()
    size = ctypes.c_size_t()
    status = lib.cusparseSpMV_bufferSize(handle, plain, alpha.ctypes.data, desc, desc_x.desc,
                                         beta.ctypes.data, desc_y.desc, dtype, sell_alg1,
                                         ctypes.byref(size))
    if status != 0:
        raise RuntimeError(f"cusparseSpMV_bufferSize (SELL): cuSPARSE status {status}")
    buffer = cp.empty(max(1, size.value), cp.int8)
    kept = (arrays, owner, desc_x, desc_y, x, y, alpha, beta, buffer)

    def call() -> None:
        status = (lib.cusparseSetStream(handle, stream.ptr) or
                  lib.cusparseSpMV(handle, plain, alpha.ctypes.data, desc, desc_x.desc,
                                   beta.ctypes.data, desc_y.desc, dtype, sell_alg1,
                                   buffer.data.ptr))
        if status != 0:
            raise RuntimeError(f"cusparseSpMV (SELL): cuSPARSE status {status}")
        _keep = kept  # noqa: F841
    return call, (f"cusparseSpMV, sliced ELL of {SELL_SLICE}-row slices "
                  "(CUSPARSE_SPMV_SELL_ALG1), descriptors made once")


def _library_call(a: Any, x: Any, y: Any) -> Work:  # pragma: no cover - needs a GPU
    import cupyx.cusparse as cxs

    if x.ndim == 1:
        return lambda: cxs.spmv(a, x, y=y)
    return lambda: cxs.spmm(a, x, c=y)
