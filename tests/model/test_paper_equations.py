"""The papers' equations reproduced with sparsroof's model functions, numbers by hand."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from sparsroof.errors import OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.model import reuse
from sparsroof.model import storage as formats
from sparsroof.model.bound import bound, resolve_unit
from sparsroof.model.ridgeline import distributed_bounds, partition_rows
from sparsroof.model.traffic import ModelParams, Traffic, c_bytes, dense_traffic, traffic
from sparsroof.structure.features import Structure
from sparsroof.whatif.manifest import Layer, Manifest
from sparsroof.whatif.patterns import parse_pattern
from sparsroof.whatif.placement import Options
from sparsroof.whatif.study import evaluate_model

# Sparsity-aware SpMM paper: fp64 values (8 B), A charged 12 bytes per entry (value + index).
# sparsroof stores A as CSR here, which adds (n + 1) 4-byte row pointers to those 12·nnz.


def _square(n: int, nnz: int, **features: Any) -> Structure:
    """The measured features the model reads, for an n x n matrix with rows of equal
    length and every column used unless ``features`` say otherwise (no pattern is
    needed: the papers' equations take only counts)."""
    fields = {"nonempty_cols": n, "max_row_length": nnz // n, **features}
    return Structure(rows=n, cols=n, stored_entries=nnz, numeric_nonzeros=nnz,
                     nonempty_rows=n, **fields)


def _spmm(s: Structure, model: str, d: int, params: ModelParams | None = None) -> Traffic:
    t = traffic(s, kernel="spmm", width=d, storage="csr", model=model, dtype="fp64",
                index="int32", params=params)
    assert t is not None
    return t


def test_eq2_random() -> None:
    # nnz = 1000, n = 100, d = 4. Eq. (2): F = 2·4·1000 = 8000; B = 8·4·1000 = 32000,
    # C = 8·100·4 = 3200, A = 12·1000 = 12000: AI = 8000 / 47200.
    # sparsroof's CSR adds 101·4 = 404 bytes of row pointers: 8000 / 47604
    t = _spmm(_square(100, 1000), "random", 4)
    assert (t.flops_useful, t.bytes_a, t.bytes_b, t.bytes_c) == (8000, 12404, 32000, 3200)
    assert t.intensity == pytest.approx(8000 / 47604)


def test_eq3_diagonal() -> None:
    # nnz = 5000, n = 1000, d = 16. Eq. (3) reads B once: 8·1000·16 = 128000, C the same,
    # A = 12·5000 = 60000: AI = 2·16·5000 / 316000 = 160000 / 316000.
    # With CSR's 1001·4 = 4004 bytes of row pointers: 160000 / 320004
    t = _spmm(_square(1000, 5000), "banded", 16)
    assert (t.bytes_a, t.bytes_b, t.bytes_c) == (64004, 128000, 128000)
    assert t.intensity == pytest.approx(160000 / 320004)


def test_eq4_blocked_and_the_choice_of_a_traffic() -> None:
    # N = 50 blocks of 8 x 8, nnz = 800 (D = 16), d = 4, n = 400, ρ = 1/4:
    # z = 8·(1 − e^−2) = 6.917318, B = 2·d·N·z = 2·4·50·z = 2766.927 bytes.
    # The blocks lie in 10 block columns: 80 rows of B referenced, 80·4·8 = 2560 bytes,
    # under the blocked estimate, so the compulsory floor does not apply.
    s = _square(400, 800, nonempty_cols=80, blocks={8: 50})
    t = _spmm(s, "blocked", 4, ModelParams(reuse_factor=0.25, block_size=8))
    assert t.bytes_b == pytest.approx(2766.927, abs=1e-3)
    assert "floor" not in t.model_detail
    # eq. (4) charges A 8 bytes an entry: 6400 / (8·800 + 2766.927 + 8·400·4)
    #   = 6400 / 21966.927 = 0.291347
    assert replace(t, bytes_a=8 * 800).intensity == pytest.approx(0.291347, rel=1e-5)
    # sparsroof charges A as the paper's text does, 12 bytes an entry, plus 401·4 row
    # pointers: 6400 / (11204 + 2766.927 + 12800) = 6400 / 26770.927 = 0.239065
    assert t.bytes_a == 11204
    assert t.intensity == pytest.approx(0.239065, rel=1e-5)


def test_eq5_eq6_scale_free() -> None:
    # nnz = 1e6, f = 0.001, α = 2.5: nnz_hub = 1e6·0.001^(1/3) = 1e5; n = 1e5, n_hub = 100
    assert reuse.hub_entries(1_000_000, 0.001, 2.5) == pytest.approx(100_000)
    t = _spmm(_square(100_000, 1_000_000, col_alpha=2.5), "scale-free", 8,
              ModelParams(hub_fraction=0.001))
    # eq. (6), d = 8: B = 8·8·(1e6 − 1e5) + 8·8·100 = 57 606 400; C = 8·1e5·8 = 6 400 000;
    # with A = 12e6 the total is 76 006 400 bytes and AI = 16e6 / 76 006 400.
    # CSR adds 100 001·4 = 400 004 bytes of row pointers: 16e6 / 76 406 404
    assert t.bytes_b == pytest.approx(57_606_400)
    assert t.bytes_total == pytest.approx(76_406_404)
    assert t.intensity == pytest.approx(16e6 / 76_406_404)


def test_sparsity_roofline_eq1_bytes() -> None:
    # eq. (1) in elements: nnz + k·n + m·n + index data (CSR: nnz + m + 1); fp32/int32
    m, k, d, nnz = 64, 128, 16, 2048
    a = formats.csr(nnz, m, 4, 4)
    total = a.bytes + reuse.compulsory(k, d, 4) + c_bytes(m, d, 4)
    assert total == 4 * (nnz + k * d + m * d + nnz + m + 1)


def test_sparsity_roofline_eq2_eq3_sol_and_speedup() -> None:
    spec = load_spec("a100")
    m, k, d = 768, 768, 196
    dense = dense_traffic(m, k, d, "fp16")
    unit, precision = resolve_unit(spec, "tensor", "fp16", None, explicit=False)
    # the paper's roofline: main memory, no launch (bound's defaults add both, as analyze)
    b = bound(dense, spec, unit=unit, precision=precision, launches=0, footprint=None)
    # eq. (2), dense GEMM: 2·768·768·196 = 231 211 008 FLOPs at 312 TFLOP/s = 741 ns;
    # (768·768 + 768·196·2)·2 = 1 781 760 bytes at 2039 GB/s = 874 ns: memory bound
    assert (unit, precision) == ("tensor", "fp16")
    assert b.bound == "memory" and b.sol_s == pytest.approx(1_781_760 / 2039e9)
    # eq. (3) over two such layers, one pruned 2:4 and one kept dense. The 2:4 layer:
    # 294 912 fp16 values (589 824 B) + 2 bits of metadata each (73 728 B) + B and C
    # (602 112 B) = 1 265 664 B, 621 ns, above the 371 ns of its 2·294 912·196
    # multiply-adds at 312 TFLOP/s. Every layer is memory bound, so time goes as bytes:
    # speedups 1 781 760 / 1 265 664 = 1.408 and 1; the model's is the ratio of sums,
    # 2·1 781 760 / (1 781 760 + 1 265 664) = 1.169, not the mean of ratios 1.204
    layers = (Layer("fc", m=m, k=k, n=d), Layer("kept", m=m, k=k, n=d, prune=False))
    r = evaluate_model(Manifest("two", "two.yaml", "", "by hand", layers),
                       parse_pattern("2:4"), 0.5, spec, Options(dtype="fp16", launches=0))
    assert [x.sparse.bound for x in r.layers] == ["memory", "memory"]
    assert r.layers[0].speedup == pytest.approx(1_781_760 / 1_265_664)
    assert r.speedup == pytest.approx(2 * 1_781_760 / (1_781_760 + 1_265_664))
    assert r.speedup == pytest.approx(1.1693, rel=1e-4)


def test_hyb_width_rule_small_matrix_is_all_coo() -> None:
    # fewer than 4096 rows: no width qualifies, everything overflows into COO
    counts = np.bincount([3] * 100)
    s = formats.hyb(counts, 100, 8, 4)
    assert s.detail == "K=0, COO 300" and s.bytes == formats.coo(300, 8, 4).bytes


def test_bsr_and_dia_fill_is_executed() -> None:
    s = formats.bsr(n_blocks=3, m=8, b=4, s_v=4, s_i=4)
    assert s.executed_entries == 48  # 3 blocks x 16 slots, zeros included
    assert s.bytes == 48 * 4 + 3 * 4 + (2 + 1) * 4
    # a 10 x 10 tridiagonal: 10 + 9 + 9 cells within the matrix, each read and multiplied;
    # the two slots outside it are stored (every diagonal padded to 10) but never read
    d = formats.dia(n_diagonals=3, cells=28, m=10, s_v=8, s_i=4)
    assert d.executed_entries == 28 and d.bytes == 28 * 8 + 12
    assert d.values_stored == 30 and d.stored_bytes == 30 * 8 + 12


def test_partition_balances_entries() -> None:
    lengths = np.array([10, 10, 10, 10])
    assert partition_rows(lengths, 2).tolist() == [0, 0, 1, 1]
    assert partition_rows(lengths, 4).tolist() == [0, 1, 2, 3]


def test_distributed_by_hand() -> None:
    # 4 x 4, entries (0,0) (0,3) (1,1) (2,2) (3,0) (3,3); P = 2 splits rows {0,1} | {2,3}
    row = np.array([0, 0, 1, 2, 3, 3])
    col = np.array([0, 3, 1, 2, 0, 3])
    rb = distributed_bounds(row, col, (4, 4), ranks=2, width=2, s_v=8, s_i=4,
                            peak_flops=1e12, bandwidth=1e11, network=1e10)
    # rank 0 reads columns {0, 3, 1}, column 3 is remote; rank 1 reads {2, 0, 3}, 0 remote
    assert rb.bytes_network == 2 * 2 * 8
    # B_M per rank: A 3·12 + 3·4 = 48, B 3·2·8 = 48, C 2·2·8 = 32 -> 128; both ranks equal
    assert rb.bytes_memory == 256
    assert rb.flops == 2 * 6 * 2 and rb.imbalance == 1.0
    assert rb.memory_s == pytest.approx(128 / 1e11)
    assert rb.network_s == pytest.approx(16 / 1e10)
    assert rb.bound == "network"  # 16 B at 10 GB/s (1.6 ns) beats 128 B at 100 GB/s
    single = distributed_bounds(row, col, (4, 4), ranks=1, width=2, s_v=8, s_i=4,
                                peak_flops=1e12, bandwidth=1e11, network=1e10)
    assert single.bytes_network == 0 and math.isinf(single.memory_intensity)


def test_explicit_unit_missing_precision_is_an_error() -> None:
    spec = load_spec("a100")
    with pytest.raises(OptionError, match="no tensor-sparse peak at fp64"):
        resolve_unit(spec, "tensor-sparse", "fp64", None, explicit=True)
    # automatic choice falls back: 2:4 in fp64 runs on the fp64 tensor cores
    assert resolve_unit(spec, "tensor-sparse", "fp64", None, explicit=False) == (
        "tensor", "fp64")
    assert resolve_unit(spec, "tensor", "fp32", None, explicit=False) == ("tensor", "tf32")
