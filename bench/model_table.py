"""Markdown table of every B model's arithmetic intensity (CSR, fp64) for a few corpus
matrices at d = 1, 4, 16, 64, as printed in the README. The cache-aware model depends on
the device's last-level cache: it is shown for the A100 (40 MiB L2) and the C2050
(768 KiB L2).

Usage: python bench/model_table.py [CORPUS_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

from sparsroof.analysis import Config, analyze
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import load
from sparsroof.model.traffic import MODELS

MATRICES = ("lap2D_5pt_n100.mtx", "bcsstk13.mtx", "netscience.mtx",
            "random_90_768_768.mtx")
WIDTHS = (1, 4, 16, 64)


def main() -> None:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus")
    spec, small = load_spec("a100"), load_spec("c2050")
    config = Config(kernel="spmm", widths=WIDTHS, models=MODELS)
    cache_only = Config(kernel="spmm", widths=WIDTHS, models=("cache-aware",))
    print("| matrix (class) | model | " + " | ".join(f"d={d}" for d in WIDTHS) + " |")
    print("|---|---|" + "---:|" * len(WIDTHS))
    for name in MATRICES:
        matrix = load(corpus / name)
        a = analyze(matrix, spec, config)
        label = f"{a.matrix.name} ({a.verdict.label})"
        rows = [(m, a, m) for m in MODELS]
        rows.append(("cache-aware", analyze(matrix, small, cache_only),
                     "cache-aware, 768 KiB L2 (c2050)"))
        for model, result, title in rows:
            ai = {r.traffic.width: r.traffic.intensity for r in result.results
                  if r.traffic.model == model}
            if not ai:
                continue
            cells = " | ".join(f"{ai[d]:.3f}" for d in WIDTHS)
            print(f"| {label} | {title} | {cells} |")


if __name__ == "__main__":
    main()
