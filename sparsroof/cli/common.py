"""Options and error handling shared by every command."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import click

from ..errors import OptionError, empty_item
from ..hardware.spec import UNITS
from ..model.timing import DEFAULT_TIMING, TIMING_HELP, TIMINGS
from ..model.traffic import INDEX_BYTES, KERNELS, MODELS, STORAGES, VALUE_BYTES
from ..report.analysis import OUTPUTS
from ..structure.reorder import ORDERINGS
from .guard import echo_error, run_guarded

__all__ = [
    "EarlierNames",
    "named_file",
    "timing_options",
    "hw_option",
    "spec_names",
    "HW_OPTION",
    "KERNEL_OPTION",
    "WIDTH_OPTION",
    "DTYPE_OPTION",
    "INDEX_OPTION",
    "OUTPUT_OPTION",
    "REORDER_OPTION",
    "STORAGE_OPTION",
    "MODEL_OPTION",
    "UNIT_OPTION",
    "WIDE_OPTION",
    "comma_list",
    "MAX_MEMORY_OPTION",
    "memory_limit",
    "echo_error",
    "emit",
    "run_guarded",
    "table_console",
]

def spec_names(values: tuple[str, ...] | list[str] | str | None) -> tuple[str, ...]:
    """Spec names from ``--hw`` values, repeated or comma separated, in order, each once.

    >>> spec_names(("a100,h100-sxm", "a100", " mi300x "))
    ('a100', 'h100-sxm', 'mi300x')
    >>> spec_names(("",))
    Traceback (most recent call last):
    ...
    sparsroof.errors.OptionError: --hw: '' is empty
    """
    if values is None:
        return ()
    listed = [values] if isinstance(values, str) else list(values)
    for value in listed:
        if any(not p.strip() for p in value.split(",")):
            raise empty_item(value, "--hw: ")
    return tuple(dict.fromkeys(p.strip() for v in listed for p in v.split(",")))


def named_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file option given an empty name (an unset shell variable, say) is refused, not
    taken for the option left out."""
    if value is not None and not value.strip():
        raise click.BadParameter(f"{value!r} names no file (an unset variable?)", ctx, param)
    return value


class EarlierNames(click.Option):
    """An option whose earlier long names (``earlier``) still work but are left out of its
    help: a command's file option renamed to the one name every command uses."""

    def __init__(self, *args: Any, earlier: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.earlier = earlier

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        every = self.opts
        self.opts = [o for o in every if o not in self.earlier]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = every


def hw_option(*, many: bool = False, required: bool = False, default: str | None = "a100",
              help: str = "") -> Any:
    """``--hw``, the same everywhere: a bundled name or a YAML path, repeatable and comma
    separated. A command that bounds on one spec gets one name (a usage error names the
    extra ones); one that compares specs (``many``) gets them all, in order."""
    what = help or ("Hardware spec: a bundled name (see 'sparsroof hw list') or a path to a "
                    "YAML spec" + ("; several, repeated or comma separated, are compared."
                                   if many else "."))

    def names(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
        found = spec_names(value)
        if many:
            return found
        if len(found) > 1:
            raise click.BadParameter(f"{ctx.command_path} bounds on one spec; got "
                                     f"{', '.join(found)}", ctx=ctx, param=param)
        return found[0] if found else None

    return click.option(
        "--hw", "hw", multiple=True, required=required,
        default=(default,) if default and not required else None,
        show_default=bool(default) and not required,
        metavar="NAME|PATH" + ("[,...]" if many else ""), callback=names, help=what)


HW_OPTION = hw_option()
KERNEL_OPTION = click.option(
    "--kernel", type=click.Choice(KERNELS), default="spmv", show_default=True,
    help="SpMV (y = A·x) or SpMM (C = A·B with B of width d).",
)
WIDTH_OPTION = click.option(
    "--d", "widths", multiple=True, metavar="D[,D...]",
    help="Widths of B for SpMM, e.g. --d 1,4,16,64 (one row per width). [default: 1]",
)
DTYPE_OPTION = click.option(
    "--dtype", type=click.Choice(list(VALUE_BYTES)), default="fp64", show_default=True,
    help="Precision of values (and of the compute roof).",
)
INDEX_OPTION = click.option(
    "--index", type=click.Choice(list(INDEX_BYTES)), default="int32", show_default=True,
    help="Index type of the sparse format.",
)
STORAGE_OPTION = click.option(
    "--storage", "storages", multiple=True, metavar="NAME[,NAME...]|all",
    help=f"Storage formats of A: {', '.join(STORAGES)}, or all. [default: csr]",
)
MODEL_OPTION = click.option(
    "--model", "models", multiple=True, metavar="NAME[,NAME...]|all",
    help=f"B-reuse models: auto (the class's model, cache-aware, and the compulsory/random "
         f"band), {', '.join(MODELS)}, or all; optimistic and pessimistic name the band's "
         "edges, compulsory and random. [default: auto]",
)
UNIT_OPTION = click.option(
    "--unit", type=click.Choice(UNITS), default=None,
    help="Compute unit for the roof. [default: SIMT for unstructured formats, tensor for "
         "dense/BSR, sparse tensor for 2:4]",
)
MAX_MEMORY_OPTION = click.option(
    "--max-memory", "max_memory", default=None, metavar="SIZE",
    help="Most memory one matrix may need, e.g. 32GiB; a larger declared size is refused "
         "before anything is read.  [default: what this process may use: available "
         "memory, cgroup limit, ulimit -v]",
)


def memory_limit(text: str | None, option: str = "--max-memory") -> int | None:
    """Bytes from a SIZE option (None when not given); a bad size is a usage error."""
    from ..errors import UnitError
    from ..units import parse_quantity

    if text is None:
        return None
    try:
        return int(parse_quantity(text, "capacity"))
    except UnitError as err:
        raise OptionError(f"{option}: {err}") from None


def timing_options(command: Any) -> Any:
    """--timing and --calls-per-sync: how the runs a bound is for are timed."""
    command = click.option(
        "--calls-per-sync", "calls_per_sync", type=click.IntRange(min=1), default=1,
        show_default=True,
        help="With --timing sync: calls in each timed region between two host "
             "synchronisations.")(command)
    return click.option(
        "--timing", type=click.Choice(TIMINGS), default=DEFAULT_TIMING, show_default=True,
        help="How the runs are timed, which sets the launch floor: "
             + "; ".join(f"{k}: {v}" for k, v in TIMING_HELP.items()) + ".")(command)


OUTPUT_OPTION = click.option(
    "--output", "-O", "output", type=click.Choice(OUTPUTS), default="table", show_default=True,
    help="Result format on stdout.",
)
REORDER_OPTION = click.option(
    "--reorder", "reorder", multiple=True, metavar="NAME[,NAME...]|all",
    help=f"Also analyse the matrix reordered by each ordering ({', '.join(ORDERINGS)}, or "
         f"all) and set its cache-aware time (a model's estimate, not a bound) beside the "
         f"original's, with the reordering's time and the runs that pay for it.",
)

CACHE_OPTION = click.option(
    "--cache/--no-cache", "cache", default=True, show_default=True,
    help="Reuse what earlier runs kept (the structure measured from the same file content, "
         "the specs parsed before) and keep this run's (see docs/performance.md).",
)
WIDE_OPTION = click.option(
    "--wide", is_flag=True,
    help="Table output: every column (the default ones are the numbers most read).",
)


def comma_list(values: tuple[str, ...], choices: tuple[str, ...], option: str = ""
               ) -> tuple[str, ...]:
    """Names from repeated, comma-separated option values; "all" is every choice.

    >>> comma_list(("csr,coo", "csr"), ("csr", "coo", "dia")), comma_list(("all",), ("a", "b"))
    (('csr', 'coo'), ('a', 'b'))
    """
    from ..errors import unknown_choice

    names: list[str] = []
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                raise empty_item(value, f"{option}: " if option else "")
            if part == "all":
                names += choices
            else:
                if part not in choices:
                    raise unknown_choice(part, [*choices, "all"])
                names.append(part)
    return tuple(dict.fromkeys(names))


def emit(text: str) -> None:
    """Write results to stdout."""
    click.echo(text, nl=not text.endswith("\n"))


def emit_pieces(pieces: Iterable[str], batch: int = 2048) -> None:
    """Write a document to stdout as its pieces come (a batch at a time), then a newline:
    what :func:`emit` writes of the joined text, without holding it whole."""
    held: list[str] = []
    for piece in pieces:
        held.append(piece)
        if len(held) >= batch:
            click.echo("".join(held), nl=False)
            held.clear()
    click.echo("".join(held))


def table_console(wide: bool = False) -> Any:
    """A rich console for stdout: the terminal's width, or (piped to a file) the width
    ``COLUMNS`` gives, else wide enough not to wrap tables. ``wide`` (``--wide``) only
    adds columns: a table still fits the terminal, folding into column groups where it
    must.
    """
    from rich.console import Console

    # numbers in captions and notes are not recoloured: rich's guess split "1.000x" into
    # three colours on a terminal
    console = Console(highlight=False)
    if not console.is_terminal:  # a file or a pipe: as wide as COLUMNS says, else wide
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) >= 40 else (
            250 if wide else 200)
        console = Console(width=width, no_color=True, highlight=False)
    return console


def warn_flagged(cal: Any, calibration_file: str | None) -> None:
    """Say on stderr why a calibration in use is flagged (nothing when it is not)."""
    from ..report.calibration import calibration_flags

    if cal is not None:
        for line in calibration_flags(cal):
            click.echo(f"sparsroof: warning: {calibration_file}: {line}", err=True)
