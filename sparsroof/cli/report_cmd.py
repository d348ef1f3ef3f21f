"""``sparsroof report``: summarise_store a batch result store."""

from __future__ import annotations

import click

from ..batch.store import Store
from ..batch.summary import store_points, summarise_store
from ..errors import OptionError
from ..report.store import store_json, store_tables
from ..units import counted
from .common import emit, table_console
from .guard import check_writable


def _write_html(source: str, path: str) -> int:
    """The HTML report of a store or an analyze/compare JSON document; the exit code of
    the command that wrote that document: 1 where a row failed or a run beat its bound."""
    from ..plot.thumbnail import add_pictures
    from ..report.html import write_html
    from ..report.html_data import read_page

    check_writable(path)
    page = read_page(source)
    add_pictures(page)
    click.echo(f"sparsroof: wrote {write_html(page, path)}", err=True)
    return 1 if page.failed else 0


@click.command("report")
@click.argument("store_path", metavar="STORE", type=click.Path(dir_okay=False))
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write an aggregate roofline of all matrices, coloured by class.")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True,
              help="How many matrices to list furthest from and closest to the roof.")
@click.option("--output", "-O", "output", type=click.Choice(("table", "json")),
              default="table", show_default=True, help="Result format on stdout.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Also write one self-contained interactive HTML page (works offline); "
                   "STORE may then be the JSON of 'analyze -O json' or 'compare -O json'.")
def command(store_path: str, plot_path: str | None, top: int, output: str,
            html_path: str | None) -> int:
    """Summarise a result STORE written by 'sparsroof batch'.

    Counts by class, bound and failure reason, and the matrices furthest from and
    closest to the compute roof, and the files that failed. The exit code is 1 if the
    store records any failure. --html writes an interactive page of every row (also from
    the JSON of 'analyze -O json' or 'compare -O json' given in place of STORE, whose
    exit code it then repeats: 1 where a row failed or a run beat its bound).

    \b
    Examples:
      sparsroof batch data --store results.db
      sparsroof report results.db --plot aggregate.png --top 10
      sparsroof report results.db --html report.html
      sparsroof compare measured.csv --hw a100 -O json > measured.json
      sparsroof report measured.json --html measured.html
    """
    from ..report.html_data import source_kind
    from .figures import check_figure

    document = source_kind(store_path) == "document"
    if document and (not html_path or plot_path):
        raise OptionError(f"{store_path}: a JSON document is reported with --html FILE "
                          f"alone; the tables and --plot need a result store")
    check_figure(plot_path)
    if html_path:
        check_writable(html_path)
    if document:
        assert html_path is not None  # checked above
        return _write_html(store_path, html_path)
    if html_path:
        _write_html(store_path, html_path)
    with Store(store_path, readonly=True) as store:
        summary = summarise_store(store, top=top)
        failures = store.failures()
        if plot_path:
            from ..plot.aggregate import plot_aggregate, unplottable
            from .figures import echo_written

            points = store_points(store)
            plot_aggregate(points, plot_path)
            echo_written(plot_path)
            hidden = unplottable(points)
            if hidden:
                click.echo(f"sparsroof: {counted(len(hidden), 'matrix', 'matrices')} with no "
                           f"work {'is' if len(hidden) == 1 else 'are'} not on the figure: "
                           f"{', '.join(hidden)}", err=True)
    if output == "json":
        emit(store_json(summary, failures))
    else:
        console = table_console()
        for shown in store_tables(summary, failures):
            console.print(shown)
    return 1 if summary.failed else 0
