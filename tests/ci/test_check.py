"""``sparsroof check``: budgets, exit codes, baselines, measured results and CI outputs.

Most tests use a tiny spec with round numbers (1 TFLOP/s fp64, 100 GB/s) and 4 x 4
matrices whose bytes are worked out by hand: CSR fp64/int32 moves A = nnz·12 + (m+1)·4,
B (compulsory) = k_used·8 and C = m·8 bytes.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
import yaml

from sparsroof.ci.budget import load_budget
from sparsroof.ci.check import run_checks
from sparsroof.cli import cli
from sparsroof.cli.common import run_guarded
from sparsroof.model.traffic import MODELS, STORAGES

from ..conftest import DATA, ROOT, sparsroof

SPEC = """\
name: round
device: a box with round numbers
kind: gpu
peaks: {simt: {fp64: {value: 1 TFLOP/s, source: made up for tests}}}
memory: [{name: DRAM, bandwidth: {value: 100 GB/s, source: made up for tests}}]
"""
# identity: nnz 4 -> A 4·12 + 5·4 = 68, B 4·8 = 32, C 4·8 = 32: 132 bytes, 1.32 ns at 100 GB/s
IDENTITY = "%%MatrixMarket matrix coordinate real general\n4 4 4\n" + "".join(
    f"{i} {i} 1.0\n" for i in range(1, 5))
# identity plus a cycle (1,2) (2,3) (3,4) (4,1): nnz 8 -> A 8·12 + 20 = 116, + 32 + 32 = 180 B
DENSER = IDENTITY.replace("4 4 4\n", "4 4 8\n") + "1 2 1.0\n2 3 1.0\n3 4 1.0\n4 1 1.0\n"


def check(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """Run ``sparsroof check`` in-process; (exit code, stdout, stderr)."""
    code = run_guarded(cli, ["check", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def budget_dir(tmp_path: Path, budget: str, matrix: str = IDENTITY) -> Path:
    """A folder with the round spec, a 4 x 4 matrix ``m.mtx`` and ``budget.yaml``."""
    (tmp_path / "round.yaml").write_text(SPEC)
    (tmp_path / "m.mtx").write_text(matrix)
    path = tmp_path / "budget.yaml"
    path.write_text(budget)
    return path


ONE = """\
defaults: {hw: round.yaml}
checks:
  - name: tiny
    matrices: m.mtx
    limits:
{limits}
"""


def one(limits: str) -> str:
    return ONE.replace("{limits}", "\n".join(f"      {line}" for line in limits.splitlines()))


def as_json(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, dict]:
    code, out, _ = check(capsys, *args, "-O", "json")
    return code, json.loads(out)


def test_the_old_json_flag_still_gives_the_json(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("max_sol_latency: 2 ns"))
    code, new = as_json(capsys, path)
    old_code, out, _ = check(capsys, path, "--json")
    assert code == old_code == 0 and json.loads(out)["counts"] == new["counts"]


def test_passing_budget_exit_0_with_hand_checked_values(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one(
        "max_sol_latency: 2 ns\nmax_bytes_moved: 0.2 kB\nmin_attainable: 5 GFLOP/s\n"
        "min_speedup_over_dense: 1.4\nexpected_bound: memory"))
    code, doc = as_json(capsys, path)
    assert code == 0 and doc["passed"] and doc["counts"] == {
        "checks": 1, "checks_failed": 0, "total": 5, "passed": 5, "failed": 0, "impossible": 0}
    assert doc["schema_version"] == 1 and doc["version"] and doc["specs"] == ["round"]
    by_key = {o["key"]: o for o in doc["outcomes"]}
    # 132 bytes at 100 GB/s = 1.32 ns; margin (2 - 1.32) / 2 = 0.34
    assert by_key["max_sol_latency"]["value"] == pytest.approx(1.32e-9)
    assert by_key["max_sol_latency"]["margin"] == pytest.approx(0.34)
    assert by_key["max_bytes_moved"]["value"] == 132  # margin (200 - 132) / 200 = 0.34
    assert by_key["max_bytes_moved"]["margin"] == pytest.approx(0.34)
    # 8 useful FLOPs in 1.32 ns = 6.06 GFLOP/s; margin 6.0606/5 - 1 = 0.2121
    assert by_key["min_attainable"]["value"] == pytest.approx(8 / 1.32e-9)
    assert by_key["min_attainable"]["margin"] == pytest.approx(8 / 1.32e-9 / 5e9 - 1)
    # dense 4 x 4 GEMV: (16 + 4 + 4)·8 = 192 bytes -> 1.92 ns; speedup 1.92 / 1.32
    assert by_key["min_speedup_over_dense"]["value"] == pytest.approx(192 / 132)
    assert by_key["expected_bound"]["margin"] is None


def test_failing_budget_exit_1_with_margins(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("max_sol_latency: 1 ns\nmax_bytes_moved: 100 B\n"
                                    "expected_bound: compute"))
    code, out, err = check(capsys, path)
    assert code == 1
    # 1.32 ns against 1 ns and 132 B against 100 B: both margins (1 - 1.32) / 1 = -32.0 %
    assert out.count("-32.0%") == 2 and out.count("FAIL") == 3
    assert err.strip().count("\n") == 0
    assert "1 check (3 limits on their matrices), 1 of 1 failed (3 of 3 limits)" in err


def test_example_budget_passes_and_matches_analyze() -> None:
    result = sparsroof("check", "examples/budgets.yaml", "--json", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["counts"]["failed"] == 0 and doc["counts"]["total"] == 16
    lap = next(p for p in doc["points"] if p["check"] == "laplacian-spmv")
    # CSR A 20224·12 + 4097·4 = 259,076; B and C 4096·8 = 32,768 each: 324,612 bytes
    assert lap["bytes_total"] == 324_612
    # the sparse kernel is bound by the 1.3 us launch floor; the dense GEMV's
    # (4096² + 2·4096)·8 = 134,283,264 bytes exceed the 40 MiB L2, which at best holds
    # 40 MiB of them: the rest streams from HBM2e at 2039 GB/s
    assert lap["speedup_over_dense"] == pytest.approx(
        ((134_283_264 - 40 * 2**20) / 2039e9) / 1.3e-6)
    widths = sorted((p["matrix"], p["width"]) for p in doc["points"]
                    if p["check"] == "spmm-no-reuse")
    assert widths == [("lap2d_64", 1), ("lap2d_64", 16), ("random_1000", 1),
                      ("random_1000", 16)]


def test_the_speedup_over_dense_is_the_one_analyze_gives(tmp_path: Path) -> None:
    """A check that leaves the unit unset compares with the dense GEMM as analyze does (on
    the A100's fp64 tensor cores, at 19.5 TFLOP/s, not the 9.7 of its SIMT cores): at
    width 64 the dense GEMM of random_1000 is bound by compute, so the two peaks differ
    by 2x in the speedup. A check that sets its unit moves the dense GEMM with it, as
    ``analyze --unit`` does."""
    settings = {"kernel": "spmm", "widths": [64], "storage": "ell", "model": "random"}
    for unit in (None, "simt"):
        budget = tmp_path / f"b-{unit}.yaml"
        check = {"name": "x", "matrices": [str(DATA / "random_1000.mtx")], "hw": "a100",
                 **settings, "limits": {"min_speedup_over_dense": 1}}
        if unit:
            check["unit"] = unit
        budget.write_text(yaml.safe_dump({"checks": [check]}))
        result = sparsroof("check", str(budget), "-O", "json", cwd=ROOT)
        assert result.returncode == 0, result.stderr
        point = json.loads(result.stdout)["points"][0]
        args = ["analyze", str(DATA / "random_1000.mtx"), "--hw", "a100", "--kernel", "spmm",
                "--d", "64", "--storage", "ell", "--model", "random", "-O", "json",
                *(["--unit", unit] if unit else [])]
        analysed = json.loads(sparsroof(*args, cwd=ROOT).stdout)["matrices"][0]["results"][0]
        assert point["speedup_over_dense"] == pytest.approx(analysed["speedup_vs_dense"])
        dense = analysed["dense_sol_s"]
        assert dense == pytest.approx(2 * 1000 * 1000 * 64 / (9.7e12 if unit else 19.5e12),
                                      rel=1e-3)


def test_globs_are_relative_to_the_budget_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a", "b"):
        (tmp_path / "sub" / f"{name}.mtx").write_text(IDENTITY)
    path = budget_dir(tmp_path, one("max_sol_latency: 1 ms").replace("m.mtx", "sub/*.mtx"))
    report = run_checks(load_budget(path))
    assert [p.matrix for p in report.points] == ["a", "b"] and report.exit_code == 0


@pytest.mark.parametrize("key,name", [*(("storage", n) for n in STORAGES),
                                      *(("model", n) for n in MODELS)])
def test_every_core_storage_and_model_name_is_accepted(tmp_path: Path, key: str,
                                                       name: str) -> None:
    """Budget names come from the core's tables, so every format and model works."""
    path = budget_dir(tmp_path, one("max_bytes_moved: 1 MB").replace(
        "matrices: m.mtx", f"matrices: m.mtx\n    {key}: {name}"))
    points = run_checks(load_budget(path)).points
    # a model that cannot apply to this matrix (no power-law fit) yields no point
    assert all(getattr(p, key) == name for p in points)
    if key == "storage":
        assert len(points) == 1 and points[0].bytes_total > 0


def test_measured_faster_than_sol_is_flagged(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("min_fraction_of_sol: 40%"))
    (tmp_path / "fast.csv").write_text("matrix,kernel,width,seconds\nm,spmv,1,1 ns\n")
    (tmp_path / "slow.json").write_text(json.dumps(
        [{"matrix": "dir/m.mtx", "kernel": "spmv", "width": 1, "seconds": 2.64e-9}]))
    code, doc = as_json(capsys, path, "--measured", tmp_path / "fast.csv")
    (outcome,) = doc["outcomes"]
    # SoL 1.32 ns measured in 1 ns: fraction 1.32, faster than possible -> not a pass
    assert code == 1 and outcome["status"] == "impossible"
    assert outcome["value"] == pytest.approx(1.32) and doc["counts"]["impossible"] == 1
    assert "faster than the speed of light" in outcome["message"]
    code, doc = as_json(capsys, path, "--measured", tmp_path / "slow.json")
    (outcome,) = doc["outcomes"]
    # 1.32 / 2.64 = 50 % of SoL against a 40 % minimum: margin 0.5 / 0.4 - 1 = 0.25
    assert code == 0 and outcome["status"] == "pass"
    assert outcome["margin"] == pytest.approx(0.25) and outcome["reference"] == 2.64e-9


MEASURED_DIALECT = [
    # compare's CSV, with its optional columns
    ("t.csv", "matrix,time_s,kernel,format,d,dtype,hw,implementation,timing\n"
              "m.mtx,2.64e-9,spmv,csr,1,fp64,round,mine,graph\n"),
    # the budget's older columns, read as time_s and d
    ("t.csv", "matrix,kernel,width,seconds\nm,spmv,1,2.64 ns\n"),
    # kernel and d left out: width 1, any kernel
    ("t.csv", "matrix,time_s\nm,2.64e-9\n"),
    # a time per format: only the budget's csr one is its run
    ("t.csv", "matrix,time_s,format\nm,1e-9,ell\nm,2.64e-9,csr\nm,1e-9,coo\n"),
    # other specs' and other timings' runs are not this check's
    ("t.csv", "matrix,time_s,hw,timing\nm,1e-9,a100,graph\nm,1e-9,round,sync\n"
              "m,2.64e-9,round,graph\n"),
    ("t.json", json.dumps([{"matrix": "m", "time_s": 2.64e-9, "d": 1}])),
    ("t.json", json.dumps({"results": [{"matrix": "m", "kernel": "spmv", "width": 1,
                                        "seconds": 2.64e-9}]})),
]


@pytest.mark.parametrize("name,text", MEASURED_DIALECT)
def test_measured_runs_in_the_compare_dialect(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               name: str, text: str) -> None:
    path = budget_dir(tmp_path, one("min_fraction_of_sol: 40%"))
    (tmp_path / name).write_text(text)
    code, doc = as_json(capsys, path, "--measured", tmp_path / name)
    (outcome,) = doc["outcomes"]
    # the one matching run took 2.64 ns: SoL 1.32 ns is 50 % of it, against a 40 % minimum
    assert code == 0 and outcome["reference"] == pytest.approx(2.64e-9)
    assert outcome["value"] == pytest.approx(0.5)


def test_measured_column_not_read_is_a_note(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("min_fraction_of_sol: 40%"))
    (tmp_path / "t.csv").write_text("matrix,time_s,fromat\nm,2.64e-9,ell\n")
    code, _, err = check(capsys, path, "--measured", tmp_path / "t.csv", "-O", "json")
    assert code == 0
    assert "t.csv:1: column 'fromat' is not read" in err and err.startswith("sparsroof: note:")


def test_compare_reads_a_budget_measured_file(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """One dialect: the file a budget reads is one compare judges, old columns and all."""
    budget_dir(tmp_path, ONE)
    (tmp_path / "t.csv").write_text("matrix,kernel,width,seconds\nm.mtx,spmv,1,2.64 ns\n")
    code = run_guarded(cli, ["compare", str(tmp_path / "t.csv"), "--hw",
                             str(tmp_path / "round.yaml"), "-O", "json"])
    doc = json.loads(capsys.readouterr().out)
    (run,) = doc["runs"]
    # bound 1.32 ns, measured 2.64 ns
    assert code == 0 and run["measured_s"] == pytest.approx(2.64e-9)
    assert run["bound_s"] == pytest.approx(1.32e-9) and run["d"] == 1


def test_junit_structure_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("max_sol_latency: 1 ns\nmax_bytes_moved: 1 kB\n"
                                    "min_fraction_of_sol: 0.1\nexpected_bound: memory"))
    (tmp_path / "t.csv").write_text("matrix,kernel,width,seconds\nm,spmv,1,1e-9\n")
    report = tmp_path / "report.xml"
    code, _, _ = check(capsys, path, "--measured", tmp_path / "t.csv", "--junit", report)
    assert code == 1
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert suite.get("name") == "tiny" and len(cases) == 4
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [c for c in cases if c.find("error") is not None]
    assert len(failures) == 1 and len(errors) == 1  # SoL over 1 ns; measured beats SoL
    for node in (root, suite):
        assert (node.get("tests"), node.get("failures"), node.get("errors")) == ("4", "1", "1")
    assert failures[0].get("name") == "m d=1 SoL latency"
    assert errors[0].find("error").get("type") == "model-or-measurement-error"  # type: ignore


def test_baseline_regression_caught_with_margin(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("max_sol_latency: 1 ms"))
    base = tmp_path / "base.json"
    code, _, _ = check(capsys, path, "--write-baseline", base)
    doc = json.loads(base.read_text())
    assert code == 0 and doc["kind"] == "baseline" and doc["schema_version"] == 1
    assert doc["version"] and doc["specs"] == ["round"]
    assert doc["entries"][0]["bytes_total"] == 132
    (tmp_path / "m.mtx").write_text(DENSER)
    code, doc = as_json(capsys, path, "--baseline", base, "--tolerance", "5%")
    got = {o["key"]: o for o in doc["outcomes"]}
    # 180 bytes against 132·1.05 = 138.6: margin (138.6 - 180) / 138.6 = -0.29870;
    # the SoL grows in the same ratio (1.80 ns against 1.386 ns)
    assert code == 1
    for key in ("baseline_bytes_moved", "baseline_sol_latency"):
        assert got[key]["status"] == "fail"
        assert got[key]["margin"] == pytest.approx((138.6 - 180) / 138.6)
    assert got["baseline_bytes_moved"]["limit"] == pytest.approx(138.6)
    assert got["baseline_bytes_moved"]["reference"] == 132
    # with 50 % tolerance the limit is 198 bytes: margin (198 - 180) / 198 = +0.0909
    code, doc = as_json(capsys, path, "--baseline", base, "--tolerance", "0.5")
    margins = [o["margin"] for o in doc["outcomes"] if o["key"].startswith("baseline")]
    assert code == 0 and margins == pytest.approx([18 / 198, 18 / 198])


def test_baseline_from_another_configuration_is_rejected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = budget_dir(tmp_path, one("max_sol_latency: 1 ms"))
    base = tmp_path / "base.json"
    check(capsys, path, "--write-baseline", base)
    path.write_text(path.read_text().replace("matrices: m.mtx", "matrices: m.mtx\n    "
                                                                "model: random"))
    code, _, err = check(capsys, path, "--baseline", base)
    assert code == 2 and "recorded with model 'compulsory'" in err and "'tiny'" in err


def test_github_annotations_and_step_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = budget_dir(tmp_path, one("max_sol_latency: 1 ns\nexpected_bound: memory"))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = check(capsys, path)
    commands = [line for line in out.splitlines() if line.startswith("::")]
    # only the failing limit; the check starts on line 3 of the budget file
    assert code == 1 and commands == [
        f"::error file={path},line=3,title=sparsroof check tiny%3A SoL latency fail::"
        "m d=1: SoL latency 1.32 ns is above the limit 1 ns (margin -32.0%25)"]  # % escaped
    text = summary.read_text()
    assert text.startswith("earlier step\n### sparsroof check: ")
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 2 and "FAIL" in table[2] and "PASS" in table[3]
    # with --json, stdout stays one JSON document and the commands go to stderr
    code, out, err = check(capsys, path, "--json")
    assert json.loads(out)["counts"]["failed"] == 1 and err.startswith("::error file=")


def test_no_annotations_outside_github(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, out, _ = check(capsys, budget_dir(tmp_path, one("max_sol_latency: 1 ns")))
    assert code == 1 and "::error" not in out and "FAIL" in out


INVALID = [
    ("colour: red\n" + one("max_sol_latency: 1 ms"), "budget.yaml: colour: unknown key"),
    (one("max_sol_latency: 1 ms").replace("limits:", "limit:"),
     "check 'tiny': limit: unknown key"),
    (one("max_latency: 1 ms"), "check 'tiny': limits.max_latency: unknown limit"),
    (one("max_byte_moved: 1 MB"), "check 'tiny': limits.max_byte_moved: unknown limit; did "
     "you mean 'max_bytes_moved'?"),
    (one("max_sol_latency: 15 parsecs"), "limits.max_sol_latency: '15 parsecs' is not a time"),
    (one("max_sol_latency: 15"), "limits.max_sol_latency: 15 has no unit"),
    (one("max_bytes_moved: 2 MB/s"), "limits.max_bytes_moved: '2 MB/s' is not a capacity"),
    (one("min_attainable: 5 GB/s"), "limits.min_attainable: '5 GB/s' is not a throughput"),
    (one("expected_bound: network"), "limits.expected_bound: 'network' is not one of"),
    (one("min_fraction_of_sol: 1.5"), "limits.min_fraction_of_sol: 1.5 is not a fraction"),
    (one("min_speedup_over_dense: -3"), "limits.min_speedup_over_dense: -3 is not a positive"),
    (one("min_fraction_of_sol: 0.5"), "check 'tiny': limits.min_fraction_of_sol: needs measured"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "m.mtx\n    storage: ellx"),
     "check 'tiny': storage: unknown storage 'ellx' (known: csr"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "m.mtx\n    model: lru"),
     "check 'tiny': model: unknown model 'lru'"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "m.mtx\n    dtype: fp7"),
     "check 'tiny': dtype: unknown dtype 'fp7'"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "m.mtx\n    dtype: fp32"),
     "round.yaml: round has no simt peak at fp32"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "m.mtx\n    widths: [4]"),
     "check 'tiny': widths: spmv multiplies by one vector"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "m.mtx\n    kernel: spmm\n    widths: 0"),
     "check 'tiny': widths: expected a whole number >= 1"),
    (one("max_sol_latency: 1 ms").replace("round.yaml", "a10O"),
     "check 'tiny': hw: a10O: no bundled hardware spec"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "'*.smtx'"),
     "check 'tiny': matrices: '*.smtx' matches no file"),
    (one("max_sol_latency: 1 ms").replace("m.mtx", "gone.mtx"),
     "check 'tiny': matrices: ") ,
    (one("max_sol_latency: 1 ms") + "  - name: tiny\n    matrices: m.mtx\n"
     "    limits: {max_sol_latency: 1 ms}\n", "checks[1].name: duplicate check name 'tiny'"),
    (one("max_sol_latency: 1 ms").replace("    limits:\n      max_sol_latency: 1 ms\n", ""),
     "check 'tiny': limits: missing required key"),
    ("defaults: {hw: round.yaml}\nchecks: []\n", "budget.yaml: checks: expected a non-empty"),
    ("checks: [{name: a, matrices: m.mtx, limits: {max_sol_latency: 1 ms}}]\n",
     "check 'a': hw: missing"),
    ("version: 2\n" + one("max_sol_latency: 1 ms"), "version: unsupported budget file version"),
    ("checks: [\n", "budget.yaml: line 2: malformed YAML"),
    ("checks: !!python/object/apply:os.system ['echo unsafe']\n", "malformed YAML"),
]


@pytest.mark.parametrize("budget,needle", INVALID)
def test_invalid_budget_exit_2_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        budget: str, needle: str) -> None:
    code, out, err = check(capsys, budget_dir(tmp_path, budget))
    assert code == 2 and out == ""
    assert err.startswith("sparsroof: error: ") and err.count("\n") == 1, err
    assert needle in err and "budget.yaml" in err


INVALID_INPUTS = [
    (["--measured", "{d}/t.csv"], "matrix,kernel,width,seconds\nm,spmv,1,1e-6\nm,spmv,1,2e-6\n",
     "t.csv: line 3: 2 times for matrix 'm', kernel spmv, width 1"),
    (["--measured", "{d}/t.csv"], "matrix,time_s,seconds\nm,1e-6,2e-6\n",
     "t.csv: line 2: both time_s and seconds (its older name): give one"),
    (["--measured", "{d}/t.csv"], "matrix,d\nm,1\n",
     "t.csv: line 1: the header needs the columns time_s"),
    (["--measured", "{d}/t.json"], '[{"matrix": "m", "time_s": true}]',
     "t.json: [0]: time_s is true, expected a positive number of seconds"),
    (["--measured", "{d}/t.csv"], "matrix,kernel,width,seconds\nother,spmv,1,1e-6\n",
     "t.csv: check 'tiny': limits.min_fraction_of_sol: no measured time for matrix 'm'"),
    (["--measured", "{d}/t.csv"], "matrix,kernel,width,seconds\nm,spmv,1,fast\n",
     "t.csv: line 2: time_s 'fast' is not a number or a time such as '21 us'"),
    (["--measured", "{d}/t.txt"], "", "t.txt: measured results must be a .json or .csv"),
    (["--measured", "{d}/t.json"], "{", "t.json: line 1: not valid JSON"),
    (["--measured", "{d}/missing.csv"], None, "missing.csv: no such file"),
    (["--baseline", "{d}/t.json"], '{"kind": "check"}', "t.json: not a baseline"),
    (["--baseline", "{d}/t.json", "--tolerance", "five"], "{}", "--tolerance 'five' is not a"),
    (["--baseline", "{d}/t.json", "--tolerance", "5"], "{}",
     "--tolerance '5': a fraction of 5 is 500 %; write '5%' for 5 %, or a fraction below 1"),
    (["--junit", "{d}/no/such/dir/r.xml"], None, "r.xml: cannot write"),
    (["--tolerance", "5%"], None, "--tolerance applies to a --baseline"),
]


@pytest.mark.parametrize("args,content,needle", INVALID_INPUTS)
def test_invalid_inputs_exit_2_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: list[str], content: str | None,
                                        needle: str) -> None:
    path = budget_dir(tmp_path, one("min_fraction_of_sol: 0.5"))
    argv = [a.format(d=tmp_path) for a in args]
    if content is not None:
        Path(argv[1]).write_text(content)
    if "--measured" not in args:
        argv += ["--measured", str(tmp_path / "ok.csv")]
        (tmp_path / "ok.csv").write_text("matrix,kernel,width,seconds\nm,spmv,1,1e-6\n")
    code, _, err = check(capsys, path, *argv)
    assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_missing_budget_file_real_process(tmp_path: Path) -> None:
    result = sparsroof("check", str(tmp_path / "nope.yaml"), cwd=ROOT)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == f"sparsroof: error: {tmp_path / 'nope.yaml'}: no such file\n"


def test_check_has_help_and_the_docs_document_it() -> None:
    check = cli.get_command(click.Context(cli), "check")
    assert check is not None and check.help
    assert "sparsroof check examples/budgets.yaml" in (ROOT / "README.md").read_text()
    readme = (ROOT / "docs" / "ci.md").read_text()
    workflow = readme.split("```yaml\n# .github/workflows/")[1].split("```")[0]
    doc = yaml.safe_load(workflow.split("\n", 1)[1])  # after the file-name comment
    steps = [s.get("run", "") for job in doc["jobs"].values() for s in job["steps"]]
    assert any("pip install" in s for s in steps)
    assert any(s.startswith("sparsroof check examples/budgets.yaml") for s in steps)
    # the budget shown in the docs is the example file, word for word
    assert (ROOT / "examples" / "budgets.yaml").read_text() in readme


def test_example_budget_file_loads() -> None:
    budget = load_budget(ROOT / "examples" / "budgets.yaml")
    assert [c.name for c in budget.checks] == ["laplacian-spmv", "spmm-no-reuse"]
    assert all(os.path.exists(p) for c in budget.checks for p in c.matrices)
    assert (DATA / "lap2d_64.mtx").as_posix() in {Path(p).resolve().as_posix()
                                                  for c in budget.checks for p in c.matrices}


def test_matrix_named_by_two_checks_is_loaded_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from sparsroof.ci import check as budget_check

    calls: list[str] = []
    real = budget_check.load
    monkeypatch.setattr(budget_check, "load", lambda p, **k: calls.append(p) or real(p, **k))
    text = one("max_sol_latency: 1 ms")
    path = budget_dir(tmp_path, text + text.split("checks:\n")[1].replace("tiny", "again"))
    report = run_checks(load_budget(path))
    assert [p.check for p in report.points] == ["tiny", "again"] and len(calls) == 1


def test_a_budget_says_how_its_runs_are_timed(tmp_path: Path) -> None:
    """lap2d_64's SpMV on an A100 40GB whose spec gives a sync floor of 12 us (a user's own
    minimum; the bundled spec gives none): 1.3 us by the default (graph) floor, 2.4 us
    timed back to back on a stream, 12 us with a host synchronisation per call, and (8
    calls per synchronisation) (12 + 7 x 2.4) / 8 = 3.6 us; a 10 us budget fails only the
    third."""
    text = (Path(__file__).parents[2] / "hwspecs" / "a100-40gb.yaml").read_text(
        encoding="utf-8")
    spec = tmp_path / "a100-sync.yaml"
    spec.write_text(text.replace("\nlaunch_floors:\n", "\nlaunch_floors:\n    sync: {value: "
                                 "12 us, source: 'measured here', kind: minimum}\n", 1),
                    encoding="utf-8")
    base = {"version": 1, "defaults": {"hw": str(spec), "model": "compulsory"}}
    expected = {"graph": 1.3e-6, "stream": 2.4e-6, "sync": 12e-6, "sync8": 3.6e-6}
    for name, sol in expected.items():
        timing = {"timing": "sync", "calls_per_sync": 8} if name == "sync8" else {
            "timing": name}
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(base | {"checks": [
            {"name": name, "matrices": [str(DATA / "lap2d_64.mtx")], **timing,
             "limits": {"max_sol_latency": "10 us"}}]}), encoding="utf-8")
        report = run_checks(load_budget(str(path)))
        [outcome] = report.outcomes
        assert outcome.value == pytest.approx(sol), name
        assert report.exit_code == (0 if sol < 10e-6 else 1), name
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(base | {"checks": [
        {"name": "x", "matrices": [str(DATA / "lap2d_64.mtx")], "timing": "warm",
         "limits": {"max_sol_latency": "10 us"}}]}), encoding="utf-8")
    with pytest.raises(Exception, match="unknown timing 'warm'"):
        load_budget(str(bad))
