"""The tool's version, and the schema version of each kind of document it writes."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: kind of document -> what each of its schema versions changed, oldest first. A version
#: is raised when a field changes meaning or goes away (a reader of the old one would read
#: it wrong); a field added is not a new version.
SCHEMA_HISTORY: dict[str, tuple[tuple[int, str], ...]] = {
    "analyze": ((1, "first version"),),
    "batch": ((1, "first version"),),
    "bench": ((1, "first version"),
              (2, "each result judged as compare judges a run: pct_sol of the fastest "
                  "repetition, violation, status, and the timing method of its bound")),
    "calibration": ((1, "first version"),
                    (2, "x reloads beyond each cache level fitted separately"),
                    (3, "the core's own costs: simulated x-line misses per level, "
                        "mispredicted row exits, long dependency chains"),
                    (4, "each kernel's own loops: COO and a HYB's COO part add into y "
                        "through memory, runs of additions as features of their own"),
                    (5, "ELL and HYB fitted on the slots and bytes the host kernels "
                        "execute, padding included; ELL's fixed-width loop has no "
                        "mispredicted exits"),
                    (6, "COO's stall is what the order of its rows costs beyond the same "
                        "rows sorted by length")),
    "check": ((1, "first version"),),
    "baseline": ((1, "first version"),),
    "compare": ((1, "first version"),),
    "classify": ((1, "first version"),),
    "formats": ((1, "first version"),),
    "hw-list": ((1, "first version"),),
    "hw-show": ((1, "first version"),),
    "report": ((1, "first version"),),
    "whatif": ((1, "first version"),),
}

#: kind of document -> its schema version now
SCHEMA_VERSIONS = {kind: history[-1][0] for kind, history in SCHEMA_HISTORY.items()}


def envelope(kind: str) -> dict[str, Any]:
    """The fields every JSON document starts with.

    >>> envelope("analyze")["schema_version"], envelope("analyze")["kind"]
    (1, 'analyze')
    """
    return {"schema_version": SCHEMA_VERSIONS[kind], "tool": "sparsroof",
            "version": __version__, "kind": kind}
