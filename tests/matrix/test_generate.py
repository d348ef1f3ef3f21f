from __future__ import annotations

import numpy as np
import pytest

from sparsroof.errors import OptionError
from sparsroof.matrix import generate as gen
from sparsroof.matrix.mtx import load
from sparsroof.structure.powerlaw import fit_power_law

from ..conftest import ROOT, sparsroof


@pytest.mark.parametrize("kind, kwargs", [
    ("random", {"rows": 50, "cols": 40, "nnz": 300}),
    ("banded", {"n": 60, "halfwidth": 3, "fill": 0.5}),
    ("block", {"block_rows": 20, "block": 4, "fill": 0.7}),
    ("powerlaw", {"n": 500, "alpha": 2.5}),
    ("nm", {"rows": 8, "cols": 16}),
    ("block-pruned", {"rows": 32, "cols": 32}),
    ("pruned", {"rows": 30, "cols": 40}),
])
def test_same_seed_same_matrix_other_seed_other_matrix(kind: str, kwargs: dict) -> None:
    fn = gen.GENERATORS[kind][0]
    a, b, c = fn(**kwargs, seed=3), fn(**kwargs, seed=3), fn(**kwargs, seed=4)
    assert np.array_equal(a.row, b.row) and np.array_equal(a.col, b.col)
    assert np.array_equal(a.values, b.values)
    assert not (np.array_equal(a.row, c.row) and np.array_equal(a.col, c.col))
    assert a.row.min() >= 0 and a.row.max() < a.rows and a.col.max() < a.cols
    # the size check before drawing counts at least what is drawn, and every line
    entries, scratch, lines = gen.drawn_entries(kind, kwargs)
    # magnitude pruning keeps about its share (a threshold from a sample), within the
    # chunk of scores it charges beside them
    assert a.nnz <= entries + (scratch if kind == "pruned" else 0)
    assert lines == a.rows + a.cols
    if kind == "nm":  # the count said is the entries drawn, exactly
        assert a.nnz == entries
    keys = a.row.astype(np.int64) * a.cols + a.col
    assert np.unique(keys).size == keys.size  # no duplicate entries


def test_structures_hold_what_they_promise() -> None:
    g = gen.banded(100, 4, fill=1.0)
    # full band: 100 diagonal + 2 x (99 + 98 + 97 + 96) off-diagonal cells
    assert g.nnz == 100 + 2 * (99 + 98 + 97 + 96)
    g = gen.nm(16, 64, 2, 8, seed=1)
    per_group = np.bincount(g.row.astype(np.int64) * 8 + g.col // 8)
    assert per_group.tolist() == [2] * (16 * 8)
    g = gen.block_pruned(64, 64, block=8, sparsity=0.75, seed=1)
    blocks = np.unique((g.row // 8) * 8 + g.col // 8, return_counts=True)[1]
    assert blocks.size == 16 and set(blocks.tolist()) == {64}  # 16 of 64 full 8x8 blocks
    g = gen.stencil_3d(4)
    # 64 points, each 6 minus one per face it touches: 64·6 - 6·16 neighbours + 64 diagonal
    assert g.nnz == 64 + 64 * 6 - 6 * 16
    g = gen.magnitude_pruned(200, 300, sparsity=0.8, seed=1)
    assert abs(g.nnz / 60000 - 0.2) < 0.01


@pytest.mark.parametrize("alpha", [2.1, 2.5, 3.0])
def test_power_law_fit_recovers_alpha(alpha: float) -> None:
    g = gen.power_law(30000, alpha, mean_degree=10, seed=5)
    assert g.nnz >= 100_000
    fit = fit_power_law(np.bincount(np.bincount(g.col, minlength=g.cols)))
    assert fit is not None and abs(fit.alpha - alpha) <= 0.2


def test_bad_parameters_are_option_errors() -> None:
    with pytest.raises(OptionError, match="divisible by m"):
        gen.nm(4, 10, 2, 4)
    with pytest.raises(OptionError, match="sparsity"):
        gen.magnitude_pruned(4, 4, sparsity=1.5)


def test_generate_cli_writes_a_loadable_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "w.mtx"
    out = sparsroof("generate", "block-pruned", "--rows", "64", "--cols", "128", "--block", "8",
                    "--sparsity", "0.5", "--seed", "2", "-o", str(path), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and "4,096 entries" in out.stderr  # 64 of 128 blocks of 64
    m = load(path)
    assert (m.rows, m.cols, m.stored_entries) == (64, 128, 4096)
    bad = sparsroof("generate", "nm", "--rows", "4", "--cols", "10", "-o", str(path), cwd=ROOT)
    assert bad.returncode == 2 and bad.stderr.startswith("sparsroof: error:")


def test_shuffle_scrambles_the_numbering_and_rcm_undoes_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A shuffled 2-D Laplacian keeps its entries and its symmetry, loses its band (a
    random numbering spreads entries over the whole matrix), and reverse Cuthill-McKee
    brings the bandwidth back to the grid side."""
    from sparsroof.structure.features import measure
    from sparsroof.structure.reorder import reorder

    out = tmp_path / "s.mtx"
    done = sparsroof("generate", "stencil2d", "--n", "60", "--shuffle", "--seed", "3", "-o",
                     str(out), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    plain = gen.stencil_2d(60)
    m = load(out)
    assert m.stored_entries == plain.nnz
    s = measure(m)
    assert s.bandwidth > 1000 and s.pattern_symmetry == 1.0
    assert measure(reorder(m, "rcm").matrix).bandwidth <= 60
    again = gen.shuffled(plain, 3)
    assert np.array_equal(np.sort(again.row * 3600 + again.col),
                          np.sort(m.row.astype(np.int64) * 3600 + m.col))


def test_generate_into_a_missing_folder_fails_before_it_works(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The writer of the parser says nothing when it cannot open its file: the command
    checks the folder first, and a write that fails raises, so it never reports a file it
    did not write."""
    target = tmp_path / "no" / "such" / "m.mtx"
    out = sparsroof("generate", "banded", "--n", "100", "--halfwidth", "3", "-o", str(target),
                    cwd=ROOT)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "cannot write: no directory" in out.stderr and "wrote" not in out.stderr
    assert not target.exists()
    with pytest.raises(OptionError, match="m.mtx: cannot write: No such file"):
        gen.write(gen.GENERATORS["banded"][0](n=10, halfwidth=1), target)


def test_a_sparsity_written_as_a_percentage_says_how_to_write_it() -> None:
    with pytest.raises(OptionError, match=r"got 90 \(for 90 %, write 0.9\)") as err:
        gen.GENERATORS["pruned"][0](rows=10, cols=10, sparsity=90.0)
    assert str(err.value).startswith("sparsity must")  # the API names its parameter
    out = sparsroof("generate", "pruned", "--rows", "10", "--cols", "10", "--sparsity", "90",
                    "-o", "unused.mtx", cwd=ROOT)  # the command line, its option
    assert out.returncode == 2 and "error: --sparsity must lie between 0 and 1" in out.stderr
    with pytest.raises(OptionError, match=r"got -0.5$"):
        gen.GENERATORS["pruned"][0](rows=10, cols=10, sparsity=-0.5)


@pytest.mark.parametrize("args", [
    ("banded", "--n", "100000000000", "--halfwidth", "3"),
    ("stencil3d", "--n", "100000"),
    ("dense", "--rows", "10000000", "--cols", "10000000"),
    ("nm", "--rows", "100000000", "--cols", "100000000", "--pattern", "2:4"),
    ("pruned", "--rows", "100000000", "--cols", "100000000"),
    ("random", "--rows", "100000000000", "--cols", "100000000000", "--nnz", "10"),
])
def test_a_matrix_too_large_to_draw_is_refused_before_drawing(tmp_path, args) -> None:  # type: ignore[no-untyped-def]
    """Petabytes of entries (or cells past 64-bit numbering) are refused in one line
    naming the kind's sizes, before any array is allocated and before the file is made."""
    target = tmp_path / "big.mtx"
    out = sparsroof("generate", *args, "-o", str(target), cwd=ROOT)
    assert out.returncode == 2 and not target.exists()
    assert out.stderr.startswith("sparsroof: error: ") and out.stderr.count("\n") == 1
    assert "entries" in out.stderr or "64 bits" in out.stderr
