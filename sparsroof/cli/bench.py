"""``sparsroof bench``: run the real kernels on this host and judge them against the bound."""

from __future__ import annotations

import click

from ..hardware.library import load_spec
from ..host.bench import KERNEL_FORMATS, bench
from ..matrix.mtx import load
from ..report.bench import bench_csv, bench_json, bench_table
from ..structure.features import measure
from ..units import si
from .common import DTYPE_OPTION, KERNEL_OPTION, OUTPUT_OPTION, emit, table_console


@click.command("bench")
@click.argument("matrix")
@click.option("--hw", required=True, metavar="NAME|PATH",
              help="Spec of this host (e.g. from 'sparsroof hw probe -o myhost.yaml').")
@KERNEL_OPTION
@click.option("--d", "width", type=click.IntRange(min=1), default=1, show_default=True,
              help="Width of B for SpMM.")
@DTYPE_OPTION
@click.option("--formats", "formats", default=",".join(KERNEL_FORMATS), show_default=True,
              help="Formats to run, comma separated.")
@click.option("--block", type=click.Choice(["2", "4", "8", "16", "32"]), default="4",
              show_default=True, help="BSR block size.")
@click.option("--backend", type=click.Choice(["scipy", "cusparse"]), default="scipy",
              show_default=True, help="scipy on the CPU, or cuSPARSE through CuPy on a GPU.")
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              help="Take the memory roofs measured by 'sparsroof calibrate' for cache levels, "
                   "and show its predicted SpMV times beside the measured ones.")
@click.option("--repeat", type=click.IntRange(min=1), default=7, show_default=True,
              help="Timed repetitions (at least; more until 0.05 s have run).")
@OUTPUT_OPTION
def command(matrix: str, hw: str, kernel: str, width: int, dtype: str, formats: str,
            block: str, backend: str, calibration_file: str | None, repeat: int,
            output: str) -> int:
    """Time each format's SpMV/SpMM kernel on MATRIX here: median time, achieved GB/s and
    GFLOP/s, and the share of the speed of light. A run faster than its bound is a model
    error and is flagged; the exit code is then 3.

    \b
    Examples:
      sparsroof bench data/lap2d_64.mtx --hw myhost.yaml
      sparsroof bench a.mtx --hw myhost.yaml --kernel spmm --d 16 --formats csr,bsr
      sparsroof bench a.mtx --hw myhost.yaml --calibration calibration.json
    """
    spec = load_spec(hw)
    from ..host.calibrated import load_calibrated

    spec, cal = load_calibrated(spec, calibration_file)
    m = load(matrix)
    s = measure(m)
    results = bench(m, s, spec, formats=[f.strip() for f in formats.split(",")],
                    kernel=kernel, width=width, dtype=dtype, block=int(block),
                    backend=backend, repeat=repeat,
                    progress=lambda msg: click.echo(f"bench: {msg}", err=True))
    predicted: dict[str, float] = {}
    if cal is not None and kernel == "spmv" and dtype == cal.dtype and backend == "scipy":
        predicted = cal.predict_matrix(m, s, [r.storage for r in results if r.timing])
    beaten = [r for r in results if r.beats_bound]
    for r in beaten:
        click.echo(f"sparsroof: MODEL ERROR: {r.storage} ran in {si(r.timing.min_s, 's')}, "  # type: ignore[union-attr]
                   f"faster than its bound {si(r.sol_s, 's')} ({r.memory_level} roof); the "
                   f"spec or the traffic model is wrong for this host", err=True)
    if output == "json":
        emit(bench_json(results, spec.name, predicted, matrix))
    elif output == "csv":
        emit(bench_csv(results, predicted))
    else:
        table_console().print(bench_table(results, spec.name, predicted))
    return 3 if beaten else 0
