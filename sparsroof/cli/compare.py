"""``sparsroof compare``: measured run times judged against their speed-of-light bound."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..compare import Judged, Summary, judge, read_runs, summarise
from ..compare.runs import TIME_UNITS
from ..hardware.library import load_spec
from ..model.timing import describe
from ..report.compare import compare_csv, compare_json_pieces, compare_table
from ..userfile import capped
from .common import (
    DTYPE_OPTION,
    KERNEL_OPTION,
    OUTPUT_OPTION,
    emit,
    emit_pieces,
    hw_option,
    named_file,
    table_console,
    timing_options,
)
from .figures import check_figure, echo_written
from .guard import echo_message

if TYPE_CHECKING:
    from ..hardware.spec import HwSpec

__all__ = ["command", "echo_judged"]


@click.command("compare")
@click.argument("runs_file", metavar="RUNS")
@hw_option(help="Spec for runs that name none (a CSV 'hw' column or the bench JSON's spec "
                "wins).")
@KERNEL_OPTION
@click.option("--d", "width", type=click.IntRange(min=1), default=1, show_default=True,
              help="Width of B for rows that do not say.")
@DTYPE_OPTION
@click.option("--time-unit", type=click.Choice(list(TIME_UNITS)), default="s",
              show_default=True, help="Unit of the CSV 'time_s' column and of Ginkgo's "
              "'time' field.")
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              callback=named_file,
              help="Bound the runs with the cache roofs measured by 'sparsroof calibrate' "
                   "(a bench JSON made with --calibration names its own).")
@click.option("--matrix-dir", "matrix_dir", default=None, callback=named_file, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Where to find a run's matrix by file name when the path it records does "
                   "not exist (a benchmark machine's absolute path).")
@timing_options
@OUTPUT_OPTION
@click.option("--plot", "plot_file", default=None, metavar="FILE",
              help="Also draw the runs beside their bound: .png, .svg or .pdf.")
@click.option("--plot-kind", type=click.Choice(["roofline", "time", "complexity-time"]),
              default="roofline", show_default=True,
              help="Figure of --plot: roofline, time-based or complexity-time roofline.")
def command(runs_file: str, hw: str, kernel: str, width: int, dtype: str, time_unit: str,
            calibration_file: str | None, output: str, plot_file: str | None,
            plot_kind: str, matrix_dir: str | None = None, timing: str = "graph",
            calls_per_sync: int = 1) -> int:
    """Judge measured run times against their bound: per run the bound, the measured time,
    the % of SoL and the term that bound it (launch floor, a memory level, compute).

    RUNS is a CSV with the columns matrix,time_s and optionally kernel, format, d, dtype,
    hw, implementation, timing (matrix paths relative to the CSV; a budget file's older
    width and seconds are read as d and time_s), or those fields as a JSON list; or the
    JSON of 'sparsroof bench -O json'; or Ginkgo's SpMV benchmark JSON (a format without a traffic
    model is noted and skipped). Each run is bounded for the way it was timed (its own
    'timing', else --timing). A run faster than its bound is a violation: it is listed
    with the term that set the bound. A bad row gets a one-line error and the rest are
    still judged. Exit code 1 if any run is a violation or any row has an error.

    \b
    Examples:
      sparsroof compare measured.csv --hw v100-sxm2
      sparsroof compare bench.json -O json
      sparsroof compare ginkgo-spmv.json --hw a100 --time-unit ns \\
          --timing sync --matrix-dir data
      sparsroof compare measured.csv --hw v100-sxm2 --plot measured.png
      sparsroof compare bench.json --calibration calibration.json
    """
    check_figure(plot_file)  # a bad suffix fails before any run is judged
    if calibration_file:
        from ..host.calibration import load as load_calibration

        load_calibration(calibration_file)  # a missing or broken file is one error, not one a run
    load_spec(hw)  # an unknown name is one usage error, before any run is read
    runs, errors = read_runs(runs_file, kernel=kernel, width=width, dtype=dtype,
                             time_unit=time_unit, matrix_dir=matrix_dir)
    loaded: dict[str, HwSpec] = {}  # by name: the figure draws the very specs judged by

    def load_spec_with(name: str, calibration: str | None) -> HwSpec:
        spec = _calibrated_spec(name, calibration)
        loaded[spec.name] = spec
        return spec

    judged, more = judge(runs, hw, calibration=calibration_file,
                         load_spec_with=load_spec_with, timing=timing,
                         calls_per_sync=calls_per_sync)
    errors = [*errors, *more]
    code = echo_judged(judged, errors, output,
                       title=f"{runs_file}: measured runs against their bound, timed "
                             f"{describe(timing, calls_per_sync)} where a run does not say")
    if plot_file:
        from ..plot import measured_points, plot_measured
        from ..plot.measured import measured_spec

        points = measured_points(judged)
        spec = loaded.get(measured_spec(points)) if points else None
        echo_written(plot_measured(points, plot_file, kind=plot_kind, spec=spec))
    return code


def echo_judged(judged: Sequence[Judged], errors: Sequence[Any], output: str, *, title: str,
                document: Callable[[Summary], str] | None = None,
                tables: Callable[[], Sequence[Any]] = tuple) -> int:
    """Errors and violations on stderr, the judged runs on stdout (``output`` json, csv or
    table) and the exit code: 1 if any row had an error or any run beat its bound.

    ``document`` writes the JSON from the summary (compare's own by default); ``tables``
    gives the tables printed after the runs' table."""
    failed = [e for e in errors if not getattr(e, "skipped", False)]
    summary = summarise(judged, len(failed))
    # in the file's order: a note for a row skipped, an error for a row that failed; a
    # few of each kind, then a count
    said = [("note: " if getattr(e, "skipped", False) else "error: ") + str(e) for e in errors]
    kind = ""
    for line in capped(said):
        if not line.startswith("... "):
            kind, line = line.split(": ", 1)
        echo_message(f"sparsroof: {kind}: {line}")
    for j in judged:
        if j.violation:
            echo_message(f"sparsroof: violation: {j.explanation()}")
    if output == "json":
        if document:
            emit(document(summary))
        else:
            emit_pieces(compare_json_pieces(judged, summary, errors))
    elif output == "csv":
        emit(compare_csv(judged))
    else:
        console = table_console()
        console.print(compare_table(judged, summary, title))
        for table in tables():
            console.print(table)
    return 1 if failed or summary.violations else 0


def _calibrated_spec(name: str, calibration: str | None) -> HwSpec:
    """The spec ``name`` with the measured roofs of ``calibration``, if any, as ``bench``
    applies them."""
    from ..hardware.library import load_spec
    from ..host.calibrated import load_calibrated

    return load_calibrated(load_spec(name), calibration)[0]
