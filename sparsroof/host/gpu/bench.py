"""cuSPARSE's SpMV and SpMM on the GPU, checked once against scipy, then timed.

CuPy reaches cuSPARSE's generic products for CSR, CSC (as the transpose of a CSR matrix)
and COO; those are the formats timed here. Before any timing, one product is copied back
and compared with scipy's on the host, entry by entry: the difference may not exceed what
summing the row in another order can cause, 4·ε·(entries in the row + 1)·(|A|·|x|) for
the precision's ε. A wrong result is an error, not a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import GpuError, OptionError
from .device import Device
from .stopwatch import DeviceTiming, time_on_device

__all__ = ["GPU_FORMATS", "check_product", "cusparse_runner"]

#: the storage formats multiplied through cuSPARSE: CuPy's three, and sliced ELL (SpMV),
#: called straight in the library
GPU_FORMATS = ("csr", "csc", "coo", "sell")


def check_product(a: Any, x: np.ndarray, got: np.ndarray, what: str) -> float:
    """The largest error of ``got`` against scipy's ``a @ x``, as a share of its allowance
    (at most 1); a larger error raises :class:`GpuError`.

    >>> import scipy.sparse as sp
    >>> a = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> check_product(a, np.ones(2), np.array([3.0, 3.0]), "m csr")
    0.0
    >>> big = sp.csr_matrix(np.array([[-1e308, -1e308], [0.0, 1.0]]))  # a row sums to -inf
    >>> check_product(big, np.ones(2), np.array([-np.inf, 1.0]), "big csr")
    0.0
    """
    want = a @ x
    got = np.asarray(got).reshape(want.shape)
    csr = a.tocsr()
    scale = abs(csr) @ np.abs(x)
    lengths = np.diff(csr.indptr).astype(np.float64) + 1.0
    if want.ndim == 2:
        lengths = lengths[:, None]
    eps = float(np.finfo(want.dtype).eps)
    allowed = 4.0 * eps * lengths * scale + np.finfo(want.dtype).tiny
    got = got.astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))  # equal infinities too
    with np.errstate(invalid="ignore", over="ignore"):
        share = np.where(same, 0.0, np.abs(got - want) / allowed)
    worst = float(share.max()) if share.size else 0.0
    if not np.isfinite(worst) or worst > 1.0:
        at = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(share), share, np.inf))),
                              share.shape)
        raise GpuError(f"{what}: cuSPARSE's result differs from scipy's at row {at[0]} "
                       f"({got[at]!r} against {want[at]!r}); no time is taken of a wrong "
                       "product")
    return worst


def cusparse_runner(device: Device, a: Any, x: np.ndarray, storage: str, what: str,
                    calls_per_sync: int, timing: dict[str, Any]
                    ) -> tuple[Callable[[str], DeviceTiming], str, float]:
    """(a call that times the product by a method, which library call runs it, the checked
    error) for ``a`` (scipy, in ``storage``) times ``x`` on ``device``: the product is
    prepared and checked once, then timed by as many methods as asked."""
    if storage not in GPU_FORMATS:
        raise OptionError(f"cuSPARSE products here cover {', '.join(GPU_FORMATS)}, not "
                          f"{storage}")
    try:
        product = device.product(a, storage, x)
        product.call()
        got = product.result()
    except RuntimeError as err:  # a CUDA or cuSPARSE failure: one line, no traceback
        raise GpuError(f"{what}: cuSPARSE failed: {str(err).splitlines()[0]}") from None
    error = check_product(a, x, got, what)

    def time_by(method: str) -> DeviceTiming:
        return time_on_device(device, product.call, method, calls_per_sync=calls_per_sync,
                              **timing)
    return time_by, product.how, error
