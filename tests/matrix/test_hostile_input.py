"""Hostile and unusual input files: each ends in a result or a one-line MatrixFileError,
never a native crash, a traceback, a hang or a huge allocation.

Files that used to crash the parser natively are loaded in a child process, so that a
regression fails this test instead of killing the test run.
"""

from __future__ import annotations

import gzip
import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest

from sparsroof.errors import MatrixFileError
from sparsroof.matrix import limits
from sparsroof.matrix.collection import discover, load_source, peek_source
from sparsroof.matrix.mtx import load, peek

from ..conftest import DATA, fresh_python, sparsroof

COO = b"%%MatrixMarket matrix coordinate real general\n"
ARRAY = b"%%MatrixMarket matrix array real general\n"

#: inputs that once crashed the parser (SIGSEGV, SIGFPE), and what each must give now:
#: a shape it loads as, or a word of its error
NATIVE = {
    "nul_at_end.mtx": (COO + b"1 1 1\n1 1 1\0", "NUL"),
    "nul_then_newline.mtx": (COO + b"2 2 2\n1 1 1\0\n2 2 1\n", "NUL"),
    "crlf_bare_cr_at_end.mtx": (COO.replace(b"\n", b"\r\n") + b"2 2 2\r\n1 1 1\r\n2 2 1\r",
                                (2, 2)),
    "space_after_last_value.mtx": (COO + b"1 1 1\n1 1 1 ", (1, 1)),
    "tab_after_last_value.mtx": (COO + b"1 1 1\n1 1 1\t", (1, 1)),
    "extra_token_last_line.mtx": (COO + b"1 1 1\n1 1 1 5", (1, 1)),
    "array_extra_tokens_unterminated.mtx": (ARRAY + b"2 1\n1\n2 3 4", (2, 1)),
    "array_zero_rows_with_value.mtx": (ARRAY + b"0 2\n1\n", "value lines"),
    "array_zero_rows.mtx": (ARRAY + b"0 2\n", (0, 2)),
    "array_zero_by_zero.mtx": (ARRAY + b"0 0\n", (0, 0)),
    "nul_in_gz.mtx.gz": (COO + b"1 1 1\n1 1 1\0", "NUL"),
    "bare_cr_gz.mtx.gz": (COO + b"1 1 1\n1 1 1\r", (1, 1)),
}

_CHILD = """
import json, sys
from sparsroof.errors import MatrixFileError
from sparsroof.matrix.mtx import load
for path in sys.argv[1:]:
    try:
        m = load(path)
        print(json.dumps([path, list(m.shape), int(m.stored_entries)]), flush=True)
    except MatrixFileError as err:
        print(json.dumps([path, str(err)]), flush=True)
"""


def _write(path: Path, data: bytes) -> Path:
    if path.name.endswith(".gz"):
        with gzip.open(path, "wb") as handle:
            handle.write(data)
    else:
        path.write_bytes(data)
    return path


def test_inputs_that_crashed_the_parser_now_load_or_fail_cleanly(tmp_path: Path) -> None:
    paths = [str(_write(tmp_path / name, data)) for name, (data, _) in NATIVE.items()]
    out = fresh_python(_CHILD, *paths, timeout=120)
    done = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:], done[-1:])
    assert len(done) == len(NATIVE)
    for (path, *rest), (name, (_, expected)) in zip(done, NATIVE.items(), strict=True):
        assert Path(path).name == name
        if isinstance(expected, tuple):
            assert rest and tuple(rest[0]) == expected, (name, rest)
        else:
            message = rest[0]
            assert message.startswith(path) and expected in message, (name, message)
            assert "\n" not in message


def test_a_last_line_without_newline_keeps_its_entry(tmp_path: Path) -> None:
    m = load(_write(tmp_path / "a.mtx", COO + b"2 2 2\n1 1 3\n2 2 4 "))
    assert m.row.tolist() == [0, 1] and m.values is not None
    assert m.values.tolist() == [3.0, 4.0]


@pytest.mark.parametrize(("body", "word"), [
    (b"3 3 1\n99999999999999999999 1 1\n", "64 bits"),
    (b"99999999999999999999 1 1\n1 1 1\n", "above 2"),
    (b"3 9223372036854775808 1\n1 1 1\n", "above 2"),
    (b"2 1 " + b"1" * 5000 + b"\n1 1 1\n", "above 2"),
    (b"-3 3 1\n1 1 1\n", "non-negative"),
    (b"3 3\n1 1 1\n", "3 non-negative integers"),
])
def test_numbers_past_64_bits_or_malformed_sizes_are_clean_errors(tmp_path: Path, body: bytes,
                                                                   word: str) -> None:
    with pytest.raises(MatrixFileError, match=word):
        load(_write(tmp_path / "a.mtx", COO + body))


@pytest.mark.parametrize("size_line", [b"3, 3, 18446744073709551617\n",
                                       b"3, 3, " + b"7" * 5000 + b"\n",
                                       b"3, 9223372036854775808, 1\n", b"3, -1, 1\n"])
def test_smtx_sizes_past_64_bits_are_clean_errors(tmp_path: Path, size_line: bytes) -> None:
    path = _write(tmp_path / "a.smtx", size_line + b"0 0 0 1\n0\n")
    with pytest.raises(MatrixFileError, match="size"):
        load(path)


def test_complex_matrix_with_more_than_2_31_columns_loads(tmp_path: Path) -> None:
    text = b"%%MatrixMarket matrix coordinate complex general\n2 3000000000 1\n1 7 1 2\n"
    m = load(_write(tmp_path / "c.mtx", text), max_memory=1e15)
    assert m.shape == (2, 3_000_000_000) and m.col.tolist() == [6]
    assert m.values is not None and m.values.dtype == np.complex128
    assert m.values.tolist() == [1 + 2j]


@pytest.mark.parametrize("size_line", [b"3 3000000000 1\n", b"1000000000 1 1\n",
                                       b"3 3 300000000\n", b"100000000 100000000 1\n"])
def test_huge_declared_sizes_are_refused_before_reading(tmp_path: Path,
                                                         size_line: bytes) -> None:
    path = _write(tmp_path / "h.mtx", COO + size_line + b"1 1 1\n")
    with pytest.raises(MatrixFileError, match="too large to load: needs about .* "
                                              "max_memory allows 1 GiB"):
        load(path, max_memory=2**30)


def test_the_limit_named_is_the_one_that_binds(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "memory_headroom", lambda: (2**30, "cgroup memory limit"))
    path = _write(tmp_path / "h.mtx", COO + b"3 3000000000 1\n1 1 1\n")
    with pytest.raises(MatrixFileError, match="the cgroup memory limit leaves 1 GiB"):
        load(path)


def test_an_address_space_limit_is_seen() -> None:
    code = ("import resource\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, hard))\n"
            "from sparsroof.matrix.limits import memory_headroom\n"
            "print(*memory_headroom(), sep='|')\n")
    out = fresh_python(code, timeout=60, check=True)
    have, why = out.stdout.strip().split("|")
    # 3 GiB minus what the interpreter has mapped already, unless a tighter limit binds
    assert int(have) < 3 * 2**30
    if why != "address-space limit (ulimit -v)":
        assert why in ("available memory", "cgroup memory limit")


def test_estimate_counts_rows_and_columns() -> None:
    # 32 bytes per row and per column (with one extra of each), none per missing entry
    assert limits.estimate_memory(10**6, 1, 0) == 32 * (10**6 + 1 + 2)
    assert limits.estimate_memory(1, 10**6, 0) == limits.estimate_memory(10**6, 1, 0)


def test_a_compressed_comment_bomb_stops_at_the_header_limit(tmp_path: Path) -> None:
    path = tmp_path / "bomb.mtx.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(COO)
        block = (b"%" + b"x" * 1023 + b"\n") * 1024  # 1 MiB of comments
        for _ in range(70):
            handle.write(block)
        handle.write(b"1 1 1\n1 1 1\n")
    assert path.stat().st_size < 1 << 20
    with pytest.raises(MatrixFileError, match="64 MiB of comments"):
        peek(path)


def test_a_compressed_body_may_not_expand_past_its_declared_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "blank.mtx.gz", COO + b"2 2 1\n1 1 1\n" + b" \n" * (10 << 20))
    with pytest.raises(MatrixFileError, match="expands to more than"):
        load(path)


def test_a_line_longer_than_the_limit_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "long.mtx.gz", COO + b"2 2 1\n1 1 1" + b"0" * (2 << 20) + b"\n")
    with pytest.raises(MatrixFileError, match="longer than 1 MiB"):
        load(path)


def test_an_archive_with_one_huge_line_is_refused_while_planning(tmp_path: Path) -> None:
    folder = tmp_path / "tree" / "Group"
    folder.mkdir(parents=True)
    member = tmp_path / "Name.mtx"
    member.write_bytes(b"%" * (4 << 20))
    with tarfile.open(folder / "Name.tar.gz", "w:gz") as tar:
        tar.add(member, arcname="Name/Name.mtx")
    (source,) = discover([tmp_path / "tree"]).sources
    with pytest.raises(MatrixFileError, match="longer than 1 MiB"):
        peek_source(source)
    with pytest.raises(MatrixFileError, match="longer than 1 MiB"):
        load_source(source)


def test_array_symmetric_with_missing_values_is_refused(tmp_path: Path) -> None:
    text = b"%%MatrixMarket matrix array real symmetric\n3 3\n1\n"
    with pytest.raises(MatrixFileError, match="has 1 value lines.*needs 6"):
        load(_write(tmp_path / "s.mtx", text))
    full = b"%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n"
    m = load(_write(tmp_path / "f.mtx", full))
    assert m.values is not None and m.values.reshape(2, 2).tolist() == [[1, 2], [2, 3]]


def test_symmetric_files_must_be_square(tmp_path: Path) -> None:
    text = b"%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n2 1 1\n"
    with pytest.raises(MatrixFileError, match="must be square"):
        load(_write(tmp_path / "s.mtx", text))


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_valid_files_the_parser_refused_on_its_own(tmp_path: Path, suffix: str) -> None:
    upper = b"%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL\n2 2 1\n2 1 5\n"
    m = load(_write(tmp_path / f"upper{suffix}", upper))
    assert (m.shape, m.row.tolist(), m.col.tolist()) == ((2, 2), [1], [0])
    spaced = COO + b"3 3 2\n1 1 1\n\n% a note among the entries\n   %another\n3 2 5\n"
    m = load(_write(tmp_path / f"notes{suffix}", spaced))
    assert m.row.tolist() == [0, 2] and m.col.tolist() == [0, 1]


def test_vectors_read_as_one_column(tmp_path: Path) -> None:
    dense = b"%%MatrixMarket vector array real general\n3\n1\n2\n3\n"
    m = load(_write(tmp_path / "v.mtx", dense))
    assert m.shape == (3, 1) and m.values is not None and m.values.tolist() == [1, 2, 3]
    sparse = b"%%MatrixMarket vector coordinate integer general\n5 1\n4 9\n"
    m = load(_write(tmp_path / "w.mtx", sparse))
    assert (m.shape, m.row.tolist(), m.col.tolist()) == ((5, 1), [3], [0])


def test_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "x.mtx"
    os.mkfifo(fifo)
    with pytest.raises(MatrixFileError, match="not a regular file"):
        load(fifo)


def test_an_archive_given_to_load_points_to_batch(tmp_path: Path) -> None:
    archive = tmp_path / "x.tar.gz"
    with tarfile.open(archive, "w:gz"):
        pass
    with pytest.raises(MatrixFileError, match="sparsroof batch"):
        load(archive)


def test_analyze_keeps_the_good_results_around_a_file_that_crashed(tmp_path: Path) -> None:
    good = _write(tmp_path / "a.mtx", COO + b"2 2 1\n1 1 1\n")
    bad = _write(tmp_path / "bad.mtx", COO + b"1 1 1\n1 1 1\0")
    other = _write(tmp_path / "b.mtx", COO + b"3 3 1\n3 3 1\n")
    out = sparsroof("analyze", str(good), str(bad), str(other), "-O", "json")
    assert out.returncode == 1, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"sparsroof: error: {bad}: holds a NUL byte at byte 57: not a text Matrix Market "
        f"file"]
    names = [r["matrix"]["name"] for r in json.loads(out.stdout)["matrices"]]
    assert names == ["a", "b"]


def test_analyze_max_memory_option(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.mtx", COO + b"1000 1000 1\n1 1 1\n")
    run = ["analyze", str(path), "-O", "csv"]
    small = sparsroof(*run, "--max-memory", "1KiB")
    assert small.returncode == 1 and "--max-memory allows 1 KiB" in small.stderr
    bad = sparsroof(*run, "--max-memory", "lots")
    assert bad.returncode == 2 and "--max-memory" in bad.stderr


@pytest.mark.parametrize("comments", [0, 3])
def test_a_file_cut_inside_its_last_line_names_that_line(tmp_path: Path,
                                                         comments: int) -> None:
    """The parser reads the entries behind a rewritten two-line header: its line numbers
    are moved back onto the file's own, comment lines before the size line counted."""
    lines = ["%%MatrixMarket matrix coordinate real general",
             *(f"% comment {k}" for k in range(comments)), "4 4 4",
             "1 1 1.5", "2 2 2.5", "3 3 3.5", "4 4"]  # the last entry cut before its value
    path = tmp_path / "cut.mtx"
    path.write_text("\n".join(lines))  # no newline after the cut
    with pytest.raises(MatrixFileError, match=rf"line {len(lines)}: "):
        load(path)


def test_a_byte_order_mark_or_utf16_is_named(tmp_path: Path) -> None:
    """A text editor's byte-order mark before the banner, or a file saved as UTF-16, is
    said as such, not as a missing banner or a NUL byte."""
    text = (DATA / "lap2d_64.mtx").read_text(encoding="ascii")
    bom, utf16 = tmp_path / "bom.mtx", tmp_path / "u16.mtx"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("ascii"))
    utf16.write_bytes(text.encode("utf-16"))
    for path, said in ((bom, "starts with a UTF-8 byte-order mark (bytes EF BB BF)"),
                       (utf16, "is UTF-16 text (it starts with bytes FF FE)")):
        out = sparsroof("analyze", str(path))
        assert out.returncode != 0 and out.stderr.count("\n") == 1, out.stderr
        assert said in out.stderr and "plain ASCII" in out.stderr, out.stderr


def test_a_binary_file_given_for_text_is_named_by_kind(tmp_path: Path) -> None:
    png = tmp_path / "spec.yaml"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    out = sparsroof("hw", "show", str(png))
    assert out.returncode != 0 and out.stderr == f"sparsroof: error: {png}: is a PNG image, " \
        "not text\n", out.stderr
