"""Mutation fuzzing of ``sparsroof.matrix.mtx.load``, each case in a child process.

Mutated copies of generated files and of the shared corpus (where present) are loaded one
by one in a forked child, both ways (with the values, and without them as an analysis
reads a file: the C structure-only read, then the full parser where it gives up), so
that a native crash (a signal) is counted instead of ending the run. Each child runs
under an address-space limit and an alarm. Prints the counts of
results, clean errors (SparsroofError), uncaught exceptions, wrong results (a matrix with
indices outside its shape), native crashes and hangs, and keeps every case of the last
four kinds in bench/out/fuzz/ to replay.

Usage: python bench/fuzz_load.py [CASES] [SEED]      (default 10000 cases, seed 0)
"""

from __future__ import annotations

import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from common import OUT, ROOT

sys.path.insert(0, str(ROOT))
from sparsroof.errors import SparsroofError  # noqa: E402
from sparsroof.matrix.mtx import load  # noqa: E402
from tests.mutate import GENERATED, corpus_seeds, mutate, write_case  # noqa: E402

KINDS = ("result", "clean error", "uncaught exception", "wrong result", "native crash",
         "hang")
MAX_MEMORY = 256 << 20  # --max-memory of every case
ADDRESS_SPACE = 4 << 30  # ulimit -v of every child: a blow-up fails, not the machine
ALARM = 30  # seconds before a case counts as a hang


def _child(path: Path, report: Path) -> None:
    """Load ``path`` and exit with the index of its kind in KINDS."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.alarm(ALARM)
    try:
        for values in (True, False):
            m = load(path, max_memory=MAX_MEMORY, values=values)
            bad = m.row.size and not (0 <= m.row.min() <= m.row.max() < m.rows
                                      and 0 <= m.col.min() <= m.col.max() < m.cols)
            if bad or m.row.shape != m.col.shape:
                report.write_text(f"values={values}: shape {m.shape}, rows {m.row[:5]}, "
                                  f"cols {m.col[:5]}\n")
                os._exit(3)
        os._exit(0)
    except SparsroofError as err:
        os._exit(1 if "\n" not in str(err) else 2)
    except BaseException:  # noqa: BLE001 - counted and kept, that is the point
        report.write_text(traceback.format_exc())
        os._exit(2)


def run_case(path: Path, report: Path) -> str:
    pid = os.fork()
    if pid == 0:
        _child(path, report)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "hang" if os.WTERMSIG(status) == signal.SIGALRM else "native crash"
    return KINDS[min(os.WEXITSTATUS(status), 2)] if os.WEXITSTATUS(status) != 3 \
        else "wrong result"


def main(cases: int, seed: int) -> int:
    seeds = {**GENERATED, **corpus_seeds()}
    names = sorted(seeds)
    keep = OUT / "fuzz"
    keep.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for i in range(cases):
            rng = random.Random(seed * 1_000_003 + i)
            name = rng.choice(names)
            path = write_case(Path(folder) / name, mutate(rng, seeds[name]), rng)
            report = Path(folder) / "report.txt"
            kind = run_case(path, report)
            counts[kind] += 1
            if kind not in ("result", "clean error"):
                saved = keep / f"case{i:05d}_{kind.replace(' ', '_')}_{name}"
                saved.write_bytes(path.read_bytes())
                if report.exists():
                    saved.with_name(saved.name + ".txt").write_text(report.read_text())
            report.unlink(missing_ok=True)
            path.unlink()
    seconds = time.perf_counter() - start
    print(f"{cases} cases from {len(names)} seed files (seed {seed}) in {seconds:.0f} s")
    for kind in KINDS:
        print(f"  {kind:20s} {counts[kind]:6d}")
    return 0 if all(counts[k] == 0 for k in KINDS[2:]) else 1


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    sys.exit(main(*(args + [10_000, 0][len(args):])))
