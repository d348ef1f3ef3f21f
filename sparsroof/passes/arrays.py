"""Whole-array helpers shared by the compiled passes.

- :func:`distinct`: sorted distinct values of an integer array, a sort and a neighbour
  compare (numpy >= 2.3's :func:`numpy.unique` hashes by default, at about a microsecond
  per element on this project's machines: twenty times slower than sorting once);
- :func:`compiled`: an ahead-of-time build of a package's passes (a C extension), or
  None where it was not built or is stale;
- :func:`two_threads`: whether the passes that can split their work over a second thread
  do (:func:`one_thread` says no for a process that is one of as many batch workers as
  there are cores, where the other worker already has the second core; :func:`beside`
  says no while a thread of the process's own, an import ahead of a figure, keeps the
  second core of a two-core host busy).
"""

from __future__ import annotations

import importlib
import os
import threading
from functools import cache
from types import ModuleType

import numpy as np

__all__ = ["distinct", "compiled", "ROUTES", "check_route", "two_threads", "one_thread",
           "beside"]

#: [whether a pass may run on a second thread], for this process
_SECOND_THREAD = [True]
#: threads of this process that keep a core busy while they live (see :func:`beside`)
_BESIDE: list[threading.Thread] = []


@cache
def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity call on this system
        return os.cpu_count() or 1


def two_threads() -> bool:
    """Whether a pass may split its work over a second thread in this process: not in a
    batch worker of as many as cores (:func:`one_thread`), nor on a host of two cores
    while a thread :func:`beside` the passes has the other one."""
    if not _SECOND_THREAD[0]:
        return False
    return not (_cores() <= 2 and any(t.is_alive() for t in _BESIDE))


def beside(thread: threading.Thread) -> None:
    """Count ``thread`` (started by the caller) as a core's work while it lives: an
    import of matplotlib ahead of a figure, half a second of Python. On two cores the
    passes then keep to their calling thread; two threads of theirs beside it would
    share the two cores three ways (``spy`` of 10M entries: 0.86 s against 0.96 s)."""
    _BESIDE[:] = [t for t in _BESIDE if t.is_alive()] + [thread]


def one_thread() -> None:
    """Every pass of this process on its calling thread alone: for one of as many worker
    processes as cores, where a second thread would contend with the other worker (40
    files of 0.5-1M entries on 2 cores and 2 workers: 3.1-3.2 s against 3.35-3.46 s)."""
    _SECOND_THREAD[0] = False


#: the routes of a compiled pass, one vocabulary for every pass: a pass offers some of them
#: and refuses the others by name
ROUTES = {
    "compiled": "the C build where it was built, else the pass's portable route",
    "native": "the C build (an error where it was not built)",
    "numba": "numba, compiled on first use and cached",
    "numpy": "whole-array numpy",
}


def check_route(route: str, offered: tuple[str, ...], what: str) -> None:
    """Refuse a route that :data:`ROUTES` does not name, or that the pass ``what`` does
    not offer.

    >>> check_route("numba", ("compiled", "native", "numpy"), "the strip counts")
    Traceback (most recent call last):
    ...
    ValueError: the strip counts have no numba route (they offer compiled, native, numpy)
    """
    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r} (routes are {', '.join(ROUTES)})")
    if route not in offered:
        raise ValueError(f"{what} have no {route} route (they offer {', '.join(offered)})")


def compiled(name: str, version: int) -> ModuleType | None:
    """The extension module ``name`` if it is built and its ``KERNEL_VERSION`` is
    ``version`` (a build of older passes is not used), else None. With
    ``SPARSROOF_NO_NATIVE`` set, always None: the package runs as it does where no C
    compiler built the extensions (numba and numpy), which is how that case is tested.

    >>> compiled("sparsroof.no_such_extension", 1) is None
    True
    """
    if os.environ.get("SPARSROOF_NO_NATIVE"):
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return module if getattr(module, "KERNEL_VERSION", None) == version else None


def distinct(keys: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``keys`` (the input is not changed).

    >>> distinct(np.array([5, 1, 5, 3, 1])).tolist()
    [1, 3, 5]
    """
    keys = np.sort(keys)
    return keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if keys.size else keys
