"""A :class:`Structure` as JSON and back, exactly: the structure cache's entry format.

Unlike :meth:`Structure.to_dict` (a summary for reports), nothing is left out: the row
length histogram is kept whole (as its nonzero bins), dictionary keys and tuples get their
types back, and floats survive the round trip bit for bit (JSON writes the shortest
repr that reads back to the same double; NaN and infinity as JSON's extensions).
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from .features import LengthCounts, LengthStats, Structure

__all__ = ["encode_structure", "decode_structure"]

#: fields whose dictionaries have whole-number keys in a Structure (JSON keys are strings)
_INT_KEYS = ("blocks", "panel_columns")
_STATS = ("row_stats", "col_stats")
_DICTS = ("nm_conformance", "nm_exact", "hub_share")


def encode_structure(s: Structure) -> dict[str, Any]:
    """``s`` as JSON-safe data that :func:`decode_structure` turns back into ``s``.

    >>> s = Structure(rows=2, cols=2, stored_entries=1, numeric_nonzeros=1, nonempty_rows=1,
    ...               nonempty_cols=1, max_row_length=1, blocks={2: 1},
    ...               row_lengths=LengthCounts(2, (0, 1), (1, 1)), panel_columns={1: (1, 1)})
    >>> decode_structure(encode_structure(s)).panel_columns
    {1: (1, 1)}
    """
    out: dict[str, Any] = {}
    for f in fields(s):
        value = getattr(s, f.name)
        if isinstance(value, LengthCounts):
            value = {"size": value.size, "at": list(value.at), "count": list(value.count)}
        elif f.name in _STATS and value is not None:
            value = asdict(value)
        elif f.name in _INT_KEYS:
            value = [[k, list(v) if isinstance(v, tuple) else v] for k, v in value.items()]
        out[f.name] = value
    return out


def _int_keyed(name: str, pairs: list[list[Any]]) -> dict[int, Any]:
    if name == "panel_columns":
        return {int(k): (int(v[0]), int(v[1])) for k, v in pairs}
    return {int(k): int(v) for k, v in pairs}


def _length_counts(doc: dict[str, Any]) -> LengthCounts:
    size, at, count = int(doc["size"]), tuple(doc["at"]), tuple(doc["count"])
    if (len(at) != len(count) or not all(type(v) is int for v in (*at, *count))
            or any(not 0 <= a < size for a in at) or list(at) != sorted(set(at))):
        raise ValueError("not a histogram of row lengths")
    return LengthCounts(size, at, count)


def _number(value: Any) -> Any:
    """``value`` where it is a number or None, as the fields of a Structure are."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise TypeError(f"not a number: {value!r}")
    return value


def decode_structure(doc: dict[str, Any]) -> Structure:
    """The :class:`Structure` that :func:`encode_structure` wrote as ``doc``; raises
    KeyError, TypeError or ValueError for a document that is not one."""
    values: dict[str, Any] = {}
    for f in fields(Structure):
        value = doc[f.name]
        if f.name == "row_lengths":
            value = _length_counts(value)
        elif f.name in _STATS and value is not None:
            value = LengthStats(**value)
        elif f.name in _INT_KEYS:
            value = _int_keyed(f.name, value)
        elif f.name in _DICTS:
            value = {str(k): _number(v) for k, v in value.items()}
        else:
            value = _number(value)
        values[f.name] = value
    if set(doc) != set(values):
        raise KeyError("fields differ from this version's Structure")
    return Structure(**values)
