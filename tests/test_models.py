"""The papers' equations reproduced with sparsroof's model functions, numbers by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsroof.hardware.library import load_spec
from sparsroof.model import reuse
from sparsroof.model import storage as formats
from sparsroof.model.bound import bound, resolve_unit
from sparsroof.model.ridgeline import distributed_bounds, partition_rows
from sparsroof.model.traffic import c_bytes, dense_traffic, useful_flops

# Sparsity-aware SpMM paper: fp64 values (8 B), A charged 12 bytes per entry (value + index)


def _ai(nnz: int, n: int, d: int, b_bytes: float, a_per_entry: int = 12) -> float:
    return useful_flops(nnz, d) / (a_per_entry * nnz + b_bytes + c_bytes(n, d, 8))


def test_eq2_random() -> None:
    # nnz = 1000, n = 100, d = 4: 2·4·1000 / ((12 + 8·4)·1000 + 8·100·4) = 8000 / 47200
    assert _ai(1000, 100, 4, reuse.random(1000, 4, 8)) == pytest.approx(8000 / 47200)


def test_eq3_diagonal() -> None:
    # nnz = 5000, n = 1000, d = 16: 2·16·5000 / (12·5000 + 16·1000·16) = 160000 / 316000
    b = reuse.compulsory(1000, 16, 8)  # B read once: 8·n·d
    assert _ai(5000, 1000, 16, b) == pytest.approx(160000 / 316000)


def test_eq4_blocked_and_the_choice_of_a_traffic() -> None:
    # N = 50 blocks of 8 x 8, nnz = 800 (D = 16), d = 4, n = 400:
    # z = 8·(1 − e^−2) = 6.917318; eq. (4): 6400 / (8·800 + 2·4·50·z + 8·400·4)
    z = 8 * (1 - math.exp(-2))
    b = reuse.blocked(50, 8, 800, 4, 8, reuse=0.25)
    assert b == pytest.approx(2 * 4 * 50 * z)
    eq4 = 6400 / (6400 + 2 * 4 * 50 * z + 12800)
    assert _ai(800, 400, 4, b, a_per_entry=8) == pytest.approx(eq4)
    assert eq4 == pytest.approx(0.291347, rel=1e-5)
    # sparsroof charges A as its text does (12 bytes an entry), so its AI is lower
    assert _ai(800, 400, 4, b, a_per_entry=12) == pytest.approx(6400 / (9600 + b + 12800))


def test_eq5_eq6_scale_free() -> None:
    # nnz = 1e6, f = 0.001, α = 2.5: nnz_hub = 1e6·0.001^(1/3) = 1e5; n = 1e5, n_hub = 100
    hub = reuse.hub_entries(1_000_000, 0.001, 2.5)
    assert hub == pytest.approx(100_000)
    b = reuse.scale_free(1_000_000, hub, 100, 8, 8)
    # eq. (6), d = 8: 12e6 + 8·8·(1e6 − 1e5) + 8·8·100 + 8·1e5·8 = 76 006 400 bytes
    assert _ai(1_000_000, 100_000, 8, b) == pytest.approx(16e6 / 76_006_400)


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
    b = bound(dense, spec, unit=unit, precision=precision)
    # dense GEMM: 2·768·768·196 FLOPs at 312 TFLOP/s vs (768·768 + 768·196·2)·2 bytes
    flops, nbytes = 2 * 768 * 768 * 196, (768 * 768 + 2 * 768 * 196) * 2
    assert b.sol_s == pytest.approx(max(flops / 312e12, nbytes / 2039e9))
    # eq. (3): speedup over two layers is the ratio of sums, not the mean of ratios
    dense_sum, sparse_sum = 3e-6 + 1e-6, 1e-6 + 1e-6
    assert dense_sum / sparse_sum == pytest.approx(2.0)


def test_hyb_width_rule_small_matrix_is_all_coo() -> None:
    # fewer than 4096 rows: no width qualifies, everything overflows into COO
    counts = np.bincount([3] * 100)
    s = formats.hyb(counts, 100, 8, 4)
    assert s.detail == "K=0, COO 300" and s.bytes == formats.coo(300, 8, 4).bytes


def test_bsr_and_dia_fill_is_executed() -> None:
    s = formats.bsr(n_blocks=3, m=8, b=4, s_v=4, s_i=4)
    assert s.executed_entries == 48  # 3 blocks x 16 slots, zeros included
    assert s.bytes == 48 * 4 + 3 * 4 + (2 + 1) * 4
    d = formats.dia(n_diagonals=3, m=10, s_v=8, s_i=4)
    assert d.executed_entries == 30 and d.bytes == 30 * 8 + 12


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
    with pytest.raises(Exception, match="no tensor-sparse peak at fp64"):
        resolve_unit(spec, "tensor-sparse", "fp64", None, explicit=True)
    # automatic choice falls back: 2:4 in fp64 runs on the fp64 tensor cores
    assert resolve_unit(spec, "tensor-sparse", "fp64", None, explicit=False) == (
        "tensor", "fp64")
    assert resolve_unit(spec, "tensor", "fp32", None, explicit=False) == ("tensor", "tf32")
