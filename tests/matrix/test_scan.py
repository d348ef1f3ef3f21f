"""The structure-only read (``load(path, values=False)``) against the full parser: a file
it reads gives the same coordinates, numeric nonzeros and value sample; a file it does not
read goes to the full parser, which reads it or refuses it with the same message."""

from __future__ import annotations

import random
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparsroof.errors import SparsroofError
from sparsroof.matrix import scan
from sparsroof.matrix.mtx import Matrix, load
from sparsroof.structure.features import measure

from ..conftest import CORPUS, ROOT, require_native
from ..mutate import GENERATED, MUTATIONS, corpus_seeds, write_case

MAX_MEMORY = 256 << 20
_BANNER = "%%MatrixMarket matrix coordinate {} general\n"


@pytest.fixture(autouse=True)
def _built() -> None:
    require_native(scan.native(), "sparsroof.matrix._native")


@pytest.fixture(params=["one thread", "two threads"])
def split(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Small files are read by one thread; 'two threads' splits every body in two."""
    if request.param == "two threads":
        monkeypatch.setattr(scan, "_SPLIT", 16)
    return request.param


def _outcome(path: Path, values: bool) -> Matrix | str:
    try:
        return load(path, max_memory=MAX_MEMORY, values=values)
    except SparsroofError as err:
        return str(err)


def assert_same(path: Path) -> bool:
    """Both loads of ``path`` agree; True where the structure-only read took it."""
    full, fast = _outcome(path, True), _outcome(path, False)
    if isinstance(full, str) or isinstance(fast, str):
        assert fast == full
        return False
    assert np.array_equal(fast.row, full.row) and fast.row.dtype == full.row.dtype
    assert np.array_equal(fast.col, full.col) and fast.col.dtype == full.col.dtype
    assert fast.numeric_nonzeros == full.numeric_nonzeros
    a, b = fast.value_sample(), full.value_sample()
    assert (a is None) == (b is None)
    if a is not None:
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if fast.stored_entries:  # the passes measure the same from the reader's row counts
        assert repr(asdict(measure(fast))) == repr(asdict(measure(full)))
    return fast.summary is not None or (fast.values is None and full.values is None)


def _plain_files() -> list[Path]:
    return sorted([*ROOT.glob("data/*.mtx"), *CORPUS.glob("*.mtx")])


def test_every_data_and_corpus_file_reads_the_same(split: str) -> None:
    taken = [p.name for p in _plain_files() if assert_same(p)]
    # the fast read is not a test that passes by always giving up
    assert {"lap2d_64.mtx", "random_1000.mtx", "bayer10.mtx", "karate.mtx",
            "west0479.mtx"} <= set(taken)
    assert len(taken) >= 20


@pytest.mark.parametrize("field,symmetry", [("real", "general"), ("real", "symmetric"),
                                            ("integer", "skew-symmetric"),
                                            ("pattern", "symmetric")])
def test_a_large_file_measures_the_same(field: str, symmetry: str, split: str,
                                        tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 300_000  # the value sample takes every 4th to 9th value
    rows, cols = rng.integers(1, 5001, n), rng.integers(1, 5001, n)
    if symmetry != "general":  # one triangle; a skew-symmetric one has no diagonal
        rows, cols = np.maximum(rows, cols), np.minimum(rows, cols)
        rows[rows == cols] += symmetry == "skew-symmetric"
        rows = np.minimum(rows, 5000)
        keep = rows > cols if symmetry == "skew-symmetric" else rows >= cols
        rows, cols = rows[keep], cols[keep]
    values = (rng.integers(-3, 4, rows.size) if field == "integer"
              else rng.standard_normal(rows.size).round(3))
    values[::7] = 0
    words = [rows.tolist(), cols.tolist()] + ([] if field == "pattern" else [values.tolist()])
    body = "".join(" ".join(map(repr, line)) + "\n" for line in zip(*words, strict=True))
    path = tmp_path / "big.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n"
                    f"5000 5000 {rows.size}\n" + body)
    assert assert_same(path)
    if symmetry == "general":
        assert load(path, values=False).row_counts is not None


LINES = {
    # read by the structure-only pass
    "plain": "1 1 1.5\n", "tabs": "1\t1\t1.5\n", "trailing blanks": "1 1 1.5 \t\n",
    "exponent": "1 1 -2.5E-03\n", "integer-looking": "1 1 7\n", "zero": "1 1 -0.000e+00\n",
    "tiny": "1 1 1e-300\n", "long mantissa": "1 1 0." + "0" * 45 + "1\n",
    "leading blanks": "   1  1   1.5\n", "bare point": "1 1 -.5\n", "trailing point": "1 1 5.\n",
    "blank line": "\n1 1 1.5\n", "blank lines at the end": "1 1 1.5\n\n \t\n",
    # given up on: the full parser decides
    "plus": "1 1 +1.5\n", "point alone": "1 1 .\n", "point exponent": "1 1 .e5\n",
    "inf": "1 1 inf\n", "nan": "1 1 nan\n", "overflow": "1 1 1e400\n",
    "underflow": "1 1 1e-400\n", "subnormal": "1 1 4.9e-324\n", "fortran": "1 1 1.5d0\n",
    "crlf": "1 1 1.5\r\n", "comment": "% note\n1 1 1.5\n",
    "no value": "1 1\n", "extra token": "1 1 1.5 2\n", "index zero": "0 1 1.5\n",
    "index too big": "3 1 1.5\n", "huge index": "1" * 20 + " 1 1.5\n",
    "no newline": "1 1 1.5", "nul": "1 1 1.5\0\n", "two entries": "1 1 1\n2 2 2\n",
}


@pytest.mark.parametrize("line", sorted(LINES))
def test_a_line_is_read_the_same_or_given_up(line: str, split: str, tmp_path: Path) -> None:
    path = tmp_path / "one.mtx"
    path.write_bytes((_BANNER.format("real") + "2 2 1\n2 2 4\n" + LINES[line]).encode())
    # the size line says 1 entry; one line more makes it 2
    text = path.read_bytes().replace(b"2 2 1\n2 2 4\n", b"2 2 2\n2 2 4\n")
    path.write_bytes(text)
    assert_same(path)


@pytest.mark.parametrize("field,line", [("integer", "1 2 -7\n"), ("integer", "1 2 1.5\n"),
                                        ("integer", "1 2 " + "9" * 19 + "\n"),
                                        ("pattern", "1 2\n"), ("pattern", "1 2 3\n")])
def test_integer_and_pattern_lines(field: str, line: str, split: str, tmp_path: Path) -> None:
    path = tmp_path / "one.mtx"
    path.write_text(_BANNER.format(field) + "2 2 2\n" + line
                    + ("2 1\n" if field == "pattern" else "2 1 0\n"))
    assert_same(path)


_FUZZ = settings(max_examples=150, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow,
                                        HealthCheck.function_scoped_fixture])
_SEEDS = {**{k: v for k, v in GENERATED.items() if k.endswith(".mtx")}, **corpus_seeds()}
_steps = st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 2**32 - 1)),
                  min_size=1, max_size=3)


@_FUZZ
@given(name=st.sampled_from(sorted(_SEEDS)), steps=_steps)
def test_mutated_files_read_the_same(name: str, steps: list, split: str) -> None:
    data = _SEEDS[name]
    for mutation, seed in steps:
        data = mutation(random.Random(seed), data)
    with tempfile.TemporaryDirectory() as folder:
        assert_same(write_case(Path(folder) / name, data, random.Random(len(steps))))


HEADS = {
    "comments": "% one\n%\n% three\n2 2 1\n", "blank line": "\n2 2 1\n",
    "blank-looking CR line": "\r\n2 2 1\n", "CR comment": "% note\r\n2 2 1\n",
    "spaced size line": "  2  2  1  \n", "tabbed size line": "2\t2\t1\n",
}


@pytest.mark.parametrize("head", sorted(HEADS))
def test_a_header_is_read_the_same_or_given_up(head: str, tmp_path: Path) -> None:
    path = tmp_path / "head.mtx"
    path.write_text(_BANNER.format("real") + HEADS[head] + "2 1 3.5\n", newline="")
    assert_same(path)


@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_blank_lines_anywhere_are_skipped_by_either_thread(symmetry: str, split: str,
                                                          tmp_path: Path) -> None:
    # as the full parser skips them: between entries, at the seam, at the end, of blanks;
    # a symmetric file's second pass, which takes the sampled values, skips them too
    lines = [f"{k % 7 + 1} {k % 5 + 1} {k}.5" for k in range(60)]
    for at in range(58, 0, -4):
        lines.insert(at, ["", "   ", "\t"][at % 3])
    path = tmp_path / "blank.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real {symmetry}\n7 7 60\n"
                    + "\n".join(lines) + "\n\n")
    assert assert_same(path)


def test_a_process_kept_to_one_thread_reads_on_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparsroof.passes import arrays

    path = ROOT / "data" / "lap2d_64.mtx"
    monkeypatch.setattr(scan, "_SPLIT", 16)
    two = load(path, values=False)
    assert two.row_counts is not None and two.row_counts.second is not None  # two parts
    monkeypatch.setattr(arrays, "_SECOND_THREAD", [False])
    one = load(path, values=False)
    assert one.row_counts is None or one.row_counts.second is None  # one part, one thread
    assert np.array_equal(one.row, two.row) and np.array_equal(one.col, two.col)


@pytest.mark.parametrize("cores", [2, 4])
def test_a_thread_beside_the_passes_keeps_them_to_one_on_two_cores(
        monkeypatch: pytest.MonkeyPatch, cores: int) -> None:
    """While a thread counted beside the passes lives (an import ahead of a figure), a host
    of two cores reads on one thread, leaving the other core to it; four cores read on
    two. The arrays are the same either way, and the thread's end gives the core back."""
    import threading

    from sparsroof.passes import arrays

    path = ROOT / "data" / "lap2d_64.mtx"
    monkeypatch.setattr(scan, "_SPLIT", 16)
    monkeypatch.setattr(arrays, "_cores", lambda: cores)
    monkeypatch.setattr(arrays, "_BESIDE", [])
    two = load(path, values=False)
    release = threading.Event()
    busy = threading.Thread(target=release.wait, daemon=True)
    busy.start()
    arrays.beside(busy)
    try:
        during = load(path, values=False)
    finally:
        release.set()
        busy.join()
    after = load(path, values=False)
    parts = [m.row_counts is not None and m.row_counts.second is not None
             for m in (two, during, after)]
    assert parts == [True, cores > 2, True]
    assert all(np.array_equal(m.row, two.row) and np.array_equal(m.col, two.col)
               for m in (during, after))
