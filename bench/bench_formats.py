"""The format advisor's partition: per-strip counts and the dynamic program, in-process.

Two inputs: the generated uniformly random 10M-entry matrix with the strip size a CPU spec
gives it, and a 1M-row five-point stencil cut into strips of 32 rows (31,250 strips, the
dynamic program's hard case). Also the whole ``sparsroof formats`` command on the random
matrix. Usage: python bench/bench_formats.py [NNZ]
"""

from __future__ import annotations

import sys

import numpy as np
from common import command, generated_matrix, median_seconds

from sparsroof.advisor.partition import partition, sol_models, strip_rows, strips
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import Header, Matrix, load


def stencil(side: int = 1000) -> Matrix:
    n = side * side
    i = np.arange(n)
    row = np.repeat(i, 5)
    col = row + np.tile([0, 1, -1, side, -side], n)
    keep = (col >= 0) & (col < n)
    row, col = row[keep], col[keep]
    return Matrix("stencil", "stencil", n, n, row, col, None,
                  Header("stencil", "coordinate", "pattern", "general", n, n, row.size))


def main() -> None:
    nnz = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    path = str(generated_matrix(nnz))
    spec = load_spec("epyc-7763")
    models = sol_models(spec, spec.dram.bandwidth.value, "fp64", 0)
    for name, m, size in (("random", load(path), None), ("stencil", stencil(), 32)):
        size = size or strip_rows(spec, 12.0 * m.stored_entries / m.rows)
        counted = strips(m, size)
        count_s = median_seconds(lambda m=m, size=size: strips(m, size), repeat=3)
        solve_s = median_seconds(lambda c=counted: partition(c, models, 8, 4), repeat=3)
        print(f"{name}: {m.stored_entries:,} entries, {counted.rows.size:,} strips of {size} "
              f"rows: counts median {count_s:.2f} s, dynamic program median {solve_s:.2f} s")
    whole = median_seconds(command("-m", "sparsroof", "formats", path, "--hw", "epyc-7763",
                                   "-O", "json"), repeat=3)
    print(f"sparsroof formats on the random matrix, as a command: median {whole:.2f} s")


if __name__ == "__main__":
    main()
