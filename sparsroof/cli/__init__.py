"""The ``sparsroof`` command line: parse options, call the core, render, exit.

The command group and its commands are in :mod:`.group`, imported when a command runs: a
command whose answer was kept (:mod:`sparsroof.caching.answers`) prints it without them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .group import COMMANDS, SUMMARIES, LazyGroup, cli, short_help

__all__ = ["COMMANDS", "SUMMARIES", "LazyGroup", "cli", "main", "short_help"]

_GROUP = frozenset({"COMMANDS", "SUMMARIES", "LazyGroup", "cli", "short_help"})


def __getattr__(name: str) -> Any:
    """The command group's names, from :mod:`.group` when first asked for."""
    if name in _GROUP:
        from . import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _replayed(replay: Any, key: str) -> bool:
    """Print a kept answer as the command would have: a closed pipe ends it quietly with
    status 1 (as a fresh run ends) and an interrupt with "aborted" and 130 (as
    :func:`.guard.run_guarded` ends one)."""
    import os

    try:
        return bool(replay(key))
    except BrokenPipeError:  # as guard.silence_stdout, which would import click
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        print("sparsroof: error: aborted", file=sys.stderr)
        sys.exit(130)


def _one_blas_thread(args: list[str]) -> None:
    """Start numpy's BLAS with one thread, unless the user chose a count or the command
    is ``hw`` (its probe times matrix multiplies on every core). No other command
    multiplies dense matrices, and the thread pool that OpenBLAS starts at import,
    a thread per core spinning for a while, took about 0.04 s of a process's wall time
    and 0.14 s of CPU on two cores, beside the reader's own threads."""
    import os

    if args[:1] != ["hw"]:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, turn user errors into one-line messages. Run from a
    shell (``argv`` None), a command whose answer was kept prints it, and one that can be
    kept is (:mod:`sparsroof.caching.answers`)."""
    _one_blas_thread(sys.argv[1:] if argv is None else argv)
    key = None
    if argv is None:
        from ..caching.answers import answer_key, replay

        key = answer_key(sys.argv[1:])
        if key is not None and _replayed(replay, key):
            sys.exit(0)
    from .group import cli
    from .guard import run_guarded

    if key is None:
        sys.exit(run_guarded(cli, argv))
    from ..caching.answers import recorded

    sys.exit(recorded(key, lambda: run_guarded(cli, None)))
