"""The roofs of each spec on the HTML report's rooflines.

Each row was bounded by one compute peak (unit and precision) and one memory level (its
bandwidth): those are the roofs the data gives, and the figure draws every one of them.
Where the spec's name is a bundled spec whose figures agree with every roof its rows
give, the levels its rows never reached (DRAM under a batch of small matrices, a cache
under large ones) are added from it, and its last level is marked as main memory; a
spec the rows disagree with (an edited copy, an older version) adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import SparsroofError
from ..hardware.library import bundled_names, load_spec
from ..hardware.spec import HwSpec
from ..units import si

__all__ = ["Roof", "SpecRoofs", "spec_roofs"]


@dataclass(frozen=True)
class Roof:
    """One roof: a compute peak (FLOP/s) or a memory level's bandwidth (bytes/s)."""

    name: str
    value: float
    label: str
    cache: bool | None = None  # memory level: a cache, main memory, or not known
    from_spec: bool = False  # added from the bundled spec, no row was bound by it


@dataclass
class SpecRoofs:
    spec: str
    device: str
    peaks: list[Roof] = field(default_factory=list)
    levels: list[Roof] = field(default_factory=list)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _bundled(name: str) -> HwSpec | None:
    """The bundled spec of that name; None for a user's own spec (or a broken bundle)."""
    if name not in bundled_names():
        return None
    try:
        return load_spec(name)
    except SparsroofError:
        return None


def _agrees(spec: HwSpec, roofs: SpecRoofs, units: set[tuple[str, str]]) -> bool:
    """True when every peak and level the rows give is the spec's own."""
    levels = {lv.name: lv.bandwidth.value for lv in spec.memory if lv.bandwidth is not None}
    for roof in roofs.levels:
        if roof.name not in levels or not _close(levels[roof.name], roof.value):
            return False
    for (unit, precision), roof in zip(sorted(units), roofs.peaks, strict=True):
        peak = spec.peaks.get((unit, precision))
        if peak is None or not _close(peak.value, roof.value):
            return False
    return True


def _from_spec(roofs: SpecRoofs, units: set[tuple[str, str]]) -> None:
    spec = _bundled(roofs.spec)
    if spec is None or not _agrees(spec, roofs, units):
        return
    seen = {r.name for r in roofs.levels}
    last = spec.memory[-1].name
    levels = []
    for lv in spec.memory:
        if lv.bandwidth is None:
            continue
        cache = lv.name != last
        if lv.name in seen:
            levels.append(next(r for r in roofs.levels if r.name == lv.name))
            levels[-1] = Roof(lv.name, levels[-1].value, levels[-1].label, cache)
        else:
            levels.append(Roof(lv.name, lv.bandwidth.value,
                               f"{lv.name} {si(lv.bandwidth.value, 'B/s')}", cache, True))
    roofs.levels = levels
    roofs.device = roofs.device or spec.device


def spec_roofs(rows: Sequence[dict[str, Any]]) -> list[SpecRoofs]:
    """The roofs of every spec of ``rows`` (page rows), specs in order of appearance."""
    out: dict[str, SpecRoofs] = {}
    peaks: dict[str, dict[tuple[str, str], float]] = {}
    levels: dict[str, dict[str, float]] = {}
    for r in rows:
        roofs = out.setdefault(r["spec"], SpecRoofs(r["spec"], r["device"]))
        roofs.device = roofs.device or r["device"]
        if r["peak_flops"]:
            peaks.setdefault(r["spec"], {})[(r["unit"], r["precision"])] = r["peak_flops"]
        if r["bandwidth"]:
            levels.setdefault(r["spec"], {})[r["level"]] = r["bandwidth"]
    for name, roofs in out.items():
        units = peaks.get(name, {})
        roofs.peaks = [Roof(f"{u} {p}".strip(), v, f"{u} {p} {si(v, 'FLOP/s')}".strip())
                       for (u, p), v in sorted(units.items())]
        roofs.levels = [Roof(lv, v, f"{lv} {si(v, 'B/s')}".strip())
                        for lv, v in sorted(levels.get(name, {}).items(), key=lambda i: -i[1])]
        _from_spec(roofs, set(units))
    return list(out.values())
