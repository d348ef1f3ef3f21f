"""The command group: each subcommand lives in its own module, named in :data:`COMMANDS`,
and is imported only when it runs; ``sparsroof --help`` lists them from :data:`SUMMARIES`
and imports none (a test holds each summary to its command's own help text).
"""

from __future__ import annotations

import importlib

import click

from .._version import __version__

__all__ = ["COMMANDS", "SUMMARIES", "LazyGroup", "cli", "short_help"]


#: command name -> module of sparsroof.cli that defines it (as ``command``)
COMMANDS = {
    "analyze": "analyze", "batch": "batch", "bench": "bench", "calibrate": "calibrate",
    "check": "check", "classify": "classify", "compare": "compare", "formats": "formats",
    "generate": "generate",
    "hw": "hw", "plot": "plot", "report": "report_cmd", "spy": "spy", "whatif": "whatif",
}

#: command name -> first sentence of its help, as ``sparsroof --help`` lists it
SUMMARIES = {
    "analyze": "Speed-of-light latency and roofline position of SpMV/SpMM for each MATRIX.",
    "batch": "Analyse every matrix under DIR (recursively) into a SQLite result store.",
    "bench": "Time each format's SpMV/SpMM kernel on MATRIX here: median time, achieved GB/s "
             "and GFLOP/s, and the share of the speed of light.",
    "calibrate": "Measure this host's memory roofs, time every format's SpMV on a sweep of "
                 "generated matrices (rows x entries per row x pattern), fit the time per "
                 "format and save it.",
    "check": "Check every limit of the BUDGET.yaml file against the models.",
    "classify": "Structure class of each MATRIX, with its confidence and the deciding features.",
    "compare": "Judge measured run times against their bound: per run the bound, the measured "
               "time, the % of SoL and the term that bound it (launch floor, a memory level, "
               "compute).",
    "formats": "Storage formats of MATRIX for SpMV: bytes, FLOPs, predicted time, the best one, "
               "and the partition of the rows into blocks of strips, each in its best format.",
    "generate": "Write a seeded matrix of a known structure class as Matrix Market.",
    "hw": "Hardware specs: list the bundled ones, show one, validate your own, probe this host.",
    "plot": "Draw figures from saved results.",
    "report": "Summarise a result STORE written by 'sparsroof batch'.",
    "spy": "Density image of MATRIX: entries binned into cells, log colour scale.",
    "whatif": "Speed-of-light latency and speedup of a whole pruned model, per pattern and "
              "level.",
}


def short_help(name: str, limit: int) -> str:
    """The command's summary shortened as click shortens a command's help."""
    return click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit)


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (or help lists it), so
    that one command does not pay for the imports of all the others."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(f"{__package__}.{COMMANDS[name]}")
        command: click.Command = module.command
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with the closest command named when one is misspelt."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            from ..errors import meant

            raise click.UsageError(f"no command {name!r}{meant(name, COMMANDS)}", ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list, as click writes it, without importing the commands."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        with formatter.section("Commands"):
            formatter.write_dl([(name, short_help(name, limit)) for name in names])


@click.group(cls=LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sparsroof")
def cli() -> None:
    """Speed-of-light and roofline analysis of sparse matrix kernels.

    \b
    Example:
      sparsroof analyze data/lap2d_64.mtx --hw a100 --kernel spmm --d 1,16,64
    """
