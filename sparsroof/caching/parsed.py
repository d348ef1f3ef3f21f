"""Parsed files kept: a YAML file read once is read back as JSON afterwards.

Every command reads a hardware spec, and parsing one costs about 0.01 s beside the 0.02 s
of importing PyYAML. The data of a file parsed before is kept in the cache folder
(:func:`~sparsroof.caching.folder.cache_dir`, its ``parsed`` folder, one entry per path
and kind: a file changed replaces its entry), keyed by what the file is (its path,
device, inode, size, modification and change times), what read it (``kind``), the
files of the code that parses it and this version of sparsroof, and read back with the
standard library's JSON reader (a command's ``--no-cache`` reads nothing back and keeps
nothing). Only data
that JSON holds exactly is kept (mappings with text keys, lists, text, numbers, true,
false and null): a file whose YAML builds anything else (a date, a set, a key that is a
number) is parsed every time. A file changed within
:data:`~sparsroof.caching.folder.RACY_NS` of its read is not kept (a second write within
the file system's timestamp granularity could leave its times unchanged). An entry that
cannot be read is a miss, never an error, and so is a cache folder that cannot be
written. The entries, a few kilobytes for each spec file used, are outside the structure
cache's size limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from .folder import RACY_NS, cache_dir, read_json, write_whole

__all__ = ["kept", "bypassed"]

_FOLDER = "parsed"


def kept(path: Any, parse: Callable[[], Any], kind: str, code: Sequence[str] = ()) -> Any:
    """``parse()``, the data of the file at ``path``, or what it gave the last time the
    same file was parsed for the same ``kind`` by the same ``code``: the modules that
    parse it (their files' sizes and modification times join the key, so an upgrade of
    the parser or an edit of the reading code parses afresh). ``path`` may be anything
    with a file system path (a resource inside a zip is parsed every time). Within
    :func:`bypassed` (a command's ``--no-cache``), nothing is read back nor kept.
    """
    key = None if _bypassed else _key(path, kind, code)
    if key is None:
        return parse()
    import hashlib  # here, not above: --no-cache needs none

    place = json.dumps([kind, os.path.abspath(os.fspath(path))]).encode()
    entry = cache_dir() / _FOLDER / f"{hashlib.sha256(place).hexdigest()[:32]}.json"
    doc = read_json(entry)
    if isinstance(doc, dict) and doc.get("key") == key and "data" in doc:
        return doc["data"]
    data = parse()
    _keep(entry, key, data)
    return data


_bypassed = False


@contextlib.contextmanager
def bypassed(when: bool = True) -> Iterator[None]:
    """Within it (when ``when``), :func:`kept` parses every file and keeps nothing."""
    global _bypassed
    before = _bypassed
    _bypassed = before or when
    try:
        yield
    finally:
        _bypassed = before


def _key(path: Any, kind: str, code: Sequence[str]) -> str | None:
    """What the data depends on, as text; None for a path that names no file of the file
    system, or one changed too recently to be trusted, or code whose files are not
    found."""
    try:
        name = os.fspath(path)
        st = os.stat(name)
        sources = [_source(module) for module in code]
    except (OSError, TypeError, ValueError, ImportError):
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return None
    return json.dumps([kind, __version__, sources, os.path.abspath(name), st.st_dev,
                       st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])


def _source(module: str) -> list[Any]:
    """(file, size, modification time) of ``module``'s file, found without importing it."""
    import importlib.util
    import sys

    loaded = sys.modules.get(module)
    origin = getattr(loaded, "__file__", None) if loaded is not None else None
    if origin is None:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
    if origin is None:
        raise ImportError(module)
    st = os.stat(origin)
    return [origin, st.st_size, st.st_mtime_ns]


def _keep(entry: Path, key: str, data: Any) -> None:
    """Write ``data`` under ``key`` when JSON holds it exactly; quietly not otherwise."""
    try:
        text = json.dumps({"key": key, "data": data}, allow_nan=False)
        if json.loads(text)["data"] != data:
            return
    except (TypeError, ValueError):
        return
    write_whole(entry, text)
