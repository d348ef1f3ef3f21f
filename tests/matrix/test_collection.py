from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sparsroof.errors import MatrixFileError
from sparsroof.matrix.collection import SizeFilter, discover, load_source, peek_source
from sparsroof.matrix.mtx import load

from .. import sstree


@pytest.fixture
def tree(corpus: Path, tmp_path: Path) -> Path:
    return sstree.build(corpus, tmp_path / "ss")


def _by_name(found: list) -> dict:
    return {s.name: s for s in found}


def test_finds_matrices_and_skips_auxiliary_files(tree: Path) -> None:
    found = discover([tree])
    assert sorted(s.name for s in found.sources) == sorted(sstree.GOOD + sstree.BAD)
    assert [s.name for s in found.auxiliary] == list(sstree.AUXILIARY)
    archive = _by_name(found.sources)["west0479"]
    assert archive.member == "west0479/west0479.mtx"
    assert archive.label.endswith("HB/west0479.tar.gz::west0479/west0479.mtx")


def test_aux_lists_archive_members_and_marks_them(tree: Path) -> None:
    found = discover([tree], include_aux=True)
    sources = _by_name(found.sources)
    assert sources["west0479_b"].auxiliary and sources["west0479_coord"].auxiliary
    assert sources["Erdos971_nodename"].auxiliary
    assert not sources["west0479"].auxiliary and not sources["karate"].auxiliary
    assert found.auxiliary == []


def test_name_globs_match_name_or_path(tree: Path) -> None:
    assert sorted(s.name for s in discover([tree], names=["*bus*", "lund*"]).sources) == [
        "494_bus", "lund_a"]
    assert {s.name for s in discover([tree], names=["*/Broken/*"]).sources} == set(sstree.BAD)


def test_overlapping_roots_find_each_matrix_once(tree: Path) -> None:
    found = discover([tree, tree / "plain", tree / "plain" / "karate.mtx"])
    assert len(found.sources) == len(sstree.GOOD + sstree.BAD)


def test_archive_member_is_streamed_and_equals_the_plain_file(tree: Path, corpus: Path
                                                               ) -> None:
    before = sorted(tree.rglob("*"))
    source = _by_name(discover([tree]).sources)["west0479"]
    header = peek_source(source)
    assert (header.rows, header.cols, header.entries) == (479, 479, 1910)
    m, plain = load_source(source), load(corpus / "west0479.mtx")
    assert m.name == "west0479" and m.shape == plain.shape
    assert np.array_equal(m.row, plain.row) and np.array_equal(m.col, plain.col)
    assert m.values is not None and plain.values is not None
    assert np.array_equal(m.values, plain.values)
    assert sorted(tree.rglob("*")) == before  # nothing unpacked beside the archive


def test_auxiliary_member_loads_on_its_own(tree: Path) -> None:
    sources = _by_name(discover([tree], include_aux=True).sources)
    m = load_source(sources["west0479_b"])
    assert m.shape == (10, 10) and m.stored_entries == 50  # it is 050_nonzeros.mtx


def test_broken_archives_give_one_line_errors(tree: Path) -> None:
    sources = _by_name(discover([tree]).sources)
    with pytest.raises(MatrixFileError, match="cannot read archive"):
        load_source(sources["junk"])
    with pytest.raises(MatrixFileError, match="archive holds no NoMain/NoMain.mtx"):
        peek_source(sources["NoMain"])


def test_missing_root_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MatrixFileError, match="no such file or directory"):
        discover([tmp_path / "nowhere"])


def test_size_filter_bounds() -> None:
    f = SizeFilter(min_rows=10, max_rows=100, max_nnz=500)
    assert f.active and not SizeFilter().active
    assert f.accepts(10, 500) and f.accepts(100, 0)
    assert not f.accepts(9, 1) and not f.accepts(101, 1) and not f.accepts(50, 501)


def test_an_archive_without_its_matrix_is_listed_with_aux_too(tmp_path: Path) -> None:
    """With --aux an archive is listed by its members; one holding no NAME/NAME.mtx (none
    at all, or only other files) still lists that matrix, so that loading it records
    what the archive lacks rather than the archive being dropped without a word."""
    import io
    import tarfile

    with tarfile.open(tmp_path / "Empty.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("Empty/README.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    for aux in (False, True):
        [source] = discover([tmp_path], include_aux=aux).sources
        assert source.member == "Empty/Empty.mtx", aux
