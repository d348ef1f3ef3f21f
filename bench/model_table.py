"""Markdown table of every B model's arithmetic intensity (CSR, fp64) for a few corpus
matrices at d = 1, 4, 16, 64, as printed in the README.

Usage: python bench/model_table.py [CORPUS_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

from sparsroof.analysis import Config, analyze
from sparsroof.hwspec import load_spec
from sparsroof.io import load
from sparsroof.traffic import MODELS

MATRICES = ("lap2D_5pt_n100.mtx", "bcsstk13.mtx", "netscience.mtx",
            "random_90_768_768.mtx")
WIDTHS = (1, 4, 16, 64)


def main() -> None:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus")
    spec = load_spec("a100")
    config = Config(kernel="spmm", widths=WIDTHS, models=MODELS)
    print("| matrix (class) | model | " + " | ".join(f"d={d}" for d in WIDTHS) + " |")
    print("|---|---|" + "---:|" * len(WIDTHS))
    for name in MATRICES:
        a = analyze(load(corpus / name), spec, config)
        label = f"{a.matrix.name} ({a.verdict.label})"
        for model in MODELS:
            ai = {r.traffic.width: r.traffic.intensity for r in a.results
                  if r.traffic.model == model}
            if not ai:
                continue
            cells = " | ".join(f"{ai[d]:.3f}" for d in WIDTHS)
            print(f"| {label} | {model} | {cells} |")


if __name__ == "__main__":
    main()
