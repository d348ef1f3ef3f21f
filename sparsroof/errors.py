"""Errors that reach the user as one line on stderr.

The core raises these; the command line turns each into ``sparsroof: error: <message>``
and an exit code. A message names the file (and the line or key when known) and what to
do about it. Anything that is not a :class:`SparsroofError` is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "SparsroofError",
    "MatrixFileError",
    "SpecError",
    "OptionError",
]


class SparsroofError(Exception):
    """Base class: a problem with the user's input, reported without a traceback."""

    exit_code = 1


class MatrixFileError(SparsroofError):
    """A matrix file that cannot be read: missing, malformed or too large."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class SpecError(SparsroofError):
    """A hardware spec that cannot be found or does not validate."""

    def __init__(self, source: str | Path, problem: str, key: str | None = None) -> None:
        self.source = str(source)
        self.key = key
        self.problem = problem
        where = f"{self.source}: {key}: " if key else f"{self.source}: "
        super().__init__(where + problem)


class OptionError(SparsroofError):
    """A combination of options that cannot work (reported as a usage error)."""

    exit_code = 2
