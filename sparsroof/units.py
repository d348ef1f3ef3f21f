"""Quantities with their units: parsed from what people write ("2039 GB/s", "40 MiB",
"4.2 us") and formatted for people to read (:func:`si`).

Values are returned in SI base units: bytes, bytes per second, FLOP per second (or
operations per second for integer types), seconds and hertz. Decimal prefixes are powers
of 1000 and binary prefixes (KiB, MiB, ...) powers of 1024, as the IEC defines them.

>>> parse_quantity("2039 GB/s", "bandwidth")
2039000000000.0
>>> parse_quantity("40 MiB", "capacity")
41943040.0
>>> parse_quantity("4.2 us", "time")
4.2e-06
"""

from __future__ import annotations

import math
import re

from .errors import UnitError

__all__ = ["KINDS", "parse_quantity", "si", "binary", "plain", "counted"]

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
           "Ei": 2.0**60}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}

#: what each kind of quantity is called and an example of how to write it
KINDS = {
    "bandwidth": "a bandwidth such as '2039 GB/s' or '1.5 TiB/s'",
    "capacity": "a capacity such as '40 MiB' or '80 GB'",
    "throughput": "a throughput such as '19.5 TFLOP/s' or '624 TOP/s'",
    "time": "a time such as '4.2 us' or '5 ms'",
    "frequency": "a frequency such as '1.41 GHz'",
}

_NUMBER = r"(?P<num>[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>\S+)\s*$")



def _prefix(prefix: str) -> float | None:
    if prefix in _BINARY:
        return _BINARY[prefix]
    return _DECIMAL.get(prefix)


def _scale(unit: str, kind: str) -> float | None:
    """Factor from ``unit`` to the SI base unit of ``kind``; None when it does not fit."""
    if kind == "time":
        return _TIME.get(unit)
    patterns = {
        "bandwidth": r"(?P<p>[kKMGTPE]i?|)B/s",
        "capacity": r"(?P<p>[kKMGTPE]i?|)B",
        "throughput": r"(?P<p>[kKMGTP]|)(?:FLOP/s|FLOPS|OP/s|OPS|IOPS)",
        "frequency": r"(?P<p>[kKMGT]|)Hz",
    }
    match = re.fullmatch(patterns[kind], unit)
    if match is None:
        return None
    return _prefix(match.group("p"))


def _hint(text: str, kind: str) -> str:
    """A pointer at the likely slip: a number without its unit, bits for bytes, a
    per-second rate for an amount.

    >>> _hint("0", "capacity"), _hint("40 Mb", "capacity")
    (' (give its unit too)', ' (write bytes with a capital B, not bits)')
    """
    if re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", text):
        return " (give its unit too)"
    unit = text.split()[-1] if text.split() else ""
    if kind in ("bandwidth", "capacity") and re.fullmatch(r"[kKMGTPE]?i?(b|bit)(/s|ps)?", unit):
        return " (write bytes with a capital B, not bits)"
    if kind == "bandwidth" and unit.endswith("B"):
        return " (a bandwidth is bytes per second: add '/s')"
    if kind == "capacity" and unit.endswith("B/s"):
        return " (a capacity is an amount of bytes, not a rate)"
    return ""


def _clip(value: object) -> str:
    """``repr(value)`` cut to 40 characters (a value in a message is a pointer to it)."""
    import reprlib

    text = reprlib.repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_quantity(text: object, kind: str) -> float:
    """Parse ``text`` as a positive quantity of ``kind`` and return it in SI base units.

    Raises :class:`UnitError` with a message that says what was expected.

    >>> parse_quantity("19.5 TFLOP/s", "throughput")
    19500000000000.0
    >>> parse_quantity("2 TB", "bandwidth")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparsroof.errors.UnitError: '2 TB' is not a bandwidth such as ... (...: add '/s')
    """
    if kind not in KINDS:
        raise ValueError(f"unknown quantity kind {kind!r}")
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"{_clip(text)} has no unit: write {KINDS[kind]}")
    match = _QUANTITY.match(text)
    factor = _scale(match.group("unit"), kind) if match else None
    if match is None or factor is None:
        raise UnitError(f"{_clip(text)} is not {KINDS[kind]}{_hint(text[-40:], kind)}")
    value = float(match.group("num")) * factor
    if value <= 0:
        raise UnitError(f"{_clip(text)} must be greater than zero")
    if not math.isfinite(value):
        raise UnitError(f"{_clip(text)} is past the range of a number")
    return value


_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_SMALL = ((1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"))


def si(value: float, unit: str, digits: int = 3) -> str:
    """Format ``value`` with an SI prefix and ``digits`` significant digits.

    >>> si(2.039e12, "B/s")
    '2.04 TB/s'
    >>> si(4.2e-6, "s")
    '4.2 us'
    >>> si(0, "B")
    '0 B'
    """
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    table = _SMALL if abs(value) < 1 and unit == "s" else _PREFIXES
    scale, prefix = next(((s, p) for s, p in table if abs(value) >= s), table[-1])
    return f"{value / scale:.{digits}g} {prefix}{unit}"


def binary(n: float) -> str:
    """A size in bytes with a binary prefix (what a limit, a file or a cache holds), three
    significant digits; under 1 KiB in whole bytes.

    >>> binary(1_123_630), binary(1 << 20), binary(768 * 1024), binary(512), binary(2**56)
    ('1.07 MiB', '1 MiB', '768 KiB', '512 bytes', '64 PiB')
    """
    for shift, prefix in ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"),
                          (10, "Ki")):
        if abs(n) >= 1 << shift:
            return f"{n / (1 << shift):.3g} {prefix}B"
    return f"{n:,.0f} bytes"


def plain(value: float) -> str:
    """Three significant digits without exponent for table cells.

    >>> plain(1012.7), plain(0.0892), plain(4.05e-05), plain(8.1e-05), plain(0)
    ('1,013', '0.0892', '0.0000405', '0.000081', '0')
    """
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if value and math.isfinite(value) and abs(value) < 1e-4:  # where "g" turns to "e"
        return f"{value:.{2 - math.floor(math.log10(abs(value)))}f}".rstrip("0")
    return f"{value:.3g}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, plural unless ``n`` is 1 (``plural`` where adding an s is
    wrong).

    >>> counted(1, "run"), counted(1_500, "run"), counted(1, "entry", "entries")
    ('1 run', '1,500 runs', '1 entry')
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
