"""The reordering table of ``sparsroof analyze --reorder``: each ordering beside the
original order, by the cache-aware model, with the best one marked."""

from __future__ import annotations

from typing import Any

from ..analysis import Analysis
from ..analysis.reordering import NOTABLE_GAIN
from ..analysis.results import Gain
from ..units import plain, si
from .tables import fitted_table

__all__ = ["to_reorder_table"]

_HEADERS = ("d", "format", "ordering", "bandwidth", "B", "time", "gain", "reorder time",
            "break-even", "best")


def _runs(value: float | None) -> str:
    return "never" if value is None else f"{si(value, '')} runs".replace("  ", " ")


def _rows(analysis: Analysis) -> list[tuple[str, ...]]:
    """The original order's row, then one row per ordering, for each (width, format)."""
    per_key: dict[tuple[int, str], list[tuple[str, float, Gain]]] = {}
    for ro in analysis.reorderings:
        for g in ro.gains:
            per_key.setdefault((g.width, g.storage), []).append((ro.ordering, ro.seconds, g))
    rows: list[tuple[str, ...]] = []
    for (width, storage), found in per_key.items():
        first = found[0][2]
        some_best = any(g.best for *_, g in found)
        rows.append((str(width), storage, "original", f"{first.original_bandwidth:,}",
                     si(first.original_bytes_b, "B"), si(first.original_sol_s, "s"), "1",
                     "", "", "" if some_best else "yes (keep it)"))
        for name, seconds, g in found:
            rows.append(("", "", name, f"{g.bandwidth:,}", si(g.bytes_b, "B"), si(g.sol_s, "s"),
                         plain(g.gain), si(seconds, "s"), _runs(g.break_even_runs),
                         "yes" if g.best else ""))
    return rows


def to_reorder_table(analysis: Analysis) -> Any:
    """A table of the reorderings of one matrix (cache-aware model), within 100 columns."""
    caption = (f"time = the cache-aware model's, an estimate of a kernel that sweeps row "
               "panels, not a bound (a cache may also keep the columns neighbouring panels "
               "share; the compulsory bound is the same in every order); gain = original "
               f"time / reordered time; best marked at a gain of {NOTABLE_GAIN:g} or more; "
               "reorder time measured on this host; break-even = reorder time / time saved "
               "per run")
    return fitted_table(
        _HEADERS, _rows(analysis), left=("format", "ordering", "best"),
        title=f"{analysis.matrix.name}: reorderings on {analysis.spec} (cache-aware model)",
        caption=caption)
