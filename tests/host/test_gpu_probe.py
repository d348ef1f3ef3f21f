"""``sparsroof hw probe --device cuda`` on a simulated GPU (:mod:`tests.gpu_fake`): what it
measures, how two rounds are compared, and that the spec it writes loads and bounds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sparsroof.cli import cli
from sparsroof.cli.guard import run_guarded
from sparsroof.hardware.completeness import spec_warnings
from sparsroof.hardware.library import load_spec
from sparsroof.hardware.schema import check_spec
from sparsroof.host.bench import bench
from sparsroof.host.gpu import cuda as gpu_device
from sparsroof.host.gpu.device import Kernel
from sparsroof.host.gpu.probe import L2_SWEEP, probe_gpu
from sparsroof.host.gpu.spec_yaml import gpu_spec_yaml
from sparsroof.matrix.mtx import load
from sparsroof.model.timing import launch_floor
from sparsroof.structure.features import measure

from ..conftest import DATA
from ..gpu_fake import FakeDevice

L2 = 50 * 2**20


class DriftingDevice(FakeDevice):
    """A device whose copy runs 20 % slower in the second round (a busy GPU)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.copies = 0

    def copy_kernel(self, nbytes: int) -> Kernel:
        self.copies += 1
        self.rates["copy"] = 3.0e12 if self.copies == 1 else 2.4e12
        return super().copy_kernel(nbytes)


def test_probe_measures_memory_l2_floors_and_compute_twice() -> None:
    dev = FakeDevice(floor_s=2e-6, round_trip_s=5e-6, graph_share=0.5)
    p = probe_gpu(dev)
    assert len(p.copy.rounds) == 2 and not p.flagged()
    # arrays of 4 x L2, at least 1 GiB (a sixteenth of 80 GiB caps nothing here)
    assert p.array_bytes == 2**30
    assert p.memory_rate == pytest.approx(3.0e12)          # the copy beats the triad's 2.9
    # the sweep runs 1/32 to 4 x the L2; reads that fit the L2 run at 9 TB/s, past it 3
    assert [ws for ws, _ in p.sweep][0] == L2 // 32 and len(p.sweep) == len(L2_SWEEP)
    assert p.l2_rate == pytest.approx(9.0e12) and p.l2_flat == pytest.approx(9.0e12)
    assert p.l2_held_bytes == L2                            # half-way mark: 6 TB/s
    # empty kernel: 2 us a launch; a replayed one half of it; sync adds the 5 us round trip
    assert {m: f.best for m, f in p.floors.items()} == pytest.approx(
        {"graph": 1e-6, "stream": 2e-6, "sync": 7e-6})
    assert p.fma["fp64"].best == pytest.approx(30e12)


def test_the_spec_loads_bounds_and_says_how_each_figure_was_measured(tmp_path: Path) -> None:
    p = probe_gpu(FakeDevice())
    text = gpu_spec_yaml(p, "fake-gpu")
    spec, problems = check_spec(yaml.safe_load(text), "fake-gpu.yaml")
    assert problems == [] and spec is not None and spec.kind == "gpu"
    assert spec_warnings(spec) == []
    l2, dram = spec.memory
    assert l2.bandwidth is not None and l2.bandwidth.value == pytest.approx(9.0e12)
    assert l2.capacity is not None and l2.capacity.value == L2
    assert dram.bandwidth.value == pytest.approx(3.0e12)
    assert spec.launch_overhead is not None and spec.launch_overhead.value == pytest.approx(1e-6)
    # the graph floor alone is a promise; the Python launcher's own rates are notes
    assert {m: q.value for m, q in spec.launch_floors.items()} == pytest.approx({"graph": 1e-6})
    assert ("an empty kernel took 2.000 us launched back to back on one stream and 7.000 us "
            "with a host wait after each launch (host clock): that launcher's rates, not "
            "floors") in spec.notes
    for timing in ("stream", "sync", "cold"):
        assert launch_floor(spec, timing)[0] == pytest.approx(1e-6)
    # every figure says it was measured, how, on which device and when
    for q in (l2.bandwidth, dram.bandwidth, *spec.launch_floors.values()):
        assert q.kind in ("measured", "minimum")
        assert f"hw probe --device cuda on Fake H100 on {p.date}" in q.source
    # fp64: the derived 132 x 1.98 GHz x 128 FLOP/cycle = 33.45 TFLOP/s beats the 30 measured
    fp64 = spec.peak("simt", "fp64")
    assert fp64.value == pytest.approx(33.45e12) and fp64.kind == "peak"
    assert "measured 30.00 TFLOP/s" in fp64.source
    assert spec.parallelism["sms"].value == 132 and spec.clock is not None
    # a run bounded on it: the spec works wherever a bundled one does
    path = tmp_path / "fake-gpu.yaml"
    path.write_text(text)
    m = load(DATA / "lap2d_64.mtx")
    (run,) = bench(m, measure(m), load_spec(str(path)), formats=["csr"], backend="cusparse",
                   device=FakeDevice(call_s=30e-6), method="graph", warmup=0, repeat=2,
                   min_time=0.0)
    assert run.status == "ok" and run.sol_s >= 1e-6


def test_rounds_that_differ_by_more_than_ten_percent_are_flagged(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    p = probe_gpu(DriftingDevice())
    assert p.flagged() == ["copy"]
    assert p.copy.best == pytest.approx(3.0e12)            # the better round is kept
    text = gpu_spec_yaml(p, "busy")
    doc = yaml.safe_load(text)
    assert "FLAGGED (rounds differ by more than 10 %): copy." in doc["notes"]
    assert "FLAGGED: rounds 3000.00 GB/s and 2400.00 GB/s differ by 25 %" in \
        doc["memory"][1]["bandwidth"]["source"]
    monkeypatch.setattr(gpu_device, "open_device", lambda: DriftingDevice())
    out = tmp_path / "busy.yaml"
    code = run_guarded(cli, ["hw", "probe", "--device", "cuda", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and load_spec(str(out)).name == "busy"
    assert "sparsroof: warning: copy: the two rounds differ by more than 10 %" in err


def test_the_cli_writes_a_spec_that_validates(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gpu_device, "open_device", lambda: FakeDevice())
    out = tmp_path / "gpu.yaml"
    assert run_guarded(cli, ["hw", "probe", "--device", "cuda", "-o", str(out)]) == 0
    assert run_guarded(cli, ["hw", "validate", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{out}: OK (gpu: Fake H100)" in captured.out
    assert "warning" not in captured.err


def test_without_cupy_the_gpu_probe_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    code = run_guarded(cli, ["hw", "probe", "--device", "cuda"])
    assert code == 1
    assert capsys.readouterr().err.splitlines() == [
        'sparsroof: error: the GPU backend needs CuPy: pip install "sparsroof[gpu]"']


def test_a_graph_that_cannot_be_captured_leaves_the_graph_floor_out() -> None:
    p = probe_gpu(FakeDevice(capture_error="not permitted"))
    assert set(p.floors) == {"stream", "sync"}
    assert any("no graph floor" in n for n in p.notes)
    spec, problems = check_spec(yaml.safe_load(gpu_spec_yaml(p, "g")), "g.yaml")
    # the Python launcher's rates are no floors: without a graph the spec promises none
    assert problems == [] and spec is not None and spec.launch_floors == {}
    assert spec.launch_overhead is None and "that launcher's rates, not floors" in spec.notes
