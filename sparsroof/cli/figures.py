"""The options and checks every command that draws a figure shares (``--size``, ``--dpi``,
a figure file refused while the options are read), apart from the commands' own modules:
``spy`` imports this, not the ``plot`` command group and what its figures read."""

from __future__ import annotations

import click

from ..plot.style import DEFAULT_DPI
from .guard import check_writable

__all__ = ["DPI_OPTION", "SIZE_OPTION", "check_figure", "checked_figure", "echo_written",
           "size_of"]


def size_of(text: str | None) -> tuple[float, float] | None:
    from ..plot.style import parse_size

    return parse_size(text) if text else None


def _checked_size(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A bad --size is refused while the options are read, before any file is."""
    if value is not None:
        size_of(value)
    return value


SIZE_OPTION = click.option(
    "--size", metavar="WxH", default=None, callback=_checked_size,
    help="Figure size in inches, e.g. 8x5, from 4x3 to 100 a side (a legend of many "
         "names is added beside a roofline).",
)
DPI_OPTION = click.option(
    "--dpi", type=click.IntRange(30, 1200), default=DEFAULT_DPI, show_default=True,
    help="Resolution of PNG output (dots per inch).",
)


def check_figure(path: str | None, option: str = "--plot") -> None:
    """Fail at once, as a usage error, when ``path`` is no figure sparsroof can write."""
    if path is None:
        return
    from ..errors import FigureError, OptionError
    from ..plot.style import figure_format

    try:
        figure_format(path)
    except FigureError as err:
        raise OptionError(f"{option} {err}") from None
    check_writable(path)


def checked_figure(ctx: click.Context, param: click.Parameter, value: str | None
                   ) -> str | None:
    """A figure file of an unknown format or in a folder that cannot be written is
    refused while the options are read (a usage error, as ``analyze --plot`` does)."""
    check_figure(value, "-o")
    return value


def echo_written(path: object) -> None:
    click.echo(f"sparsroof: wrote {path}", err=True)
