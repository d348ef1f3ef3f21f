"""``sparsroof classify``: structure class, confidence and deciding features per matrix."""

from __future__ import annotations

import json

import click

from .._version import envelope
from ..errors import MatrixFileError
from ..structure.cache import measured
from ..structure.classify import Verdict, classify
from ..structure.features import Structure
from .common import CACHE_OPTION, echo_error, emit, table_console

OUTPUTS = ("table", "json")


def _json(results: list[tuple[str, str, Structure, Verdict]], errors: list[dict[str, str]]) -> str:
    doc = envelope("classify")
    doc["matrices"] = [{"matrix": name, "path": path, "verdict": v.to_dict(),
                        "features": s.to_dict()} for name, path, s, v in results]
    doc["errors"] = errors
    return json.dumps(doc, indent=2)


def _table(results: list[tuple[str, str, Structure, Verdict]]) -> object:
    from ..report.tables import fitted_table

    headers = ("matrix", "rows x cols", "entries", "class", "conf", "traits", "params")
    rows = []
    for name, _, s, v in results:
        params = ", ".join(f"{k}={_short(x)}" for k, x in v.params.items())
        others = ", ".join(x for x in v.traits if x != v.label)
        rows.append([name, f"{s.rows:,} x {s.cols:,}", f"{s.stored_entries:,}", v.label,
                     f"{v.confidence:.2f}", others, params])
    # a reason is a sentence: under the table, at the terminal's width, not in a column
    why = "\n".join(f"why {name}: {v.reason}" for name, _, _, v in results)
    return fitted_table(headers, rows,
                        title="structure classes (from the pattern only, never file comments)",
                        left=("matrix", "class", "traits", "params"), caption=why)


def _short(x: object) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


@click.command("classify")
@click.argument("matrices", nargs=-1, required=True, metavar="MATRIX...")
@click.option("--output", "-O", "output", type=click.Choice(OUTPUTS), default="table",
              show_default=True, help="Result format on stdout.")
@CACHE_OPTION
def command(matrices: tuple[str, ...], output: str, cache: bool = True) -> int:
    """Structure class of each MATRIX, with its confidence and the deciding features.

    Classes: banded, block, scale-free, random, nm, block-pruned, unstructured-pruned,
    dense, mixed. The verdict comes from the sparsity pattern alone. With --output json,
    every measured feature is included. Exit code 1 if any file failed.

    \b
    Examples:
      sparsroof classify data/lap2d_64.mtx
      sparsroof classify data/*.mtx -O json
    """
    results: list[tuple[str, str, Structure, Verdict]] = []
    errors: list[dict[str, str]] = []
    for path in matrices:
        try:
            m = measured(path, cache=cache)
        except MatrixFileError as err:
            echo_error(err.on_command_line())
            errors.append({"path": err.path, "error": err.problem})
            continue
        results.append((m.name, m.path, m.structure, classify(m.structure)))
    if output == "json":
        emit(_json(results, errors))
    elif results:  # no empty table when every file failed
        table_console().print(_table(results))
    return 1 if errors else 0
