"""The spec database keeps the bound a promise: launch floors that are minimums, cache roofs,
the kind of every figure, and a memory term that allows the best placement in the caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparsroof import analysis
from sparsroof.hardware.completeness import spec_warnings
from sparsroof.hardware.library import bundled_names, load_spec, validate_file
from sparsroof.model.bound import memory_terms

from ..conftest import CORPUS, DATA, ROOT, sparsroof

GPUS_WITH_DATA = ("a100-40gb", "a100-80gb", "h100-sxm", "h200", "mi250x", "mi250x-gcd",
                  "v100-measured", "v100-sxm2")


@pytest.mark.parametrize("name", GPUS_WITH_DATA)
def test_gpu_specs_have_a_minimum_launch_floor_and_an_l2_roof(name: str) -> None:
    spec = load_spec(name)
    assert spec.launch_overhead is not None and spec.launch_overhead.kind == "minimum"
    # a floor, not an average, and no sub-microsecond guess: the smallest measured is an empty
    # kernel replayed through a graph on an H100, 0.97 us (tests/data/gpu-h100)
    assert 0.97e-6 <= spec.launch_overhead.value <= 2.2e-6
    l2 = spec.memory[0]
    assert l2.name == "L2" and l2.bandwidth is not None and l2.capacity is not None
    assert l2.bandwidth.kind == "measured" and l2.bandwidth.value > spec.dram.bandwidth.value
    assert spec_warnings(spec) == []


def test_every_bundled_figure_says_its_kind() -> None:
    for name in bundled_names():
        spec = load_spec(name)
        quantities = [*spec.peaks.values(), spec.launch_overhead, spec.network, spec.clock,
                      *(q for lv in spec.memory for q in (lv.bandwidth, lv.capacity))]
        assert all(q.kind for q in quantities if q is not None), name


def test_one_gcd_is_half_the_package() -> None:
    die, package = load_spec("mi250x-gcd"), load_spec("mi250x")
    assert die.dram.bandwidth.value * 2 == package.dram.bandwidth.value
    assert die.peak("simt", "fp64").value * 2 == pytest.approx(package.peak("simt", "fp64").value)
    assert die.memory[0].capacity.value * 2 == package.memory[0].capacity.value  # type: ignore[union-attr]


def test_epyc_has_its_l3_with_a_bandwidth() -> None:
    names = [(lv.name, lv.bandwidth is not None) for lv in load_spec("epyc-7763").memory]
    assert names == [("L1d", True), ("L2", True), ("L3", True), ("DDR4", True)]


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = """name: t
device: test
kind: gpu
peaks: {simt: {fp64: {value: 1 TFLOP/s, source: x}}}
memory:
  - name: L2
    bandwidth: {value: L2BW, source: x}
    capacity: {value: 4 MiB, source: x}
  - name: HBM
    bandwidth: {value: 1 TB/s, source: x, kind: KIND}
    capacity: {value: 1 GB, source: x}
"""


def test_validate_flags_unknown_kind_and_bandwidth_rising_down(tmp_path: Path) -> None:
    ok = validate_file(str(_spec(tmp_path, BASE.replace("L2BW", "3 TB/s")
                                 .replace("KIND", "peak"))))
    assert ok == []
    bad = validate_file(str(_spec(tmp_path, BASE.replace("L2BW", "0.5 TB/s")
                                  .replace("KIND", "typical"))))
    text = [str(p) for p in bad]
    assert any("memory.HBM.bandwidth.kind: unknown kind of figure 'typical'" in t for t in text)
    assert any("memory.HBM.bandwidth: faster than L2 above it" in t for t in text)


def test_validate_warns_on_a_gpu_without_launch_floor_but_passes(tmp_path: Path) -> None:
    path = _spec(tmp_path, BASE.replace("L2BW", "3 TB/s").replace("KIND", "peak"))
    out = sparsroof("hw", "validate", str(path), cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK (t: test)")
    assert "launch_overhead: missing" in out.stderr


def test_validate_warns_of_a_floor_per_method_that_is_not_a_minimum(tmp_path: Path) -> None:
    """A floor per timing method is a bound's promise for runs timed so: an average of
    calls is above some of them, and validation says which method it weakens."""
    from dataclasses import replace

    a100 = load_spec("a100")
    graph = a100.launch_floors["graph"]
    spec = replace(a100, launch_floors={**a100.launch_floors,
                                        "graph": replace(graph, kind="average")})
    assert spec_warnings(a100) == []
    [said] = spec_warnings(spec)
    assert said == ("a100-80gb: launch_floors.graph: kind is 'average': a run timed by graph "
                    "can be faster than this floor, so bounds leave it out for the next "
                    "smaller floor (a bound needs the smallest time, 'minimum')")


def test_memory_term_allows_the_best_placement_in_the_caches() -> None:
    a100 = load_spec("a100")  # L2 40 MiB at 5.5 TB/s, HBM2e at 2039 GB/s
    # 60 MiB: every byte passes the L2; at most 40 MiB of it can stay resident there
    w = 60 * 2**20
    terms = {lv.name: t for lv, t in memory_terms(a100, w, w)}
    assert terms["L2"] == pytest.approx(w / 5.5e12)
    assert terms["HBM2e"] == pytest.approx((w - 40 * 2**20) / 2039e9)
    # no cache roof: every byte from main memory
    assert memory_terms(a100, w, None)[0][1] == pytest.approx(w / 2039e9)


def test_analyze_without_a_peak_at_the_precision_still_bounds(tmp_path: Path) -> None:
    from sparsroof.matrix.mtx import load

    spec = load_spec("v100-measured")  # no fp64 peak at all
    a = analysis.analyze(load(str(DATA / "lap2d_64.mtx")), spec,
                         analysis.Config(dtype="fp64", models=("compulsory",)))
    r = a.results[0]
    assert r.dense_sol_s is None and r.speedup_vs_dense is None
    assert r.bound.compute_s == 0 and "no simt fp64 peak" in r.bound.note
    # the 325 kB working set is launch-bound on the 1.9 us floor
    assert r.bound.bound == "launch" and r.bound.sol_s == pytest.approx(1.9e-6)
    out = sparsroof("analyze", str(DATA / "lap2d_64.mtx"), "--hw", "v100-measured", "--dtype",
                    "fp64", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "x dense absent" in out.stdout


def test_a_cache_of_unknown_bandwidth_is_not_free(tmp_path: Path) -> None:
    """A user's spec whose L2 gives no bandwidth: lap2d_64's 325 kB fit that L2, but no
    level is free, so its bytes are charged at the next level that has a bandwidth (HBM:
    324,612 B at 2039 GB/s = 159 ns: 20,224 entries x 12 B, 4,097 row pointers x 4 B, x and y
    4,096 x 8 B each), and the bound says so; before, the row was bound by
    compute at sub-nanosecond speed."""
    import yaml

    from sparsroof.matrix.mtx import load

    raw = yaml.safe_load((ROOT / "hwspecs/a100-80gb.yaml").read_text(encoding="utf-8"))
    del raw["memory"][0]["bandwidth"], raw["launch_overhead"]
    raw.pop("launch_floors", None)
    path = tmp_path / "blind.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    spec = load_spec(str(path))
    [r] = analysis.analyze(load(DATA / "lap2d_64.mtx"), spec,
                           analysis.Config(models=("compulsory",))).results
    assert r.traffic.bytes_total == 324_612
    assert r.bound.bound == "memory" and r.bound.memory_level == "HBM2e"
    assert r.bound.sol_s == pytest.approx(324_612 / 2039e9)
    assert r.bound.note.startswith("the working set fits L2, whose bandwidth a100-80gb does "
                                   "not give: its bytes are charged at HBM2e")
    [said] = [w for w in spec_warnings(spec) if "L2.bandwidth: missing" in w]
    assert "charged at HBM2e's bandwidth, so a warm run served from this level can beat the " \
        "bound" in said  # what analyze does, in the same words


def test_no_bundled_spec_has_a_free_level_or_a_compute_bound_spmv() -> None:
    """Every level of every bundled spec has a bandwidth, and no SpMV (intensity below 1)
    is bound by compute, on the bundled example and on the smallest matrix there is (one
    entry). None is promised under a nanosecond where a floor applies: a GPU kernel's
    launch in every timing, a CPU call timed alone (cold) its first load's latency; a GPU
    spec without a launch floor and a CPU spec without a latency are warned of."""
    import scipy.sparse as sp

    from sparsroof.matrix.mtx import load

    lap, one = load(DATA / "lap2d_64.mtx"), sp.coo_array(([1.0], ([0], [0])), shape=(1, 1))
    for name in bundled_names():
        spec = load_spec(name)
        assert all(level.bandwidth is not None for level in spec.memory), name
        warned = any("launch_overhead: missing" in w or "no level gives a latency" in w
                     for w in spec_warnings(spec))
        assert warned == (spec.launch_overhead is None if spec.kind == "gpu"
                          else all(lv.latency is None for lv in spec.memory)), name
        for timing in ("graph", "cold"):
            floored = not warned and (spec.kind == "gpu" or timing == "cold")
            for m in (lap, one):
                for r in analysis.analyze(m, spec, analysis.Config(
                        storages=("csr", "ell", "sell"), models=("compulsory",),
                        timing=timing)).results:
                    assert r.traffic.intensity < 1
                    assert r.bound.bound != "compute", (name, r.bound)
                    assert r.bound.sol_s >= 1e-9 or not floored, (name, timing, r.bound)
    # warm on a CPU, a call of a few hundred bytes or more is no faster than a wait for the
    # other cores (the L1 latency) or one core's read of them: the Zachary karate club
    # (156 entries) was promised 178 ps on the EPYC 7763
    karate = load(CORPUS / "karate.mtx")
    for name in bundled_names():
        spec = load_spec(name)
        if spec.kind == "cpu" and spec.memory[0].latency is not None:
            for r in analysis.analyze(karate, spec, analysis.Config(
                    models=("compulsory",))).results:
                assert r.bound.sol_s >= spec.memory[0].latency.value >= 1e-9, (name, r.bound)
                assert "one call takes at least" in r.bound.note


def test_a_cpu_call_timed_alone_waits_for_its_first_load() -> None:
    """Cold, one entry on the EPYC 7763: 28 bytes from DDR4 would be 0.14 ns, the L1
    load-to-use time (4 cycles at 3.5 GHz) binds, and says so; warm, back-to-back calls
    may overlap, and no first load is charged, only what one core can read."""
    import scipy.sparse as sp

    one = sp.coo_array(([1.0], ([0], [0])), shape=(1, 1))
    epyc = load_spec("epyc-7763")
    [cold] = analysis.analyze(one, epyc, analysis.Config(models=("compulsory",),
                                                         timing="cold")).results
    assert cold.bound.memory_s == pytest.approx(1.14e-9) and cold.bound.bound == "memory"
    assert "a call timed alone waits for its first load: L1d's latency 1.14 ns binds" in \
        cold.bound.note
    [warm] = analysis.analyze(one, epyc, analysis.Config(models=("compulsory",))).results
    assert warm.bound.memory_s < 1e-9 and "first load" not in warm.bound.note
    # warm, the 28 bytes it reads (value, index, two row pointers, one x) on one core, at
    # its share of the L1d roof (14.3 TB/s over 64 cores): 0.125 ns, under the latency of
    # a wait for other cores
    assert warm.bound.sol_s == pytest.approx(28 / (14336e9 / 64))


def test_validate_warns_of_a_latency_that_is_not_a_minimum(tmp_path: Path) -> None:
    from dataclasses import replace

    epyc = load_spec("epyc-7763")
    l1 = epyc.memory[0]
    assert l1.latency is not None and spec_warnings(epyc) == []
    spec = replace(epyc, memory=(replace(l1, latency=replace(l1.latency, kind="average")),
                                 *epyc.memory[1:]))
    assert spec_warnings(spec) == ["epyc-7763: memory.L1d.latency: kind is 'average': a "
                                   "bound needs the least time a load takes ('minimum'), or "
                                   "a call beats it"]


def test_a_warm_working_set_in_the_xeons_l2_and_l3_is_charged_at_the_l2_roof() -> None:
    """150 MiB fits the Xeon 8480+'s L1d (56 x 48 KiB = 2.625 MiB), L2 (56 x 2 MiB) and
    105 MiB of L3 together (non inclusive): by hand, what the L1d cannot hold, 147.375 MiB,
    at the L2 roof, 13,619.2 GB/s = 11.35 us, and no byte at DDR5's 307.2 GB/s (it was
    charged 38 MiB of them: 130 us)."""
    xeon = load_spec("xeon-8480")
    l1 = 2.625 * 2**20
    w = 150 * 2**20
    terms = {lv.name: t for lv, t in memory_terms(xeon, w, w)}
    assert terms["L2+L3"] == pytest.approx((w - l1) / 13619.2e9) and terms["DDR5"] == 0
    assert terms["L2+L3"] == pytest.approx(11.35e-6, rel=1e-3)
    # 300 MiB: what the caches cannot hold goes to DDR5
    w = 300 * 2**20
    terms = {lv.name: t for lv, t in memory_terms(xeon, w, w)}
    assert terms["DDR5"] == pytest.approx((w - l1 - 217 * 2**20) / 307.2e9)
