"""``sparsroof.bound`` called as a library: it bounds a traffic as an analysis does, takes a
spec's name, refuses names no spec can hold, and keeps every note it has to give."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sparsroof
from sparsroof.errors import OptionError, SparsroofError
from sparsroof.hardware.library import load_spec
from sparsroof.model.bound import bound
from sparsroof.model.traffic import Traffic, traffic
from sparsroof.structure.features import measure

# the spec of docs/specs.md: an L2 without a bandwidth, and no fp64 peak
MYBOX = """\
name: mybox
device: My accelerator
kind: gpu
peaks:
  simt:
    fp32: {value: 19.5 TFLOP/s, source: "vendor datasheet, 2024"}
memory:
  - name: L2
    capacity: {value: 40 MiB, source: "vendor whitepaper"}
  - name: HBM
    bandwidth: {value: 2039 GB/s, source: "vendor datasheet"}
    capacity: {value: 80 GB, source: "vendor datasheet"}
launch_overhead: {value: 4.2 us, source: "measured, 2024"}
"""


def _small() -> sp.csr_array:
    return sp.random_array((2000, 2000), density=0.01, format="csr", random_state=0)


def _wide() -> sp.coo_array:
    """500,000 uniform entries in 100,000 x 100,000: at d = 16 its compulsory traffic
    (31.9 MB) fits an A100's 40 MiB L2 and the random model's (83 MB) does not."""
    from sparsroof.matrix.generate import uniform_random

    g = uniform_random(100_000, 100_000, 500_000, seed=0)
    return sp.coo_array((np.ones(g.nnz), (g.row, g.col)), shape=(g.rows, g.cols))


@pytest.mark.parametrize("hw", ["a100", "h100-sxm", "epyc-7763"])
def test_bound_of_an_analysis_traffic_is_the_analysis_bound(hw: str) -> None:
    """Every result of an analysis: bound() of its traffic, given the unit, the precision
    and the compulsory traffic's bytes as the working set, says what the analysis said;
    for a compulsory traffic, its own bytes are that working set, so the defaults do."""
    a = sparsroof.analyze(_wide(), hw=hw, kernel="spmm", d=16, storage="csr,ell",
                          model="all")
    assert len(a.results) >= 12
    for r in a.results:
        t = r.traffic
        held = a.result(t.storage, model="compulsory").traffic.bytes_total
        b = bound(t, hw, unit=r.bound.unit, precision=r.bound.precision, footprint=held)
        assert (b.sol_s, b.memory_level, b.launch_s) == \
            (r.bound.sol_s, r.bound.memory_level, r.bound.launch_s), (t.storage, t.model)
        if t.model == "compulsory":
            assert bound(t, hw, unit=r.bound.unit, precision=r.bound.precision) == b
    if hw == "a100":  # the random model's 83 MB alone would not fit the L2
        r = a.result("csr", model="random")
        alone = bound(r.traffic, hw, unit=r.bound.unit, precision=r.bound.precision)
        assert (r.bound.memory_level, alone.memory_level) == ("L2", "HBM2e")


def test_bound_defaults_credit_the_cache_and_the_launch() -> None:
    """A 1.2 MB working set on an A100: held by its L2 (5.5 TB/s), and one launch (1.3 us
    through a graph) binds; main memory and no launch only where asked."""
    t = traffic(measure(sparsroof.Matrix.from_scipy(_small())), kernel="spmv", width=1,
                storage="csr", model="compulsory", dtype="fp64", index="int32")
    assert t is not None
    b = bound(t, "a100", unit="simt", precision="fp64")
    assert b.memory_level == "L2" and b.memory_s == pytest.approx(t.bytes_total / 5.5e12)
    assert b.bound == "launch" and b.sol_s == pytest.approx(1.3e-6)
    bare = bound(t, "a100", unit="simt", precision="fp64", launches=0, footprint=None)
    assert bare.memory_level == "HBM2e" and bare.launch_s == 0
    assert bare.sol_s == pytest.approx(t.bytes_total / 2039e9)


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"unit": "gpu", "precision": "fp64"}, "unknown compute unit 'gpu'"),
    ({"unit": "simt", "precision": "fp65"}, "unknown precision 'fp65'"),
    ({"unit": "simt", "precision": "fp64", "timing": "warm"}, "unknown method 'warm'"),
    ({"unit": "simt", "precision": "fp64", "calls_per_sync": 0},
     "calls_per_sync is 0, expected a whole number"),
    ({"unit": "simt", "precision": "fp64", "footprint": "all"}, "footprint='all'"),
    ({"unit": "simt", "precision": "fp64", "footprint": True},
     "footprint is true, expected a finite number"),
    ({"unit": "simt", "precision": "fp64", "footprint": -1.0}, "footprint is -1, below 0"),
    ({"unit": "simt", "precision": "fp64", "launches": -1},
     "launches is -1, expected a whole number from 0"),
])
def test_bound_refuses_what_no_spec_holds(kwargs: dict[str, object], named: str) -> None:
    t = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e3, 2e3, 1.2e4, 800, 800)
    with pytest.raises(OptionError, match=named):
        bound(t, "a100", **kwargs)  # type: ignore[arg-type]


def test_bound_of_an_unknown_spec_name_is_a_spec_error() -> None:
    t = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e3, 2e3, 1.2e4, 800, 800)
    with pytest.raises(SparsroofError, match="a1000"):
        bound(t, "a1000", unit="simt", precision="fp64")


def test_a_missing_peak_and_a_level_without_bandwidth_are_both_said(tmp_path: Path) -> None:
    """The note of the missing fp64 peak is kept beside the note of the L2 that gives no
    bandwidth (the second used to replace the first)."""
    spec_file = tmp_path / "mybox.yaml"
    spec_file.write_text(MYBOX)
    spec = load_spec(str(spec_file))
    t = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e3, 2e3, 1.2e4, 800, 800)
    note = bound(t, spec, unit="simt", precision="fp64").note
    assert "no simt fp64 peak: compute term left out" in note
    assert "whose bandwidth mybox does not give" in note
    analysed = sparsroof.analyze(_small(), hw=str(spec_file), model="compulsory")
    assert "no simt fp64 peak" in analysed.results[0].bound.note
