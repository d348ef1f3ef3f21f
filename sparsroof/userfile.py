"""Reading a user's text or JSON file (spec, budget, manifest, results) with one-line
errors, and checking the numbers in it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["MAX_NESTING", "read_text", "read_json", "read_csv", "check_shape",
           "finite_numbers"]

#: deepest nesting of brackets or indentation a user's file may have; the YAML and JSON
#: parsers recurse per level, and a deep enough file overflows their stack
MAX_NESTING = 100
_INDENT = 4 * MAX_NESTING
_LONG_NUMBER = re.compile(r"\d{1001}")
_DEEP_INDENT = re.compile(rf"^[ \t]{{{_INDENT + 1}}}", re.MULTILINE)


def _bracket_depth(text: str) -> int:
    import numpy as np

    brackets = np.frombuffer(re.sub(r"[^][{}]", "", text).encode("ascii"), np.uint8)
    if not brackets.size:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def check_shape(text: str, fail: Callable[[str], Exception]) -> None:
    """Refuse text no spec, budget or results file has: nesting past
    :data:`MAX_NESTING` levels (brackets, or indentation past 400 columns) and numbers of
    more than 1,000 digits (Python refuses to convert them).

    >>> check_shape("a: [[1]]", ValueError)
    >>> check_shape("[" * 101 + "]" * 101, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: nested more than 100 levels deep
    """
    if text.count("[") + text.count("{") > MAX_NESTING \
            and _bracket_depth(text) > MAX_NESTING:
        raise fail(f"nested more than {MAX_NESTING} levels deep")
    if _DEEP_INDENT.search(text):
        raise fail(f"nested more than {MAX_NESTING} levels deep (a line is indented past "
                   f"{_INDENT} columns)")
    if _LONG_NUMBER.search(text):
        raise fail("holds a number of more than 1,000 digits")


def read_text(path: str | Path, fail: Callable[[str], Exception]) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable or binary file, or one that
    :func:`check_shape` refuses, raises ``fail(problem)``, so each caller keeps its own
    error class (and exit code).

    >>> read_text("/no/such/file.yaml", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: no such file
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail("no such file") from None
    except IsADirectoryError:
        raise fail("is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise fail(f"cannot read: {err}") from None
    check_shape(text, fail)
    return text


def read_json(path: str | Path, fail: Callable[[str], Exception]) -> Any:
    """The parsed JSON of ``path``, read as :func:`read_text` reads it; text that is not
    JSON raises ``fail`` naming the line.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = p.write_text('{"a": 1,}')
    >>> read_json(p, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: line 1: not valid JSON: Expecting property name enclosed in double quotes
    """
    import json

    text = read_text(path, fail)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise fail(f"line {err.lineno}: not valid JSON: {err.msg}") from None


def read_csv(path: str | Path, fail: Callable[[str], Exception]
             ) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    r"""The header of the CSV table at ``path`` (names stripped of spaces) and its rows,
    each with the line it ends on, the file read as :func:`read_text` reads it. Text the
    csv module refuses (a field past its size limit) raises ``fail`` naming the line. A
    short row holds None in its missing columns.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text('a, b\n1,"two\nlines"\n3\n')
    >>> read_csv(p, ValueError)
    (['a', 'b'], [(3, {'a': '1', 'b': 'two\nlines'}), (4, {'a': '3', 'b': None})])
    """
    import csv
    import io

    reader = csv.DictReader(io.StringIO(read_text(path, fail), newline=""))
    try:
        header = [name.strip() for name in reader.fieldnames or []]
        reader.fieldnames = header
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as err:
        # the reader counts the line it failed on only once it is read
        raise fail(f"line {reader.line_num + 1}: not a CSV table ({err})") from None
    return header, rows


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _number(value: Any, from_text: bool) -> float | str:
    """``value`` as a float, or what is wrong with it."""
    if isinstance(value, str) and from_text:
        try:
            value = float(value.strip())
        except ValueError:
            return f"is {value.strip()[:40]!r}" if value.strip() else "is empty"
    if value is None:
        return "is null"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"is {_shown(value)}"
    number = float(value)
    if math.isnan(number):
        return "is NaN"
    if math.isinf(number):
        return f"is {'-' if number < 0 else ''}infinite"
    return number


def finite_numbers(record: Mapping[str, Any], names: Iterable[str],
                   fail: Callable[[str], Exception], *, where: str = "",
                   from_text: bool = False, minimum: float | None = None,
                   integers: Iterable[str] = ()) -> dict[str, Any]:
    """The fields ``names`` of ``record`` (one row of a user's file), each a finite
    number: floats, and ints for the names in ``integers``.

    A missing field, null, NaN, an infinity, a string (unless ``from_text``: the cells of
    a CSV file are parsed), true/false, a list or an object, a number below ``minimum`` or
    a fraction where an integer belongs raises ``fail(problem)``, the problem naming
    ``where`` and the field, so each reader keeps its own error class and file name.

    >>> finite_numbers({"a": 1, "b": 2.5}, ["a", "b"], ValueError, integers=["a"])
    {'a': 1, 'b': 2.5}
    >>> finite_numbers({"a": "1e9"}, ["a"], ValueError, where="row 3")
    Traceback (most recent call last):
    ...
    ValueError: row 3: field 'a' is the string '1e9', expected a finite number
    >>> finite_numbers({"a": "nan"}, ["a"], ValueError, from_text=True)
    Traceback (most recent call last):
    ...
    ValueError: field 'a' is NaN, expected a finite number
    """
    prefix = f"{where}: " if where else ""
    whole = set(integers)
    out: dict[str, Any] = {}
    for name in names:
        if name not in record:
            raise fail(f"{prefix}missing field {name!r}")
        number = _number(record[name], from_text)
        if isinstance(number, str):
            raise fail(f"{prefix}field {name!r} {number}, expected a finite number")
        if minimum is not None and number < minimum:
            raise fail(f"{prefix}field {name!r} is {number:g}, below {minimum:g}")
        if name in whole:
            if not number.is_integer():
                raise fail(f"{prefix}field {name!r} is {number:g}, expected a whole number")
            out[name] = int(number)
        else:
            out[name] = number
    return out
