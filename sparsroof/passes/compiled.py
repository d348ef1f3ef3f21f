"""The package's one door to numba: every compiled kernel is made with the decorators
here, so that numba is imported only by code that runs a compiled pass and its cache of
compiled kernels goes to sparsroof's cache folder (:func:`sparsroof.caching.folder.cache_dir`,
``numba`` under it), never beside the installed sources: files written into an installed
package outlive an uninstall, and a folder left behind there hides an in-place install of
another copy. A user's own ``NUMBA_CACHE_DIR`` is respected. Nothing in the process's
environment is changed.

Importing this module imports numba (about a second with its cached kernels).
"""

from __future__ import annotations

import os
from typing import Any

import numba
from numba import get_num_threads, prange
from numba.core import config

from ..caching.folder import cache_dir

__all__ = ["njit", "prange", "get_num_threads"]


def njit(*args: Any, **kwargs: Any) -> Any:
    """numba's ``njit``, with the cache folder set first: numba chooses a kernel's cache
    folder when the kernel is decorated (and may have re-read its settings since the last
    one, where the environment changed)."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        config.CACHE_DIR = str(cache_dir() / "numba")  # type: ignore[attr-defined]
    return numba.njit(*args, **kwargs)
