"""MeasuredTimes layer times against the Sparsity Roofline's SoL (section 3.4), worked by hand.

The hand values use the A100's peaks and HBM (2039 GB/s) without its L2 and its launch
floor, so that they isolate the memory term (the spec below); the last test checks that
on the bundled A100 both apply. Layer fc: 64 x 128 weights, n = 16, occurring twice, at
fp16. Dense GEMM 22528 bytes, SoL 22528 / 2039e9 = 11.049 ns (memory bound);
unstructured 75 %: CSR 12548 + features 6144 = 18692 bytes, SoL 9.167 ns.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sparsroof.errors import MeasuredRunsError
from sparsroof.hardware.library import load_spec
from sparsroof.whatif.layertimes import measured_layers, model_totals, read_layer_times
from sparsroof.whatif.manifest import Layer, Manifest
from sparsroof.whatif.placement import Options

from ..conftest import ROOT, sparsroof

BW = 2039e9
DENSE_SOL = 22528 / BW
SPARSE_SOL = 18692 / BW
NET = Manifest("toy", "toy.yaml", "", "made up", (Layer("fc", 64, 128, 16, count=2),
                                                   Layer("head", 8, 16, 1, prune=False)))
MANIFEST = """name: toy
source: made up for the test
layers:
  - {name: fc, m: 64, k: 128, n: 16, count: 2}
  - {name: head, m: 8, k: 16, n: 1, prune: false}
"""


def _hbm_only(tmp_path: Path) -> Path:
    """The bundled A100 spec without its L2 level and its launch floor."""
    lines = (ROOT / "hwspecs" / "a100-80gb.yaml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  - name: L2"))
    end = next(i for i, line in enumerate(lines) if line.startswith("  - name: HBM2e"))
    floors = [i for i, line in enumerate(lines) if line.startswith("launch_floors:")]
    if floors:  # the floor per timing method: its indented lines go with it
        stop = next(i for i in range(floors[0] + 1, len(lines))
                    if not lines[i].startswith(" "))
        lines = lines[:floors[0]] + lines[stop:]
        start = next(i for i, line in enumerate(lines) if line.startswith("  - name: L2"))
        end = next(i for i, line in enumerate(lines) if line.startswith("  - name: HBM2e"))
    kept = [line for line in lines[:start] + lines[end:]
            if not line.startswith(("launch_overhead:", "aliases:"))]
    path = tmp_path / "hbm-only.yaml"
    path.write_text("\n".join(kept).replace("name: a100-80gb", "name: hbm-only") + "\n")
    return path


def _times(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "times.csv"
    path.write_text("layer,pattern,sparsity,time_s\n" + rows)
    return path


def test_per_layer_and_per_model_pct_of_sol(tmp_path: Path) -> None:
    path = _times(tmp_path, "fc,dense,,20e-9\nfc,unstructured,75,20e-9\nhead,dense,,1e-9\n")
    times, bad = read_layer_times(path)
    assert bad == []
    found, errors = measured_layers(times, NET, load_spec(str(_hbm_only(tmp_path))),
                                    Options())
    assert errors == []
    assert [m.bound.sol_s for m in found[:2]] == pytest.approx([DENSE_SOL, SPARSE_SOL])
    totals = {t.pattern: t for t in model_totals(found)}
    dense, sparse = totals["dense"], totals["unstructured"]
    # fc counts twice; head (304 bytes, 149 ps) once
    assert dense.layers == 3 and sparse.layers == 2
    assert dense.sol_s == pytest.approx(2 * DENSE_SOL + 304 / BW)
    assert dense.measured_s == pytest.approx(2 * 20e-9 + 1e-9)
    assert sparse.pct_sol == pytest.approx(100 * SPARSE_SOL / 20e-9)  # 45.8 %
    # over fc, timed both ways: SoL speedup 22528 / 18692 = 1.205, measured 20 / 20 = 1
    assert sparse.speedups == pytest.approx((22528 / 18692, 1.0))
    assert dense.speedups is None


def test_bad_rows_are_one_line_each_and_the_rest_is_judged(tmp_path: Path) -> None:
    path = _times(tmp_path, "fc,dense,,abc\nfc,dense,,-1\nnope,dense,,1e-9\n"
                            "fc,block64,50,1e-9\nhead,2:4,,1e-9\nfc,unstructured,,1e-9\n"
                            "fc,2:4,75,1e-9\nfc,2:4,,2e-8\n")
    times, bad = read_layer_times(path)
    assert [(s.rsplit(":", 1)[1], p) for s, p in bad] == [
        ("2", "time_s 'abc' is not a number"),
        ("3", "time_s '-1' is not a positive number of seconds"),
        ("5", "block pattern 'block64': B must lie in 2..32")]
    found, errors = measured_layers(times, NET, load_spec("a100"), Options())
    assert [p for _, p in errors] == [
        "toy has no layer 'nope'",
        "layer 'head' is kept dense (prune: false): time it as pattern dense",
        "pattern unstructured needs a sparsity level",
        "2:4 fixes its sparsity at 50 %, not 75 %"]
    assert [m.time.pattern for m in found] == ["2:4"]
    (tmp_path / "no.csv").write_text("layer,time_s\nfc,1\n")
    with pytest.raises(MeasuredRunsError, match="needs the columns pattern, sparsity"):
        read_layer_times(tmp_path / "no.csv")


def _cli(tmp_path: Path, *args: str, hw: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "toy.yaml").write_text(MANIFEST)
    spec = hw or str(_hbm_only(tmp_path))
    return sparsroof("whatif", "toy.yaml", "--hw", spec, *args, cwd=tmp_path)


def test_cli_exits_1_on_a_layer_faster_than_its_sol(tmp_path: Path) -> None:
    _times(tmp_path, "fc,dense,,20e-9\nfc,unstructured,75,5e-9\nfc,2:4,,x\n")
    out = _cli(tmp_path, "--measured", "times.csv", "-O", "json")
    assert out.returncode == 1
    err = out.stderr.splitlines()
    assert err[0] == "sparsroof: error: times.csv:4: time_s 'x' is not a number"
    assert err[1].startswith("sparsroof: violation: times.csv:3: fc (unstructured 75 %) csr")
    assert "faster than its bound 9.17 ns" in err[1] and len(err) == 2
    doc = json.loads(out.stdout)
    assert doc["kind"] == "compare" and doc["summary"]["violations"] == 1
    runs = {r["source"]: r for r in doc["runs"]}
    assert runs["times.csv:2"]["pct_sol"] == pytest.approx(100 * DENSE_SOL / 20e-9)
    assert runs["times.csv:3"]["violation"] is True
    models = {m["pattern"]: m for m in doc["models"]}
    assert models["unstructured"]["pct_sol"] == pytest.approx(100 * SPARSE_SOL / 5e-9)
    assert models["unstructured"]["speedup_measured"] == pytest.approx(4.0)
    ok = _times(tmp_path, "fc,dense,,20e-9\n")
    assert ok.exists()
    table = _cli(tmp_path, "--measured", "times.csv")
    assert table.returncode == 0, table.stderr
    assert "55.2" in table.stdout and "per model" in table.stdout  # 11.049 / 20 ns


def test_on_the_bundled_a100_the_launch_floor_and_l2_bound_the_layers(tmp_path: Path) -> None:
    """Whatever the study's options, measured times are judged against the bound compare
    uses: fc's 22,528 bytes fit the L2 (5.5 TB/s: 4.1 ns), so one launch, 1.3 us, binds; a
    20 ns run beats it, a 2 us run does not."""
    _times(tmp_path, "fc,dense,,20e-9\nfc,dense,,2e-6\n")
    out = _cli(tmp_path, "--measured", "times.csv", "-O", "json", hw="a100")
    assert out.returncode == 1
    runs = {r["source"]: r for r in json.loads(out.stdout)["runs"]}
    fast, slow = runs["times.csv:2"], runs["times.csv:3"]
    assert fast["bound_s"] == pytest.approx(1.3e-6) and fast["bound"] == "launch"
    assert fast["memory_level"] == "L2"
    assert fast["memory_s"] == pytest.approx(22528 / 5.5e12)
    assert fast["violation"] is True and slow["violation"] is False
def test_compare_and_whatif_measured_render_through_one_function(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """echo_judged writes the errors and violations, the chosen output and the exit code
    for both commands; whatif adds its per-model document and table."""
    from sparsroof.cli.compare import echo_judged
    from sparsroof.compare import RowError

    code = echo_judged([], [RowError("t.csv:2", "no matrix named")], "json", title="t")
    out, err = capsys.readouterr()
    assert code == 1 and err == "sparsroof: error: t.csv:2: no matrix named\n"
    assert json.loads(out)["summary"]["errors"] == 1
    code = echo_judged([], [], "table", title="runs", tables=lambda: ["per model"],
                       document=lambda summary: "unused")
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and out.rstrip().endswith("per model")
    _times(tmp_path, "fc,dense,,20e-9\n")
    csv_out = _cli(tmp_path, "--measured", "times.csv", "-O", "csv")
    assert csv_out.returncode == 0, csv_out.stderr
    assert ",source,matrix," in csv_out.stdout.splitlines()[0]  # compare's CSV


def test_measured_with_plot_names_the_conflict(tmp_path: Path) -> None:
    """--plot wants --accuracy, but with --measured the conflict is what to say."""
    _times(tmp_path, "fc,dense,,20e-9\n")
    out = _cli(tmp_path, "--measured", "times.csv", "--plot", "x.png")
    assert out.returncode == 2
    assert out.stderr == ("sparsroof: error: --measured judges layer times: give it without "
                          "--plot, --points or --accuracy\n")


def test_the_per_model_table_is_drawn_as_every_other_table(tmp_path: Path) -> None:
    """The per-model table has the rule under its header of every fitted table, no box
    around it, and fits a 100-column terminal."""
    from rich.console import Console

    from sparsroof.report.layertimes import models_table
    from sparsroof.report.tables import FittedTable

    path = _times(tmp_path, "fc,dense,,20e-9\nfc,unstructured,75,20e-9\n")
    found, _ = measured_layers(read_layer_times(path)[0], NET, load_spec("a100"), Options())
    table = models_table(model_totals(found), "toy on a100-80gb: per model")
    assert isinstance(table, FittedTable)
    console = Console(width=100, record=True, color_system=None, force_terminal=False)
    console.print(table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "│" not in text and "┏" not in text
    assert [line.split()[:2] for line in text.splitlines() if line.startswith(
        ("dense", "unstructured"))] == [["dense", "2"], ["unstructured", "75"]]
