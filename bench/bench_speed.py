"""The speed table: each command against its reference, run in turn, median ratios.

Every row times whole processes (a fresh interpreter each, as a user runs them). A row's
command (A) and its reference (B) run alternately, A B A B ..., and the ratio A/B is
taken pair by pair, so a machine whose speed drifts (other jobs, frequency) moves both
sides of a pair alike; the table prints the median of those ratios. Peak memory is the
child's own maximum resident set (``wait4``), also as a median ratio.

The inputs are made with ``sparsroof generate`` and kept in bench/out/: 10M-entry
general coordinate files (uniform random, a 2-D Laplacian, a power-law graph) and, for
the batch row, a folder of 40 matrices of 0.5-1M entries. The batch-at-scale row makes
500 small and 40 large matrices in the system's temporary folder (out of the checkout)
and prints, beside the ratio, the throughput in entries per CPU-second and the share of
the workers' time spent outside the analyses (planning, the store, start-up).

Usage: python bench/bench_speed.py [--runs N] [--only WORD[,WORD...]]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
ROOT = OUT.parent.parent
PY = sys.executable
SPARSROOF = [PY, "-m", "sparsroof"]

#: input name -> arguments of ``sparsroof generate`` (about 10M entries each, unless the
#: name says another size: 10 entries per row at every size)
INPUTS = {
    "random": ["random", "--rows", "1000000", "--cols", "1000000", "--nnz", "10000000",
               "--seed", "1"],
    "lap2d": ["stencil2d", "--n", "1415"],
    "powerlaw": ["powerlaw", "--n", "1000000", "--mean-degree", "10", "--seed", "1"],
    **{f"random {n}M": ["random", "--rows", str(n * 100_000), "--cols", str(n * 100_000),
                        "--nnz", str(n * 1_000_000), "--seed", "1"] for n in (1, 3, 30)},
}
#: input name -> (input, the key its entries are sorted by): the random input's entries
#: in row order (as generated), in column order (the order of the SuiteSparse
#: collection's files) and shuffled
SORTED = {"random by row": ("random", "row"), "random by column": ("random", "col"),
          "random shuffled": ("random", "shuffle")}


def _generate(args: list[str], path: Path) -> None:
    subprocess.run([*SPARSROOF, "generate", *args, "-o", str(path)], check=True, cwd=ROOT,
                   stderr=subprocess.DEVNULL)


def matrix(name: str) -> str:
    """The input ``name``, generated on first use."""
    stem = name.replace(" ", "_") if name[-1] == "M" else f"{name.replace(' ', '_')}_10m"
    path = OUT / f"{stem}.mtx"
    if not path.exists():
        OUT.mkdir(exist_ok=True)
        if name in SORTED:
            source, key = SORTED[name]
            _sort(matrix(source), key, path)
        else:
            _generate(INPUTS[name], path)
    return str(path)


def _sort(source: str, key: str, path: Path) -> None:
    """``source`` with its entries sorted by ``key`` (row or col, then the other index),
    or shuffled (``key`` shuffle)."""
    code = ("import sys, numpy as np, fast_matrix_market as f\n"
            "(v, (i, j)), shape = f.read_coo(sys.argv[1])\n"
            "k = sys.argv[2]\n"
            "o = (np.random.default_rng(1).permutation(i.size) if k == 'shuffle' else\n"
            "     np.lexsort((j, i) if k == 'row' else (i, j)))\n"
            "f.write_coo(sys.argv[3], (v[o], (i[o], j[o])), shape=shape)\n")
    subprocess.run([PY, "-c", code, source, key, str(path)], check=True, cwd=ROOT)


def batch_folder() -> str:
    """40 matrices of 0.5-1M entries (random, banded and power-law, mixed)."""
    folder = OUT / "batch40"
    if not (folder / "done").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(40):
            nnz = 500_000 + 12_500 * k
            args = [["random", "--rows", str(nnz // 8), "--cols", str(nnz // 8),
                     "--nnz", str(nnz), "--seed", str(k)],
                    ["banded", "--n", str(nnz // 7), "--halfwidth", "3"],
                    ["powerlaw", "--n", str(nnz // 10), "--seed", str(k)]][k % 3]
            _generate(args, folder / f"m{k:02d}.mtx")
        (folder / "done").touch()
    return str(folder)


def bare_load(path: str) -> list[str]:
    """The reference: fast_matrix_market's read_coo in its own process."""
    return [PY, "-c", f"import fast_matrix_market as f; f.read_coo({path!r})"]


def run_once(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak resident MiB) of one run of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024


@dataclass
class Row:
    what: str
    command: Callable[[], list[str]]
    reference: Callable[[], list[str]]
    goal: str

    def measure(self, runs: int) -> tuple[float, float, float, float]:
        """Median (wall ratio, peak ratio, A seconds, B seconds); the commands are made
        afresh for every run (which may reset state, untimed)."""
        run_once(self.command()), run_once(self.reference())  # warm-up: page cache, caches
        ratios, peaks, a_times, b_times = [], [], [], []
        for _ in range(runs):
            a, a_peak = run_once(self.command())
            b, b_peak = run_once(self.reference())
            ratios.append(a / b)
            peaks.append(a_peak / b_peak)
            a_times.append(a)
            b_times.append(b)
        return (statistics.median(ratios), statistics.median(peaks),
                statistics.median(a_times), statistics.median(b_times))


_NO_CACHE: dict[str, list[str]] = {}


def no_cache(command: str) -> list[str]:
    """``--no-cache`` where ``command`` has it (a checkout from before the cache has not)."""
    if command not in _NO_CACHE:
        text = subprocess.run([*SPARSROOF, command, "--help"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
        _NO_CACHE[command] = ["--no-cache"] if re.search(r"--no-cache(?![-\w])", text) else []
    return _NO_CACHE[command]


def _analyze(name: str, *extra: str) -> Callable[[], list[str]]:
    return lambda: [*SPARSROOF, "analyze", matrix(name), "--hw", "a100", "-O", "json",
                    *no_cache("analyze"), *extra]


def _cached() -> list[str]:
    """analyze against another spec, the matrix's structure in the cache already (and no
    answer of that command kept)."""
    subprocess.run([*SPARSROOF, "analyze", matrix("random"), "--hw", "a100", "-O", "json"],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    shutil.rmtree(OUT / "cache" / "answers", ignore_errors=True)
    return [*SPARSROOF, "analyze", matrix("random"), "--hw", "h100", "-O", "json"]


def _again() -> list[str]:
    """The same analysis again: its answer kept by the run before."""
    command = [*SPARSROOF, "analyze", matrix("random"), "--hw", "a100", "-O", "json"]
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return command


def _batch(workers: int) -> Callable[[], list[str]]:
    def cmd() -> list[str]:
        store = Path(tempfile.gettempdir()) / f"sparsroof-bench-batch-{workers}.db"
        store.unlink(missing_ok=True)
        return [*SPARSROOF, "batch", batch_folder(), "--hw", "a100", "--workers", str(workers),
                "--store", str(store), *no_cache("batch")]
    return cmd


def scale_folder() -> Path:
    """500 small matrices (2,000-20,000 entries) and 40 large ones (1-2M entries), in
    the temporary folder; (folder, total entries) kept in its ``done`` file."""
    folder = Path(tempfile.gettempdir()) / "sparsroof-bench-scale540"
    if not (folder / "done").exists():
        code = (
            "import sys\n"
            "from pathlib import Path\n"
            "from sparsroof.matrix.generate import banded, uniform_random, write\n"
            "root = Path(sys.argv[1]); total = 0\n"
            "for k in range(540):\n"
            "    big = k >= 500\n"
            "    nnz = 1_000_000 + 25_000 * (k - 500) if big else 2_000 + 36 * k\n"
            "    g = (uniform_random(nnz // 8, nnz // 8, nnz, seed=k) if k % 2 else\n"
            "         banded(nnz // 7, 3, seed=k))\n"
            "    sub = root / ('large' if big else f'small{k % 10}')\n"
            "    sub.mkdir(parents=True, exist_ok=True)\n"
            "    write(g, sub / f'm{k:03d}.mtx'); total += g.nnz\n"
            "(root / 'done').write_text(str(total))\n")
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([PY, "-c", code, str(folder)], check=True, cwd=ROOT)
    return folder


def _scale(workers: int) -> Callable[[], list[str]]:
    def cmd() -> list[str]:
        store = Path(tempfile.gettempdir()) / f"sparsroof-bench-scale-{workers}.db"
        store.unlink(missing_ok=True)
        return [*SPARSROOF, "batch", str(scale_folder()), "--hw", "a100", "--workers",
                str(workers), "--store", str(store), *no_cache("batch")]
    return cmd


class ScaleRow(Row):
    """The batch row at scale: besides the ratio, entries per CPU-second of each run and
    the share of the workers' wall time outside the analyses (1 - the analyses' own
    seconds, from the store, over workers x wall)."""

    def measure(self, runs: int) -> tuple[float, float, float, float]:
        result = super().measure(runs)
        for workers in (1, 2):
            wall, cpu = run_cpu(_scale(workers)())
            store = Path(tempfile.gettempdir()) / f"sparsroof-bench-scale-{workers}.db"
            with sqlite3.connect(store) as db:
                inside, entries = db.execute(
                    "SELECT sum(seconds), sum(stored_entries) FROM matrices").fetchone()
            print(f"  {workers} worker(s): {wall:.1f} s wall, {cpu:.1f} CPU-s, "
                  f"{entries / cpu / 1e6:.2f}M entries per CPU-second, "
                  f"{1 - inside / (workers * wall):.0%} of the workers' time outside the "
                  f"analyses", flush=True)
        return result


class CeilingRow(Row):
    """A batch row against the ceiling its single worker leaves: one worker whose load and
    passes keep c cores busy leaves two workers on this host's 2 cores at most 2 / c times
    its throughput. Besides the ratio, c, the ceiling and the share of it reached."""

    def measure(self, runs: int) -> tuple[float, float, float, float]:
        result = super().measure(runs)
        busy = statistics.median(cpu / wall for wall, cpu in
                                 (run_cpu(self.command()) for _ in range(3)))
        ceiling = (os.cpu_count() or 2) / max(busy, 1.0)
        print(f"  1 worker keeps {busy:.2f} cores busy: 2 workers can reach at most "
              f"{ceiling:.2f}x; reached {result[0]:.2f}x, {result[0] / ceiling:.0%} of it",
              flush=True)
        return result


def run_cpu(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its reaped children) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


ROWS = [
    Row("analyze random 10M / bare load", _analyze("random"), lambda: bare_load(matrix("random")),
        "<= 1.3x"),
    *(Row(f"analyze {name} / bare load", _analyze(name), lambda name=name: bare_load(matrix(name)),
          "<= 1.3x") for name in ("random by column", "random shuffled", "random 1M",
                                  "random 3M", "random 30M")),
    Row("analyze 2-D Laplacian 10M / bare load", _analyze("lap2d"),
        lambda: bare_load(matrix("lap2d")), "<= 1.3x"),
    Row("analyze power-law 10M / bare load", _analyze("powerlaw"),
        lambda: bare_load(matrix("powerlaw")), "<= 1.3x"),
    Row("analyze --storage all --model all / bare load",
        _analyze("random", "--storage", "all", "--model", "all"),
        lambda: bare_load(matrix("random")), "<= 1.6x"),
    Row("classify random 10M / bare load",
        lambda: [*SPARSROOF, "classify", matrix("random"), "-O", "json", *no_cache("classify")],
        lambda: bare_load(matrix("random")), "<= 1.2x"),
    Row("formats random 10M / bare load",
        lambda: [*SPARSROOF, "formats", matrix("random"), "--hw", "a100", "-O", "json",
                 *no_cache("formats")],
        lambda: bare_load(matrix("random")), "<= 2x, peak <= 1.5x"),
    Row("spy random 10M / analyze", lambda: [*SPARSROOF, "spy", matrix("random"), "-o",
                                              str(OUT / "spy.png")],
        _analyze("random"), "<= 1.3x"),
    Row("analyze --plot / analyze", _analyze("random", "--plot", str(OUT / "roofline.png")),
        _analyze("random"), "<= 1.3x"),
    Row("analyze --reorder rcm / analyze", _analyze("random", "--reorder", "rcm"),
        _analyze("random"), "<= 1.5x"),
    Row("sparsroof --help / python -c pass", lambda: [*SPARSROOF, "--help"],
        lambda: [PY, "-c", "pass"], "<= 0.15 s"),
    Row("analyze, the same command again / bare load", _again,
        lambda: bare_load(matrix("random")), "<= 0.1x"),
    Row("analyze, structure cached / bare load", _cached,
        lambda: bare_load(matrix("random")), "<= 0.1x"),
    CeilingRow("batch 40 x 0.5-1M: 1 worker / 2 workers", _batch(1), _batch(2),
               "the ceiling 1 worker leaves"),
    ScaleRow("batch 500 small + 40 large: 1 worker / 2 workers", _scale(1), _scale(2),
             ">= 1.4x"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="pairs of runs per row")
    parser.add_argument("--only", default="", help="rows whose name has one of these words")
    args = parser.parse_args()
    # the structure cache of these runs stays in bench/out, away from the user's own
    os.environ["SPARSROOF_CACHE_DIR"] = str(OUT / "cache")
    # an installed package runs from compiled bytecode: where the environment forbids
    # writing it, every run would compile sparsroof's modules afresh (0.1-0.2 s)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    words = [w for w in args.only.split(",") if w]
    print(f"{'row':48} {'time ratio':>10} {'peak ratio':>10} {'A s':>7} {'B s':>7}  goal")
    for row in ROWS:
        if words and not any(w in row.what for w in words):
            continue
        ratio, peak, a, b = row.measure(args.runs)
        print(f"{row.what:48} {ratio:9.2f}x {peak:9.2f}x {a:7.3f} {b:7.3f}  {row.goal}",
              flush=True)
    shutil.rmtree(OUT / "cache", ignore_errors=True)


if __name__ == "__main__":
    main()
