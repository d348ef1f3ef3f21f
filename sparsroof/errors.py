"""Errors that reach the user as one line on stderr.

The core raises these; the command line turns each into ``sparsroof: error: <message>``
and an exit code. A message names the file (and the line or key when known) and what to
do about it. Anything that is not a :class:`SparsroofError` is a bug and keeps its traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "SparsroofError",
    "MatrixFileError",
    "SpecError",
    "UnknownSpecError",
    "OptionError",
    "UnitError",
    "ManifestError",
    "UnknownManifestError",
    "AccuracyError",
    "BudgetError",
    "CalibrationError",
    "StoreError",
    "BatchError",
    "ExportError",
    "FigureError",
    "GpuError",
    "closest",
    "meant",
    "unknown_choice",
]


#: longest file name or source shown in a message (a "path" read from a user's file can
#: be a megabyte of text; no real path is near this)
SOURCE_CHARS = 300


def clip(text: str, limit: int = 60) -> str:
    r"""A key or name from the user's file cut to ``limit`` characters for a message (a
    key may be a megabyte of text), its control characters escaped (a name holding a
    newline must not split the message in two).

    >>> len(clip("memory." + "x" * 100)), clip("memory." + "x" * 100)[-5:], clip("a\nb")
    (60, 'xx...', 'a\\nb')
    """
    text = text.translate(_CONTROL) if not text.isprintable() else text
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: control characters as their escapes
_CONTROL = {c: repr(chr(c))[1:-1] for c in (*range(32), 127)}


#: a parameter named in an option's message: ``{opt:d}``, or with a value ``{opt:kernel=spmm}``
_PARAMETER = re.compile(r"\{opt:([a-z_]+)(?:=([^}]*))?\}")


def _as_parameter(found: re.Match[str]) -> str:
    name, value = found.groups()
    return name if value is None else f"{name}={value!r}"


def _as_flag(found: re.Match[str]) -> str:
    name, value = found.groups()
    flag = "--" + name.replace("_", "-")
    return flag if value is None else f"{flag} {value}"


class SparsroofError(Exception):
    """Base class: a problem with the user's input, reported without a traceback.

    A message speaks of the API's parameters (``d: widths must be ...``); the command
    line shows the same message with its flags (``--d: widths must be ...``,
    :meth:`on_command_line`). The core writes a parameter into a message as
    ``{opt:name}``, or ``{opt:name=value}`` for a setting to try.

    >>> err = SparsroofError("{opt:d}: widths must be at least 1; or use {opt:kernel=spmm}")
    >>> str(err)
    "d: widths must be at least 1; or use kernel='spmm'"
    >>> err.on_command_line()
    '--d: widths must be at least 1; or use --kernel spmm'
    """

    exit_code = 1

    def __init__(self, *args: object) -> None:
        self.template = args[0] if args and isinstance(args[0], str) else None
        if self.template is not None:
            args = (_PARAMETER.sub(_as_parameter, self.template), *args[1:])
        super().__init__(*args)

    def on_command_line(self) -> str:
        """The message with each parameter shown as its command-line flag."""
        if self.template is None:
            return str(self)
        return _PARAMETER.sub(_as_flag, self.template)


class MatrixFileError(SparsroofError):
    """A matrix file that cannot be read: missing, malformed or too large."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = _PARAMETER.sub(_as_parameter, problem)  # in the API's words
        super().__init__(f"{clip(self.path, SOURCE_CHARS)}: {problem}")


class SpecError(SparsroofError):
    """A hardware spec that cannot be found or does not validate."""

    def __init__(self, source: str | Path, problem: str, key: str | None = None) -> None:
        self.source = clip(str(source), SOURCE_CHARS)
        self.key = clip(key) if key else key
        self.problem = _PARAMETER.sub(_as_parameter, problem)  # in the API's words
        where = f"{self.source}: {self.key}: " if key else f"{self.source}: "
        super().__init__(where + problem)


class UnknownSpecError(SpecError):
    """A spec name that is neither a bundled spec nor a file: a usage error, like a
    misspelt option value."""

    exit_code = 2


class OptionError(SparsroofError):
    """A combination of options that cannot work (reported as a usage error)."""

    exit_code = 2


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` that a slip of the keyboard turns into ``word``, or None:
    what every "did you mean" of the tool names.

    >>> closest("cssr", ["csr", "coo"]), closest("zzz", ["csr", "coo"]), closest("CSR", ["csr"])
    ('csr', None, 'csr')
    """
    choices = list(choices)
    same = [c for c in choices if c.lower() == word.lower()]
    if same:
        return same[0]
    import difflib

    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


def meant(word: object, choices: Iterable[str]) -> str:
    """``"; did you mean 'X'?"`` where :func:`closest` finds X for ``word``, else ``""``.

    >>> meant("cssr", ["csr", "coo"]), meant("zzz", ["csr"])
    ("; did you mean 'csr'?", '')
    """
    close = closest(str(word), choices)
    return f"; did you mean {close!r}?" if close else ""


def unknown_choice(part: str, choices: list[str] | tuple[str, ...], where: str = ""
                   ) -> OptionError:
    """The error of a value not among ``choices``: the closest one named where a slip of
    the keyboard explains it, and every choice.

    >>> str(unknown_choice("cssr", ("csr", "coo", "all")))
    "unknown choice 'cssr'; did you mean 'csr'? (choose from csr, coo, all)"
    """
    return OptionError(f"{where}unknown choice {part!r}{meant(part, choices)} (choose from "
                       f"{', '.join(choices)})")


def empty_item(value: str, where: str = "") -> OptionError:
    """The error of a comma list with a blank item: every list option says the same.

    >>> str(empty_item("csr,,coo", "storage: "))
    "storage: 'csr,,coo' has an empty value (two commas together, or one at an end)"
    """
    what = "is empty" if not value.strip() else "has an empty value (two commas together, " \
        "or one at an end)"
    return OptionError(f"{where}{value!r} {what}")


class UnitError(ValueError):
    """A quantity whose number or unit does not fit the kind expected (the caller adds
    the file and key and raises its own error)."""


class ManifestError(SparsroofError):
    """A network manifest that cannot be found or does not validate."""

    def __init__(self, source: str | Path, problem: str, key: str | None = None) -> None:
        source = clip(str(source), SOURCE_CHARS)
        where = f"{source}: {clip(key)}: " if key else f"{source}: "
        super().__init__(where + problem)


class UnknownManifestError(ManifestError):
    """A model name that is neither a bundled manifest nor a file: a usage error, like a
    misspelt option value."""

    exit_code = 2


class AccuracyError(SparsroofError):
    """An accuracy file that cannot be read."""


class BudgetError(SparsroofError):
    """A budget file, measured-results file or baseline that cannot be used (exit 2)."""

    exit_code = 2

    def __init__(self, source: str | Path, problem: str, check: str | None = None,
                 key: str | None = None) -> None:
        where = [clip(str(source), SOURCE_CHARS)]
        if check is not None:
            where.append(f"check {clip(check, 40)!r}")
        if key:
            where.append(clip(key))
        super().__init__(": ".join([*where, problem]))


class CalibrationError(SparsroofError):
    """A calibration file that cannot be used."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{clip(str(path), SOURCE_CHARS)}: {problem}")


class StoreError(SparsroofError):
    """A result store that cannot be opened or is not a sparsroof store."""


class BatchError(SparsroofError):
    """A batch that cannot start (e.g. an unreachable Dask scheduler)."""


class ExportError(SparsroofError):
    """An export that cannot be written (unknown suffix, missing pyarrow, unwritable)."""


class FigureError(SparsroofError):
    """A figure that cannot be written, or plot input that cannot be read."""


class MeasuredRunsError(SparsroofError):
    """A file of measured runs that cannot be read at all (not one bad row: those are
    reported per row and the rest are judged)."""


class GpuError(SparsroofError):
    """A GPU measurement that cannot run: CuPy missing (the ``gpu`` extra), no CUDA
    device, or a kernel whose result is wrong."""
