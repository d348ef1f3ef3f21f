"""``sparsroof bench``: run the real kernels on this host and judge them against the bound."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from .._version import envelope
from ..hardware.library import load_spec
from ..host.bench import KERNEL_FORMATS, Measurement, bench
from ..matrix.mtx import load
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
    from .calibrate import load_calibrated

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
    _render(results, spec.name, output, predicted, matrix)
    return 3 if beaten else 0


def _record(r: Measurement, predicted: dict[str, float]) -> dict:
    d = asdict(r)
    d.pop("timing")
    return d | {"median_s": r.median_s, "min_s": r.timing.min_s if r.timing else None,
                "repeats": len(r.timing.samples) if r.timing else 0,
                "achieved_bytes_per_s": r.achieved_bytes_per_s,
                "achieved_flops": r.achieved_flops, "sol_share": r.sol_share,
                "beats_bound": r.beats_bound, "calibrated_s": predicted.get(r.storage),
                "calibrated_error": r.error_of(predicted.get(r.storage))}


def _render(results: list[Measurement], spec: str, output: str,
            predicted: dict[str, float], path: str) -> None:
    if output == "json":  # the matrix path lets 'sparsroof compare' bound the runs again
        emit(json.dumps(envelope("bench") | {"spec": spec, "results": [
            _record(r, predicted) | {"path": path} for r in results]}, indent=2))
        return
    if output == "csv":
        import csv
        import io

        out = io.StringIO()
        rows = [_record(r, predicted) for r in results]
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        emit(out.getvalue())
        return
    from rich.table import Table

    name = results[0].matrix if results else ""
    table = Table(title=f"{name}: measured on this host, bound on {spec}", title_justify="left")
    extra = ("calibrated", "error %") if predicted else ()
    for h in ("backend", "format", "median", "best", "GB/s", "GFLOP/s", "SoL", "roof",
              "% of SoL", *extra, "note"):
        table.add_column(h, justify="left" if h in ("backend", "format", "roof", "note")
                         else "right")
    for r in results:
        if r.timing is None:
            table.add_row(r.backend, r.storage, "-", "-", "-", "-", si(r.sol_s, "s"),
                          r.memory_level, "-", *["-" for _ in extra], f"skipped: {r.skipped}")
            continue
        err = r.error_of(predicted.get(r.storage))
        cells = ((si(predicted[r.storage], "s") if r.storage in predicted else "-",
                  f"{100 * err:.1f}" if err is not None else "-") if predicted else ())
        table.add_row(r.backend, r.storage, si(r.timing.median_s, "s"), si(r.timing.min_s, "s"),
                      f"{r.achieved_bytes_per_s / 1e9:.3g}", f"{r.achieved_flops / 1e9:.3g}",  # type: ignore[operator]
                      si(r.sol_s, "s"), r.memory_level, f"{100 * r.sol_share:.1f}",  # type: ignore[operator]
                      *cells, "FASTER THAN BOUND: model error" if r.beats_bound else "")
    table_console().print(table)
