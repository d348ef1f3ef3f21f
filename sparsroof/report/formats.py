"""What ``formats`` shows: every storage format's bytes and time, and the best partition
of the rows into strips of formats."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..advisor.advice import Advice, FormatRow
from ..units import counted, si
from .document import csv_text, json_text
from .tables import Prose, fitted_table

__all__ = ["formats_json", "formats_csv", "formats_report", "run_report", "run_json"]


def formats_json(name: str, spec: str, rows: list[FormatRow], advice: Advice,
                 runs: dict[str, Any] | None = None) -> str:
    doc = envelope("formats") | {
        "matrix": name, "spec": spec, "prediction": advice.route,
        "formats": [asdict(r) for r in rows],
        "partition": asdict(advice) | {"gain": advice.gain, "bytes_total": advice.bytes_total}}
    return json_text(doc | ({"measured": run_json(runs)} if runs is not None else {}))


def formats_csv(name: str, spec: str, rows: list[FormatRow]) -> str:
    """One CSV row per storage format (the partition is in the JSON only)."""
    return csv_text([{"matrix": name, "spec": spec} | asdict(r) for r in rows], "formats")


def formats_report(name: str, spec: str, rows: list[FormatRow], advice: Advice
                   ) -> list[Any]:
    """The formats table, the partition's heading, its table and its total, in order."""
    table = fitted_table(
        ("format", "bytes", "useful FLOPs", "executed FLOPs", "SoL", "calibrated"),
        [[r.storage, si(r.bytes_total, "B"), si(r.flops_useful, ""), si(r.flops_executed, ""),
          si(r.sol_s, "s"), si(r.calibrated_s, "s") if r.calibrated_s is not None else "-"]
         for r in rows],
        left=("format",), title=f"{name}: SpMV storage formats on {spec}",
        keep=range(6 if any(r.calibrated_s is not None for r in rows) else 5))
    a = advice
    n = a.n_strips
    by = "calibrated time" if a.route == "calibrated" else "SoL"
    rule = f"{a.strip_rule}; " if a.strip_rule else ""
    candidates = ", ".join(a.single_s) if a.single_s else "the formats above"
    heading = (f"partition into blocks of strips of {a.strip_rows:,} rows ({rule}"
               f"{counted(n, 'strip')} here; the last may be shorter), by {by}; "
               f"each block in one of {candidates}, blocks and whole matrices priced "
               "alike, in the bytes the paper's kernels read (ELL and HYB read their "
               "padding, DIA its diagonals whole), not the least bytes of the table above")
    if a.capped:
        heading += (f"\nblocks of at most {a.max_block:,} strips considered (the search's "
                    f"cap; --max-block {n} considers every block, in time growing with "
                    "its square)")
    part = fitted_table(
        ("strips", "rows", "format", "bytes", "predicted"),
        [[f"{b.first_strip + 1}-{b.last_strip + 1}", f"{b.first_row}-{b.last_row}", b.storage,
          si(b.bytes, "B"), si(b.seconds, "s")] for b in a.blocks], left=("format",))
    total = (f"total {si(a.total_s, 's')}, {si(a.bytes_total, 'B')}; best single format "
             f"priced so {a.best_single} {si(a.best_single_s, 's')}; gain {a.gain:.3f}x")
    return [table, Prose(heading), part, Prose(total)]


def _measured(run: Any) -> float | None:
    return run.timing.min_s if hasattr(run, "timing") else None


def run_report(spec: str, advice: Advice, runs: dict[str, Any], same_device: bool
               ) -> list[Any]:
    """The advised partition and each single format, priced on ``spec`` as the advisor
    prices them (the bytes the paper's kernels read, so ELL and HYB with their padding:
    above their SoL in the table before) and measured here (``runs``:
    :func:`sparsroof.host.partitioned.measure_answers`), and the gains. A partition that
    is one format for the whole matrix is that format's run: one row, no gain."""
    a = advice
    names = [b.storage for b in a.blocks]
    alone = next((k for k, r in runs.items() if k != "partition" and r is runs["partition"]),
                 None)
    label = "partition" if len(a.blocks) > 1 else f"partition ({names[0]})"
    predicted = {"partition": a.total_s} | a.single_s
    rows = []
    for key, run in runs.items():
        if key == alone:
            continue
        t = _measured(run)
        rows.append([label if key == "partition" else key, si(predicted[key], "s"),
                     si(t, "s") if t is not None else "-",
                     f"{run.error:.0e}" if t is not None else f"not run: {run}"])
    table = fitted_table(("answer", "priced", "measured", "y vs scipy"), rows,
                         left=("answer", "y vs scipy"),
                         title=f"measured here (fastest run), priced on {spec}")
    lines = [table]
    part = _measured(runs["partition"])
    timed = {k: t for k, r in runs.items() if k != "partition" and (t := _measured(r))}
    if alone is not None:
        lines.append(f"the partition is {alone} for the whole matrix: one kernel, no gain "
                     "to measure")
    elif part and timed:
        best = min(timed, key=lambda k: timed[k])
        lines.append(f"measured gain {timed[best] / part:.3f}x over the fastest single format "
                     f"here ({best}); predicted {a.gain:.3f}x over {a.best_single}")
    lines.append("priced as the partition above is (ELL and HYB with their padding), "
                 "not by the SoL column")
    if not same_device:
        lines.append(f"the predictions are for {spec}, another device than this host: "
                     "compare the gains, not the times")
    return [Prose(line) if isinstance(line, str) else line for line in lines]


def run_json(runs: dict[str, Any]) -> dict[str, Any]:
    """The measured side of ``formats --run`` for the JSON document."""
    return {k: ({"min_s": r.timing.min_s, "median_s": r.timing.median_s, "y_error": r.error,
                 "blocks": [list(b) for b in r.blocks]} if hasattr(r, "timing")
                else {"skipped": str(r)}) for k, r in runs.items()}
