"""``sparsroof analyze``: roofline bounds of SpMV/SpMM for one or more matrix files."""

from __future__ import annotations

import click

from ..analysis import Analysis, Config, analyze, parse_widths
from ..errors import MatrixFileError
from ..hwspec import load_spec
from ..io import load
from ..plot import KINDS, plot_analyses
from ..report import to_csv, to_json, to_table
from .common import (
    DTYPE_OPTION,
    HW_OPTION,
    INDEX_OPTION,
    KERNEL_OPTION,
    OUTPUT_OPTION,
    WIDTH_OPTION,
    echo_error,
    emit,
    table_console,
)
from .plot import echo_written


@click.command("analyze")
@click.argument("matrices", nargs=-1, required=True, metavar="MATRIX...")
@HW_OPTION
@KERNEL_OPTION
@WIDTH_OPTION
@DTYPE_OPTION
@INDEX_OPTION
@OUTPUT_OPTION
@click.option("--plot", "plot_path", default=None, metavar="FILE",
              help="Also draw the results to FILE (.png, .svg or .pdf).")
@click.option("--plot-kind", type=click.Choice(KINDS), default="roofline", show_default=True,
              help="Figure for --plot: roofline, or time-based roofline.")
def command(matrices: tuple[str, ...], hw: str, kernel: str, widths: tuple[str, ...],
            dtype: str, index: str, output: str, plot_path: str | None, plot_kind: str) -> int:
    """Speed-of-light latency and roofline position of SpMV/SpMM for each MATRIX.

    MATRIX is a Matrix Market file (.mtx, .mtx.gz) or a DLMC .smtx file. Every good
    file is reported even when another fails; the exit code is 1 if any failed.

    \b
    Examples:
      sparsroof analyze data/lap2d_64.mtx --hw a100
      sparsroof analyze a.mtx b.mtx.gz --kernel spmm --d 1,4,16,64 --output json
    """
    spec = load_spec(hw)
    config = Config(kernel=kernel, widths=parse_widths(widths) or (1,), dtype=dtype, index=index)
    spec.peak(config.unit, config.dtype)
    analyses: list[Analysis] = []
    errors: list[dict[str, str]] = []
    for path in matrices:
        try:
            analyses.append(analyze(load(path), spec, config))
        except MatrixFileError as err:
            echo_error(str(err))
            errors.append({"path": err.path, "error": err.problem})
    if output == "json":
        emit(to_json(analyses, errors))
    elif output == "csv":
        emit(to_csv(analyses))
    else:
        console = table_console()
        for a in analyses:
            console.print(to_table(a))
    if plot_path and analyses:
        echo_written(plot_analyses(analyses, spec, plot_path, kind=plot_kind))
    return 1 if errors else 0
