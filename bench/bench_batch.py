"""`sparsroof batch` throughput over a generated directory of matrices of varied sizes.

Times whole commands (a fresh interpreter, as a user runs them) with 1 and 2 workers,
each on an empty store, and the re-run with every matrix already in the store.
Usage: python bench/bench_batch.py [COUNT] [REPEAT]
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
from common import OUT, median_seconds


def matrix_dir(count: int) -> Path:
    """``count`` matrices, half uniformly random and half 2-D stencils, sizes log-spread."""
    from sparsroof.matrix.generate import stencil_2d, uniform_random, write

    root = OUT / f"batch_{count}"
    if (root / "done").exists():
        return root
    half = count // 2
    for i, nnz in enumerate(np.geomspace(1_000, 300_000, half).astype(int)):
        rows = max(100, int(nnz) // 8)
        sub = root / "random" / f"g{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        write(uniform_random(rows, rows, int(nnz), seed=i), sub / f"random_{i:03d}.mtx")
    for i, n in enumerate(np.geomspace(14, 245, count - half).astype(int)):
        sub = root / "stencil" / f"g{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        write(stencil_2d(int(n)), sub / f"lap2d_{i:03d}_{n}.mtx")
    (root / "done").touch()
    return root


def batch(root: Path, store: Path, workers: int, fresh: bool) -> None:
    if fresh:
        for p in store.parent.glob(store.name + "*"):
            p.unlink()
    subprocess.run([sys.executable, "-m", "sparsroof", "batch", str(root), "--store",
                    str(store), "-j", str(workers)], check=True, stderr=subprocess.DEVNULL)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    root = matrix_dir(count)
    store = OUT / "bench_batch.db"
    times = {w: median_seconds(lambda w=w: batch(root, store, w, fresh=True), repeat)
             for w in (1, 2)}
    cached = median_seconds(lambda: batch(root, store, 2, fresh=False), repeat)
    with sqlite3.connect(store) as con:
        matrices, entries = con.execute(
            "SELECT COUNT(*), SUM(stored_entries) FROM matrices").fetchone()
    print(f"{matrices} matrices, {entries:,} stored entries in {root}")
    for w, t in times.items():
        print(f"{w} worker(s): median {t:.2f} s  {matrices / t:.1f} matrices/s  "
              f"{entries / t / 1e6:.2f} M nonzeros/s")
    print(f"speed-up 2 workers / 1 worker: {times[1] / times[2]:.2f}x")
    print(f"re-run with everything in the store: median {cached:.2f} s")


if __name__ == "__main__":
    main()
