from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from sparsroof.host.probe import (
    CacheLevel,
    ProbeResult,
    host_info,
    measure_gemm,
    measure_triad,
    spec_yaml,
)

CPUINFO = """\
processor\t: 0
model name\t: Example CPU 9000
physical id\t: 0
cpu cores\t: 2
processor\t: 1
model name\t: Example CPU 9000
physical id\t: 0
cpu cores\t: 2
processor\t: 2
model name\t: Example CPU 9000
physical id\t: 1
cpu cores\t: 2
processor\t: 3
model name\t: Example CPU 9000
physical id\t: 1
cpu cores\t: 2
"""


def _cache(root: Path, cpu: int, index: int, level: int, kind: str, size: str,
           shared: str) -> None:
    d = root / f"cpu{cpu}" / "cache" / f"index{index}"
    d.mkdir(parents=True)
    for name, text in (("level", str(level)), ("type", kind), ("size", size),
                       ("shared_cpu_list", shared)):
        (d / name).write_text(text + "\n")


def test_host_info_counts_sockets_cores_and_cache_instances(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO)
    sys_cpu = tmp_path / "cpu"
    for cpu in range(4):
        _cache(sys_cpu, cpu, 0, 1, "Data", "32K", str(cpu))
        _cache(sys_cpu, cpu, 1, 1, "Instruction", "32K", str(cpu))
        _cache(sys_cpu, cpu, 2, 3, "Unified", "16384K", "0-1" if cpu < 2 else "2-3")
    host = host_info(cpuinfo, sys_cpu)
    # 2 sockets x 2 cores, 4 logical CPUs -> 1 thread per core
    assert (host.model, host.cores, host.sockets, host.threads_per_core) == \
        ("Example CPU 9000", 4, 2, 1)
    # L1d: 4 private 32 KiB caches; L3: 2 shared 16 MiB caches (instruction caches skipped)
    assert host.caches == (CacheLevel(1, 32 * 1024, 4), CacheLevel(3, 16 * 2**20, 2))
    assert host.caches[1].total_bytes == 32 * 2**20


def test_measurements_are_positive_and_plausible() -> None:
    bandwidth = measure_triad(8 * 2**20, 2)
    assert 1e8 < bandwidth < 1e13                     # between 0.1 GB/s and 10 TB/s
    flops = measure_gemm(128, "float64", 2)
    assert 1e7 < flops < 1e14
    assert np.isfinite([bandwidth, flops]).all()


def test_compute_roof_is_the_derived_peak_not_a_slow_multiply(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO.replace("cpu cores\t: 2\n",
                                       "cpu cores\t: 2\ncpu MHz\t\t: 2600.000\n"
                                       "flags\t\t: fpu sse2 avx avx2 fma avx512f\n"))
    host = host_info(cpuinfo, tmp_path / "none")
    assert (host.simd_bits, host.clock_hz) == (512, 2.6e9)
    # 4 cores x 2.6 GHz x 2 FMA pipes x 2 FLOPs x 8 fp64 lanes = 332.8 GFLOP/s; a busy
    # machine's small multiply (5 GFLOP/s) is slower than one-thread SpMV can run, so it
    # cannot be the roof
    slow = ProbeResult(host, "2025-01-01", 1e10, 2**20, 1, {"fp64": 5e9}, {"fp64": 512})
    peak = yaml.safe_load(spec_yaml(slow, "h"))["peaks"]["simt"]["fp64"]
    assert (peak["value"], peak["kind"]) == ("332.80 GFLOP/s", "peak")
    # a multiply faster than the derived figure (an under-reported clock) is the roof
    fast = ProbeResult(host, "2025-01-01", 1e10, 2**20, 1, {"fp64": 4e11}, {"fp64": 4096})
    peak = yaml.safe_load(spec_yaml(fast, "h"))["peaks"]["simt"]["fp64"]
    assert (peak["value"], peak["kind"]) == ("400.00 GFLOP/s", "measured")


def test_every_cache_level_gets_a_measured_roof_that_never_sits_below_a_slower_one(
        tmp_path: Path) -> None:
    from sparsroof.hardware.library import load_spec
    from sparsroof.host.probe import CacheLevel, HostInfo

    host = HostInfo("test CPU", cores=2, sockets=1, threads_per_core=1,
                    caches=(CacheLevel(1, 48 * 2**10, 2), CacheLevel(2, 2**20, 2),
                            CacheLevel(3, 32 * 2**20, 1)))
    # a busy host measured L2 slower than L3: L2 takes L3's rate (a roof below a slower
    # level's could be beaten by a real run); DRAM's triad is 20 GB/s
    result = ProbeResult(host, "2025-01-01", 20e9, 2**27, 3, {"fp64": 5e9}, {"fp64": 512},
                         {1: 300e9, 2: 90e9, 3: 100e9})
    path = tmp_path / "h.yaml"
    path.write_text(spec_yaml(result, "h"))
    memory = yaml.safe_load(path.read_text())["memory"]
    assert [(m["name"], m["bandwidth"]["value"]) for m in memory] == [
        ("L1d", "300.00 GB/s"), ("L2", "100.00 GB/s"), ("L3", "100.00 GB/s"),
        ("DRAM", "20.00 GB/s")]
    assert "below a slower level's" in memory[1]["bandwidth"]["source"]
    spec = load_spec(str(path))  # the written spec validates
    assert [lvl.bandwidth.value for lvl in spec.memory if lvl.bandwidth] == [
        300e9, 100e9, 100e9, 20e9]


def test_measure_caches_reads_each_level(tmp_path: Path) -> None:
    from sparsroof.host.probe import CacheLevel, HostInfo, measure_caches

    host = HostInfo("test CPU", cores=1, sockets=1, threads_per_core=1,
                    caches=(CacheLevel(1, 32 * 2**10, 1), CacheLevel(2, 512 * 2**10, 1)))
    rates = measure_caches(host, quick=True)
    assert set(rates) == {1, 2} and all(1e8 < r < 1e14 for r in rates.values())


def test_a_probe_whose_passes_disagree_is_flagged(tmp_path: Path,
                                                   monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two passes that measured L2 at 151 and 43 GB/s (251% apart, over the 20% a
    calibration tolerates) flag the probe; DRAM's 20 and 21 GB/s (5%) do not. The spec
    keeps each roof's fastest pass, says so, and carries the flag as a comment."""
    from click.testing import CliRunner

    from sparsroof.cli import cli
    from sparsroof.hardware.library import load_spec
    from sparsroof.host import probe as probe_module
    from sparsroof.host.probe import HostInfo

    host = HostInfo("test CPU", cores=2, sockets=1, threads_per_core=1,
                    caches=(CacheLevel(2, 2**20, 2),))
    result = ProbeResult(host, "2025-01-01", 21e9, 2**27, 3, {"fp64": 5e9}, {"fp64": 512},
                         {2: 151e9}, {"DRAM": (20e9, 21e9), "L2": (151e9, 43e9)})
    assert list(result.spread) == ["DRAM", "L2"]
    assert result.spread["L2"] == 151 / 43 - 1
    assert len(result.noisy) == 1 and result.noisy[0].startswith("L2 measured 151.0, 43.0")
    text = spec_yaml(result, "h")
    assert "# noisy probe: L2 measured" in text
    path = tmp_path / "h.yaml"
    path.write_text(text)
    spec = load_spec(str(path))
    assert "fastest of 2 passes (251% apart)" in spec.memory[0].bandwidth.source
    quiet = ProbeResult(host, "2025-01-01", 21e9, 2**27, 3, {"fp64": 5e9}, {"fp64": 512},
                        {2: 151e9}, {"DRAM": (20e9, 21e9), "L2": (151e9, 150e9)})
    assert quiet.noisy == [] and "noisy" not in spec_yaml(quiet, "h")
    monkeypatch.setattr(probe_module, "probe", lambda **_: result)
    out = CliRunner().invoke(cli, ["hw", "probe"])
    assert out.exit_code == 0
    assert "warning: noisy probe: L2 measured" in out.stderr


@pytest.mark.parametrize("boost, ns", [(3.5e9, "0.857 ns"), (None, "0.483 ns")])
def test_a_probed_spec_gives_its_l1_a_least_latency(tmp_path: Path, boost: float | None,
                                                     ns: str) -> None:
    """3 cycles at cpufreq's maximum clock, or at 6.2 GHz where the host gives none (a
    virtual machine's clock may be its base clock): a minimum, so the spec validates
    without the warning a spec without latency gets, and a call has a floor."""
    from sparsroof.hardware.completeness import spec_warnings
    from sparsroof.hardware.library import load_spec, validate_file
    from sparsroof.host.probe import CacheLevel, HostInfo
    from sparsroof.model.bound import call_floor

    host = HostInfo("test CPU", cores=2, sockets=1, threads_per_core=1,
                    caches=(CacheLevel(1, 48 * 2**10, 2),), boost_hz=boost)
    result = ProbeResult(host, "2025-01-01", 20e9, 2**27, 3, {"fp64": 5e9}, {"fp64": 512},
                         {1: 300e9})
    path = tmp_path / "h.yaml"
    path.write_text(spec_yaml(result, "h"))
    l1 = yaml.safe_load(path.read_text())["memory"][0]
    assert (l1["latency"]["value"], l1["latency"]["kind"]) == (ns, "minimum")
    assert validate_file(str(path)) == []
    spec = load_spec(str(path))
    assert not [w for w in spec_warnings(spec) if "latency" in w]
    seconds = float(ns.split()[0]) * 1e-9
    assert call_floor(spec, 1e9) == pytest.approx(seconds)  # many bytes: the latency binds
