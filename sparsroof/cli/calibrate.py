"""``sparsroof calibrate``: fit this host's kernel times per storage format."""

from __future__ import annotations

import time

import click

from ..errors import OptionError
from ..hardware.library import load_spec
from ..host.calibration import calibrate, save
from ..report.calibration import calibration_summary
from .common import EarlierNames, hw_option
from .guard import check_writable, echo_message


@click.command("calibrate")
@hw_option(required=True,
           help="Spec of this host (e.g. from 'sparsroof hw probe -o myhost.yaml').")
@click.option("-o", "--out", "--output-file", "output_file", cls=EarlierNames,
              earlier=("--output-file",), required=True, metavar="FILE",
              help="Where to write the calibration JSON.")
@click.option("--dtype", type=click.Choice(["fp64", "fp32"]), default="fp64",
              show_default=True, help="Value type of the benchmark matrices.")
@click.option("--rounds", type=click.IntRange(1, 10), default=3, show_default=True,
              help="Timing passes over the whole sweep; each run keeps its fastest pass.")
def command(hw: str, output_file: str, dtype: str, rounds: int) -> int:
    """Measure this host's memory roofs, time every format's SpMV on a sweep of generated
    matrices (rows x entries per row x pattern), fit the time per format and save it.
    Takes one to two minutes on two cores, longer on a busy host; the steps done and the
    time left go to stderr.

    \b
    Example:
      sparsroof hw probe -o myhost.yaml
      sparsroof calibrate --hw myhost.yaml -o calibration.json
      sparsroof formats data/lap2d_64.mtx --hw myhost.yaml \\
          --calibration calibration.json
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..host.memory_roofs import measure_roofs, roof_rates, with_roofs
    from ..report.progress import time_left

    spec = load_spec(hw)
    if spec.kind != "cpu":
        raise OptionError(f"{spec.name} is a {spec.kind} spec; calibrate times this host's "
                          "CPU kernels: give it this host's spec (sparsroof hw probe -o "
                          "myhost.yaml)")
    check_writable(output_file)
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[left]}"))
    with Progress(*columns, console=console, transient=False,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task("memory roofs", total=None, left="")

        def say(msg: str) -> None:
            bar.update(task, description=msg)
            if not console.is_terminal:
                click.echo(f"calibrate: {msg}", err=True)

        rates = roof_rates(measure_roofs(spec, say))
        spec = with_roofs(spec, rates, "measured by sparsroof calibrate")
        first: list[float] = []  # when the first step ended: it pays the start-up (the
        # kernels' compilation), so the pace is that of the steps after it

        def step(i: int, n: int, name: str) -> None:
            now = time.perf_counter()
            if i <= 1 or not first:
                first[:] = [now]
            left = time_left(now - first[0], i - 1, n - 1)
            bar.update(task, total=n, completed=i, description=name, left=left)
            if not console.is_terminal:
                click.echo(f"calibrate: [{i}/{n}] {name}, {left}", err=True)

        cal, samples = calibrate(spec, rates, dtype=dtype, rounds=rounds, progress=step,
                                 separate=True)
    try:
        save(cal, samples, output_file)
    except OSError as err:
        raise OptionError(f"{output_file}: cannot write: {err.strerror or err}") from None
    for line in calibration_summary(cal, samples, rounds):  # wrapped at spaces on a terminal
        echo_message(f"calibrate: {line}")
    click.echo(f"sparsroof: wrote {output_file}", err=True)
    return 0
