"""Reorderings: the permutations on hand-checked matrices, and what they buy by the
cache-aware model (``analyze --reorder``)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import fast_matrix_market as fmm
import numpy as np
import pytest
from rich.console import Console

from sparsroof.analysis import Config, analyze, records
from sparsroof.analysis.reordering import NOTABLE_GAIN
from sparsroof.errors import OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.generate import uniform_random
from sparsroof.matrix.mtx import Matrix
from sparsroof.model.reuse import cache_aware_height
from sparsroof.report.reorder import to_reorder_table
from sparsroof.structure.features import measure
from sparsroof.structure.reorder import ordering, permute, reorder

from ..conftest import ROOT, make_matrix, sparsroof


def _tridiagonal(n: int, order: list[int]) -> Matrix:
    """The n x n tridiagonal matrix (2 on the diagonal, 1 beside it) with row and column
    ``order[i]`` of it moved to i."""
    k = np.arange(n)
    row = np.concatenate((k, k[:-1], k[1:]))
    col = np.concatenate((k, k[1:], k[:-1]))
    values = np.where(row == col, 2.0, 1.0)
    inverse = np.argsort(order)
    return make_matrix(n, n, inverse[row], inverse[col], values)


def _dense(m: Matrix) -> np.ndarray:
    out = np.zeros(m.shape)
    out[m.row, m.col] = m.values if m.values is not None else 1.0
    return out


def _b_bytes(m: Matrix, cache: float) -> float:
    """Cache-aware B bytes of SpMV in fp64 with a cache of ``cache`` bytes."""
    s = measure(m)
    return s.panel_columns[cache_aware_height(s.panel_columns, 1, 8, cache)][0] * 8.0


def test_rcm_restores_a_permuted_tridiagonal_matrix() -> None:
    # order [3, 0, 5, 1, 4, 2] puts old k at new position [1, 3, 5, 0, 4, 2][k]; the
    # neighbours (2, 3) land at 5 and 0, so the bandwidth is 5. The graph is a path, whose
    # RCM numbering walks it from one end: bandwidth 1, the matrix tridiagonal again.
    m = _tridiagonal(6, [3, 0, 5, 1, 4, 2])
    assert measure(m).bandwidth == 5
    rows, cols = ordering(m, "rcm")
    assert rows.tolist() == cols.tolist()
    assert rows.tolist() in ([2, 4, 0, 5, 3, 1], [1, 3, 5, 0, 4, 2])  # the path, either way
    r = reorder(m, "rcm")
    assert measure(r.matrix).bandwidth == 1
    assert np.array_equal(_dense(r.matrix), _dense(_tridiagonal(6, list(range(6)))))
    assert r.seconds >= 0


def test_cache_aware_b_of_a_permuted_tridiagonal_matrix() -> None:
    # 8 x 8 tridiagonal, cache 32 bytes = 4 fp64 rows of x.
    # Natural order: a panel of h rows touches h + 2 columns (h + 1 at an end): h = 2 fits
    # (4 columns), h = 4 does not (6); panels {0,1} {2,3} {4,5} {6,7} touch 3 + 4 + 4 + 3
    # = 14 columns: 112 bytes.
    # Evens then odds (order [0, 2, 4, 6, 1, 3, 5, 7]): new row 0 touches columns {0, 4},
    # rows 1..6 three columns each, row 7 {3, 7}; bandwidth 4 on every row. Panel {2, 3}
    # touches {2, 3, 5, 6, 7}, 5 columns: only h = 1 fits, 2 + 6·3 + 2 = 22 columns: 176 bytes.
    natural = _tridiagonal(8, list(range(8)))
    shuffled = _tridiagonal(8, [0, 2, 4, 6, 1, 3, 5, 7])
    assert _b_bytes(natural, 32) == 112.0
    assert measure(shuffled).bandwidth == 4
    assert _b_bytes(shuffled, 32) == 176.0
    # RCM numbers the path from an end: tridiagonal again, back to 112 bytes
    restored = reorder(shuffled, "rcm").matrix
    assert measure(restored).bandwidth == 1
    assert _b_bytes(restored, 32) == 112.0


def test_degree_ordering_puts_long_rows_first_and_keeps_ties_in_order() -> None:
    # rows of lengths 1, 3, 1, 2: by decreasing length, stable: 1, 3, 0, 2
    m = make_matrix(4, 4, [0, 1, 1, 1, 2, 3, 3], [0, 0, 1, 2, 2, 1, 3])
    rows, cols = ordering(m, "degree")
    assert rows.tolist() == [1, 3, 0, 2] and cols.tolist() == [1, 3, 0, 2]
    r = reorder(m, "degree").matrix
    assert np.bincount(r.row, minlength=4).tolist() == [3, 2, 1, 1]
    # a rectangular matrix has its rows ordered, its columns left alone
    wide = make_matrix(2, 3, [0, 1, 1], [0, 1, 2])
    rows, cols = ordering(wide, "degree")
    assert rows.tolist() == [1, 0] and cols.tolist() == [0, 1, 2]


def test_orderings_permute_a_rectangular_matrix_and_keep_every_entry() -> None:
    rng = np.random.default_rng(3)
    row, col = rng.integers(0, 7, 20), rng.integers(0, 11, 20)
    m = make_matrix(7, 11, row, col, rng.standard_normal(20))
    for name in ("rcm", "degree"):
        rows, cols = ordering(m, name)
        assert sorted(rows.tolist()) == list(range(7))
        assert sorted(cols.tolist()) == list(range(11))
        p = reorder(m, name).matrix
        # entry (i, j) of the reordered matrix is entry (rows[i], cols[j]) of the original
        assert np.array_equal(_dense(p), _dense(m)[np.ix_(rows, cols)])


def test_permute_moves_entries_and_values_together() -> None:
    # reversing a 3 x 3 matrix sends (0, 2) to (2, 0); the value goes with it
    m = make_matrix(3, 3, [0, 1], [2, 1], [5.0, 7.0])
    p = permute(m, np.array([2, 1, 0]), np.array([2, 1, 0]))
    assert _dense(p).tolist() == [[0, 0, 0], [0, 7, 0], [5, 0, 0]]


def test_an_empty_matrix_reorders_to_itself() -> None:
    m = make_matrix(3, 3, [], [])
    r = reorder(m, "rcm")
    assert sorted(r.row_order.tolist()) == [0, 1, 2] and r.matrix.stored_entries == 0


def test_config_takes_orderings_by_name_list_or_all() -> None:
    assert Config.from_options(reorder="rcm,degree").reorder == ("rcm", "degree")
    assert Config.from_options(reorder=["all"]).reorder == ("rcm", "degree")
    with pytest.raises(OptionError, match="unknown choice 'metis'"):
        Config.from_options(reorder="metis")
    with pytest.raises(OptionError, match="cache-aware"):
        Config.from_options(reorder="rcm", model="random")


def test_reorder_needs_a_spec_with_a_cache() -> None:
    spec = load_spec("c2050")
    no_cache = replace(spec, memory=(spec.dram,))
    with pytest.raises(OptionError, match="no cache capacity"):
        analyze(_tridiagonal(8, list(range(8))), no_cache, reorder="rcm")


# --- the 500 x 500 grid: its Laplacian shuffled, then restored by RCM -----------------

GRID = 500


@pytest.fixture(scope="module")
def grids(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The project's five-point Laplacian of a 500 x 500 grid, written by
    ``sparsroof generate``, and the same matrix with rows and columns shuffled alike."""
    folder = tmp_path_factory.mktemp("grid")
    grid = folder / "grid.mtx"
    out = sparsroof("generate", "stencil2d", "--n", str(GRID), "-o", str(grid), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    (values, (row, col)), shape = fmm.read_coo(str(grid))
    new = np.random.default_rng(0).permutation(shape[0])  # old k goes to new[k]
    shuffled = folder / "shuffled.mtx"
    fmm.write_coo(str(shuffled), (values, (new[row], new[col])), shape=shape)
    return grid, shuffled


def _analyze_json(*args: str) -> dict:
    out = sparsroof("analyze", *args, "-O", "json", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    (matrix,) = json.loads(out.stdout)["matrices"]
    return matrix


def _cache_aware(results: list[dict]) -> dict:
    (found,) = [r for r in results if r["traffic"]["model"] == "cache-aware"]
    return found


def test_rcm_restores_a_shuffled_grid_laplacian(grids: tuple[Path, Path]) -> None:
    # c2050's L2 holds 768 KiB, less than x (250,000 fp64 values, 2 MB): B reuse depends
    # on the order of the rows
    grid, shuffled = grids
    base = analyze(grid, "c2050").to_dict()["matrices"][0]
    doc = _analyze_json(str(shuffled), "--hw", "c2050", "--reorder", "rcm,degree")
    (rcm,) = [r for r in doc["reorderings"] if r["ordering"] == "rcm"]
    assert base["structure"]["bandwidth"] == GRID
    assert doc["structure"]["bandwidth"] > 100 * GRID  # shuffled: the band is gone
    assert rcm["structure"]["bandwidth"] <= GRID  # the grid's band, or narrower
    before, after = _cache_aware(base["results"]), _cache_aware(rcm["results"])
    shuffled_b = _cache_aware(doc["results"])["traffic"]["bytes_b"]
    assert after["traffic"]["bytes_b"] < shuffled_b / 2
    assert after["traffic"]["bytes_b"] == pytest.approx(before["traffic"]["bytes_b"], rel=0.05)
    assert after["bound"]["sol_s"] == pytest.approx(before["bound"]["sol_s"], rel=0.05)
    (gain,) = rcm["gains"]
    assert gain["best"] and gain["gain"] >= NOTABLE_GAIN
    assert gain["original_sol_s"] == _cache_aware(doc["results"])["bound"]["sol_s"]
    # break-even: the reordering's seconds over the SoL saved per SpMV
    assert gain["break_even_runs"] == pytest.approx(
        rcm["reorder_s"] / (gain["original_sol_s"] - gain["sol_s"]))


def test_the_table_marks_the_best_ordering(grids: tuple[Path, Path]) -> None:
    _, shuffled = grids
    console = Console(width=100, no_color=True, record=True, file=io.StringIO())
    console.print(to_reorder_table(analyze(shuffled, "c2050", reorder="all")))
    text = console.export_text()
    assert "…" not in text
    # columns: d, format, ordering, bandwidth, B, time, gain, reorder time, break-even, best
    marks = {words[words.index(name)]: words[-1] == "yes"
             for words in map(str.split, text.splitlines())
             for name in ("original", "rcm", "degree") if name in words}
    assert marks == {"original": False, "rcm": True, "degree": False}
    # the model's time is an estimate, and the table says so rather than calling it SoL
    assert " SoL " not in text and "not a bound" in " ".join(text.split())


def test_a_uniform_random_matrix_gains_nothing_notable() -> None:
    # x of 120,000 fp64 values (960 kB) does not fit c2050's 768 KiB cache; no order
    # brings random columns together
    g = uniform_random(120_000, 120_000, 600_000, seed=1)
    m = make_matrix(g.rows, g.cols, g.row, g.col, g.values)
    a = analyze(m, "c2050", reorder="all")
    gains = [g for ro in a.reorderings for g in ro.gains]
    assert len(gains) == 2
    assert all(g.gain < NOTABLE_GAIN and not g.best for g in gains)


def test_records_say_the_ordering_of_each_row() -> None:
    a = analyze(_tridiagonal(8, [0, 2, 4, 6, 1, 3, 5, 7]), "c2050", reorder="rcm",
                model="cache-aware")
    rows = records([a])
    assert [(r["ordering"], r["model"]) for r in rows] == [("original", "cache-aware"),
                                                           ("rcm", "cache-aware")]
    assert rows[1]["reorder_s"] == a.reorderings[0].seconds
    # the reordered row carries its gain: none here, as x (8 values, 64 bytes) fits
    # c2050's cache in either order
    (gain,) = a.reorderings[0].gains
    assert (gain.original_bytes_b, gain.bytes_b) == (64.0, 64.0)
    assert rows[1]["gain"] == gain.gain == 1.0 and not rows[1]["best"]
    assert "gain" not in rows[0]
    # without --reorder the rows carry no ordering column
    assert "ordering" not in records([analyze(np.eye(4), "c2050")])[0]


def test_batch_stores_each_ordering_on_every_spec(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "lap.mtx").write_bytes((ROOT / "data" / "lap2d_64.mtx").read_bytes())
    out = sparsroof("batch", str(folder), "--hw", "c2050", "--hw", "a100", "--reorder", "rcm", "-j",
                    "1", "--store", str(tmp_path / "s.db"), "--export", str(tmp_path / "rows.json"),
                    cwd=ROOT)
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "rows.json").read_text())
    rows = rows["rows"] if isinstance(rows, dict) else rows
    pairs = {(r["spec"], r["ordering"]) for r in rows if r["model"] == "cache-aware"}
    assert pairs == {(s, o) for s in ("c2050", "a100-80gb") for o in ("original", "rcm")}


def test_formats_sees_the_reordered_matrix(tmp_path: Path) -> None:
    # a 1000 x 1000 tridiagonal matrix shuffled: its entries lie on hundreds of diagonals.
    # RCM makes it tridiagonal again, and DIA reads its 3 diagonals within the matrix:
    # (1000 + 999 + 999)·8 + 3·4 bytes, plus x and y read and written once (1000·8 each):
    # 39,996 bytes, the fewest.
    n = 1000
    k = np.arange(n)
    row, col = np.concatenate((k, k[:-1], k[1:])), np.concatenate((k, k[1:], k[:-1]))
    new = np.random.default_rng(0).permutation(n)
    path = tmp_path / "tri.mtx"
    fmm.write_coo(str(path), (np.where(row == col, 2.0, -1.0), (new[row], new[col])),
                  shape=(n, n))

    def formats(*extra: str) -> dict:
        # on a CPU spec, with no launch floor to tie the formats, the fewest bytes win
        out = sparsroof("formats", str(path), "--hw", "epyc-7763", "-O", "json", *extra, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    shuffled, restored = formats(), formats("--reorder", "rcm")
    assert shuffled["formats"][0]["storage"] != "dia"
    assert restored["matrix"] == "tri (rcm order)"
    assert (restored["formats"][0]["storage"], restored["formats"][0]["bytes_total"]) == \
        ("dia", (3 * n - 2) * 8 + 3 * 4 + 2 * n * 8)
