"""The measured tables of the papers, checked against the bound: a measured run faster than
its bound is a bug in the model or the spec, unless the test names the reason.

*Sparsity-Aware Roofline Models for Sparse Matrix-Matrix Multiplication* (Qian et al.),
Table V: GFLOP/s of CSR, MKL and CSB SpMM (d = 1, 4, 16, 64) on one socket of an EPYC 7763.
The cells that can be rebuilt exactly are those of the generated matrices (Table III):
ideal_diagonal_22 (the 2^22 identity pattern) and the Erdos-Renyi er_22_1/10/20 (2^22 rows and
columns, the stored entries given in Table III). Their compulsory traffic needs only the
counts: A in CSR (fp64 values, int32 indices) nnz·12 + (n+1)·4 bytes, the rows of B the
matrix references k_used·d·8 and C n·d·8, with k_used = n for the identity and, for
nnz entries placed uniformly at random, n·(1 - (1 - 1/n)^nnz) (its spread, about 10^3
columns, moves no bound by 0.1 %).

*Time-Based Roofline for Deep Learning Performance Analysis*: its worked launch threshold on
the V100 (section IV-B), rebuilt from the bound with the paper's average launch latency and
with the spec's minimum.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from sparsroof.hardware.library import load_spec
from sparsroof.hardware.spec import HwSpec
from sparsroof.model.bound import bound
from sparsroof.model.traffic import Traffic

N = 2**22
WIDTHS = (1, 4, 16, 64)
FORMATS = ("CSR", "MKL", "CSB")
#: Table V rows (GFLOP/s; per width: CSR, MKL, CSB) with the stored entries of Table III
TABLE_V = {
    "ideal_diagonal_22": (4_194_304, (1.988, 1.167, 5.886, 23.546, 10.558, 6.840, 8.5888,
                                      9.039, 14.202, 10.902, 11.023, 17.294)),
    "er_22_1": (4_194_304, (1.586, 1.634, 3.998, 4.957, 5.446, 6.226, 7.841, 8.194, 10.216,
                            8.547, 5.320, 11.509)),
    "er_22_10": (41_942_990, (6.194, 7.833, 12.832, 13.921, 15.225, 12.373, 12.284, 12.374,
                              13.456, 10.0322, 11.185, 17.036)),
    "er_22_20": (83_885_880, (8.091, 10.906, 16.283, 14.979, 16.249, 15.453, 13.575, 14.169,
                              13.483, 11.564, 10.429, 17.001)),
}
#: the paper's DRAM bandwidth beta (Table I, STREAM on one socket): a measured figure
STREAM_BETA = 122.6e9
#: the cell that beats a bound drawn with STREAM_BETA, and why (see the tests below)
STREAM_CELL = ("ideal_diagonal_22", 64, "CSB")


def _cells() -> list[tuple[str, int, str, float, Traffic]]:
    cells = []
    for name, (nnz, gflops) in TABLE_V.items():
        k_used = N if name.startswith("ideal") else N * -math.expm1(nnz * math.log1p(-1 / N))
        for i, rate in enumerate(gflops):
            d, fmt = WIDTHS[i // 3], FORMATS[i % 3]
            flops = 2 * nnz * d
            t = Traffic("spmm", d, "csr", "compulsory", "fp64", "int32", flops, flops,
                        nnz * 12 + (N + 1) * 4, k_used * d * 8, N * d * 8)
            cells.append((name, d, fmt, flops / (rate * 1e9), t))
    return cells


def _bound_s(t: Traffic, cache_roof: bool = True, spec: HwSpec | None = None) -> float:
    return bound(t, spec or load_spec("epyc-7763"), unit="simt", precision="fp64",
                 footprint=t.bytes_total if cache_roof else None).sol_s


def _with_dram(bandwidth: float) -> HwSpec:
    spec = load_spec("epyc-7763")
    dram = spec.memory[-1]
    level = replace(dram, bandwidth=replace(dram.bandwidth, value=bandwidth, kind="measured"))
    return replace(spec, memory=(*spec.memory[:-1], level))


def test_table_v_cells_are_not_faster_than_their_bound() -> None:
    cells = _cells()
    assert len(cells) == 48
    faster = [(name, d, fmt) for name, d, fmt, measured, t in cells if measured < _bound_s(t)]
    assert faster == []


def test_the_papers_stream_figure_is_beaten_by_one_of_its_runs() -> None:
    # Why the spec's DRAM roof is the theoretical peak and not the paper's STREAM beta:
    # ideal_diagonal_22, d = 64, CSB took 31.0 ms for a 4.36 GB working set, of which at most
    # the 290 MiB of caches can stay resident, so the rest came from DRAM at >= 131 GB/s:
    # faster than STREAM's 122.6 GB/s (STREAM counts the bytes a kernel names, not the
    # write-allocate reads of its stores), below the 204.8 GB/s of eight DDR4-3200 channels.
    stream = _with_dram(STREAM_BETA)
    faster = [c[:3] for c in _cells() if c[3] < _bound_s(c[4], spec=stream)]
    assert faster == [STREAM_CELL]
    name, d, fmt, measured, t = next(c for c in _cells() if c[:3] == STREAM_CELL)
    spec = load_spec("epyc-7763")
    caches = sum(lv.capacity.value for lv in spec.memory[:-1] if lv.capacity is not None)
    dram_rate = (t.bytes_total - caches) / measured
    assert STREAM_BETA < dram_rate < spec.dram.bandwidth.value
    assert dram_rate == pytest.approx(131.3e9, rel=0.01)


def test_cache_roofs_are_what_keep_the_bound_below_the_runs() -> None:
    # charged entirely at DRAM speed (no cache roof), CSR at d = 4 on the diagonal beats the
    # bound (320 MiB, most of which the 256 MiB L3 keeps between runs)
    faster = [(n, d, f) for n, d, f, measured, t in _cells()
              if measured < _bound_s(t, cache_roof=False)]
    assert faster == [("ideal_diagonal_22", 4, "CSR")]


def test_tightness_of_the_table_v_bounds() -> None:
    # measured / bound per size band: the L3-resident cells run hundreds of times slower than
    # the derived L3 peak (a loose roof: no measured L3 bandwidth is published for this
    # part), the DRAM-resident cells within 1.57x to 42x (median 9.3x: the paper's kernels
    # reach 122.6 / 204.8 = 0.6 of the peak at best, and many are latency-bound)
    ratios = {"cache": [], "dram": []}
    spec = load_spec("epyc-7763")
    for _, _, _, measured, t in _cells():
        b = bound(t, spec, unit="simt", precision="fp64", footprint=t.bytes_total)
        ratios["cache" if b.in_cache else "dram"].append(measured / b.sol_s)
    assert len(ratios["cache"]) == 9 and len(ratios["dram"]) == 39
    assert min(ratios["cache"]) > 100
    # the closest DRAM cell is the one that streamed at ~131 GB/s (see above): its ratio is
    # the peak over that rate, 204.8 / 131.3
    assert min(ratios["dram"]) == pytest.approx(spec.dram.bandwidth.value / 131.3e9, rel=0.02)
    assert max(ratios["dram"]) < 45


def _flops_where_compute_meets_launch(spec: HwSpec) -> float:
    """The work F at which a kernel on the tensor roof stops being launch-bound: the bound's
    compute term equals its launch term, found by bisection on the bound itself."""
    lo, hi = 1.0, 1e13
    for _ in range(200):
        f = math.sqrt(lo * hi)
        t = Traffic("spmm", 1, "csr", "compulsory", "fp16", "int32", f, f, 1.0, 0.0, 0.0)
        b = bound(t, spec, unit="tensor", precision="fp16", launches=1)
        lo, hi = (f, hi) if b.bound == "launch" else (lo, f)
    return lo


def test_time_based_roofline_launch_threshold_on_v100() -> None:
    # *Time-Based Roofline for Deep Learning Performance Analysis*, section IV-B: to stop
    # being launch-bound on the V100's tensor cores, "the kernel should perform at least
    # 1.06e14 x 4.2e-6 = 0.4452 GFLOPs". The paper's 4.2 us is an average launch latency; a
    # bound must use the minimum, so the spec's floor is lower and so is its threshold.
    spec = load_spec("v100-measured")
    floor = spec.launch_overhead.value
    assert floor < 4.2e-6  # a minimum below the paper's average
    threshold = _flops_where_compute_meets_launch(spec)
    tensor_peak = spec.peaks[("tensor", "fp16")].value
    assert threshold == pytest.approx(tensor_peak * floor, rel=1e-9)
    # with the paper's own average as the launch term, the bound gives the paper's figure
    # (its 1.06e14 is the 107.479 TFLOP/s peak rounded down, hence 1.4 %)
    assert spec.launch_overhead is not None
    average = replace(spec, launch_overhead=replace(spec.launch_overhead, value=4.2e-6))
    assert _flops_where_compute_meets_launch(average) == pytest.approx(0.4452e9, rel=0.015)
