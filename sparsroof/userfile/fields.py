"""Checking the fields of one row or record of a user's file: type, range, and a short
picture of a wrong value.

A check returns the value in its Python type or raises :class:`FieldError` (a
``ValueError``) whose message names the field and shows the value cut to 40 characters;
each reader turns it into its own error, with the file and the line or key. Booleans are
never numbers (``true`` is not 1 s), strings are not numbers in JSON (``"1e-5"``), and
a CSV cell, which is always text, is parsed (``from_text``).
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["LARGEST", "FieldError", "shown", "described", "number", "whole_number", "text",
           "optional_text", "flag", "finite_numbers", "control_character"]

#: longest picture of a wrong value in a message
SHOWN = 40
#: largest number a saved result may hold, and the smallest besides zero: no count of
#: bytes, FLOPs or seconds, and no rate, comes near either, and the ratios and decades a
#: figure works out from them stay far from the limits of a float
LARGEST = 1e30
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = SHOWN
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 2, 3, 3
_TRUE, _FALSE = ("true", "yes"), ("false", "no")


class FieldError(ValueError):
    """A field of the wrong type or out of range (the reader adds file and line)."""


def control_character(value: str, lines: bool = False) -> str | None:
    """The first character of ``value`` a terminal would act on rather than show (an
    escape, a carriage return; a line break unless ``lines``), as a message names it; None
    where there is none. A name read from a file is printed in tables and messages: an
    escape in it could recolour or clear the user's terminal.

    >>> control_character("a100"), control_character("a\\x1b[31m"), control_character("a\\nb")
    (None, "'\\\\x1b' (a control character)", "'\\\\n' (a control character)")
    >>> control_character("two\\nlines", lines=True) is None
    True
    """
    for char in value:
        code = ord(char)
        if (code < 32 and not (lines and char in "\n\t")) or 127 <= code < 160:
            return f"{char!r} (a control character)"
    return None


def shown(value: Any, limit: int = SHOWN) -> str:
    """``value`` as a message shows it: its ``repr``, never longer than ``limit``
    characters however large or deep the value is.

    >>> shown("x" * 1000)
    "'xxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxx'"
    >>> shown(list(range(100))), shown(True)
    ('[0, 1, 2, ...]', 'true')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int) and value.bit_length() > 128:
        return f"a whole number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def described(value: Any) -> str:
    """``value`` in words, for "field 'x' is ...": "the string '1e9'", "null", "a list".

    >>> described("1e9"), described(None), described([1]), described(2.5)
    ("the string '1e9'", 'null', 'a list', '2.5')
    """
    if isinstance(value, str):
        return f"the string {shown(value)}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if value is None or isinstance(value, bool | int | float):
        return shown(value)
    return type(value).__name__


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number or boolean it holds (a library caller's value,
    never a file's); anything else as it is."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def _parsed(value: Any, from_text: bool) -> Any:
    """``value``, a CSV cell's text parsed as a number where ``from_text``."""
    value = _plain(value)
    if not (from_text and isinstance(value, str)):
        return value
    try:
        return float(value.strip())  # "nan" and "inf" too: refused as such, by name
    except ValueError:
        return value


def _wrong(value: Any, from_text: bool) -> str | None:
    """What keeps ``value`` from being a finite number, or None."""
    if isinstance(value, str) and not value.strip():
        return "is empty"
    if isinstance(value, str) and from_text:
        return f"is {shown(value.strip())}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"is {described(value)}"
    if isinstance(value, float) and math.isnan(value):
        return "is NaN"
    if isinstance(value, float) and math.isinf(value):
        return f"is {'-' if value < 0 else ''}infinite"
    return None


def number(value: Any, what: str, *, from_text: bool = False, positive: bool = False,
           minimum: float | None = None, maximum: float | None = None) -> float:
    """``value`` as a finite float: a number (never true/false), or a CSV cell's text
    when ``from_text``; ``positive`` refuses zero and below, ``minimum`` and ``maximum``
    bound it.

    >>> number("2.5e-6", "time_s", from_text=True, positive=True)
    2.5e-06
    >>> number(True, "time")
    Traceback (most recent call last):
    ...
    sparsroof.userfile.fields.FieldError: time is true, expected a finite number
    >>> number("inf", "d", from_text=True)
    Traceback (most recent call last):
    ...
    sparsroof.userfile.fields.FieldError: d is infinite, expected a finite number
    """
    value = _parsed(value, from_text)
    wanted = "a positive number" if positive else "a finite number"
    problem = _wrong(value, from_text)
    if problem:
        raise FieldError(f"{what} {problem}, expected {wanted}")
    result = float(value) if isinstance(value, float) else _int_as_float(value, what)
    if positive and not result > 0:
        raise FieldError(f"{what} is {result:g}, expected {wanted}")
    if minimum is not None and result < minimum:
        raise FieldError(f"{what} is {result:g}, below {minimum:g}")
    if maximum is not None and result > maximum:
        raise FieldError(f"{what} is {result:g}, above {maximum:g}")
    return result


def _int_as_float(value: int, what: str) -> float:
    try:
        return float(value)
    except OverflowError:
        raise FieldError(f"{what} is {shown(value)}, past the range of a float") from None


def whole_number(value: Any, what: str, *, from_text: bool = False, minimum: int = 1,
                 maximum: int = 2**31 - 1) -> int:
    """``value`` as a whole number from ``minimum`` to ``maximum``: an int, a float with
    no fraction, or (``from_text``) such a number written in a CSV cell; 2.5 is an error,
    not 2.

    >>> whole_number("4", "d", from_text=True), whole_number(8.0, "d")
    (4, 8)
    >>> whole_number(2.5, "d")
    Traceback (most recent call last):
    ...
    sparsroof.userfile.fields.FieldError: d is 2.5, expected a whole number from 1 to 2147483647
    """
    wanted = f"a whole number from {minimum} to {maximum}"
    if isinstance(value, str) and from_text and value.strip().lstrip("+").isdigit():
        digits = value.strip().lstrip("+").lstrip("0") or "0"
        if len(digits) > len(str(maximum)):
            raise FieldError(f"{what} is {shown(value.strip())}, expected {wanted}")
        value = int(digits)
    value = _parsed(value, from_text)
    problem = _wrong(value, from_text)
    if problem:
        raise FieldError(f"{what} {problem}, expected {wanted}")
    if isinstance(value, float):
        if not value.is_integer():
            raise FieldError(f"{what} is {value:g}, expected {wanted}")
        if not minimum <= value <= maximum:
            raise FieldError(f"{what} is {value:g}, expected {wanted}")
        value = int(value)
    if not minimum <= value <= maximum:
        raise FieldError(f"{what} is {shown(value)}, expected {wanted}")
    return int(value)


def text(value: Any, what: str, *, choices: Iterable[str] | None = None,
         lower: bool = False) -> str:
    """``value`` as non-empty text, stripped (and lower-cased with ``lower``), one of
    ``choices`` where given.

    >>> text(" csr ", "format", choices=("csr", "coo"))
    'csr'
    >>> text("ellx", "format", choices=("csr", "coo"))
    Traceback (most recent call last):
    ...
    sparsroof.userfile.fields.FieldError: unknown format 'ellx' (choose from csr, coo)
    """
    if not isinstance(value, str):
        raise FieldError(f"{what} is {described(value)}, expected text")
    result = value.strip().lower() if lower else value.strip()
    if not result:
        raise FieldError(f"{what} is empty")
    if choices is not None:
        known = tuple(choices)
        if result not in known:
            raise FieldError(f"unknown {what} {shown(result)} (choose from "
                             f"{', '.join(known)})")
        return known[known.index(result)]  # the table's own string, shared by every row
    return result


def optional_text(record: Mapping[str, Any], name: str, default: str | None = None, *,
                  choices: Iterable[str] | None = None, lower: bool = False) -> str | None:
    """The text field ``name`` of ``record``, or ``default`` where it is absent, null or
    an empty CSV cell.

    >>> optional_text({"dtype": ""}, "dtype", "fp64"), optional_text({}, "hw")
    ('fp64', None)
    """
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    return text(value, name, choices=choices, lower=lower)


def flag(value: Any, what: str, *, from_text: bool = False) -> bool:
    """``value`` as true or false: a boolean (in a CSV cell: true/false or yes/no); the
    string "false" is not true, and 0 is not false.

    >>> flag(False, "completed"), flag("TRUE", "ok", from_text=True)
    (False, True)
    >>> flag("false", "completed")
    Traceback (most recent call last):
    ...
    sparsroof.userfile.fields.FieldError: completed is the string 'false', expected true or false
    """
    value = _plain(value)
    if isinstance(value, bool):
        return value
    if from_text and isinstance(value, str) and value.strip().lower() in (*_TRUE, *_FALSE):
        return value.strip().lower() in _TRUE
    raise FieldError(f"{what} is {described(value)}, expected true or false")


def finite_numbers(record: Mapping[str, Any], names: Iterable[str],
                   fail: Callable[[str], Exception], *, where: str = "",
                   from_text: bool = False, minimum: float | None = None,
                   integers: Iterable[str] = (), positive: Iterable[str] = (),
                   maximum: float = LARGEST) -> dict[str, Any]:
    """The fields ``names`` of ``record`` (one row of a user's file), each a finite
    number: floats, and ints for the names in ``integers``.

    A missing field, null, NaN, an infinity, a number past ``maximum`` (by default
    :data:`LARGEST`) or nearer zero than its inverse (other than 0), a string (unless
    ``from_text``: the cells of a CSV file are parsed), true/false, a list or an object,
    a number below ``minimum``, zero or below for the names in ``positive`` (rates and
    times something is divided by) or a fraction where an integer belongs raises
    ``fail(problem)``, the problem naming ``where`` and the field, so each reader keeps
    its own error class and file name.

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
    whole, rates = set(integers), set(positive)
    out: dict[str, Any] = {}
    for name in names:
        if name not in record:
            raise fail(f"{prefix}missing field {name!r}")
        try:
            value = number(record[name], f"field {name!r}", from_text=from_text,
                           maximum=maximum)
        except FieldError as err:
            raise fail(f"{prefix}{err}") from None
        if minimum is not None and value < minimum:
            raise fail(f"{prefix}field {name!r} is {value:g}, below {minimum:g}")
        if name in rates and not value > 0:
            raise fail(f"{prefix}field {name!r} is {value:g}, expected a positive number")
        if value and abs(value) < 1 / maximum:
            raise fail(f"{prefix}field {name!r} is {value:g}, too close to zero (a number "
                       f"other than 0 is at least {1 / maximum:g})")
        if name in whole:
            if not value.is_integer():
                raise fail(f"{prefix}field {name!r} is {value:g}, expected a whole number")
            out[name] = int(value)
        else:
            out[name] = value
    return out
