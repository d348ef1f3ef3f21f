"""Rendering a budget check for people and for CI systems.

A table for the terminal, a JSON document (raw SI numbers, schema version, tool version),
JUnit XML (``testsuites`` > one ``testsuite`` per check > one ``testcase`` per limit and
point, with ``failure`` for an exceeded limit and ``error`` for a measured time below the
speed of light), GitHub Actions workflow commands (``::error file=...,line=...::``) and a
Markdown summary for the job page. Units are formatted with :func:`sparsroof.units.si`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import asdict
from typing import Any

from .._version import envelope
from ..ci.check import IMPOSSIBLE, METRICS, PASS, CheckReport, Outcome, Point
from ..units import si
from .document import json_text
from .tables import fitted_table

__all__ = [
    "format_value",
    "format_margin",
    "message",
    "cells",
    "to_table",
    "to_json",
    "to_junit",
    "workflow_commands",
    "to_markdown",
    "headline",
    "check_counts",
    "point_record",
    "baseline_json",
]

#: status beside the metric, so that a table folded to fit the terminal keeps it in every
#: part
_HEADERS = ("check", "matrix", "d", "metric", "status", "value", "limit", "margin", "note")


def format_value(unit: str, value: float | str) -> str:
    """A value in the unit of its metric, for people.

    >>> format_value("s", 1.5e-5), format_value("x", 12.34), format_value("fraction", 0.5)
    ('15 us', '12.3x', '50.0%')
    """
    if isinstance(value, str):
        return value
    if unit == "x":
        return f"{value:.3g}x"
    if unit == "fraction":
        return f"{value:.1%}"
    return si(value, unit)


def format_margin(margin: float | None) -> str:
    """Relative headroom with its sign: ``+20.0%`` passes, ``-5.0%`` fails."""
    return "" if margin is None else f"{margin:+.1%}"


def _note(o: Outcome) -> str:
    if o.reference is None:
        return ""
    if o.key == "min_fraction_of_sol":
        return f"measured {si(o.reference, 's')}"
    # the row's metric says "vs baseline" and its limit is the baseline with the tolerance:
    # the note is the change, short enough for the table to keep its names whole
    if o.reference and not isinstance(o.value, str):
        return f"{o.value / o.reference - 1:+.1%}"
    return f"base {format_value(METRICS[o.key].unit, o.reference)}"


def message(o: Outcome) -> str:
    """One sentence saying what an outcome found, for annotations and JUnit."""
    metric = METRICS[o.key]
    value, limit = format_value(metric.unit, o.value), format_value(metric.unit, o.limit)
    head = f"{o.matrix} d={o.width}: {metric.label}"
    if o.status == IMPOSSIBLE:
        return (f"{head} {value}: the measured {si(o.reference or 0.0, 's')} is faster than "
                "the speed of light, so the model or the measurement is wrong")
    if metric.direction == "equal":
        return f"{head} is {value}, expected {limit}"
    if o.status == PASS:
        relation = "within the limit" if metric.direction == "max" else "above the minimum"
    else:
        relation = "above the limit" if metric.direction == "max" else "below the minimum"
    note = _note(o)
    tail = f"; {note}" if note else ""
    return f"{head} {value} is {relation} {limit} (margin {format_margin(o.margin)}{tail})"


def cells(o: Outcome) -> tuple[str, ...]:
    """The table cells of one outcome, in the order of the headers."""
    unit = METRICS[o.key].unit
    return (o.check, o.matrix, str(o.width), METRICS[o.key].label, o.status.upper(),
            format_value(unit, o.value), format_value(unit, o.limit),
            format_margin(o.margin), _note(o))


def check_counts(report: CheckReport) -> tuple[int, int]:
    """(checks, checks with a failed limit): a check counts once however many matrices,
    widths and limits it has."""
    checks = dict.fromkeys(o.check for o in report.outcomes)
    failed = {o.check for o in report.outcomes if o.status != PASS}
    return len(checks), len(failed)


def headline(report: CheckReport) -> str:
    """'budgets.yaml: 2 checks (16 limits), all passed', or which failed."""
    total = len(report.outcomes)
    failed = total - report.count(PASS)
    checks, checks_failed = check_counts(report)
    counted = (f"{checks} check{'s' if checks != 1 else ''} "
               f"({total} limit{'s' if total != 1 else ''} on their matrices)")
    verdict = ("all passed" if not failed else
               f"{checks_failed} of {checks} failed ({failed} of {total} limits)")
    impossible = report.count(IMPOSSIBLE)
    extra = f", {impossible} impossible (faster than SoL)" if impossible else ""
    return f"{report.budget}: {counted}, {verdict}{extra}"


def to_table(report: CheckReport) -> Any:
    """A rich Table: one row per limit per matrix and width."""
    rows = [cells(o) for o in report.outcomes]
    notes = any(r[-1] for r in rows)
    keep = len(_HEADERS) if notes else len(_HEADERS) - 1  # the note column only where used
    caption = (f"specs: {', '.join(report.specs)}.  margin = headroom relative to the limit "
               "(negative fails)")
    if notes:
        caption += "; note = change from the baseline, or the measured time"
    return fitted_table(_HEADERS, rows, keep=range(keep),
                        left=[h for h in _HEADERS if h not in ("d", "value", "limit", "margin")],
                        title=headline(report), caption=caption, spare=("margin",),
                        keys=("check", "matrix", "d", "metric"))


def _outcome_record(o: Outcome) -> dict[str, Any]:
    return {"check": o.check, "matrix": o.matrix, "width": o.width, "key": o.key,
            "metric": METRICS[o.key].label, "value": o.value, "limit": o.limit,
            "margin": o.margin, "status": o.status, "reference": o.reference,
            "message": message(o)}


def to_json(report: CheckReport) -> str:
    """JSON document: envelope, counts, every outcome and every modelled point."""
    doc = envelope("check") | {
        "budget": report.budget, "specs": list(report.specs),
        "passed": report.exit_code == 0,
        "counts": {"checks": check_counts(report)[0], "checks_failed": check_counts(report)[1],
                   "total": len(report.outcomes), "passed": report.count(PASS),
                   "failed": len(report.outcomes) - report.count(PASS),
                   "impossible": report.count(IMPOSSIBLE)},
        "outcomes": [_outcome_record(o) for o in report.outcomes],
        "points": [point_record(p) for p in report.points],
        "notes": list(report.notes)}
    return json_text(doc)


def _counts(outcomes: list[Outcome]) -> dict[str, str]:
    errors = sum(o.status == IMPOSSIBLE for o in outcomes)
    failures = sum(o.status not in (PASS, IMPOSSIBLE) for o in outcomes)
    return {"tests": str(len(outcomes)), "failures": str(failures), "errors": str(errors),
            "skipped": "0"}


def to_junit(report: CheckReport) -> str:
    """JUnit XML: one testsuite per check, one testcase per limit on each matrix and width."""
    root = ET.Element("testsuites", {"name": f"sparsroof check {report.budget}",
                                     **_counts(list(report.outcomes))})
    suites: dict[str, list[Outcome]] = {}
    for o in report.outcomes:
        suites.setdefault(o.check, []).append(o)
    for name, outcomes in suites.items():
        suite = ET.SubElement(root, "testsuite", {"name": name, **_counts(outcomes)})
        for o in outcomes:
            case = ET.SubElement(suite, "testcase", {
                "classname": f"sparsroof.{name}",
                "name": f"{o.matrix} d={o.width} {METRICS[o.key].label}",
            })
            if o.status == PASS:
                continue
            tag, kind = (("error", "model-or-measurement-error") if o.status == IMPOSSIBLE
                         else ("failure", "budget-exceeded"))
            problem = ET.SubElement(case, tag, {"message": message(o), "type": kind})
            problem.text = message(o)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def workflow_commands(report: CheckReport) -> list[str]:
    """GitHub Actions ``::error`` workflow commands, one per outcome that did not pass."""
    lines = []
    for o in report.outcomes:
        if o.status == PASS:
            continue
        props = {"file": report.budget}
        if o.line is not None:
            props["line"] = str(o.line)
        props["title"] = f"sparsroof check {o.check}: {METRICS[o.key].label} {o.status}"
        joined = ",".join(f"{k}={_escape(v, prop=True)}" for k, v in props.items())
        lines.append(f"::error {joined}::{_escape(message(o))}")
    return lines


def to_markdown(report: CheckReport) -> str:
    """A Markdown summary for the job page: headline, then failures first, then passes."""
    def row(values: tuple[str, ...]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    ordered = sorted(report.outcomes, key=lambda o: o.status == PASS)
    lines = [f"### sparsroof check: {headline(report)}", "", row(_HEADERS),
             row(tuple("---" for _ in _HEADERS))]
    lines += [row(cells(o)) for o in ordered]
    if report.notes:
        lines += ["", *(f"- {n}" for n in report.notes)]
    return "\n".join(lines) + "\n"


def point_record(p: Point) -> dict[str, Any]:
    """A point as a flat dict of raw SI numbers (an unbounded speedup becomes None)."""
    speedup = p.speedup_over_dense
    return {**asdict(p), "speedup_over_dense": speedup if math.isfinite(speedup) else None}


def baseline_json(report: CheckReport) -> str:
    """The JSON a later run reads with ``--baseline``: every point's configuration and
    values."""
    return json_text(envelope("baseline") | {
        "budget": report.budget, "specs": list(report.specs),
        "entries": [point_record(p) for p in report.points],
    }) + "\n"
