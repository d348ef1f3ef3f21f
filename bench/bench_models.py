"""`analyze --model all --storage all` against the bare fast_matrix_market load.

Both timed as whole commands (a fresh interpreter each, as a user runs them), medians of
5 runs after a warm-up. Usage: python bench/bench_models.py [NNZ]
"""

from __future__ import annotations

import sys

from common import command, generated_matrix, median_seconds


def main() -> None:
    nnz = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    path = str(generated_matrix(nnz))
    bare = median_seconds(command("-c", f"import fast_matrix_market as f; f.read_coo({path!r})"))
    default = median_seconds(command("-m", "sparsroof", "analyze", path, "--output", "json"))
    full = median_seconds(command("-m", "sparsroof", "analyze", path, "--model", "all",
                                  "--storage", "all", "--kernel", "spmm", "--d", "1,4,16,64",
                                  "--output", "json"))
    print(f"matrix: {path} ({nnz:,} entries requested)")
    print(f"bare load as a command                   median {bare:.3f} s")
    print(f"analyze (defaults)                       median {default:.3f} s "
          f"({default / bare:.2f}x)")
    print(f"analyze --model all --storage all, 4 d   median {full:.3f} s ({full / bare:.2f}x, "
          f"target <= 2x)")


if __name__ == "__main__":
    main()
