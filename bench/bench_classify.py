"""All structure features plus the verdict against the bare load of the same file.

Both in-process on a uniformly random 10-million-entry matrix (the case with the least
locality, so the marker arrays miss cache the most). The first measure() of a fresh
environment compiles the kernels; that cold time is reported apart, once.
Usage: python bench/bench_classify.py [NNZ]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

from common import generated_matrix, median_seconds  # noqa: E402


def main() -> None:
    nnz = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    path = str(generated_matrix(nnz))
    import fast_matrix_market as fmm

    from sparsroof.matrix.mtx import load
    from sparsroof.structure.classify import classify
    from sparsroof.structure.features import measure

    matrix = load(path)
    start = time.perf_counter()
    classify(measure(matrix))
    first = time.perf_counter() - start
    bare = median_seconds(lambda: fmm.read_coo(path))
    features = median_seconds(lambda: classify(measure(matrix)))
    print(f"matrix: {path} ({matrix.stored_entries:,} entries)")
    print(f"first measure+classify (compile or cache load) {first:.3f} s")
    print(f"bare load (fast_matrix_market)  median {bare:.3f} s")
    print(f"features + verdict              median {features:.3f} s")
    print(f"ratio features / load: {features / bare:.2f}x (target <= 1.0x)")


if __name__ == "__main__":
    main()
