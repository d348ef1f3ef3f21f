"""Finding matrices in directory trees laid out like the SuiteSparse Matrix Collection.

Accepted files: ``.mtx``, ``.mtx.gz``, ``.smtx`` and SuiteSparse archives
``Group/Name.tar.gz`` (also ``.tgz`` and ``.tar``) that hold ``Name/Name.mtx`` beside
auxiliary files. Archives are read as a stream, never unpacked to disk.

Auxiliary files follow the collection's naming: inside a directory ``Name`` (unpacked or
in an archive) that holds ``Name.mtx``, every other ``Name_*.mtx`` (``Name_b.mtx``,
``Name_coord.mtx``, ``Name_nodename.mtx``, ...) belongs to the problem ``Name`` rather
than being a matrix of its own. They are skipped unless asked for.

One file's problem never stops a walk: a file that cannot be looked at (a dangling link,
a file gone or unreadable) and a folder that cannot be listed become a :class:`Source`
with its ``problem`` set, which planning records as that file's failure.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import tarfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

from ..errors import MatrixFileError
from .mmbody import body_budget, read_body
from .mmheader import MMHeader, read_mm_header
from .mtx import MATRIX_SUFFIXES, Header, Matrix, check_header, load, peek

__all__ = [
    "ARCHIVE_SUFFIXES",
    "Source",
    "SizeFilter",
    "Discovery",
    "discover",
    "peek_source",
    "load_source",
]

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
_ARCHIVE_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error)


@dataclass(frozen=True)
class Source:
    """One matrix to analyse: a file, or a member of a tar archive (``member`` set)."""

    path: str  # absolute path of the file on disk
    name: str  # the matrix's name (SuiteSparse: Name)
    size: int  # bytes of the file on disk (the whole archive for members)
    mtime_ns: int
    member: str = ""
    auxiliary: bool = False
    problem: str = ""  # why the walk could not look at it (a dangling link, say)

    @property
    def label(self) -> str:
        """How the matrix is named in messages: ``path`` or ``archive::member``."""
        return f"{self.path}::{self.member}" if self.member else self.path


@dataclass(frozen=True)
class SizeFilter:
    """Bounds on the rows and on the entries a header declares (None: no bound)."""

    min_rows: int | None = None
    max_rows: int | None = None
    min_nnz: int | None = None
    max_nnz: int | None = None

    def accepts(self, rows: int, entries: int) -> bool:
        """True when ``rows`` and ``entries`` lie within every bound that is set.

        >>> SizeFilter(max_rows=100).accepts(50, 10**6), SizeFilter(min_nnz=5).accepts(9, 4)
        (True, False)
        """
        checks = ((self.min_rows, rows, 1), (self.max_rows, rows, -1),
                  (self.min_nnz, entries, 1), (self.max_nnz, entries, -1))
        return all(bound is None or (value - bound) * sign >= 0 for bound, value, sign in checks)

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.min_rows, self.max_rows, self.min_nnz,
                                           self.max_nnz))


@dataclass
class Discovery:
    """What a walk found: matrices to analyse and auxiliary files left out."""

    sources: list[Source] = field(default_factory=list)
    auxiliary: list[Source] = field(default_factory=list)


def _suffix(name: str) -> str | None:
    for suffix in (*ARCHIVE_SUFFIXES, *MATRIX_SUFFIXES):
        if name.endswith(suffix):
            return suffix
    return None


def _stem(name: str) -> str:
    suffix = _suffix(name)
    return name[: -len(suffix)] if suffix else name


def _is_auxiliary(stem: str, problem: str, stems: set[str]) -> bool:
    """``Name_b`` is auxiliary in a directory ``Name`` that also holds ``Name``.

    >>> _is_auxiliary("west_b", "west", {"west", "west_b"})
    True
    >>> _is_auxiliary("west_b", "other", {"west", "west_b"})
    False
    """
    return stem != problem and problem in stems and stem.startswith(problem + "_")


def _file_source(path: Path, name: str, member: str = "") -> Source:
    try:
        st = path.stat()
    except FileNotFoundError:
        problem = ("a link to a missing file" if path.is_symlink()
                   else "no such file (removed while the folder was read)")
        return Source(str(path), name, 0, 0, member, problem=problem)
    except OSError as err:
        return Source(str(path), name, 0, 0, member, problem=f"cannot read: "
                      f"{err.strerror or err}")
    if not stat.S_ISREG(st.st_mode):  # a pipe or a device: opening it may wait forever
        kind = ("a pipe" if stat.S_ISFIFO(st.st_mode) else "a folder"
                if stat.S_ISDIR(st.st_mode) else "a device or socket")
        return Source(str(path), name, 0, 0, member, problem=f"is {kind}, not a file")
    return Source(str(path), name, st.st_size, st.st_mtime_ns, member)


def _archive_members(path: Path, problem: str) -> list[str]:
    """Matrix Market members of an archive under ``problem/`` (one pass over the stream)."""
    try:
        with tarfile.open(path, "r|*") as tar:
            return [info.name.removeprefix("./") for info in tar
                    if info.isfile() and info.name.endswith(".mtx")]
    except _ARCHIVE_ERRORS:
        # listed as the primary member; loading it reports what is wrong with the archive
        return [f"{problem}/{problem}.mtx"]


def _archive_sources(path: Path, include_aux: bool) -> Iterator[Source]:
    problem = _stem(path.name)
    primary = f"{problem}/{problem}.mtx"
    base = _file_source(path, problem, primary)
    if not include_aux or base.problem:
        yield base
        return
    members = _archive_members(path, problem)
    if primary not in members:  # loading it says what the archive lacks: never dropped
        yield base
    stems = {_stem(Path(m).name) for m in members if Path(m).parent.name == problem}
    for member in members:
        stem = _stem(Path(member).name)
        aux = Path(member).parent.name == problem and _is_auxiliary(stem, problem, stems)
        yield replace(base, name=stem, member=member, auxiliary=aux)


def _directory_sources(directory: Path, names: Sequence[str], include_aux: bool
                       ) -> Iterator[Source]:
    matrix_names = [n for n in names if _suffix(n) in MATRIX_SUFFIXES]
    stems = {_stem(n) for n in matrix_names}
    for name in names:
        suffix = _suffix(name)
        if suffix in ARCHIVE_SUFFIXES:
            yield from _archive_sources(directory / name, include_aux)
        elif suffix is not None:
            stem = _stem(name)
            source = _file_source(directory / name, stem)
            yield replace(source, auxiliary=_is_auxiliary(stem, directory.name, stems))


def _walk(root: Path, include_aux: bool) -> Iterator[Source]:
    if not root.exists():
        raise MatrixFileError(root, "no such file or directory")
    if root.is_file():
        if _suffix(root.name) in ARCHIVE_SUFFIXES:
            yield from _archive_sources(root, include_aux)
        else:
            yield _file_source(root, _stem(root.name))
        return
    unlisted: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=unlisted.append):
        dirnames.sort()
        yield from _unlisted(unlisted)
        yield from _directory_sources(Path(dirpath), sorted(filenames), include_aux)
    yield from _unlisted(unlisted)


def _unlisted(errors: list[OSError]) -> Iterator[Source]:
    """A folder the walk could not list, as a source that fails with the reason."""
    while errors:
        err = errors.pop(0)
        folder = Path(err.filename or "?")
        yield Source(str(folder), folder.name, 0, 0,
                     problem=f"cannot list the folder: {err.strerror or err}")


def _matches(source: Source, patterns: Sequence[str]) -> bool:
    return not patterns or any(
        fnmatch.fnmatchcase(source.name, p) or fnmatch.fnmatchcase(source.label, p)
        for p in patterns)


def discover(roots: Iterable[str | Path], *, include_aux: bool = False,
             names: Sequence[str] = ()) -> Discovery:
    """Find the matrices under ``roots`` (directories are searched recursively).

    ``names`` are glob patterns matched against the matrix name or its full label; a
    matrix is kept when any pattern matches. A root that does not exist is an error.
    Each matrix is found once, even when roots overlap.
    """
    found = Discovery()
    seen: set[tuple[str, str]] = set()
    for root in roots:
        for source in _walk(Path(root).resolve(), include_aux):
            key = (source.path, source.member)
            if key in seen or not _matches(source, names):
                continue
            seen.add(key)
            if source.auxiliary and not include_aux:
                found.auxiliary.append(source)
            else:
                found.sources.append(source)
    return found


@contextmanager
def _member(source: Source) -> Iterator[IO[bytes]]:
    """The archive member's bytes as a stream; archive faults become MatrixFileError."""
    try:
        with tarfile.open(source.path, "r|*") as tar:
            for info in tar:
                if info.name.removeprefix("./") == source.member and info.isfile():
                    handle = tar.extractfile(info)
                    assert handle is not None  # a regular file always has a stream
                    yield handle
                    return
    except _ARCHIVE_ERRORS as err:
        raise MatrixFileError(source.label, f"cannot read archive: {err}") from None
    raise MatrixFileError(source.path, f"archive holds no {source.member}")


def _read_mm_header(source: Source, stream: IO[bytes]) -> MMHeader:
    """Read the banner, comments and size line of an archive member (with limits)."""
    try:
        return read_mm_header(stream, source.label)
    except _ARCHIVE_ERRORS as err:
        raise MatrixFileError(source.label, f"cannot read archive: {err}") from None


def _as_header(source: Source, mm: MMHeader) -> Header:
    return Header(source.label, mm.format, mm.field, mm.symmetry, mm.rows, mm.cols,
                  mm.entries)


def peek_source(source: Source) -> Header:
    """The header of ``source`` (for archives: streamed up to the member's size line)."""
    if not source.member:
        return peek(source.path)
    with _member(source) as stream:
        return _as_header(source, _read_mm_header(source, stream))


def _read_member(source: Source, stream: IO[bytes], max_memory: float | None) -> Matrix:
    mm = _read_mm_header(source, stream)
    header = _as_header(source, mm)
    check_header(header, max_memory, source.label)
    try:
        row, col, values = read_body(mm, stream, source.label, body_budget(mm))
    except _ARCHIVE_ERRORS as err:
        raise MatrixFileError(source.label, f"cannot read archive: {err}") from None
    return Matrix(source.name, source.label, header.rows, header.cols, row, col, values, header)


def load_source(source: Source, *, max_memory: float | None = None, values: bool = True
                ) -> Matrix:
    """Load ``source`` into a :class:`Matrix` (archive members straight from the stream),
    refusing it when its declared size needs more than the memory this process may use
    (or ``max_memory`` bytes); ``values`` as for :func:`~.mtx.load`."""
    if not source.member:
        return load(source.path, max_memory=max_memory, values=values)
    with _member(source) as stream:
        return _read_member(source, stream, max_memory)
