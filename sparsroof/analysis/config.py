"""What to model: the :class:`Config` of an analysis, and options as a person writes
them ("1,4,16", "csr,ell", "all") turned into one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..errors import OptionError, empty_item, unknown_choice
from ..hardware.spec import UNITS
from ..model.timing import DEFAULT_TIMING, check_timing
from ..model.traffic import INDEX_BYTES, KERNELS, MODELS, STORAGES, VALUE_BYTES
from ..structure.reorder import ORDERINGS
from ..userfile.fields import FieldError, flag, number, text, whole_number

__all__ = ["MAX_RANKS", "MAX_WIDTH", "Config", "OptionValue", "whole_numbers"]

#: widest B (columns d) a file of runs or a budget may name: past any SpMM measured, and
#: small enough that bytes and FLOPs stay exact
MAX_WIDTH = 1 << 20
#: the most ranks a distributed bound is asked for (flat MPI on the largest machines runs
#: a few million)
MAX_RANKS = 1 << 24


#: an option's value as a person writes it: a number, a name, a comma list or a list
OptionValue = str | int | float | bool | Sequence[str | int] | None
#: the command line's option names for Config fields
_ALIASES = {"d": "widths", "width": "widths", "storage": "storages", "model": "models",
            "rank": "ranks"}


#: the names the tables give the band's edges, as --model accepts them
MODEL_SYNONYMS = {"optimistic": "compulsory", "pessimistic": "random"}


def _listed(value: OptionValue) -> list[Any]:
    """An option's values: text and numbers are one value; a range, a set or an array of
    them as many."""
    if value is None or isinstance(value, (str, bytes, int, float)) \
            or not hasattr(value, "__iter__"):
        return [value]
    return list(value)


#: the kind of each single-valued field of :class:`Config` (the least a whole number may
#: be, for a whole number); a name is checked against its choices by the checks after
_KINDS: dict[str, str | int] = {
    "kernel": "name", "dtype": "name", "index": "name", "unit": "name", "precision": "name",
    "timing": "name", "hyb_split": "name", "launches": 0, "block_size": 1,
    "calls_per_sync": 1, "reuse_factor": "real", "hub_fraction": "real", "cache_roof": "flag"}
#: the fields that may be None (the default chooses)
_OPTIONAL = {"unit", "precision", "launches", "block_size"}


def _field(name: str, value: Any, from_text: bool = False) -> Any:
    """``value`` of field ``name`` in its kind, read by the checks a user's file is read
    by (:mod:`sparsroof.userfile.fields`: never a boolean for a number, numpy's scalars
    as Python's), ``from_text`` as a person writes it ("3", "0.5"); else a usage error
    naming the field."""
    kind, what = _KINDS[name], f"{{opt:{name}}}"
    try:
        if kind == "name":
            return text(value, what)
        if kind == "real":
            return number(value, what, from_text=from_text)
        if kind == "flag":
            return flag(value, what)
        assert isinstance(kind, int)
        return whole_number(value, what, from_text=from_text, minimum=kind)
    except FieldError as err:
        raise OptionError(str(err)) from None


def _normalise(name: str, value: OptionValue) -> Any:
    """One option's value as its Config field holds it."""
    if name in ("widths", "ranks"):
        return whole_numbers(_listed(value), "{opt:d}" if name == "widths" else "{opt:ranks}")
    if name == "storages":
        return _names([str(v) for v in _listed(value)], STORAGES, option="storage")
    if name == "models":  # the tables call the band's edges optimistic and pessimistic
        spelled = [str(v) for v in _listed(value)]
        blank = next((v for v in spelled if any(not p.strip() for p in v.split(","))), None)
        if blank is not None:  # named as given, before the synonyms are read
            raise empty_item(blank, "{opt:model}: ")
        return _names([",".join(MODEL_SYNONYMS.get(p.strip(), p.strip())
                                for p in v.split(",")) for v in spelled],
                      MODELS, extra=("auto",), option="model")
    if name == "reorder":
        return _names([str(v) for v in _listed(value)], list(ORDERINGS), option="reorder")
    return _field(name, value, from_text=True) if name in _KINDS else value


@dataclass(frozen=True)
class Config:
    """What to model. ``models`` may hold "auto" (the class's model, the cache-aware one
    and the optimistic/pessimistic band); ``unit`` None picks the unit per format;
    ``launches`` None means one launch where the spec has a launch overhead; ``reorder``
    names orderings (:data:`sparsroof.structure.reorder.ORDERINGS`) whose reordered
    matrix is analysed too and set beside the original by the cache-aware model;
    ``hyb_split`` "rule" splits HYB by Bell & Garland's width, "least" at the width that
    stores the fewest bytes (the bound of a HYB split by any rule); ``timing`` says how the
    runs the bound is for are timed (:mod:`sparsroof.model.timing`), with
    ``calls_per_sync`` calls per host synchronisation for ``sync``."""

    kernel: str = "spmv"
    widths: tuple[int, ...] = (1,)
    dtype: str = "fp64"
    index: str = "int32"
    storages: tuple[str, ...] = ("csr",)
    models: tuple[str, ...] = ("auto",)
    unit: str | None = None
    precision: str | None = None
    launches: int | None = None
    ranks: tuple[int, ...] = ()
    cache_roof: bool = True
    reuse_factor: float = 0.25
    hub_fraction: float = 0.001
    block_size: int | None = None
    reorder: tuple[str, ...] = ()
    hyb_split: str = "rule"
    timing: str = DEFAULT_TIMING
    calls_per_sync: int = 1

    def __post_init__(self) -> None:
        self._tupled()
        self._typed()
        check_timing(self.timing, self.calls_per_sync)
        checks = (
            (self.timing == "sync" or self.calls_per_sync == 1,
             "{opt:calls_per_sync} counts the calls between two host synchronisations: "
             "it goes with {opt:timing=sync}"),
            (self.kernel in KERNELS, f"{{opt:kernel}}: unknown kernel {self.kernel!r} (choose from "
                                      f"{', '.join(KERNELS)})"),
            (self.dtype in VALUE_BYTES, f"{{opt:dtype}}: unknown dtype {self.dtype!r} (choose "
                                         f"from {', '.join(VALUE_BYTES)})"),
            (self.index in INDEX_BYTES, f"{{opt:index}}: unknown index type {self.index!r}"),
            (bool(self.widths) and all(1 <= w <= MAX_WIDTH for w in self.widths),
             f"{{opt:d}}: widths must be whole numbers from 1 to {MAX_WIDTH:,}"),
            (self.kernel != "spmv" or set(self.widths) == {1},
             "{opt:d}: spmv multiplies by one vector (d = 1); for wider B use {opt:kernel=spmm}"),
            (all(s in STORAGES for s in self.storages),
             f"{{opt:storage}}: unknown storage in {self.storages} (choose from "
             f"{', '.join(STORAGES)})"),
            (all(m in (*MODELS, "auto") for m in self.models),
             f"{{opt:model}}: unknown model in {self.models} (choose from auto, "
             f"{', '.join(MODELS)})"),
            (self.unit is None or self.unit in UNITS, f"{{opt:unit}}: unknown unit {self.unit!r}"),
            (all(1 <= p <= MAX_RANKS for p in self.ranks),
             f"{{opt:ranks}}: rank counts must be whole numbers from 1 to {MAX_RANKS:,}"),
            (0 < self.reuse_factor <= 1, "{opt:reuse_factor} must lie in (0, 1]"),
            (0 < self.hub_fraction < 1, "{opt:hub_fraction} must lie in (0, 1)"),
            (self.launches is None or self.launches >= 0, "{opt:launches} must be 0 or more"),
            (self.block_size is None or self.block_size in (2, 4, 8, 16, 32),
             "{opt:block_size} must be 2, 4, 8, 16 or 32"),
            (all(o in ORDERINGS for o in self.reorder),
             f"{{opt:reorder}}: unknown ordering in {self.reorder} (choose from "
             f"{', '.join(ORDERINGS)})"),
            (not self.reorder or bool({"auto", "cache-aware"} & set(self.models)),
             "{opt:reorder} compares the cache-aware model: keep auto or cache-aware in "
             "{opt:model}"),
            (self.hyb_split in ("rule", "least"), "{opt:hyb_split} is 'rule' or 'least'"),
        )
        for ok, message in checks:
            if not ok:
                raise OptionError(message)

    def _tupled(self) -> None:
        """The fields that hold several values, as tuples (a list given is kept as one, so
        that a Config stays hashable); text there is refused, since ``"csr"`` would be
        read letter by letter: :meth:`from_options` reads ``"1,16"`` and ``"csr,ell"``.

        >>> Config(storages="csr,ell")
        Traceback (most recent call last):
        ...
        sparsroof.errors.OptionError: storages='csr,ell': give a tuple such as ('csr', 'ell'), ...
        """
        for name, option, kind in (("widths", "d", int), ("storages", "storage", str),
                                   ("models", "model", str), ("ranks", "ranks", int),
                                   ("reorder", "reorder", str)):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, tuple | list):
                example = "(1, 16)" if kind is int else "('csr', 'ell')"
                raise OptionError(f"{name}={value!r}: give a tuple such as {example}, or "
                                  f"Config.from_options({option}={value!r})")
            if kind is int and not all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in value):
                raise OptionError(f"{name}={value!r}: whole numbers only")
            object.__setattr__(self, name, tuple(value))

    def _typed(self) -> None:
        """Each single value of its kind: a name, a whole number, a real number or a flag
        (numpy's scalars as Python's), else a usage error naming the field; a name is not
        checked against its choices here (the checks after say which there are).

        >>> Config(launches="3")
        Traceback (most recent call last):
        ...
        sparsroof.errors.OptionError: launches is the string '3', expected a whole number ...
        """
        for name in _KINDS:
            value = getattr(self, name)
            if not (value is None and name in _OPTIONAL):
                object.__setattr__(self, name, _field(name, value))

    @classmethod
    def from_options(cls, **options: OptionValue) -> Config:
        """A Config from options as the command line takes them: ``d`` (or ``widths``)
        and ``ranks`` as whole numbers or comma lists ("1,4,16"); ``storage`` and
        ``model`` (or ``storages``, ``models``) as names, comma lists or "all"; the other
        fields by their own names. An option left None or empty keeps its default.

        >>> c = Config.from_options(kernel="spmm", d="1,4", storage="csr,ell", model=None)
        >>> c.widths, c.storages, c.models
        ((1, 4), ('csr', 'ell'), ('auto',))
        """
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in options.items():
            name = _ALIASES.get(key, key)
            if name not in known:
                raise OptionError(f"unknown option {key!r} (choose from "
                                  f"{', '.join(sorted(known | set(_ALIASES)))})")
            if value is None or (isinstance(value, (tuple, list)) and not value):
                continue
            values[name] = _normalise(name, value)
        return cls(**values)


def _names(values: Sequence[str], table: Sequence[str], extra: Sequence[str] = (),
           option: str = "") -> tuple[str, ...]:
    """Split comma lists and expand "all".

    >>> _names(["csr,ell", "csr"], ["csr", "ell", "coo"])
    ('csr', 'ell')
    >>> _names(["all"], ["csr", "ell"])
    ('csr', 'ell')
    """
    names: list[str] = []
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                raise empty_item(value, f"{{opt:{option}}}: " if option else "")
            if part == "all":
                names.extend(table)
            else:
                if part == "bsr" and "bsr4" in table:  # bench's name, with --block there
                    raise OptionError(f"{{opt:{option}}}: 'bsr' needs its block size here: "
                                      f"{', '.join(t for t in table if t.startswith('bsr'))}")
                if part not in table and part not in extra:
                    raise unknown_choice(part, [*extra, *table, "all"],
                                         f"{{opt:{option}}}: " if option else "")
                names.append(part)
    return tuple(dict.fromkeys(names))


def whole_numbers(values: Sequence[str | int], option: str = "") -> tuple[int, ...]:
    """Whole numbers from ``["1,4", 16]``: ``(1, 4, 16)``; an error names ``option``.

    >>> whole_numbers(["1,4", 16])
    (1, 4, 16)
    >>> whole_numbers(["1,x"], "{opt:d}")
    Traceback (most recent call last):
    sparsroof.errors.OptionError: d: 'x' is not a whole number
    """
    widths: list[int] = []
    for value in values:
        if isinstance(value, bool):
            raise OptionError(f"{option + ': ' if option else ''}{value!r} is not a whole "
                              "number")
        if isinstance(value, int):
            widths.append(value)
            continue
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                raise empty_item(str(value), f"{option}: " if option else "")
            try:
                widths.append(int(part))
            except ValueError:
                where = f"{option}: " if option else ""
                raise OptionError(f"{where}{part!r} is not a whole number") from None
    return tuple(dict.fromkeys(widths))
