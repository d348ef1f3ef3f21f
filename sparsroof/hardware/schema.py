"""Checking a hardware spec read from YAML, collecting every problem rather than the first.

Each problem is a :class:`~sparsroof.errors.SpecError` naming the file, the key and what
is expected, so ``sparsroof hw validate`` can print one line per problem. The rules:

- top-level keys: ``name``, ``device``, ``kind``, ``peaks`` and ``memory`` are required;
  any key outside :data:`TOP_KEYS` is a problem (with the closest known key suggested);
- every number is a mapping of ``value`` (the number *with its unit*, e.g. ``2039 GB/s``)
  and ``source`` (where it comes from); counts are plain whole numbers: ``parallelism``,
  and a level's ``instances`` (how many per-core copies its capacity sums); a level may
  give its ``latency``, the least time one load from it takes;
- a unit that does not fit the quantity ("2 TB" as a bandwidth), zero or a negative value,
  an unknown compute unit or precision, and a memory list that is not ordered fastest
  first with main memory last are problems.
"""

from __future__ import annotations

from typing import Any

from ..errors import SpecError, UnitError, closest
from ..units import KINDS, parse_quantity
from ..userfile import control_character, shown
from .spec import (
    FIGURE_KINDS,
    PARALLELISM,
    PRECISIONS,
    TIMING_FLOORS,
    TOP_KEYS,
    UNITS,
    HwSpec,
    MainMemory,
    MemoryLevel,
    Quantity,
)

__all__ = ["check_spec"]

_REQUIRED = ("name", "device", "kind", "peaks", "memory")
_KINDS = ("gpu", "cpu")
_LEVEL_KEYS = ("name", "bandwidth", "capacity", "instances", "latency")
#: largest count (SMs, threads, instances of a level) a spec may give
_MAX_COUNT = 2**40


def _suggest(key: object, known: tuple[str, ...] | list[str]) -> str:
    close = closest(str(key), known)
    return f"did you mean {close!r}?" if close else f"expected one of {', '.join(known)}"


#: the least a spec's figure of each kind may be: far below any device's, yet where the
#: figures a bound divides by stay clear of overflow (1e-320 GB/s made bounds infinite)
_LEAST = {"bandwidth": (1.0, "1 B/s"), "capacity": (1.0, "1 byte"),
          "throughput": (1.0, "1 FLOP/s"), "time": (1e-12, "1 ps"), "frequency": (1.0, "1 Hz")}


class _Checker:
    """Collects problems for one spec file; each check returns None where it failed."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.problems: list[SpecError] = []

    def problem(self, key: str | None, message: str) -> None:
        self.problems.append(SpecError(self.origin, message, key))

    def text(self, key: str, raw: Any) -> str | None:
        if not isinstance(raw, str) or not raw.strip():
            self.problem(key, f"expected a non-empty text, found {shown(raw)}")
            return None
        bad = control_character(raw, lines=key == "notes")  # printed in tables and messages
        if bad:
            self.problem(key, f"holds {bad}")
            return None
        return raw

    def quantity(self, key: str, raw: Any, kind: str | None) -> Quantity | None:
        """``{value: '2039 GB/s', source: '...'}``; ``kind`` None is a plain positive count."""
        if not isinstance(raw, dict):
            what = "a count" if kind is None else KINDS[kind]
            self.problem(key, f"expected a mapping {{value: ..., source: ...}} with {what}")
            return None
        for extra in sorted(set(raw) - {"value", "source", "kind"}, key=str):
            self.problem(f"{key}.{extra}", "unknown key (expected 'value', 'source' and "
                         "optionally 'kind')")
        figure_kind = self.figure_kind(key, raw.get("kind"))
        source = raw.get("source")
        if not isinstance(source, str) or not source.strip():
            self.problem(f"{key}.source", "missing: say where the number comes from "
                         "(datasheet, paper, or measurement and date)")
        elif control_character(source):
            self.problem(f"{key}.source", f"holds {control_character(source)}")
        if "value" not in raw:
            self.problem(f"{key}.value", "missing: write the number with its unit")
            return None
        value = raw["value"]
        if kind is None:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_COUNT:
                self.problem(f"{key}.value", f"expected a positive whole number (up to "
                             f"{_MAX_COUNT:,}), found {shown(value)}")
                return None
            return Quantity(float(value), str(value), str(source), figure_kind)
        try:
            found = parse_quantity(value, kind)
        except UnitError as err:
            self.problem(f"{key}.value", str(err))
            return None
        least, said = _LEAST[kind]
        if found < least:  # a slip of units, and its reciprocals overflow
            self.problem(f"{key}.value", f"{shown(value)} is below {said}: no device has "
                         "so little (check the unit)")
            return None
        return Quantity(found, str(value), str(source), figure_kind)

    def figure_kind(self, key: str, raw: Any) -> str | None:
        if raw is None or raw in FIGURE_KINDS:
            return raw
        self.problem(f"{key}.kind", f"unknown kind of figure {shown(raw)} "
                     f"({_suggest(raw, FIGURE_KINDS)})")
        return None

    def peaks(self, raw: Any) -> dict[tuple[str, str], Quantity]:
        peaks: dict[tuple[str, str], Quantity] = {}
        if not isinstance(raw, dict) or not raw:
            self.problem("peaks", "expected a mapping of compute unit -> precision -> peak, "
                         f"units among {', '.join(UNITS)}")
            return peaks
        for unit, per_precision in raw.items():
            if unit not in UNITS:
                self.problem(f"peaks.{unit}", f"unknown compute unit ({_suggest(unit, UNITS)})")
                continue
            if not isinstance(per_precision, dict) or not per_precision:
                self.problem(f"peaks.{unit}", "expected a mapping of precision -> peak")
                continue
            for precision, q in per_precision.items():
                key = f"peaks.{unit}.{precision}"
                if precision not in PRECISIONS:
                    self.problem(key, f"unknown precision ({_suggest(precision, PRECISIONS)})")
                    continue
                parsed = self.quantity(key, q, "throughput")
                if parsed is not None:
                    peaks[(unit, precision)] = parsed
        return peaks

    def level(self, i: int, raw: Any, last: bool) -> MemoryLevel | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            self.problem(f"memory[{i}]", "expected a mapping with a 'name', a 'bandwidth' "
                         "and a 'capacity'")
            return None
        key = f"memory.{raw['name']}"
        for extra in sorted(set(raw) - set(_LEVEL_KEYS), key=str):
            self.problem(f"{key}.{extra}", f"unknown key ({_suggest(extra, _LEVEL_KEYS)})")
        bandwidth = capacity = instances = None
        if "bandwidth" in raw:
            bandwidth = self.quantity(f"{key}.bandwidth", raw["bandwidth"], "bandwidth")
        elif last:
            self.problem(f"{key}.bandwidth", "missing: main memory (the last level) needs a "
                         "bandwidth such as '2039 GB/s'")
        if "capacity" in raw:
            capacity = self.quantity(f"{key}.capacity", raw["capacity"], "capacity")
        if "instances" in raw:
            instances = self.quantity(f"{key}.instances", raw["instances"], None)
            if instances is not None and capacity is None:
                self.problem(f"{key}.instances", "given without a capacity to divide")
        latency = self.quantity(f"{key}.latency", raw["latency"], "time") \
            if "latency" in raw else None
        if last:
            return (None if bandwidth is None
                    else MainMemory(raw["name"], bandwidth, capacity, instances, latency))
        return MemoryLevel(raw["name"], bandwidth, capacity, instances, latency)

    def memory(self, raw: Any) -> tuple[MemoryLevel, ...] | None:
        if not isinstance(raw, list) or not raw:
            self.problem("memory", "expected a list of memory levels, fastest first and main "
                         "memory last")
            return None
        levels = [self.level(i, lv, i == len(raw) - 1) for i, lv in enumerate(raw)]
        names = [lv["name"] for lv in raw if isinstance(lv, dict) and "name" in lv]
        for name in sorted({n for n in names if names.count(n) > 1}, key=str):
            self.problem(f"memory.{name}", "level named twice")
        good = [lv for lv in levels if lv is not None]
        if len(good) != len(levels):
            return None
        self.order(good)
        return tuple(good)

    def order(self, levels: list[MemoryLevel]) -> None:
        """Fastest first: capacities grow and bandwidths fall down the hierarchy."""
        sized = [lv for lv in levels if lv.capacity is not None]
        for a, b in zip(sized, sized[1:], strict=False):
            if b.capacity and a.capacity and b.capacity.value < a.capacity.value:
                self.problem(f"memory.{b.name}.capacity", f"smaller than {a.name} before it: "
                             "list levels fastest (smallest) first, main memory last")
        fast = [lv for lv in levels if lv.bandwidth is not None]
        for a, b in zip(fast, fast[1:], strict=False):
            if a.bandwidth and b.bandwidth and b.bandwidth.value > a.bandwidth.value:
                self.problem(f"memory.{b.name}.bandwidth", f"faster than {a.name} above it: "
                             "bandwidths must fall down the hierarchy (list levels fastest "
                             "first, main memory last)")


def _top(c: _Checker, data: dict[Any, Any]) -> None:
    for key in _REQUIRED:
        if key not in data:
            c.problem(key, "missing required key")
    for key in sorted(set(data) - set(TOP_KEYS), key=str):
        c.problem(str(key), f"unknown key ({_suggest(key, TOP_KEYS)})")
    if "kind" in data and data["kind"] not in _KINDS:
        c.problem("kind", f"expected 'gpu' or 'cpu', found {shown(data['kind'])}")
    aliases = data.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        c.problem("aliases", "expected a list of names, e.g. [a100]")
    else:
        bad = next(filter(None, map(control_character, aliases)), None)
        if bad:
            c.problem("aliases", f"a name holds {bad}")
    for key in ("name", "device", "notes"):
        if key in data:
            c.text(key, data[key])


def _parallelism(c: _Checker, raw: Any) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    if not isinstance(raw, dict):
        c.problem("parallelism", f"expected a mapping with keys among {', '.join(PARALLELISM)}")
        return out
    for key, value in raw.items():
        if key not in PARALLELISM:
            c.problem(f"parallelism.{key}", f"unknown key ({_suggest(key, PARALLELISM)})")
            continue
        q = c.quantity(f"parallelism.{key}", value, None)
        if q is not None:
            out[key] = q
    return out


def _launch_floors(c: _Checker, raw: Any, overhead: Quantity | None
                   ) -> dict[str, Quantity]:
    """The floor per timing method; each at least ``launch_overhead``, the floor of all."""
    out: dict[str, Quantity] = {}
    if not isinstance(raw, dict) or not raw:
        c.problem("launch_floors", "expected a mapping of timing method -> time, methods "
                  f"among {', '.join(TIMING_FLOORS)}")
        return out
    for method, value in raw.items():
        if method not in TIMING_FLOORS:
            c.problem(f"launch_floors.{method}",
                      f"unknown timing method ({_suggest(method, TIMING_FLOORS)})")
            continue
        q = c.quantity(f"launch_floors.{method}", value, "time")
        if q is None:
            continue
        if overhead is not None and q.value < overhead.value:
            c.problem(f"launch_floors.{method}",
                      f"{q.text} is below launch_overhead {overhead.text}: launch_overhead "
                      "is the smallest time a kernel takes however it is timed")
        out[method] = q
    return out


def _host(c: _Checker, raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
        c.problem("host", "expected a mapping of text fields (where and how it was measured)")
        return {}
    return {k: str(v) for k, v in raw.items()}


def check_spec(data: Any, origin: str) -> tuple[HwSpec | None, list[SpecError]]:
    """Validate a spec already read from YAML: the spec (None if any problem) and problems.

    >>> spec, problems = check_spec({"name": "x", "kind": "tpu"}, "x.yaml")
    >>> [str(p) for p in problems][:2]
    ['x.yaml: device: missing required key', 'x.yaml: peaks: missing required key']
    """
    c = _Checker(origin)
    if not isinstance(data, dict):
        c.problem(None, "a spec must be a YAML mapping of keys such as name, device, peaks")
        return None, c.problems
    _top(c, data)
    peaks = c.peaks(data["peaks"]) if "peaks" in data else {}
    memory = c.memory(data["memory"]) if "memory" in data else None
    optional = {key: c.quantity(key, data[key], kind)
                for key, kind in (("launch_overhead", "time"), ("network", "bandwidth"),
                                  ("clock", "frequency")) if key in data}
    floors = (_launch_floors(c, data["launch_floors"], optional.get("launch_overhead"))
              if "launch_floors" in data else {})
    overhead = optional.get("launch_overhead") or (
        min(floors.values(), key=lambda q: q.value) if floors else None)
    parallelism = _parallelism(c, data.get("parallelism", {}))
    host = _host(c, data.get("host", {}))
    if c.problems or memory is None:
        return None, c.problems
    spec = HwSpec(
        name=str(data["name"]), device=str(data["device"]), kind=str(data["kind"]),
        origin=origin, peaks=peaks, memory=memory, parallelism=parallelism,
        aliases=tuple(data.get("aliases", [])), notes=str(data.get("notes", "")), host=host,
        launch_overhead=overhead, network=optional.get("network"),
        clock=optional.get("clock"), launch_floors=floors,
    )
    return spec, []
