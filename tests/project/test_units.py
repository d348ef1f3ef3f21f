from __future__ import annotations

import pytest

from sparsroof.errors import UnitError
from sparsroof.units import parse_quantity


@pytest.mark.parametrize("text,kind,expected", [
    ("2039 GB/s", "bandwidth", 2039e9),
    ("1.5 TiB/s", "bandwidth", 1.5 * 2**40),
    ("40 MiB", "capacity", 40 * 2**20),
    ("768 KiB", "capacity", 768 * 1024),
    ("80 GB", "capacity", 80e9),
    ("19.5 TFLOP/s", "throughput", 19.5e12),
    ("624 TOP/s", "throughput", 624e12),
    ("515 GFLOP/s", "throughput", 515e9),
    ("4.2 us", "time", 4.2e-6),
    ("4.2 µs", "time", 4.2e-6),
    ("1.41 GHz", "frequency", 1.41e9),
    ("1410 MHz", "frequency", 1.41e9),
    ("1e3 GB/s", "bandwidth", 1e12),
])
def test_parses_to_si(text: str, kind: str, expected: float) -> None:
    assert parse_quantity(text, kind) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text,kind,needle", [
    ("2 TB", "bandwidth", "add '/s'"),            # an amount where a rate is expected
    ("2 TB/s", "capacity", "not a rate"),
    ("100 Gb/s", "bandwidth", "not bits"),
    ("0 GB/s", "bandwidth", "greater than zero"),
    ("-5 GB/s", "bandwidth", "greater than zero"),
    ("19.5", "throughput", "is not a throughput"),
    ("fast", "bandwidth", "is not a bandwidth"),
    ("4.2 furlongs", "time", "is not a time"),
])
def test_rejects_with_what_is_expected(text: str, kind: str, needle: str) -> None:
    with pytest.raises(UnitError, match=needle):
        parse_quantity(text, kind)


@pytest.mark.parametrize("value", [2039, 1.5, True, None, ["2 GB/s"]])
def test_a_bare_number_has_no_unit(value: object) -> None:
    with pytest.raises(UnitError, match="has no unit"):
        parse_quantity(value, "bandwidth")
