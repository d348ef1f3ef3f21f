"""Running a batch plan: a pool of worker processes, or a Dask cluster.

Local workers are long-lived processes, each fed one matrix at a time over a pipe. The
parent starts a matrix only while the planned peak memory of everything in flight stays
within the budget, kills a worker that runs past ``timeout`` and replaces one that dies.
Each result is committed to the store as it arrives.

Before a matrix starts, this process claims it in the store
(:meth:`~sparsroof.batch.store.Store.claim`): a matrix another live batch process works
on waits, and is claimed again every :data:`CLAIM_POLL_S` once nothing else is left, until
that process has stored it (or died, and the claim passes here). So batches sharing a
store share the work, and each ends when every matrix of its plan is stored.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from ..analysis import Config
from ..errors import BatchError
from ..passes.arrays import one_thread
from ..units import binary
from .plan import Plan, Task, TaskOutcome, analyse_task, run_one, warm_up
from .store import MatrixResult, Store

__all__ = ["CLAIM_POLL_S", "RunCounts", "next_fitting", "run_plan"]

Work = Callable[[Task], MatrixResult]
Claim = Callable[[Task], str]
_READY = "ready"
#: seconds between two tries to claim the matrices other processes hold
CLAIM_POLL_S = 1.0


@dataclass
class RunCounts:
    """Counts of one batch run; ``failures`` lists (label, kind, reason) of new failures."""

    analysed: int = 0
    elsewhere: int = 0  # stored by another process sharing the store
    entries: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, str, str]] = field(default_factory=list)


def next_fitting(pending: Sequence[Task], in_flight: int, budget: int) -> int | None:
    """Index of the first pending task whose memory fits beside ``in_flight`` bytes.

    When nothing is in flight the first task always runs (planning left out every task
    larger than the budget), so the batch cannot stall.

    >>> from types import SimpleNamespace as T
    >>> next_fitting([T(memory=8), T(memory=3)], in_flight=5, budget=10)
    1
    >>> next_fitting([T(memory=8)], in_flight=5, budget=10) is None
    True
    """
    for i, task in enumerate(pending):
        if in_flight == 0 or in_flight + task.memory <= budget:
            return i
    return None


def _worker_main(conn: Connection, work: Work, config: Config | None,
                 alone_on_core: bool = False) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    if alone_on_core:  # as many workers as cores: a second thread would take another's
        one_thread()
    if config is not None:
        warm_up(config)
    conn.send(_READY)  # timeouts count from here, not from the (slow) process start
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            conn.send(run_one(task, work))
        except (BrokenPipeError, OSError):
            return


class _Worker:
    def __init__(self, ctx: Any, work: Work, config: Config | None,
                 alone_on_core: bool = False) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, work, config, alone_on_core),
                                daemon=True)
        self.proc.start()
        child.close()
        self.task: Task | None = None
        self.started = 0.0
        self.ready = False

    def start(self, task: Task) -> None:
        self.task, self.started = task, time.monotonic()
        self.conn.send(task)

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        hint = " (possibly out of memory)" if name == "SIGKILL" else ""
        return f"worker process was killed by {name}{hint}"
    return f"worker process exited with status {exitcode}"


class _Local:
    """The local pool's scheduling loop."""

    def __init__(self, plan: Plan, workers: int, timeout: float | None, work: Work,
                 record: Callable[[TaskOutcome], None], claim: Claim) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.pending = sorted(plan.tasks, key=lambda t: t.memory, reverse=True)
        self.held: list[Task] = []  # claimed by other live processes
        self.retry_at = 0.0
        self.budget, self.timeout, self.work, self.record = plan.budget, timeout, work, record
        self.claim = claim
        self.config = self.pending[0].config if self.pending else None
        size = max(1, min(workers, len(self.pending)))
        self.pool = [_Worker(self.ctx, work, self.config, size >= _cores())
                     for _ in range(size)]

    def run(self) -> None:
        try:
            while self.pending or self.held or any(w.task for w in self.pool):
                if not self.pending and self.held and time.monotonic() >= self.retry_at:
                    self.pending, self.held = self.held, []
                self._dispatch()
                self._collect()
        finally:
            for w in self.pool:
                w.kill()

    def _next(self, in_flight: int) -> Task | None:
        """The next pending task that fits the budget and that this process could claim."""
        while (i := next_fitting(self.pending, in_flight, self.budget)) is not None:
            task = self.pending.pop(i)
            state = self.claim(task)
            if state == "ours":
                return task
            if state == "busy":
                self.held.append(task)
                self.retry_at = time.monotonic() + CLAIM_POLL_S
        return None

    def _dispatch(self) -> None:
        for w in self.pool:
            if w.ready and w.task is None and self.pending:
                task = self._next(sum(x.task.memory for x in self.pool if x.task))
                if task is None:
                    return
                try:
                    w.start(task)
                except OSError:  # the idle worker died: record and replace it
                    w.proc.join()
                    self._fail(w, "crash", _death(w.proc.exitcode))

    def _replace(self, w: _Worker) -> None:
        w.kill()
        self.pool[self.pool.index(w)] = _Worker(self.ctx, self.work, self.config)

    def _fail(self, w: _Worker, kind: str, reason: str) -> None:
        task = w.task
        if task is None:  # it died before taking any work: it will not do better next time
            raise BatchError(f"a worker process could not start ({reason})")
        self.record(TaskOutcome(task.key, task.source.name, 0, kind=kind,
                            reason=reason))
        self._replace(w)

    def _collect(self) -> None:
        watched = [w for w in self.pool if w.task or not w.ready]
        busy = [w for w in watched if w.task]
        now = time.monotonic()
        ends = [w.started + self.timeout for w in busy] if self.timeout else []
        if self.held and not self.pending:
            ends.append(self.retry_at)
        wait_s = max(0.0, min(ends) - now) if ends else None
        if watched or wait_s is not None:
            wait([w.conn for w in watched] + [w.proc.sentinel for w in watched],
                 timeout=wait_s)
        now = time.monotonic()
        finished = []
        for w in watched:
            if w.conn.poll():
                try:
                    message = w.conn.recv()
                except (EOFError, OSError):
                    w.proc.join()
                    self._fail(w, "crash", _death(w.proc.exitcode))
                    continue
                if message == _READY:
                    w.ready = True
                else:
                    w.task = None
                    finished.append(message)
            elif not w.proc.is_alive():
                w.proc.join()
                self._fail(w, "crash", _death(w.proc.exitcode))
            elif w.task and self.timeout and now - w.started >= self.timeout:
                self._fail(w, "timeout", f"timed out after {self.timeout:g} s")
        if finished:  # the idle workers take their next matrix before the store is written
            self._dispatch()
        for message in finished:
            self.record(message)


def _run_with_deadline(task: Task, work: Work, timeout: float | None) -> TaskOutcome:
    """On a Dask worker: run ``task``; past ``timeout`` report a timeout.

    A thread cannot be stopped: the abandoned analysis keeps the worker's thread busy
    until it ends. Local worker processes, in contrast, are killed on timeout.
    """
    if not timeout:
        return run_one(task, work)
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(run_one, task, work).result(timeout=timeout)
    except FutureTimeout:
        return TaskOutcome(task.key, task.source.name, 0, kind="timeout",
                       reason=f"timed out after {timeout:g} s")
    finally:
        pool.shutdown(wait=False)


def _dask_client(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise BatchError("--scheduler needs Dask: pip install 'sparsroof[dask]'") from None
    try:
        return Client(address, timeout="15s")
    except (OSError, TimeoutError) as err:
        raise BatchError(f"cannot reach the Dask scheduler at {address}: {err}") from None
    except (ValueError, TypeError) as err:
        raise BatchError(f"--scheduler {address!r} is not a Dask scheduler address such as "
                         f"tcp://host:8786: {err}") from None


def _run_dask(plan: Plan, address: str, timeout: float | None, work: Work,
              record: Callable[[TaskOutcome], None], claim: Claim) -> None:
    """Send every task this process can claim; those other processes hold are claimed
    again once the rest are done, until none is left."""
    with _dask_client(address) as client:
        limits = [w.get("memory_limit") or 0
                  for w in client.scheduler_info()["workers"].values()]
        largest = max(limits, default=0)
        tasks: list[Task] = []
        for task in plan.tasks:
            if largest and task.memory > largest:
                record(TaskOutcome(task.key, task.source.name, 0, kind="memory",
                               reason=f"needs about {binary(task.memory)}, no Dask "
                               f"worker has more than {binary(largest)}"))
            else:
                tasks.append(task)
        while tasks:
            states = [claim(t) for t in tasks]
            _run_dask_round(client, [t for t, s in zip(tasks, states, strict=True)
                                     if s == "ours"], timeout, work, record)
            tasks = [t for t, s in zip(tasks, states, strict=True) if s == "busy"]
            if tasks:
                time.sleep(CLAIM_POLL_S)


def _run_dask_round(client: Any, tasks: list[Task], timeout: float | None, work: Work,
                    record: Callable[[TaskOutcome], None]) -> None:
    from distributed import as_completed

    futures = {client.submit(_run_with_deadline, t, work, timeout, pure=False): t
               for t in tasks}
    for future in as_completed(list(futures)):
        task = futures.pop(future)
        if future.status == "finished":
            record(future.result())
        else:
            record(TaskOutcome(task.key, task.source.name, 0, kind="crash",
                           reason=f"Dask task failed: {future.exception()}"))


class _Recorder:
    """Writes outcomes to the store and keeps the counts and the progress display."""

    def __init__(self, store: Store, run_id: int, summary: RunCounts, progress: Any) -> None:
        self.store, self.run_id, self.summary, self.progress = store, run_id, summary, progress

    def __call__(self, outcome: TaskOutcome) -> None:
        if outcome.result is not None:
            self.store.save(outcome.result, self.run_id)
            self.summary.analysed += 1
            self.summary.entries += outcome.entries
        else:
            self.store.record_failure(outcome.key, outcome.name, outcome.kind, outcome.reason,
                                      self.run_id)
            label = f"{outcome.key.path}::{outcome.key.member}" if outcome.key.member \
                else outcome.key.path
            self.summary.failures.append((label, outcome.kind, outcome.reason))
            if outcome.kind == "bug":
                print(f"sparsroof: error: {label}: {outcome.reason}", file=sys.stderr)
        if self.progress is not None:
            self.progress.advance(outcome, len(self.summary.failures))


def run_plan(plan: Plan, store: Store, run_id: int, *, workers: int = 1,
             timeout: float | None = None, scheduler: str | None = None,
             work: Work = analyse_task, progress: Any = None) -> RunCounts:
    """Run every task of ``plan``, committing each matrix's rows or its failure; a task
    that another process sharing the store has stored meanwhile counts as ``elsewhere``."""
    summary = RunCounts()
    record = _Recorder(store, run_id, summary, progress)
    since = time.time()

    def claim(task: Task) -> str:
        state = store.claim(task.key, task.spec_hashes, since, run_id)
        if state == "done":
            summary.elsewhere += 1
            if progress is not None:
                progress.advance(TaskOutcome(task.key, task.source.name, 0),
                                 len(summary.failures))
        return state

    for planned in plan.others:
        if planned.status in ("error", "memory", "bug"):
            record(TaskOutcome(planned.key, planned.source.name, 0, kind=planned.status,
                           reason=planned.reason))
    start = time.perf_counter()
    if scheduler:
        _run_dask(plan, scheduler, timeout, work, record, claim)
    elif plan.tasks:
        _Local(plan, workers, timeout, work, record, claim).run()
    summary.seconds = time.perf_counter() - start
    return summary
