"""``sparsroof batch``: analyse whole directory trees of matrices into a result store."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..analysis import Config
from ..batch.plan import Plan, make_plan
from ..batch.runner import RunCounts, run_plan
from ..batch.store import Store
from ..errors import ExportError, OptionError
from ..hardware.library import load_specs
from ..matrix.collection import SizeFilter, discover
from ..report.batch import dry_run_table
from ..report.export import check_export, export
from ..report.progress import progress_for
from .common import (
    DTYPE_OPTION,
    INDEX_OPTION,
    KERNEL_OPTION,
    MODEL_OPTION,
    REORDER_OPTION,
    STORAGE_OPTION,
    UNIT_OPTION,
    WIDTH_OPTION,
    hw_option,
    memory_limit,
    named_file,
    table_console,
)
from .guard import check_writable, echo_message

DEFAULT_STORE = "sparsroof-results.db"


def _budget(memory: str | None) -> int | None:
    return memory_limit(memory, "--memory")


def _tell(plan: Plan, summary: RunCounts, store: str) -> None:
    for label, kind, reason in summary.failures:
        if kind == "bug":  # its traceback was printed when it happened
            reason = f"{reason.strip().splitlines()[-1]} (traceback above)"
        # a file that cannot be read is said as plainly as analyze says it; the other
        # kinds (memory, timeout, crash, bug) name themselves
        echo_message(f"sparsroof: failed: {label}{'' if kind == 'error' else f' ({kind})'}: "
                     f"{reason}")
    parts = [f"{summary.analysed} analysed ({summary.entries:,} entries in "
             f"{summary.seconds:.1f} s)", f"{plan.count('cached')} already in the store",
             f"{len(summary.failures)} failed"]
    if summary.elsewhere:
        parts.append(f"{summary.elsewhere} stored by another batch sharing the store")
    parts += [f"{plan.count(s)} {what}" for s, what in (
        ("failed", "failed before (not retried; --retry-failed)"),
        ("filtered", "filtered out")) if plan.count(s)]
    if plan.auxiliary:
        parts.append(f"{len(plan.auxiliary)} auxiliary files skipped (--aux)")
    echo_message(f"sparsroof: batch: {', '.join(parts)}; results in {store}")


@click.command("batch")
@click.argument("paths", nargs=-1, required=True, metavar="DIR|FILE...")
@hw_option(many=True)
@KERNEL_OPTION
@WIDTH_OPTION
@DTYPE_OPTION
@INDEX_OPTION
@STORAGE_OPTION
@MODEL_OPTION
@UNIT_OPTION
@REORDER_OPTION
@click.option("--store", "store_path", default=DEFAULT_STORE, show_default=True,
              type=click.Path(dir_okay=False), help="SQLite file the results go to.")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes.  [default: all cores]")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS", help="Give up on a matrix after this long (recorded).")
@click.option("--progress-every", "progress_every", type=click.FloatRange(min=0),
              default=60.0, show_default=True, metavar="SECONDS",
              help="Off a terminal (a log, CI), a progress line on stderr this often; 0: "
                   "none. A terminal shows a live bar instead.")
@click.option("--memory", "--max-memory", "memory", default=None, metavar="SIZE",
              help="Memory budget, e.g. 16GiB; it also overrides the limits a worker finds "
                   "for one matrix.  [default: 80% of the memory this process may use: "
                   "available memory, cgroup limit, ulimit -v]")
@click.option("--name", "names", multiple=True, metavar="GLOB",
              help="Only matrices whose name or path matches (repeatable).")
@click.option("--min-rows", type=click.IntRange(min=0), help="Only matrices with >= rows.")
@click.option("--max-rows", type=click.IntRange(min=0), help="Only matrices with <= rows.")
@click.option("--min-nnz", type=click.IntRange(min=0),
              help="Only matrices whose size line declares >= entries.")
@click.option("--max-nnz", type=click.IntRange(min=0),
              help="Only matrices whose size line declares <= entries.")
@click.option("--aux", is_flag=True, help="Also analyse auxiliary files (Name_b.mtx, ...).")
@click.option("--dry-run", is_flag=True, help="List what would be analysed; change nothing.")
@click.option("--retry-failed", is_flag=True,
              help="Try again files that failed to read before (unchanged since).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run on a Dask distributed cluster, e.g. tcp://host:8786.")
@click.option("--export", "export_path", type=click.Path(dir_okay=False), metavar="FILE",
              callback=named_file,
              help="Afterwards write all rows of the store to FILE (.csv, .json, .parquet).")
@click.option("--strict", is_flag=True, help="Exit 1 also for files that failed in earlier "
              "runs and were not retried (by default only this run's failures count).")
def command(paths: tuple[str, ...], hw: tuple[str, ...], kernel: str,
            widths: tuple[str, ...], dtype: str, index: str, storages: tuple[str, ...],
            models: tuple[str, ...], unit: str | None, store_path: str,
            workers: int | None, timeout: float | None, memory: str | None,
            names: tuple[str, ...], min_rows: int | None, max_rows: int | None,
            min_nnz: int | None, max_nnz: int | None, aux: bool, dry_run: bool,
            retry_failed: bool, scheduler: str | None, export_path: str | None,
            strict: bool, reorder: tuple[str, ...] = (), progress_every: float = 60.0
            ) -> int:
    """Analyse every matrix under DIR (recursively) into a SQLite result store.

    Finds .mtx, .mtx.gz and .smtx files and SuiteSparse Group/Name.tar.gz archives (read
    as streams). Runs in parallel; a re-run skips what the store already holds, so an
    interrupted batch resumes where it stopped. Bad files, timeouts and crashed workers
    are recorded and the batch goes on; the exit code is 1 if a matrix failed in this run
    (with --strict, also if one failed before).

    \b
    Examples:
      sparsroof batch data --hw a100 --hw v100 --store results.db
      sparsroof batch data --store results.db --max-nnz 1000000 \\
          --name 'lap*' --dry-run
      sparsroof batch data --kernel spmm --d 1,16 --export results.csv
    """
    specs = load_specs(hw)
    config = Config.from_options(kernel=kernel, d=widths, dtype=dtype, index=index,
                                 storage=storages, model=models, unit=unit, reorder=reorder)
    if export_path:
        try:
            check_export(export_path)
        except ExportError as err:
            raise OptionError(f"--export {err}") from None
        check_writable(export_path)  # a missing folder, before the batch, not after it
    if not dry_run and not Path(store_path).is_file():
        check_writable(store_path)  # a new store's folder, before the search
    size = SizeFilter(min_rows, max_rows, min_nnz, max_nnz)
    found = discover(paths, include_aux=aux, names=names)
    if not found.sources and not found.auxiliary:
        named = f" named {' or '.join(names)}" if names else ""
        echo_message(f"sparsroof: batch: no matrix{named} found under {', '.join(paths)} (it "
                     "reads .mtx, .mtx.gz and .smtx files and SuiteSparse .tar.gz, .tgz and .tar "
                     "archives)")
    if dry_run:
        existing = Path(store_path).is_file()
        store = Store(store_path, readonly=True) if existing else None
        plan = make_plan(found, specs, config, store, size=size, budget=_budget(memory),
                         retry_failed=retry_failed)
        table_console().print(dry_run_table(plan))
        return 0
    with Store(store_path) as store:
        plan = make_plan(found, specs, config, store, size=size, budget=_budget(memory),
                         retry_failed=retry_failed)
        run_id = store.begin_run(sys.argv)
        total = len(plan.tasks) + plan.count("error") + plan.count("memory")
        with progress_for(total, progress_every) as progress:
            try:
                summary = run_plan(plan, store, run_id,
                                   workers=workers or os.cpu_count() or 1, timeout=timeout,
                                   scheduler=scheduler, progress=progress)
            except KeyboardInterrupt:
                one = progress.done == 1
                done = f"{progress.done:,} {'matrix' if one else 'matrices'}"
                click.echo(f"sparsroof: batch: interrupted; the {done} finished in this "
                           f"run {'is' if one else 'are'} kept in {store_path}: the same "
                           "command goes on from there", err=True)
                raise click.exceptions.Exit(130) from None
        _tell(plan, summary, store_path)
        if export_path:
            rows = export(store, export_path)
            echo_message(f"sparsroof: batch: {rows} rows written to {export_path}")
    return 1 if summary.failures or (strict and plan.count("failed")) else 0
