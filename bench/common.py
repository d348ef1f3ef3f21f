"""Shared helpers for the benchmarks: generated inputs and median timing."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
ROOT = OUT.parent.parent
sys.path.insert(0, str(ROOT))  # benchmark this checkout's package, not an installed one


def median_seconds(fn: Callable[[], object], repeat: int = 5,
                   clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time of ``repeat`` calls of ``fn`` (after one warm-up call) by ``clock``:
    wall time, or ``time.process_time`` for this process's CPU time, all threads."""
    fn()
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


def command(*args: str) -> Callable[[], object]:
    """A callable that runs ``python args...`` and fails loudly on a non-zero exit."""
    def run() -> object:
        return subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL,
                              cwd=ROOT)
    return run


def generated_matrix(nnz: int = 10_000_000, rows: int = 1_000_000, seed: int = 1) -> Path:
    """A real general uniformly random matrix with about ``nnz`` entries, cached in bench/out."""
    from sparsroof.matrix.generate import uniform_random, write

    path = OUT / f"random_{rows}_{nnz}.mtx"
    if not path.exists():
        OUT.mkdir(exist_ok=True)
        write(uniform_random(rows, rows, nnz, seed=seed), path)
    return path
