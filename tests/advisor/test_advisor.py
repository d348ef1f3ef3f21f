"""The format advisor's dynamic program against brute force, and its per-strip counts."""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pytest

from sparsroof.advisor.partition import (
    DP_FORMATS,
    CostModel,
    block_price,
    native,
    partition,
    strip_rows,
    strips,
)
from sparsroof.matrix.mtx import Matrix
from sparsroof.model import storage as formats

from ..conftest import ROOT, loaded_by_command, make_matrix, require_native, sparsroof

_ROUTES = ["numpy", *(["native"] if native() is not None else [])]


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
        s = formats.ell(np.bincount(lengths), rows, 8, 4)
    elif fmt == "hyb":  # the block's own width, by the rule for whole matrices
        s = formats.hyb(np.bincount(lengths), rows, 8, 4)
    elif fmt == "dia":
        offsets = np.unique(col - row)  # each diagonal's rows i with 0 <= i + k < cols
        cells = np.minimum(rows, m.cols - offsets) - np.maximum(0, -offsets)
        s = formats.dia(offsets.size, int(cells.sum()), rows, 8, 4)
    else:
        s = formats.bsr(np.unique((row // 4) * m.cols + col // 4).size, rows, 4, 8, 4)
    # the paper's kernels read and multiply every stored slot, ELL's padding included
    mem = model.u * (s.stored_bytes + rows * 8) + model.v * rows + model.w * s.values_stored
    return model.const + max(model.floor, mem, model.z * s.values_stored)


def _skewed(seed: int) -> Matrix:
    """12,288 rows of 2 to 6 entries with a few long rows: blocks of at least 4,096 rows
    give HYB an ELL part (K > 0), smaller ones leave it all COO."""
    rng = np.random.default_rng(seed)
    n = 12_288
    lengths = rng.integers(2, 7, n) + (rng.random(n) < 0.01) * 40
    row = np.repeat(np.arange(n), lengths)
    return make_matrix(n, n, row, rng.integers(0, n, row.size))


def _thread_strips(size: int, times: int) -> dict[str, int]:
    """Strips of ``times`` grid strips for the formats of one thread per row (ELL, HYB
    and DIA), which the program can be asked to keep whole."""
    return {f: size * times if f in ("ell", "hyb", "dia") else size for f in DP_FORMATS}


@pytest.mark.parametrize("matrix, size, times", [
    (_mixed(0), 32, 1), (_mixed(1), 32, 1), (_mixed(1), 32, 2), (_mixed(0), 32, 3),
    (_skewed(2), 2048, 1), (_skewed(2), 2048, 2)])
def test_dp_equals_brute_force(matrix: Matrix, size: int, times: int) -> None:
    m = matrix  # 8 or 6 strips: 2^7 = 128 or 2^5 = 32 partitions
    model = CostModel(const=2e-6, u=1e-10, v=1e-9, w=5e-10, z=1e-10, floor=1e-8)
    models = {f: model for f in DP_FORMATS}
    strip_of = _thread_strips(size, times)
    st = strips(m, size, block=4)
    n = st.rows.size

    def allowed(f: str, a: int, b: int) -> bool:  # whole strips of f, or the last block
        return (b - a) % (strip_of[f] // size) == 0 or b == n

    best = np.inf
    for cuts in itertools.product([False, True], repeat=n - 1):
        edges = [0, *[i + 1 for i, c in enumerate(cuts) if c], n]
        total = sum(min(_block_seconds(m, a * size, min(b * size, m.rows), model, f)
                        for f in models if allowed(f, a, b))
                    for a, b in itertools.pairwise(edges))
        best = min(best, total)
    parts, total = partition(st, models, 8, 4, max_block=n, strip_of=strip_of)
    assert partition(st, models, 8, 4, max_block=n, strip_of=strip_of,
                     route="numba") == (parts, total)  # numba, where the C build is used
    assert total == pytest.approx(best, rel=1e-12)
    assert parts[0][0] == 0 and parts[-1][1] == n - 1
    for (_, last), (first, _) in itertools.pairwise([(p[0], p[1]) for p in parts]):
        assert first == last + 1
    # the blocks' own times add up to the total, and each block is allowed its format
    assert sum(p[3] for p in parts) == pytest.approx(total)
    assert all(allowed(f, a, b + 1) for a, b, f, _ in parts)
    # the Python pricing of one block, which prices answers outside the program, agrees
    for first, last, fmt, seconds in parts:
        assert block_price(st, first, last, fmt, model, 8, 4)[0] == pytest.approx(seconds,
                                                                                  rel=1e-12)
    for f in DP_FORMATS:  # and on blocks that do not start at the first strip
        one = partition(st, {f: model}, 8, 4, max_block=2)[0]
        assert [block_price(st, a, b, f, model, 8, 4)[0] for a, b, _, _ in one] == \
            pytest.approx([t for *_, t in one], rel=1e-12)
    # HYB alone, block by block, against the formats module (its width chosen per block)
    hyb = {"hyb": model}
    for first, last, fmt, seconds in partition(st, hyb, 8, 4, max_block=n)[0]:
        assert seconds == pytest.approx(_block_seconds(
            m, first * size, min((last + 1) * size, m.rows), model, fmt), rel=1e-12)


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
    # strip 0 holds its 3 diagonals first (gap s + 1 = 1), strip 1 the same 3 again (gap 1)
    for route in _ROUTES:
        st = strips(make_matrix(4, 4, r, c), 2, block=2, route=route)
        assert st.nnz.tolist() == [5, 5]
        assert st.max_len.tolist() == [3, 3]
        assert st.diagonals().tolist() == [3, 3]
        assert st.blocks.tolist() == [2, 2]  # 2x2 blocks (0,0),(0,1) and (1,0),(1,1)
        assert st.diag_ptr.tolist() == [0, 1, 2]
        assert st.diag_gap.tolist() == [1, 1] and st.diag_cnt.tolist() == [3, 3]
        assert st.len_val.tolist() == [2, 3, 2, 3] and st.len_cnt.tolist() == [1, 1, 1, 1]


def test_diagonal_gaps_by_hand() -> None:
    # 6 x 6, strips of 2 rows: diagonal 0 in strips 0 and 2 (gaps 1, then 2), diagonal 2
    # in strip 0 only (gap 1), diagonal -3 first in strip 1 (gap 2) then in strip 2 (gap 1)
    r = np.array([0, 0, 3, 4, 5])
    c = np.array([0, 2, 0, 4, 2])
    for route in _ROUTES:
        st = strips(make_matrix(6, 6, r, c), 2, route=route)
        assert st.diag_ptr.tolist() == [0, 1, 2, 4]
        assert st.diag_gap.tolist() == [1, 2, 1, 2] and st.diag_cnt.tolist() == [2, 1, 1, 1]
        assert st.diagonals().tolist() == [2, 1, 2]


def test_strip_keys_do_not_overflow_int32_indices() -> None:
    # 400,000 x 400,000 with int32 indices: (row // 4)·(cols // 4 + 1) passes 2^31
    n = 400_000
    m = make_matrix(n, n, [0, n - 1], [0, n - 1])
    assert m.row.dtype == m.col.dtype == np.int32
    for route in _ROUTES:
        st = strips(m, 200_000, block=4, route=route)
        assert st.blocks.tolist() == [1, 1]
        assert st.diagonals().tolist() == [1, 1]


def test_a_calibrated_partition_pays_the_core_costs_too() -> None:
    # only CSR calibrated, with x-line misses dear: the partition can do no better than CSR
    # for the whole matrix, so its gain must be 1 (it would look cheaper if the blocks
    # were charged without the misses the whole-matrix prediction includes)
    from sparsroof.advisor.advice import advise, format_rows, prediction
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
    size, prices, x_bytes = prediction(spec, s, rows, cal)
    advice = advise(m, prices, size=size, x_bytes=x_bytes)
    assert advice.gain == pytest.approx(1.0, rel=1e-6)
    assert advice.best_single_s == pytest.approx(next(r.calibrated_s for r in rows
                                                      if r.storage == "csr"), rel=1e-12)


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


def test_a_hyb_block_by_hand() -> None:
    """6,000 rows of 2 entries (the diagonal and the next column), row 0 with 10 more, in
    strips of 3,000 rows, at 1 GB/s. As one block, at least max(4096, 6000/3) = 4,096
    rows have 2 or more entries and only 1 has 3: HYB's ELL width is 2, and the 10 entries
    beyond it are COO: A = 6000·2·(8+4) + 10·(8+4+4) = 144,160 bytes, y = 6000·8 = 48,000,
    192.16 us. A strip alone has 3,000 < 4,096 rows: HYB of width 0 is all COO. Strip 0
    is best in COO (6,010 entries: 96,160 + 24,000 bytes; its ELL pads every row to 12),
    strip 1 in ELL of width 2 (3000·2·12 + 24,000 = 96,000 bytes): 216.16 us in all, more
    than the one HYB block. COO for the whole matrix: 12,010·16 + 48,000 = 240,160 bytes;
    ELL: 6000·12·12 + 48,000 = 912,000. So the partition keeps one HYB block, 192.16 us."""
    from sparsroof.advisor.partition import sol_models
    from sparsroof.hardware.library import load_spec

    n = 6000
    r = np.concatenate([np.arange(n), np.arange(n), np.zeros(10, int)])
    c = np.concatenate([np.arange(n), (np.arange(n) + 1) % n, np.arange(2, 12)])
    m = make_matrix(n, n, r, c)
    models = sol_models(load_spec("epyc-7763"), 1e9, "fp64", 0)
    pick = {f: models[f] for f in ("coo", "ell", "hyb")}
    st = strips(m, 3000)
    parts, total = partition(st, pick, 8, 4, max_block=2)
    assert [(a, b, f) for a, b, f, _ in parts] == [(0, 1, "hyb")]
    assert total == pytest.approx(192.16e-6, rel=1e-3)
    # the whole-matrix HYB of the formats module stores the same bytes
    assert formats.hyb(np.bincount(np.bincount(r, minlength=n)), n, 8, 4).stored_bytes \
        == 144_160
    one, apart = partition(st, pick, 8, 4, max_block=1)
    assert [f for _, _, f, _ in one] == ["coo", "ell"]
    assert apart == pytest.approx(216.16e-6, rel=1e-3)


def test_one_calibrated_block_costs_what_the_whole_matrix_does() -> None:
    # CSR's fit charges 1 ps per byte, DIA's 10 ps: x (4,096 columns, 32,768 bytes) costs
    # 32.8 ns in CSR and 328 ns in DIA. A partition of one block in a format must cost the
    # whole-matrix prediction in it, x included at that format's rate; charging x at CSR's
    # rate made a one-block DIA partition look 295 ns faster than DIA itself
    from sparsroof.advisor.advice import advise, format_rows, prediction
    from sparsroof.hardware.library import load_spec
    from sparsroof.host.calibration import Calibration, FormatFit
    from sparsroof.matrix.mtx import load
    from sparsroof.structure.features import measure

    fits = {f: FormatFit({"constant": 1e-6, "rows": 1e-9, "slots": 1e-9, "bytes@DRAM": u},
                         1, 0.0, 0.0) for f, u in (("csr", 1e-12), ("dia", 1e-11))}
    cal = Calibration("t", "t", "fp64", (("L1", 1.0), ("DRAM", None)), {}, fits)
    m = load("data/lap2d_64.mtx")
    s = measure(m)
    spec = load_spec("epyc-7763")
    rows = format_rows(s, spec, cal.predict_matrix(m, s, ["csr", "dia"]))
    size, prices, x_bytes = prediction(spec, s, rows, cal)
    assert x_bytes == 4096 * 8
    st = strips(m, size)
    assert st.rows.size == 1  # lap2d_64's 4,096 rows fit one strip: one block
    advice = advise(m, prices, size=size, x_bytes=x_bytes)
    predicted = {r.storage: r.calibrated_s for r in rows if r.calibrated_s is not None}
    assert advice.single_s == pytest.approx(predicted, rel=1e-12)
    assert advice.gain == 1.0  # one strip: the partition is the best single format
    # a bare program at the prices of the whole matrix's working set, without the core's
    # residual, falls short of the whole-matrix prediction by that residual
    for f in ("csr", "dia"):
        w = next(r.bytes_total for r in rows if r.storage == f)
        _, bare = partition(st, {f: prices.at(w)[f]}, 8, 4, x_per_row=x_bytes / m.rows)
        assert bare <= predicted[f] * (1 + 1e-12)


def test_the_strip_is_the_papers_s_csr() -> None:
    """The paper's strip for its Tesla C2050 (section 4): S_CSR = 14 SMs x 48 warps = 672
    rows; on a CPU, a multiple of 32 rows."""
    from sparsroof.hardware.library import load_spec

    assert strip_rows(load_spec("c2050"), 100.0) == 672
    assert strip_rows(load_spec("epyc-7763"), 100.0) % 32 == 0


def test_whole_ell_strips_change_the_partition_by_hand() -> None:
    """96 rows in three strips of 32, at 1 GB/s (u = 1 ns per byte, nothing else charged),
    CSR against ELL, 8-byte values, 4-byte indices, y = 32·8 = 256 bytes a strip:

    strip A (rows 0-31) and C (64-95): 4 entries a row. ELL 32·4·12 + 256 = 1,792 bytes;
    CSR 128·12 + 33·4 + 256 = 1,924. Strip B (32-63): row 32 holds 40 entries, the others 1
    (71 in all). CSR 71·12 + 33·4 + 256 = 1,240; ELL pads every row to 40: 15,616.
    CSR of A and B as one block: 199·12 + 65·4 + 512 = 3,160 (4 bytes less than apart).

    With one strip size, ELL A + CSR B + ELL C = 1,792 + 1,240 + 1,792 = 4,824 bytes.
    With ELL strips of 64 rows, an ELL block spans 2 strips or ends the matrix: A alone
    cannot be ELL (any ELL block of 2 strips holds B), so the best is CSR of A and B in one
    block, then ELL of C, which ends the matrix: 3,160 + 1,792 = 4,952 bytes (CSR of A, B
    apart and ELL of C: 4,956; CSR throughout: 327·12 + 97·4 + 768 = 5,080)."""
    n = 96
    quad = np.arange(32)
    r = np.concatenate([np.repeat(quad, 4), np.full(40, 32), np.arange(33, 64),
                        np.repeat(quad + 64, 4)])
    four = np.tile(np.arange(4), 32)
    c = np.concatenate([np.repeat(quad, 4) + four, np.arange(40), np.arange(33, 64),
                        (np.repeat(quad + 64, 4) + four) % n])
    m = make_matrix(n, n, r, c)
    st = strips(m, 32)
    assert st.nnz.tolist() == [128, 71, 128] and st.max_len.tolist() == [4, 40, 4]
    gbps = CostModel(0.0, 1e-9, 0.0, 0.0, 0.0)
    models = {"csr": gbps, "ell": gbps}
    parts, total = partition(st, models, 8, 4)
    assert [(a, b, f) for a, b, f, _ in parts] == [(0, 0, "ell"), (1, 1, "csr"), (2, 2, "ell")]
    assert total == pytest.approx(4_824e-9, rel=1e-12)
    parts, total = partition(st, models, 8, 4, strip_of={"csr": 32, "ell": 64})
    assert [(a, b, f) for a, b, f, _ in parts] == [(0, 1, "csr"), (2, 2, "ell")]
    assert [t for *_, t in parts] == pytest.approx([3_160e-9, 1_792e-9], rel=1e-12)
    assert total == pytest.approx(4_952e-9, rel=1e-12)
    # ELL strips of 96 rows: only the whole matrix, or a block ending it, may be ELL
    parts, _ = partition(st, models, 8, 4, strip_of={"csr": 32, "ell": 96})
    assert [(a, b, f) for a, b, f, _ in parts] == [(0, 1, "csr"), (2, 2, "ell")]
    with pytest.raises(ValueError, match="whole number"):
        partition(st, models, 8, 4, strip_of={"csr": 32, "ell": 48})


def _skip_without_native() -> None:
    require_native(native(), "sparsroof.advisor._native")


def test_native_route_is_built_and_used() -> None:
    _skip_without_native()
    m = _mixed(0)
    assert strips(m, 32).diag_gap.tolist() == strips(m, 32, route="native").diag_gap.tolist()
    with pytest.raises(ValueError, match="unknown route"):
        strips(m, 32, route="fortran")


def _shuffled(m: Matrix, seed: int) -> Matrix:
    """The same entries in no order (the C pass then groups them by row itself)."""
    order = np.random.default_rng(seed).permutation(m.row.size)
    return dataclasses.replace(m, row=m.row[order], col=m.col[order],
                               values=None if m.values is None else m.values[order])


def _routes_agree(m: Matrix, size: int, block: int = 4) -> None:
    """The C and numpy/numba routes give the same counts, and the same partitions and
    seconds to the last bit, under several cost models, strips per format and limits."""
    a, b = strips(m, size, block, route="numpy"), strips(m, size, block, route="native")
    for name in ("rows", "nnz", "max_len", "diag_ptr", "diag_gap", "diag_cnt", "blocks",
                 "len_ptr", "len_val", "len_cnt"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    rng = np.random.default_rng(size)
    n = a.rows.size
    cases = [{f: CostModel(2e-6, 1e-10, 1e-9, 5e-10, 1e-10) for f in DP_FORMATS},
             {f: CostModel(*rng.random(5) * [1e-6, 1e-10, 1e-9, 1e-9, 1e-9]) for f in DP_FORMATS},
             {f: CostModel(0.0, 1e-9, 0.0, 0.0, 0.0) for f in ("dia", "hyb", "csr")},
             {f: CostModel(0.0, 1e-10, 0.0, 0.0, 1e-11, 3e-7) for f in DP_FORMATS}]
    for models in cases:
        for times, max_block, x in ((1, 64, 0.0), (2, 3, 8.0), (3, n, 2.5)):
            strip_of = _thread_strips(size, times)
            got = [partition(st, models, 8, 4, max_block, x, strip_of, route=route)
                   for st, route in ((a, "numba"), (b, "native"))]
            assert got[0] == got[1]


@pytest.mark.parametrize("m, size", [(_mixed(0), 32), (_mixed(1), 8), (_skewed(2), 2048),
                                     (_skewed(3), 512)])
def test_native_and_numba_routes_agree(m: Matrix, size: int) -> None:
    _skip_without_native()
    _routes_agree(m, size)
    _routes_agree(_shuffled(m, size), size)


def test_routes_agree_on_bundled_and_odd_matrices() -> None:
    from sparsroof.matrix.mtx import load

    _skip_without_native()
    for path in ("data/lap2d_64.mtx", "data/random_1000.mtx"):
        m = load(path)
        for size in (32, 96, 1000):
            _routes_agree(m, size)
    _routes_agree(make_matrix(5, 300, [0, 4, 4], [299, 0, 150]), 2, block=8)  # wide
    _routes_agree(make_matrix(300, 3, [0, 299, 150], [2, 0, 1]), 7, block=2)  # tall
    _routes_agree(make_matrix(40, 40, [], []), 16)  # no entries
    with pytest.raises(ValueError, match="outside"):
        m = make_matrix(4, 4, [0, 3], [0, 3])
        strips(dataclasses.replace(m, col=np.array([0, 4], m.col.dtype)), 2, route="native")


def test_formats_loads_no_numba_where_the_c_build_is() -> None:
    """numba's start-up (about a second per process) is paid only where the C build of the
    advisor's and the structure's passes is missing."""

    from sparsroof.structure.counts import native as structure_native

    _skip_without_native()
    if structure_native() is None:
        pytest.skip("sparsroof.structure._native was not built")
    loaded, stdout, _ = loaded_by_command(
        ["formats", "data/random_1000.mtx", "--hw", "a100", "--no-cache"], ["numba"], ROOT)
    assert loaded == []
    assert "partition into blocks" in stdout
    # the strip size, its rule, and how many strips this matrix has of it
    assert re.search(r"strips of [\d,]+ rows \(108 SMs x 64 warps; \d+ strips? here",
                     " ".join(stdout.split())), stdout


@pytest.mark.parametrize("shape", ["0 0 0", "3 4 0"])
def test_formats_of_a_matrix_without_entries(tmp_path, shape: str) -> None:  # type: ignore[no-untyped-def]
    """No entries: every format stores only its pointers, and the partition is one block."""
    import json

    path = tmp_path / "empty.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n{shape}\n")
    result = sparsroof("formats", str(path), "--hw", "a100", "-O", "json", "--no-cache", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    rows = int(shape.split()[0])
    bsr = next(r for r in doc["formats"] if r["storage"] == "bsr4")
    assert bsr["bytes_total"] == ((rows + 3) // 4 + 1) * 4 + rows * 8  # pointers and y
    assert [b["storage"] for b in doc["partition"]["blocks"]] == [doc["partition"]["best_single"]]
    # the grid is S_CSR = 108 SMs x 64 warps, for every format
    assert doc["partition"]["strip_rows"] == 6912
