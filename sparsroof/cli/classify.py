"""``sparsroof classify``: structure class, confidence and deciding features per matrix."""

from __future__ import annotations

import click

from ..errors import MatrixFileError
from ..report.classify import Classified, classify_csv, classify_json, classify_table
from ..structure.cache import measured
from ..structure.classify import classify
from .common import CACHE_OPTION, echo_error, emit, table_console

OUTPUTS = ("table", "json", "csv")


@click.command("classify")
@click.argument("matrices", nargs=-1, required=True, metavar="MATRIX...")
@click.option("--output", "-O", "output", type=click.Choice(OUTPUTS), default="table",
              show_default=True, help="Result format on stdout.")
@CACHE_OPTION
def command(matrices: tuple[str, ...], output: str, cache: bool = True) -> int:
    """Structure class of each MATRIX, with its confidence and the deciding features.

    Classes: banded, block, scale-free, graph, random, nm, block-pruned,
    unstructured-pruned, dense, mixed. The verdict comes from the sparsity pattern
    alone. With --output json, every measured feature is included; --output csv has a
    row per matrix with the verdict and every feature that is one number. Exit code 1
    if any file failed.

    \b
    Examples:
      sparsroof classify data/lap2d_64.mtx
      sparsroof classify data/*.mtx -O json
      sparsroof classify data/*.mtx -O csv > classes.csv
    """
    results: list[Classified] = []
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
        emit(classify_json(results, errors))
    elif output == "csv":
        emit(classify_csv(results))  # the failed files were each named on stderr
    elif results:  # no empty table when every file failed
        table_console().print(classify_table(results))
    return 1 if errors else 0
