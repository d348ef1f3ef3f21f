"""The bytes of A that any correct kernel must read, per storage format, worked by hand; and
the launch floor per timing method. A bound is a promise for every kernel, a library's too:
a kernel that leaves an ELL row at its first padding slot must still be above it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparsroof.errors import OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.hardware.spec import Quantity
from sparsroof.model import storage as formats
from sparsroof.model.timing import launch_floor


def test_ell_reads_its_entries_and_an_end_mark_per_short_row() -> None:
    # 63,838 rows: one of 3,423 entries, the rest of 3 (K = 3,423, as the long-row case of a
    # published ELL run). Stored: 63,838 x 3,423 slots x 12 B = 2.62 GB; read: the
    # 3,423 + 63,837 x 3 = 194,934 entries x 12 B and 63,837 end marks x 4 B = 2,594,556 B.
    counts = np.zeros(3424, np.int64)
    counts[3], counts[3423] = 63_837, 1
    e = formats.ell(counts, 63_838, 8, 4)
    assert e.bytes == 194_934 * 12 + 63_837 * 4 == 2_594_556
    assert e.stored_bytes == 63_838 * 3423 * 12
    assert e.executed_entries == 194_934 and e.values_stored == 63_838 * 3423
    # fp32 values, int64 indices: the end mark is the smaller of an index and a value
    assert formats.ell(counts, 63_838, 4, 8).bytes == 194_934 * 12 + 63_837 * 4


def test_a_full_ell_needs_no_end_marks_and_equals_its_footprint() -> None:
    counts = np.bincount([4] * 10)  # every row of 4: no padding at all
    e = formats.ell(counts, 10, 8, 4)
    assert e.bytes == e.stored_bytes == 40 * 12


def test_sell_footprint_by_slices_of_sorted_rows() -> None:
    # 70 rows: 2 of 9 entries, 60 of 2, 8 empty; C = 32, sorted longest first: slice 1 holds
    # the 2 long rows and 30 of 2 (width 9), slice 2 the other 30 of 2 and 2 empty rows
    # (width 2), slice 3 six empty rows (width 0). Slots 32x9 + 32x2 = 352; 4 offsets.
    counts = np.zeros(10, np.int64)
    counts[0], counts[2], counts[9] = 8, 60, 2
    s = formats.sell(counts, 70, 8, 4, slice_rows=32)
    assert s.values_stored == 352 and s.stored_bytes == 352 * 12 + 4 * 4
    assert s.bytes == 138 * 12 and s.executed_entries == 138


@given(st.lists(st.integers(0, 40), min_size=1, max_size=300), st.sampled_from([1, 4, 32]))
def test_padding_formats_read_at_most_their_footprint_and_at_least_the_entries(
        lengths: list[int], c: int) -> None:
    counts, m = np.bincount(lengths), len(lengths)
    nnz = sum(lengths)
    for a in (formats.ell(counts, m, 8, 4), formats.sell(counts, m, 8, 4, c),
              formats.hyb(counts, m, 8, 4),
              formats.hyb(counts, m, 8, 4, formats.hyb_least_width(counts, m, 8, 4))):
        assert nnz * 12 <= a.bytes <= a.stored_bytes
        assert a.executed_entries == nnz
    # SELL with slices of one row stores no padding; the sorted layout the footprint
    # assumes, worked out row by row here, stores no more than ELL
    assert formats.sell(counts, m, 8, 4, 1).values_stored == nnz
    order = np.sort(np.array(lengths))[::-1]
    by_rows = sum(int(order[i]) * min(c, m - i) for i in range(0, m, c))
    assert formats.sell(counts, m, 8, 4, c).values_stored == by_rows <= m * max(lengths)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=200))
def test_the_least_hyb_split_reads_least_of_every_width(lengths: list[int]) -> None:
    counts, m = np.bincount(lengths), len(lengths)
    best = formats.hyb(counts, m, 8, 4, formats.hyb_least_width(counts, m, 8, 4)).bytes
    assert best == min(formats.hyb(counts, m, 8, 4, k).bytes for k in range(counts.size + 1))


def _with_floors(**floors: float) -> object:
    a100 = load_spec("a100-80gb")
    quantities = {k: Quantity(v, f"{v} s", "test", "minimum") for k, v in floors.items()}
    return replace(a100, launch_floors=quantities,
                   launch_overhead=min(quantities.values(), key=lambda q: q.value))


def test_the_floor_of_each_timing_method() -> None:
    spec = _with_floors(graph=1.0e-6, stream=2.0e-6, sync=6.0e-6)
    assert launch_floor(spec, "graph") == (1.0e-6, "")  # type: ignore[arg-type]
    assert launch_floor(spec, "stream") == (2.0e-6, "")  # type: ignore[arg-type]
    # one call timed alone is no faster than one of many in a graph
    assert launch_floor(spec, "cold") == (1.0e-6, "")  # type: ignore[arg-type]
    assert launch_floor(spec, "sync") == (6.0e-6, "")  # type: ignore[arg-type]
    # 4 calls between two synchronisations: (6 + 3 x 2) / 4 us per call
    assert launch_floor(spec, "sync", 4)[0] == pytest.approx(3.0e-6)  # type: ignore[arg-type]


def test_a_missing_floor_falls_back_to_a_smaller_one_with_a_note() -> None:
    spec = _with_floors(graph=1.0e-6)
    seconds, note = launch_floor(spec, "sync")  # type: ignore[arg-type]
    assert seconds == 1.0e-6 and "gives no sync launch floor" in note
    seconds, note = launch_floor(spec, "stream")  # type: ignore[arg-type]
    assert seconds == 1.0e-6 and "its graph floor is used" in note
    with pytest.raises(OptionError, match="timing: unknown method 'warm'"):
        launch_floor(spec, "warm")  # type: ignore[arg-type]


def test_a_floor_that_is_not_a_minimum_is_left_out_for_a_smaller_one() -> None:
    """A sync floor said to be the mean of a benchmark's calls is above the calls of a
    leaner harness: sync-timed bounds use the stream floor and say why. The bundled
    A100 40GB gives none (Ginkgo's published times are such means)."""
    spec = _with_floors(graph=1.0e-6, stream=2.0e-6, sync=6.0e-6)
    mean = replace(spec.launch_floors["sync"], kind="average")
    spec = replace(spec, launch_floors={**spec.launch_floors, "sync": mean})
    seconds, note = launch_floor(spec, "sync")  # type: ignore[arg-type]
    assert seconds == 2.0e-6 and "sync launch floor is not a minimum (average)" in note
    assert launch_floor(spec, "sync", 4)[0] == 2.0e-6  # type: ignore[arg-type]
    a100 = load_spec("a100-40gb")
    seconds, note = launch_floor(a100, "sync")
    assert "sync" not in a100.launch_floors and seconds == a100.launch_floors["stream"].value
    assert note == "a100-40gb gives no sync launch floor: its stream floor is used"


def test_every_bundled_floor_is_at_least_the_default_floor() -> None:
    """The default bound charges launch_overhead; it must sit under every method's floor,
    or a run timed that way could be promised more than it can reach."""
    from sparsroof.hardware.library import bundled_names

    for name in bundled_names():
        spec = load_spec(name)
        for method, q in spec.launch_floors.items():
            assert spec.launch_overhead is not None and spec.launch_overhead.value <= q.value, \
                (name, method)
            assert q.kind == "minimum", (name, method)


def test_a_product_with_nothing_to_compute_has_no_launch_term() -> None:
    # a library writes y's zeros with a memory set or not at all (measured on an H100 below
    # an empty kernel's time), so no kernel is charged; the note says why
    from sparsroof.model.bound import bound
    from sparsroof.model.traffic import Traffic

    spec = load_spec("h100-sxm")
    empty = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 0.0, 0.0, 16.0, 0.0, 24.0)
    b = bound(empty, spec, unit="simt", precision="fp64", launches=1)
    assert b.launch_s == 0 and b.bound == "memory" and b.note == \
        "nothing to compute: no kernel need run"
    one = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2.0, 2.0, 28.0, 8.0, 24.0)
    assert bound(one, spec, unit="simt", precision="fp64", launches=1).launch_s == \
        pytest.approx(0.97e-6)


def test_a_gpu_spec_without_a_floor_says_its_small_bounds_leave_the_launch_out() -> None:
    """A GPU kernel always pays a launch; a spec that cannot say how long (MI300X, C2050)
    keeps a valid but far lower bound, and says so. A CPU spec without a floor (no launch
    to pay) and a product with nothing to compute get no such note."""
    from sparsroof.model.bound import bound
    from sparsroof.model.traffic import Traffic

    one = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2.0, 2.0, 28.0, 8.0, 24.0)
    for name in ("mi300x", "c2050"):
        b = bound(one, load_spec(name), unit="simt", precision="fp64")
        assert b.launch_s == 0 and f"{name} gives no launch floor" in b.note
    for name in ("h100-sxm", "epyc-7763"):
        assert "launch floor" not in bound(one, load_spec(name), unit="simt",
                                           precision="fp64").note
    empty = replace(one, flops_useful=0.0, flops_executed=0.0)
    assert "launch floor" not in bound(empty, load_spec("mi300x"), unit="simt",
                                       precision="fp64").note


def test_a_compute_bound_bound_on_simt_says_tensor_units_can_beat_it() -> None:
    """A dense-ish fp16 SpMM of width 4096 is compute-bound on the SIMT units its CSR
    kernels use (The Sparsity Roofline's model), yet the dense GEMM of the same product on
    tensor units is bounded faster: the CSR rows say that only the tensor units' bound
    holds for such a kernel, and a bound on tensor units, or a memory-bound one, says
    nothing of it."""
    import scipy.sparse as sp

    from sparsroof.analysis import analyze
    from sparsroof.matrix.generate import uniform_random

    g = uniform_random(1024, 1024, 400_000, seed=3)
    matrix = sp.coo_matrix((g.values, (g.row, g.col)), shape=(g.rows, g.cols))
    a = analyze(matrix, hw="a100", kernel="spmm", d=[4096], dtype="fp16",
                storage=["csr", "dense"], model=["compulsory"], cache=False)
    rows = {r.traffic.storage: r for r in a.results}
    csr, dense = rows["csr"].bound, rows["dense"].bound
    assert csr.bound == "compute" and csr.unit == "simt" and dense.sol_s < csr.sol_s
    assert "only the bound on tensor units holds for it" in csr.note
    assert "tensor units" not in dense.note
    spmv = analyze(matrix, hw="a100", storage=["csr"], model=["compulsory"], cache=False)
    assert all("compute-bound" not in r.bound.note for r in spmv.results)
