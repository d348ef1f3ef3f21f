# mypy: disable-error-code="no-untyped-def"
"""Compiled cache simulation behind :mod:`sparsroof.host.core_cost`.

The gathers of x in a row-ordered SpMV run through a hierarchy of set-associative LRU
caches, each level seeing only the misses of the level above. The matrix itself (values
and indices) streams through every level at ``stream`` lines per entry and is never
reused; rather than inserting those lines one by one, the simulation charges them to
each set evenly: an x line last used at entry t is still cached at entry j exactly when
the x lines of its set used since t, plus the streamed lines that reached its set since
t, number fewer than the ways. This is LRU with the stream spread evenly over the sets,
at the cost of one scan of the ways per access and level.

A last level with many sets (a large L3) is simulated on an evenly spaced sample of
``SAMPLED_SETS`` of its sets and its misses scaled up (set sampling): the state of every
set would no longer fit the host's own caches, and each scattered access would cost
a miss of the simulator itself.

Compiled with numba and cached on disk, like :mod:`sparsroof.structure._jit`.
"""

from __future__ import annotations

import numpy as np

from ..passes.compiled import njit

__all__ = ["line_misses", "SAMPLED_SETS"]

SAMPLED_SETS = 4096


def line_misses(colidx, per_line, sets, ways, stream):
    """Misses of x lines at each level (cumulative: a miss at level l+1 was one at l).

    ``colidx``: the column of every entry in the order the kernel reads them;
    ``per_line``: x entries per cache line; ``sets``/``ways``: each level's geometry;
    ``stream``: matrix lines streamed per entry.
    """
    # each way holds its line and the entry number + 1 of its last use, side by side, in
    # 32 bits where the entries allow it: a set of 8 ways is then one 64-byte line
    small = colidx.shape[0] < 2**31 - 1 and (colidx.max(initial=0) // per_line) < 2**31 - 1
    every = max(1, int(sets[-1]) // SAMPLED_SETS) if len(sets) else 1
    kept = [int(n) for n in sets[:-1]] + [(int(sets[-1]) - 1) // every + 1 if len(sets) else 1]
    held = np.zeros((len(sets), max(kept), max(ways, default=1), 2),
                    np.int32 if small else np.int64)
    held[..., 0] = -1
    misses = _simulate(colidx, per_line, sets, ways, stream, held, every)
    if every > 1:
        misses[-1] *= every
    return misses


@njit(cache=True, nogil=True)
def _simulate(colidx, per_line, sets, ways, stream, held, every):
    """The simulation; the last level only in the sets whose index is a multiple of
    ``every``, kept at index / every."""
    levels = sets.shape[0]
    misses = np.zeros(levels, np.int64)
    for j in range(colidx.shape[0]):
        line = colidx[j] // per_line
        now = j + 1
        for lv in range(levels):
            s = line % sets[lv]
            if lv == levels - 1 and every > 1:
                if s % every:
                    break
                s //= every
            ways_here = held[lv, s]
            w = ways[lv]
            found = -1
            oldest = 0
            for k in range(w):
                if ways_here[k, 0] == line:
                    found = k
                if ways_here[k, 1] < ways_here[oldest, 1]:
                    oldest = k
            if found >= 0:
                last = ways_here[found, 1]
                newer = 0
                for k in range(w):
                    if ways_here[k, 1] > last:
                        newer += 1
                streamed = (now - last) * stream / sets[lv]
                ways_here[found, 1] = now
                if newer + streamed < w:
                    break  # a hit: the levels below never see this access
            else:
                ways_here[oldest, 0] = line
                ways_here[oldest, 1] = now
            misses[lv] += 1
    return misses
