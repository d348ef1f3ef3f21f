"""``sparsroof report``: summarise a batch result store."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import click

from .._version import envelope
from ..batch.store import Store
from ..batch.summary import MatrixPoint, Summary, roof_points, summarise
from ..errors import OptionError
from ..report.tables import fitted_table
from ..units import si
from .common import check_writable, emit, table_console

#: failed files listed by name in the table (all of them in the JSON)
SHOWN_FAILURES = 20


def _table(title: str, headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> Any:
    numbers = ("n", "d", "AI F/B", "attainable", "of peak")
    return fitted_table(headers, [[str(c) for c in row] for row in rows], title=title,
                        left=[h for h in headers if h not in numbers])


def _failed_files(failures: list[dict[str, Any]]) -> Any:
    rows = [(f["path"] + (f":{f['member']}" if f["member"] else ""), f["kind"], f["reason"])
            for f in failures[:SHOWN_FAILURES]]
    more = len(failures) - SHOWN_FAILURES
    title = "failed files" + (f" (first {SHOWN_FAILURES}; {more} more with -O json)"
                               if more > 0 else "")
    return _table(title, ("file", "kind", "reason"), rows)


def _points_rows(points: list[MatrixPoint]) -> list[tuple[Any, ...]]:
    return [(p.name, p.label, p.spec, p.kernel, p.width, p.storage, p.model,
             f"{p.intensity:.3g}", si(p.attainable_flops, "FLOP/s"),
             f"{100 * p.roof_fraction:.3g}%", p.bound) for p in points]


def _render(s: Summary, failures: list[dict[str, Any]]) -> None:
    console = table_console()
    console.print(f"{s.matrices} matrices analysed, {s.failed} failed")
    console.print(_table("matrices by class", ("class", "n"), list(s.by_class)))
    console.print(_table("results by bound", ("spec", "kernel", "d", "format", "model",
                                              "bound", "n"), list(s.by_bound)))
    if s.by_failure:
        console.print(_table("failures", ("kind", "reason", "n"), list(s.by_failure)))
        console.print(_failed_files(failures))
    heads = ("matrix", "class", "spec", "kernel", "d", "format", "model", "AI F/B",
             "attainable", "of peak", "bound")
    note = " (best row per matrix and spec; of peak = attainable / peak FLOP/s)"
    console.print(_table("furthest from the compute roof" + note, heads,
                         _points_rows(s.furthest)))
    console.print(_table("closest to the compute roof" + note, heads,
                         _points_rows(s.closest)))


def _json(s: Summary, failures: list[dict[str, Any]]) -> str:
    doc = envelope("report")
    doc["roof_fraction"] = "attainable / peak FLOP/s of the best row per matrix and spec"
    doc.update({
        "matrices": s.matrices, "failed": s.failed,
        "by_class": [{"class": c, "matrices": n} for c, n in s.by_class],
        "by_bound": [dict(zip(("spec", "kernel", "width", "storage", "model", "bound",
                               "results"), r, strict=True)) for r in s.by_bound],
        "failures": [{"kind": k, "reason": r, "matrices": n} for k, r, n in s.by_failure],
        "failed_files": failures,
        "furthest": [asdict(p) | {"roof_fraction": p.roof_fraction} for p in s.furthest],
        "closest": [asdict(p) | {"roof_fraction": p.roof_fraction} for p in s.closest],
    })
    return json.dumps(doc, indent=2)


def _write_html(source: str, path: str) -> None:
    """The HTML report of a store or an analyze/compare JSON document."""
    from ..plot.thumbnail import add_pictures
    from ..report.html import write_html
    from ..report.html_data import read_page

    check_writable(path)
    page = read_page(source)
    add_pictures(page)
    click.echo(f"sparsroof: wrote {write_html(page, path)}", err=True)


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
    the JSON of 'analyze -O json' or 'compare -O json' given in place of STORE).

    \b
    Examples:
      sparsroof batch data --store results.db
      sparsroof report results.db --plot aggregate.png --top 10
      sparsroof report results.db --html report.html
      sparsroof compare measured.csv --hw a100 -O json > measured.json
      sparsroof report measured.json --html measured.html
    """
    from ..report.html_data import source_kind

    if source_kind(store_path) == "document":
        if not html_path or plot_path:
            raise OptionError(f"{store_path}: a JSON document is reported with --html FILE "
                              f"alone; the tables and --plot need a result store")
        _write_html(store_path, html_path)
        return 0
    if html_path:
        _write_html(store_path, html_path)
    with Store(store_path, readonly=True) as store:
        summary = summarise(store, top=top)
        failures = store.failures()
        if plot_path:
            from ..plot.aggregate import plot_aggregate, unplottable
            from .plot import echo_written

            points = roof_points(store)
            plot_aggregate(points, plot_path)
            echo_written(plot_path)
            hidden = unplottable(points)
            if hidden:
                click.echo(f"sparsroof: {len(hidden)} matrix(es) with no work are not on the "
                           f"figure: {', '.join(hidden)}", err=True)
    if output == "json":
        emit(_json(summary, failures))
    else:
        _render(summary, failures)
    return 1 if summary.failed else 0
