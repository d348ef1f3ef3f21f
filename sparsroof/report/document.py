"""The one JSON writer and the one CSV writer: every document the tool prints or saves
goes through them, so each carries the same envelope (see :func:`sparsroof._version.envelope`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .._version import SCHEMA_VERSIONS, __version__

__all__ = ["json_text", "json_pieces", "csv_text"]


def _default(value: Any) -> Any:
    """numpy scalars and arrays (in structure features)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def json_text(doc: dict[str, Any], indent: int = 2) -> str:
    """``doc`` as JSON text; numpy values become plain numbers and lists.

    >>> import numpy as np
    >>> json_text({"n": np.int64(3)}, indent=0)
    '{\\n"n": 3\\n}'
    >>> json_text({"t": float("inf")}, indent=0)  # strict JSON: no Infinity or NaN
    '{\\n"t": null\\n}'
    """
    return _dumps(doc, indent)


def _dumps(value: Any, indent: int) -> str:
    """Strict JSON of ``value``: a number past the range of a float (an infinite or
    undefined figure) is null, as no JSON reader need accept Infinity or NaN."""
    try:
        return json.dumps(value, indent=indent, default=_default, allow_nan=False)
    except ValueError:
        from ..batch.records import json_safe

        return json.dumps(json_safe(value), indent=indent, default=_default, allow_nan=False)


def json_pieces(doc: dict[str, Any], indent: int = 2) -> Iterator[str]:
    """:func:`json_text` of ``doc`` a piece at a time, where a value of ``doc`` may be any
    iterable (a generator of a million records is written as it comes, one record in
    memory at a time): the pieces join to the very text :func:`json_text` gives of the
    same document with those values as lists.

    >>> doc = {"n": 1, "runs": ({"a": k} for k in range(2)), "none": iter(())}
    >>> "".join(json_pieces(doc)) == json_text({"n": 1, "runs": [{"a": 0}, {"a": 1}],
    ...                                           "none": []})
    True
    """
    one, two = " " * indent, " " * 2 * indent

    def dumped(value: Any, pad: str) -> str:
        return _dumps(value, indent).replace("\n", "\n" + pad)

    yield "{"
    for k, (key, value) in enumerate(doc.items()):
        yield ("," if k else "") + "\n" + one + json.dumps(key) + ": "
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
            yield dumped(value, one)
            continue
        empty = True
        for item in value:
            yield ("[" if empty else ",") + "\n" + two + dumped(item, two)
            empty = False
        yield "[]" if empty else "\n" + one + "]"
    yield "\n}" if doc else "}"


def csv_text(rows: Iterable[dict[str, Any]], kind: str,
             columns: Sequence[str] | None = None) -> str:
    """CSV text of ``rows``: the schema version and tool version lead every row; the
    columns are those of all rows, in the order first seen (missing cells are empty).
    Given ``columns``, the rows are read once, as they come (a generator of a million
    rows is never held as a list).

    >>> print(csv_text([{"a": 1}, {"a": 2, "b": 3}], "analyze"), end="")
    schema_version,version,a,b
    1,0.1.0,1,
    1,0.1.0,2,3
    """
    lead = {"schema_version": SCHEMA_VERSIONS[kind], "version": __version__}
    if columns is None:
        rows = list(rows)
        if not rows:
            return ""
        columns = list(dict.fromkeys([*lead, *(k for row in rows for k in row)]))
    else:
        columns = [*lead, *columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(lead | row)
    return out.getvalue()
