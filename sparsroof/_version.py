"""The tool's version, and the schema version of each kind of document it writes."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: kind of document -> its schema version, raised when a field changes meaning
SCHEMA_VERSIONS = {
    "analyze": 1, "batch": 1, "bench": 2, "calibration": 5, "check": 1, "baseline": 1, "compare": 1,
    "classify": 1, "formats": 1, "hw-list": 1, "hw-show": 1, "report": 1, "whatif": 1,
}


def envelope(kind: str) -> dict[str, Any]:
    """The fields every JSON document starts with.

    >>> envelope("analyze")["schema_version"], envelope("analyze")["kind"]
    (1, 'analyze')
    """
    return {"schema_version": SCHEMA_VERSIONS[kind], "tool": "sparsroof",
            "version": __version__, "kind": kind}
