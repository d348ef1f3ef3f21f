"""A GPU bench file is read as a host one: ``compare``, ``plot roofline --measured`` and
``check --measured`` judge the runs of ``tests/data/gpu-bench-format-fixture.json`` (the
shape ``bench --backend cusparse -O json`` writes, with made-up times: a format fixture,
not a measurement) each for the method it was timed by."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparsroof.cli import cli
from sparsroof.cli.guard import run_guarded
from sparsroof.compare import judge, read_runs
from sparsroof.hardware.library import load_spec
from sparsroof.model.timing import launch_floor

from ..conftest import CORPUS, DATA, ROOT

FIXTURE = ROOT / "tests" / "data" / "gpu-bench-format-fixture.json"


def test_the_fixture_says_it_is_not_a_measurement() -> None:
    doc = json.loads(FIXTURE.read_text())
    assert doc["fixture"].startswith("FORMAT FIXTURE, NOT A MEASUREMENT")
    assert doc["kind"] == "bench" and doc["schema_version"] == 2
    assert doc["device"]["name"] == "NVIDIA H100 80GB HBM3"


def test_compare_bounds_each_run_for_its_own_method() -> None:
    runs, errors = read_runs(str(FIXTURE))
    assert errors == []
    assert sorted({(r.storage, r.timing) for r in runs}) == sorted(
        (s, m) for s in ("csr", "coo") for m in ("graph", "stream", "sync", "cold"))
    assert {r.implementation for r in runs} == {"cusparse"} and {r.hw for r in runs} == \
        {"h100-sxm"}
    judged, errors = judge(runs, "a100")  # the file's own spec wins over the default
    assert errors == [] and {j.spec for j in judged} == {"h100-sxm"}
    h100 = load_spec("h100-sxm")
    for j in judged:
        # lap2d_64 is launch-bound on an H100: each run's bound is its method's floor
        assert j.bound.timing == j.run.timing and j.bound.bound == "launch"
        assert j.bound.sol_s == pytest.approx(launch_floor(h100, j.run.timing)[0])
        assert not j.violation
    # and bench's own judgement in the file is the one compare makes
    recorded = {(r["storage"], r["timing"]): r["sol_s"]
                for r in json.loads(FIXTURE.read_text())["results"]}
    assert {(j.run.storage, j.run.timing): j.bound.sol_s for j in judged} == \
        pytest.approx(recorded)


def test_compare_cli_and_the_measured_roofline(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded(cli, ["compare", str(FIXTURE), "-O", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["count"] == 8 and doc["summary"]["violations"] == 0
    png = tmp_path / "gpu.png"
    assert run_guarded(cli, ["plot", "roofline", "--measured", str(FIXTURE), "-o",
                             str(png)]) == 0
    assert png.stat().st_size > 10_000


def test_the_table_says_how_each_run_was_timed_when_runs_differ(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the bound of each row is its method's (graph 0.97 us, stream 2.3 us): say which
    monkeypatch.setenv("COLUMNS", "200")
    assert run_guarded(cli, ["compare", str(FIXTURE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("row"))
    assert header.split()[:5] == ["row", "matrix", "format", "d", "timing"]
    methods = {line.split()[4] for line in lines if line.startswith("results[")}
    assert methods == {"graph", "stream", "sync", "cold"}
    doc = json.loads(FIXTURE.read_text())
    doc["results"] = [r | {"path": str(DATA / "lap2d_64.mtx")} for r in doc["results"]
                      if r["timing"] == "stream"]
    one = tmp_path / "stream.json"
    one.write_text(json.dumps(doc))
    assert run_guarded(cli, ["compare", str(one)]) == 0
    assert " timing " not in capsys.readouterr().out  # one method: no column for it


def _budget(tmp_path: Path, timing: str) -> Path:
    path = tmp_path / "budget.yaml"
    path.write_text(f"""version: 1
defaults: {{hw: h100-sxm, dtype: fp64, storage: csr, model: compulsory, timing: {timing}}}
checks:
  - name: lap-gpu
    matrices: {DATA / "lap2d_64.mtx"}
    kernel: spmv
    limits: {{min_fraction_of_sol: 20%}}
""")
    return path


def test_check_finds_the_run_of_its_storage_and_method(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    # the csr graph run: 0.97 us bound / 4.2 us measured = 23.1 % >= 20 %
    code = run_guarded(cli, ["check", str(_budget(tmp_path, "graph")), "--measured",
                             str(FIXTURE), "-O", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    (outcome,) = [o for o in doc["outcomes"] if o["key"] == "min_fraction_of_sol"]
    assert outcome["reference"] == pytest.approx(4.2e-6)
    assert outcome["value"] == pytest.approx(0.97e-6 / 4.2e-6)
    # the sync run: 2.3 us (the stream floor: h100-sxm has no sync floor) / 19 us = 12 %:
    # the limit fails, as it should
    assert run_guarded(cli, ["check", str(_budget(tmp_path, "sync")), "--measured",
                             str(FIXTURE)]) == 1
    capsys.readouterr()


def test_check_refuses_runs_timed_another_way(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["results"] = [r for r in doc["results"] if r["timing"] == "stream"]
    only_stream = tmp_path / "stream.json"
    only_stream.write_text(json.dumps(doc))
    code = run_guarded(cli, ["check", str(_budget(tmp_path, "graph")), "--measured",
                             str(only_stream)])
    err = capsys.readouterr().err
    assert code == 2
    assert "was timed stream, and the check bounds runs timed graph" in err


def test_a_probed_spec_written_elsewhere_is_found_beside_the_file(tmp_path: Path) -> None:
    from sparsroof.host.gpu.probe import probe_gpu
    from sparsroof.host.gpu.spec_yaml import gpu_spec_yaml

    from ..gpu_fake import FakeDevice

    (tmp_path / "gpu.yaml").write_text(gpu_spec_yaml(probe_gpu(FakeDevice()), "gpu"))
    doc = json.loads(FIXTURE.read_text())
    doc["spec_file"] = "/on/the/gpu/machine/out/gpu.yaml"
    for r in doc["results"]:
        r["path"] = str(DATA / "lap2d_64.mtx")
    moved = tmp_path / "runs.json"
    moved.write_text(json.dumps(doc))
    runs, errors = read_runs(str(moved))
    assert errors == [] and {r.hw for r in runs} == {str(tmp_path / "gpu.yaml")}
    judged, errors = judge(runs, "a100")
    assert errors == [] and {j.spec for j in judged} == {"gpu"}


# Runs measured on a real H100 (tests/data/gpu-h100, README beside the data): cuSPARSE's CSR
# and COO SpMV, fp64, of every readable corpus matrix, each timed four ways. A bound is a
# promise for any correct kernel, so no run may be faster than its bound, on the bundled
# spec and on the spec the same GPU's probe wrote.
H100 = ROOT / "tests" / "data" / "gpu-h100"


def _h100_runs_here(tmp_path: Path, name: str, spec: str) -> tuple[Path, int]:
    """The measured runs of file ``name`` whose matrices this checkout carries, with their
    paths here, to be bounded on ``spec``."""
    doc = json.loads((H100 / name).read_text())
    here = {p.name: p for p in (*CORPUS.iterdir(), *DATA.iterdir())}
    kept = [r | {"path": str(here[Path(r["path"]).name])} for r in doc["results"]
            if Path(r["path"]).name in here and not r["skipped"]]  # a skipped run has no time
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(doc | {"results": kept, "spec": spec}))
    return path, len(kept)


def _judged(tmp_path: Path, name: str, spec: str, capsys: pytest.CaptureFixture[str]
            ) -> dict[str, Any]:
    hw = spec if spec == "h100-sxm" else str(H100 / spec)
    runs, count = _h100_runs_here(tmp_path, name, hw)
    assert run_guarded(cli, ["compare", str(runs), "-O", "json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert doc["summary"]["count"] == count
    assert {r["spec"] for r in doc["runs"]} == {"h100-sxm" if spec == "h100-sxm" else "gpu"}
    return doc


def test_the_h100_runs_are_a_measurement_of_every_method() -> None:
    for name, count, products in (
            ("runs.json", 392, {("spmv", 1, "fp64")}),
            ("runs-more.json", 1200, {("spmm", 8, "fp64"), ("spmv", 1, "fp32"),
                                      ("spmm", 4, "fp32")}),
            # the two matrices without entries have no SELL to run: 16 runs skipped
            ("runs-sell.json", 384, {("spmv", 1, "fp64"), ("spmv", 1, "fp32")})):
        doc = json.loads((H100 / name).read_text())
        assert doc["device"]["name"] == "NVIDIA H100 80GB HBM3" and "fixture" not in doc
        runs = [r for r in doc["results"] if not r["skipped"]]
        assert len(runs) == count
        assert {(r["kernel"], r["width"], r["dtype"]) for r in runs} == products
        assert {r["timing"] for r in runs} == {"graph", "stream", "sync", "cold"}
        assert all(r["checked_error"] <= 1.0 for r in runs)  # each product was checked first
        assert not any("capture failed" in r["note"] for r in runs)


@pytest.mark.parametrize("spec", ["h100-sxm", "probe-2.yaml"])
def test_no_h100_spmv_run_beats_its_bound(spec: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    doc = _judged(tmp_path, "runs.json", spec, capsys)
    # 44 of the 49 matrices are carried (the rest: generated or unlicensed)
    assert doc["summary"]["count"] == 352 and doc["summary"]["violations"] == 0
    # the matrices without entries (a 0 x 0 one and a 3 x 4 one): no kernel need run
    assert doc["summary"]["bands"]["empty"]["runs"] == 16
    assert all(r["launch_s"] == 0 for r in doc["runs"] if r["band"] == "empty")
    # every other run is bounded; those replayed through a graph within 12x of their bound
    # (these small matrices are all launch-bound: cuSPARSE took 2.9-9.8 us a call)
    ratios = [r["measured_over_bound"] for r in doc["runs"] if r["band"] != "empty"]
    graph = [r["measured_over_bound"] for r in doc["runs"]
             if r["band"] != "empty" and r["timing"] == "graph"]
    assert min(ratios) >= 1.0 and len(graph) == 84 and max(graph) < 12


@pytest.mark.parametrize("spec", ["h100-sxm", "probe-3.yaml"])
def test_no_h100_spmm_or_fp32_run_beats_its_bound(spec: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    doc = _judged(tmp_path, "runs-more.json", spec, capsys)
    assert doc["summary"]["count"] == 3 * 4 * 2 * 45 and doc["summary"]["violations"] == 0
    ratios = [r["measured_over_bound"] for r in doc["runs"] if r["band"] != "empty"]
    assert min(ratios) >= 1.0


@pytest.mark.parametrize("spec", ["h100-sxm", "probe-4.yaml"])
def test_no_h100_sliced_ell_run_beats_its_bound(spec: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # cuSPARSE's own ELL-family kernel (sliced ELL, slices of 32 rows in the file's row
    # order), bounded on its entries alone: the padding is never charged
    doc = _judged(tmp_path, "runs-sell.json", spec, capsys)
    # 45 matrices carried, two of them without entries (skipped): 43 x 2 precisions x 4
    assert doc["summary"]["count"] == 344 and doc["summary"]["violations"] == 0
    assert {r["format"] for r in doc["runs"]} == {"sell"}
    assert min(r["measured_over_bound"] for r in doc["runs"]) >= 1.0
