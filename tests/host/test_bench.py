"""The bound holds on this host: real scipy SpMV runs over the shared corpus, none faster
than its speed-of-light bound.

This host's spec comes from the quick probe (triad bandwidth, cache capacities, the
derived compute peak) with every cache level's bandwidth measured
(:func:`sparsroof.host.memory_roofs.measure_roofs`). Each corpus matrix is run in CSR, COO,
CSC, ELL and HYB, and one generated 5-point stencil adds a working set of at least twice
the caches (10M entries or more; the corpus matrices all fit the caches). The tightness
per memory level (median measured / bound) is printed; ``pytest tests/host/test_bench.py
-s`` shows it.
"""

from __future__ import annotations

import math
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
#: the smallest grid of the generated stencil: 1400 x 1400, 9.8M entries, a CSR working
#: set of ~157 MB; a host with a larger last-level cache gets a grid twice its size
DRAM_GRID = 1400
#: bytes of a 5-point stencil's CSR SpMV per grid point: 5 entries of 12 bytes, the row
#: pointer, x and y
BYTES_PER_POINT = 80


@pytest.fixture(scope="module")
def host_spec() -> HwSpec:
    spec = parse_spec(yaml.safe_load(spec_yaml(probe(quick=True), "this-host")), "probe")
    return with_roofs(spec, roof_rates(measure_roofs(spec)), "measured by the test")


def dram_grid(spec: HwSpec) -> int:
    """The side of a grid whose CSR working set is at least twice the last cache level."""
    caches = [lvl.capacity.value for lvl in spec.memory[:-1] if lvl.capacity is not None]
    return max(DRAM_GRID, math.ceil(math.sqrt(2 * max(caches, default=0) / BYTES_PER_POINT)))


def _matrices(corpus: Path, spec: HwSpec) -> Iterator[Matrix]:
    for path in sorted([*corpus.glob("*.mtx"), *corpus.glob("*.smtx")]):
        try:
            yield load(path)
        except SparsroofError:  # the corpus holds deliberately broken files too
            continue
    n = dram_grid(spec)
    g = stencil_2d(n)
    a = coo_array((g.values, (g.row, g.col)), shape=(g.rows, g.cols))
    yield Matrix.from_scipy(a, name=f"stencil_2d_{n}")


def _runs(corpus: Path, spec: HwSpec) -> list[Measurement]:
    runs = []
    for m in _matrices(corpus, spec):
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
              f"({r.bound}, {r.memory_level})" for r in runs if r.violation]
    assert not faster, "runs faster than their bound:\n" + "\n".join(faster)
    levels = [lvl.name for lvl in host_spec.memory]
    bands = tightness(runs, levels)
    # the smallest cache bound some runs, and main memory supplied part of the generated
    # stencil's bytes (its working set is twice the caches; the level whose term binds
    # it may still be the last cache, which all those bytes pass through)
    assert levels[0] in bands
    caches = sum(lvl.capacity.value for lvl in host_spec.memory[:-1] if lvl.capacity)
    stencil = [r for r in runs if r.matrix.startswith("stencil_2d_")]
    assert stencil and all(r.bytes_total > caches and r.bound == "memory" for r in stencil)
    assert all(ratio >= 1.0 for _, ratio in bands.values())
    print(f"\n{len(runs)} runs ({', '.join(FORMATS)}) on {host_spec.device}; "
          "median measured/bound by the level that bound them:")
    for level, (n, ratio) in bands.items():
        print(f"  {level:>5}: {n:3d} runs, {ratio:.2f}x")


def test_more_repetitions_than_the_usual_cap_are_made_when_asked() -> None:
    """--repeat is a least count: 600 asked are 600 timed (500 had been a silent cap)."""
    from sparsroof.host.stopwatch import time_call

    assert len(time_call(lambda: None, warmup=0, repeat=600, min_time=0).samples) == 600
    assert len(time_call(lambda: None, warmup=0, repeat=1, min_time=10, max_repeat=40
                         ).samples) == 40
