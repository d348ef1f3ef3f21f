"""The compiled ELL and HYB SpMV: their layout by hand, their products against scipy's,
and bench running them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsroof.hardware.library import load_spec
from sparsroof.host.bench import bench
from sparsroof.host.ell_kernels import padded, spmv
from sparsroof.structure.features import measure

from ..conftest import make_matrix


def _two_per_row_and_one_long(n: int = 6000) -> tuple[np.ndarray, np.ndarray]:
    """Every row holds its diagonal and the next column; row 0 holds 10 more entries."""
    r = np.concatenate([np.arange(n), np.arange(n), np.zeros(10, int)])
    c = np.concatenate([np.arange(n), (np.arange(n) + 1) % n, np.arange(2, 12)])
    return r, c


def test_ell_and_hyb_layouts_by_hand() -> None:
    # 6,000 rows: ELL pads every row to row 0's 12 entries; HYB's width is 2 (all 6,000
    # rows reach 2 entries, >= max(4096, 2000); only row 0 reaches 3) and row 0's 10
    # entries past the second go to its COO part
    r, c = _two_per_row_and_one_long()
    a = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(6000, 6000))
    a.sort_indices()
    ell, hyb = padded(a, "ell"), padded(a, "hyb")
    assert ell.values.shape == (6000, 12) and ell.coo_values.size == 0
    assert hyb.values.shape == (6000, 2)
    assert hyb.coo_rows.tolist() == [0] * 10 and hyb.coo_columns.tolist() == list(range(2, 12))
    # the padding of row 1 (columns 1, 2) repeats its last column with the value 0
    assert ell.columns[1].tolist() == [1, 2] + [2] * 10
    assert ell.values[1].tolist() == [1.0, 1.0] + [0.0] * 10


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_match_scipy(dtype: type) -> None:
    rng = np.random.default_rng(0)
    n = 9000  # over 4096 rows, so HYB has both parts
    lengths = rng.integers(0, 6, n) + (rng.random(n) < 0.01) * 30
    row = np.repeat(np.arange(n), lengths)
    a = sp.csr_matrix((rng.random(row.size), (row, rng.integers(0, n, row.size))),
                      shape=(n, n)).astype(dtype)
    a.sort_indices()
    x = rng.random(n).astype(dtype)
    for storage in ("ell", "hyb"):
        p = padded(a, storage)
        assert p.values.dtype == dtype
        np.testing.assert_allclose(spmv(p, x)(), a @ x, rtol=1e-5)
    assert 0 < padded(a, "hyb").width < padded(a, "ell").width


def test_a_matrix_without_entries() -> None:
    a = sp.csr_matrix((3, 4))
    for storage in ("ell", "hyb"):
        p = padded(a, storage)
        assert p.width == 0 and spmv(p, np.ones(4))().tolist() == [0.0, 0.0, 0.0]


def test_bench_runs_ell_and_hyb_and_says_when_it_cannot() -> None:
    r, c = _two_per_row_and_one_long()
    m = make_matrix(6000, 6000, r, c)
    s = measure(m)
    spec = load_spec("epyc-7763")
    runs = {x.storage: x for x in bench(m, s, spec, formats=["ell", "hyb"], repeat=3,
                                        warmup=1, min_time=0.0)}
    assert runs["hyb"].timing is not None and runs["ell"].timing is not None
    # ELL's 72,000 slots are 5.99x the 12,010 entries: under the 20x limit. One row of
    # 6,000 entries would make it 6000·6000 / 18,000 = 2,000x: skipped, saying why
    long_row = make_matrix(6000, 6000, np.r_[r[:12_000], np.zeros(6000, int)],
                           np.r_[c[:12_000], np.arange(6000)])
    ell = bench(long_row, measure(long_row), spec, formats=["ell"])[0]
    assert ell.timing is None and "ELL would pad 6,000 rows to" in ell.skipped
    spmm = bench(m, s, spec, formats=["hyb"], kernel="spmm", width=4)[0]
    assert spmm.timing is None and spmm.skipped == "the HYB kernel here multiplies one " \
                                                   "vector (spmv)"
