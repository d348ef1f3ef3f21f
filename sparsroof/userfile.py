"""Reading a user's text file (spec, budget, manifest, results) with one-line errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["read_text"]


def read_text(path: str | Path, fail: Callable[[str], Exception]) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable or binary file raises
    ``fail(problem)``, so each caller keeps its own error class (and exit code).

    >>> read_text("/no/such/file.yaml", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: no such file
    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail("no such file") from None
    except IsADirectoryError:
        raise fail("is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise fail(f"cannot read: {err}") from None
