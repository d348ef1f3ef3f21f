"""Hardware specs: YAML files with every number's unit and source, checked on load.

A spec looks like this (every quantity is a mapping of ``value`` and ``source``)::

    name: a100-80gb
    aliases: [a100]
    device: NVIDIA A100 80GB SXM4
    kind: gpu
    peaks:                      # unit -> precision -> throughput
      simt:
        fp64: {value: 9.7 TFLOP/s, source: NVIDIA A100 datasheet}
    memory:                     # fastest level first, main memory last
      - name: HBM2e
        bandwidth: {value: 2039 GB/s, source: NVIDIA A100 datasheet}
        capacity: {value: 80 GB, source: NVIDIA A100 datasheet}
    launch_overhead: {value: 4.2 us, source: ...}        # optional
    network: {value: 600 GB/s, source: ...}              # optional
    parallelism:                                         # optional counts
      sms: {value: 108, source: ...}

Bundled specs live in ``sparsroof/hwspecs`` and are found with importlib.resources; a
path to the user's own YAML file works wherever a bundled name does.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError
from .units import UnitError, parse_quantity

__all__ = [
    "UNITS",
    "PRECISIONS",
    "Quantity",
    "MemoryLevel",
    "HwSpec",
    "bundled_names",
    "load_spec",
    "parse_spec",
]

#: compute units a spec may give peaks for
UNITS = ("simt", "tensor", "tensor-sparse")
#: precisions a spec may give peaks for
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
_TOP_KEYS = {
    "name", "aliases", "device", "kind", "notes", "peaks", "memory",
    "launch_overhead", "network", "parallelism", "clock", "host",
}
_REQUIRED = ("name", "device", "kind", "peaks", "memory")
_PARALLELISM = {"sms", "warps_per_sm", "threads_per_sm", "cores", "sockets", "threads_per_core"}


@dataclass(frozen=True)
class Quantity:
    """A number in SI units with the text it was written as and where it comes from."""

    value: float
    text: str
    source: str


@dataclass(frozen=True)
class MemoryLevel:
    name: str
    bandwidth: Quantity
    capacity: Quantity | None


@dataclass(frozen=True)
class HwSpec:
    """A validated hardware spec. Peaks are keyed by (unit, precision)."""

    name: str
    device: str
    kind: str
    origin: str
    peaks: dict[tuple[str, str], Quantity]
    memory: tuple[MemoryLevel, ...]
    launch_overhead: Quantity | None = None
    network: Quantity | None = None
    parallelism: dict[str, Quantity] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()

    @property
    def dram(self) -> MemoryLevel:
        """Main memory: the last (slowest, largest) level."""
        return self.memory[-1]

    def peak(self, unit: str, precision: str) -> Quantity:
        """The peak for ``unit`` at ``precision``; a clear error when the device lacks it."""
        try:
            return self.peaks[(unit, precision)]
        except KeyError:
            have = sorted(f"{u}/{p}" for u, p in self.peaks)
            raise SpecError(
                self.origin,
                f"{self.name} has no {unit} peak at {precision} (it has: {', '.join(have)})",
            ) from None


def _quantity(origin: str, key: str, raw: Any, kind: str | None) -> Quantity:
    if not isinstance(raw, dict) or set(raw) != {"value", "source"}:
        raise SpecError(origin, "expected a mapping with 'value' and 'source'", key)
    source = raw["source"]
    if not isinstance(source, str) or not source.strip():
        raise SpecError(origin, "'source' must say where the number comes from", key)
    text = raw["value"]
    if kind is None:  # a plain count
        if isinstance(text, bool) or not isinstance(text, int) or text <= 0:
            raise SpecError(origin, f"expected a positive whole number, found {text!r}", key)
        return Quantity(float(text), str(text), source)
    try:
        return Quantity(parse_quantity(text, kind), str(text), source)
    except UnitError as err:
        raise SpecError(origin, str(err), key) from None


def _peaks(origin: str, raw: Any) -> dict[tuple[str, str], Quantity]:
    if not isinstance(raw, dict) or not raw:
        raise SpecError(origin, "expected a mapping of compute unit -> precision -> peak", "peaks")
    peaks: dict[tuple[str, str], Quantity] = {}
    for unit, per_precision in raw.items():
        if unit not in UNITS:
            raise SpecError(origin, f"unknown unit (expected one of {', '.join(UNITS)})",
                            f"peaks.{unit}")
        if not isinstance(per_precision, dict):
            raise SpecError(origin, "expected a mapping of precision -> peak", f"peaks.{unit}")
        for precision, q in per_precision.items():
            key = f"peaks.{unit}.{precision}"
            if precision not in PRECISIONS:
                raise SpecError(origin, f"unknown precision (expected one of "
                                f"{', '.join(PRECISIONS)})", key)
            peaks[(unit, precision)] = _quantity(origin, key, q, "throughput")
    return peaks


def _memory(origin: str, raw: Any) -> tuple[MemoryLevel, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpecError(origin, "expected a list of memory levels, main memory last", "memory")
    levels = []
    for i, level in enumerate(raw):
        key = f"memory[{i}]"
        if not isinstance(level, dict) or not isinstance(level.get("name"), str):
            raise SpecError(origin, "expected a mapping with a 'name'", key)
        key = f"memory.{level['name']}"
        unknown = set(level) - {"name", "bandwidth", "capacity"}
        if unknown:
            raise SpecError(origin, f"unknown key {sorted(unknown)[0]!r}", key)
        if "bandwidth" not in level:
            raise SpecError(origin, "missing 'bandwidth'", key)
        capacity = level.get("capacity")
        levels.append(MemoryLevel(
            level["name"],
            _quantity(origin, f"{key}.bandwidth", level["bandwidth"], "bandwidth"),
            None if capacity is None else _quantity(origin, f"{key}.capacity", capacity,
                                                    "capacity"),
        ))
    return tuple(levels)


def parse_spec(data: Any, origin: str) -> HwSpec:
    """Validate a spec already read from YAML; ``origin`` names it in messages."""
    if not isinstance(data, dict):
        raise SpecError(origin, "a spec must be a YAML mapping")
    for key in _REQUIRED:
        if key not in data:
            raise SpecError(origin, "missing required key", key)
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise SpecError(origin, f"unknown key (expected: {', '.join(sorted(_TOP_KEYS))})",
                        sorted(unknown)[0])
    if data["kind"] not in ("gpu", "cpu"):
        raise SpecError(origin, "expected 'gpu' or 'cpu'", "kind")
    parallelism_raw = data.get("parallelism") or {}
    if not isinstance(parallelism_raw, dict) or set(parallelism_raw) - _PARALLELISM:
        raise SpecError(origin, f"expected a mapping with keys among "
                        f"{', '.join(sorted(_PARALLELISM))}", "parallelism")
    optional = {
        key: _quantity(origin, key, data[key], kind)
        for key, kind in (("launch_overhead", "time"), ("network", "bandwidth"))
        if data.get(key) is not None
    }
    return HwSpec(
        name=str(data["name"]),
        device=str(data["device"]),
        kind=data["kind"],
        origin=origin,
        peaks=_peaks(origin, data["peaks"]),
        memory=_memory(origin, data["memory"]),
        parallelism={k: _quantity(origin, f"parallelism.{k}", v, None)
                     for k, v in parallelism_raw.items()},
        aliases=tuple(str(a) for a in data.get("aliases") or ()),
        **optional,
    )


def _bundled_dir() -> Any:
    return resources.files("sparsroof") / "hwspecs"


def _bundled_files() -> dict[str, Any]:
    return {p.name[: -len(".yaml")]: p for p in _bundled_dir().iterdir()
            if p.name.endswith(".yaml")}


def _read_yaml(text: str, origin: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or "malformed YAML"
        raise SpecError(origin, f"{where}malformed YAML: {problem}") from None


def _aliases() -> dict[str, str]:
    table = {}
    for name, resource in _bundled_files().items():
        data = yaml.safe_load(resource.read_text(encoding="utf-8"))
        for alias in data.get("aliases") or ():
            table[str(alias)] = name
    return table


def bundled_names() -> list[str]:
    """Names of the bundled specs (aliases not included)."""
    return sorted(_bundled_files())


def load_spec(name_or_path: str | Path) -> HwSpec:
    """Load a bundled spec by name or alias, or a user's YAML file by path."""
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or path.exists():
        try:
            content = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SpecError(text, "no such file") from None
        except (OSError, UnicodeDecodeError) as err:
            raise SpecError(text, f"cannot read: {err}") from None
        return parse_spec(_read_yaml(content, text), text)
    files = _bundled_files()
    name = _aliases().get(text, text)
    if name not in files:
        known = sorted(files) + sorted(_aliases())
        close = difflib.get_close_matches(text, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else f" (bundled: {', '.join(known)})"
        raise SpecError(text, f"no bundled hardware spec of that name{hint}")
    origin = f"{name}.yaml (bundled)"
    return parse_spec(_read_yaml(files[name].read_text(encoding="utf-8"), origin), origin)
