"""``sparsroof analyze``: roofline bounds of SpMV/SpMM for one or more matrix files."""

from __future__ import annotations

from typing import Any

import click

from ..analysis import Analysis, Config, analyze_measured, measure_for
from ..caching.parsed import bypassed
from ..errors import MatrixFileError, OptionError
from ..hardware.library import load_specs
from ..plot import KINDS, plot_analyses
from ..plot.style import import_ahead
from ..report.analysis import not_computed, to_csv, to_json, to_ranks_table, to_table
from ..report.reorder import to_reorder_table
from .common import (
    CACHE_OPTION,
    DTYPE_OPTION,
    INDEX_OPTION,
    KERNEL_OPTION,
    MAX_MEMORY_OPTION,
    MODEL_OPTION,
    OUTPUT_OPTION,
    REORDER_OPTION,
    STORAGE_OPTION,
    UNIT_OPTION,
    WIDE_OPTION,
    WIDTH_OPTION,
    echo_error,
    emit,
    hw_option,
    memory_limit,
    named_file,
    table_console,
    timing_options,
    warn_flagged,
)
from .figures import check_figure
from .guard import echo_message


@click.command("analyze")
@click.argument("matrices", nargs=-1, required=True, metavar="MATRIX...")
@hw_option(many=True, help="Hardware spec: a bundled name (see 'sparsroof hw list') or a "
           "path to a YAML spec; several, repeated or comma separated, are compared in one "
           "table.")
@KERNEL_OPTION
@WIDTH_OPTION
@DTYPE_OPTION
@INDEX_OPTION
@STORAGE_OPTION
@MODEL_OPTION
@UNIT_OPTION
@click.option("--precision", default=None, metavar="NAME",
              help="Precision of the compute roof (e.g. tf32). [default: --dtype]")
@click.option("--launches", type=click.IntRange(min=0), default=None,
              help="Kernel launches charged at the spec's launch overhead (0 turns the "
                   "ceiling off; a CPU call's own floor, its reads through one core's "
                   "ports, stays). [default: 1 on GPUs with a launch overhead]")
@timing_options
@click.option("--ranks", "ranks", multiple=True, metavar="P[,P...]",
              help="Distributed SpMM on P ranks (1-D row partition), e.g. --ranks 1,2,4,8.")
@click.option("--cache-roof/--no-cache-roof", default=True, show_default=True,
              help="Use a cache level's bandwidth when the working set fits in it.")
@click.option("--reuse-factor", type=click.FloatRange(0, 1, min_open=True), default=0.25,
              show_default=True, help="Share of B reads that reach memory (blocked model).")
@click.option("--hub-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.001, show_default=True, help="Hub share f of columns (scale-free).")
@click.option("--block-size", type=click.Choice(["2", "4", "8", "16", "32"]), default=None,
              help="Block size t of the blocked model. [default: the classifier's, else 4]")
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              callback=named_file,
              help="Host calibration (sparsroof calibrate): bound with its measured cache "
                   "roofs, and also predict the measured SpMV time of each calibrated format.")
@REORDER_OPTION
@MAX_MEMORY_OPTION
@CACHE_OPTION
@OUTPUT_OPTION
@WIDE_OPTION
@click.option("--plot", "plot_path", default=None, metavar="FILE",
              help="Also draw the results to FILE (.png, .svg or .pdf).")
@click.option("--plot-kind", type=click.Choice(KINDS), default="roofline", show_default=True,
              help="Figure for --plot: roofline, time-based roofline, complexity-time "
                   "roofline, or ridgeline (needs --ranks).")
def command(matrices: tuple[str, ...], hw: tuple[str, ...], kernel: str, widths: tuple[str, ...],
            dtype: str, index: str, storages: tuple[str, ...], models: tuple[str, ...],
            unit: str | None, precision: str | None, launches: int | None,
            ranks: tuple[str, ...], cache_roof: bool, reuse_factor: float, hub_fraction: float,
            block_size: str | None, output: str, wide: bool, plot_path: str | None,
            plot_kind: str, calibration_file: str | None = None,
            reorder: tuple[str, ...] = (), max_memory: str | None = None,
            cache: bool = True, timing: str = "graph", calls_per_sync: int = 1) -> int:
    """Speed-of-light latency and roofline position of SpMV/SpMM for each MATRIX.

    MATRIX is a Matrix Market file (.mtx, .mtx.gz) or a DLMC .smtx file. Every good
    file is reported even when another fails; the exit code is 1 if any failed.

    \b
    Examples:
      sparsroof analyze data/lap2d_64.mtx --hw a100
      sparsroof analyze data/*.mtx --kernel spmm --d 1,4,16,64 -O json
      sparsroof analyze data/lap2d_64.mtx --model all --storage all \\
          --kernel spmm --d 16 --wide
      sparsroof analyze data/lap2d_64.mtx --hw a100,h100-sxm,mi250x-gcd
      sparsroof analyze data/lap2d_64.mtx --hw clx-ridgeline --dtype fp32 \\
          --kernel spmm --d 16 --ranks 1,2,4,8 \\
          --plot ridge.png --plot-kind ridgeline
      sparsroof analyze data/lap2d_64.mtx --hw c2050 --reorder rcm,degree
    """
    limit = memory_limit(max_memory)
    with bypassed(not cache):  # --no-cache: the specs parsed afresh too
        specs = load_specs(hw)
    _check_plot(plot_path, plot_kind, ranks, len(specs))
    imported = import_ahead() if plot_path else None
    if calibration_file and len(specs) > 1:
        raise OptionError("--calibration describes one host: give --hw one spec")
    _check_csv(output, ranks=ranks, calibration=calibration_file)
    config = Config.from_options(
        kernel=kernel, d=widths, dtype=dtype, index=index, storage=storages, model=models,
        unit=unit, precision=precision, launches=launches, ranks=ranks, cache_roof=cache_roof,
        reuse_factor=reuse_factor, hub_fraction=hub_fraction,
        block_size=int(block_size) if block_size else None, reorder=reorder, timing=timing,
        calls_per_sync=calls_per_sync)
    cal = None
    if calibration_file:  # the calibration's code is imported only when one is given
        from ..host.calibrated import load_calibrated, prediction

        specs[0], cal = load_calibrated(specs[0], calibration_file)  # measured cache roofs
        warn_flagged(cal, calibration_file)
    groups: list[list[Analysis]] = []
    errors: list[dict[str, str]] = []
    predicted: list[dict[str, Any]] = []
    for path in matrices:
        try:
            m = measure_for(path, config, cache=cache, need_matrix=cal is not None,
                            max_memory=limit)
            groups.append([analyze_measured(m, s, config) for s in specs])
        except MatrixFileError as err:
            echo_error(err.on_command_line())
            errors.append({"path": err.path, "error": err.problem})
            continue
        except MemoryError:
            problem = "ran out of memory (--max-memory SIZE refuses such files at once)"
            echo_error(f"{path}: {problem}")
            errors.append({"path": path, "error": problem})
            continue
        if cal is not None:
            assert m.matrix is not None
            predicted.append(prediction(cal, str(calibration_file), m.matrix, groups[-1][0]))
    render(groups, errors, output, predicted if cal is not None else None, wide=wide)
    analyses = [a for group in groups for a in group]
    _unused_parameters(analyses)
    if imported is not None:
        imported()
    if plot_path and analyses:
        from .figures import echo_written

        if len(specs) > 1:
            from ..plot.devices import devices_figure

            echo_written(devices_figure(groups, specs, plot_path))
        else:
            echo_written(plot_analyses(analyses, specs[0], plot_path, kind=plot_kind))
    return 1 if errors else 0


#: a model's parameter option -> the models that read it
_PARAMETERS = {"reuse_factor": ("blocked",), "block_size": ("blocked",),
               "hub_fraction": ("scale-free",)}


def _unused_parameters(analyses: list[Analysis]) -> None:
    """A note for each model parameter given on the command line that no model of these
    analyses read (the class picked another model): given and silently unused, it would
    read as applied."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    ran = {r.traffic.model for a in analyses for r in a.results}
    for name, models in _PARAMETERS.items():
        if ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None):
            continue
        if analyses and not ran & set(models):
            flag = "--" + name.replace("_", "-")
            echo_message(f"sparsroof: note: {flag} was not used: it is a parameter of the "
                         f"{' and '.join(models)} model, which no result here ran (give "
                         f"--model {models[0]})")


def _check_csv(output: str, **given: object) -> None:
    """-O csv holds one row per result: refuse the options whose answers it cannot hold,
    rather than leave them out of it unsaid."""
    held = [f"--{name}" for name, value in given.items() if value]
    if output == "csv" and held:
        raise OptionError(f"-O csv writes one row per result, without what {held[0]} "
                          "adds: it is in the table and in -O json")


def _check_plot(path: str | None, kind: str, ranks: tuple[str, ...], n_specs: int) -> None:
    """Refuse a figure that cannot be drawn before any matrix is read."""
    if path is None:
        if kind != "roofline":
            raise OptionError(f"--plot-kind {kind} is the kind of --plot FILE: give --plot")
        return
    check_figure(path)
    if kind == "ridgeline" and not ranks:
        raise OptionError("--plot-kind ridgeline draws distributed results: give --ranks")
    if n_specs > 1 and kind != "roofline":
        raise OptionError(f"--plot-kind {kind} draws one spec: give --hw one spec (several "
                          "specs are compared on a roofline)")


def render(groups: list[list[Analysis]], errors: list[dict[str, str]], output: str,
           calibrated: list[dict[str, Any]] | None = None, wide: bool = False) -> None:
    """Print the analyses, one table per matrix comparing its specs (and the calibrated
    predictions, where there is a calibration)."""
    analyses = [a for group in groups for a in group]
    if output == "json":
        emit(to_json(analyses, errors, calibrated))
    elif output == "csv":
        emit(to_csv(analyses))
        for a in analyses:  # the CSV has a row per computed result only: say what is not
            for line in not_computed(a):
                echo_message(f"sparsroof: note: {a.matrix.name}: {line}")
    else:
        console = table_console(wide)
        for group in groups:
            console.print(to_table(group, wide=wide))
            for a in group:
                if a.distributed:
                    console.print(to_ranks_table(a))
                if a.reorderings:
                    console.print(to_reorder_table(a))
        if calibrated is not None:
            from ..report.calibration import predictions_text

            emit(predictions_text(calibrated))
