from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from sparsroof.structure.features import length_stats, measure

from ..conftest import make_matrix

# 4 x 4, 8 entries:
#   row 0: x x . .      row 2: . . x .
#   row 1: x x . x      row 3: x . . x
ROW = [0, 0, 1, 1, 1, 2, 3, 3]
COL = [0, 1, 0, 1, 3, 2, 0, 3]


def test_tiny_features_by_hand() -> None:
    s = measure(make_matrix(4, 4, ROW, COL))
    # row lengths 2, 3, 1, 2: one row of length 1, two of 2, one of 3
    assert s.row_length_counts.tolist() == [0, 1, 2, 1]
    # offsets j - i: 0, 1, -1, 0, 2, 0, -3, 0 -> {-3, -1, 0, 1, 2}
    assert s.n_diagonals == 5 and s.bandwidth == 3
    # occupied diagonal lengths 4 (0) + 3 (+1) + 3 (-1) + 2 (+2) + 1 (-3) = 13 cells
    assert s.diagonal_cells == 13 and s.diagonal_fill == pytest.approx(8 / 13)
    # lower envelope: rows start at columns 0, 0, 2, 0 -> 0 + 1 + 0 + 3 = 4;
    # upper: columns start at rows 0, 0, 2, 1 -> 0 + 1 + 0 + 2 = 3
    assert s.profile == 7
    # half-width ceil(0.05 * 4) = 1: all but (1,3) and (3,0) lie within it
    assert s.near_diagonal_halfwidth == 1 and s.near_diagonal_share == pytest.approx(6 / 8)
    # 2x2 blocks (0,0) (0,1) (1,1) (1,0) are all occupied; one 4x4 block and larger
    assert s.blocks == {2: 4, 4: 1, 8: 1, 16: 1, 32: 1}
    assert s.block_fill[2] == pytest.approx(8 / 16)
    # pairs of columns per row: row 0 {2}, row 1 {2, 1}, row 2 {1}, row 3 {1, 1}:
    # 4 of 6 non-empty groups hold at most 1 entry; 4 of all 8 groups hold exactly 1
    assert s.nm_conformance["1:2"] == pytest.approx(4 / 6)
    assert s.nm_exact["1:2"] == pytest.approx(4 / 8)
    # groups of 4 = whole rows of 2, 3, 1, 2 entries
    assert s.nm_conformance["2:4"] == pytest.approx(3 / 4)
    assert s.nm_conformance["1:4"] == pytest.approx(1 / 4)
    assert s.nm_conformance["2:8"] == pytest.approx(3 / 4)
    # off-diagonal (0,1) and (1,0) mirror each other; (1,3) and (3,0) do not
    assert s.pattern_symmetry == pytest.approx(2 / 4)
    # panels: h=1 -> row lengths (sum 8, max 3); h=2 -> {0,1,3} and {0,2,3}; h=4 -> all 4
    assert s.panel_columns == {1: (8, 3), 2: (6, 3), 4: (4, 4)}
    # column lengths 3, 2, 1, 2: the top column (at least one) holds 3 of 8 entries
    assert s.hub_share == {"0.1%": pytest.approx(3 / 8), "1%": pytest.approx(3 / 8)}
    r = s.row_stats
    assert r is not None
    # lengths 1, 2, 2, 3: mean 2, variance 0.5, Gini (-3·1 - 1·2 + 1·2 + 3·3) / (4·8)
    assert (r.mean, r.max, r.mode) == (2.0, 3, 2)
    assert r.cv == pytest.approx(math.sqrt(0.5) / 2) and r.gini == pytest.approx(6 / 32)


def test_entry_order_does_not_matter_and_input_is_left_alone() -> None:
    # make_matrix puts the entries in row-major order, so the unordered coordinates are
    # put back in by hand: measure must see (and leave) them as given
    m = make_matrix(4, 4, ROW, COL)
    order = [7, 2, 5, 0, 3, 6, 1, 4]
    row, col = np.array(ROW)[order], np.array(COL)[order]
    s = measure(replace(m, row=row, col=col))
    t = measure(m)
    assert s.to_dict() == t.to_dict()
    assert row.tolist() == [ROW[i] for i in order] and col.tolist() == [COL[i] for i in order]
    # row-ordered input whose columns fall inside a row must not be reordered either
    col_desc = np.array([1, 0, 3, 1, 0, 2, 3, 0])
    measure(replace(m, col=col_desc))
    assert col_desc.tolist() == [1, 0, 3, 1, 0, 2, 3, 0]


def test_distinct_counts_match_a_brute_force_on_a_random_pattern() -> None:
    rng = np.random.default_rng(3)
    rows, cols, n = 300, 200, 4000
    row, col = rng.integers(0, rows, n), rng.integers(0, cols, n)
    s = measure(make_matrix(rows, cols, row, col))
    for h, (total, largest) in s.panel_columns.items():
        per_panel = np.bincount(np.unique((row // h) * cols + col) // cols)
        assert (total, largest) == (per_panel.sum(), per_panel.max()), h
    assert max(s.panel_columns) == 512  # first power of two >= 300 rows
    for b, blocks in s.blocks.items():
        assert blocks == np.unique((row // b) * cols + col // b).size, b
    assert s.bandwidth == np.abs(col - row).max()
    assert s.n_diagonals == np.unique(col - row).size


def test_symmetry_against_a_set_of_pairs() -> None:
    rng = np.random.default_rng(5)
    row, col = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    # repeated coordinates are one entry of the pattern
    pairs = set(zip(row.tolist(), col.tolist(), strict=True))
    off = [(i, j) for i, j in pairs if i != j]
    expected = sum((j, i) in pairs for i, j in off) / len(off)
    assert measure(make_matrix(50, 50, row, col)).pattern_symmetry == pytest.approx(expected)
    assert measure(make_matrix(50, 60, row, col)).pattern_symmetry is None


def test_empty_matrix_has_zero_features_and_valid_json() -> None:
    import json

    s = measure(make_matrix(3, 4, [], []))
    assert (s.stored_entries, s.bandwidth, s.n_diagonals, s.col_alpha) == (0, 0, 0, None)
    json.dumps(s.to_dict())


def test_length_stats_of_equal_lengths() -> None:
    # every row has 3 of 10 entries: no spread, binomial variance 3·0.7 = 2.1 -> dispersion 0
    s = length_stats(np.array([0, 0, 0, 5]), other=10)
    assert (s.mean, s.cv, s.gini, s.mode, s.dispersion) == (3.0, 0.0, 0.0, 3, 0.0)


def test_hurwitz_zeta_agrees_with_scipy_over_the_fits_range() -> None:
    """The power-law fit's own zeta (numpy only) against scipy's, over every exponent the
    fit tries and lower bounds from 1 to ten million."""
    from scipy.special import zeta

    from sparsroof.structure.powerlaw import hurwitz_zeta

    s = np.arange(1.05, 8.0, 0.01)[None, :]
    q = np.concatenate([np.arange(1.0, 200.0), np.geomspace(200, 1e7, 60).round()])[:, None]
    ours, theirs = hurwitz_zeta(s, q), zeta(s, q)
    assert np.max(np.abs(ours - theirs) / theirs) < 5e-15
