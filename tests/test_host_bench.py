"""The bound holds on this host: real scipy SpMV runs over the shared corpus, none faster
than its speed-of-light bound.

This host's spec comes from the quick probe (triad bandwidth, cache capacities, the
derived compute peak) with every cache level's bandwidth measured
(:func:`sparsroof.host.memory_roofs.measure_roofs`). Each corpus matrix is run in CSR, COO,
CSC, ELL and HYB, and one generated 5-point stencil of ~10M entries adds a working set
several times the last-level cache (the corpus matrices all fit it). The tightness per memory level
(median measured / bound) is printed; ``pytest tests/test_host_bench.py -s`` shows it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from scipy.sparse import coo_array

from sparsroof.errors import SparsroofError
from sparsroof.hardware.library import parse_spec
from sparsroof.hardware.spec import HwSpec
from sparsroof.host.bench import Measurement, bench
from sparsroof.host.memory_roofs import measure_roofs, roof_rates, with_roofs
from sparsroof.host.probe import probe, spec_yaml
from sparsroof.matrix.generate import stencil_2d
from sparsroof.matrix.mtx import Matrix, load
from sparsroof.structure.features import measure

pytestmark = pytest.mark.slow

FORMATS = ("csr", "coo", "csc", "ell", "hyb")
#: a 1400 x 1400 grid: 9.8M entries, a CSR working set of ~157 MB
DRAM_GRID = 1400


@pytest.fixture(scope="module")
def host_spec() -> HwSpec:
    spec = parse_spec(yaml.safe_load(spec_yaml(probe(quick=True), "this-host")), "probe")
    return with_roofs(spec, roof_rates(measure_roofs(spec)), "measured by the test")


def _matrices(corpus: Path) -> Iterator[Matrix]:
    for path in sorted([*corpus.glob("*.mtx"), *corpus.glob("*.smtx")]):
        try:
            yield load(path)
        except SparsroofError:  # the corpus holds deliberately broken files too
            continue
    g = stencil_2d(DRAM_GRID)
    a = coo_array((g.values, (g.row, g.col)), shape=(g.rows, g.cols))
    yield Matrix.from_scipy(a, name=f"stencil_2d_{DRAM_GRID}")


def _runs(corpus: Path, spec: HwSpec) -> list[Measurement]:
    runs = []
    for m in _matrices(corpus):
        big = m.stored_entries > 1_000_000
        runs += [r for r in bench(m, measure(m, pattern=False), spec, formats=FORMATS,
                                  repeat=3, warmup=1 if big else 3,
                                  min_time=0.0 if big else 0.005) if r.timing]
    return runs


def tightness(runs: list[Measurement], levels: list[str]) -> dict[str, tuple[int, float]]:
    """Per memory level of the bound: (runs, median fastest-repetition / bound)."""
    out = {}
    for level in levels:
        ratios = [r.timing.min_s / r.sol_s for r in runs  # type: ignore[union-attr]
                  if r.memory_level == level and r.sol_s > 0]
        if ratios:
            out[level] = (len(ratios), statistics.median(ratios))
    return out


def test_no_run_on_this_host_beats_its_bound(corpus: Path, host_spec: HwSpec) -> None:
    runs = _runs(corpus, host_spec)
    faster = [f"{r.matrix} {r.storage}: {r.timing.min_s:.3g} s < bound {r.sol_s:.3g} s "  # type: ignore[union-attr]
              f"({r.bound}, {r.memory_level})" for r in runs if r.beats_bound]
    assert not faster, "runs faster than their bound:\n" + "\n".join(faster)
    levels = [lvl.name for lvl in host_spec.memory]
    bands = tightness(runs, levels)
    # every level of the hierarchy was exercised, DRAM by the generated stencil alone
    assert set(bands) >= {levels[0], levels[-1]}
    assert all(ratio >= 1.0 for _, ratio in bands.values())
    print(f"\n{len(runs)} runs ({', '.join(FORMATS)}) on {host_spec.device}; "
          "median measured/bound by the level that bound them:")
    for level, (n, ratio) in bands.items():
        print(f"  {level:>5}: {n:3d} runs, {ratio:.2f}x")
