from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparsroof.errors import MatrixFileError
from sparsroof.matrix.mtx import load, peek

from ..conftest import CORPUS, DATA, corpus_file, write_mtx

# Files of the corpus that must fail, with a word the message has to contain.
MALFORMED = {
    "a1.mtx": "1-based",
    "bad_dimensions.mtx": "header",
    "bad_header.mtx": "bogus",
    "mangle1.mtx": "junk",
    "mangle3.mtx": "junk",
    "wrong.mtx": "out of bounds",
    "full_noheader.mtx": "banner",
    "invalid_indices_out_of_range_1.mtx": "out of bounds",
    "invalid_truncated_lines.mtx": "truncated",
}


def _corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(p.name for p in CORPUS.iterdir() if p.suffix != ".md")


@pytest.mark.parametrize("name", _corpus_files())
def test_every_corpus_file_loads_or_fails_cleanly(corpus: Path, name: str) -> None:
    path = corpus / name
    if name in MALFORMED:
        with pytest.raises(MatrixFileError) as info:
            load(path)
        message = str(info.value)
        assert message.startswith(str(path)) and "\n" not in message
        assert MALFORMED[name] in message.lower()
        return
    m = load(path)
    assert m.row.size == m.col.size
    if m.row.size:
        assert m.row.min() >= 0 and m.row.max() < m.rows
        assert m.col.min() >= 0 and m.col.max() < m.cols


def test_a_vector_file_reads_as_one_column(corpus: Path) -> None:
    # vector_coordinate.mtx: length 4, entries 101, 202, 404 at 1, 2, 4 (1-based)
    m = load(corpus / "vector_coordinate.mtx")
    assert m.shape == (4, 1)
    assert m.row.tolist() == [0, 1, 3] and m.col.tolist() == [0, 0, 0]
    assert m.values is not None and m.values.tolist() == [101.0, 202.0, 404.0]


def test_symmetric_expansion_and_explicit_zeros_match_sources(corpus: Path) -> None:
    # expanded entries and numeric nonzeros as SOURCES.md lists them
    expected = {"494_bus.mtx": (1666, 1666), "zenios.mtx": (27191, 1314),
                "rajat19.mtx": (5399, 3699), "bayer10.mtx": (94926, 71594),
                "skew_fp64.mtx": (20, 20), "matrix_coordinate_complex_hermitian.mtx": (5, 5)}
    for name, (stored, numeric) in expected.items():
        m = load(corpus / name)
        assert (m.stored_entries, m.numeric_nonzeros) == (stored, numeric), name


def test_smtx_dialects(corpus: Path) -> None:
    dlmc = load(corpus / "bottleneck_projection_block_group_projection_block_group3.smtx")
    assert dlmc.shape == (1024, 512) and dlmc.stored_entries == 52428 and dlmc.values is None
    swin = load(corpus / "layers.0.blocks.0.attn.proj_swin_tiny_unstructured_50.smtx")
    assert swin.shape == (96, 96) and swin.stored_entries == 4608
    # first row of the Swin file has 62 entries starting at columns 0, 2, 3 (from the file)
    assert np.count_nonzero(swin.row == 0) == 62
    assert list(swin.col[:3]) == [0, 2, 3]


def test_array_symmetric_is_expanded_once(corpus: Path) -> None:
    m = load(corpus / "array_symmetric.mtx")
    dense = np.zeros(m.shape)
    dense[m.row, m.col] = m.values
    assert np.array_equal(dense, [[1, 22, 33], [22, 2, 44], [33, 44, 3]])


def test_peek_reads_only_the_header(tmp_path: Path) -> None:
    # a body that would fail to parse: peek must not look at it
    p = write_mtx(tmp_path / "h.mtx", "%%MatrixMarket matrix coordinate real general\n"
                  "5 6 7\nthis is not data\n")
    h = peek(p)
    assert (h.rows, h.cols, h.entries, h.field) == (5, 6, 7, "real")
    with pytest.raises(MatrixFileError):
        load(p)


@pytest.mark.parametrize("problem,path_text", [
    ("no such file", "missing.mtx"),
    ("directory", "."),
])
def test_missing_and_directory(tmp_path: Path, problem: str, path_text: str) -> None:
    with pytest.raises(MatrixFileError, match=problem):
        load(tmp_path / path_text)


@pytest.mark.parametrize("text,problem", [
    ("3, 3, 2\n0 1 2 2\n0 5\n", "out of range"),
    ("3, 3, 2\n0 1 3\n0 1\n", "row offsets"),
    ("3, 3, 2\n0 1 2 2\n0\n", "expected 2 column indices"),
    ("three, 3, 2\n", "size line"),
])
def test_bad_smtx(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(MatrixFileError, match=problem):
        load(write_mtx(tmp_path / "bad.smtx", text))


def test_gzip_load_matches_plain(tmp_path: Path) -> None:
    text = "%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 3 5\n2 1 -1\n"
    plain = load(write_mtx(tmp_path / "a.mtx", text))
    gz = tmp_path / "a.mtx.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    packed = load(gz)
    assert packed.name == "a" and packed.shape == plain.shape
    assert np.array_equal(packed.col, plain.col) and np.array_equal(packed.values, plain.values)


_FIELDS = {"real": np.float64, "integer": np.int64, "complex": np.complex128, "pattern": None}


@st.composite
def _matrices(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 8))
    k = draw(st.integers(1, 8))
    field = draw(st.sampled_from(sorted(_FIELDS)))
    symmetry = draw(st.sampled_from(["general", "symmetric", "skew-symmetric", "hermitian"]))
    if symmetry != "general":
        k = n
    if (symmetry == "hermitian" and field != "complex") or (
        field == "pattern" and symmetry in ("skew-symmetric", "hermitian")
    ):
        symmetry = "general" if symmetry == "hermitian" or field == "pattern" else symmetry
    density = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    mask = rng.random((n, k)) < density
    values = rng.integers(1, 9, size=(n, k)).astype(float)
    if field == "complex":
        values = values + 1j * rng.integers(-3, 4, size=(n, k))
    dense = np.where(mask, values, 0)
    if symmetry == "symmetric":
        dense = np.tril(dense) + np.tril(dense, -1).T
    elif symmetry == "skew-symmetric":
        dense = np.tril(dense, -1) - np.tril(dense, -1).T
    elif symmetry == "hermitian":
        dense = np.tril(dense, -1) + np.tril(dense, -1).conj().T + np.diag(np.diag(dense).real)
    return dense, field, symmetry


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_matrices())
def test_load_of_written_matrix_round_trips(tmp_path: Path, case) -> None:  # type: ignore[no-untyped-def]
    dense, field, symmetry = case
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(str(path), sp.coo_matrix(dense), field=field, symmetry=symmetry)
    m = load(path)
    back = np.zeros(dense.shape, dtype=complex)
    np.add.at(back, (m.row, m.col), 1 if m.values is None else m.values)
    expected = (dense != 0).astype(complex) if field == "pattern" else dense
    assert np.allclose(back, expected)
    assert m.stored_entries == np.count_nonzero(dense)


@pytest.mark.parametrize("name", ["lap2d_64.mtx", "494_bus.mtx", "Erdos971.mtx", "a1.mtx"])
def test_without_fast_matrix_market_scipy_reads_the_same(name: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the fast_matrix_market package is missing, scipy's mmread reads the body: the
    same entries in the same order (symmetric files as stored), the same one-line error for
    a bad file, and the same bound."""
    from sparsroof import analyze

    path = DATA / name if (DATA / name).exists() else corpus_file(name)

    def read() -> object:
        try:
            m = load(path)
        except MatrixFileError as err:
            return str(err)
        return (m.shape, m.row.tolist(), m.col.tolist(),
                None if m.values is None else m.values.tolist())

    with_fmm = read()
    monkeypatch.setitem(sys.modules, "fast_matrix_market", None)
    assert read() == with_fmm
    if name == "lap2d_64.mtx":
        bound = analyze(path, hw="a100", cache=False).results[0].bound
        assert (bound.bound, bound.sol_s) == ("launch", pytest.approx(1.3e-6))
