"""Measured runs judged against their speed-of-light bound: read the times a benchmark
wrote, bound each run with the same model ``analyze`` uses, and name every run that was
faster than its bound (a violation: the model or the spec is wrong)."""

from __future__ import annotations

from .judge import Judged, Summary, judge, summarise
from .runs import MeasuredRun, RowError, read_runs

__all__ = ["MeasuredRun", "RowError", "read_runs", "Judged", "Summary", "judge", "summarise"]
