"""The HTML report: one self-contained file, readable offline.

The page's data (raw SI numbers and the text the tables show, made here with
:func:`sparsroof.units.si`) travels as JSON inside a ``<script type="application/json">``
element, with every ``<``, ``>`` and ``&`` written as a ``\\u`` escape so that no name can
close the element; the page's own script (``html_template.js``) reads it with
``JSON.parse`` and builds the tables and SVG charts with ``textContent`` and
``setAttribute``, never with markup made of data. A Content-Security-Policy admits only
that script (by its hash), inline styles and ``data:`` images: the page fetches nothing,
and a script that got in by some other route would not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from .._version import __version__
from ..batch.records import json_safe
from ..errors import OptionError
from ..units import si
from ..userfile import write_text_whole
from .colours import class_styles
from .html_data import COLUMNS, Page
from .html_roofs import spec_roofs

__all__ = ["DISPLAY", "PAGE_ROWS", "page_data", "page_html", "write_html", "script_json"]

#: (row field, header, numeric) of every column the table can show, in order
DISPLAY = (("matrix", "matrix", False), ("class", "class", False), ("spec", "spec", False),
           ("kernel", "kernel", False), ("d", "d", True), ("format", "format", False),
           ("model", "model", False), ("ordering", "ordering", False),
           ("nnz", "nnz", True), ("bytes", "bytes", True), ("ai", "AI F/B", True),
           ("sol_s", "SoL", True), ("bound", "bound", False),
           ("attainable_flops", "attainable", True), ("measured_s", "measured", True),
           ("pct_sol", "% of SoL", True))
PNG_URI = "data:image/png;base64,"
#: rows of the table on one page: a browser lays out a page of this many in well under a
#: second, and the whole table of a large sweep (tens of thousands of rows) in many
PAGE_ROWS = 1000
_PLACEHOLDER = re.compile(r"@@([A-Z]+)@@")


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element of an HTML page.

    >>> script_json({"name": "</script><img onerror=alert(1)>"})
    '{"name": "\\\\u003c/script\\\\u003e\\\\u003cimg onerror=alert(1)\\\\u003e"}'
    """
    text = json.dumps(json_safe(value), allow_nan=False, ensure_ascii=False)
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def _cell(key: str, row: dict[str, Any]) -> str:
    value = row[key]
    if value is None or value == "":
        return ""
    formats = {"nnz": lambda v: f"{v:,.0f}", "d": lambda v: f"{v:g}",
               "bytes": lambda v: si(v, "B"), "ai": lambda v: f"{v:.3g}",
               "sol_s": lambda v: si(v, "s"), "measured_s": lambda v: si(v, "s"),
               "attainable_flops": lambda v: si(v, "FLOP/s"),
               "pct_sol": lambda v: f"{v:.1f}%"}
    if key == "bound":
        return f"{value} ({row['level']})" if value == "memory" and row["level"] else value
    return formats[key](value) if key in formats else str(value)


def _shown(page: Page) -> list[tuple[str, str, bool]]:
    """The columns worth a place: a column every row holds the same in (one kernel, one
    width, no reordering) or none holds (no runs) is left out."""
    def varied(key: str) -> bool:
        return len({r[key] for r in page.rows}) > 1

    hidden = {"kernel"} if not varied("kernel") else set()
    hidden |= {"d"} if not varied("d") and not varied("kernel") else set()
    hidden |= {"ordering"} if not any(r["ordering"] for r in page.rows) else set()
    hidden |= set() if page.has_runs else {"measured_s", "pct_sol"}
    hidden |= {"spec"} if not varied("spec") else set()
    return [c for c in DISPLAY if c[0] not in hidden]


def _matrices(page: Page) -> list[dict[str, str]]:
    out = []
    for m in page.matrices.values():
        shape = f"{m.rows:,} x {m.cols:,}" if m.rows is not None and m.cols else ""
        entries = f"{m.nnz:,} entries" if m.nnz is not None else ""
        thumb = page.thumbnails.get(m.key, "")
        out.append({"name": m.name, "class": m.label, "file": m.key,
                    "detail": ", ".join(t for t in (shape, entries) if t),
                    "thumb": thumb if thumb.startswith(PNG_URI) else "",
                    "note": page.spy_notes.get(m.key, "")})
    return out


def _gains(page: Page) -> list[list[str]]:
    def t(v: float | None) -> str:
        return si(v, "s") if v is not None else ""

    rows = []
    for g in page.gains:
        gain = f"{g['gain']:.3g}x" if g["gain"] is not None else ""
        runs = (f"{g['break_even_runs']:,.0f}" if g["break_even_runs"] is not None
                else "never" if g["gain"] is not None and g["gain"] <= 1 else "")
        rows.append([g["matrix"], g["spec"], g["ordering"],
                     f"{g['d']:g}" if g["d"] is not None else "", g["format"],
                     t(g["original_sol_s"]), t(g["sol_s"]), gain, runs, t(g["reorder_s"]),
                     "best" if g["best"] else ""])
    return rows


def _summary(page: Page) -> list[list[str]]:
    specs = {r["spec"] for r in page.rows}
    what = {"store": "result store", "analyze": "analyze -O json document",
            "compare": "compare -O json document"}[page.kind]
    out = [["source", f"{page.source} ({what})"], ["matrices", f"{len(page.matrices):,}"],
           ["specs", ", ".join(sorted(specs)) or "none"], ["rows", f"{len(page.rows):,}"],
           ["failures", f"{len(page.failures):,}"]]
    if page.has_runs:
        pct = sorted(r["pct_sol"] for r in page.rows if r["pct_sol"] is not None)
        out.append(["% of SoL", f"median {pct[len(pct) // 2]:.1f}%, "
                                f"{sum(p > 100 for p in pct)} runs faster than their bound"])
    return out


def page_data(page: Page, page_rows: int = PAGE_ROWS) -> dict[str, Any]:
    """The JSON the page's script reads (``page_rows``: rows per page of the table)."""
    shown = _shown(page)
    keys = [c[0] for c in DISPLAY]
    return {
        "title": Path(page.source).name, "kind": page.kind,
        "tool_version": __version__, "source_version": page.version,
        "columns": list(COLUMNS), "rows": [[r[c] for c in COLUMNS] for r in page.rows],
        "display": keys, "cells": [[_cell(k, r) for k in keys] for r in page.rows],
        "table": [{"key": k, "header": h, "numeric": n} for k, h, n in shown],
        "roofs": [{"spec": s.spec, "device": s.device,
                   "peaks": [vars(p) for p in s.peaks], "levels": [vars(lv) for lv in s.levels]}
                  for s in spec_roofs(page.rows)],
        "has_runs": page.has_runs, "matrices": _matrices(page),
        "failures": page.failures, "gains": _gains(page), "notes": page.notes,
        "summary": _summary(page), "page_rows": page_rows,
        # a class has the colour and fill of the figures: one look for it everywhere
        "class_styles": {label: list(style) for label, style in class_styles(
            {str(r["class"]) for r in page.rows}).items()},
    }


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def page_html(page: Page, page_rows: int = PAGE_ROWS) -> str:
    """The whole HTML document of ``page``."""
    script = _asset("html_template.js")
    assert "</script" not in script.lower(), "the page script must not close its element"
    values = {
        "TITLE": html.escape(f"sparsroof report: {Path(page.source).name}"),
        "CSP": html.escape(f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
                           f"script-src 'sha256-{_sha256(script)}'", quote=False),
        "CSS": _asset("html_template.css"), "DATA": script_json(page_data(page, page_rows)),
        "SCRIPT": script,
    }
    # one pass: text put in is never searched for placeholders again
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _asset("html_template.html"))


def write_html(page: Page, path: str | Path) -> Path:
    """Write :func:`page_html` to ``path``."""
    target = Path(path)
    write_text_whole(target, page_html(page), lambda p: OptionError(f"{target}: {p}"))
    return target
