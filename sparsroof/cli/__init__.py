"""The ``sparsroof`` command line: parse options, call the core, render, exit.

Each subcommand lives in its own module, named in :data:`COMMANDS`, and is imported
only when it runs.
"""

from __future__ import annotations

import importlib
import sys

import click

from .._version import __version__
from .common import run_guarded

__all__ = ["cli", "main"]


#: command name -> module of sparsroof.cli that defines it (as ``command``)
COMMANDS = {
    "analyze": "analyze", "batch": "batch", "bench": "bench", "calibrate": "calibrate",
    "check": "check", "classify": "classify", "compare": "compare", "formats": "formats",
    "generate": "generate",
    "hw": "hw", "plot": "plot", "report": "report_cmd", "spy": "spy", "whatif": "whatif",
}


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (or help lists it), so
    that one command does not pay for the imports of all the others."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(f"{__name__}.{COMMANDS[name]}")
        command: click.Command = module.command
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with the closest command named when one is misspelt."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"no command {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sparsroof")
def cli() -> None:
    """Speed-of-light and roofline analysis of sparse matrix kernels.

    \b
    Example:
      sparsroof analyze data/lap2d_64.mtx --hw a100 --kernel spmm --d 1,16,64
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, turn user errors into one-line messages."""
    sys.exit(run_guarded(cli, argv))
