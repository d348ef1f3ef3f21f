"""The format advisor's dynamic program against brute force, and its per-strip counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sparsroof.advisor.partition import CostModel, Strips, native, partition, strips
from sparsroof.matrix.mtx import Matrix
from sparsroof.model import storage as formats

from .conftest import DATA, make_matrix


def _mixed(seed: int) -> Matrix:
    """Strips of different character: banded rows, then long random rows, then a diagonal."""
    rng = np.random.default_rng(seed)
    n = 256
    r1 = np.repeat(np.arange(96), 3)
    c1 = r1 + np.tile([-1, 0, 1], 96)
    r2 = rng.integers(96, 192, 1500)
    c2 = rng.integers(0, n, 1500)
    r3 = np.arange(192, n)
    keep = (c1 >= 0) & (c1 < n)
    # repeated random coordinates become one entry
    return make_matrix(n, n, np.concatenate([r1[keep], r2, r3]),
                       np.concatenate([c1[keep], c2, r3]))


def _block_seconds(m: Matrix, lo: int, hi: int, model: CostModel, fmt: str) -> float:
    """One block's time from the formats module on the block's own rows."""
    sel = (m.row >= lo) & (m.row < hi)
    row, col, rows = m.row[sel] - lo, m.col[sel], hi - lo
    nnz = int(sel.sum())
    lengths = np.bincount(row, minlength=rows)
    if fmt == "csr":
        s = formats.csr(nnz, rows, 8, 4)
    elif fmt == "csc":
        s = formats.csc(nnz, m.cols, 8, 4)
    elif fmt == "coo":
        s = formats.coo(nnz, 8, 4)
    elif fmt == "ell":
        s = formats.ell(rows, int(lengths.max()), 8, 4)
    elif fmt == "dia":
        s = formats.dia(np.unique(col - row).size, rows, 8, 4)
    else:
        s = formats.bsr(np.unique((row // 4) * m.cols + col // 4).size, rows, 4, 8, 4)
    mem = model.u * (s.bytes + rows * 8) + model.v * rows + model.w * s.executed_entries
    return model.const + max(mem, model.z * s.executed_entries)


@pytest.mark.parametrize("seed", [0, 1])
def test_dp_equals_brute_force(seed: int) -> None:
    m = _mixed(seed)
    size = 32  # 8 strips: 2^7 = 128 partitions
    model = CostModel(const=2e-6, u=1e-10, v=1e-9, w=5e-10, z=1e-10)
    models = {f: model for f in ("csr", "csc", "coo", "ell", "dia", "bsr")}
    st = strips(m, size, block=4)
    n = st.rows.size
    best = np.inf
    for cuts in itertools.product([False, True], repeat=n - 1):
        edges = [0, *[i + 1 for i, c in enumerate(cuts) if c], n]
        total = sum(min(_block_seconds(m, a * size, min(b * size, m.rows), model, f)
                        for f in models) for a, b in itertools.pairwise(edges))
        best = min(best, total)
    parts, total = partition(st, models, 8, 4, max_block=n)
    assert total == pytest.approx(best, rel=1e-12)
    assert parts[0][0] == 0 and parts[-1][1] == n - 1
    for (_, last), (first, _) in itertools.pairwise([(p[0], p[1]) for p in parts]):
        assert first == last + 1
    # the blocks' own times add up to the total
    assert sum(p[3] for p in parts) == pytest.approx(total)


@pytest.mark.skipif(native() is None, reason="the C build of the dynamic program is missing")
@pytest.mark.parametrize("seed, size, max_block", [(0, 32, 64), (1, 32, 3), (2, 8, 64),
                                                   (3, 64, 1), (4, 16, 5)])
def test_routes_give_the_same_partition_to_the_bit(seed: int, size: int,
                                                   max_block: int) -> None:
    from sparsroof.advisor.partition import sol_models
    from sparsroof.hardware.library import load_spec

    m = _mixed(seed)
    st = strips(m, size, block=4)
    rng = np.random.default_rng(seed)
    # SoL models of two specs, and cost rows of every term at random scales
    for models in (sol_models(load_spec("a100"), 1.5e12, "fp64", 1),
                   sol_models(load_spec("epyc-7763"), 2e11, "fp64", 0),
                   {f: CostModel(*(rng.random(5) * [1e-9, 1e-10, 1e-9, 1e-9, 1e-10]))
                    for f in ("csr", "csc", "coo", "ell", "dia", "bsr")}):
        native_route = partition(st, models, 8, 4, max_block, route="native")
        numba_route = partition(st, models, 8, 4, max_block, route="numba")
        assert native_route == numba_route  # floats compared exactly


def _same_strips(a: Strips, b: Strips) -> None:
    for name in ("size", "block", "cols"):
        assert getattr(a, name) == getattr(b, name)
    for name in ("rows", "nnz", "max_len", "diag_ptr", "blocks"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype == np.int64 and np.array_equal(x, y), name
    for lo, hi in itertools.pairwise(a.diag_ptr):  # each strip's diagonals, in any order
        assert sorted(a.diag_off[lo:hi]) == sorted(b.diag_off[lo:hi])


@pytest.mark.skipif(native() is None, reason="the C build of the advisor is missing")
@pytest.mark.parametrize("size, block", [(1, 2), (3, 4), (8, 4), (32, 4), (50, 8), (1000, 4)])
def test_strip_routes_agree(size: int, block: int) -> None:
    rng = np.random.default_rng(size)
    shuffled = _mixed(1)
    order = rng.permutation(shuffled.stored_entries)  # entries out of row order
    shuffled = make_matrix(shuffled.rows, shuffled.cols, shuffled.row[order],
                           shuffled.col[order])
    wide = make_matrix(40, 7000, rng.integers(0, 40, 900), rng.integers(0, 7000, 900))
    for m in (_mixed(0), shuffled, wide, make_matrix(5, 5, [], []),
              make_matrix(0, 3, [], [])):
        _same_strips(strips(m, size, block, route="native"),
                     strips(m, size, block, route="numba"))
    unordered = Matrix("u", "", 4, 4, np.array([3, 0, 2, 0]), np.array([0, 1, 3, 0]), None,
                       _mixed(0).header)
    _same_strips(strips(unordered, 2, 2, route="native"), strips(unordered, 2, 2, route="numba"))


@pytest.mark.skipif(native() is None, reason="the C build of the dynamic program is missing")
def test_routes_agree_on_the_bundled_matrices() -> None:
    from sparsroof.advisor.partition import advise, format_rows, prediction_models
    from sparsroof.hardware.library import load_spec
    from sparsroof.matrix.mtx import load
    from sparsroof.structure.features import measure

    for path in sorted(DATA.glob("*.mtx")):
        m = load(path)
        s = measure(m)
        for name in ("a100", "epyc-7763"):
            spec = load_spec(name)
            rows = format_rows(s, spec)
            size, models, single, _ = prediction_models(spec, s, rows)
            st = strips(m, max(8, size // 64), block=4)
            _same_strips(st, strips(m, max(8, size // 64), block=4, route="numba"))
            assert (partition(st, models, 8, 4, route="native")
                    == partition(st, models, 8, 4, route="numba"))
            assert advise(m, spec, models, single, size=size).blocks


def test_bounded_blocks_never_beat_unbounded() -> None:
    m = _mixed(3)
    models = {f: CostModel(1e-6, 1e-10, 1e-9, 0.0, 0.0) for f in ("csr", "ell", "dia")}
    st = strips(m, 32)
    _, free = partition(st, models, 8, 4, max_block=st.rows.size)
    parts, bounded = partition(st, models, 8, 4, max_block=2)
    assert bounded >= free - 1e-15
    assert all(p[1] - p[0] + 1 <= 2 for p in parts)


def test_strip_counts_by_hand() -> None:
    # 4 x 4 tridiagonal, strips of 2 rows: rows 0-1 hold 2 + 3 entries on diagonals
    # {0, 1} and {-1, 0, 1}; rows 2-3 hold 3 + 2 on {-1, 0, 1} and {-1, 0}
    r = np.array([0, 0, 1, 1, 1, 2, 2, 2, 3, 3])
    c = np.array([0, 1, 0, 1, 2, 1, 2, 3, 2, 3])
    st = strips(make_matrix(4, 4, r, c), 2, block=2)
    assert st.nnz.tolist() == [5, 5]
    assert st.max_len.tolist() == [3, 3]
    assert np.diff(st.diag_ptr).tolist() == [3, 3]
    assert st.blocks.tolist() == [2, 2]  # 2x2 blocks (0,0),(0,1) and (1,0),(1,1)


def test_strip_keys_do_not_overflow_int32_indices() -> None:
    # 400,000 x 400,000 with int32 indices: (row // 4)·(cols // 4 + 1) passes 2^31
    n = 400_000
    m = make_matrix(n, n, [0, n - 1], [0, n - 1])
    assert m.row.dtype == m.col.dtype == np.int32
    st = strips(m, 200_000, block=4)
    assert st.blocks.tolist() == [1, 1]
    assert np.diff(st.diag_ptr).tolist() == [1, 1]


def test_a_calibrated_partition_pays_the_core_costs_too() -> None:
    # only CSR calibrated, with x-line misses dear: the partition can do no better than CSR
    # for the whole matrix, so its gain must be 1 (it would look cheaper if the blocks
    # were charged without the misses the whole-matrix prediction includes)
    from sparsroof.advisor.partition import advise, format_rows, prediction_models
    from sparsroof.hardware.library import load_spec
    from sparsroof.host.calibration import Calibration, FormatFit
    from sparsroof.host.sweep import generate
    from sparsroof.structure.features import measure

    fit = FormatFit({"constant": 1e-6, "rows": 1e-9, "slots": 1e-9, "bytes@DRAM": 1e-11,
                     "misses@L1": 5e-9}, 1, 0.0, 0.0)
    cal = Calibration("t", "t", "fp64", (("L1", 1024.0), ("DRAM", None)), {}, {"csr": fit})
    m = generate("random", 4000, 8)
    s = measure(m)
    spec = load_spec("epyc-7763")
    rows = format_rows(s, spec, cal.predict_matrix(m, s, ["csr"]))
    assert cal.counts(m).misses["L1"] > 0.5 * m.stored_entries  # the misses dominate
    size, models, single, x_s = prediction_models(spec, s, rows, cal)
    advice = advise(m, spec, models, single, size=size, x_seconds=x_s)
    assert advice.gain == pytest.approx(1.0, rel=1e-6)


def test_a_sol_block_is_charged_y_once_by_hand() -> None:
    """Rows 0-31 of a 64 x 64 tridiagonal matrix, as one DIA block, at 1 GB/s: 3 diagonals
    of 32 slots, 8-byte values and a 4-byte offset each, A = 3·32·8 + 3·4 = 780 bytes, plus
    y = 32·8 = 256 bytes written once: 1,036 bytes, 1.036 us (the compute term, 2·96 FLOPs
    at the fp64 peak, is far smaller, and the CPU spec charges no launch)."""
    from sparsroof.advisor.partition import sol_models
    from sparsroof.hardware.library import load_spec

    n = 64
    r = np.concatenate([np.arange(n), np.arange(1, n), np.arange(n - 1)])
    c = np.concatenate([np.arange(n), np.arange(n - 1), np.arange(1, n)])
    m = make_matrix(n, n, r, c)
    models = sol_models(load_spec("epyc-7763"), 1e9, "fp64", 0)
    parts, _ = partition(strips(m, 32), {"dia": models["dia"]}, 8, 4, max_block=1)
    first, last, fmt, seconds = parts[0]
    assert (first, last, fmt) == (0, 0, "dia")
    assert seconds == pytest.approx(1.036e-6, rel=1e-3)
