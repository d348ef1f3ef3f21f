"""A JSON Schema of the spec file, for editors: completion and a first check as you type.

Made from the same tables the loader checks against (:mod:`sparsroof.hardware.spec`), so
it cannot drift; the loader's own checks (units, values, the order of the memory levels)
remain the authority. The package ships it as ``sparsroof/schemas/spec.schema.json``.
"""

from __future__ import annotations

from typing import Any

from .spec import FIGURE_KINDS, PARALLELISM, PRECISIONS, TIMING_FLOORS, TOP_KEYS, UNITS

__all__ = ["spec_json_schema"]


def _quantity(example: str) -> dict[str, Any]:
    return {
        "type": "object", "required": ["value", "source"], "additionalProperties": False,
        "properties": {
            "value": {"type": ["string", "number"], "description": f"e.g. {example!r}"},
            "source": {"type": "string", "minLength": 1,
                       "description": "where the number comes from"},
            "kind": {"enum": list(FIGURE_KINDS), "description": "what kind of number it is"},
        },
    }


def spec_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a hardware spec file.

    >>> s = spec_json_schema()
    >>> s["required"], sorted(s["properties"]["peaks"]["properties"])
    (['name', 'device', 'kind', 'peaks', 'memory'], ['simt', 'tensor', 'tensor-sparse'])
    """
    peaks = {"type": "object", "additionalProperties": False,
             "properties": {p: _quantity("19.5 TFLOP/s") for p in PRECISIONS}}
    level = {"type": "object", "required": ["name"], "additionalProperties": False,
             "properties": {"name": {"type": "string"},
                            "bandwidth": _quantity("2039 GB/s"),
                            "capacity": _quantity("40 MiB"),
                            "instances": _quantity("2"),
                            "latency": _quantity("1.14 ns")}}
    properties: dict[str, Any] = {
        "name": {"type": "string", "minLength": 1},
        "aliases": {"type": "array", "items": {"type": "string"}},
        "device": {"type": "string"},
        "kind": {"enum": ["gpu", "cpu"]},
        "notes": {"type": "string"},
        "peaks": {"type": "object", "additionalProperties": False,
                  "properties": {u: peaks for u in UNITS}},
        "memory": {"type": "array", "minItems": 1, "items": level,
                   "description": "fastest level first, main memory last"},
        "launch_overhead": _quantity("2 us"),
        "launch_floors": {"type": "object", "additionalProperties": False,
                          "properties": {m: _quantity("2 us") for m in TIMING_FLOORS},
                          "description": "the launch floor per way of timing a run"},
        "network": _quantity("600 GB/s"),
        "clock": _quantity("1.41 GHz"),
        "parallelism": {"type": "object", "additionalProperties": False,
                        "properties": {k: _quantity("108") for k in PARALLELISM}},
        "host": {"type": "object", "additionalProperties": {"type": "string"}},
    }
    assert set(properties) == set(TOP_KEYS), "the schema and the loader know the same keys"
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "sparsroof hardware spec", "type": "object",
            "required": ["name", "device", "kind", "peaks", "memory"],
            "additionalProperties": False, "properties": properties}
