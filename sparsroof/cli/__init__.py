"""The ``sparsroof`` command line: parse options, call the core, render, exit.

Each subcommand lives in its own module and registers itself on :data:`cli`.
"""

from __future__ import annotations

import sys

import click

from .._version import __version__
from .common import run_guarded

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sparsroof")
def cli() -> None:
    """Speed-of-light and roofline analysis of sparse matrix kernels.

    \b
    Example:
      sparsroof analyze data/lap2d_64.mtx --hw a100 --kernel spmm --d 1,16,64
    """


def _register() -> None:
    from . import (
        analyze,
        batch,
        bench,
        calibrate,
        check,
        classify,
        formats,
        generate,
        hw,
        plot,
        report_cmd,
        spy,
        whatif,
    )

    for module in (analyze, batch, bench, calibrate, check, classify, formats, generate, hw,
                   plot, report_cmd, spy, whatif):
        cli.add_command(module.command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, turn user errors into one-line messages."""
    sys.exit(run_guarded(cli, argv))
