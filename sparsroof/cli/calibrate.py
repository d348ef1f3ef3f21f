"""``sparsroof calibrate``: fit this host's kernel times per storage format."""

from __future__ import annotations

from typing import Any

import click

from ..errors import OptionError
from ..hardware.library import load_spec
from ..host.calibration import calibrate, save
from .common import check_writable

#: passes whose fastest runs differ by more than this are reported as disturbed
NOISY = 0.2


@click.command("calibrate")
@click.option("--hw", required=True, metavar="NAME|PATH",
              help="Spec of this host (e.g. from 'sparsroof hw probe -o myhost.yaml').")
@click.option("-o", "--output-file", required=True, metavar="FILE",
              help="Where to write the calibration JSON.")
@click.option("--dtype", type=click.Choice(["fp64", "fp32"]), default="fp64",
              show_default=True, help="Value type of the benchmark matrices.")
@click.option("--rounds", type=click.IntRange(1, 10), default=2, show_default=True,
              help="Timing passes over the whole sweep; each run keeps its fastest pass.")
def command(hw: str, output_file: str, dtype: str, rounds: int) -> int:
    """Measure this host's memory roofs, time every format's SpMV on a sweep of generated
    matrices (rows x entries per row x pattern), fit the time per format and save it.
    Takes two to three minutes on two cores; progress goes to stderr.

    \b
    Example:
      sparsroof hw probe -o myhost.yaml
      sparsroof calibrate --hw myhost.yaml -o calibration.json
      sparsroof formats a.mtx --hw myhost.yaml --calibration calibration.json
    """
    from rich.console import Console
    from rich.progress import Progress

    from ..host.memory_roofs import measure_roofs, roof_rates, with_roofs

    spec = load_spec(hw)
    if spec.kind != "cpu":
        raise OptionError(f"{spec.name} is a {spec.kind} spec; calibrate times this host's "
                          "CPU kernels: give it this host's spec (sparsroof hw probe -o "
                          "myhost.yaml)")
    check_writable(output_file)
    console = Console(stderr=True)
    with Progress(console=console, transient=False, disable=not console.is_terminal) as bar:
        task = bar.add_task("memory roofs", total=None)

        def say(msg: str) -> None:
            bar.update(task, description=msg)
            if not console.is_terminal:
                click.echo(f"calibrate: {msg}", err=True)

        rates = roof_rates(measure_roofs(spec, say))
        spec = with_roofs(spec, rates, "measured by sparsroof calibrate")

        def step(i: int, n: int, name: str) -> None:
            bar.update(task, total=n, completed=i, description=name)
            if not console.is_terminal:
                click.echo(f"calibrate: [{i}/{n}] {name}", err=True)

        cal, samples = calibrate(spec, rates, dtype=dtype, rounds=rounds, progress=step,
                                 min_time=0.02)
    try:
        save(cal, samples, output_file)
    except OSError as err:
        raise OptionError(f"{output_file}: cannot write: {err.strerror or err}") from None
    click.echo(f"calibrate: the branch predictor learns about {cal.branch_memory:,.0f} "
               "mispredicted row exits of a repeated product", err=True)
    click.echo(f"calibrate: a working set is served by a cache while it fills at most "
               f"{100 * cal.fill:.0f} % of it; runs held out of the fit are predicted with a "
               f"mean error of {100 * (cal.held_out_error or 0):.1f} %", err=True)
    for name, fit in sorted(cal.fits.items()):
        held = (f", {100 * fit.held_out_median:.1f} % held out of the fit"
                if fit.held_out_median is not None else "")
        click.echo(f"calibrate: {name}: {fit.samples} runs, median error "
                   f"{100 * fit.median_error:.1f} %{held}, worst {100 * fit.max_error:.1f} %",
                   err=True)
    noisy = sum(s.spread > NOISY for s in samples)
    if noisy and rounds > 1:
        click.echo(f"calibrate: {noisy} of {len(samples)} runs differed by more than "
                   f"{100 * NOISY:.0f} % between passes: other work disturbed this host; "
                   f"calibrate again when it is quiet, or with more --rounds", err=True)
    click.echo(f"calibrate: wrote {output_file}", err=True)
    return 0


def load_calibrated(spec: Any, calibration_file: str | None) -> tuple[Any, Any]:
    """``spec`` with the cache roofs measured by the calibration in ``calibration_file``,
    and the calibration (``spec`` unchanged and None without a file)."""
    if not calibration_file:
        return spec, None
    from ..host.calibration import load as load_calibration
    from ..host.memory_roofs import with_roofs

    cal = load_calibration(calibration_file)
    return with_roofs(spec, cal.roofs, f"measured by sparsroof calibrate ({calibration_file})"), cal


def prediction(cal: Any, calibration_file: str, matrix: Any, a: Any) -> dict:
    """Calibrated SpMV seconds of ``matrix`` in each calibrated format analysed in ``a``."""
    storages = dict.fromkeys(r.traffic.storage for r in a.results)
    return {"matrix": a.matrix.name, "calibration": calibration_file,
            "predicted_s": cal.predict_matrix(matrix, a.structure, storages)}


def render_predictions(preds: list[dict], output: str, json_text: str | None = None) -> str:
    """The calibrated predictions as a table, or merged into analyze's JSON document."""
    import json

    from ..units import si

    if json_text is not None:
        doc = json.loads(json_text)
        doc["calibrated"] = preds
        return json.dumps(doc, indent=2)
    lines = ["calibrated SpMV time on this host (sparsroof calibrate):"]
    for p in preds:
        cells = ", ".join(f"{f} {si(t, 's')}" for f, t in p["predicted_s"].items())
        lines.append(f"  {p['matrix']}: {cells or 'no calibrated format among those analysed'}")
    return "\n".join(lines)
