# mypy: disable-error-code="no-untyped-def"
"""Compiled cache simulation behind :mod:`sparsroof.corecost`.

The gathers of x in a row-ordered SpMV run through a hierarchy of set-associative LRU
caches, each level seeing only the misses of the level above. The matrix itself (values
and indices) streams through every level at ``stream`` lines per entry and is never
reused; rather than inserting those lines one by one, the simulation charges them to
each set evenly: an x line last used at entry t is still cached at entry j exactly when
the x lines of its set used since t, plus the streamed lines that reached its set since
t, number fewer than the ways. This is LRU with the stream spread evenly over the sets,
at the cost of one scan of the ways per access and level.

Compiled with numba and cached on disk, like :mod:`sparsroof._kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["line_misses"]


@njit(cache=True, nogil=True)
def line_misses(colidx, per_line, sets, ways, stream):
    """Misses of x lines at each level (cumulative: a miss at level l+1 was one at l).

    ``colidx``: the column of every entry in the order the kernel reads them;
    ``per_line``: x entries per cache line; ``sets``/``ways``: each level's geometry;
    ``stream``: matrix lines streamed per entry.
    """
    levels = sets.shape[0]
    most_ways = 1
    most_sets = 1
    for lv in range(levels):
        most_ways = max(most_ways, ways[lv])
        most_sets = max(most_sets, sets[lv])
    tags = np.full((levels, most_sets, most_ways), -1, np.int64)
    stamp = np.zeros((levels, most_sets, most_ways), np.int64)  # entry number + 1 of last use
    misses = np.zeros(levels, np.int64)
    for j in range(colidx.shape[0]):
        line = colidx[j] // per_line
        now = j + 1
        for lv in range(levels):
            s = line % sets[lv]
            w = ways[lv]
            found = -1
            oldest = 0
            for k in range(w):
                if tags[lv, s, k] == line:
                    found = k
                if stamp[lv, s, k] < stamp[lv, s, oldest]:
                    oldest = k
            if found >= 0:
                last = stamp[lv, s, found]
                newer = 0
                for k in range(w):
                    if stamp[lv, s, k] > last:
                        newer += 1
                streamed = (now - last) * stream / sets[lv]
                stamp[lv, s, found] = now
                if newer + streamed < w:
                    break  # a hit: the levels below never see this access
            else:
                tags[lv, s, oldest] = line
                stamp[lv, s, oldest] = now
            misses[lv] += 1
    return misses
