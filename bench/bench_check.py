"""`sparsroof check` against `sparsroof analyze` on the same large matrix.

The budget has two checks naming the same matrix (SpMV, and SpMM at four widths), so the
run loads the file once and models it twice; analyze models the SpMM widths once. Both are
timed as whole commands. Usage: python bench/bench_check.py [NNZ]
"""

from __future__ import annotations

import sys

from common import OUT, command, generated_matrix, median_seconds

BUDGET = """\
defaults: {{hw: a100, model: compulsory}}
checks:
  - name: spmv
    matrices: {name}
    limits: {{max_sol_latency: 1 s, expected_bound: memory}}
  - name: spmm
    matrices: {name}
    kernel: spmm
    widths: [1, 4, 16, 64]
    limits: {{max_sol_latency: 1 s, min_attainable: 1 GFLOP/s}}
"""


def main() -> None:
    nnz = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    path = generated_matrix(nnz)
    budget = OUT / f"budget_{path.stem}.yaml"
    budget.write_text(BUDGET.format(name=path.name))
    analyze = median_seconds(command("-m", "sparsroof", "analyze", str(path), "--kernel",
                                     "spmm", "--d", "1,4,16,64", "--output", "json"))
    check = median_seconds(command("-m", "sparsroof", "check", str(budget), "--json"))
    print(f"matrix: {path} ({nnz:,} entries requested)")
    print(f"sparsroof analyze (command) median {analyze:.3f} s")
    print(f"sparsroof check (command)   median {check:.3f} s")
    print(f"ratio check / analyze: {check / analyze:.2f}x")


if __name__ == "__main__":
    main()
