from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsroof.analysis import Config, analyze
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import Matrix
from sparsroof.model.traffic import traffic
from sparsroof.structure.features import measure

from ..conftest import make_matrix

# 4 x 5 matrix, 5 entries, columns 0, 2 and 4 used (1 and 3 empty):
#   row 0: (0,0) (0,2)   row 1: (1,2)   row 2: empty   row 3: (3,0) (3,4)
TINY = make_matrix(4, 5, [0, 0, 1, 3, 3], [0, 2, 2, 0, 4])


def test_csr_spmv_bytes_by_hand() -> None:
    s = measure(TINY)
    t = traffic(s, kernel="spmv", width=1, storage="csr", model="compulsory",
                dtype="fp64", index="int32")
    # A: 5 entries x (8 value + 4 column) = 60, plus (4 + 1) row pointers x 4 = 20 -> 80
    assert t.bytes_a == 80
    # B compulsory: 3 used columns x 1 x 8 = 24 (not k·d·s_v = 40)
    assert t.bytes_b == 24
    # C: 4 rows x 1 x 8 = 32
    assert t.bytes_c == 32
    # F = 2 x 5 x 1 = 10, AI = 10 / 136
    assert t.flops_useful == t.flops_executed == 10
    assert t.intensity == pytest.approx(10 / 136)


def test_csr_spmm_random_by_hand() -> None:
    s = measure(TINY)
    t = traffic(s, kernel="spmm", width=4, storage="csr", model="random",
                dtype="fp32", index="int64")
    # A: 5 x (4 + 8) + 5 x 8 = 100; B: 5 entries x 4 wide x 4 bytes = 80; C: 4 x 4 x 4 = 64
    assert (t.bytes_a, t.bytes_b, t.bytes_c) == (100, 80, 64)
    assert t.flops_useful == 40


def test_sol_on_a100_by_hand() -> None:
    spec = load_spec("a100")
    a = analyze(TINY, spec, Config(kernel="spmm", widths=(16,), dtype="fp64",
                                   models=("compulsory", "random"), cache_roof=False,
                                   launches=0))
    compulsory = a.results[0]
    # bytes: A 80, B 3 x 16 x 8 = 384, C 4 x 16 x 8 = 512 -> 976 bytes at 2039 GB/s
    assert compulsory.bound.memory_s == pytest.approx(976 / 2039e9)
    # F = 2 x 5 x 16 = 160 at 9.7 TFLOP/s fp64 SIMT
    assert compulsory.bound.compute_s == pytest.approx(160 / 9.7e12)
    assert compulsory.bound.bound == "memory"
    assert compulsory.bound.attainable_flops == pytest.approx(160 / (976 / 2039e9))


@st.composite
def _random_matrices(draw):  # type: ignore[no-untyped-def]
    rows, cols = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    n = draw(st.integers(0, 200))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # repeated coordinates become one entry
    return make_matrix(rows, cols, rng.integers(0, rows, n), rng.integers(0, cols, n))


@settings(max_examples=50, deadline=None)
@given(_random_matrices(), st.sampled_from([1, 4, 64]), st.sampled_from(["fp64", "fp16"]))
def test_bounds_never_beat_either_roof(m: Matrix, d: int, dtype: str) -> None:
    spec = load_spec("a100")
    a = analyze(m, spec, Config(kernel="spmm", widths=(d,), dtype=dtype,
                                models=("compulsory", "random")))
    comp, rand = sorted(a.results, key=lambda r: r.traffic.model)
    for r in a.results:
        t, b = r.traffic, r.bound
        assert b.attainable_flops <= b.peak_flops * (1 + 1e-12)
        assert b.attainable_flops <= b.bandwidth * t.intensity * (1 + 1e-12)
    # no-reuse traffic is never below compulsory, so never faster
    assert rand.traffic.bytes_total >= comp.traffic.bytes_total
    assert rand.bound.sol_s >= comp.bound.sol_s
