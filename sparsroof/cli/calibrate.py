"""``sparsroof calibrate``: fit this host's kernel times per storage format."""

from __future__ import annotations

import click

from ..calibrate import calibrate, save
from ..hwspec import load_spec


@click.command("calibrate")
@click.option("--hw", required=True, metavar="NAME|PATH",
              help="Spec of this host (e.g. from 'sparsroof hw probe -o myhost.yaml').")
@click.option("-o", "--output-file", required=True, metavar="FILE",
              help="Where to write the calibration JSON.")
@click.option("--dtype", type=click.Choice(["fp64", "fp32"]), default="fp64",
              show_default=True, help="Value type of the benchmark matrices.")
def command(hw: str, output_file: str, dtype: str) -> int:
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

    from ..roofs import measure_roofs, roof_rates, with_roofs

    spec = load_spec(hw)
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

        cal, samples = calibrate(spec, rates, dtype=dtype, progress=step)
    save(cal, samples, output_file)
    for name, fit in sorted(cal.fits.items()):
        click.echo(f"calibrate: {name}: {fit.samples} runs, median error "
                   f"{100 * fit.median_error:.1f} %, worst {100 * fit.max_error:.1f} %", err=True)
    click.echo(f"calibrate: wrote {output_file}", err=True)
    return 0


def predictions(analyses: list, calibration_file: str) -> list[dict]:
    """Calibrated SpMV seconds per matrix and calibrated format of each analysis."""
    from ..calibrate import load as load_calibration

    cal = load_calibration(calibration_file)
    out = []
    for a in analyses:
        storages = dict.fromkeys(r.traffic.storage for r in a.results)
        out.append({"matrix": a.matrix.name, "calibration": calibration_file,
                    "predicted_s": {f: cal.predict_structure(a.structure, f)
                                    for f in storages if f in cal.fits}})
    return out


def render_predictions(preds: list[dict], output: str, json_text: str | None = None) -> str:
    """The calibrated predictions as a table, or merged into analyze's JSON document."""
    import json

    from ..report import si

    if json_text is not None:
        doc = json.loads(json_text)
        doc["calibrated"] = preds
        return json.dumps(doc, indent=2)
    lines = ["calibrated SpMV time on this host (sparsroof calibrate):"]
    for p in preds:
        cells = ", ".join(f"{f} {si(t, 's')}" for f, t in p["predicted_s"].items())
        lines.append(f"  {p['matrix']}: {cells or 'no calibrated format among those analysed'}")
    return "\n".join(lines)
