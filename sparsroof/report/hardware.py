"""Rendering hardware specs: the ``hw list`` summary and ``hw show`` detail.

Numbers are formatted with :func:`sparsroof.units.si`, the one unit formatter; JSON and
CSV carry raw SI values plus the envelope (schema version, tool version).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._version import envelope
from ..hardware.spec import UNITS, HwSpec, Quantity
from ..units import plain, si
from .document import csv_text, json_text
from .tables import fitted_table, pick

__all__ = ["cache_roofs", "spec_row", "list_json", "list_csv", "list_table", "show_json",
           "show_table"]


def spec_row(spec: HwSpec) -> dict[str, Any]:
    """One flat row per spec: DRAM bandwidth, each unit's default-precision peak and ridge.

    >>> from sparsroof.hardware.library import load_spec
    >>> row = spec_row(load_spec("v100-measured"))
    >>> row["tensor_precision"], row["tensor_flops"], round(row["tensor_ridge_flop_per_byte"], 2)
    ('fp16', 107479000000000.0, 129.68)
    """
    lo = spec.launch_overhead
    row: dict[str, Any] = {"name": spec.name, "device": spec.device, "kind": spec.kind,
                           "dram_bandwidth_bytes_per_s": spec.dram.bandwidth.value,
                           "launch_floor_s": lo.value if lo else None,
                           "launch_floor_kind": lo.kind if lo else None,
                           "cache_roofs": cache_roofs(spec)}
    for unit in UNITS:
        key = unit.replace("-", "_")
        precision = spec.default_precision(unit)
        row[f"{key}_precision"] = precision
        row[f"{key}_flops"] = spec.peak(unit, precision).value if precision else None
        row[f"{key}_ridge_flop_per_byte"] = (spec.ridge_point(unit, precision)
                                             if precision else None)
    return row


def cache_roofs(spec: HwSpec) -> list[dict[str, Any]]:
    """Each cache level: name, bandwidth and capacity (None where the spec has none)."""
    return [{"name": lv.name,
             "bandwidth_bytes_per_s": lv.bandwidth.value if lv.bandwidth else None,
             "capacity_bytes": lv.capacity.value if lv.capacity else None}
            for lv in spec.memory[:-1]]


def _caches_cell(spec: HwSpec) -> str:
    r"""Each cache level and its bandwidth, a line each; a name longer than a short level
    name ("L1d", "LLC") puts its bandwidth on a line of its own, so that a narrow column
    wraps between the name and the figure, never inside the figure.

    >>> from sparsroof.hardware.library import load_spec
    >>> _caches_cell(load_spec("xeon-8480"))
    'L1d 27.2 TB/s\nL2+L3\n13.6 TB/s'
    """
    cells = []
    for c in cache_roofs(spec):
        bw = c["bandwidth_bytes_per_s"]
        gap = " " if len(c["name"]) <= 4 else "\n"
        cells.append(f"{c['name']}{gap}{si(bw, 'B/s') if bw else '?'}")
    return "\n".join(cells) or "-"


def list_json(specs: Sequence[HwSpec]) -> str:
    doc = envelope("hw-list") | {
        "default_precisions": "simt: fp64 (else fp32); tensor units: fp16 (else bf16, tf32)",
        "specs": [spec_row(s) for s in specs]}
    return json_text(doc)


def list_csv(specs: Sequence[HwSpec]) -> str:
    rows = []
    for s in specs:
        row = spec_row(s)
        row["cache_roofs"] = "; ".join(
            f"{c['name']} {c['bandwidth_bytes_per_s'] or ''} B/s {c['capacity_bytes'] or ''} B"
            for c in row["cache_roofs"])
        rows.append(row)
    return csv_text(rows, "hw-list")


def _peak_cell(value: float | None, precision: str | None) -> str:
    return "-" if value is None else f"{plain(value / 1e12)} {precision}"


#: the columns of ``hw list``; the default table leaves out the device's full name
LIST_COLUMNS = ("name", "device", "DRAM", "caches", "launch", "simt TFLOP/s",
                "tensor TFLOP/s", "sparse TFLOP/s", "ridge simt", "ridge tensor")


def list_table(specs: Sequence[HwSpec], wide: bool = False) -> Any:
    """A table with one row per spec; ``wide`` adds the device's full name, the sparse
    tensor peak and the tensor ridge."""
    rows = []
    for spec in specs:
        r = spec_row(spec)
        ridges = [r[f"{u}_ridge_flop_per_byte"] for u in ("simt", "tensor")]
        launch = r["launch_floor_s"]
        rows.append([
            spec.name, spec.device, si(r["dram_bandwidth_bytes_per_s"], "B/s"),
            _caches_cell(spec), "-" if launch is None else si(launch, "s"),
            *(_peak_cell(r[f"{u}_flops"], r[f"{u}_precision"])
              for u in ("simt", "tensor", "tensor_sparse")),
            *("-" if x is None else f"{x:.3g}" for x in ridges)])
    sparse = "sparse = sparse tensor units, dense-equivalent; " if wide else ""
    caption = ("peaks at a default precision: simt fp64 (analyze's default; else fp32), "
               f"tensor fp16 where the device has them; {sparse}ridge = peak / DRAM bandwidth "
               "in FLOP/byte; launch = the smallest time one kernel takes ('-' where the spec "
               "gives none); caches: bandwidth ('?' where the spec gives none)")
    # one example, the default --hw where it is listed: every alias would outgrow the table
    named = sorted((s for s in specs if s.aliases), key=lambda s: "a100" not in s.aliases)
    if named:
        alias = "a100" if "a100" in named[0].aliases else named[0].aliases[0]
        caption += (f"; --hw also takes aliases ({alias} = {named[0].name}; hw show NAME "
                    "lists a spec's)")
    core = set(LIST_COLUMNS) - {"device", "sparse TFLOP/s", "ridge tensor"}
    return fitted_table(LIST_COLUMNS, rows, left=("name", "device", "caches"),
                        title="Bundled and given hardware specs", caption=caption,
                        keep=pick(LIST_COLUMNS, core, wide), prose=("device",))


def show_json(spec: HwSpec) -> str:
    doc = envelope("hw-show") | {"spec": spec.to_dict(),
           "summary": spec_row(spec)}
    return json_text(doc)


_SI_UNITS = {"bandwidth": "B/s", "capacity": "B", "time": "s", "clock": "Hz", "peak": "FLOP/s",
             "integer peak": "OP/s"}


def _row(what: str, q: Quantity, kind: str | None) -> list[str]:
    value = si(q.value, _SI_UNITS[kind]) if kind else f"{q.value:g}"
    return [what, q.text, value, q.kind or "-", q.source]


#: the columns of ``hw show``
SHOW_COLUMNS = ("figure", "as written", "value", "kind", "source")


def show_table(spec: HwSpec) -> Any:
    """A table of every figure in the spec with its text, SI value and source, fitted to
    the terminal (the sources wrap)."""
    aliases = f" (aliases: {', '.join(spec.aliases)})" if spec.aliases else ""
    # an integer peak is operations per second, not floating-point ones
    rows = [_row(f"peak {unit} {precision}", q,
                 "integer peak" if precision.startswith("int") else "peak")
            for (unit, precision), q in spec.peaks.items()]
    for level in spec.memory:
        for what, q, kind in ((f"{level.name} bandwidth", level.bandwidth, "bandwidth"),
                              (f"{level.name} capacity", level.capacity, "capacity"),
                              (f"{level.name} instances", level.instances, None),
                              (f"{level.name} latency", level.latency, "time")):
            if q is not None:
                rows.append(_row(what, q, kind))
    extras = [("launch overhead", spec.launch_overhead, "time"),
              *((f"launch floor, {m}", q, "time") for m, q in spec.launch_floors.items()),
              ("network", spec.network, "bandwidth"), ("clock", spec.clock, "clock")]
    rows += [_row(what, q, kind) for what, q, kind in extras if q is not None]
    rows += [_row(key, count, None) for key, count in spec.parallelism.items()]
    rows += [[f"host {key}", text, "", "", ""] for key, text in spec.host.items()]
    return fitted_table(SHOW_COLUMNS, rows, left=("figure", "as written", "kind", "source"),
                        prose=("source",),
                        title=f"{spec.name}{aliases}: {spec.device} [{spec.kind}]  from "
                              f"{spec.origin}", caption=spec.notes or None)
