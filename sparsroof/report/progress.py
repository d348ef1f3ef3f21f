"""Progress of a batch on stderr: matrices done, nonzeros per second, ETA and failures.

Shown only when stderr is a terminal; otherwise :class:`NoProgress` keeps quiet.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["NoProgress", "BatchProgress", "progress_for"]


class NoProgress:
    """A progress display that shows nothing."""

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def advance(self, outcome: Any, failures: int) -> None:
        return None


class BatchProgress(NoProgress):
    """A rich progress bar on stderr."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("analysing"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TextColumn("ETA"), TimeRemainingColumn(),
            TextColumn("{task.fields[failed]} failed"),
            console=Console(stderr=True), transient=False)
        self._task = self._progress.add_task("batch", total=total, rate="", failed=0)
        self._start = time.perf_counter()
        self._entries = 0

    def __enter__(self) -> BatchProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, outcome: Any, failures: int) -> None:
        from ..units import si

        self._entries += outcome.entries if outcome.ok else 0
        rate = self._entries / max(time.perf_counter() - self._start, 1e-9)
        self._progress.update(self._task, advance=1, failed=failures,
                              rate=si(rate, "nnz/s"))


def progress_for(total: int) -> NoProgress:
    """A rich progress bar when stderr is a terminal, else a silent one."""
    from rich.console import Console

    if total and Console(stderr=True).is_terminal:
        return BatchProgress(total)
    return NoProgress()
