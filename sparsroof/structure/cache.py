"""A persistent cache of measured structures: a file analysed once is not parsed again.

An entry holds what :func:`~sparsroof.structure.features.measure` found in one file (its
:class:`Structure`) and the header fields a report shows. Its key is

* the file's content: XXH64 of its bytes (SHA-1 where the C extension is not built) and
  its size;
* the code that measured it: the sparsroof version, a hash of the source and build of the
  measuring modules (an edited checkout measures afresh) and the versions of numpy, scipy
  and fast_matrix_market;
* what was measured: the pattern features, or the counts only.

Hashing a file costs a small fraction of parsing it (0.07 s for 350 MB, where the parse
takes 1.7 s), but more than a cached analysis should. So a note per path keeps the file's
device, inode, size, mtime and ctime when it was last hashed, and the hash: while they are
unchanged the hash is taken from the note and the file is not read. Every write changes
the ctime, which no program can set back; a note made within :data:`RACY_NS` of the file's
last change is not trusted (a second write within the file system's timestamp granularity
could leave the times unchanged), and such a file is hashed again.

The cache lives in ``$SPARSROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparsroof``, else
``~/.cache/sparsroof``; it holds at most ``$SPARSROOF_CACHE_SIZE`` bytes (default
:data:`DEFAULT_LIMIT`), the least recently used entries going first. Entries are JSON, written
whole (to a temporary file, then renamed); one that cannot be read or does not match its
key is a miss, never an error, and so is a cache directory that cannot be written.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..caching.folder import RACY_NS, cache_dir, read_json, write_whole
from ..matrix.header import Header, name_of
from .codec import decode_structure, encode_structure
from .features import Structure, measure

if TYPE_CHECKING:  # the reader (and numpy) loads where a file is read: a hit reads none
    from ..matrix.mtx import Matrix, MatrixLike

__all__ = ["DEFAULT_LIMIT", "RACY_NS", "Measured", "cache_dir", "cache_limit", "fingerprint",
           "measured"]

#: the cache's size limit in bytes unless ``$SPARSROOF_CACHE_SIZE`` says otherwise
DEFAULT_LIMIT = 64 << 20
_ENTRIES, _NOTES = "structure", "files"
_SCHEMA = 1


@dataclass(frozen=True, eq=False)
class Measured:
    """A matrix's structure, and the matrix itself unless it came from the cache unasked."""

    name: str
    path: str
    header: Header
    structure: Structure
    matrix: Matrix | None


def _regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a regular file (False where it cannot even be looked up: a
    name too long, say; the loader then says why)."""
    try:
        return Path(path).is_file()
    except OSError:
        return False


def cache_limit() -> int:
    """The size limit in bytes: ``$SPARSROOF_CACHE_SIZE`` (a whole number), else the default."""
    try:
        return max(0, int(os.environ.get("SPARSROOF_CACHE_SIZE", DEFAULT_LIMIT)))
    except ValueError:
        return DEFAULT_LIMIT


def _native() -> Any:
    from .counts import native

    k = native()
    return k if k is not None and hasattr(k, "hash64") else None


#: bytes read at a time to hash a file: the file is read through one buffer, never mapped
#: whole, so hashing adds this much to the memory of the analysis that follows, not the
#: file's size (a mapped 350 MB file raised the peak by 320 MB; a buffer that stays in the
#: cache hashes as fast as the mapping did, within 0.05 s on such a file)
_HASH_CHUNK = 1 << 20


def _hash_file(path: str) -> str:
    """The content hash of the file at ``path``, named by its algorithm: xxh64 of each
    1 MiB chunk seeded with the hash of the chunks before it."""
    k = _native()
    with open(path, "rb", buffering=0) as handle:
        if k is None:
            import hashlib

            return "sha1-" + hashlib.file_digest(handle, "sha1").hexdigest()
        buffer = bytearray(_HASH_CHUNK)
        view = memoryview(buffer)
        digest = k.hash64(b"")
        while n := handle.readinto(buffer):
            digest = k.hash64(view[:n], digest)
        return f"xxh64c-{digest:016x}"


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _note_path(root: Path, path: str) -> Path:
    import hashlib  # here, not at import: an analysis without the cache needs none

    return root / _NOTES / (hashlib.sha1(path.encode("utf-8", "surrogatepass")).hexdigest()
                            + ".json")


def _write_json(path: Path, doc: Any) -> None:
    """Write ``doc`` whole or not at all; a cache that cannot be written is left alone."""
    write_whole(path, json.dumps(doc, separators=(",", ":")))


def fingerprint(path: str | os.PathLike[str], root: Path | None = None) -> tuple[str, int] | None:
    """(content hash, size) of the file at ``path``, from its note where the note still
    holds, else by reading it; None when it cannot be read or changed while being read."""
    root = root or cache_dir()
    path = os.path.abspath(os.fspath(path))
    try:
        before = os.stat(path)
        note_file = _note_path(root, path)
        note = read_json(note_file)
        stamp = _stamp(before)
        if (isinstance(note, dict) and note.get("path") == path and note.get("stamp") == stamp
                and note.get("hashed_ns", 0) - max(stamp[3:]) >= RACY_NS
                and isinstance(note.get("content"), str)):
            return note["content"], before.st_size
        hashed_ns = time.time_ns()
        content = _hash_file(path)
        if _stamp(os.stat(path)) != stamp:
            return None
    except (OSError, ValueError):
        return None
    _write_json(note_file, {"path": path, "stamp": stamp, "hashed_ns": hashed_ns,
                            "content": content})
    return content, before.st_size


@lru_cache(maxsize=1)
def _code() -> str:
    """A hash of what measures a matrix: this version, the source and build of the
    matrix and structure modules, and the numerical libraries' versions."""
    import hashlib

    digest = hashlib.sha1(__version__.encode())
    here = Path(__file__).resolve().parent
    for folder in (here, here.parent / "matrix"):
        for item in sorted(folder.iterdir()):
            if item.suffix in (".py", ".so", ".pyd", ".c"):
                digest.update(item.name.encode() + item.read_bytes())
    for package in ("numpy", "scipy", "fast_matrix_market"):
        digest.update(_dist_version(package).encode())
    return digest.hexdigest()[:16]


def _dist_version(package: str) -> str:
    """``package``'s installed distribution (name-version), read from the names of the
    metadata folders beside it (importlib.metadata would cost 40 ms)."""
    from importlib.util import find_spec

    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return f"{package} absent"
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(p.name for p in site.glob(f"{package}-*.*-info"))
    return " ".join(found) or f"{package} at {site}"


def _entry_path(root: Path, key: dict[str, Any]) -> Path:
    kind = "pattern" if key["pattern"] else "counts"
    return root / _ENTRIES / f"{key['code']}-{key['content']}-{key['size']}-{kind}.json"


def _get(root: Path, key: dict[str, Any]) -> tuple[Header, Structure] | None:
    path = _entry_path(root, key)
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != _SCHEMA or doc.get("key") != key:
        return None
    try:
        h = doc["header"]
        header = Header("", h["format"], h["field"], h["symmetry"], int(h["rows"]),
                        int(h["cols"]), int(h["entries"]))
        structure = decode_structure(doc["structure"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: evicted last
    return header, structure


def _put(root: Path, key: dict[str, Any], header: Header, s: Structure) -> None:
    doc = {"schema": _SCHEMA, "key": key, "header": {
        "format": header.format, "field": header.field,
        "symmetry": header.symmetry, "rows": header.rows, "cols": header.cols,
        "entries": header.entries}, "structure": encode_structure(s)}
    _write_json(_entry_path(root, key), doc)
    evict(root, cache_limit())


def evict(root: Path, limit: int) -> None:
    """Remove the least recently used entries and notes until the cache holds at most
    ``limit`` bytes."""
    files = []
    for sub in (_ENTRIES, _NOTES):
        with contextlib.suppress(OSError), os.scandir(root / sub) as found:
            for item in found:
                with contextlib.suppress(OSError):
                    st = item.stat()
                    files.append((st.st_mtime_ns, st.st_size, item.path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
        total -= size


def _reader() -> ModuleType:
    """The matrix reader, imported where a matrix is read (it loads numpy): a hit that
    does not keep the matrix reads none."""
    from ..matrix import mtx

    return mtx


def measured(matrix: MatrixLike, pattern: bool = True, *, cache: bool = True,
             need_matrix: bool = False, need_values: bool = False,
             max_memory: float | None = None) -> Measured:
    """The structure of ``matrix`` (a path, scipy matrix, array or :class:`Matrix`).

    A file's structure comes from the cache where it holds one for this content, code and
    ``pattern`` (the file is then not loaded unless ``need_matrix``); otherwise the file
    is loaded and measured and the structure stored. ``cache`` False neither reads nor
    writes the cache. Only a regular file is fingerprinted (a pipe is read once, by the
    loader, which refuses it); ``max_memory`` goes to :func:`sparsroof.matrix.mtx.load`.
    A file is read without its values (``load(values=False)``: the structure measures
    the same) unless ``need_values`` asks for them, to run kernels on the matrix.
    """
    if isinstance(matrix, (str, os.PathLike)) and (not cache or not _regular(matrix)):
        m = _reader().load(os.fspath(matrix), max_memory=max_memory, values=need_values)
        return Measured(m.name, m.path, m.header, measure(m, pattern=pattern), m)
    if not isinstance(matrix, (str, os.PathLike)):
        m = _reader().as_matrix(matrix)
        return Measured(m.name, m.path, m.header, measure(m, pattern=pattern), m)
    path = os.fspath(matrix)
    root = cache_dir()
    found = fingerprint(path, root) if os.access(path, os.R_OK) else None
    key = None
    if found is not None:
        key = {"code": _code(), "content": found[0], "size": found[1], "pattern": pattern}
        hit = _get(root, key)
        if hit is not None:
            kept = (_reader().load(path, max_memory=max_memory, values=need_values)
                    if need_matrix or need_values else None)
            return Measured(name_of(Path(path)), path, replace(hit[0], path=path), hit[1], kept)
    m = _reader().load(path, max_memory=max_memory, values=need_values)
    s = measure(m, pattern=pattern)
    if key is not None and fingerprint(path, root) == found:
        _put(root, key, m.header, s)
    return Measured(m.name, m.path, m.header, s, m)
