"""A JSON Schema of the budget file, for editors: completion and a first check as you type.

Made from the same tables :mod:`sparsroof.ci.budget` checks against, so it cannot drift;
the loader's own checks stay the authority. Shipped as
``sparsroof/schemas/budget.schema.json``.
"""

from __future__ import annotations

from typing import Any

from ..model.timing import TIMINGS
from .budget import BOUNDS, LIMITS

__all__ = ["budget_json_schema"]

_NAMES = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
_SETTINGS: dict[str, Any] = {
    "hw": {"type": "string", "description": "a bundled spec's name or a path to a YAML spec"},
    "kernel": {"enum": ["spmv", "spmm"]},
    "widths": {"anyOf": [{"type": "integer", "minimum": 1},
                         {"type": "array", "items": {"type": "integer", "minimum": 1}}]},
    "dtype": {"type": "string"}, "index": {"type": "string"},
    "storage": {"type": "string"}, "model": {"type": "string"}, "unit": {"type": "string"},
    "timing": {"enum": list(TIMINGS), "description": "how the runs are timed"},
    "calls_per_sync": {"type": "integer", "minimum": 1},
}


def _limit(key: str) -> dict[str, Any]:
    if key == "expected_bound":
        return {"enum": list(BOUNDS)}
    unit = LIMITS[key].unit
    text = {"type": "string", "description": f"a quantity in {unit}, e.g. '2 us'"}
    return {"anyOf": [{"type": "number"}, text]} if unit in ("s", "FLOP/s", "B") else \
        {"type": ["number", "string"]}


def budget_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a budget file.

    >>> sorted(budget_json_schema()["properties"])
    ['checks', 'defaults', 'measured', 'version']
    """
    check = {"type": "object", "required": ["name", "matrices", "limits"],
             "additionalProperties": False,
             "properties": {"name": {"type": "string"}, "matrices": _NAMES, **_SETTINGS,
                            "limits": {"type": "object", "additionalProperties": False,
                                       "minProperties": 1,
                                       "properties": {k: _limit(k) for k in LIMITS}}}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "sparsroof performance budget", "type": "object",
            "required": ["checks"], "additionalProperties": False,
            "properties": {"version": {"const": 1},
                           "defaults": {"type": "object", "additionalProperties": False,
                                        "properties": _SETTINGS},
                           "measured": {"type": "string"},
                           "checks": {"type": "array", "minItems": 1, "items": check}}}
