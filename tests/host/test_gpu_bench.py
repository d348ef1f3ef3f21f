"""cuSPARSE runs on a GPU (``bench --backend cusparse``): the four timing methods, the check
against scipy, the JSON, and the CuPy-absent path, on a simulated device
(:mod:`tests.gpu_fake`); the real thing where CuPy sees a GPU (skipped otherwise)."""

from __future__ import annotations

import json
import statistics
import sys

import numpy as np
import pytest
from scipy.sparse import coo_array

from sparsroof.cli import cli
from sparsroof.cli.guard import run_guarded
from sparsroof.errors import GpuError, OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.host.bench import bench, bound_again
from sparsroof.host.gpu import cuda as gpu_device
from sparsroof.host.gpu.cuda import gpu_available
from sparsroof.host.gpu.stopwatch import COLD_FACTOR, MAX_CALLS, time_on_device
from sparsroof.matrix.mtx import Matrix, load
from sparsroof.structure.features import measure

from ..conftest import CORPUS, DATA
from ..gpu_fake import FakeDevice

LAP = str(DATA / "lap2d_64.mtx")


def _calls(dev: FakeDevice) -> int:
    return sum(1 for e in dev.log if e == ("launch", "product"))


# -- the methods, on a device whose time is simulated ------------------------------------

def test_stream_times_many_calls_per_region_and_takes_the_median_over_regions() -> None:
    # 10 us per call; regions run 1.0, 1.3, 0.9, 1.1, 1.0 x that: per-call samples follow
    dev = FakeDevice(call_s=10e-6, region_factors=(1.0, 1.3, 0.9, 1.1, 1.0))
    t = time_on_device(dev, lambda: dev._launch("product", dev.call_s), "stream",
                       warmup=2, repeat=4, min_time=0.0)
    # one call timed alone first (region factor 1.0) -> 2 ms / 10 us = 200 calls per region
    assert t.calls_per_region == 200 and t.method == "stream" and t.timer == "CUDA events"
    assert t.samples == pytest.approx((13e-6, 9e-6, 11e-6, 10e-6))
    assert t.median_s == pytest.approx(statistics.median((13e-6, 9e-6, 11e-6, 10e-6)))
    assert t.min_s == pytest.approx(9e-6)
    # 2 warm-up calls, 1 to size the region, 4 regions of 200
    assert sum(1 for e in dev.log if e[0] == "launch") == 2 + 1 + 4 * 200


def test_graph_replays_one_captured_region_and_times_each_replay() -> None:
    dev = FakeDevice(call_s=10e-6, graph_share=0.4)
    t = time_on_device(dev, lambda: dev._launch("product", dev.call_s), "graph",
                       warmup=1, repeat=3, min_time=0.0)
    assert t.method == "graph" and t.note == "" and t.calls_per_region == 200
    assert ("captured", 200) in dev.log
    # one untimed replay uploads the graph, then one replay per region
    assert [e for e in dev.log if e[0] == "replay"] == [("replay", 200)] * 4
    assert t.samples == pytest.approx((4e-6,) * 3)   # 0.4 x 10 us per replayed call


def test_a_graph_that_cannot_be_captured_is_timed_as_a_stream_and_says_why() -> None:
    dev = FakeDevice(capture_error="operation not permitted when stream is capturing")
    t = time_on_device(dev, lambda: dev._launch("product", dev.call_s), "graph",
                       warmup=1, repeat=3, min_time=0.0)
    assert t.method == "stream"
    assert "graph capture failed (operation not permitted" in t.note
    assert not any(e[0] == "replay" for e in dev.log)


def test_sync_waits_after_every_group_of_calls_and_times_by_the_host_clock() -> None:
    dev = FakeDevice(call_s=10e-6, round_trip_s=6e-6)
    t = time_on_device(dev, lambda: dev._launch("product", dev.call_s), "sync",
                       calls_per_sync=4, warmup=1, repeat=5, min_time=0.0)
    assert t.method == "sync" and t.timer == "host clock" and t.calls_per_region == 4
    # each region: 4 calls of 10 us, then a wait of 6 us -> (40 + 6) / 4 us per call
    assert t.samples == pytest.approx((11.5e-6,) * 5)
    timed = dev.log[dev.log.index(("sync",)) + 1:]  # after the warm-up's wait
    assert timed == [("launch", "product")] * 4 + [("sync",)] + \
        ([("launch", "product")] * 4 + [("sync",)]) * 4


def test_cold_writes_twice_the_l2_before_every_timed_call() -> None:
    dev = FakeDevice(call_s=10e-6)
    t = time_on_device(dev, lambda: dev._launch("product", dev.call_s), "cold",
                       warmup=1, repeat=3, min_time=0.0)
    assert t.method == "cold" and t.calls_per_region == 1
    scrub = ("launch", f"scrub {COLD_FACTOR * dev.info.l2_bytes}")
    timed = dev.log[dev.log.index(("sync",)) + 1:]
    # the buffer is written outside the timed region: scrub, then a region of one call
    assert timed == [scrub, ("launch", "product"), ("region", pytest.approx(10e-6))] * 3
    assert t.samples == pytest.approx((10e-6,) * 3)


def test_regions_continue_until_the_minimum_time_and_calls_are_capped() -> None:
    dev = FakeDevice(call_s=1e-9)
    t = time_on_device(dev, lambda: dev._launch("product", dev.call_s), "stream",
                       warmup=0, repeat=2, min_time=4.5e-6, max_repeat=50)
    assert t.calls_per_region == MAX_CALLS  # 1 ns calls: the cap, not 2 million
    assert len(t.samples) == 5              # 1 us per region until 4.5 us have run
    with pytest.raises(OptionError, match="unknown method"):
        time_on_device(dev, lambda: None, "warm")


# -- bench on the simulated device --------------------------------------------------------

@pytest.mark.parametrize("method", ["graph", "stream", "sync", "cold"])
def test_bench_bounds_each_run_for_the_method_it_was_timed_by(method: str) -> None:
    m = load(LAP)
    s = measure(m)
    h100 = load_spec("h100-sxm")
    dev = FakeDevice(call_s=30e-6)
    runs = bench(m, s, h100, formats=["csr", "coo"], backend="cusparse", device=dev,
                 method=method, calls_per_sync=2, warmup=1, repeat=3, min_time=0.0)
    assert [r.storage for r in runs] == ["csr", "coo"]
    for r in runs:
        assert r.method == method and r.timing is not None and r.backend == "cusparse"
        assert r.checked_error is not None and 0 <= r.checked_error <= 1
        assert r.calls_per_sync == (2 if method == "sync" else 1)
        alone = bench(m, s, h100, formats=[r.storage], backend="cusparse", device=dev,
                      method=method, calls_per_sync=2, warmup=0, repeat=1, min_time=0.0)[0]
        assert r.sol_s == alone.sol_s
    # the bound differs by method: sync carries the host round trip, graph the least
    graph = bench(m, s, h100, formats=["csr"], backend="cusparse", device=dev,
                  method="graph", warmup=0, repeat=1, min_time=0.0)[0]
    assert runs[0].sol_s >= graph.sol_s


def test_several_methods_share_one_prepared_and_checked_product() -> None:
    m = load(LAP)
    s = measure(m)
    dev = FakeDevice()
    runs = bench(m, s, load_spec("h100-sxm"), formats=["csr", "coo"], backend="cusparse",
                 device=dev, methods=("graph", "stream", "sync", "cold"), warmup=0, repeat=2,
                 min_time=0.0)
    assert [(r.storage, r.method) for r in runs] == [
        (f, t) for f in ("csr", "coo") for t in ("graph", "stream", "sync", "cold")]
    assert [e for e in dev.log if e[0] == "product"] == [("product", "csr"),
                                                         ("product", "coo")]
    # the same runs bounded on another spec: as if they had been run against it
    a100 = load_spec("a100")
    again = [bound_again(r, s, a100) for r in runs]
    direct = bench(m, s, a100, formats=["csr", "coo"], backend="cusparse", device=dev,
                   methods=("graph", "stream", "sync", "cold"), warmup=0, repeat=2,
                   min_time=0.0)
    assert [r.sol_s for r in again] == [r.sol_s for r in direct]
    assert [r.timing for r in again] == [r.timing for r in runs]


def test_a_failed_capture_is_bounded_as_a_stream_run() -> None:
    m = load(LAP)
    dev = FakeDevice(capture_error="not capturable")
    (r,) = bench(m, measure(m), load_spec("h100-sxm"), formats=["csr"], backend="cusparse",
                 device=dev, method="graph", warmup=1, repeat=2, min_time=0.0)
    stream = bench(m, measure(m), load_spec("h100-sxm"), formats=["csr"],
                   backend="cusparse", device=FakeDevice(), method="stream", warmup=1,
                   repeat=2, min_time=0.0)[0]
    assert r.method == "stream" and "graph capture failed (not capturable)" in r.note
    assert r.sol_s == stream.sol_s


def test_a_wrong_gpu_result_is_an_error_not_a_time() -> None:
    m = load(LAP)
    with pytest.raises(GpuError, match="differs from scipy's at row 0"):
        bench(m, measure(m), load_spec("h100-sxm"), formats=["csr"], backend="cusparse",
              device=FakeDevice(wrong_result=True), warmup=0, repeat=1, min_time=0.0)


def test_spmm_and_fp32_are_checked_and_timed() -> None:
    m = load(LAP)
    runs = bench(m, measure(m), load_spec("h100-sxm"), formats=["csr", "csc", "coo"],
                 kernel="spmm", width=8, dtype="fp32", backend="cusparse",
                 device=FakeDevice(), warmup=0, repeat=2, min_time=0.0)
    assert [(r.storage, r.width, r.dtype) for r in runs] == \
        [("csr", 8, "fp32"), ("csc", 8, "fp32"), ("coo", 8, "fp32")]
    assert all(r.timing is not None and r.checked_error is not None for r in runs)


@pytest.mark.parametrize("name", ["lap2d_64.mtx", "494_bus.mtx", "LFAT5_hypersparse.mtx"])
def test_sliced_ell_is_built_checked_and_bounded_on_its_entries(name: str) -> None:
    path = DATA / name if (DATA / name).exists() else CORPUS / name
    m = load(path)
    s = measure(m)
    (run,) = bench(m, s, load_spec("h100-sxm"), formats=["sell"], backend="cusparse",
                   device=FakeDevice(), warmup=0, repeat=2, min_time=0.0)
    # the fake device multiplies from the SELL arrays, slot by slot: the check passed
    assert run.storage == "sell" and run.timing is not None and run.checked_error is not None
    assert run.checked_error <= 1.0
    # the bound reads the entries (value and column), x and y, never the padding (the
    # hypersparse one reads only the x and y entries its entries touch)
    if name != "LFAT5_hypersparse.mtx":
        assert run.bytes_total == pytest.approx(s.stored_entries * 12 + (m.rows + m.cols) * 8,
                                                rel=0.01)


def test_sliced_ell_skips_what_it_cannot_store() -> None:
    m = load(CORPUS / "empty.mtx") if (CORPUS / "empty.mtx").exists() else None
    spec = load_spec("h100-sxm")
    lap = load(LAP)
    (spmm,) = bench(lap, measure(lap), spec, formats=["sell"], kernel="spmm", width=4,
                    backend="cusparse", device=FakeDevice(), warmup=0, repeat=1,
                    min_time=0.0)
    assert spmm.skipped == "the SELL kernel here multiplies one vector (spmv)"
    # ten rows of 1,000 entries among rows of one, each in a slice of its own: those slices
    # are padded to 1,000 slots a row, 26.8x the entries
    long = np.arange(0, 320, 32)
    short = np.setdiff1d(np.arange(2000), long)
    rows, cols = np.r_[np.repeat(long, 1000), short], np.r_[np.tile(np.arange(1000), 10), short]
    wide = Matrix.from_scipy(coo_array((np.ones(rows.size), (rows, cols)), shape=(2000, 2000)),
                             "wide")
    (padded,) = bench(wide, measure(wide), spec, formats=["sell"], backend="cusparse",
                      device=FakeDevice(), warmup=0, repeat=1, min_time=0.0)
    assert padded.skipped == ("SELL of 32-row slices would store 321,696 slots, over 20x the "
                              "entries")
    if m is not None:
        (empty,) = bench(m, measure(m), spec, formats=["sell"], backend="cusparse",
                         device=FakeDevice(), warmup=0, repeat=1, min_time=0.0)
        assert empty.skipped == "SELL of a matrix without entries: nothing to store"


def test_formats_cupy_does_not_reach_and_host_methods_are_usage_errors() -> None:
    m = load(LAP)
    with pytest.raises(OptionError, match="cover csr, csc, coo, sell, not bsr4"):
        bench(m, measure(m), load_spec("a100"), formats=["bsr"], backend="cusparse",
              device=FakeDevice())
    with pytest.raises(OptionError, match="scipy backend times its kernels back to back"):
        bench(m, measure(m), load_spec("a100"), formats=["csr"], method="graph")


# -- the command line ---------------------------------------------------------------------

def test_without_cupy_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    code = run_guarded(cli, ["bench", LAP, "--hw", "h100-sxm", "--backend", "cusparse"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines() == [
        'sparsroof: error: the GPU backend needs CuPy: pip install "sparsroof[gpu]"']
    assert not gpu_available()


def test_timing_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_guarded(cli, ["bench", LAP, "--hw", "h100-sxm", "--timing", "warm"])
    assert code == 2 and "'warm' is not one of 'graph', 'stream', 'sync', 'cold'" in \
        capsys.readouterr().err
    code = run_guarded(cli, ["bench", LAP, "--hw", "h100-sxm", "--calls-per-sync", "0"])
    assert code == 2 and "--calls-per-sync" in capsys.readouterr().err
    code = run_guarded(cli, ["bench", LAP, "--hw", "h100-sxm", "--timing", "graph"])
    assert code == 2 and "the other methods need a GPU" in capsys.readouterr().err


def test_json_records_the_device_the_method_and_the_check(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gpu_device, "open_device", lambda: FakeDevice(call_s=40e-6))
    code = run_guarded(cli, ["bench", LAP, "--hw", "h100-sxm", "--backend", "cusparse",
                             "--storage", "csr,coo", "--timing", "sync", "--calls-per-sync",
                             "4", "--repeat", "3", "-O", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["kind"] == "bench" and doc["schema_version"] == 2 and doc["spec"] == "h100-sxm"
    assert {k: doc["device"][k] for k in ("name", "memory_bytes", "sms", "driver_version",
                                          "runtime_version", "l2_bytes")} == {
        "name": "Fake H100", "memory_bytes": 80 * 2**30, "sms": 132,
        "driver_version": "13.0", "runtime_version": "13.0", "l2_bytes": 50 * 2**20}
    for r in doc["results"]:
        assert r["backend"] == "cusparse" and r["timing"] == "sync"
        assert r["calls_per_sync"] == 4 and r["calls_per_region"] == 4
        assert r["timer"] == "host clock" and r["status"] == "ok" and not r["violation"]
        assert r["repeats"] >= 3 and r["min_s"] <= r["median_s"]
        assert 0 <= r["checked_error"] <= 1 and r["note"] == "scipy standing in for cuSPARSE"
        assert r["pct_sol"] == pytest.approx(100 * r["sol_s"] / r["min_s"])


def test_table_names_the_device_and_the_method(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gpu_device, "open_device", lambda: FakeDevice())
    monkeypatch.setenv("COLUMNS", "80")
    code = run_guarded(cli, ["bench", LAP, "--hw", "h100-sxm", "--backend", "cusparse",
                             "--storage", "csr", "--timing", "cold", "--repeat", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "measured on Fake H100, bound on h100-sxm, timed cold" in " ".join(out.split())
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("spec", ["h100-sxm", "a100-80gb"])
def test_a_spec_of_another_gpu_is_said_on_one_line(spec: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gpu_device, "open_device", lambda: FakeDevice())
    code = run_guarded(cli, ["bench", LAP, "--hw", spec, "--backend", "cusparse",
                             "--storage", "csr", "--repeat", "2", "-O", "json"])
    err = capsys.readouterr().err
    assert code == 0
    notes = [line for line in err.splitlines() if "a spec of another device" in line]
    if spec == "h100-sxm":
        assert notes == []
    else:
        assert notes == ["sparsroof: note: a100-80gb is a spec of another device (NVIDIA A100 "
                         "80GB SXM4) than the one the runs are on (Fake H100): the runs are "
                         "judged against its roofs, not this host's"]


# -- a real GPU ---------------------------------------------------------------------------

@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA GPU")
@pytest.mark.parametrize("method", ["graph", "stream", "sync", "cold"])
def test_cusparse_on_a_gpu(method: str) -> None:  # pragma: no cover - runs only on a GPU
    m = load(LAP)
    runs = bench(m, measure(m), load_spec("h100-sxm"), formats=["csr", "csc", "coo"],
                 backend="cusparse", method=method, repeat=5)
    for r in runs:
        assert r.backend == "cusparse" and r.timing is not None and r.timing.min_s > 0
        assert r.checked_error is not None and r.checked_error <= 1
        assert r.bytes_total > 0 and r.flops_useful == 2 * m.stored_entries
        assert np.isfinite(r.sol_s)
        assert not r.violation, r.explanation("h100-sxm")  # the bound is a promise here too
