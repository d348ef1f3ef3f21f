"""``sparsroof formats``: every storage format of one matrix, and the best row partition."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from .._version import envelope
from ..advisor.partition import advise, format_rows, prediction_models
from ..hardware.library import load_spec
from ..matrix.mtx import load
from ..model.traffic import STORAGES
from ..structure.features import measure
from ..units import si
from .common import HW_OPTION, OUTPUT_OPTION, emit, table_console


@click.command("formats")
@click.argument("matrix")
@HW_OPTION
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              help="Host calibration (sparsroof calibrate): predict measured times too, "
                   "and partition by them.")
@click.option("--max-block", type=click.IntRange(min=1), default=64, show_default=True,
              help="Longest block of strips the partition considers.")
@OUTPUT_OPTION
def command(matrix: str, hw: str, calibration_file: str | None, max_block: int,
            output: str) -> int:
    """Storage formats of MATRIX for SpMV: bytes, FLOPs, predicted time, the best one, and
    the partition of the rows into blocks of strips, each in its best format.

    \b
    Examples:
      sparsroof formats data/lap2d_64.mtx --hw a100
      sparsroof formats a.mtx --hw myhost.yaml --calibration calibration.json
    """
    from .calibrate import load_calibrated

    spec = load_spec(hw)
    spec, cal = load_calibrated(spec, calibration_file)
    m = load(matrix)
    s = measure(m)
    rows = format_rows(s, spec, cal.predict_matrix(m, s, STORAGES) if cal else None)
    size, models, single, x_s = prediction_models(spec, s, rows, cal)
    advice = advise(m, spec, models, single, size=size, max_block=max_block, x_seconds=x_s)
    if output == "json":
        doc = envelope("formats") | {"matrix": m.name, "spec": spec.name,
                                      "prediction": "calibrated" if cal else "sol",
                                      "formats": [asdict(r) for r in rows],
                                      "partition": asdict(advice) | {"gain": advice.gain}}
        emit(json.dumps(doc, indent=2))
    else:
        _render(m.name, spec.name, rows, advice, cal is not None)
    return 0


def _render(name: str, spec: str, rows: list, advice: object, calibrated: bool) -> None:
    from rich.table import Table

    table = Table(title=f"{name}: SpMV storage formats on {spec}", title_justify="left")
    for h in ("format", "bytes", "useful FLOPs", "executed FLOPs", "SoL", "calibrated"):
        table.add_column(h, justify="left" if h == "format" else "right")
    for r in rows:
        table.add_row(r.storage, si(r.bytes_total, "B"), si(r.flops_useful, ""),
                      si(r.flops_executed, ""), si(r.sol_s, "s"),
                      si(r.calibrated_s, "s") if r.calibrated_s is not None else "-")
    console = table_console()
    console.print(table)
    a = advice
    n = a.n_strips  # type: ignore[attr-defined]
    # printed apart: a table title wraps at the (narrow) table's width
    console.print(f"partition into blocks of strips: {n} strip{'s' if n != 1 else ''} of "
                  f"{a.strip_rows} rows, by {'calibrated' if calibrated else 'SoL'} time")  # type: ignore[attr-defined]
    part = Table()
    for h in ("strips", "rows", "format", "predicted"):
        part.add_column(h, justify="left" if h == "format" else "right")
    for b in a.blocks:  # type: ignore[attr-defined]
        part.add_row(f"{b.first_strip + 1}-{b.last_strip + 1}", f"{b.first_row}-{b.last_row}",
                     b.storage, si(b.seconds, "s"))
    console.print(part)
    console.print(f"total {si(a.total_s, 's')}; best single format {a.best_single} "  # type: ignore[attr-defined]
                  f"{si(a.best_single_s, 's')}; gain {a.gain:.3f}x")  # type: ignore[attr-defined]
