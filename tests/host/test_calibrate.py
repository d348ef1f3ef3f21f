"""Calibration: the fit, the JSON round trip, bad files, and the commands that use it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from sparsroof.cli import cli
from sparsroof.errors import CalibrationError
from sparsroof.hardware.library import load_spec
from sparsroof.host.calibration import (
    FILLS,
    SCHEMA_VERSION,
    Calibration,
    Sample,
    calibrate,
    choose_fill,
    choose_stall,
    executed,
    features,
    fit,
    kernel_loops,
    load,
    save,
    stall_of,
)
from sparsroof.host.core_cost import STALL_LATENCIES, STALL_WINDOWS, CoreCounts
from sparsroof.host.stopwatch import Timing
from sparsroof.host.sweep import generate
from sparsroof.structure.features import measure

# a small CPU spec written by hand: every level with a bandwidth, as the schema of every
# spec version accepts
SPEC = """\
name: tiny-cpu
device: test CPU
kind: cpu
peaks:
  simt:
    fp64: {value: 10 GFLOP/s, source: test}
    fp32: {value: 20 GFLOP/s, source: test}
memory:
  - name: L2
    bandwidth: {value: 50 GB/s, source: test}
    capacity: {value: 1 MiB, source: test}
  - name: DRAM
    bandwidth: {value: 10 GB/s, source: test}
    capacity: {value: 16 GiB, source: test}
parallelism:
  cores: {value: 2, source: test}
"""


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SPEC)
    return path


def test_fit_recovers_known_coefficients() -> None:
    # times made from t = 2 us + 1 ns/row + 0.5 ns/slot + 0.1 ns/byte (DRAM), exactly
    samples = []
    for rows in (1000, 5000, 20000, 80000):
        for per_row in (1, 4, 16):
            slots = rows * per_row
            b = 12.0 * slots + 12.0 * rows
            t = 2e-6 + 1e-9 * rows + 0.5e-9 * slots + 0.1e-9 * b
            samples.append(Sample("m", "csr", rows, slots, b, "DRAM", t))
    f = fit(samples, ["L2", "DRAM"])["csr"]
    assert f.median_error < 1e-6
    assert f.coefficients["constant"] == pytest.approx(2e-6, rel=1e-3)
    x = features(3000, 9000, 144000.0, "DRAM", ["L2", "DRAM"])
    assert f.predict(x) == pytest.approx(2e-6 + 3e-6 + 4.5e-6 + 14.4e-6, rel=1e-6)


def _core_samples(disturbed: int = 0) -> list[Sample]:
    """t = 1 us + 0.5 ns/slot + 2 ns per L2 miss + 6 ns per mispredicted exit + 0.2 ns per
    entry past 32 in a row; the first ``disturbed`` samples run 3x slower."""
    samples = []
    for i, (rows, per_row, miss, exits) in enumerate(
            (r, k, m, e) for r in (1000, 8000, 64000) for k in (2, 8, 64)
            for m in (0.0, 0.5) for e in (0.0, 0.9)):
        slots = rows * per_row
        counts = CoreCounts({"L2": miss * slots}, exits * rows,
                            {32: max(0, per_row - 32) * rows, 128: 0.0})
        t = (1e-6 + 0.5e-9 * slots + 2e-9 * counts.misses["L2"] + 6e-9 * counts.mispredicts
             + 0.2e-9 * counts.chains[32]) * (3 if i < disturbed else 1)
        samples.append(Sample("m", "csr", rows, slots, 12.0 * slots, "DRAM", t,
                              counts.misses, counts.mispredicts,
                              {str(k): v for k, v in counts.chains.items()}))
    return samples


def test_fit_recovers_core_costs_and_shrugs_off_disturbed_runs() -> None:
    for disturbed in (0, 5):  # 5 of 36 runs 3x slow: the absolute-error fit ignores them
        f = fit(_core_samples(disturbed), ["L2", "DRAM"], branch_memory=100)["csr"]
        c = f.coefficients
        assert c["misses@L2"] == pytest.approx(2e-9, rel=1e-3)
        assert c["mispredicts"] == pytest.approx(6e-9, rel=1e-3)
        assert c["chain@32"] == pytest.approx(0.2e-9, rel=1e-3)
        assert f.median_error < 1e-3
    # exits the predictor learns (fewer than its memory) cost nothing and get no feature
    x = features(1000, 2000, 1.0, "DRAM", ["L2", "DRAM"], CoreCounts({}, 900.0, {}),
                 branch_memory=1000)
    assert x["mispredicts"] == 0.0


def test_kernel_loops_follow_each_formats_loop() -> None:
    """A HYB of 4,096 rows of 3 entries and one of 40: Bell & Garland's width is 3, the
    long row's 37 entries beyond it are one run of additions into y (past the 4th: 33,
    past the 16th: 21); the ELL loop has a fixed width, so no mispredicted exits and no
    chain past 32. CSR keeps the row-order counts as they are; ELL's loop has the longest
    row's width in every row."""
    from scipy.sparse import coo_array

    from sparsroof.matrix.mtx import Matrix

    lengths = np.array([3] * 4096 + [40])
    row = np.repeat(np.arange(lengths.size), lengths)
    col = np.concatenate([np.arange(n) for n in lengths])
    s = measure(Matrix.from_scipy(coo_array((np.ones(row.size), (row, col)),
                                            shape=(lengths.size, 40))))
    row_order = CoreCounts({"L2": 5.0}, 7.0, {32: 8.0})
    counts, ychains = kernel_loops(s, "hyb", row_order)
    assert (counts.misses, counts.mispredicts, counts.chains) == ({"L2": 5.0}, 0.0, {})
    # and its ELL loop of width 3 finishes every row in the loop for the leftover slots
    assert ychains == {"runs": 1.0, "leftover": 4097.0, "4": 33.0, "16": 21.0, "64": 0.0,
                       "256": 0.0}
    counts, ychains = kernel_loops(s, "coo", row_order)  # every row is a run: 4,097 of them
    assert counts.mispredicts == 0.0 and ychains["runs"] == 4097.0
    assert ychains["4"] == 36.0 and ychains["16"] == 24.0
    assert kernel_loops(s, "csr", row_order) == (row_order, {})
    # ELL loops over the longest row's 40 slots in every row: no exits to mispredict, and
    # 8 past the 32nd in each of the 4,097 rows; 40 is a multiple of 8: no leftover loop
    ell, loops = kernel_loops(s, "ell", row_order)
    assert (ell.misses, ell.mispredicts, ell.chains, loops) == (
        {"L2": 5.0}, 0.0, {32: 4097.0 * 8}, {"leftover": 0.0})
    # the runs are features of their own, zero where a format has none
    x = features(4097, 12325, 1e5, "L2", ["L2", "DRAM"], counts, ychains=ychains)
    assert (x["yruns"], x["ychain@4"], x["ychain@256"]) == (4097.0, 36.0, 0.0)
    assert features(4097, 12325, 1e5, "L2", ["L2", "DRAM"])["ychain@16"] == 0.0


@pytest.mark.parametrize("storage", ["ell", "hyb"])
def test_the_fit_sees_the_slots_and_bytes_the_host_kernel_loops_over(storage: str) -> None:
    """ELL pads every row to the longest (167 entries on this skewed matrix of 8 per row
    on average): the host kernel loops over rows x 167 slots and reads their values and
    columns, and a HYB's ELL part over rows x its width. The calibration's counts are those
    arrays' sizes, while the bound's stay those of the real entries."""
    from sparsroof.host.bench import kernel_traffic, scipy_matrix
    from sparsroof.host.ell_kernels import padded

    m = generate("skewed", 8000, 8)
    s = measure(m)
    p = padded(scipy_matrix(m, "csr"), storage)
    arrays = (p.values, p.columns, p.coo_rows, p.coo_columns, p.coo_values)
    slots, bytes_ = executed(s, storage)
    assert slots == p.values.size + p.coo_values.size
    bound = kernel_traffic(s, storage, "spmv", 1, "fp64")
    assert bytes_ - bound.bytes_b - bound.bytes_c == sum(a.nbytes for a in arrays)  # A
    if storage == "ell":
        assert slots == 8000 * 167 == 1_336_000  # the bound's count is 62,562 entries
    assert slots > s.stored_entries
    assert bound.flops_executed == 2 * s.stored_entries and bound.bytes_total < bytes_
    assert executed(s, "csr") == (s.stored_entries, kernel_traffic(s, "csr", "spmv", 1,
                                                                   "fp64").bytes_total)


@pytest.mark.slow  # runs a (small) calibration
def test_round_trip_and_prediction(tmp_path: Path, spec_file: Path) -> None:
    spec = load_spec(spec_file)
    plan = [("band", 2000, 4), ("random", 2000, 8), ("band", 8000, 2), ("diagonals", 4000, 4),
            ("blocks", 4000, 8), ("skewed", 2000, 4)]
    cal, samples = calibrate(spec, {"L2": 5e10}, formats=["csr", "coo"], matrices=plan,
                             rounds=2, repeat=3, min_time=0.0, warmup=1)
    assert {s.storage for s in samples} == {"csr", "coo"}
    assert len(samples) == 2 * len(plan)  # one per matrix and format: the faster round
    assert all(s.seconds > 0 for s in samples)
    assert cal.branch_memory > 0
    path = tmp_path / "cal.json"
    save(cal, samples, path)
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == SCHEMA_VERSION and doc["kind"] == "calibration"
    # every cache level has its own misses feature; main memory has none
    assert {k for k in doc["fits"]["csr"]["coefficients"] if k.startswith("misses@")} == {
        "misses@L2"}
    again = load(path)
    assert isinstance(again, Calibration)
    assert again.fits["csr"].coefficients == cal.fits["csr"].coefficients
    assert again.level_of(100.0) == "L2" and again.level_of(1e12) == "DRAM"
    t = again.predict("csr", 2000, 8000, 1e5)
    assert t is not None and t > 0
    assert again.predict("ell", 2000, 8000, 1e5) is None
    assert again.branch_memory == cal.branch_memory
    assert again.fill == cal.fill and again.fill in FILLS
    assert again.held_out_error == pytest.approx(cal.held_out_error)
    assert again.fits["csr"].held_out_median == cal.fits["csr"].held_out_median is not None
    m = generate("random", 2000, 8)
    by = again.predict_matrix(m, measure(m), ["csr", "coo", "ell"])
    assert set(by) == {"csr", "coo"} and all(t > 0 for t in by.values())
    # COO adds into y through memory: its stall's window and latency are chosen and kept
    assert set(cal.stall) == {"coo"} and again.stall == cal.stall
    window, latency = cal.stall["coo"]
    assert window in STALL_WINDOWS and latency in STALL_LATENCIES
    # COO's stall is the excess of its order over the rows sorted by length: the mixed
    # lengths of the skewed matrix stall, rows of (nearly) one length hardly
    stalls = {s.matrix: s.stall / s.slots for s in samples if s.storage == "coo"}
    assert stalls.pop("skewed_2000x4") > 0.05 and max(stalls.values()) < 0.01
    assert all(s.stall == 0 for s in samples if s.storage == "csr")


@pytest.mark.slow  # two passes, each in a process of its own
def test_passes_in_processes_of_their_own(spec_file: Path) -> None:
    plan = [("band", 1000, 4), ("skewed", 2000, 8)]
    steps: list[tuple[int, int, str]] = []
    cal, samples = calibrate(load_spec(spec_file), {"L2": 5e10}, formats=["csr", "coo"],
                             matrices=plan, rounds=2, separate=True, repeat=3,
                             min_time=0.0, warmup=1,
                             progress=lambda i, n, name: steps.append((i, n, name)))
    # every step of both passes came back from the passes' processes, in order
    assert [i for i, _, _ in steps] == [0, 0, 1, 2, 3, 4]
    assert steps[2][2] == "skewed_2000x8 (round 1 of 2)"
    assert steps[4][2] == "skewed_2000x8 (round 2 of 2)" and steps[-1][2] == "fitting"
    assert sorted((s.matrix, s.storage) for s in samples) == [
        ("band_1000x4", "coo"), ("band_1000x4", "csr"), ("skewed_2000x8", "coo"),
        ("skewed_2000x8", "csr")]
    assert all(s.seconds > 0 and s.spread >= 0 for s in samples)
    assert set(cal.fits) == {"csr", "coo"} and set(cal.stall) == {"coo"}


@pytest.mark.parametrize("text, problem", [
    ("{", "line 1: not valid JSON"),
    ('{"kind": "analyze"}', "not a sparsroof calibration"),
    ('{"kind": "calibration", "schema_version": 99}', "schema_version 99"),
    (f"{{\"kind\": \"calibration\", \"schema_version\": {SCHEMA_VERSION}}}",
     "malformed calibration: no 'fits'; run sparsroof calibrate again"),
])
def test_bad_calibration_files(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=problem):
        load(path)
    with pytest.raises(CalibrationError, match="no such file"):
        load(tmp_path / "missing.json")


def test_bench_command_json(spec_file: Path) -> None:
    result = CliRunner().invoke(cli, ["bench", "data/lap2d_64.mtx", "--hw", str(spec_file),
                                      "--formats", "csr,coo,dia", "--repeat", "3", "-O",
                                      "json"], standalone_mode=False)
    assert result.exception is None, result.output
    assert result.return_value in (0, 3)
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 2 and doc["kind"] == "bench"
    by = {r["storage"]: r for r in doc["results"]}
    assert set(by) == {"csr", "coo", "dia"}
    csr = by["csr"]
    # lap2d_64: 4096 rows, 20224 entries; CSR bytes 20224·12 + 4097·4, x 4096·8, y 4096·8
    assert csr["bytes_total"] == 20224 * 12 + 4097 * 4 + 2 * 4096 * 8
    assert csr["achieved_bytes_per_s"] == pytest.approx(csr["bytes_total"] / csr["median_s"])
    assert csr["violation"] == (csr["min_s"] < csr["sol_s"])
    assert csr["pct_sol"] == pytest.approx(100 * csr["sol_s"] / csr["min_s"])
    assert csr["timing"] == "stream" and csr["status"] in ("ok", "VIOLATION")


def test_bench_flags_a_run_faster_than_the_bound(tmp_path: Path) -> None:
    slow = tmp_path / "slow.yaml"   # 1 kB/s memory: every real run beats this bound
    slow.write_text(SPEC.replace("10 GB/s", "1 kB/s").replace("50 GB/s", "1 kB/s"))
    result = CliRunner().invoke(cli, ["bench", "data/lap2d_64.mtx", "--hw", str(slow),
                                      "--formats", "csr", "--repeat", "3"],
                           standalone_mode=False)
    assert result.return_value == 3  # the exit code of sparsroof bench
    # the words compare uses: a violation on stderr, its status in the table
    assert "sparsroof: violation: lap2d_64 csr d=1 fp64 ran in" in result.stderr
    assert "the spec or the traffic model is wrong for this run" in result.stderr
    assert "VIOLATION" in result.stdout


def _synthetic_calibration(path: Path, l2_roof: float | None = 2e11) -> Path:
    """A calibration fitted on made-up samples t = 1 us + 1 ns/slot (no host runs), its L2
    measured at ``l2_roof`` bytes/s (None: no roof measured, the spec's stand)."""
    samples = [Sample("m", f, r, r * k, 12.0 * r * k, "DRAM", 1e-6 + 1e-9 * r * k)
               for f in ("csr", "coo") for r in (100, 1000, 10000) for k in (1, 5)]
    levels = (("L2", 2.0**20), ("DRAM", None))
    save(Calibration("tiny-cpu", "test CPU", "fp64", levels,
                     {} if l2_roof is None else {"L2": l2_roof},
                     fit(samples, ["L2", "DRAM"])), samples, path)
    return path


@pytest.mark.parametrize("stall, problem", [
    ({"coo": {"window": 0, "latency": 6.0}}, "stall.coo.window"),
    ({"coo": {"window": 12, "latency": -1}}, "stall.coo.latency"),
    ({"coo": {"window": 12}}, "no 'latency'"),
])
def test_a_malformed_stall_is_refused(tmp_path: Path, stall: dict, problem: str) -> None:
    path = _synthetic_calibration(tmp_path / "c.json")
    assert load(path).stall == {}  # a calibration without stalls predicts without them
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc | {"stall": stall}))
    with pytest.raises(CalibrationError, match=problem):
        load(path)


def test_formats_command_partition_covers_the_rows(tmp_path: Path, spec_file: Path) -> None:
    cal = _synthetic_calibration(tmp_path / "cal.json")
    for extra in ([], ["--calibration", str(cal)]):
        result = CliRunner().invoke(cli, ["formats", "data/lap2d_64.mtx", "--hw",
                                          str(spec_file), "-O", "json", *extra],
                                    standalone_mode=False)
        assert result.exception is None, result.output
        doc = json.loads(result.stdout)
        blocks = doc["partition"]["blocks"]
        assert blocks[0]["first_row"] == 0 and blocks[-1]["last_row"] == 4096
        assert doc["partition"]["gain"] >= 1.0
        names = {r["storage"] for r in doc["formats"]}
        assert {"csr", "coo", "ell", "dia", "bsr4"} <= names
    calibrated = [r["calibrated_s"] is not None for r in doc["formats"]]
    assert calibrated == sorted(calibrated, reverse=True)  # calibrated formats first
    csr = next(r for r in doc["formats"] if r["storage"] == "csr")
    # 20224 entries: 1 us + 20224 ns (the fit is exact on its made-up samples)
    assert csr["calibrated_s"] == pytest.approx(1e-6 + 20224e-9, rel=1e-6)


def test_analyze_with_calibration(tmp_path: Path, spec_file: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.analysis.pipeline

    monkeypatch.setattr(sparsroof.analysis.pipeline, "_classify", lambda s: None)
    cal = _synthetic_calibration(tmp_path / "cal.json")
    result = CliRunner().invoke(cli, ["analyze", "data/lap2d_64.mtx", "--hw", str(spec_file),
                                      "--storage", "csr,ell", "--calibration", str(cal),
                                      "-O", "json"], standalone_mode=False)
    assert result.exception is None, result.output
    doc = json.loads(result.stdout)
    preds = doc["calibrated"][0]["predicted_s"]
    assert set(preds) == {"csr"}  # ell has no calibrated kernel
    assert preds["csr"] == pytest.approx(1e-6 + 20224e-9, rel=1e-6)
    # the bound takes the calibration's measured L2 roof (200 GB/s, not the spec's 50)
    csr = next(r for r in doc["matrices"][0]["results"] if r["traffic"]["storage"] == "csr")
    assert csr["bound"]["memory_level"] == "L2" and csr["bound"]["bandwidth"] == 2e11


def test_bench_shows_calibrated_times(tmp_path: Path, spec_file: Path) -> None:
    cal = _synthetic_calibration(tmp_path / "cal.json")
    result = CliRunner().invoke(cli, ["bench", "data/lap2d_64.mtx", "--hw", str(spec_file),
                                      "--formats", "csr,dia", "--repeat", "3", "--calibration",
                                      str(cal), "-O", "json"], standalone_mode=False)
    assert result.exception is None, result.output
    by = {r["storage"]: r for r in json.loads(result.stdout)["results"]}
    csr = by["csr"]
    assert csr["calibrated_s"] == pytest.approx(1e-6 + 20224e-9, rel=1e-6)
    assert csr["calibrated_error"] == pytest.approx(
        abs(csr["calibrated_s"] - csr["min_s"]) / csr["min_s"])
    assert by["dia"]["calibrated_s"] is None  # not in this calibration


def test_each_sample_keeps_its_fastest_pass_and_the_spread(
        spec_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.host.calibration as cal_module
    from sparsroof.host.bench import Measurement

    times = iter([3e-4, 2e-4, 4e-4])  # the three passes over the one matrix

    def fake_bench(m, s, spec, formats, dtype, **timing):  # type: ignore[no-untyped-def]
        t = Timing((next(times),))
        return [Measurement(m.name, "scipy", "csr", "spmv", 1, dtype, t, 1.0, 1.0, 1.0,
                            1e-9, "DRAM", "memory")]

    monkeypatch.setattr(cal_module, "bench", fake_bench)
    monkeypatch.setattr(cal_module, "time_host", _fake_time_host(times))
    monkeypatch.setattr(cal_module, "measure_branch_memory", lambda **_: 100.0)
    _, samples = calibrate(load_spec(spec_file), {}, formats=["csr"],
                           matrices=[("band", 1000, 8)], rounds=3)
    assert len(samples) == 1
    assert samples[0].seconds == 2e-4 and samples[0].spread == pytest.approx(1.0)


def test_the_stall_that_predicts_held_out_runs_best_is_kept() -> None:
    # COO times made from 1 us + 1.2 ns per entry + 0.4 ns per slot of the stall with a
    # window of 12 and a latency of 6: the held-out error picks that pair back out of the
    # grid, and the samples carry its stall
    samples, stalls = [], {}
    for pattern in ("skewed", "random", "band"):
        for rows in (125, 1000, 4000):
            for per_row in (2, 4, 8, 16):
                m = generate(pattern, rows, per_row)
                s = measure(m)
                lengths = np.bincount(m.row, minlength=rows)
                grid = {(w, lat): stall_of(lengths, s, "coo", w, lat)
                        for w in STALL_WINDOWS for lat in STALL_LATENCIES}
                n = float(s.stored_entries)
                stalls[(m.name, "coo")] = grid
                samples.append(Sample(m.name, "coo", rows, n, 16.0 * n, "DRAM",
                                      1e-6 + 1.2e-9 * n + 0.4e-9 * grid[(12, 6.0)]))
    chosen, carried = choose_stall(samples, ["L2", "DRAM"], 0.0, stalls)
    assert chosen == {"coo": (12, 6.0)}
    assert [c.stall for c in carried] == [stalls[(c.matrix, "coo")][(12, 6.0)] for c in carried]
    f = fit(carried, ["L2", "DRAM"])["coo"]
    assert f.coefficients["ystall"] == pytest.approx(0.4e-9, rel=1e-3)
    # calibrate says which it chose
    from sparsroof.report.calibration import calibration_summary

    cal = Calibration("s", "d", "fp64", (("L2", 2.0**20), ("DRAM", None)), {},
                      {"coo": f}, stall=chosen)
    assert ("coo: stall of its additions into y (beyond the same rows sorted by length), "
            "simulated with 12 in flight, 6 issue slots apart in one row"
            ) in calibration_summary(cal, carried, 1)


def test_the_fill_that_predicts_held_out_runs_best_is_kept() -> None:
    # bytes cost 0.1 ns from the 1 MiB cache while they fill at most half of it, 1 ns
    # beyond: the held-out error picks fill 0.5, and the samples are relabelled with it
    levels = (("L2", 2.0**20), ("DRAM", None))
    samples = []
    for i, b in enumerate(np.geomspace(1e4, 4e6, 40)):
        slots = 1000.0 * (1 + i % 7)
        t = 1e-6 + 1e-9 * slots + (1e-10 if b <= 0.5 * 2**20 else 1e-9) * b
        samples.append(Sample(f"m{i}", "csr", 100, slots, float(b), "L2", t))
    fill, error, relabelled = choose_fill(samples, levels, 0.0)
    assert fill == 0.5 and error < 1e-3
    assert all((s.level == "L2") == (s.bytes <= 0.5 * 2**20) for s in relabelled)


@pytest.mark.parametrize("hw, out, problem", [
    ("a100", "cal.json", "a100-80gb is a gpu spec; calibrate times this host's CPU kernels"),
    (None, "missing/cal.json", "cal.json: cannot write: no directory"),
    (None, ".", "cannot write: it is a directory"),
])
def test_calibrate_refuses_before_timing_anything(tmp_path: Path, spec_file: Path,
                                                  hw: str | None, out: str,
                                                  problem: str) -> None:
    from sparsroof.errors import OptionError

    result = CliRunner().invoke(cli, ["calibrate", "--hw", hw or str(spec_file), "-o",
                                      str(tmp_path / out)])
    assert isinstance(result.exception, OptionError)  # exit code 2, one line, from main
    assert problem in str(result.exception)
    assert "memory roof" not in result.output  # nothing was measured


def test_roofs_that_fall_down_the_hierarchy_are_raised_and_named() -> None:
    from sparsroof.host.memory_roofs import monotone_roofs

    # the busy host's figures: L3 measured 4.48 GB/s under DRAM's 5.72 GB/s; L2 at
    # 90 GB/s is above both and stays. L3 is raised to DRAM's roof, and only L3 is named.
    order = ["L1", "L2", "L3", "DRAM"]
    roofs, notes = monotone_roofs({"L1": 80e9, "L2": 90e9, "L3": 4.48e9, "DRAM": 5.72e9},
                                  order)
    assert roofs == {"L1": 90e9, "L2": 90e9, "L3": 5.72e9, "DRAM": 5.72e9}
    # L1 (80) is below L2 (90), the fastest of the slower levels, so it is raised to 90
    assert notes == ("L1 at 80 GB/s, below L2 at 90 GB/s",
                     "L3 at 4.48 GB/s, below DRAM at 5.72 GB/s")
    # roofs that already fall from fast to slow come back unchanged, with no note
    assert monotone_roofs({"L2": 90e9, "DRAM": 5.72e9}, order) == (
        {"L2": 90e9, "DRAM": 5.72e9}, ())


def _fake_runs(monkeypatch: pytest.MonkeyPatch, passes: list[float]) -> None:
    """``calibrate`` times one CSR run per pass with the seconds of ``passes``."""
    import sparsroof.host.calibration as cal_module
    from sparsroof.host.bench import Measurement

    times = iter(passes)

    def fake_bench(m, s, spec, formats, dtype, **timing):  # type: ignore[no-untyped-def]
        return [Measurement(m.name, "scipy", "csr", "spmv", 1, dtype, Timing((next(times),)),
                            1.0, 1.0, 1.0, 1e-9, "DRAM", "memory")]

    monkeypatch.setattr(cal_module, "bench", fake_bench)
    monkeypatch.setattr(cal_module, "time_host", _fake_time_host(times))
    monkeypatch.setattr(cal_module, "measure_branch_memory", lambda **_: 100.0)


def _fake_time_host(times: Iterator[float]) -> Callable[..., dict[str, Timing]]:
    """A stand-in for the later passes' timing: the next of ``times`` for each storage."""
    def fake(m, storages, dtype, **timing):  # type: ignore[no-untyped-def]
        return {s: Timing((next(times),)) for s in storages}

    return fake


def test_a_calibration_with_a_falling_roof_is_repaired_and_flagged(
        tmp_path: Path, spec_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparsroof.report.calibration import calibration_summary

    # main memory measured at 60 GB/s, above the spec's L2 (50 GB/s): L2 takes 60 GB/s
    _fake_runs(monkeypatch, [1e-4, 1.1e-4, 1e-4, 1.1e-4])
    cal, samples = calibrate(load_spec(spec_file), {"DRAM": 60e9}, formats=["csr"],
                             matrices=[("band", 1000, 8), ("band", 2000, 8)], rounds=2)
    assert cal.roofs == {"L2": 60e9, "DRAM": 60e9}
    assert cal.repaired == ("L2 at 50 GB/s, below DRAM at 60 GB/s",)
    assert cal.flagged and not cal.noisy  # passes 10 % apart: within the 20 % tolerance
    path = tmp_path / "cal.json"
    save(cal, samples, path)
    doc = json.loads(path.read_text())
    assert doc["flagged"] is True and doc["noisy"] is False
    assert doc["roofs_repaired"] == ["L2 at 50 GB/s, below DRAM at 60 GB/s"]
    again = load(path)  # the repaired roofs no longer fall: the file loads, still flagged
    assert again.repaired == cal.repaired and again.flagged
    lines = calibration_summary(again, samples, 2)
    assert "FLAGGED: roof raised: L2 at 50 GB/s, below DRAM at 60 GB/s" in lines[-1]


def test_passes_that_disagree_mark_the_calibration_noisy(
        spec_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # one of the two runs has passes 1e-4 and 2e-4 s apart (spread 100 % > 20 %): a half
    # of the runs disturbed is over the tenth a calibration allows
    _fake_runs(monkeypatch, [1e-4, 1e-4, 2e-4, 1e-4])
    cal, _ = calibrate(load_spec(spec_file), {}, formats=["csr"],
                       matrices=[("band", 1000, 8), ("band", 2000, 8)], rounds=2)
    assert cal.noisy and cal.flagged and cal.repaired == ()


def test_a_file_whose_roofs_fall_is_refused(tmp_path: Path, spec_file: Path) -> None:
    from sparsroof.host.calibrated import load_calibrated

    levels = (("L2", 2.0**20), ("DRAM", None))
    path = tmp_path / "bad.json"
    save(Calibration("tiny-cpu", "test CPU", "fp64", levels, {"L2": 4.48e9, "DRAM": 5.72e9},
                     {}), [], path)
    with pytest.raises(CalibrationError, match="impossible roofs: L2 at 4.48 GB/s, below "
                                               "DRAM at 5.72 GB/s; run sparsroof calibrate"):
        load(path)
    # a sound file (main memory measured at 60 GB/s, no L2 roof) used with a spec whose
    # L2 is published at 50 GB/s: beside each other, L2 falls below main memory
    other = tmp_path / "other.json"
    save(Calibration("other-cpu", "test CPU", "fp64", levels, {"DRAM": 60e9}, {}), [], other)
    with pytest.raises(CalibrationError, match="impossible roofs with tiny-cpu: L2 at "
                                               "50 GB/s, below DRAM at 60 GB/s"):
        load_calibrated(load_spec(spec_file), str(other))
    ok = tmp_path / "ok.json"  # an L2 roof of 200 GB/s over the spec's 50 is taken
    save(Calibration("tiny-cpu", "test CPU", "fp64", levels, {"L2": 2e11}, {}), [], ok)
    spec, cal = load_calibrated(load_spec(spec_file), str(ok))
    assert cal is not None and spec.memory[0].bandwidth.value == 2e11  # type: ignore[union-attr]


def test_calibrate_reports_steps_time_left_and_flags(
        tmp_path: Path, spec_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sparsroof.cli.calibrate as command
    import sparsroof.host.memory_roofs as memory_roofs

    def fake_calibrate(spec, roofs, *, progress, **_):  # type: ignore[no-untyped-def]
        for i in range(3):
            progress(i, 2, f"m{i}")
        levels = (("L2", 2.0**20), ("DRAM", None))
        return Calibration("tiny-cpu", "test CPU", "fp64", levels, roofs, {},
                           repaired=("L2 at 5 GB/s, below DRAM at 10 GB/s",)), []

    monkeypatch.setattr(memory_roofs, "measure_roofs", lambda spec, say: {"DRAM": {"r": 1e10}})
    monkeypatch.setattr(command, "calibrate", fake_calibrate)
    out = tmp_path / "cal.json"
    result = CliRunner().invoke(cli, ["calibrate", "--hw", str(spec_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "calibrate: [0/2] m0, time left unknown" in result.stderr
    # the first step pays the start-up (the kernels' compilation): the pace is that of
    # the steps after it, unknown until one of them is done
    assert "calibrate: [1/2] m1, time left unknown" in result.stderr
    assert "calibrate: [2/2] m2, about 0 s left" in result.stderr
    assert ("calibrate: FLAGGED: roof raised: L2 at 5 GB/s, below DRAM at 10 GB/s"
            in result.stderr)
    assert json.loads(out.read_text())["flagged"] is True


@pytest.mark.parametrize("change, said", [
    (lambda d: d.update(dtype="x"), "dtype: 'x' is not fp64 or fp32"),
    (lambda d: d.update(levels=[]), "levels: no memory level"),
    (lambda d: d["fits"]["csr"]["coefficients"].pop("constant"),
     "csr.coefficients: no constant"),
    (lambda d: d["fits"]["csr"]["coefficients"].update(constant=-1), "constant: -1 is negative"),
    (lambda d: d.update(branch_memory_exits=-5), "branch_memory_exits: -5 is negative"),
])
def test_a_calibration_that_cannot_price_a_run_is_refused(
        tmp_path: Path, change: Callable[[dict], object], said: str) -> None:
    """A calibration whose fields would fail deep in a prediction (an unknown value type,
    no level, no fit, no constant term) or price a run below zero (a negative term, which
    the non-negative fit never gives) is refused when read, naming the field."""
    import copy

    from sparsroof.host.calibration import load

    source = Path(__file__).parents[1] / "data" / "calibration-epyc" / "calibration-1.json"
    doc = copy.deepcopy(json.loads(source.read_text(encoding="utf-8")))
    change(doc)
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CalibrationError, match=said):
        load(path)
