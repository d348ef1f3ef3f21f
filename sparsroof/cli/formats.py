"""``sparsroof formats``: every storage format of one matrix, and the best row partition."""

from __future__ import annotations

import click

from ..advisor.partition import advise, format_rows, prediction_models
from ..hardware.library import load_spec
from ..model.traffic import STORAGES
from ..report.formats import formats_csv, formats_json, formats_report
from ..structure.cache import measured
from .common import CACHE_OPTION, HW_OPTION, OUTPUT_OPTION, emit, table_console


@click.command("formats")
@click.argument("matrix")
@HW_OPTION
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              help="Host calibration (sparsroof calibrate): predict measured times too, "
                   "and partition by them.")
@click.option("--max-block", type=click.IntRange(min=1), default=64, show_default=True,
              help="Longest block of strips the partition considers.")
@OUTPUT_OPTION
@CACHE_OPTION
def command(matrix: str, hw: str, calibration_file: str | None, max_block: int,
            output: str, cache: bool = True) -> int:
    """Storage formats of MATRIX for SpMV: bytes, FLOPs, predicted time, the best one, and
    the partition of the rows into blocks of strips, each in its best format.

    \b
    Examples:
      sparsroof formats data/lap2d_64.mtx --hw a100
      sparsroof formats data/lap2d_64.mtx --hw myhost.yaml --calibration calibration.json
    """
    from ..host.calibrated import load_calibrated

    spec = load_spec(hw)
    spec, cal = load_calibrated(spec, calibration_file)
    found = measured(matrix, cache=cache, need_matrix=True)
    m, s = found.matrix, found.structure
    assert m is not None
    rows = format_rows(s, spec, cal.predict_matrix(m, s, STORAGES) if cal else None)
    size, models, single, x_s = prediction_models(spec, s, rows, cal)
    advice = advise(m, spec, models, single, size=size, max_block=max_block, x_seconds=x_s)
    if output == "json":
        emit(formats_json(m.name, spec.name, rows, advice, cal is not None))
    elif output == "csv":
        emit(formats_csv(m.name, spec.name, rows))
    else:
        console = table_console()
        for part in formats_report(m.name, spec.name, rows, advice, cal is not None):
            console.print(part)
    return 0
