"""Mutation fuzzing of the public loader: a mutated file gives a valid matrix or the
project's own error, never anything else.

Files are loaded in this process: the loader's guards make the inputs that crash the
parser natively impossible (their reproducers run in a child process in
test_hostile_input.py). Thousands of cases, each in a child process so that a native
crash is counted rather than fatal, are in ``bench/fuzz_load.py``.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparsroof.errors import SparsroofError
from sparsroof.matrix.mtx import Matrix, load

from ..mutate import GENERATED, MUTATIONS, corpus_seeds, mutate, write_case

#: the memory a fuzz case may ask for: huge declared sizes are refused, not allocated
MAX_MEMORY = 256 << 20

_CORPUS = corpus_seeds()
_FUZZ = settings(max_examples=150, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])


def check_loaded(m: Matrix) -> None:
    """What every loaded matrix must satisfy, however odd its file was."""
    assert m.row.shape == m.col.shape and m.row.ndim == 1
    assert m.values is None or m.values.shape == m.row.shape
    if m.row.size:
        assert m.row.min() >= 0 and m.row.max() < m.rows
        assert m.col.min() >= 0 and m.col.max() < m.cols


def load_or_clean_error(name: str, data: bytes, seed: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_case(Path(folder) / name, data, random.Random(seed))
        try:
            m = load(path, max_memory=MAX_MEMORY)
        except SparsroofError as err:
            message = str(err)
            assert message.startswith(str(path)) and "\n" not in message
            return
        check_loaded(m)


_steps = st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**32 - 1)),
                  min_size=1, max_size=3)


def _apply(data: bytes, steps: list) -> bytes:
    for mutation, seed in steps:
        data = mutation(random.Random(seed), data)
    return data


@_FUZZ
@given(name=st.sampled_from(sorted(GENERATED)), steps=_steps)
def test_mutated_generated_files_load_or_fail_cleanly(name: str, steps: list) -> None:
    load_or_clean_error(name, _apply(GENERATED[name], steps), len(steps))


@pytest.mark.skipif(not _CORPUS, reason="tests/corpus is not present")
@_FUZZ
@given(name=st.sampled_from(sorted(_CORPUS) or ["-"]), steps=_steps)
def test_mutated_corpus_files_load_or_fail_cleanly(name: str, steps: list) -> None:
    load_or_clean_error(name, _apply(_CORPUS[name], steps), len(steps))


def test_every_mutation_changes_something() -> None:
    # a mutation that never changes its input would make the fuzzing above hollow
    data = GENERATED["coo_real.mtx"]
    for mutation in MUTATIONS:
        rng = random.Random(1)
        assert any(mutation(rng, data) != data for _ in range(20)), mutation.__name__
    assert mutate(random.Random(3), data) != data
