"""Options and error handling shared by every command."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..errors import SparsroofError
from ..hardware.spec import UNITS
from ..model.traffic import INDEX_BYTES, KERNELS, MODELS, STORAGES, VALUE_BYTES
from ..report.analysis import OUTPUTS

__all__ = [
    "HW_OPTION",
    "KERNEL_OPTION",
    "WIDTH_OPTION",
    "DTYPE_OPTION",
    "INDEX_OPTION",
    "OUTPUT_OPTION",
    "STORAGE_OPTION",
    "MODEL_OPTION",
    "UNIT_OPTION",
    "MAX_MEMORY_OPTION",
    "memory_limit",
    "echo_error",
    "emit",
    "run_guarded",
    "table_console",
]

HW_OPTION = click.option(
    "--hw", "hw", default="a100", show_default=True, metavar="NAME|PATH",
    help="Hardware spec: a bundled name (see 'sparsroof hw list') or a path to a YAML spec.",
)
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
         f"band), {', '.join(MODELS)}, or all. [default: auto]",
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
    from ..errors import OptionError, UnitError
    from ..units import parse_quantity

    if text is None:
        return None
    try:
        return int(parse_quantity(text, "capacity"))
    except UnitError as err:
        raise OptionError(f"{option}: {err}") from None


OUTPUT_OPTION = click.option(
    "--output", "-O", "output", type=click.Choice(OUTPUTS), default="table", show_default=True,
    help="Result format on stdout.",
)


def check_writable(path: str) -> None:
    """Fail at once, not after minutes of work, when ``path`` cannot be written."""
    from pathlib import Path

    from ..errors import OptionError

    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise OptionError(f"{target}: cannot write: it is a directory")
    if not folder.is_dir():
        raise OptionError(f"{target}: cannot write: no directory {folder}")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise OptionError(f"{target}: cannot write: permission denied")


def echo_error(message: str) -> None:
    """One line on stderr, prefixed so it can be found in logs."""
    click.echo(f"sparsroof: error: {message}", err=True)


def emit(text: str) -> None:
    """Write results to stdout."""
    click.echo(text, nl=not text.endswith("\n"))


def table_console() -> Any:
    """A rich console for stdout; wide enough not to wrap tables when piped to a file."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=200, no_color=True, highlight=False)
    return console


def run_guarded(command: click.Command, argv: list[str] | None) -> int:
    """Run a click command; user errors become one line and an exit code, never a traceback."""
    try:
        code = command.main(args=argv, prog_name="sparsroof", standalone_mode=False)
    except click.exceptions.Abort:
        echo_error("aborted")
        return 130
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except SparsroofError as err:
        echo_error(str(err))
        return err.exit_code
    except BrokenPipeError:
        # the reader went away (| head): exit quietly, without a second error at shutdown
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except click.exceptions.Exit as err:
        return err.exit_code
    return code if isinstance(code, int) else 0
