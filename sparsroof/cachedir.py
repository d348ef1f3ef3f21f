"""Where sparsroof keeps what it caches: the measured structure of files it read, and the
compiled kernels.

The folder is ``$SPARSROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparsroof``, else
``~/.cache/sparsroof``. The compiled kernels go to its ``numba`` folder, never beside the
installed sources: files written into the installed package outlive an uninstall, and a
folder left behind there hides an in-place install of another copy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir", "keep_compiled_kernels_here"]


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


def keep_compiled_kernels_here() -> None:
    """Point numba's cache of compiled kernels at ``cache_dir() / "numba"``, unless the
    user chose a folder (``NUMBA_CACHE_DIR``) or numba was imported already (it reads the
    setting once, on import); kernels compiled by other code in the same process are then
    cached there too."""
    if "NUMBA_CACHE_DIR" not in os.environ and "numba" not in sys.modules:
        os.environ["NUMBA_CACHE_DIR"] = str(cache_dir() / "numba")
