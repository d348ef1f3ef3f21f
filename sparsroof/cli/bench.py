"""``sparsroof bench``: run the real kernels on this host and judge them against the bound."""

from __future__ import annotations

import click

from ..analysis.config import Config
from ..hardware.library import load_spec
from ..host.bench import KERNEL_FORMATS, bench, check_operands, other_device
from ..host.gpu.bench import GPU_FORMATS
from ..matrix.mtx import load
from ..model.timing import TIMINGS
from ..report.bench import bench_csv, bench_json, bench_table
from ..structure.features import BLOCK_SIZES, measure
from .common import (
    DTYPE_OPTION,
    KERNEL_OPTION,
    OUTPUT_OPTION,
    WIDE_OPTION,
    WIDTH_OPTION,
    comma_list,
    emit,
    hw_option,
    named_file,
    table_console,
    warn_flagged,
)
from .guard import echo_message

#: the BSR block size where neither --block nor a bsrN name gives one
_BLOCK = "4"


@click.command("bench")
@click.argument("matrix")
@hw_option(required=True,
           help="Spec of this host (e.g. from 'sparsroof hw probe -o myhost.yaml').")
@KERNEL_OPTION
@WIDTH_OPTION
@DTYPE_OPTION
@click.option("--storage", "storages", multiple=True, metavar="NAME[,NAME...]|all",
              help=f"Formats to run: {', '.join(KERNEL_FORMATS)}, or all (cuSPARSE: "
                   f"{', '.join(GPU_FORMATS)}).  [default: all]")
@click.option("--formats", "old_formats", multiple=True, hidden=True)
@click.option("--block", type=click.Choice([str(b) for b in BLOCK_SIZES]), default=None,
              help=f"BSR block size (or name it: --storage bsr8).  [default: {_BLOCK}]")
@click.option("--backend", type=click.Choice(["scipy", "cusparse"]), default="scipy",
              show_default=True,
              help="scipy on the CPU (ELL and HYB compiled with numba), or cuSPARSE through "
                   f"CuPy on the first CUDA GPU ({', '.join(GPU_FORMATS)}; needs "
                   "pip install \"sparsroof[gpu]\").")
@click.option("--timing", type=click.Choice(TIMINGS), default="stream", show_default=True,
              help="How each run is timed, and so which launch floor bounds it: graph, "
                   "calls captured into a CUDA graph and replayed; stream, calls back to "
                   "back on one stream; sync, a host synchronisation after every "
                   "--calls-per-sync calls (timed by the host's clock); cold, a buffer "
                   "twice the L2 written before each call. GPU runs are timed by CUDA "
                   "events; the scipy backend times stream only.")
@click.option("--calls-per-sync", "calls_per_sync", type=click.IntRange(min=1), default=1,
              show_default=True,
              help="With --timing sync: calls between two host synchronisations.")
@click.option("--calibration", "calibration_file", default=None, metavar="FILE",
              callback=named_file,
              help="Take the memory roofs measured by 'sparsroof calibrate' for cache levels, "
                   "and show its predicted SpMV times beside the measured ones.")
@click.option("--repeat", type=click.IntRange(min=1), default=7, show_default=True,
              help="Timed repetitions (on a GPU: timed regions), at least; more until "
                   "0.05 s have run (up to 500, or --repeat where more).")
@OUTPUT_OPTION
@WIDE_OPTION
def command(matrix: str, hw: str, kernel: str, widths: tuple[str, ...], dtype: str,
            storages: tuple[str, ...], old_formats: tuple[str, ...], block: str | None,
            backend: str, calibration_file: str | None, repeat: int, output: str, wide: bool,
            timing: str = "stream", calls_per_sync: int = 1) -> int:
    """Time each format's SpMV/SpMM kernel on MATRIX here: median time, achieved GB/s and
    GFLOP/s, and the share of the speed of light. A run faster than its bound is a model
    error and is flagged; the exit code is then 3. With --backend cusparse the kernels are
    cuSPARSE's on the GPU, each result checked once against scipy's, timed by --timing,
    and the JSON records the device.

    \b
    Examples:
      sparsroof bench data/lap2d_64.mtx --hw myhost.yaml
      sparsroof bench data/lap2d_64.mtx --hw myhost.yaml --kernel spmm \\
          --d 1,16 --storage csr,bsr
      sparsroof bench data/lap2d_64.mtx --hw myhost.yaml \\
          --calibration calibration.json
      sparsroof bench data/lap2d_64.mtx --hw h100-sxm --backend cusparse \\
          --timing graph
    """
    choices = GPU_FORMATS if backend == "cusparse" else KERNEL_FORMATS
    storages, block = _bsr_named(storages + old_formats, block)
    formats = comma_list(storages, choices, "--storage") or choices
    d = Config.from_options(kernel=kernel, d=widths).widths
    spec = load_spec(hw)
    from ..host.calibrated import load_calibrated

    spec, cal = load_calibrated(spec, calibration_file)
    warn_flagged(cal, calibration_file)
    device = None
    if backend == "cusparse":
        from ..host.gpu.cuda import open_device

        device = open_device()
    elsewhere = other_device(spec, backend, device.info.name if device else None)
    if elsewhere:
        click.echo(f"sparsroof: note: {elsewhere}", err=True)
    m = load(matrix)
    if m.header.complex_values:
        echo_message(f"sparsroof: note: {m.name} is complex: its kernels here multiply real "
                     "values in its pattern, and are judged against real bounds")
    check_operands(m, max(d), dtype)  # the widest first: no width is run for nothing
    s = measure(m)
    results = [r for width in d for r in bench(
        m, s, spec, formats=formats, kernel=kernel, width=width, dtype=dtype, block=int(block),
        backend=backend, repeat=repeat, method=timing, calls_per_sync=calls_per_sync,
        device=device, progress=lambda msg: click.echo(f"bench: {msg}", err=True))]
    for note in dict.fromkeys(r.note for r in results if "graph" in r.note):
        click.echo(f"sparsroof: note: {note}", err=True)
    predicted: dict[str, float] = {}
    if cal is not None and kernel == "spmv" and dtype == cal.dtype and backend == "scipy":
        predicted = cal.predict_matrix(m, s, [r.storage for r in results if r.timing])
    beaten = [r for r in results if r.violation]
    for r in beaten:
        click.echo(f"sparsroof: violation: {r.explanation(spec.name)}", err=True)
    if output == "json":
        emit(bench_json(results, spec.name, predicted, matrix, spec_file=hw,
                        calibration=calibration_file,
                        device=device.info.to_dict() if device else None))
    elif output == "csv":
        emit(bench_csv(results, predicted))
    else:
        table_console(wide).print(bench_table(results, spec.name, predicted, wide,
                                              where=device.info.name if device else ""))
    return 3 if beaten else 0


def _bsr_named(values: tuple[str, ...], block: str | None) -> tuple[tuple[str, ...], str]:
    """``bsr2`` ... ``bsr32`` (analyze's names) as ``bsr`` with that ``--block``: one
    block size a run, as --block (``block``, None where not given) gives it.

    >>> _bsr_named(("csr,bsr8",), None)
    (('csr', 'bsr'), '8')
    """
    from ..errors import OptionError, empty_item

    names, sizes = [], set()
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                raise empty_item(value, "{opt:storage}: ")
            size = part[3:] if part.startswith("bsr") else ""
            if size in {str(b) for b in BLOCK_SIZES}:
                names.append("bsr")
                sizes.add(size)
            else:
                names.append(part)
    given = sizes | ({block} if block else set())
    if len(given) > 1:
        raise OptionError(f"{{opt:storage}}: one BSR block size a run "
                          f"({', '.join(sorted(given, key=int))} given)")
    return tuple(names), (given.pop() if given else _BLOCK)
