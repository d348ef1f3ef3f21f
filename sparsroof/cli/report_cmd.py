"""``sparsroof report``: summarise a batch result store."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import click

from .._version import envelope
from ..batch.store import Store
from ..batch.summary import MatrixPoint, Summary, roof_points, summarise
from ..units import si
from .common import emit, table_console


def _table(title: str, headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for h in headers:
        table.add_column(h, justify="right" if h in ("n", "d", "AI F/B", "attainable",
                                                     "of peak") else "left")
    for row in rows:
        table.add_row(*(str(c) for c in row))
    return table


def _points_rows(points: list[MatrixPoint]) -> list[tuple[Any, ...]]:
    return [(p.name, p.label, p.spec, p.kernel, p.width, p.storage, p.model,
             f"{p.intensity:.3g}", si(p.attainable_flops, "FLOP/s"),
             f"{100 * p.roof_fraction:.3g}%", p.bound) for p in points]


def _render(s: Summary) -> None:
    console = table_console()
    console.print(f"{s.matrices} matrices analysed, {s.failed} failed")
    console.print(_table("matrices by class", ("class", "n"), list(s.by_class)))
    console.print(_table("results by bound", ("spec", "kernel", "d", "format", "model",
                                              "bound", "n"), list(s.by_bound)))
    if s.by_failure:
        console.print(_table("failures", ("kind", "reason", "n"), list(s.by_failure)))
    heads = ("matrix", "class", "spec", "kernel", "d", "format", "model", "AI F/B",
             "attainable", "of peak", "bound")
    note = " (best row per matrix and spec; of peak = attainable / peak FLOP/s)"
    console.print(_table("furthest from the compute roof" + note, heads,
                         _points_rows(s.furthest)))
    console.print(_table("closest to the compute roof" + note, heads,
                         _points_rows(s.closest)))


def _json(s: Summary) -> str:
    doc = envelope("report")
    doc["roof_fraction"] = "attainable / peak FLOP/s of the best row per matrix and spec"
    doc.update({
        "matrices": s.matrices, "failed": s.failed,
        "by_class": [{"class": c, "matrices": n} for c, n in s.by_class],
        "by_bound": [dict(zip(("spec", "kernel", "width", "storage", "model", "bound",
                               "results"), r, strict=True)) for r in s.by_bound],
        "failures": [{"kind": k, "reason": r, "matrices": n} for k, r, n in s.by_failure],
        "furthest": [asdict(p) | {"roof_fraction": p.roof_fraction} for p in s.furthest],
        "closest": [asdict(p) | {"roof_fraction": p.roof_fraction} for p in s.closest],
    })
    return json.dumps(doc, indent=2)


@click.command("report")
@click.argument("store_path", metavar="STORE", type=click.Path(dir_okay=False))
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write an aggregate roofline of all matrices, coloured by class.")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True,
              help="How many matrices to list furthest from and closest to the roof.")
@click.option("--output", "-O", "output", type=click.Choice(("table", "json")),
              default="table", show_default=True, help="Result format on stdout.")
def command(store_path: str, plot_path: str | None, top: int, output: str) -> int:
    """Summarise a result STORE written by 'sparsroof batch'.

    Counts by class, bound and failure reason, and the matrices furthest from and
    closest to the compute roof. The exit code is 1 if the store records any failure.

    \b
    Examples:
      sparsroof report sparsroof-results.db
      sparsroof report ss.db --plot roofline.png --top 10
    """
    with Store(store_path, readonly=True) as store:
        summary = summarise(store, top=top)
        if plot_path:
            from ..plot.aggregate import plot_aggregate

            plot_aggregate(roof_points(store), plot_path)
    if output == "json":
        emit(_json(summary))
    else:
        _render(summary)
    return 1 if summary.failed else 0
