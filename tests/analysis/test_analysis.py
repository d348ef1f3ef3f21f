"""The full pipeline on hand-checked matrices, and invariants of every model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsroof.analysis import Config, MatrixInfo, analyze_structure
from sparsroof.errors import OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import Matrix
from sparsroof.model.traffic import MODELS, STORAGES
from sparsroof.structure.features import measure

from ..conftest import make_matrix, sparsroof


def _run(m: Matrix, spec: str = "a100", **options: object):  # type: ignore[no-untyped-def]
    s = measure(m)
    info = MatrixInfo(m.name, m.path, m.rows, m.cols, s.stored_entries, s.numeric_nonzeros,
                      s.density, "pattern", "general")
    return analyze_structure(info, s, load_spec(spec), Config(**options))  # type: ignore[arg-type]


# 4 x 5, entries (0,0) (0,2) (1,2) (3,0) (3,4): row lengths 2, 1, 0, 2
TINY = make_matrix(4, 5, [0, 0, 1, 3, 3], [0, 2, 2, 0, 4])


def test_every_storage_format_by_hand() -> None:
    a = _run(TINY, storages=STORAGES, models=("compulsory",))
    bytes_a = {r.traffic.storage: r.traffic.bytes_a for r in a.results}
    executed = {r.traffic.storage: r.traffic.flops_executed / 2 for r in a.results}
    assert bytes_a["csr"] == 5 * 12 + 5 * 4            # values+columns, 5 row pointers
    assert bytes_a["csc"] == 5 * 12 + 6 * 4            # 6 column pointers
    assert bytes_a["dcsr"] == 5 * 12 + 3 * 4 + 4 * 4   # 3 non-empty rows: numbers, pointers
    assert bytes_a["coo"] == 5 * 16
    # K = 2: the 5 entries, and an end mark for the rows of 1 and 0 entries; padding is
    # stored (4 x 2 slots) but neither read nor multiplied
    assert bytes_a["ell"] == 5 * 12 + 2 * 4 and executed["ell"] == 5
    assert a.results[0].traffic.a_stored_bytes >= a.results[0].traffic.bytes_a
    stored = {r.traffic.storage: r.traffic.a_stored_bytes for r in a.results}
    assert stored["ell"] == 4 * 2 * 12 and stored["csr"] == bytes_a["csr"]
    # SELL, slices of 32 rows sorted longest first: one slice of width 2 (8 slots)
    assert bytes_a["sell"] == 5 * 12 and stored["sell"] == 4 * 2 * 12 + 2 * 4
    # diagonals j - i: 0, 2, 1, -3, 1 -> 4 distinct, each stored padded to 4 slots; read
    # and multiplied where they lie in the matrix: 4 + 4 + 3 (offset 2) + 1 (offset -3)
    assert bytes_a["dia"] == 12 * 8 + 4 * 4 and executed["dia"] == 12
    assert stored["dia"] == 4 * 4 * 8 + 4 * 4
    # N:M: the sparsest pattern every row fits is 2:16 (a row's 5 columns are one group of
    # at most 2 entries): 2 slots per row, zeros padded in, 4 bits of position each
    assert bytes_a["nm"] == 4 * 2 * 8 + 4 * 2 * 4 / 8 and executed["nm"] == 8
    # 2 x 2 blocks (i//2, j//2): (0,0) (0,1) (0,1) (1,0) (1,2) -> 4 blocks, 3 block-row ptrs
    assert bytes_a["bsr2"] == 4 * 4 * 8 + 4 * 4 + 3 * 4 and executed["bsr2"] == 16
    # one 32 x 32 block holds everything: 1024 slots, 1 block index, 2 block-row pointers
    assert bytes_a["bsr32"] == 1024 * 8 + 4 + 2 * 4
    assert bytes_a["dense"] == 20 * 8 and executed["dense"] == 20
    # fewer than 4096 rows: HYB is all COO
    assert bytes_a["hyb"] == bytes_a["coo"]


def test_cache_roof_and_launch_term() -> None:
    warm = _run(TINY, models=("compulsory",))
    assert warm.results[0].bound.memory_level == "L2" and warm.results[0].bound.in_cache
    cold = _run(TINY, models=("compulsory",), cache_roof=False)
    assert cold.results[0].bound.memory_level == "HBM2e" and not cold.results[0].bound.in_cache
    # the measured V100 spec has a launch floor of about 2 us: a tiny kernel is launch-bound
    v100 = _run(TINY, spec="v100-measured", models=("compulsory",), dtype="fp32")
    b = v100.results[0].bound
    floor = load_spec("v100-measured").launch_overhead
    assert floor is not None and 1e-6 < floor.value < 3e-6
    assert b.bound == "launch" and b.sol_s == pytest.approx(floor.value)
    assert _run(TINY, spec="v100-measured", models=("compulsory",), dtype="fp32",
                launches=0).results[0].bound.bound == "memory"


def test_units_follow_the_format() -> None:
    a = _run(TINY, storages=("csr", "bsr4", "dense"), models=("compulsory",), dtype="fp16")
    units = {r.traffic.storage: (r.bound.unit, r.bound.precision) for r in a.results}
    assert units == {"csr": ("simt", "fp16"), "bsr4": ("tensor", "fp16"),
                     "dense": ("tensor", "fp16")}
    forced = _run(TINY, storages=("bsr4",), models=("compulsory",), unit="simt")
    assert forced.results[0].bound.unit == "simt"
    with pytest.raises(OptionError, match="no tensor-sparse peak at fp64"):
        _run(TINY, unit="tensor-sparse", dtype="fp64")


def test_nm_that_does_not_conform_is_listed_last() -> None:
    # row 0 holds columns 0..8: no pattern up to 8:16 fits it. 2:4 groups holding
    # entries: (0, cols 0-3) 4 ✗, (0, 4-7) 4 ✗, (0, 8-11) 1 ✓, (1, 12-15) 1 ✓ -> 2 of 4
    m = make_matrix(2, 16, [0] * 9 + [1], [*range(9), 15])
    a = _run(m, storages=("nm", "csr", "coo"), models=("compulsory",))
    assert a.results[-1].traffic.storage == "nm" and not a.results[-1].valid
    assert a.results[-1].traffic.conforming == pytest.approx(0.5)


def test_blocked_model_is_raised_to_the_compulsory_floor() -> None:
    # block diagonal of dense 4 x 4 blocks: N·z·ρ = 8·4·(1 - e^-4)/4 < 32 rows of B
    rows = [i for b in range(8) for i in range(4 * b, 4 * b + 4) for _ in range(4)]
    cols = [j for b in range(8) for _ in range(4) for j in range(4 * b, 4 * b + 4)]
    a = _run(make_matrix(32, 32, rows, cols), models=("blocked", "compulsory"), block_size=4)
    by = {r.traffic.model: r.traffic for r in a.results}
    assert by["blocked"].bytes_b == by["compulsory"].bytes_b == 32 * 8
    assert "compulsory floor" in by["blocked"].model_detail


def test_distributed_needs_a_network() -> None:
    with pytest.raises(OptionError, match="no network bandwidth"):
        from sparsroof.analysis import analyze

        analyze(TINY, load_spec("epyc-7763"), Config(ranks=(2,)))


@st.composite
def _matrices(draw):  # type: ignore[no-untyped-def]
    rows, cols = draw(st.integers(1, 48)), draw(st.integers(1, 48))
    n = draw(st.integers(1, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # repeated coordinates become one entry
    return make_matrix(rows, cols, rng.integers(0, rows, n), rng.integers(0, cols, n))


@settings(max_examples=40, deadline=None)
@given(_matrices(), st.sampled_from([1, 8, 64]), st.sampled_from(["csr", "bsr4", "ell", "dia"]))
def test_model_invariants(m: Matrix, d: int, storage: str) -> None:
    a = _run(m, kernel="spmm", widths=(d,), storages=(storage,), models=MODELS)
    by = {r.traffic.model: r for r in a.results}
    floor = by["compulsory"].traffic.bytes_total
    for r in a.results:
        t, b = r.traffic, r.bound
        # no bound beats either roof
        assert b.attainable_flops * t.flops_executed / t.flops_useful <= b.peak_flops * (1 + 1e-9)
        assert b.attainable_flops <= b.bandwidth * t.intensity * (1 + 1e-9)
        # no model moves less than the compulsory traffic
        assert t.bytes_total >= floor * (1 - 1e-12)
    assert by["random"].bound.sol_s >= by["compulsory"].bound.sol_s


@settings(max_examples=30, deadline=None)
@given(_matrices(), st.integers(0, 2**16), st.sampled_from([1, 16]))
def test_adding_entries_never_reduces_traffic(m: Matrix, seed: int, d: int) -> None:
    rng = np.random.default_rng(seed)
    extra_r, extra_c = rng.integers(0, m.rows, 5), rng.integers(0, m.cols, 5)
    # an extra entry on an existing one merges with it
    bigger = make_matrix(m.rows, m.cols, np.concatenate([m.row, extra_r]),
                         np.concatenate([m.col, extra_c]))
    models = ("compulsory", "random", "blocked", "cache-aware")
    small = _run(m, kernel="spmm", widths=(d,), models=models, block_size=4)
    large = _run(bigger, kernel="spmm", widths=(d,), models=models, block_size=4)
    before = {r.traffic.model: r.traffic.bytes_total for r in small.results}
    after = {r.traffic.model: r.traffic.bytes_total for r in large.results}
    for model in models:
        assert after[model] >= before[model] - 1e-9, model


def test_a_requested_model_that_cannot_be_computed_is_reported_with_its_reason() -> None:
    # a 6 x 6 diagonal: 6 non-empty columns, too few for a power-law fit (10 needed)
    from sparsroof.analysis import analyze

    m = make_matrix(6, 6, np.arange(6), np.arange(6), np.ones(6))
    a = analyze(m, load_spec("a100"), Config(models=("scale-free", "compulsory")))
    assert [r.traffic.model for r in a.results] == ["compulsory"]
    (skipped,) = a.skipped
    assert (skipped.storage, skipped.model) == ("csr", "scale-free")
    assert "no power law can be fitted" in skipped.reason
    assert "6 non-empty columns" in skipped.reason
    assert a.to_dict()["matrices"][0]["not_computed"][0]["model"] == "scale-free"


def test_analyze_cli_prints_why_a_model_was_not_computed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os

    from ..conftest import ROOT

    path = tmp_path / "diag.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n4 4 4\n"
                    "1 1 1\n2 2 1\n3 3 1\n4 4 1\n")
    for output, stream in (("table", "stdout"), ("csv", "stderr")):
        out = sparsroof("analyze", str(path), "--model", "scale-free,compulsory", "-O", output,
                        cwd=ROOT, env={**os.environ, "COLUMNS": "300"})
        assert out.returncode == 0
        text = getattr(out, stream)
        assert "not computed: scale-free model (csr): no power law can be fitted" in text


def test_the_band_edges_go_by_the_names_the_tables_give_them() -> None:
    """The tables label the band's edges 'compulsory (optimistic)' and 'random
    (pessimistic)': --model takes either name."""
    from sparsroof.analysis import Config

    assert Config.from_options(model=("optimistic,pessimistic",)).models == (
        "compulsory", "random")
    assert Config.from_options(model=("pessimistic", "random")).models == ("random",)


def test_a_complex_matrix_moves_two_reals_per_value_and_does_four_times_the_flops(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same 3 x 3 pattern of 4 entries, real and complex (and hermitian, whose stored
    lower triangle expands to the same 4 entries), analysed and advised through the
    command line: complex A, x and y are 16 bytes a value at fp64, a complex multiply-add
    8 FLOPs (4 real multiplies, 4 real adds)."""
    import json

    from ..conftest import ROOT, sparsroof

    head = "%%MatrixMarket matrix coordinate"
    files = {
        "real": f"{head} real general\n3 3 4\n1 1 1\n2 1 2\n1 2 2\n3 3 4\n",
        "complex": f"{head} complex general\n3 3 4\n1 1 1 0\n2 1 2 1\n1 2 2 -1\n3 3 4 0\n",
        "hermitian": f"{head} complex hermitian\n3 3 3\n1 1 1 0\n2 1 2 1\n3 3 4 0\n",
    }
    found = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.mtx"
        path.write_text(text)
        out = sparsroof("analyze", str(path), "--hw", "a100", "--model", "compulsory",
                        "-O", "json", "--no-cache", cwd=ROOT)
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        [r] = doc["matrices"][0]["results"]
        found[name] = r["traffic"]
        assert ("complex_convention" in doc) == (name != "real")
        rows = json.loads(sparsroof("formats", str(path), "--hw", "a100", "-O", "json",
                                    "--no-cache", cwd=ROOT).stdout)["formats"]
        csr = next(f for f in rows if f["storage"] == "csr")
        assert csr["bytes_total"] == r["traffic"]["bytes_a"] + r["traffic"]["bytes_b"] + \
            r["traffic"]["bytes_c"]
    # CSR: values, columns, 4 row pointers; x's 3 referenced rows; y's 3 rows
    assert found["real"]["bytes_a"] == 4 * 8 + 4 * 4 + 4 * 4
    assert found["complex"]["bytes_a"] == 4 * 16 + 4 * 4 + 4 * 4
    assert (found["real"]["bytes_b"], found["complex"]["bytes_b"]) == (3 * 8, 3 * 16)
    assert (found["real"]["bytes_c"], found["complex"]["bytes_c"]) == (3 * 8, 3 * 16)
    assert (found["real"]["flops_useful"], found["complex"]["flops_useful"]) == (8, 32)
    assert found["hermitian"] == found["complex"]
    assert found["complex"]["complex_values"] and not found["real"]["complex_values"]


def test_one_rank_of_a_complex_matrix_is_the_single_device_bound(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The Ridgeline bound on one rank prices a complex matrix as the roofline does:
    the same FLOPs (8 per entry per column) and bytes (two reals a value)."""
    import json

    from ..conftest import ROOT, sparsroof

    path = tmp_path / "c.mtx"
    path.write_text("%%MatrixMarket matrix coordinate complex general\n3 3 4\n"
                    "1 1 1 0\n2 1 2 1\n1 2 2 -1\n3 3 4 0\n")
    out = sparsroof("analyze", str(path), "--hw", "clx-ridgeline", "--dtype", "fp32",
                    "--kernel", "spmm", "--d", "4", "--ranks", "1", "--model", "compulsory",
                    "-O", "json", "--no-cache", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)["matrices"][0]
    t, [rank] = m["results"][0]["traffic"], m["distributed"]
    assert rank["flops"] == t["flops_useful"] == 8 * 4 * 4
    assert rank["bytes_memory"] == t["bytes_a"] + t["bytes_b"] + t["bytes_c"]


@pytest.mark.parametrize("timing", ["graph", "cold"])
@pytest.mark.parametrize("hw", ["a100", "h100-sxm", "clx-ridgeline", "grace"])
def test_one_rank_is_the_single_device_bound_and_ranks_pay_their_launch(
        hw: str, timing: str) -> None:
    """P = 1 of the Ridgeline table is the single-device CSR bound (caches credited alike,
    launch floor alike, a CPU call timed alone its first load's latency), on a bundled
    example and on a matrix of one entry; on a GPU, no rank with entries is promised less
    than a launch, and the launch is recorded."""
    import scipy.sparse as sp

    from sparsroof.analysis import analyze
    from sparsroof.matrix.mtx import load

    from ..conftest import DATA

    spec = load_spec(hw)
    one_entry = sp.coo_array(([1.0], ([0], [0])), shape=(1, 1))
    for matrix in (load(DATA / "lap2d_64.mtx"), one_entry):
        a = analyze(matrix, spec, Config(kernel="spmm", widths=(4,), models=("compulsory",),
                                         ranks=(1, 2, 8), dtype="fp32", timing=timing))
        one, *more = a.distributed
        assert one.sol_s == pytest.approx(a.results[0].bound.sol_s, rel=1e-12)
        floor = spec.launch_overhead.value if spec.launch_overhead else 0.0
        assert all(rb.sol_s >= rb.launch_s for rb in more)
        if spec.kind == "gpu":
            assert one.launch_s == floor  # a cold call's floor is the graph floor
        else:  # a CPU call's least time: what one core reads, or a wait for the others
            latency = spec.memory[0].latency
            assert floor <= one.launch_s <= (latency.value if latency else 0.0)


def test_one_rank_of_a_sparse_tensor_unit_is_charged_its_entries_rate() -> None:
    """A 2:4 unit's peak is quoted dense-equivalent; ranks multiply their entries at half
    of it, as the single-device bound does."""
    import numpy as np

    from sparsroof.analysis import analyze

    dense = np.ones((512, 512))
    a = analyze(dense, load_spec("a100"), Config(
        kernel="spmm", widths=(1024,), models=("compulsory",), ranks=(1,), dtype="fp16",
        unit="tensor-sparse"))
    assert a.distributed[0].sol_s == pytest.approx(a.results[0].bound.sol_s, rel=1e-12)
