"""``sparsroof generate KIND``: write a seeded matrix of a known structure class."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import click

from ..errors import OptionError
from ..matrix import generate as gen
from .guard import check_writable

_SEED = click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Random seed: the same seed gives the same matrix.")
_SHUFFLE = click.option("--shuffle", is_flag=True,
                        help="Renumber rows and columns by a seeded random permutation (the "
                             "same one for both when square): a scrambled ordering for "
                             "--reorder to undo.")
_OUT = click.option("-o", "--out", "output", required=True, metavar="FILE",
                    type=click.Path(dir_okay=False, writable=True),
                    help="Matrix Market file to write.")


def _int(name: str, default: int | None, text: str, least: int = 1) -> Callable[..., Any]:
    # a required option is given no default at all: click reads default=None as a value
    # given, and would pass None on to the generator
    given: dict[str, Any] = {"required": True} if default is None else {
        "default": default, "show_default": True}
    return click.option(f"--{name}", name.replace("-", "_"), type=click.IntRange(min=least),
                        help=text, **given)


def _finite(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    if not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value}")
    return value


def _float(name: str, default: float, text: str) -> Callable[..., Any]:
    return click.option(f"--{name}", name.replace("-", "_"), type=float, default=default,
                        show_default=True, help=text, callback=_finite)


def _nm(text: str) -> tuple[int, int]:
    try:
        n, m = (int(x) for x in text.split(":"))
    except ValueError:
        raise OptionError(f"--pattern must look like N:M, e.g. 2:4 (got {text!r})") from None
    return n, m


#: kind -> options, in the order of the generator's parameters
_OPTIONS: dict[str, list[Callable[..., Any]]] = {
    "random": [_int("rows", None, "Rows."), _int("cols", None, "Columns."),
               _int("nnz", None, "Entries drawn (duplicates are dropped).", least=0)],
    "banded": [_int("n", None, "Rows and columns."),
               _int("halfwidth", None, "Diagonals -halfwidth..halfwidth.", least=0),
               _float("fill", 1.0, "Chance that a cell in the band is stored.")],
    "stencil2d": [_int("n", None, "Grid side: n² rows.")],
    "stencil3d": [_int("n", None, "Grid side: n³ rows.")],
    "block": [_int("block-rows", None, "Block rows (and block columns)."),
              _int("block", 4, "Block size b."),
              _int("blocks-per-row", 4, "Blocks per block row, the diagonal one included."),
              _float("fill", 1.0, "Chance that a cell of a stored block is stored.")],
    "powerlaw": [_int("n", None, "Vertices (rows and columns)."),
                 _float("alpha", 2.5, "Power-law exponent of the degrees."),
                 _float("mean-degree", 10.0, "Mean entries per row."),
                 click.option("--symmetric", is_flag=True, help="Mirror every edge.")],
    "nm": [_int("rows", None, "Rows."), _int("cols", None, "Columns (a multiple of M)."),
           click.option("--pattern", default="2:4", show_default=True, metavar="N:M",
                        help="At most N entries in every M consecutive columns.")],
    "block-pruned": [_int("rows", None, "Rows."), _int("cols", None, "Columns."),
                     _int("block", 4, "Block size B."),
                     _float("sparsity", 0.9, "Share of blocks pruned away.")],
    "pruned": [_int("rows", None, "Rows."), _int("cols", None, "Columns."),
               _float("sparsity", 0.9, "Share of weights pruned away."),
               _float("spread", 0.5, "Log-normal spread of row/column importance, 0 to "
                      f"{gen.MAX_SPREAD:g}.")],
    "dense": [_int("rows", None, "Rows."), _int("cols", None, "Columns.")],
}


def _make(kind: str) -> click.Command:
    fn, label = gen.GENERATORS[kind]
    seeded = "seed" in inspect.signature(fn).parameters

    def run(output: str, shuffle: bool = False, **params: Any) -> int:
        check_writable(output)  # before the work, not after it
        if "pattern" in params:
            params["n"], params["m"] = _nm(params.pop("pattern"))
        seed = params.get("seed", 0)
        if not seeded:
            params.pop("seed", None)
        gen.check_size(kind, params)
        try:
            g = fn(**params)
            if shuffle:
                g = gen.shuffled(g, seed)
        except MemoryError:  # the estimate fell short of what numpy asked for
            raise OptionError(f"{kind}: out of memory while drawing the matrix; give "
                              "smaller sizes") from None
        gen.write(g, output, comment=gen.describe(kind, params | (
            {"shuffle": True, "seed": seed} if shuffle else {})))
        # shuffled, the pattern is no longer the class it was drawn as: say so, not the class
        drawn = f"{label} renumbered at random" if shuffle else label
        click.echo(f"sparsroof: wrote {output}: {g.rows:,} x {g.cols:,}, {g.nnz:,} entries "
                   f"({drawn})", err=True)
        return 0

    doc = inspect.cleandoc(fn.__doc__ or "").split(">>>")[0].replace("``", "").strip()
    command = click.Command(kind, callback=run, help=f"{doc}\n\nStructure class: {label}.")
    for option in [_OUT, _SEED, _SHUFFLE, *_OPTIONS[kind]]:
        command = option(command)
    return command


@click.group("generate")
def command() -> None:
    """Write a seeded matrix of a known structure class as Matrix Market.

    \b
    Examples:
      sparsroof generate banded --n 10000 --halfwidth 3 -o band.mtx
      sparsroof generate powerlaw --n 100000 --alpha 2.3 --seed 7 -o graph.mtx
      sparsroof generate nm --rows 512 --cols 1024 --pattern 2:4 -o w24.mtx
      sparsroof generate stencil2d --n 700 --shuffle -o scrambled.mtx
    """


for _kind in gen.GENERATORS:
    command.add_command(_make(_kind))
