"""Batch analysis: plan the work over many matrices, run it in parallel, store every row.

The per-matrix work is the notebook API: :func:`sparsroof.matrix.collection.load_source` ->
:func:`sparsroof.analysis.analyze` -> :func:`sparsroof.report.analysis.records`. Planning reads
only headers: it skips what the store already holds (same file identity and parameters),
applies the size filters and estimates each matrix's peak memory. Running happens in
worker processes (:mod:`sparsroof.batch.runner`) or on a Dask cluster; only this process
writes to the store, one transaction per matrix.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..analysis import Config, analyze, analyze_structure, records, with_reorderings
from ..errors import MatrixFileError, SparsroofError
from ..hardware.spec import HwSpec
from ..matrix.collection import Discovery, SizeFilter, Source, load_source, peek_source
from ..matrix.limits import memory_headroom
from ..matrix.mtx import Header, estimate_memory
from ..model.timing import DEFAULT_TIMING
from ..units import binary
from .store import RETRIED_KINDS, FileKey, MatrixResult, SpecResult, Store, json_safe

__all__ = [
    "ANALYSIS_FACTOR",
    "Task",
    "TaskOutcome",
    "Planned",
    "Plan",
    "params_key",
    "spec_identity",
    "available_memory",
    "make_plan",
    "analyse_task",
    "run_one",
    "warm_up",
]

#: planned peak memory of one matrix's analysis over :func:`estimate_memory` of its header.
#: Measured peaks (tracemalloc over analyse_task) were 0.76-0.86 x the estimate for Matrix
#: Market files, with margin for the structure features that grow; .smtx files reach
#: 2.3 x because their text lines are split into Python strings while parsing.
ANALYSIS_FACTOR = 1.5
_FORMAT_FACTOR = {"smtx": 3.0}
#: added to the factor with --reorder (the permuted copy of the coordinates, the CSR
#: pattern for RCM): a 10M-entry grid Laplacian peaked at 1.73 x the estimate with
#: ``--reorder rcm``, 1.43 x without
REORDER_FACTOR = 0.5


@dataclass(frozen=True)
class Task:
    """One matrix to analyse on the specs it still lacks."""

    source: Source
    key: FileKey
    specs: tuple[HwSpec, ...]
    spec_hashes: tuple[str, ...]
    config: Config
    rows: int
    entries: int  # declared by the size line
    memory: int  # planned peak bytes
    max_memory: int | None = None  # the user's --max-memory, which overrides the limits


@dataclass(frozen=True)
class TaskOutcome:
    """What a worker sends back: a result, or a failure kind and reason."""

    key: FileKey
    name: str
    entries: int  # stored entries analysed (0 for a failure)
    result: MatrixResult | None = None
    kind: str = ""  # error, timeout, crash, memory, bug
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.result is not None


@dataclass(frozen=True)
class Planned:
    """A matrix that will not run, and why (status: cached, failed, filtered, memory, error,
    bug)."""

    source: Source
    key: FileKey
    status: str
    reason: str = ""
    rows: int | None = None
    entries: int | None = None


@dataclass
class Plan:
    tasks: list[Task] = field(default_factory=list)
    others: list[Planned] = field(default_factory=list)
    auxiliary: list[Source] = field(default_factory=list)
    budget: int = 0

    def count(self, status: str) -> int:
        return sum(1 for p in self.others if p.status == status)


def params_key(config: Config) -> str:
    """A short hash of everything besides the spec that the rows depend on.

    >>> key = params_key(Config())
    >>> key == params_key(Config()), key == params_key(Config(dtype="fp32")), len(key)
    (True, False, 16)
    """
    data = dataclasses.asdict(config)
    if not data["reorder"]:  # a field added later: stores made before it stay valid
        data.pop("reorder")
    if data["timing"] == DEFAULT_TIMING and data["calls_per_sync"] == 1:  # so are these
        del data["timing"], data["calls_per_sync"]
    text = json.dumps(data, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _drop_unset_kinds(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("kind", "") is None and "source" in node:
            node.pop("kind")
        for value in node.values():
            _drop_unset_kinds(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _drop_unset_kinds(value)


def spec_identity(spec: HwSpec) -> tuple[str, str]:
    """(name, hash of the spec's content): two specs with equal numbers share the hash."""
    data = dataclasses.asdict(spec)
    data.pop("origin")
    for level in data["memory"]:  # a spec that gives no instances keeps its earlier hash
        for key in ("instances", "latency"):  # nor latency
            if level.get(key) is None:
                level.pop(key, None)
    _drop_unset_kinds(data)  # nor does one that says no kind of figure
    if not data.get("launch_floors"):  # nor one without a floor per timing method
        data.pop("launch_floors", None)
    data["peaks"] = {f"{u}/{p}": q for (u, p), q in data["peaks"].items()}
    text = json.dumps(json_safe(data), sort_keys=True)
    return spec.name, hashlib.sha256(text.encode()).hexdigest()[:16]


def available_memory() -> int:
    """Bytes of memory this process may still use (see :func:`memory_headroom`)."""
    return memory_headroom()[0]


def _header(source: Source) -> Header | tuple[str, str]:
    """The header of ``source``, or the (status, reason) of its failure: a problem with one
    file is that file's failure, never the batch's. A :class:`SparsroofError` is an
    ``error``; any other exception is a bug in sparsroof, kept with its traceback as
    ``bug`` (as :func:`run_one` keeps one met while analysing)."""
    if source.problem:
        return "error", source.problem
    try:
        return peek_source(source)
    except SparsroofError as err:
        return "error", err.problem if isinstance(err, MatrixFileError) else str(err)
    except MemoryError:
        return "memory", "ran out of memory reading its header"
    except Exception as err:  # noqa: BLE001 - recorded with its traceback, see docstring
        text = "".join(traceback.format_exception(err)).strip()
        return "bug", f"internal error: {text}"


def _plan_source(source: Source, key: FileKey, hashes: dict[str, HwSpec], config: Config,
                 store: Store | None, size: SizeFilter, budget: int, retry_failed: bool,
                 max_memory: int | None = None) -> Task | Planned:
    done = store.done_specs(key) if store else set()
    missing = tuple(h for h in hashes if h not in done)
    if not missing:
        known = store.header_of(key) if store and size.active else None
        if known and not size.accepts(*known):
            return Planned(source, key, "filtered", "outside the size filter", *known)
        return Planned(source, key, "cached", "", *(known or (None, None)))
    failed = store.failure(key) if store else None
    if failed and failed[0] not in RETRIED_KINDS and not retry_failed:
        return Planned(source, key, "failed", f"{failed[0]}: {failed[1]}")
    header = _header(source)
    if not isinstance(header, Header):
        return Planned(source, key, *header)
    if not size.accepts(header.rows, header.entries):
        return Planned(source, key, "filtered", "outside the size filter", header.rows,
                       header.entries)
    factor = _FORMAT_FACTOR.get(header.format, ANALYSIS_FACTOR)
    memory = int(estimate_memory(header) * (factor + (REORDER_FACTOR if config.reorder else 0)))
    if memory > budget:
        return Planned(source, key, "memory", f"needs about {binary(memory)} at its peak, the "
                       f"memory budget is {binary(budget)}", header.rows, header.entries)
    return Task(source, key, tuple(hashes[h] for h in missing), missing, config, header.rows,
                header.entries, memory, max_memory)


def make_plan(found: Discovery, specs: Sequence[HwSpec], config: Config, store: Store | None,
              *, size: SizeFilter | None = None, budget: int | None = None,
              retry_failed: bool = False) -> Plan:
    """Decide, from headers and the store, what to run; nothing is loaded or written."""
    plan = Plan(auxiliary=list(found.auxiliary))
    plan.budget = budget if budget is not None else int(available_memory() * 0.8)
    params = params_key(config)
    hashes = {spec_identity(s)[1]: s for s in specs}
    for source in found.sources:
        key = FileKey(source.path, source.member, source.size, source.mtime_ns, params)
        item = _plan_source(source, key, hashes, config, store, size or SizeFilter(),
                            plan.budget, retry_failed, budget)
        if isinstance(item, Task):
            plan.tasks.append(item)
        else:
            plan.others.append(item)
    return plan


def _structure_dict(structure: Any) -> dict[str, Any]:
    to_dict = getattr(structure, "to_dict", None)
    data = to_dict() if callable(to_dict) else dataclasses.asdict(structure)
    return dict(json_safe(data))


def _verdict(verdict: Any) -> tuple[str | None, dict[str, Any] | None]:
    """The class label and the whole verdict as JSON-safe data (None, None without one)."""
    if verdict is None:
        return None, None
    to_dict = getattr(verdict, "to_dict", None)
    detail = to_dict() if callable(to_dict) else dataclasses.asdict(verdict)
    return str(verdict.label), json_safe(detail)


def analyse_task(task: Task) -> MatrixResult:
    """Load the matrix, analyse it on every spec of ``task`` and flatten the rows."""
    start = time.perf_counter()
    matrix = load_source(task.source, max_memory=task.max_memory, values=False)
    first = analyze(matrix, task.specs[0], task.config)
    del matrix
    analyses = [first] + [
        with_reorderings(analyze_structure(first.matrix, first.structure, s, task.config,
                                           first.verdict), first.reorderings, s, task.config)
        for s in task.specs[1:]]
    label, verdict = _verdict(first.verdict)
    specs = tuple(
        SpecResult(a.spec, h, a.device, tuple(records([a])))
        for a, h in zip(analyses, task.spec_hashes, strict=True))
    return MatrixResult(
        key=task.key, config=dataclasses.asdict(task.config),
        info=dataclasses.asdict(first.matrix), structure=_structure_dict(first.structure),
        class_label=label, verdict=verdict, specs=specs,
        seconds=time.perf_counter() - start)


def warm_up(config: Config) -> None:
    """Analyse a small generated matrix under ``config`` once.

    The first analysis in a process loads (or compiles) the compiled kernels it needs,
    which takes about a second; a worker does it before taking work so that no matrix's
    ``--timeout`` pays for it.
    """
    from ..hardware.library import bundled_names, load_spec
    from ..matrix.generate import stencil_2d
    from ..matrix.mtx import Header, Matrix

    g = stencil_2d(8)
    header = Header("warm-up", "coordinate", "real", "general", g.rows, g.cols, g.nnz)
    matrix = Matrix("warm-up", "warm-up", g.rows, g.cols, g.row, g.col, g.values, header)
    # a bundled spec may lack a roof this config needs; each matrix then reports it
    with contextlib.suppress(SparsroofError):
        analyze(matrix, load_spec(bundled_names()[0]), config)


def run_one(task: Task, work: Callable[[Task], MatrixResult] = analyse_task) -> TaskOutcome:
    """Run ``work`` on ``task`` and turn every way it can end into an :class:`TaskOutcome`.

    A bad file (a :class:`SparsroofError`) is a failure of kind ``error``; running out of
    memory is ``memory``. Any other exception is a bug in sparsroof: it is recorded with
    its traceback as kind ``bug`` so that one matrix cannot stop a batch of thousands.
    """
    base = TaskOutcome(task.key, task.source.name, 0)
    try:
        result = work(task)
        return dataclasses.replace(base, result=result,
                                   entries=int(result.info["stored_entries"]))
    except SparsroofError as err:
        problem = err.problem if isinstance(err, MatrixFileError) else str(err)
        return dataclasses.replace(base, kind="error", reason=problem)
    except MemoryError:
        return dataclasses.replace(base, kind="memory", reason="ran out of memory")
    except Exception as err:  # noqa: BLE001 - recorded with its traceback, see docstring
        text = "".join(traceback.format_exception(err)).strip()
        return dataclasses.replace(base, kind="bug", reason=f"internal error: {text}")
