"""Progress on stderr: a batch's matrices done, nonzeros per second, ETA and failures;
the time left of a run of steps (:func:`time_left`).

Shown only when stderr is a terminal; otherwise :class:`NoProgress` keeps quiet.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["NoProgress", "BatchProgress", "progress_for", "time_left"]


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


def time_left(elapsed: float, done: int, total: int) -> str:
    """The time left to finish ``total`` steps when ``done`` took ``elapsed`` seconds, at
    the mean pace so far (unknown before the first step is done).

    >>> time_left(100.0, 20, 150), time_left(30.0, 10, 12), time_left(5.0, 0, 150)
    ('about 10 min 50 s left', 'about 6 s left', 'time left unknown')
    """
    if done <= 0:
        return "time left unknown"
    left = round(elapsed / done * max(total - done, 0))
    minutes, seconds = divmod(left, 60)
    return f"about {minutes} min {seconds} s left" if minutes else f"about {seconds} s left"
