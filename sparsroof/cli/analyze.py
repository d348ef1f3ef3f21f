"""``sparsroof analyze``: roofline bounds of SpMV/SpMM for one or more matrix files."""

from __future__ import annotations

import click

from ..analysis import Analysis, Config, analyze, expand_choice, parse_widths
from ..errors import MatrixFileError
from ..hardware.library import load_spec
from ..matrix.mtx import load
from ..model.traffic import MODELS, STORAGES
from ..plot import KINDS, plot_analyses
from ..report.analysis import to_csv, to_json, to_ranks_table, to_table
from .common import (
    DTYPE_OPTION,
    HW_OPTION,
    INDEX_OPTION,
    KERNEL_OPTION,
    MAX_MEMORY_OPTION,
    MODEL_OPTION,
    OUTPUT_OPTION,
    STORAGE_OPTION,
    UNIT_OPTION,
    WIDTH_OPTION,
    echo_error,
    emit,
    memory_limit,
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
@STORAGE_OPTION
@MODEL_OPTION
@UNIT_OPTION
@click.option("--precision", default=None, metavar="NAME",
              help="Precision of the compute roof (e.g. tf32). [default: --dtype]")
@click.option("--launches", type=click.IntRange(min=0), default=None,
              help="Kernel launches charged at the spec's launch overhead (0 turns the "
                   "ceiling off). [default: 1 on GPUs with a launch overhead]")
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
              help="Host calibration (sparsroof calibrate): bound with its measured cache "
                   "roofs, and also predict the measured SpMV time of each calibrated format.")
@MAX_MEMORY_OPTION
@OUTPUT_OPTION
@click.option("--plot", "plot_path", default=None, metavar="FILE",
              help="Also draw the results to FILE (.png, .svg or .pdf).")
@click.option("--plot-kind", type=click.Choice(KINDS), default="roofline", show_default=True,
              help="Figure for --plot: roofline, time-based roofline, or ridgeline "
                   "(needs --ranks).")
def command(matrices: tuple[str, ...], hw: str, kernel: str, widths: tuple[str, ...],
            dtype: str, index: str, storages: tuple[str, ...], models: tuple[str, ...],
            unit: str | None, precision: str | None, launches: int | None,
            ranks: tuple[str, ...], cache_roof: bool, reuse_factor: float, hub_fraction: float,
            block_size: str | None, output: str, plot_path: str | None, plot_kind: str,
            calibration_file: str | None = None, max_memory: str | None = None) -> int:
    """Speed-of-light latency and roofline position of SpMV/SpMM for each MATRIX.

    MATRIX is a Matrix Market file (.mtx, .mtx.gz) or a DLMC .smtx file. Every good
    file is reported even when another fails; the exit code is 1 if any failed.

    \b
    Examples:
      sparsroof analyze data/lap2d_64.mtx --hw a100
      sparsroof analyze a.mtx b.mtx.gz --kernel spmm --d 1,4,16,64 --output json
      sparsroof analyze data/lap2d_64.mtx --model all --storage all --kernel spmm --d 16
      sparsroof analyze data/lap2d_64.mtx --hw cascade-lake-node --ranks 1,2,4,8
    """
    limit = memory_limit(max_memory)
    spec = load_spec(hw)
    config = Config(
        kernel=kernel, widths=parse_widths(widths) or (1,), dtype=dtype, index=index,
        storages=expand_choice(storages or ("csr",), STORAGES),
        models=expand_choice(models or ("auto",), MODELS, extra=("auto",)),
        unit=unit, precision=precision, launches=launches,
        ranks=parse_widths(ranks), cache_roof=cache_roof, reuse_factor=reuse_factor,
        hub_fraction=hub_fraction, block_size=int(block_size) if block_size else None,
    )
    from .calibrate import load_calibrated

    spec, cal = load_calibrated(spec, calibration_file)  # measured cache roofs bound the runs
    analyses: list[Analysis] = []
    errors: list[dict[str, str]] = []
    predicted: list[dict] = []
    for path in matrices:
        try:
            m = load(path, max_memory=limit)
            analyses.append(analyze(m, spec, config))
        except MatrixFileError as err:
            echo_error(str(err))
            errors.append({"path": err.path, "error": err.problem})
            continue
        except MemoryError:
            problem = "ran out of memory (--max-memory SIZE refuses such files at once)"
            echo_error(f"{path}: {problem}")
            errors.append({"path": path, "error": problem})
            continue
        if cal is not None:
            from .calibrate import prediction

            predicted.append(prediction(cal, str(calibration_file), m, analyses[-1]))
    if cal is not None and output == "json":
        from .calibrate import render_predictions

        emit(render_predictions(predicted, output, to_json(analyses, errors)))
    else:
        render(analyses, errors, output)
        if cal is not None and output == "table":
            from .calibrate import render_predictions

            emit(render_predictions(predicted, output))
    if plot_path and analyses:
        echo_written(plot_analyses(analyses, spec, plot_path, kind=plot_kind))
    return 1 if errors else 0


def render(analyses: list[Analysis], errors: list[dict[str, str]], output: str) -> None:
    if output == "json":
        emit(to_json(analyses, errors))
    elif output == "csv":
        emit(to_csv(analyses))
    else:
        console = table_console()
        for a in analyses:
            console.print(to_table(a))
            if a.distributed:
                console.print(to_ranks_table(a))
