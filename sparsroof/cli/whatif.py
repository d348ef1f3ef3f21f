"""``sparsroof whatif``: whole-model Sparsity Roofline of pruning patterns on a device."""

from __future__ import annotations

import inspect
from pathlib import Path

import click

from ..errors import OptionError
from ..hardware.library import load_spec
from ..hardware.spec import UNITS, HwSpec
from ..model.traffic import VALUE_BYTES
from ..report.mlp import mlp_json, mlp_table
from ..report.whatif import to_csv, to_json, to_layer_table, to_table
from ..userfile import write_text_whole
from ..whatif.manifest import Manifest, bundled_models, load_manifest
from ..whatif.mlp import mlp_study, parse_mlp
from ..whatif.patterns import Pattern, parse_patterns, parse_sparsity
from ..whatif.placement import Options
from ..whatif.study import DEFAULT_SPARSITIES, ModelResult, read_accuracy, study
from .common import (
    HW_OPTION,
    OUTPUT_OPTION,
    emit,
    named_file,
    table_console,
    timing_options,
)
from .figures import check_figure
from .guard import check_writable

__all__ = ["command"]


def _levels(values: tuple[str, ...]) -> tuple[float, ...]:
    from ..errors import empty_item

    blank = next((v for v in values if any(not p.strip() for p in v.split(","))), None)
    if blank is not None:
        raise empty_item(blank, "--sparsity: ")
    parts = [p for v in values for p in v.split(",")]
    try:
        return tuple(dict.fromkeys(parse_sparsity(p) for p in parts)) or DEFAULT_SPARSITIES
    except OptionError as err:  # the parser also reads files: the option is named here
        raise OptionError(f"--sparsity: {err}") from None


def _patterns(values: tuple[str, ...]) -> tuple[Pattern, ...]:
    try:
        return parse_patterns(values or ("unstructured,block4,2:4",))
    except OptionError as err:
        raise OptionError(f"--pattern: {err}") from None


@click.command("whatif")
@click.argument("model", metavar="MODEL|MANIFEST.yaml", required=False)
@HW_OPTION
@click.option("--pattern", "patterns", multiple=True, metavar="P[,P...]",
              help="Sparsity patterns: unstructured, blockB (B in 2..32), N:M (e.g. 2:4, "
                   "1:4, 2:16). [default: unstructured,block4,2:4]")
@click.option("--sparsity", "sparsities", multiple=True, metavar="S[,S...]",
              help="Sparsity levels in percent for unstructured and block patterns (N:M "
                   "patterns fix their own, 1 - N/M). [default: 50,75,87.5,93.75,96.875]")
@click.option("--dtype", type=click.Choice(list(VALUE_BYTES)), default="fp16",
              show_default=True, help="Precision of weights and features.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Batch size: the dense width n of every layer scales with it.")
@click.option("--unit", type=click.Choice(UNITS), default=None,
              help="Run every pruned layer on this unit, multiplying only stored entries. "
                   "[default: SIMT for unstructured, tensor for blocks, sparse tensor for "
                   "2:4]")
@click.option("--nm-native", is_flag=True,
              help="Hypothetical hardware: any N:M pattern runs natively at the "
                   "throughput of the 2:4 sparse tensor cores.")
@click.option("--im2col", is_flag=True,
              help="Charge convolution inputs as the k x n im2col matrix (eq. 1 of the "
                   "paper) instead of the feature map read once.")
@click.option("--cache-roof/--no-cache-roof", default=False, show_default=True,
              help="Use a cache level's bandwidth when a layer's working set fits in it "
                   "(the paper and the default use main memory; analyze's default is "
                   "the caches).")
@click.option("--launches", type=click.IntRange(min=0), default=1, show_default=True,
              help="Kernel launches per layer charged at the spec's launch floor, as "
                   "analyze charges them; 0 is the Sparsity Roofline's launch-free model.")
@timing_options
@click.option("--accuracy", "accuracy_file", default=None, callback=named_file, metavar="ACC.csv",
              help="CSV with columns pattern, sparsity, accuracy, joined to the results.")
@click.option("--points", "points_file", default=None, metavar="FILE.csv|FILE.json",
              callback=named_file,
              help="Also write the Sparsity Roofline points (pattern, sparsity, speedup, "
                   "accuracy) to this file.")
@click.option("--plot", "plot_file", default=None, metavar="FIG.png|svg|pdf",
              help="Draw the Sparsity Roofline (accuracy vs speedup) of the points that "
                   "have an accuracy; needs --accuracy.")
@click.option("--mlp", "mlp", default=None, metavar="IN,OUT,BATCH",
              help="Instead of a model: one dense MLP layer trained data-parallel, its "
                   "global batch split over --ranks, weights all-reduced (the Ridgeline "
                   "case study). --plot draws its ridgeline.")
@click.option("--ranks", "ranks", multiple=True, metavar="P[,P...]",
              help="Rank counts of --mlp, e.g. --ranks 1,2,4,8.")
@click.option("--measured", "measured_file", default=None, callback=named_file, metavar="TIMES.csv",
              help="Judge measured layer times (columns layer, pattern, sparsity, time_s; "
                   "pattern 'dense' for the dense GEMM) against each layer's SoL, per layer "
                   "and per model; exit 1 if a layer ran faster than its SoL. Not with "
                   "--plot: write -O json and draw it with 'plot roofline --measured FILE "
                   "-o FIG'.")
@click.option("--layers", "show_layers", is_flag=True,
              help="Table output: add a per-layer table for every pattern and level.")
@OUTPUT_OPTION
def command(model: str | None, hw: str, patterns: tuple[str, ...], sparsities: tuple[str, ...],
            dtype: str, batch: int, unit: str | None, nm_native: bool, im2col: bool,
            cache_roof: bool, accuracy_file: str | None, points_file: str | None,
            plot_file: str | None, mlp: str | None, ranks: tuple[str, ...],
            measured_file: str | None, show_layers: bool, output: str, launches: int = 1,
            timing: str = "graph", calls_per_sync: int = 1) -> int:
    """Speed-of-light latency and speedup of a whole pruned model, per pattern and level.

    MODEL is a bundled manifest (resnet50, convnext_tiny, swin_tiny, deit_small) or a
    manifest YAML file. Every layer's dense GEMM and pruned kernel get the same roofline
    bound; the model's SoL is the sum over its layers and the speedup is the dense sum
    over the sparse sum.

    \b
    Examples:
      sparsroof whatif swin_tiny --hw a100 \\
          --pattern unstructured,block2,block4,block16
      sparsroof whatif swin_tiny --hw a100 --pattern 2:16 \\
          --launches 0   # launch-free
      sparsroof whatif convnext_tiny --pattern 2:4,1:4,2:8,2:16 --nm-native
      sparsroof whatif resnet50 --batch 32 -O csv > resnet50.csv
      sparsroof whatif swin_tiny --accuracy acc.csv --plot swin.png
      sparsroof whatif deit_small --measured layer-times.csv
      sparsroof whatif --mlp 4096,4096,16384 --ranks 2,4,8,16,32,64 \\
          --hw clx-ridgeline --dtype fp32 --plot mlp-ridge.png
    """
    if mlp:
        _refuse_given(_NETWORK_ONLY, "--mlp studies one dense MLP layer")
        return _mlp(model, mlp, ranks, hw, dtype, plot_file, output)
    model = _check_study(model, ranks, measured_file, plot_file, points_file, accuracy_file)
    spec = load_spec(hw)
    manifest = load_manifest(model)
    options = Options(dtype=dtype, batch=batch, unit=unit, nm_native=nm_native,
                      im2col=im2col, cache_roof=cache_roof, launches=launches, timing=timing,
                      calls_per_sync=calls_per_sync)
    if measured_file:
        return _measured(manifest, spec, options, measured_file, output)
    accuracy = read_accuracy(accuracy_file) if accuracy_file else None
    results = study(manifest, spec, _patterns(patterns), _levels(sparsities), options,
                    accuracy)
    if points_file:
        text = (to_json(results, options, layers=False) if points_file.lower().endswith(".json")
                else to_csv(results))
        write_text_whole(points_file, text, lambda p: OptionError(f"{points_file}: {p}"))
    if plot_file:
        _plot(results, plot_file, f"{manifest.name} on {spec.name}, {dtype}, batch {batch}")
    if output == "json":
        emit(to_json(results, options))
    elif output == "csv":
        emit(to_csv(results))
    else:
        console = table_console()
        console.print(to_table(results, f"{manifest.name} on {spec.name} ({spec.device}), "
                               f"{dtype}, batch {batch}"))
        for r in results if show_layers else ():
            console.print(to_layer_table(r))
    return 0


def _check_study(model: str | None, ranks: tuple[str, ...], measured_file: str | None,
                 plot_file: str | None, points_file: str | None,
                 accuracy_file: str | None) -> str:
    """The model of a pruned network's study, once its options agree (else a usage
    error): --measured first, since --plot without --accuracy is then beside the point."""
    if ranks:
        raise OptionError("--ranks splits the batch of --mlp: give it with --mlp IN,OUT,BATCH")
    if model is None:
        raise OptionError("give a MODEL (or a manifest), or --mlp IN,OUT,BATCH")
    if measured_file and (plot_file or points_file or accuracy_file):
        raise OptionError("--measured judges layer times: give it without --plot, "
                          "--points or --accuracy")
    if plot_file and not accuracy_file:
        raise OptionError("--plot draws accuracy against speedup: give --accuracy ACC.csv")
    if points_file and Path(points_file).suffix.lower() not in (".csv", ".json"):
        raise OptionError(f"--points {points_file}: use a .csv or .json file")
    if points_file:
        check_writable(points_file)
    check_figure(plot_file)  # before the study, not after it
    return model


#: the options of a pruned network's study, which the one dense layer of --mlp does not take
_NETWORK_ONLY = ("patterns", "sparsities", "batch", "unit", "nm_native", "im2col",
                 "cache_roof", "accuracy_file", "points_file", "measured_file", "show_layers",
                 "launches", "timing", "calls_per_sync")


def _refuse_given(names: tuple[str, ...], why: str) -> None:
    """A usage error naming the first of the options ``names`` given on the command line."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name in names and ctx.get_parameter_source(param.name) not in (
                ParameterSource.DEFAULT, None):
            off = getattr(param, "secondary_opts", None) and ctx.params.get(param.name) is False
            typed = param.secondary_opts[0] if off else param.opts[0]
            raise OptionError(f"{why}: give it without {typed}")


def _measured(manifest: Manifest, spec: HwSpec, options: Options, path: str,
              output: str) -> int:
    """Measured layer times against their SoL (section 3.4), judged as compare judges."""
    from ..report.layertimes import judged_layers, layer_errors, layer_times_json, models_table
    from ..whatif.layertimes import measured_layers, model_totals, read_layer_times
    from .compare import echo_judged

    times, bad = read_layer_times(path)
    found, unknown = measured_layers(times, manifest, spec, options)
    errors = layer_errors([*bad, *unknown])
    judged = judged_layers(found, spec.name)
    totals = model_totals(found)
    return echo_judged(
        judged, errors, output,
        title=f"{path}: measured layers of {manifest.name} against their speed of light",
        document=lambda summary: layer_times_json(judged, summary, errors, totals),
        tables=lambda: [models_table(totals, f"{manifest.name} on {spec.name}: per model")])


def _mlp(model: str | None, mlp: str, ranks: tuple[str, ...], hw: str, dtype: str,
         plot_file: str | None, output: str) -> int:
    """The data-parallel MLP layer of the Ridgeline case study, per rank count."""
    if model:
        raise OptionError("--mlp studies one MLP layer: give it without a MODEL")
    check_figure(plot_file)
    layer = parse_mlp(mlp)
    spec = load_spec(hw)
    unit, precision, rows = mlp_study(layer, spec, ranks, dtype)
    if output == "json":
        emit(mlp_json(layer, spec.name, unit, precision, dtype, rows))
    elif output == "csv":
        raise OptionError("--mlp writes a table or JSON (-O json)")
    else:
        table_console().print(mlp_table(layer, spec.name, dtype, rows, unit, precision))
    if plot_file:
        from ..plot.mlp import mlp_ridgeline, mlp_title

        title = mlp_title({"inputs": layer.inputs, "outputs": layer.outputs,
                           "batch": layer.batch}, spec.name)
        click.echo(f"sparsroof: wrote {mlp_ridgeline(rows, title, plot_file)}", err=True)
    return 0


def _plot(results: list[ModelResult], path: str, title: str) -> None:
    from ..plot import SparsityPoint, figure_format, save, sparsity_roofline_figure

    figure_format(path)  # a bad suffix fails before any drawing
    known = [SparsityPoint(r.pattern, r.sparsity, r.speedup, r.accuracy, r.model)
             for r in results
             if r.accuracy is not None]
    if not known:
        raise OptionError("--plot: the accuracy file matches none of the patterns and levels")
    if len(known) < len(results):
        click.echo(f"sparsroof: {len(results) - len(known)} of {len(results)} points have no "
                   "accuracy and are left out of the figure", err=True)
    fig = sparsity_roofline_figure(known, title=title)
    click.echo(f"sparsroof: wrote {save(fig, path)}", err=True)


command.help = (inspect.cleandoc(command.help or "")
                + f"\n\nBundled models: {', '.join(bundled_models())}.")
