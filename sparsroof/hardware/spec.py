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
      - name: L2                # a cache's bandwidth may be left out when unpublished
        capacity: {value: 40 MiB, source: ...}
      - name: HBM2e             # main memory: bandwidth required
        bandwidth: {value: 2039 GB/s, source: NVIDIA A100 datasheet}
        capacity: {value: 80 GB, source: NVIDIA A100 datasheet}
    launch_overhead: {value: 4.2 us, source: ...}        # optional (GPUs)
    network: {value: 600 GB/s, source: ...}              # optional, per device or node
    clock: {value: 1.41 GHz, source: ...}                # optional
    parallelism:                                         # optional plain counts
      sms: {value: 108, source: ...}
    notes: free text                                     # optional
    host: {probed: "2026-11-21"}                         # optional text fields (hw probe)

Bundled specs live in ``sparsroof/hwspecs`` and are found with importlib.resources; a
path to the user's own YAML file works wherever a bundled name does.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Hashable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ..errors import SpecError
from ..userfile import read_text

__all__ = [
    "UNITS",
    "PRECISIONS",
    "DEFAULT_PRECISIONS",
    "TOP_KEYS",
    "PARALLELISM",
    "Quantity",
    "MemoryLevel",
    "MainMemory",
    "HwSpec",
    "bundled_names",
    "load_spec",
    "parse_spec",
    "read_spec_file",
    "validate_file",
]

#: compute units a spec may give peaks for
UNITS = ("simt", "tensor", "tensor-sparse")
#: precisions a spec may give peaks for
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
#: the precision shown for each unit when none is asked for: the first one the device has.
#: SIMT/vector units: fp32, the precision every device has a datasheet figure for; tensor and
#: matrix units: fp16, the one precision all tensor generations (V100 onwards, CDNA) share.
DEFAULT_PRECISIONS = {
    "simt": ("fp32", "fp64", "fp16", "bf16"),
    "tensor": ("fp16", "bf16", "tf32", "fp32", "fp64", "fp8", "int8"),
    "tensor-sparse": ("fp16", "bf16", "tf32", "fp8", "int8"),
}
#: keys allowed at the top of a spec
TOP_KEYS = (
    "name", "aliases", "device", "kind", "notes", "peaks", "memory",
    "launch_overhead", "network", "parallelism", "clock", "host",
)
#: counts allowed under ``parallelism``
PARALLELISM = ("sms", "warps_per_sm", "threads_per_sm", "cores", "sockets", "threads_per_core")


@dataclass(frozen=True)
class Quantity:
    """A number in SI units with the text it was written as and where it comes from."""

    value: float
    text: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "text": self.text, "source": self.source}


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy; a cache's bandwidth may be unpublished (None)."""

    name: str
    bandwidth: Quantity | None
    capacity: Quantity | None
    instances: Quantity | None = None  # separate copies the capacity sums (per-core caches)

    @property
    def capacity_per_instance(self) -> float | None:
        """Bytes one core sees: the capacity over its instances (None when unknown)."""
        if self.capacity is None:
            return None
        return self.capacity.value / (self.instances.value if self.instances else 1)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name,
                "bandwidth": self.bandwidth.to_dict() if self.bandwidth else None,
                "capacity": self.capacity.to_dict() if self.capacity else None,
                "instances": self.instances.to_dict() if self.instances else None}


@dataclass(frozen=True)
class MainMemory(MemoryLevel):
    """The last level, DRAM or HBM: its bandwidth is always known."""

    bandwidth: Quantity


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
    clock: Quantity | None = None
    notes: str = ""
    host: dict[str, str] = field(default_factory=dict)

    @property
    def dram(self) -> MainMemory:
        """Main memory: the last (slowest, largest) level."""
        level = self.memory[-1]
        assert isinstance(level, MainMemory), "validation makes the last level MainMemory"
        return level

    @property
    def units(self) -> tuple[str, ...]:
        """The compute units this device has a peak for, in the order of :data:`UNITS`."""
        return tuple(u for u in UNITS if any(unit == u for unit, _ in self.peaks))

    def precisions(self, unit: str) -> tuple[str, ...]:
        """The precisions ``unit`` has a peak for, in the order of :data:`PRECISIONS`."""
        return tuple(p for p in PRECISIONS if (unit, p) in self.peaks)

    def default_precision(self, unit: str) -> str | None:
        """The precision shown for ``unit`` by default (see :data:`DEFAULT_PRECISIONS`).

        >>> load_spec("a100").default_precision("simt"), load_spec("a100").default_precision(
        ...     "tensor")
        ('fp32', 'fp16')
        """
        have = self.precisions(unit)
        return next((p for p in DEFAULT_PRECISIONS.get(unit, ()) if p in have), None)

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

    def ridge_point(self, unit: str, precision: str) -> float:
        """Machine balance in FLOP/byte: the intensity where the compute roof meets DRAM.

        ridge = P_unit / beta_DRAM (the roofline's ridge point; the *Time-Based Roofline for
        Deep Learning Performance Analysis* paper calls it the machine balance and gives
        107.479 TFLOP/s / 828.8 GB/s = 129.68 for its measured V100).

        >>> round(load_spec("v100-measured").ridge_point("tensor", "fp16"), 2)
        129.68
        """
        return self.peak(unit, precision).value / self.dram.bandwidth.value

    def to_dict(self) -> dict[str, Any]:
        """Everything in the spec as plain data: SI values, the text as written, sources."""
        peaks: dict[str, dict[str, Any]] = {}
        for (unit, precision), q in self.peaks.items():
            peaks.setdefault(unit, {})[precision] = q.to_dict()
        optional = {"launch_overhead": self.launch_overhead, "network": self.network,
                    "clock": self.clock}
        return {
            "name": self.name, "aliases": list(self.aliases), "device": self.device,
            "kind": self.kind, "origin": self.origin, "notes": self.notes,
            "peaks": peaks, "memory": [lv.to_dict() for lv in self.memory],
            **{k: (q.to_dict() if q else None) for k, q in optional.items()},
            "parallelism": {k: q.to_dict() for k, q in self.parallelism.items()},
            "host": dict(self.host),
        }


def parse_spec(data: Any, origin: str) -> HwSpec:
    """Validate a spec already read from YAML; raise the first problem found.

    ``origin`` names the spec in messages. When there are several problems the message
    says how many more ``sparsroof hw validate`` would list.
    """
    from .schema import check_spec

    spec, problems = check_spec(data, origin)
    if spec is None:
        first = problems[0]
        more = len(problems) - 1
        if more:
            first = SpecError(first.source, f"{first.problem} (and {more} more problem"
                              f"{'s' if more > 1 else ''}: see 'sparsroof hw validate')",
                              first.key)
        raise first
    return spec


def _bundled_dir() -> Any:
    return resources.files("sparsroof") / "hwspecs"


def _bundled_files() -> dict[str, Any]:
    return {p.name[: -len(".yaml")]: p for p in _bundled_dir().iterdir()
            if p.name.endswith(".yaml")}


_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when built


class _StrictLoader(_SAFE_LOADER):
    """PyYAML's safe loader, refusing a key written twice in one mapping (a silent overwrite
    in plain YAML, and in a spec almost always a copy-paste slip)."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if isinstance(key, Hashable):
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} written twice", key_node.start_mark)
            seen.add(key)
    return _SAFE_LOADER.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def _read_yaml(text: str, origin: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or "malformed YAML"
        raise SpecError(origin, f"{where}malformed YAML: {problem}") from None


@functools.lru_cache(maxsize=1)
def _aliases() -> dict[str, str]:
    table = {}
    for name, resource in _bundled_files().items():
        data = _read_yaml(resource.read_text(encoding="utf-8"), f"{name}.yaml (bundled)")
        for alias in (data or {}).get("aliases") or ():
            table[str(alias)] = name
    return table


def bundled_names() -> list[str]:
    """Names of the bundled specs (aliases not included)."""
    return sorted(_bundled_files())


def read_spec_file(name_or_path: str | Path) -> tuple[Any, str]:
    """The parsed YAML of a bundled spec (by name or alias) or a user's file, and its origin.

    A bundled name is tried only when the argument is not an existing path and does not end
    in ``.yaml``/``.yml``; an unknown name suggests the closest bundled one.
    """
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or path.exists():
        content = read_text(path, lambda problem: SpecError(text, problem))
        return _read_yaml(content, text), text
    files = _bundled_files()
    aliases = _aliases()
    name = aliases.get(text, text)
    if name not in files:
        known = sorted(files) + sorted(aliases)
        close = difflib.get_close_matches(text, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else f" (bundled: {', '.join(known)})"
        raise SpecError(text, f"no bundled hardware spec of that name{hint}")
    origin = f"{name}.yaml (bundled)"
    return _read_yaml(files[name].read_text(encoding="utf-8"), origin), origin


def load_spec(name_or_path: str | Path) -> HwSpec:
    """Load a bundled spec by name or alias, or a user's YAML file by path.

    >>> spec = load_spec("a100")
    >>> spec.name, spec.dram.bandwidth.text
    ('a100-80gb', '2039 GB/s')
    """
    data, origin = read_spec_file(name_or_path)
    return parse_spec(data, origin)


def validate_file(name_or_path: str | Path) -> list[SpecError]:
    """Every problem in one spec (an empty list when it is valid), not just the first."""
    from .schema import check_spec

    try:
        data, origin = read_spec_file(name_or_path)
    except SpecError as err:
        return [err]
    return check_spec(data, origin)[1]
