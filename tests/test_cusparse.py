"""The cuSPARSE backend of ``sparsroof bench``: its wiring without a GPU, and the real
thing where CuPy sees one (skipped otherwise)."""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pytest

from sparsroof.errors import OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.host.bench import bench, cusparse_available
from sparsroof.matrix.mtx import load
from sparsroof.structure.features import measure

LAP = "data/lap2d_64.mtx"


def _fake_cupy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """CuPy stand-ins backed by numpy and scipy; counts stream synchronisations."""
    import scipy.sparse as sp

    calls = {"sync": 0}

    class Stream:
        def synchronize(self) -> None:
            calls["sync"] += 1

    class CUDARuntimeError(Exception):
        pass

    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1,
                                    CUDARuntimeError=CUDARuntimeError)
    cuda = types.SimpleNamespace(runtime=runtime, get_current_stream=lambda: Stream())
    cupy: Any = types.ModuleType("cupy")
    cupy.cuda = cuda
    cupy.asarray = np.asarray
    sparse: Any = types.ModuleType("cupyx.scipy.sparse")
    sparse.csr_matrix, sparse.csc_matrix, sparse.coo_matrix = (
        sp.csr_matrix, sp.csc_matrix, sp.coo_matrix)
    cupyx: Any = types.ModuleType("cupyx")
    scipy_ns: Any = types.ModuleType("cupyx.scipy")
    cupyx.scipy, scipy_ns.sparse = scipy_ns, sparse
    for name, module in (("cupy", cupy), ("cupyx", cupyx), ("cupyx.scipy", scipy_ns),
                         ("cupyx.scipy.sparse", sparse)):
        monkeypatch.setitem(sys.modules, name, module)
    return calls


def test_without_cupy_the_backend_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    m = load(LAP)
    with pytest.raises(OptionError, match="needs CuPy and a CUDA GPU"):
        bench(m, measure(m), load_spec("a100"), formats=["csr"], backend="cusparse")


def test_wiring_synchronises_every_timed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_cupy(monkeypatch)
    m = load(LAP)
    runs = bench(m, measure(m), load_spec("a100"), formats=["csr", "coo"],
                 backend="cusparse", warmup=2, repeat=5, min_time=0.0)
    assert [r.storage for r in runs] == ["csr", "coo"]
    assert all(r.backend == "cusparse" and r.timing is not None for r in runs)
    # per kernel: one wait after the warm-up, one inside every timed run
    assert calls["sync"] == sum(1 + len(r.timing.samples) for r in runs if r.timing)
    with pytest.raises(OptionError, match="cover csr, csc and coo, not bsr4"):
        bench(m, measure(m), load_spec("a100"), formats=["bsr"], backend="cusparse")


@pytest.mark.skipif(not cusparse_available(), reason="needs CuPy and a CUDA GPU")
def test_cusparse_on_a_gpu() -> None:  # pragma: no cover - runs only where a GPU is
    m = load(LAP)
    runs = bench(m, measure(m), load_spec("a100"), formats=["csr", "csc", "coo"],
                 backend="cusparse", repeat=5)
    for r in runs:  # the bound is an A100's, whatever this GPU is: only the runs are judged
        assert r.backend == "cusparse" and r.timing is not None and r.timing.min_s > 0
        assert r.bytes_total > 0 and r.flops_useful == 2 * m.stored_entries
