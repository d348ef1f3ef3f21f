"""`sparsroof analyze` against the bare fast_matrix_market load of the same file.

Both are timed as whole commands (a fresh interpreter each time, as a user runs them) and
the bare load also in-process. Usage: python bench/bench_analyze.py [NNZ [CALIBRATION]]
(with a calibration file from ``sparsroof calibrate``, also the default analyze with it)
"""

from __future__ import annotations

import sys

from common import command, generated_matrix, median_seconds


def main() -> None:
    nnz = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    path = str(generated_matrix(nnz))
    import fast_matrix_market as fmm

    inproc = median_seconds(lambda: fmm.read_coo(path))
    bare = median_seconds(command("-c", f"import fast_matrix_market as f; f.read_coo({path!r})"))
    # CSR with the two B extremes needs only counts; the default also classifies
    extremes = median_seconds(command("-m", "sparsroof", "analyze", path, "--kernel", "spmm",
                                      "--d", "1,4,16,64", "--model", "compulsory,random",
                                      "--output", "json"))
    analyze = median_seconds(command("-m", "sparsroof", "analyze", path, "--kernel", "spmm",
                                     "--d", "1,4,16,64", "--output", "json"))
    print(f"matrix: {path} ({nnz:,} entries requested)")
    print(f"bare load in-process        median {inproc:.3f} s")
    print(f"bare load as a command      median {bare:.3f} s")
    print(f"analyze --model compulsory,random  median {extremes:.3f} s "
          f"({extremes / bare:.2f}x the bare command load, target <= 1.5x)")
    print(f"analyze (default: classify, class model, cache-aware, band) median {analyze:.3f} s "
          f"({analyze / bare:.2f}x)")
    if len(sys.argv) > 2:
        calibrated = median_seconds(command("-m", "sparsroof", "analyze", path, "--kernel",
                                            "spmm", "--d", "1,4,16,64", "--output", "json",
                                            "--calibration", sys.argv[2]))
        print(f"analyze --calibration       median {calibrated:.3f} s ({calibrated / bare:.2f}x; "
              f"+{calibrated - analyze:.3f} s for the predicted times)")


if __name__ == "__main__":
    main()
