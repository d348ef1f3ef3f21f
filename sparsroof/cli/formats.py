"""``sparsroof formats``: every storage format of one matrix, and the best row partition."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from ..advisor.advice import BLOCK_CAP, Advice, advise, format_rows, prediction
from ..advisor.partition import strip_rule
from ..caching.parsed import bypassed
from ..hardware.library import load_spec
from ..hardware.spec import HwSpec
from ..host.bench import other_device
from ..matrix.mtx import Matrix
from ..model.traffic import STORAGES
from ..report.formats import formats_csv, formats_json, formats_report, run_report
from ..structure.cache import measured
from ..structure.features import measure
from ..structure.reorder import ORDERINGS, reorder
from .common import (
    CACHE_OPTION,
    HW_OPTION,
    OUTPUT_OPTION,
    emit,
    named_file,
    table_console,
    timing_options,
    warn_flagged,
)
from .guard import echo_message


@click.command("formats")
@click.argument("matrix")
@HW_OPTION
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              callback=named_file,
              help="Host calibration (sparsroof calibrate): predict measured times too, "
                   "and partition by them.")
@click.option("--max-block", type=click.IntRange(min=1), default=None,
              help="Longest block of strips the partition considers.  [default: every "
                   f"block, up to {BLOCK_CAP:,} strips]")
@click.option("--reorder", "ordering", type=click.Choice(list(ORDERINGS)), default=None,
              help="Advise on the matrix reordered by this ordering (a band can make DIA "
                   "or ELL win).")
@click.option("--run", "run", is_flag=True,
              help="Run the advised partition on this host, one kernel per block, check y "
                   "against scipy, and show its time beside each single format's.")
@timing_options
@OUTPUT_OPTION
@CACHE_OPTION
def command(matrix: str, hw: str, calibration_file: str | None, max_block: int | None,
            output: str, ordering: str | None = None, cache: bool = True,
            timing: str = "graph", calls_per_sync: int = 1, run: bool = False) -> int:
    """Storage formats of MATRIX for SpMV: bytes, FLOPs, predicted time, the best one, and
    the partition of the rows into blocks of strips, each in its best format.

    \b
    Examples:
      sparsroof formats data/lap2d_64.mtx --hw a100
      sparsroof formats data/lap2d_64.mtx --hw myhost.yaml \\
          --calibration calibration.json
      sparsroof formats data/lap2d_64.mtx --hw a100 --reorder rcm
      sparsroof formats data/lap2d_64.mtx --hw a100 --run
    """
    from ..host.calibrated import load_calibrated

    with bypassed(not cache):  # --no-cache: the spec parsed afresh too
        spec = load_spec(hw)
    spec, cal = load_calibrated(spec, calibration_file)
    warn_flagged(cal, calibration_file)
    found = measured(matrix, cache=cache, need_matrix=True, need_values=run)
    m, s = found.matrix, found.structure
    assert m is not None
    if ordering:
        m = replace(reorder(m, ordering).matrix, name=f"{m.name} ({ordering} order)")
        s = measure(m)
    complex_values = m.header.complex_values
    rows = format_rows(s, spec, cal.predict_matrix(m, s, STORAGES) if cal else None,
                       timing=timing, complex_values=complex_values)
    size, prices, x_bytes = prediction(spec, s, rows, cal, timing, complex_values)
    advice = replace(advise(m, prices, size=size, max_block=max_block, x_bytes=x_bytes),
                     strip_rule=strip_rule(spec))
    runs = measured_answers(m, advice, spec) if run else None
    if runs is not None and complex_values:
        echo_message(f"sparsroof: note: {m.name} is complex: the kernels run here multiply "
                     "real values in its pattern, each judged against its own real bound; "
                     "the formats and the partition above price complex values")
    if output == "json":
        emit(formats_json(m.name, spec.name, rows, advice, runs))
    elif output == "csv":
        emit(formats_csv(m.name, spec.name, rows))
    else:
        console = table_console()
        for part in formats_report(m.name, spec.name, rows, advice):
            console.print(part)
        if runs is not None:
            for part in run_report(spec.name, advice, runs, not other_device(spec)):
                console.print(part)
    return 0


def measured_answers(m: Matrix, advice: Advice, spec: HwSpec) -> dict[str, Any]:
    """The advised partition and every single format the advisor priced, run here."""
    from ..host.partitioned import measure_answers

    elsewhere = other_device(spec)
    if elsewhere:
        click.echo(f"sparsroof: note: {elsewhere}", err=True)
    blocks = [(b.first_row, b.last_row, b.storage) for b in advice.blocks]
    return measure_answers(m, blocks, list(advice.single_s),
                           progress=lambda msg: click.echo(f"formats: {msg}", err=True))
