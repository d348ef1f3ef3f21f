"""``sparsroof check``: performance budgets for CI, with JUnit, JSON and job annotations."""

from __future__ import annotations

import os

import click

from ..ci.budget import load_budget
from ..ci.check import parse_tolerance, run_checks
from ..errors import BudgetError, OptionError
from ..report.ci import (
    baseline_json,
    headline,
    to_json,
    to_junit,
    to_markdown,
    to_table,
    workflow_commands,
)
from ..userfile import write_text_whole
from .common import echo_error, emit, named_file, table_console
from .guard import check_writable, echo_message


def _write(path: str, text: str, append: bool = False) -> None:
    """Write ``text`` to ``path`` whole or not at all, or add it to its end (a step
    summary others write too)."""
    if not append:
        write_text_whole(path, text, lambda problem: BudgetError(path, problem))
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise BudgetError(path, f"cannot write: {err.strerror or err}") from None


def _check_outputs(junit: str | None, write_baseline: str | None) -> str | None:
    """Refuse, before the checks run, a file ``check`` could not write; the step summary
    of GitHub Actions, if any."""
    for path in (junit, write_baseline):
        if path:
            check_writable(path)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            check_writable(summary)
        except OptionError as err:
            raise OptionError(f"GITHUB_STEP_SUMMARY: {err}") from None
    return summary


@click.command("check")
@click.argument("budget", metavar="BUDGET.yaml")
@click.option("--measured", metavar="FILE", callback=named_file,
              help="Measured runs, in the CSV or JSON that "
              "'compare' reads (matrix, time_s, and optionally kernel, format, d, ...); "
              "replaces the budget file's 'measured' key.")
@click.option("--baseline", callback=named_file, metavar="OLD.json",
              help="Fail points whose SoL latency or bytes moved grew past --tolerance.")
@click.option("--tolerance", metavar="PCT",
              help="Allowed growth over --baseline, e.g. 5% or 0.05.  [default: 0%]")
@click.option("--write-baseline", callback=named_file, metavar="NEW.json",
              help="Record the current values as a baseline for a later run.")
@click.option("--junit", metavar="REPORT.xml", callback=named_file,
              help="Write a JUnit XML report.")
@click.option("--output", "-O", "output", type=click.Choice(("table", "json")),
              default="table", show_default=True, help="Result format on stdout.")
@click.option("--json", "old_json", is_flag=True, hidden=True)
def command(budget: str, measured: str | None, baseline: str | None, tolerance: str | None,
            write_baseline: str | None, junit: str | None, output: str, old_json: bool) -> int:
    """Check every limit of the BUDGET.yaml file against the models.

    Prints one row per limit, matrix and width: value, limit, margin and status. Exit 0
    when all pass, 1 when a limit is exceeded (or a measured time that a
    min_fraction_of_sol limit judges beats the speed of light; measured runs are read
    only for those limits), 2 when the budget file or an input is invalid. Under GitHub Actions
    (GITHUB_ACTIONS=true) failures are also printed as annotations, and a Markdown
    summary is appended to the file named by GITHUB_STEP_SUMMARY when it is set.

    \b
    Examples:
      sparsroof check examples/budgets.yaml
      sparsroof check examples/budgets.yaml --junit report.xml \\
          --write-baseline base.json
      sparsroof check examples/budgets.yaml --baseline base.json \\
          --tolerance 5%
      sparsroof check examples/budgets.yaml -O json | jq '.counts'
    """
    as_json = output == "json" or old_json
    if tolerance is not None and baseline is None:
        raise OptionError("--tolerance applies to a --baseline; give one")
    allowed = parse_tolerance(tolerance or "0")
    summary = _check_outputs(junit, write_baseline)
    report = run_checks(load_budget(budget, measured), baseline, allowed)
    for note in report.notes:
        echo_message(f"sparsroof: note: {note}")
    for path, text in ((junit, to_junit), (write_baseline, baseline_json)):
        if path:
            _write(path, text(report))
            click.echo(f"sparsroof: wrote {path}", err=True)
    if summary:
        _write(summary, to_markdown(report), append=True)
    if as_json:
        emit(to_json(report))
    else:
        table_console().print(to_table(report))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # the runner reads workflow commands from both streams; keep stdout pure JSON
        for line in workflow_commands(report):
            click.echo(line, err=as_json)
    if report.exit_code:
        echo_error(headline(report))
    return report.exit_code
