"""Reading a user's text or JSON file (spec, budget, manifest, results) with one-line
errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MAX_NESTING", "read_text", "read_json", "check_shape"]

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
