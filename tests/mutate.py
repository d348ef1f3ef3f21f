"""Mutations of matrix files, for the fuzz test and ``bench/fuzz_load.py``.

Seeds are small generated files of every Matrix Market kind (and ``.smtx``), plus the
real files of the shared corpus where it is present. A mutation is a function of a
random generator and the file's bytes; :func:`mutate` applies a few in a row.
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"

_BANNER = "%%MatrixMarket {} {} {} {}\n"

#: generated seed files: name -> bytes (gzip is applied when written, by suffix)
GENERATED: dict[str, bytes] = {
    "coo_real.mtx": (_BANNER.format("matrix", "coordinate", "real", "general")
                     + "% a comment\n4 5 5\n1 1 1.5\n2 3 -2e3\n4 5 7\n3 3 0\n1 5 1e-300\n"
                     ).encode(),
    "coo_sym.mtx": (_BANNER.format("matrix", "coordinate", "real", "symmetric")
                    + "3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n").encode(),
    "coo_pattern.mtx": (_BANNER.format("matrix", "coordinate", "pattern", "general")
                        + "3 4 3\n1 2\n2 4\n3 1\n").encode(),
    "coo_herm.mtx": (_BANNER.format("matrix", "coordinate", "complex", "hermitian")
                     + "2 2 2\n1 1 1 0\n2 1 3 -4\n").encode(),
    "coo_skew_int.mtx": (_BANNER.format("matrix", "coordinate", "integer", "skew-symmetric")
                         + "3 3 2\n2 1 5\n3 1 -7\n").encode(),
    "array_real.mtx": (_BANNER.format("matrix", "array", "real", "general")
                       + "2 3\n1\n2\n3\n4\n5\n6\n").encode(),
    "array_sym.mtx": (_BANNER.format("matrix", "array", "real", "symmetric")
                      + "3 3\n1\n2\n3\n4\n5\n6\n").encode(),
    "array_complex.mtx": (_BANNER.format("matrix", "array", "complex", "general")
                          + "2 1\n1 2\n3 4\n").encode(),
    "vector_coo.mtx": (_BANNER.format("vector", "coordinate", "real", "general")
                       + "5 2\n1 3\n5 4\n").encode(),
    "vector_array.mtx": (_BANNER.format("vector", "array", "integer", "general")
                         + "3\n7\n8\n9\n").encode(),
    "crlf.mtx": (_BANNER.format("matrix", "coordinate", "real", "general")
                 + "2 2 2\n1 1 1\n2 2 2\n").replace("\n", "\r\n").encode(),
    "coo_real.mtx.gz": (_BANNER.format("matrix", "coordinate", "real", "general")
                        + "3 3 3\n1 1 1\n2 2 2\n3 1 3\n").encode(),
    "tiny.smtx": b"3, 4, 4\n0 2 3 4\n0 3 1 2\n",
}

#: numbers that sit at the edges of what the parser and numpy hold
EXTREMES = (b"0", b"-1", b"1", b"2147483647", b"2147483648", b"4294967296",
            b"9223372036854775807", b"9223372036854775808", b"18446744073709551617",
            b"99999999999999999999", b"1e400", b"-1e400", b"nan", b"inf", b"-0",
            b"1" * 5000, b"0x10", b"1.5", b"+3", b"3000000000", b"100000000")

_WORDS = (b"matrix", b"vector", b"coordinate", b"array", b"real", b"integer", b"complex",
          b"pattern", b"double", b"general", b"symmetric", b"skew-symmetric", b"hermitian",
          b"MATRIX", b"bogus", b"%%MatrixMarket", b"%%MATRIXMARKET", b"")


def _at(rng: random.Random, data: bytes) -> int:
    return rng.randrange(len(data) + 1)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def flip_byte(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    i = rng.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]


def random_byte(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + bytes([rng.randrange(256)]) + data[i:]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:_at(rng, data)]


def insert_nul(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + b"\0" * rng.choice((1, 1, 2, 7)) + data[i:]


def insert_cr(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    return data[:i] + b"\r" + data[i:]


def end_without_newline(rng: random.Random, data: bytes) -> bytes:
    tail = rng.choice((b"", b" ", b"\t", b"\r", b"\0", b" 5", b" 1 2 3", b"\r\r"))
    return data.rstrip(b"\n") + tail


def huge_number(rng: random.Random, data: bytes) -> bytes:
    digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
    if not digits:
        return data + rng.choice(EXTREMES)
    i = rng.choice(digits)
    j = i
    while j < len(data) and (48 <= data[j] <= 57 or data[j] in b".eE+-"):
        j += 1
    return data[:i] + rng.choice(EXTREMES) + data[j:]


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines[i:i] = [lines[i]] * rng.choice((1, 2, 50))
    return b"".join(lines)


def delete_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def insert_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    new = rng.choice((b"\n", b"   \n", b"% note\n", b"%\n", b"  % indented\n", b"\r\n",
                      b"1 1 1\n", b"1\n", b"1 2 3 4 5\n", b"-1 -1 -1\n", b"x y z\n"))
    lines.insert(rng.randrange(len(lines) + 1), new)
    return b"".join(lines)


def change_word(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(min(len(lines), 3))
    words = lines[i].split(b" ")
    words[rng.randrange(len(words))] = rng.choice(_WORDS)
    lines[i] = b" ".join(words)
    return b"".join(lines)


def repeat_chunk(rng: random.Random, data: bytes) -> bytes:
    i = _at(rng, data)
    j = min(len(data), i + rng.randrange(1, 64))
    return data[:i] + data[i:j] * rng.choice((2, 10, 1000)) + data[j:]


MUTATIONS: tuple[Callable[[random.Random, bytes], bytes], ...] = (
    flip_byte, random_byte, truncate, insert_nul, insert_cr, end_without_newline,
    huge_number, duplicate_line, delete_line, insert_line, change_word, repeat_chunk,
)


def mutate(rng: random.Random, data: bytes, count: int | None = None) -> bytes:
    """``data`` after ``count`` (default 1 to 3) mutations drawn with ``rng``."""
    for _ in range(count if count is not None else rng.randint(1, 3)):
        data = rng.choice(MUTATIONS)(rng, data)
    return data


def corpus_seeds(max_bytes: int = 200_000) -> dict[str, bytes]:
    """Text of the corpus files up to ``max_bytes`` (decompressed), by name; {} without
    the corpus."""
    if not CORPUS.is_dir():
        return {}
    seeds = {}
    for path in sorted(CORPUS.iterdir()):
        if path.suffix == ".md" or path.stat().st_size > max_bytes:
            continue
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        seeds[path.name] = data
    return seeds


def write_case(path: Path, data: bytes, rng: random.Random | None = None) -> Path:
    """Write ``data`` to ``path``, gzipped for a ``.gz`` name (and then, now and then,
    with a damaged compressed stream)."""
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
        if rng is not None and rng.random() < 0.2:
            data = flip_byte(rng, data) if rng.random() < 0.5 else truncate(rng, data)
    path.write_bytes(data)
    return path
