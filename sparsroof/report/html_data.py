"""What the HTML report shows, read from a result store or a JSON document.

Three sources give the same page: a store written by ``sparsroof batch``, the document of
``sparsroof analyze -O json`` and that of ``sparsroof compare -O json``. Each becomes a
:class:`Page`: one flat row per matrix x spec x kernel x width x format x model (x
ordering, where the matrix was also analysed reordered), raw SI numbers, with the
measured time and its % of SoL where the source holds runs (compare documents); the
matrices with the file each was read from; the failures with their reasons; and the
reordering gains. The roofs of each spec come from :mod:`sparsroof.report.html_roofs`.

A compare run is bounded by the optimistic model (compulsory traffic of B), so its row
says ``compulsory``; its intensity is useful FLOPs over bytes moved, as everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..batch.store import Store
from ..compare.verdict import is_violation
from ..errors import StoreError
from ..userfile import open_regular, read_json

__all__ = ["UNCLASSIFIED", "COLUMNS", "MatrixRef", "Page", "read_page", "page_of_store",
           "page_of_document", "source_kind"]

UNCLASSIFIED = "unclassified"
#: the fields of every row, in the order the page's data carries them
COLUMNS = ("matrix", "class", "spec", "device", "kernel", "d", "format", "model", "ordering",
           "nnz", "bytes", "ai", "sol_s", "bound", "level", "unit", "precision",
           "peak_flops", "bandwidth", "attainable_flops", "flops", "launch_s",
           "measured_s", "pct_sol", "key")
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass
class MatrixRef:
    """A matrix of the page and the file it was read from (``key`` is unique per file)."""

    key: str
    name: str
    path: str
    member: str = ""
    size: int | None = None  # bytes of the file when it was analysed, where recorded
    label: str = UNCLASSIFIED
    rows: int | None = None
    cols: int | None = None
    nnz: int | None = None


@dataclass
class Page:
    """Everything the report shows; ``thumbnails`` maps a matrix key to a PNG data URI
    and ``spy_notes`` a key to why it has none."""

    source: str
    kind: str  # "store", "analyze" or "compare"
    version: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    matrices: dict[str, MatrixRef] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)
    gains: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    thumbnails: dict[str, str] = field(default_factory=dict)
    spy_notes: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """Whether a row failed or a measured run beat its bound: what makes the command
        that wrote the source exit 1."""
        return (any(f.get("kind") != "skipped" for f in self.failures)
                or any(r.get("measured_s") is not None and r.get("sol_s") is not None
                       and is_violation(r["measured_s"], r["sol_s"]) for r in self.rows))

    @property
    def has_runs(self) -> bool:
        return any(r["measured_s"] is not None for r in self.rows)

    def set_class(self, key: str, label: str) -> None:
        """Name the class of a matrix the source left unclassified, in every row of it."""
        self.matrices[key].label = label
        for row in self.rows:
            if row["key"] == key:
                row["class"] = label


def _num(value: Any) -> float | None:
    """A finite number, or None for anything else (a document is the user's file)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    number = _num(value)
    return int(number) if number is not None and number.is_integer() else None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _ratio(top: Any, bottom: Any) -> float | None:
    a, b = _num(top), _num(bottom)
    return a / b if a is not None and b else None


def _row(**cells: Any) -> dict[str, Any]:
    """A row with every column, numbers checked and text made text."""
    numbers = {"d", "nnz", "bytes", "ai", "sol_s", "peak_flops", "bandwidth",
               "attainable_flops", "flops", "launch_s", "measured_s", "pct_sol"}
    return {c: (_num(cells.get(c)) if c in numbers else _text(cells.get(c))) for c in COLUMNS}


def source_kind(path: str | Path) -> str:
    """``store`` for an SQLite file, ``document`` for JSON (text opening with ``{``),
    ``unknown`` for anything else (read as a store, which says what is wrong with it)."""
    def fail(problem: str) -> StoreError:
        return StoreError(f"{path}: " + ("no such result store or document"
                                         if problem == "no such file" else problem))

    with open_regular(path, fail) as f:  # a pipe or a device is refused, never waited on
        try:
            head = f.read(4096)
        except OSError as err:
            raise fail(f"cannot read: {err.strerror or err}") from None
    if head.startswith(_SQLITE_MAGIC):
        return "store"
    return "document" if head.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"{") else "unknown"


def read_page(path: str | Path) -> Page:
    """The page of the store or the analyze/compare JSON document at ``path``."""
    if source_kind(path) != "document":
        with Store(path, readonly=True) as store:
            return page_of_store(store)
    doc = read_json(path, lambda problem: StoreError(f"{path}: {problem}"))
    return page_of_document(doc, str(path))


# -- a result store ------------------------------------------------------------------

def _store_matrices(store: Store) -> dict[str, MatrixRef]:
    found: dict[str, MatrixRef] = {}
    for name, path, member, size, label, rows, cols, nnz in store.query(
            "SELECT name, path, member, size, class, rows, cols, stored_entries"
            " FROM matrices ORDER BY path, member, id"):
        key = f"{path}::{member}" if member else path
        found.setdefault(key, MatrixRef(key, _text(name), path, member, size,
                                        label or UNCLASSIFIED, rows, cols, nnz))
    return found


def _store_row(r: dict[str, Any], key: str) -> dict[str, Any]:
    return _row(matrix=r["matrix"], **{"class": r["class"] or UNCLASSIFIED}, spec=r["spec"],
                device=r.get("device"), kernel=r.get("kernel"), d=r.get("width"),
                format=r.get("storage"), model=r.get("model"),
                ordering=r.get("ordering"), nnz=r.get("stored_entries"),
                bytes=r.get("bytes_total"), ai=r.get("intensity_flop_per_byte"),
                sol_s=r.get("sol_s"), bound=r.get("bound"), level=r.get("memory_level"),
                unit=r.get("bound_unit"), precision=r.get("precision"),
                peak_flops=r.get("peak_flops"), bandwidth=r.get("bandwidth"),
                attainable_flops=r.get("attainable_flops"), flops=r.get("flops_useful"),
                launch_s=r.get("launch_s"), key=key)


def _gain_of(r: dict[str, Any], row: dict[str, Any], before: float | None) -> dict[str, Any]:
    return {"matrix": row["matrix"], "spec": row["spec"], "ordering": row["ordering"],
            "d": row["d"], "format": row["format"], "sol_s": row["sol_s"],
            "original_sol_s": before, "gain": _num(r.get("gain")),
            "break_even_runs": _num(r.get("break_even_runs")),
            "reorder_s": _num(r.get("reorder_s")), "best": bool(r.get("best"))}


def page_of_store(store: Store) -> Page:
    """Every result row of ``store``, its matrices, failures and reordering gains."""
    from .._version import __version__

    page = Page(str(store.path), "store", __version__, matrices=_store_matrices(store))
    gained: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for r in store.rows():
        key = f"{r['path']}::{r['member']}" if r["member"] else r["path"]
        row = _store_row(r, key)
        page.rows.append(row)
        if r.get("gain") is not None:
            gained.append((r, row))
    original = {_gain_key(row): row["sol_s"] for row in page.rows
                if row["ordering"] == "original"}
    page.gains = [_gain_of(r, row, original.get(_gain_key(row))) for r, row in gained]
    page.failures = [{"name": _text(f["name"]), "path": f["path"], "member": f["member"],
                      "kind": f["kind"], "reason": f["reason"]} for f in store.failures()]
    return page


def _gain_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["key"], row["spec"], row["kernel"], row["d"], row["format"], row["model"])


# -- analyze and compare documents -----------------------------------------------------

def _located(path: str, document: str) -> str:
    """A matrix path of a document: as written where it exists (relative to the current
    directory), else relative to the document's folder, else as written."""
    if not path or Path(path).is_absolute() or Path(path).exists():
        return path
    beside = Path(document).parent / path
    return str(beside) if beside.exists() else path


def _analysis_rows(m: dict[str, Any], key: str, label: str, ordering: str,
                   results: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    info = m["matrix"]
    for res in results:
        t, b = res["traffic"], res["bound"]
        yield _row(matrix=info["name"], **{"class": label}, spec=m["spec"],
                   device=m.get("device"), kernel=t.get("kernel"), d=t.get("width"),
                   format=t.get("storage"), model=t.get("model"), ordering=ordering,
                   nnz=info.get("stored_entries"), bytes=t.get("bytes_total"),
                   ai=t.get("intensity"), sol_s=b.get("sol_s"), bound=b.get("bound"),
                   level=b.get("memory_level"), unit=b.get("unit"),
                   precision=b.get("precision"), peak_flops=b.get("peak_flops"),
                   bandwidth=b.get("bandwidth"), attainable_flops=b.get("attainable_flops"),
                   flops=t.get("flops_useful"), launch_s=b.get("launch_s"), key=key)


def _add_analysis(page: Page, m: dict[str, Any]) -> None:
    info = m["matrix"]
    key = _located(_text(info.get("path")), page.source) or _text(info["name"])
    label = _text((m.get("class") or {}).get("label")) or UNCLASSIFIED
    page.matrices.setdefault(key, MatrixRef(key, _text(info["name"]), key, label=label,
                                            rows=_int(info.get("rows")),
                                            cols=_int(info.get("cols")),
                                            nnz=_int(info.get("stored_entries"))))
    reorderings = m.get("reorderings") or []
    page.rows += _analysis_rows(m, key, label, "original" if reorderings else "",
                                m["results"])
    for ro in reorderings:
        page.rows += _analysis_rows(m, key, label, _text(ro["ordering"]), ro["results"])
        for g in ro.get("gains") or []:
            page.gains.append({
                "matrix": _text(info["name"]), "spec": _text(m["spec"]),
                "ordering": _text(ro["ordering"]), "d": _num(g.get("width")),
                "format": _text(g.get("storage")), "sol_s": _num(g.get("sol_s")),
                "original_sol_s": _num(g.get("original_sol_s")), "gain": _num(g.get("gain")),
                "break_even_runs": _num(g.get("break_even_runs")),
                "reorder_s": _num(ro.get("reorder_s")), "best": bool(g.get("best"))})


def _add_run(page: Page, run: dict[str, Any]) -> None:
    key = _located(_text(run.get("path")), page.source) or _text(run["matrix"])
    nnz = _int(run.get("stored_entries"))
    page.matrices.setdefault(key, MatrixRef(key, _text(run["matrix"]), key, nnz=nnz))
    page.rows.append(_row(
        matrix=run["matrix"], **{"class": page.matrices[key].label}, spec=run.get("spec"),
        kernel=run.get("kernel"), d=run.get("d"), format=run.get("format"),
        model="compulsory", ordering="", nnz=nnz, bytes=run.get("bytes_total"),
        ai=_ratio(run.get("flops_useful"), run.get("bytes_total")), sol_s=run.get("bound_s"),
        bound=run.get("bound"), level=run.get("memory_level"), unit=run.get("unit"),
        precision=run.get("precision"), peak_flops=run.get("peak_flops"),
        bandwidth=run.get("bandwidth"), attainable_flops=run.get("attainable_flops"),
        flops=run.get("flops_useful"), launch_s=run.get("launch_s"),
        measured_s=run.get("measured_s"), pct_sol=run.get("pct_sol"), key=key))


def _failure(where: Any, kind: str, reason: Any) -> dict[str, str]:
    return {"name": Path(_text(where)).name, "path": _text(where), "member": "",
            "kind": kind, "reason": _text(reason)}


def page_of_document(doc: Any, source: str) -> Page:
    """The page of an ``analyze`` or ``compare`` JSON document (``source`` names it)."""
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind not in ("analyze", "compare"):
        raise StoreError(f"{source}: neither a result store nor the JSON of 'sparsroof "
                         f"analyze -O json' or 'sparsroof compare -O json'"
                         + (f" (its kind is {_text(kind)[:40]!r})" if kind else ""))
    page = Page(source, kind, _text(doc.get("version")))
    try:
        if kind == "analyze":
            for m in doc["matrices"]:
                _add_analysis(page, m)
            page.failures = [_failure(e.get("path"), "error", e.get("error"))
                             for e in doc.get("errors") or []]
        else:
            for run in doc["runs"]:
                _add_run(page, run)
            page.failures = [_failure(e.get("source"), what, e.get("message"))
                             for what, field_ in (("error", "errors"), ("skipped", "skipped"))
                             for e in doc.get(field_) or []]
    except (KeyError, TypeError, AttributeError) as err:
        what = f"missing field {err}" if isinstance(err, KeyError) else "a field of the wrong type"
        raise StoreError(f"{source}: not a complete {kind} document: {what}") from None
    return page
