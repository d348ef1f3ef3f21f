"""``sparsroof hw``: list, show, validate and probe hardware specs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import OptionError
from ..hardware.library import bundled_names, load_spec, validate_file
from ..report.hardware import list_csv, list_json, list_table, show_json, show_table
from ..userfile import write_text_whole
from .common import OUTPUT_OPTION, WIDE_OPTION, EarlierNames, emit, table_console
from .guard import check_writable, echo_message

__all__ = ["command"]


@click.group("hw")
def command() -> None:
    """Hardware specs: list the bundled ones, show one, validate your own, probe this host.

    \b
    Examples:
      sparsroof hw list
      sparsroof hw show a100
      sparsroof hw probe -o myhost.yaml
      sparsroof hw validate myhost.yaml
      sparsroof hw probe --device cuda -o gpu.yaml
    """


@command.command("list")
@click.argument("specs", nargs=-1, metavar="[NAME|PATH]...")
@OUTPUT_OPTION
@WIDE_OPTION
def list_(specs: tuple[str, ...], output: str, wide: bool) -> int:
    """Summary of the bundled specs (or of the SPECS given): DRAM bandwidth, the peak of
    each compute unit at its default precision, and the ridge point in FLOP/byte.

    Default precisions: fp64 for SIMT/vector units, as analyze's --dtype (fp32 where there
    is no fp64 figure), fp16 for tensor/matrix units (then bf16, tf32).

    \b
    Examples:
      sparsroof hw list
      sparsroof hw list a100 v100-sxm2 --wide
      sparsroof hw list -O json
    """
    loaded = [load_spec(s) for s in (specs or bundled_names())]
    if output == "json":
        emit(list_json(loaded))
    elif output == "csv":
        emit(list_csv(loaded))
    else:
        table_console(wide).print(list_table(loaded, wide))
    return 0


@command.command("show")
@click.argument("spec", metavar="NAME|PATH")
@click.option("--output", "-O", "output", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Result format on stdout.")
def show(spec: str, output: str) -> int:
    """Every figure of one spec with its unit as written, its SI value and its source."""
    loaded = load_spec(spec)
    if output == "json":
        emit(show_json(loaded))
    else:
        table_console().print(show_table(loaded))
    return 0


@command.command("validate")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
def validate(paths: tuple[str, ...]) -> int:
    """Check spec files: one 'OK' line per good file, one line per problem otherwise.

    Every problem in a file is listed, not only the first: a missing or unknown key, a
    unit that does not fit, capacities that fall or bandwidths that rise down the memory
    hierarchy. Warnings (stderr) name what a valid spec lacks for a bound that holds: a
    GPU without a launch floor, a launch overhead that is not a minimum, a cache level
    without a bandwidth, a name a bundled spec goes by. Exit code 1 if any file has a
    problem (warnings alone: 0).
    """
    from ..hardware.completeness import spec_warnings
    from ..hardware.library import bundled_meaning

    bad = 0
    for path in paths:
        problems = validate_file(path)
        if problems:
            bad += 1
            emit("\n".join(str(p) for p in problems))
        else:
            spec = load_spec(path)
            emit(f"{path}: OK ({spec.name}: {spec.device})")
            shadowed = bundled_meaning(spec.name, path)
            lines = spec_warnings(spec) + ([
                f"{spec.name}: name: the bundled spec {shadowed} goes by this name: the "
                "results of this file would read as that device's; give it a name of its "
                "own"] if shadowed else [])
            for line in lines:
                echo_message(f"sparsroof: warning: {path}: {line}")
    if bad:
        click.echo(f"sparsroof: {bad} of {len(paths)} spec file(s) have problems", err=True)
    return 1 if bad else 0


@command.command("probe")
@click.option("-o", "--out", "--output-file", "output_file", cls=EarlierNames,
              earlier=("--output-file",), type=click.Path(dir_okay=False),
              help="Write the spec here (default: stdout).")
@click.option("--name", help="Spec name. [default: the output file's stem, else 'this-host']")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True,
              help="What to measure: this host's CPU and memory, or the first CUDA GPU "
                   "(needs pip install \"sparsroof[gpu]\").")
@click.option("--quick", is_flag=True, help="Fewer repetitions and small matrices (seconds; "
              "for tests, less accurate compute figures; CPU only).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def probe(output_file: str | None, name: str | None, quick: bool, force: bool,
          device: str = "cpu") -> int:
    """Measure this machine and write a spec for it, every figure marked as measured.

    CPU: a STREAM-style triad over arrays four times the last-level cache, and each
    cache level's fastest triad or read on half its capacity; compute: the derived peak
    (or a faster measured matrix multiply). Takes 10-30 s (a few seconds with --quick).

    GPU (--device cuda): device-memory copy and triad over arrays at least four times the
    L2, L2 reads over a sweep of working sets (its flat part and the capacity it holds
    to), the launch floors of an empty kernel through a graph, back to back on a stream
    and with a host synchronisation per launch, FMA rates beside the derived peak, SMs
    and clocks. Every figure is measured twice; rounds that differ by more than 10 % are
    flagged in the spec and on stderr. Takes about 10-30 s. Progress goes to stderr.

    \b
    Examples:
      sparsroof hw probe -o myhost.yaml
      sparsroof hw probe --device cuda -o gpu.yaml
    """
    target = Path(output_file) if output_file else None
    if target is not None and target.exists() and not force:
        raise OptionError(f"{target}: exists; pass --force to overwrite it")
    if target is not None:
        check_writable(str(target))
    spec_name = name or (target.stem if target else "this-host")
    say = lambda m: click.echo(f"probe: {m}", err=True)  # noqa: E731
    if device == "cuda":
        text = _probe_gpu(spec_name, say)
    else:
        from ..host.probe import probe as run_probe
        from ..host.probe import spec_yaml

        result = run_probe(quick=quick, progress=say)
        for line in result.noisy:
            click.echo(f"sparsroof: warning: noisy probe: {line}: other work disturbed the "
                       "host; probe again on a quiet host", err=True)
        text = spec_yaml(result, spec_name)
    if target is None:
        emit(text)
    else:
        write_text_whole(target, text, lambda p: OptionError(f"{target}: {p}"))
        click.echo(f"sparsroof: wrote {target}", err=True)
    return 0


def _probe_gpu(name: str, say: Any) -> str:
    from ..host.gpu.cuda import open_device
    from ..host.gpu.probe import probe_gpu
    from ..host.gpu.spec_yaml import gpu_spec_yaml

    result = probe_gpu(open_device(), progress=say)
    for figure in result.flagged():
        click.echo(f"sparsroof: warning: {figure}: the two rounds differ by more than 10 %; "
                   "the GPU was busy or changed its clocks (probe again when it is idle)",
                   err=True)
    return gpu_spec_yaml(result, name)
