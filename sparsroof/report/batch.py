"""The plan of a batch, as the table ``batch --dry-run`` prints."""

from __future__ import annotations

from typing import Any

from ..batch.plan import Plan
from ..units import binary
from .tables import fitted_table

__all__ = ["dry_run_table"]


def dry_run_table(plan: Plan) -> Any:
    """What a batch would do: each matrix it would analyse (with its planned memory), each
    it would skip or could not read (with the reason) and each auxiliary file."""
    rows = [["run", t.source.name, f"{t.rows:,}", f"{t.entries:,}", binary(t.memory),
             t.source.label] for t in plan.tasks]
    rows += [[p.status, p.source.name, f"{p.rows:,}" if p.rows is not None else "",
              f"{p.entries:,}" if p.entries is not None else "", "",
              f"{p.source.label}  {p.reason}".rstrip()] for p in plan.others]
    rows += [["auxiliary", a.name, "", "", "", a.label] for a in plan.auxiliary]
    return fitted_table(("status", "matrix", "rows", "entries", "memory", "file / reason"),
                        rows, left=("status", "matrix", "file / reason"),
                        prose=("file / reason",),
                        title=f"dry run: {len(plan.tasks)} to analyse, memory budget "
                              f"{binary(plan.budget)}")
