"""Performance budgets: a YAML file of checks that CI runs against the models.

A budget file names matrices (paths or globs, relative to the file's own folder), the
hardware, kernel, widths, precision, storage format and B-reuse model, and the limits each
modelled configuration must meet::

    version: 1
    defaults: {hw: a100, kernel: spmv, dtype: fp64, storage: csr, model: compulsory}
    measured: measured.csv            # optional: matrix, time_s, kernel, d, ...
    # optional settings: timing (graph, stream, sync, cold: how the measured runs are
    # timed, which sets the launch floor) and calls_per_sync (with timing: sync)
    checks:
      - name: laplacian-spmv
        matrices: ["../data/lap2d_64.mtx"]
        limits:
          max_sol_latency: 15 us
          min_attainable: 100 GFLOP/s
          min_speedup_over_dense: 10
          max_bytes_moved: 2 MB
          expected_bound: memory
          min_fraction_of_sol: 0.5

Settings are checked against the core's own tables (:data:`sparsroof.model.traffic.STORAGES`,
:data:`~sparsroof.model.traffic.MODELS`, ...), so a format or model added there works here.
Every problem with the file is a :class:`BudgetError`: one line naming the file, the check
and the key, exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..analysis import Config
from ..analysis.config import MAX_WIDTH
from ..errors import BudgetError, OptionError, SparsroofError, UnitError, meant
from ..hardware.library import load_spec
from ..hardware.spec import UNITS, HwSpec
from ..model.timing import DEFAULT_TIMING, TIMINGS
from ..model.traffic import INDEX_BYTES, KERNELS, MODELS, STORAGES, VALUE_BYTES
from ..units import parse_quantity
from ..userfile import (
    LARGEST,
    MAX_CONFIG_BYTES,
    FieldError,
    control_character,
    load_yaml,
    number,
    read_text,
    shown,
)
from .globs import expand

__all__ = [
    "BOUNDS",
    "LIMITS",
    "Budget",
    "Check",
    "Limit",
    "load_budget",
    "parse_budget",
    "parse_fraction",
]

#: the names a kernel's bound can take (see :func:`sparsroof.model.bound.sol_seconds`)
BOUNDS = ("memory", "compute", "launch")



@dataclass(frozen=True)
class Limit:
    """One kind of limit: its key in the file, what it measures, its unit and direction."""

    key: str
    label: str
    unit: str  # "s", "FLOP/s", "B", "x", "fraction" or "" (a name)
    direction: str  # "max", "min" or "equal"


#: every limit a check may set, by key
LIMITS: dict[str, Limit] = {lim.key: lim for lim in (
    Limit("max_sol_latency", "SoL latency", "s", "max"),
    Limit("min_attainable", "attainable", "FLOP/s", "min"),
    Limit("min_speedup_over_dense", "speedup over dense", "x", "min"),
    Limit("max_bytes_moved", "bytes moved", "B", "max"),
    Limit("expected_bound", "bound", "", "equal"),
    Limit("min_fraction_of_sol", "fraction of SoL", "fraction", "min"),
)}
#: most kernel calls per host synchronisation a check may name
_MAX_CALLS = 10**6
_QUANTITY_KINDS = {"max_sol_latency": "time", "min_attainable": "throughput",
                   "max_bytes_moved": "capacity"}

_TOP_KEYS = ("version", "defaults", "measured", "checks")
_SETTINGS = ("hw", "kernel", "widths", "dtype", "index", "storage", "model", "unit", "timing",
             "calls_per_sync")
_CHECK_KEYS = ("name", "matrices", *_SETTINGS, "limits")
_DEFAULTS = {"kernel": "spmv", "widths": [1], "dtype": "fp64", "index": "int32",
             "storage": "csr", "model": "compulsory", "unit": None,
             "timing": DEFAULT_TIMING, "calls_per_sync": 1}


@dataclass(frozen=True)
class Check:
    """One validated check: matrices, the configuration to model and its limits."""

    name: str
    line: int | None  # line of the check in the budget file, for annotations
    matrices: tuple[str, ...]  # resolved paths, in order
    spec: HwSpec
    config: Config  # one storage and one model
    limits: tuple[tuple[str, float | str], ...]  # (key, SI value or bound name)


@dataclass(frozen=True)
class Budget:
    path: str
    checks: tuple[Check, ...]
    measured: str | None  # resolved path of the measured-results file, if any


class _Problem(Exception):
    """A problem with one key; turned into a :class:`BudgetError` with file and check."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key
        self.problem = problem


def parse_fraction(value: object) -> float:
    """A fraction written as ``0.05`` or ``"5%"``; must lie in (0, 1].

    >>> parse_fraction("5%"), parse_fraction(0.5)
    (0.05, 0.5)
    """
    number: object = value
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ValueError(f"{shown(value)} is not a fraction such as 0.5 or '50%'") from None
    if isinstance(number, bool) or not isinstance(number, int | float) or not 0 < number <= 1:
        raise ValueError(f"{shown(value)} is not a fraction between 0 and 1 (such as 0.5 or '50%')")
    return float(number)


def _positive_number(value: object) -> float:
    text = value[:-1].strip() if isinstance(value, str) and value.endswith("x") else value
    try:
        return number(text, "limit", from_text=True, positive=True, maximum=LARGEST)
    except FieldError:
        raise ValueError(f"{shown(value)} is not a positive number such as 10 or "
                         "'10x'") from None


def _limit_value(key: str, raw: object) -> float | str:
    if key in _QUANTITY_KINDS:
        return parse_quantity(raw, _QUANTITY_KINDS[key])
    if key == "expected_bound":
        if raw not in BOUNDS:
            raise ValueError(f"{shown(raw)} is not one of {', '.join(BOUNDS)}")
        return str(raw)
    if key == "min_fraction_of_sol":
        return parse_fraction(raw)
    return _positive_number(raw)


def _limits(raw: object) -> tuple[tuple[str, float | str], ...]:
    if not isinstance(raw, dict) or not raw:
        raise _Problem("limits", f"expected a mapping with some of: {', '.join(LIMITS)}")
    out = []
    for key, value in raw.items():
        if key not in LIMITS:
            raise _Problem(f"limits.{key}", f"unknown limit{meant(key, LIMITS)} (known: "
                           f"{', '.join(LIMITS)})")
        try:
            out.append((str(key), _limit_value(key, value)))
        except (UnitError, ValueError) as err:
            raise _Problem(f"limits.{key}", str(err)) from None
    return tuple(out)


def _choice(key: str, value: object, known: Any) -> str:
    if not isinstance(value, str) or value not in known:
        raise _Problem(key, f"unknown {key} {shown(value)} (known: {', '.join(known)})")
    return value


def _calls_per_sync(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_CALLS:
        raise _Problem("calls_per_sync", f"expected a whole number >= 1 (at most "
                       f"{_MAX_CALLS:,}), found {shown(value)}")
    return value


def _widths(value: object) -> tuple[int, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or any(isinstance(w, bool) or not isinstance(w, int)
                        or not 1 <= w <= MAX_WIDTH for w in items):
        raise _Problem("widths", f"expected a whole number >= 1 (at most {MAX_WIDTH:,}) or "
                       f"a list of them, found {shown(value)}")
    return tuple(dict.fromkeys(items))


def _matrices(value: object, base: Path) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    patterns = [p for p in items if isinstance(p, str) and p.strip()]
    if not patterns or len(patterns) != len(items):
        raise _Problem("matrices", "expected a path or glob, or a list of them")
    try:
        return expand(patterns, base)
    except ValueError as err:
        raise _Problem("matrices", str(err)) from None


def _spec(value: object, base: Path, cache: dict[str, HwSpec]) -> HwSpec:
    if not isinstance(value, str) or not value.strip():
        raise _Problem("hw", "expected a bundled spec name or a path to a YAML spec")
    is_path = value.endswith((".yaml", ".yml")) or "/" in value
    where = str(base / value) if is_path else value
    if where not in cache:
        try:
            cache[where] = load_spec(where)
        except SparsroofError as err:
            raise _Problem("hw", str(err)) from None
    return cache[where]


def _settings(raw: dict[str, Any], defaults: dict[str, Any], base: Path,
              specs: dict[str, HwSpec]) -> tuple[HwSpec, Config]:
    s = {**_DEFAULTS, **defaults, **{k: raw[k] for k in _SETTINGS if k in raw}}
    if "hw" not in s:
        raise _Problem("hw", "missing: name the hardware in the check or in 'defaults'")
    spec = _spec(s["hw"], base, specs)
    kernel = _choice("kernel", s["kernel"], KERNELS)
    widths = _widths(s["widths"])
    if kernel == "spmv" and widths != (1,):
        raise _Problem("widths", "spmv multiplies by one vector (width 1); use kernel: spmm")
    config = Config(kernel=kernel, widths=widths, dtype=_choice("dtype", s["dtype"], VALUE_BYTES),
                    index=_choice("index", s["index"], INDEX_BYTES),
                    storages=(_choice("storage", s["storage"], STORAGES),),
                    models=(_choice("model", s["model"], MODELS),),
                    # unset, as analyze leaves it: the sparse kernel on the SIMT cores,
                    # the dense GEMM it is compared with on the tensor cores
                    unit=None if s["unit"] is None else _choice("unit", s["unit"], UNITS),
                    timing=_choice("timing", s["timing"], TIMINGS),
                    calls_per_sync=_calls_per_sync(s["calls_per_sync"]))
    try:
        spec.peak(config.unit or "simt", config.dtype)
    except SparsroofError as err:
        raise _Problem("dtype", str(err)) from None
    return spec, config


def _check(raw: object, index: int, line: int | None, defaults: dict[str, Any], base: Path,
           specs: dict[str, HwSpec]) -> Check:
    if not isinstance(raw, dict):
        raise _Problem(f"checks[{index}]", "expected a mapping with 'name', 'matrices', "
                       "'limits' and settings")
    unknown = [k for k in raw if k not in _CHECK_KEYS]
    if unknown:
        raise _Problem(str(unknown[0]), f"unknown key{meant(unknown[0], _CHECK_KEYS)} "
                                        f"(known: {', '.join(_CHECK_KEYS)})")
    for key in ("matrices", "limits"):
        if key not in raw:
            raise _Problem(key, "missing required key")
    spec, config = _settings(raw, defaults, base, specs)
    return Check(name=str(raw["name"]), line=line, matrices=_matrices(raw["matrices"], base),
                 spec=spec, config=config, limits=_limits(raw["limits"]))


def _check_name(raw: object, index: int, seen: set[str]) -> str | None:
    if not isinstance(raw, dict):
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Problem(f"checks[{index}].name", "every check needs a name (a non-empty string)")
    if control_character(name):  # printed in the table and the JUnit file
        raise _Problem(f"checks[{index}].name", f"holds {control_character(name)}")
    if name in seen:
        raise _Problem(f"checks[{index}].name", f"duplicate check name {shown(name)}")
    seen.add(name)
    return name


def _defaults(raw: object) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _Problem("defaults", f"expected a mapping of settings ({', '.join(_SETTINGS)})")
    for key in raw:
        if key not in _SETTINGS:
            raise _Problem(f"defaults.{key}", f"unknown setting (known: {', '.join(_SETTINGS)})")
    return dict(raw)


def _top(data: object) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _Problem("checks", "a budget file is a YAML mapping with a list of 'checks'")
    for key in data:
        if key not in _TOP_KEYS:
            raise _Problem(str(key), f"unknown key{meant(key, _TOP_KEYS)} (known: "
                                     f"{', '.join(_TOP_KEYS)})")
    version = data.get("version", 1)
    if isinstance(version, bool) or version != 1:
        raise _Problem("version", f"unsupported budget file version {shown(data['version'])} "
                       "(this sparsroof reads version 1)")
    checks = data.get("checks")
    if not isinstance(checks, list) or not checks:
        raise _Problem("checks", "expected a non-empty list of checks")
    measured = data.get("measured")
    if measured is not None and (not isinstance(measured, str) or not measured.strip()):
        raise _Problem("measured", "expected the path of a JSON or CSV file")
    return data


def parse_budget(data: object, origin: str | Path, lines: list[int] | None = None,
                 measured: str | Path | None = None) -> Budget:
    """Validate a budget already read from YAML.

    ``origin`` is the file (paths in it are relative to its folder), ``lines`` the line of
    each check for annotations, ``measured`` a measured-results file that replaces the
    file's own ``measured`` key.
    """
    base = Path(origin).parent
    specs: dict[str, HwSpec] = {}
    seen: set[str] = set()
    name = None
    try:
        top = _top(data)
        defaults = _defaults(top.get("defaults"))
        checks = []
        for i, raw in enumerate(top["checks"]):
            name = _check_name(raw, i, seen)
            line = lines[i] if lines and i < len(lines) else None
            checks.append(_check(raw, i, line, defaults, base, specs))
            name = None
    except _Problem as err:
        raise BudgetError(origin, err.problem, name, err.key) from None
    except OptionError as err:
        raise BudgetError(origin, str(err), name) from None
    own = top.get("measured")
    where = str(measured) if measured is not None else str(base / own) if own else None
    return Budget(str(origin), tuple(checks), where)


def _check_lines(node: yaml.Node | None) -> list[int]:
    """1-based line of each item of the top-level ``checks`` list (empty if none)."""
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if getattr(key, "value", None) == "checks" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def load_budget(path: str | Path, measured: str | Path | None = None) -> Budget:
    """Read and validate the budget file at ``path`` (YAML, loaded safely, its aliases
    bounded: see :func:`~sparsroof.userfile.load_yaml`)."""
    def fail(problem: str) -> BudgetError:
        return BudgetError(path, problem)

    data, node = load_yaml(read_text(path, fail, limit=MAX_CONFIG_BYTES), fail)
    return parse_budget(data, path, _check_lines(node), measured)
