"""The advisor's answer: one price for blocks and whole matrices, the partitions of the
paper's Table 3, merged neighbours and the block cap."""

from __future__ import annotations

import numpy as np
import pytest

from sparsroof.advisor import advice as advice_module
from sparsroof.advisor.advice import Advice, advise, format_rows, prediction, sol_prices
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import Matrix
from sparsroof.structure.features import measure

from ..conftest import make_matrix

S = 672  # the paper's strip on its Tesla C2050: 14 SMs x 48 warps


def _rows_of(lengths: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the given lengths, each of distinct random columns of n (a random start,
    then gaps of at least 1 summing to less than n)."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(lengths.size), lengths)
    top = max(2, n // max(1, int(lengths.max(initial=1))))
    gaps = rng.integers(1, top, rows.size)
    full = lengths > 0
    first = (np.cumsum(lengths) - lengths)[full]
    gaps[first] = 0  # a row's first entry sits at its random start
    steps = np.cumsum(gaps)
    steps -= np.repeat(steps[first], lengths[full])
    return rows, (np.repeat(rng.integers(0, n, lengths.size), lengths) + steps) % n


def hand_matrix() -> Matrix:
    """43,008 x 43,008: rows 0-21,503 a pentadiagonal band (columns i-2 ... i+2, 107,517
    entries); rows 21,504 on 8 entries each, except one row of 1,000 entries in each of
    the 32 strips of 672 rows (203,776 entries). Every row of the lower half holds the
    column 21,504 + its index there, so that all 43,008 columns of x are read."""
    n, half = 43_008, 21_504
    band = np.repeat(np.arange(half), 5)
    bcol = band + np.tile(np.arange(-2, 3), half)
    keep = bcol >= 0
    lengths = np.full(half, 8)
    lengths[300::S] = 1000
    r, c = _rows_of(lengths - 1, n - 1, 1)
    own = np.arange(half) + half  # each row's own column, then distinct others after it
    rows = np.concatenate([band[keep], np.arange(half) + half, r + half])
    cols = np.concatenate([bcol[keep], own, (own[r] + 1 + c) % n])
    return make_matrix(n, n, rows, cols)


def _advice(m: Matrix, hw: str = "c2050", timing: str = "graph", **kw: object) -> Advice:
    spec = load_spec(hw)
    s = measure(m)
    rows = format_rows(s, spec, timing=timing)
    size, prices, x_bytes = prediction(spec, s, rows, timing=timing)
    return advise(m, prices, size=size, x_bytes=x_bytes, **kw)  # type: ignore[arg-type]


def test_the_hand_case_is_dia_then_csr_in_either_accounting() -> None:
    """By hand, 8-byte values and 4-byte indices; x is 43,008·8 = 344,064 bytes and so is
    y, each block taking its rows' half of both.

    CSR of the whole matrix: 311,293·12 + 43,009·4 = 3,907,552 bytes of A; with x and y
    4,595,680. DIA of the band: 5 diagonals·21,504·8 + 5 offsets·4 = 860,180; CSR of the
    rest: 203,776·12 + 21,505·4 = 2,531,332; with x and y 4,079,640. The figure worked
    without DIA's five 4-byte offsets is 4,079,620; the model reads them, 20 bytes more.

    All from DRAM (timing cold): 4,595,680 / 4,079,640 = 1.1265. With the 768 KiB
    (786,432 bytes) of L2 credited to each answer's working set: 3,809,248 / 3,293,208 =
    1.1567, each at 144 GB/s."""
    m = hand_matrix()
    assert m.stored_entries == 107_517 + 203_776
    for timing, gain in (("graph", 3_809_248 / 3_293_208), ("cold", 4_595_680 / 4_079_640)):
        a = _advice(m, timing=timing)
        assert [(b.first_strip, b.last_strip, b.storage) for b in a.blocks] == [
            (0, 31, "dia"), (32, 63, "csr")]
        assert [b.bytes for b in a.blocks] == [860_180 + 344_064, 2_531_332 + 344_064]
        assert a.bytes_total == 4_079_640
        assert a.best_single == "csr"
        assert a.gain == pytest.approx(gain, rel=1e-9)
        credit = 786_432 if timing == "graph" else 0
        assert a.total_s == pytest.approx((4_079_640 - credit) / 144e9, rel=1e-9)
        assert a.best_single_s == pytest.approx((4_595_680 - credit) / 144e9, rel=1e-9)


def _uniform(lengths: np.ndarray, seed: int) -> Matrix:
    n = lengths.size
    r, c = _rows_of(lengths, n, seed)
    return make_matrix(n, n, r, c)


def _varied(rows: int, rng: np.random.Generator) -> np.ndarray:
    """Row lengths 1 to 8, uniform: ELL pads them to 8, HYB of any width pays more than
    CSR (a block of fewer than 4,096 rows leaves HYB all COO)."""
    return rng.integers(1, 9, rows)


def _shape(name: str) -> tuple[np.ndarray, list[tuple[int, int, set[str]]]]:
    """Row lengths for one of the six partitions of Table 3 of the paper, and that answer
    (strips from 1, inclusive; the formats it allows: ELL/HYB when the two tie)."""
    rng = np.random.default_rng(len(name))
    ell = {"ell", "hyb"}
    if name == "finan512":  # [1, 74] ELL, [75, 112] ELL: two widths, 4 then 8
        return np.repeat([4, 8], [74 * S, 38 * S]), [(1, 74, ell), (75, 112, ell)]
    if name == "nasasrb":  # [1, 1] CSR, [2, 82] ELL: a row of 5,000 in strip 1
        lengths = np.full(82 * S, 4)
        lengths[100] = 5000
        return lengths, [(1, 1, {"csr"}), (2, 82, ell)]
    if name == "hcircuit":  # [1, 28] CSR, [29, 158] ELL/HYB
        return (np.concatenate([_varied(28 * S, rng), np.full(130 * S, 4)]),
                [(1, 28, {"csr"}), (29, 158, ell)])
    if name == "OPF_6000":  # [1, 42] ELL, [43, 45] CSR
        return (np.concatenate([np.full(42 * S, 4), _varied(3 * S, rng)]),
                [(1, 42, ell), (43, 45, {"csr"})])
    if name == "OPF_10000":  # [1, 59] ELL, [60, 66] CSR
        return (np.concatenate([np.full(59 * S, 4), _varied(7 * S, rng)]),
                [(1, 59, ell), (60, 66, {"csr"})])
    assert name == "FEM/Accelerator"  # [1, 32] ELL, [33, 181] ELL/HYB: rows of 8 with
    lengths = np.concatenate([np.full(32 * S, 4), np.full(149 * S, 8)])  # one of 100 a
    lengths[32 * S + 50::S] = 100  # strip, which HYB keeps in COO and ELL would pad to
    return lengths, [(1, 32, ell), (33, 181, {"hyb"})]


@pytest.mark.parametrize("name", ["finan512", "nasasrb", "hcircuit", "OPF_6000", "OPF_10000",
                                  "FEM/Accelerator"])
def test_the_papers_table_3_partitions_are_reached(name: str) -> None:
    lengths, answer = _shape(name)
    m = _uniform(lengths, 7)
    a = _advice(m)
    got = [(b.first_strip + 1, b.last_strip + 1, b.storage) for b in a.blocks]
    assert [(f, last) for f, last, _ in got] == [(f, last) for f, last, _ in answer], got
    assert all(fmt in allowed for (*_, fmt), (*_, allowed) in zip(got, answer, strict=True))
    assert a.gain > 1.0
    assert a.n_strips == answer[-1][1] and not a.capped and a.max_block == a.n_strips


def test_a_run_of_one_format_is_one_block() -> None:
    """42 strips of rows of 4 entries cost in ELL exactly the sum of their pieces on a spec
    without a launch floor: the program may cut them anywhere, the answer joins them."""
    from sparsroof.advisor.partition import partition, strips

    lengths, _ = _shape("OPF_6000")
    m = _uniform(lengths, 7)
    spec = load_spec("c2050")
    s = measure(m)
    size, prices, x_bytes = prediction(spec, s, format_rows(s, spec))
    parts, _ = partition(strips(m, size), prices.at(1e7), 8, 4, 45, x_bytes / m.rows)
    assert len(parts) > 2  # the program's own cuts
    assert len(_advice(m).blocks) == 2


def test_the_block_cap_binds_and_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparsroof.report.formats import formats_report

    lengths, _ = _shape("OPF_6000")
    m = _uniform(lengths, 7)
    monkeypatch.setattr(advice_module, "BLOCK_CAP", 8)
    a = _advice(m)
    assert a.capped and a.max_block == 8
    assert max(b.last_strip - b.first_strip + 1 for b in a.blocks) >= 8  # merged runs
    heading = str(formats_report("m", "c2050", [], a)[1])
    assert "at most 8 strips" in heading and "--max-block 45" in heading
    given = _advice(m, max_block=3)
    assert not given.capped and given.max_block == 3


@pytest.mark.parametrize("hw", ["c2050", "a100"])
@pytest.mark.parametrize("path", ["data/lap2d_64.mtx", "data/random_1000.mtx"])
def test_one_block_costs_the_bound_of_the_whole_matrix(hw: str, path: str) -> None:
    """For the formats whose bytes the bound and the program count alike, the whole matrix
    as one block costs its SoL (same hierarchy, same credit, the launch floor a floor). ELL
    and DIA differ on purpose: the bound counts the bytes any kernel must read, the
    program those the paper's kernels read (ELL's padding, every diagonal's m slots)."""
    from sparsroof.matrix.mtx import load

    m = load(path)
    spec = load_spec(hw)
    s = measure(m)
    rows = {r.storage: r.sol_s for r in format_rows(s, spec)}
    a = _advice(m, hw)
    for f in ("csr", "csc", "coo", "bsr4"):
        assert a.single_s[f] == pytest.approx(rows[f], rel=1e-12), f
    for f in ("ell", "dia"):
        assert a.single_s[f] >= rows[f] * (1 - 1e-12), f


def test_sol_prices_spread_the_hierarchy_over_the_bytes() -> None:
    """On the A100 (40 MiB of L2 at 5.5 TB/s, 2039 GB/s HBM): 1 MB stays in L2; 50 MiB
    sends 10 MiB to HBM, slower than 50 MiB through L2 (the bound's own doctest)."""
    p = sol_prices(load_spec("a100"))
    assert p.at(1e6)["csr"].u * 1e6 == pytest.approx(1e6 / 5.5e12, rel=1e-3)
    w = 50 * 2**20
    assert p.at(w)["ell"].u * w == pytest.approx(9.53e-6, rel=1e-3)
    assert p.at(w)["csr"].floor == load_spec("a100").launch_overhead.value


@pytest.mark.parametrize("hw,rule,rows", [
    ("a100", "108 SMs x 64 warps", 6912),
    ("h200", "132 SMs x 64 warps", 8448),  # the H100 SXM's die and compute capability
    ("mi300x", "mi300x gives no warps per SM: the rows whose CSR fills", None),
])
def test_the_partition_says_how_its_strips_were_sized(hw: str, rule: str,
                                                      rows: int | None) -> None:
    """One full wave of warps on a GPU that gives its SMs and warps per SM; a GPU spec
    without them falls back to the CPU rule, and the heading says so."""
    import json

    from ..conftest import ROOT, sparsroof

    out = sparsroof("formats", "data/lap2d_64.mtx", "--hw", hw, "-O", "json", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    partition = json.loads(out.stdout)["partition"]
    assert partition["strip_rule"].startswith(rule)
    assert rows is None or partition["strip_rows"] == rows
    text = sparsroof("formats", "data/lap2d_64.mtx", "--hw", hw, cwd=ROOT).stdout
    assert f"rows ({rule}" in " ".join(text.split())
