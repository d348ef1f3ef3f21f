"""Where sparsroof keeps what it caches: the measured structure of files it read, the
answers of commands run again, the specs parsed before, and the compiled kernels.

Its entries are JSON, read by :func:`read_json` and written whole by
:func:`write_whole`. The folder is ``$SPARSROOF_CACHE_DIR``, else
``$XDG_CACHE_HOME/sparsroof``, else ``~/.cache/sparsroof``. The compiled kernels go to
its ``numba`` folder (:mod:`sparsroof.passes.compiled`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["RACY_NS", "cache_dir", "read_json", "write_whole"]

#: a file changed this soon before its times were read (nanoseconds) may change again
#: without its times changing (a second write within the file system's timestamp
#: granularity): what was kept of it then is not trusted
RACY_NS = 2_000_000_000


def cache_dir() -> Path:
    """The cache folder (see the module docstring).

    >>> import os
    >>> before = os.environ.get("SPARSROOF_CACHE_DIR")
    >>> os.environ["SPARSROOF_CACHE_DIR"] = "/tmp/somewhere"
    >>> str(cache_dir())
    '/tmp/somewhere'
    >>> if before is None: del os.environ["SPARSROOF_CACHE_DIR"]
    ... else: os.environ["SPARSROOF_CACHE_DIR"] = before
    """
    own = os.environ.get("SPARSROOF_CACHE_DIR")
    if own:
        return Path(own)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sparsroof"



def read_json(path: str | Path) -> Any:
    """The JSON document at ``path``, or None when it is missing or cannot be read."""
    import json

    try:
        return json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None


def write_whole(path: str | Path, text: str, suffix: str = "") -> bool:
    """Write ``text`` to ``path`` whole or not at all (a temporary file beside it, named
    ``.tmp-...`` and ending in ``suffix``, then a rename), making its folder; whether it
    was written (a cache that cannot be written is left alone)."""
    import contextlib
    import tempfile

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=suffix)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        return False
    return True
