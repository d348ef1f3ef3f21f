"""Core costs of a CSR SpMV: the cache simulation, the mispredicted exits, the chains."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsroof.host.cachesim import line_misses
from sparsroof.host.core_cost import (
    chain_entries,
    core_counts,
    measure_branch_memory,
    mispredicted_exits,
)
from sparsroof.host.sweep import PATTERNS, generate, plan


def _lru_reference(cols: list[int], per_line: int, levels: list[tuple[int, int]]) -> list[int]:
    """Set-associative LRU, one list per set, each level fed the misses of the one above."""
    caches = [[[] for _ in range(sets)] for sets, _ in levels]
    misses = [0] * len(levels)
    for c in cols:
        line = c // per_line
        for lv, (sets, ways) in enumerate(levels):
            held = caches[lv][line % sets]
            if line in held:
                held.remove(line)
                held.append(line)
                break
            misses[lv] += 1
            held.append(line)
            if len(held) > ways:
                held.pop(0)
    return misses


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 400), max_size=300), st.sampled_from([1, 4, 8]),
       st.sampled_from([[(1, 2)], [(2, 2), (4, 4)], [(4, 1), (8, 2), (16, 4)]]))
def test_cache_simulation_without_a_stream_is_exact_lru(cols: list[int], per_line: int,
                                                        levels: list[tuple[int, int]]) -> None:
    got = line_misses(np.array(cols, dtype=np.int64), per_line,
                      np.array([s for s, _ in levels]), np.array([w for _, w in levels]), 0.0)
    assert got.tolist() == _lru_reference(cols, per_line, levels)


def test_the_streamed_matrix_pushes_reused_lines_out() -> None:
    # 32 lines of x read over and over: they fit 64 lines of cache, but not when each
    # access also streams two lines of matrix through it (64 per pass)
    cols = np.tile(np.arange(32) * 8, 50).astype(np.int64)
    geometry = (8, np.array([8]), np.array([8]))
    assert line_misses(cols, *geometry, 0.0).tolist() == [32]
    assert line_misses(cols, *geometry, 2.0).tolist() == [32 * 50]


def test_set_sampling_of_a_large_last_level(monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.host.cachesim as sim

    cols = np.random.default_rng(5).integers(0, 200_000, 300_000)
    geometry = (8, np.array([16, 2048]), np.array([4, 8]), 0.2)
    exact = line_misses(cols, *geometry)
    monkeypatch.setattr(sim, "SAMPLED_SETS", 256)  # every 8th set of the last level
    sampled = line_misses(cols, *geometry)
    assert sampled[0] == exact[0]
    assert sampled[1] == pytest.approx(exact[1], rel=0.05) and sampled[1] % 8 == 0


def _exits_reference(lengths: list[int]) -> int:
    """min(rows that stop, rows that go on) at each iteration, given the previous length."""
    cases = Counter(zip([0, *lengths[:-1]], lengths, strict=True))
    total = 0
    for prev in {p for p, _ in cases}:
        for k in range(max(lengths) + 1):
            stop = cases[(prev, k)]
            on = sum(n for (p, n_len), n in cases.items() if p == prev and n_len > k)
            total += min(stop, on)
    return total


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=60))
def test_mispredicted_exits_match_their_definition(lengths: list[int]) -> None:
    assert mispredicted_exits(np.array(lengths)) == _exits_reference(lengths)


def test_rows_too_long_to_count_mispredict_when_their_length_changes() -> None:
    assert mispredicted_exits(np.array([100, 100, 100])) == 1  # the first one only
    assert mispredicted_exits(np.array([100, 200, 100, 100])) == 3


def test_core_counts_of_a_small_matrix() -> None:
    # rows of 40 and 3 entries: 8 entries past 32; x of 64 columns in a 64-line cache, of
    # which lines 0-4 (columns 0-39) and 7 (column 63) are read
    indptr = np.array([0, 40, 43])
    cols = np.concatenate([np.arange(40), [0, 8, 63]])
    c = core_counts(indptr, cols, [("L1", 64.0 * 64)])
    assert c.chains == {32: 8.0, 128: 0.0}
    assert c.misses == {"L1": 6.0}  # each line once
    assert c.mispredicts == mispredicted_exits(np.array([40, 3]))
    assert core_counts(indptr, cols, []).misses == {}


def test_branch_memory_lies_within_the_sizes_tried() -> None:
    sizes = (256, 2048)
    memory = measure_branch_memory(sizes, repeat=3, min_time=0.0, warmup=2)
    rng = np.random.default_rng(3)
    from sparsroof.host.core_cost import _lognormal_rows

    exits = [mispredicted_exits(_lognormal_rows(n, 4.0, rng)) for n in sizes]
    assert exits[0] <= memory <= exits[-1]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_sweep_patterns(pattern: str) -> None:
    m = generate(pattern, 4000, 8)
    assert m.shape == (4000, 4000)
    lengths = np.bincount(m.row, minlength=m.rows)
    assert 4 <= lengths.mean() <= 9
    assert np.all((m.col >= 0) & (m.col < m.cols))
    assert np.unique(m.row * m.cols + m.col).size == m.stored_entries  # no duplicates
    if pattern == "skewed":
        assert lengths.std() > 4  # row lengths vary
    assert chain_entries(lengths, 32) >= 0
    assert (pattern, 512_000, 8) in plan() and (pattern, 512_000, 32) not in plan()


def test_branch_memory_is_the_median_of_its_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.host.core_cost as cc

    passes = iter([2849.0, 5731.0, 4809.0])
    monkeypatch.setattr(cc, "branch_memory_once", lambda *a, **k: next(passes))
    assert cc.measure_branch_memory() == 4809.0  # one disturbed pass does not decide it
