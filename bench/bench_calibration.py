"""Calibrated CSR SpMV prediction against fresh measurements, and runs that beat the bound.

Matrices: every corpus file with at least 50,000 stored entries, plus generated matrices
of each class (banded, stencil, block, random, scale-free, DNN-like pruned). Each is timed
afresh (scipy CSR) in ROUNDS interleaved passes over all matrices (default 3), keeping
each matrix's fastest run, and predicted by the calibration.
Usage: python bench/bench_calibration.py SPEC.yaml CALIBRATION.json [ROUNDS]
(prints a Markdown table)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

from sparsroof.hardware.library import load_spec
from sparsroof.host.bench import bench
from sparsroof.host.calibration import load as load_calibration
from sparsroof.host.memory_roofs import with_roofs
from sparsroof.matrix.mtx import Header, Matrix, load
from sparsroof.structure.features import measure

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _matrix(name: str, n: int, row: np.ndarray, col: np.ndarray) -> Matrix:
    keep = (col >= 0) & (col < n)
    key = np.sort(row[keep] * n + col[keep])  # sort based: np.unique hashes slowly
    key = key[np.concatenate([[True], key[1:] != key[:-1]])]
    r, c = key // n, key % n
    return Matrix(name, name, n, n, r, c, np.ones(r.size),
                  Header(name, "coordinate", "real", "general", n, n, r.size))


def generated() -> list[Matrix]:
    rng = np.random.default_rng(11)
    out = []
    for n in (20_000, 60_000, 200_000, 1_000_000):
        w = 5
        row = np.repeat(np.arange(n), 2 * w + 1)
        out.append(_matrix(f"banded_{n}", n, row, row + np.tile(np.arange(-w, w + 1), n)))
        g = int(np.sqrt(n))
        i = np.arange(g * g)
        row = np.repeat(i, 5)
        col = row + np.tile([0, 1, -1, g, -g], g * g)
        out.append(_matrix(f"stencil_{g * g}", g * g, row, col))
        nb = n // 4
        br = np.repeat(np.arange(nb), 3)
        bc = np.clip(br + rng.integers(-50, 51, br.size), 0, nb - 1)
        rr, cc = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
        out.append(_matrix(f"block4_{n}", n, (br[:, None] * 4 + rr.ravel()).ravel(),
                           (bc[:, None] * 4 + cc.ravel()).ravel()))
        row = rng.integers(0, n, 8 * n)
        out.append(_matrix(f"random_{n}", n, row, rng.integers(0, n, row.size)))
        deg = np.minimum((rng.pareto(1.2, n) + 1).astype(np.int64) * 2, n // 10)
        row = np.repeat(np.arange(n), deg)
        hub = (rng.pareto(1.2, row.size) * 10).astype(np.int64) % n
        out.append(_matrix(f"scalefree_{n}", n, row, hub))
    for k in (512, 2048):
        mask = rng.random((k, k)) < 0.2
        r, c = np.nonzero(mask)
        out.append(_matrix(f"pruned_{k}", k, r, c))
    return out


def corpus() -> list[Matrix]:
    out = []
    for p in sorted(CORPUS.glob("*")):
        if p.suffix not in (".mtx", ".smtx", ".gz") or p.name.startswith(("bad", "invalid")):
            continue
        try:
            m = load(p)
        except Exception:  # noqa: BLE001 - malformed corpus files are skipped here
            continue
        if m.stored_entries >= 50_000:
            out.append(m)
    return out


def main() -> None:
    spec_path, cal_path = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    cal = load_calibration(cal_path)
    spec = with_roofs(load_spec(spec_path), cal.roofs, "calibration")
    matrices = corpus() + generated()
    structures = [measure(m) for m in matrices]
    predicted = [cal.predict_matrix(m, s, ["csr"])["csr"]
                 for m, s in zip(matrices, structures, strict=True)]
    runs: list[list] = [[] for _ in matrices]
    for r in range(rounds):
        for i, (m, s) in enumerate(zip(matrices, structures, strict=True)):
            runs[i].append(bench(m, s, spec, formats=["csr"])[0])
        print(f"round {r + 1} of {rounds} done", file=sys.stderr)
    rows, errs, beats = [], [], 0
    for m, pred, mine in zip(matrices, predicted, runs, strict=True):
        best = min(mine, key=lambda run: run.timing.min_s)
        t = best.timing.min_s
        err = best.error_of(pred)
        assert err is not None
        errs.append(err)
        beats += any(run.beats_bound for run in mine)
        median = statistics.median(run.timing.median_s for run in mine)
        rows.append(f"| {m.name[:40]} | {m.stored_entries:,} | {t * 1e6:.1f} | "
                    f"{median * 1e6:.1f} | {pred * 1e6:.1f} | {100 * err:.1f} | "
                    f"{best.sol_s * 1e6:.1f} ({best.memory_level}) | "
                    f"{'YES' if any(run.beats_bound for run in mine) else 'no'} |")
    print("| matrix | entries | best us | median us | predicted us | error % | SoL us (roof) "
          "| beats bound |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print(f"\n{len(errs)} matrices: median |error| {100 * statistics.median(errs):.1f} %, "
          f"worst {100 * max(errs):.1f} %; measurements faster than the bound: {beats} "
          f"({100 * beats / len(errs):.0f} %)")


if __name__ == "__main__":
    main()
