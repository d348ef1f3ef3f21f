"""Progress on stderr: a batch's matrices done, nonzeros per second, ETA and failures;
the time left of a run of steps (:func:`time_left`).

On a terminal a live bar; off one (a log file, CI, nohup) a line at a steady interval
(:class:`LineProgress`), so a long sweep gives a sign of life without filling the log.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["NoProgress", "BatchProgress", "LineProgress", "progress_for", "time_left"]

#: seconds between two progress lines off a terminal
LINE_INTERVAL = 60.0


class NoProgress:
    """A progress display that shows nothing, but counts the matrices done."""

    done = 0

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def advance(self, outcome: Any, failures: int) -> None:
        self.done += 1


class LineProgress(NoProgress):
    """One line on stderr every ``interval`` seconds (and none for a run shorter than
    that): matrices done of the total, entries per second, time left and failures."""

    def __init__(self, total: int, interval: float = LINE_INTERVAL,
                 echo: Any = None, clock: Any = time.monotonic) -> None:
        import sys

        self.total, self.interval, self.clock = total, interval, clock
        self.echo = echo or (lambda text: print(text, file=sys.stderr, flush=True))
        self.start = self.last = clock()
        self.entries = 0

    def advance(self, outcome: Any, failures: int) -> None:
        from ..units import si

        self.done += 1
        self.entries += outcome.entries if outcome.ok else 0
        now = self.clock()
        if now - self.last < self.interval:
            return
        self.last = now
        elapsed = now - self.start
        self.echo(f"sparsroof: batch: {self.done:,} of {self.total:,} matrices, "
                  f"{si(self.entries / max(elapsed, 1e-9), 'nnz/s')}, "
                  f"{time_left(elapsed, self.done, self.total)}, {failures} failed")


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

        self.done += 1
        self._entries += outcome.entries if outcome.ok else 0
        rate = self._entries / max(time.perf_counter() - self._start, 1e-9)
        self._progress.update(self._task, advance=1, failed=failures,
                              rate=si(rate, "nnz/s"))


def progress_for(total: int, interval: float = LINE_INTERVAL) -> NoProgress:
    """A rich progress bar when stderr is a terminal, else a line every ``interval``
    seconds (0: none)."""
    from rich.console import Console

    if not total:
        return NoProgress()
    if Console(stderr=True).is_terminal:
        return BatchProgress(total)
    return LineProgress(total, interval) if interval > 0 else NoProgress()


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
