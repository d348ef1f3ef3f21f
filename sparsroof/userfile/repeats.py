"""Keeping the error lines of a file with many bad rows to a few of each kind.

Two messages are of one kind when they differ only in numbers and quoted values (the
line, the value found): ``runs.csv:7: time_s 'x' is not a number`` and
``runs.csv:9: time_s 'y' is not a number``. After :data:`KEEP` of a kind, the rest are
counted in one line, ``... and N more like this``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator

__all__ = ["KEEP", "kind_of", "capped"]

#: messages of one kind printed before the rest are counted
KEEP = 3
_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def kind_of(message: str) -> str:
    """``message`` with its numbers and quoted values blanked out.

    >>> kind_of("r.csv:7: time_s 'x' is not a number")
    'r.csv:#: time_s # is not a number'
    """
    return _VARYING.sub("#", message)


def capped(messages: Iterable[str], keep: int = KEEP) -> Iterator[str]:
    """``messages`` in order, but at most ``keep`` of each kind (:func:`kind_of`); the
    last one kept of a kind with more is followed by a count of the rest.

    >>> list(capped([f"r.csv:{i}: bad d" for i in range(2, 9)] + ["r.csv:9: no matrix"]))
    ['r.csv:2: bad d', 'r.csv:3: bad d', 'r.csv:4: bad d', '... and 4 more like this', \
'r.csv:9: no matrix']
    """
    listed = list(messages)
    kinds = [kind_of(m) for m in listed]
    total = Counter(kinds)
    seen: Counter[str] = Counter()
    for message, kind in zip(listed, kinds, strict=True):
        seen[kind] += 1
        if seen[kind] <= keep:
            yield message
        if seen[kind] == keep and total[kind] > keep:
            yield f"... and {total[kind] - keep:,} more like this"
