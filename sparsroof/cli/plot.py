"""``sparsroof plot``: figures from saved results (analyze JSON, sparsity points)."""

from __future__ import annotations

from typing import Any

import click

from ..errors import FigureError, OptionError, SpecError
from ..hardware.library import load_spec
from ..hardware.spec import HwSpec
from ..model.traffic import MODELS
from ..plot import (
    figure_format,
    measured_spec,
    other_specs,
    plot_points,
    plot_ridgeline_results,
    read_measured,
    read_results,
    save,
    sparsity_roofline_figure,
)
from .common import hw_option, named_file
from .figures import DPI_OPTION, SIZE_OPTION, checked_figure, echo_written, size_of

__all__ = ["command"]


_OUT = click.option("-o", "--out", "out", required=True, metavar="FILE",
                    callback=checked_figure, help="Figure file: .png, .svg or .pdf.")


@click.group("plot")
def command() -> None:
    """Draw figures from saved results.

    \b
    Examples:
      sparsroof analyze data/*.mtx --output json > results.json
      sparsroof plot roofline results.json -o roofline.png
      sparsroof plot time results.json -o time.pdf
      sparsroof plot complexity-time results.json -o complexity-time.png
      sparsroof compare measured.csv --hw v100-sxm2 -O json > judged.json
      sparsroof plot roofline --measured judged.json -o measured.png
      sparsroof plot sparsity-roofline points.csv -o sparsity.svg
      sparsroof whatif swin_tiny --accuracy acc.csv --points swin.csv
      sparsroof plot accuracy swin.csv -o accuracy.png
      sparsroof analyze data/*.mtx --kernel spmm --d 1,4,16,64 \\
          --model all -O json > models.json
      sparsroof plot reuse models.json -o reuse.png
      sparsroof analyze data/lap2d_64.mtx --hw clx-ridgeline --dtype fp32 \\
          --kernel spmm --d 16 --ranks 1,2,4,8,16 --output json > ranks.json
      sparsroof plot ridgeline ranks.json -o ridge.png
    """


def _spec(source: str, name: str | None) -> HwSpec:
    if not name:
        raise SpecError(source, "the results name no single hardware spec; pass --hw")
    try:
        return load_spec(name)
    except SpecError as err:
        raise SpecError(source, f"cannot load the spec the results name ({err}); "
                        "pass --hw NAME|PATH") from None


def _results(kind: str, results: str | None, measured: str | None, out: str, hw: str | None,
             size: str | None, dpi: int) -> None:
    if not results and not measured:
        raise click.UsageError("give RESULTS, --measured RUNS, or both")
    chosen = load_spec(hw) if hw else None
    if results and _whatif_layers(kind, results, measured, out, size, dpi,
                                  chosen.name if chosen else None):
        return
    points, spec_name = (read_results(results, chosen.name if chosen else None) if results
                         else ([], None))
    runs = read_measured(measured, hw=hw or spec_name or "a100") if measured else []
    if runs and not results:
        spec_name = measured_spec(runs, str(measured))
    spec = chosen or _spec(results or str(measured), spec_name)
    others = other_specs(runs, spec.name)
    if others:
        against = f"{results} holds {spec.name}" if results and not chosen else \
            f"--hw is {spec.name}"
        raise OptionError(f"{measured}: its runs were bounded on {', '.join(others)}, and "
                          f"{against}: draw each against its own spec")
    echo_written(plot_points(points, spec, out, kind=kind, size=size_of(size), dpi=dpi,
                             measured=runs))


def _whatif_layers(kind: str, results: str, measured: str | None, out: str, size: str | None,
                   dpi: int, spec: str | None) -> bool:
    """Draw a whatif study's layers (dense and sparse kernels) on their roofline; False
    when ``results`` is not the JSON of 'sparsroof whatif'."""
    from ..plot import plot_whatif_layers, whatif_document

    doc = whatif_document(results)
    if doc is None:
        return False
    if kind != "roofline":
        raise OptionError(f"{results}: a whatif study is drawn by 'plot roofline' (not "
                          f"'plot {kind}')")
    if measured:
        raise OptionError(f"{results}: a whatif study is drawn without --measured (its "
                          "judged layer times are drawn by 'plot roofline --measured' "
                          "alone)")
    echo_written(plot_whatif_layers(results, out, size=size_of(size), dpi=dpi, doc=doc,
                                    spec=spec))
    return True


def _results_command(kind: str, summary: str) -> Any:
    whatif = (", or the JSON of 'sparsroof whatif' (each layer's dense GEMM and sparse "
              "kernel)" if kind == "roofline" else "")

    @click.command(kind, help=f"{summary}\n\nRESULTS is the output of "
                   "'sparsroof analyze' with --output json or csv, or an export of "
                   f"'sparsroof batch --export' (.csv, .json, .parquet){whatif}; results "
                   "of several specs draw those of --hw. --measured draws measured runs "
                   "beside their bound (the output of 'sparsroof compare -O json', or any "
                   "file 'sparsroof compare' reads), with a line from bound to run.")
    @click.argument("results", metavar="[RESULTS]", required=False)
    @click.option("--measured", default=None, callback=named_file, metavar="RUNS",
                  help="Measured runs to draw beside their bound.")
    @_OUT
    @hw_option(default=None, help="Spec of the ceilings: the one the results were bounded "
               "on (of results of several specs, the one drawn); runs alone are judged on it "
               "[default: the one the results or the runs name].")
    @SIZE_OPTION
    @DPI_OPTION
    def run(results: str | None, measured: str | None, out: str, hw: str | None,
            size: str | None, dpi: int) -> None:
        _results(kind, results, measured, out, hw, size, dpi)

    return run


command.add_command(_results_command(
    "roofline", "Log-log roofline of every result against every ceiling of the spec."))
command.add_command(_results_command(
    "time", "Time-based roofline: complexity plane beside the compute/memory time plane."))
command.add_command(_results_command(
    "complexity-time", "Complexity and time in one plane: each kernel's bytes and FLOPs "
    "(closed symbol) and its memory and compute time scaled by the roofs (open symbol)."))


@command.command("reuse")
@click.argument("results", metavar="RESULTS")
@click.option("--measured", default=None, callback=named_file, metavar="RUNS",
              help="Measured runs to draw on the lines (as for 'plot roofline').")
@click.option("--at", "at", type=click.Choice(["class", *MODELS]), default="class",
              show_default=True, metavar="MODEL",
              help=f"The model whose line each run is drawn on: class (each matrix's class "
              f"model), {', '.join(MODELS)}.")
@click.option("--storage", default=None, metavar="NAME",
              help="Storage format drawn [default: the first of the results].")
@_OUT
@hw_option(default=None, help="Hardware spec [default: the one the results name].")
@SIZE_OPTION
@DPI_OPTION
def reuse(results: str, measured: str | None, at: str, storage: str | None, out: str,
          hw: str | None, size: str | None, dpi: int) -> None:
    """Sparsity-aware roofline: one vertical line per B-reuse model at its intensity.

    One panel per matrix shows the bandwidth-bound region of the roofline; each model's
    arithmetic intensity is a vertical line per width d that ends at the model's bound,
    and measured runs stand on one model's line at the FLOP/s they reached, one marker
    per implementation (the 'implementation' column of a runs CSV, the backend of
    'sparsroof bench'). RESULTS is what 'plot roofline' reads; analyze with --model all
    for every model, and with --no-cache-roof for main memory's roof only.

    \b
    Examples:
      sparsroof analyze data/*.mtx --kernel spmm --d 1,4,16,64 \\
          --model all -O json > models.json
      sparsroof plot reuse models.json -o reuse.png
      sparsroof analyze data/lap2d_64.mtx --model all -O json > spmv.json
      sparsroof plot reuse spmv.json --measured measured.csv \\
          --at compulsory -o reuse.png
    """
    from ..plot.reuse import reuse_figure, reuse_storage

    figure_format(out)
    chosen = load_spec(hw) if hw else None
    points, spec_name = read_results(results, chosen.name if chosen else None)
    spec = chosen or _spec(results, spec_name)
    storage = reuse_storage(points, storage)
    runs = read_measured(measured, hw=spec.name) if measured else []
    other = [m for m in runs if m.bound.storage != storage]
    if other:
        formats = ", ".join(sorted({m.bound.storage for m in other}))
        click.echo(f"sparsroof: {len(other)} of {len(runs)} measured runs are left out: "
                   f"their format ({formats}) is not {storage}, the one drawn (choose it "
                   "with --storage)", err=True)
    fig = reuse_figure(points, spec, measured=runs, at=at, storage=storage,
                       size=size_of(size), dpi=dpi)
    echo_written(save(fig, out))


@command.command("sparsity-roofline")
@click.argument("points", metavar="POINTS.csv|POINTS.json")
@_OUT
@click.option("--title", default=None, help="Figure title.")
@click.option("--accuracy-label", default="accuracy", show_default=True,
              help="Label of the accuracy axis, e.g. 'top-1 accuracy (%)'.")
@SIZE_OPTION
@DPI_OPTION
def sparsity_roofline(points: str, out: str, title: str | None, accuracy_label: str,
                      size: str | None, dpi: int) -> None:
    """Accuracy vs speedup at speed of light, one line per sparsity pattern.

    POINTS has the columns pattern, sparsity (a fraction), speedup and accuracy, as
    'sparsroof whatif --accuracy ACC.csv --points FILE' writes them; rows without an
    accuracy are left out.
    """
    from ..plot.sparsity import read_sparsity_file

    found, skipped = read_sparsity_file(points)
    if skipped:
        click.echo(f"sparsroof: {skipped} point(s) have no accuracy and are left out",
                   err=True)
    fig = sparsity_roofline_figure(found, title=title,
                                   accuracy_label=accuracy_label,
                                   size=size_of(size) or (7.0, 5.0), dpi=dpi)
    echo_written(save(fig, out))


@command.command("accuracy")
@click.argument("points", nargs=-1, required=True, metavar="POINTS.csv|POINTS.json...")
@_OUT
@click.option("--title", default=None, help="Figure title.")
@click.option("--accuracy-label", default="accuracy", show_default=True,
              help="Label of the accuracy axes, e.g. 'top-1 accuracy (%)'.")
@SIZE_OPTION
@DPI_OPTION
def accuracy(points: tuple[str, ...], out: str, title: str | None, accuracy_label: str,
             size: str | None, dpi: int) -> None:
    """Accuracy against sparsity and against FLOPs, one line per model and pattern.

    Each POINTS file is written by 'sparsroof whatif --accuracy ACC.csv --points FILE'
    (give one per network); rows without an accuracy are left out.
    """
    from ..plot.accuracy import accuracy_figure, read_accuracy_points

    found, skipped = [], 0
    for path in points:
        mine, none = read_accuracy_points(path)
        found += mine
        skipped += none
    if not found:
        raise FigureError(f"{', '.join(points)}: no point has an accuracy ('sparsroof whatif "
                          "--accuracy ACC.csv --points FILE' writes them)")
    if skipped:
        click.echo(f"sparsroof: {skipped} point(s) have no accuracy and are left out",
                   err=True)
    fig = accuracy_figure(found, title=title, accuracy_label=accuracy_label,
                          size=size_of(size) or (7.0, 6.0), dpi=dpi)
    echo_written(save(fig, out))


@command.command("ridgeline")
@click.argument("results", metavar="RESULTS.json")
@_OUT
@SIZE_OPTION
@DPI_OPTION
def ridgeline(results: str, out: str, size: str | None, dpi: int) -> None:
    """Ridgeline (memory vs arithmetic intensity) of saved distributed results.

    RESULTS is the output of 'sparsroof analyze --ranks ... --output json'; the first
    matrix with distributed results is drawn, one marker per rank count P.
    """
    echo_written(plot_ridgeline_results(results, out, size=size_of(size), dpi=dpi))
