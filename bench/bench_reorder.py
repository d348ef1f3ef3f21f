"""What ``analyze --reorder rcm`` costs on a shuffled 2-D Laplacian, against its parts.

The grid's rows and columns are shuffled alike (so nothing comes in row order), then,
in-process, each part is timed: the structure pass (``measure``), scipy's reverse
Cuthill-McKee alone on a ready CSR pattern, the whole reordering (CSR pattern, RCM,
permuting the coordinates), and the analysis with and without ``reorder="rcm"``.
The claim under test: the reordering adds no more than one structure pass plus scipy's
RCM. Usage: python bench/bench_reorder.py [GRID_SIDE]  (1415: about 10M entries)
"""

from __future__ import annotations

import sys
import time
from functools import partial

from common import OUT, median_seconds


def _shuffled(side: int) -> object:
    import numpy as np

    from sparsroof.matrix.generate import stencil_2d
    from sparsroof.matrix.mtx import Header, Matrix

    g = stencil_2d(side)
    new = np.random.default_rng(0).permutation(g.rows).astype(g.row.dtype)
    header = Header("shuffled", "coordinate", "real", "general", g.rows, g.cols, g.nnz)
    return Matrix("shuffled", str(OUT / "shuffled"), g.rows, g.cols, new[g.row], new[g.col],
                  g.values, header)


def main() -> None:
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 1415
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    from sparsroof.analysis import analyze
    from sparsroof.hardware.library import load_spec
    from sparsroof.structure.features import measure
    from sparsroof.structure.reorder import reorder

    m = _shuffled(side)
    spec = load_spec("c2050")
    csr = sp.csr_matrix((m.values, (m.row, m.col)), shape=m.shape)
    parts = {
        "structure pass (measure)": lambda: measure(m),
        "scipy RCM alone (ready CSR)": lambda: reverse_cuthill_mckee(csr, symmetric_mode=False),
        "reorder(m, 'rcm') whole": lambda: reorder(m, "rcm"),
        "analyze": lambda: analyze(m, spec),
        "analyze reorder='rcm'": lambda: analyze(m, spec, reorder="rcm"),
    }
    print(f"shuffled {side} x {side} grid Laplacian: {m.stored_entries:,} entries")
    cpu = partial(median_seconds, clock=time.process_time)
    for label, timer in (("wall", median_seconds), ("cpu", cpu)):
        times = {name: timer(fn, repeat=3) for name, fn in parts.items()}
        for name, t in times.items():
            print(f"{name:30s} {label} median {t:7.3f} s")
        extra = times["analyze reorder='rcm'"] - times["analyze"]
        allowed = times["structure pass (measure)"] + times["scipy RCM alone (ready CSR)"]
        print(f"{'added by --reorder rcm':30s} {label}        {extra:7.3f} s  "
              f"(one structure pass + scipy RCM: {allowed:.3f} s)")


if __name__ == "__main__":
    main()
