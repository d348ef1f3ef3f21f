from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sparsroof.hardware.library import bundled_names, load_spec, validate_file

from ..conftest import ROOT, sparsroof


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=ROOT)


def test_hw_list_json_has_every_bundled_spec_and_ridges() -> None:
    out = run("hw", "list", "--output", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema_version"] == 1 and doc["version"] and doc["kind"] == "hw-list"
    rows = {r["name"]: r for r in doc["specs"]}
    assert sorted(rows) == bundled_names()
    a100 = rows["a100-80gb"]
    # 9.7 TFLOP/s (fp64, analyze's default) / 2039 GB/s and 312 TFLOP/s / 2039 GB/s
    assert a100["simt_precision"] == "fp64" and a100["tensor_precision"] == "fp16"
    assert abs(a100["simt_ridge_flop_per_byte"] - 9.7e12 / 2039e9) < 1e-9
    # a device without an fp64 figure shows fp32
    assert rows["clx-ridgeline"]["simt_precision"] == "fp32"
    assert abs(a100["tensor_ridge_flop_per_byte"] - 312e12 / 2039e9) < 1e-9
    assert rows["c2050"]["tensor_flops"] is None


def test_hw_list_table_and_csv() -> None:
    table = run("hw", "list")
    assert table.returncode == 0
    assert "mi300x" in table.stdout and "ridge" in table.stdout
    assert "1.3 us" in table.stdout and "L2 5.5 TB/s" in table.stdout  # a100 launch floor, L2
    assert "2.04 TB/s" in table.stdout                     # a100-80gb DRAM
    csv = run("hw", "list", "--output", "csv").stdout.strip().splitlines()
    assert csv[0].startswith("schema_version,version,name,device")
    assert len(csv) == 1 + len(bundled_names())


def test_hw_show_json_and_table_carry_sources() -> None:
    out = run("hw", "show", "v100-measured", "--output", "json")
    doc = json.loads(out.stdout)["spec"]
    assert doc["memory"][-1]["bandwidth"]["value"] == 828.8e9
    assert "gpu-benches" in doc["launch_overhead"]["source"]
    assert doc["launch_overhead"]["kind"] == "minimum"
    table = run("hw", "show", "epyc-7763").stdout
    assert "204.8 GB/s" in table and "peak" in table


def test_hw_validate_ok_and_problems(tmp_path: Path) -> None:
    good = ROOT / "sparsroof" / "hwspecs" / "c2050.yaml"
    ok = run("hw", "validate", str(good), "h100")
    assert ok.returncode == 0
    assert ok.stdout.splitlines() == [f"{good}: OK (c2050: NVIDIA Tesla C2050 3GB)",
                                      "h100: OK (h100-sxm: NVIDIA H100 SXM5 80GB)"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("144 GB/s", "144 GB").replace("fp64:", "fp46:"))
    out = run("hw", "validate", str(good), str(bad))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith("OK (c2050: NVIDIA Tesla C2050 3GB)")
    assert len(lines) == 3 and all(line.startswith(f"{bad}: ") for line in lines[1:])
    assert any("memory.GDDR5.bandwidth.value: '144 GB' is not a bandwidth" in x for x in lines)


def test_hw_show_misspelt_name_suggests() -> None:
    out = run("hw", "show", "mi300")
    assert out.returncode == 2 and "did you mean 'mi300x'?" in out.stderr


def test_probe_quick_writes_a_valid_spec(tmp_path: Path) -> None:
    target = tmp_path / "myhost.yaml"
    out = run("hw", "probe", "--quick", "-o", str(target))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""                                 # progress is on stderr
    assert "probe: memory:" in out.stderr and f"wrote {target}" in out.stderr
    assert validate_file(str(target)) == []
    spec = load_spec(str(target))
    assert spec.name == "myhost" and spec.kind == "cpu"
    assert "measured by sparsroof hw probe on" in spec.dram.bandwidth.source
    assert set(spec.precisions("simt")) == {"fp32", "fp64"}
    assert spec.parallelism["cores"].value >= 1
    again = run("hw", "probe", "--quick", "-o", str(target))
    assert again.returncode == 2 and "--force" in again.stderr
    # the caches' instances: one core's share is what the calibration models
    assert all(lv.capacity_per_instance is not None for lv in spec.memory[:-1])
    nowhere = run("hw", "probe", "--quick", "-o", str(tmp_path / "no" / "x.yaml"))
    assert nowhere.returncode == 2 and "cannot write: no directory" in nowhere.stderr
    assert "probe: memory" not in nowhere.stderr  # refused before measuring


def test_hw_show_gives_an_integer_peak_in_operations_not_flops() -> None:
    out = sparsroof("hw", "show", "a100", cwd=ROOT, env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    int8 = next(line for line in out.stdout.splitlines() if line.startswith("peak tensor int8"))
    fp16 = next(line for line in out.stdout.splitlines() if line.startswith("peak tensor fp16"))
    assert "624 TOP/s 624 TOP/s peak" in " ".join(int8.split()), int8
    assert "FLOP/s" not in int8 and "312 TFLOP/s" in " ".join(fp16.split())


def test_hw_show_gives_a_levels_latency_with_its_kind() -> None:
    out = sparsroof("hw", "show", "epyc-7763", cwd=ROOT, env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("L1d latency"))
    assert " ".join(line.split()).startswith("L1d latency 1.14 ns 1.14 ns minimum derived:")


def test_hw_validate_warns_of_a_name_a_bundled_spec_goes_by(tmp_path: Path) -> None:
    """A user's copy named like a bundled spec (or one of its aliases) would read as that
    device in every result: a warning, not an error; the bundled file itself, or a name
    of its own, none."""
    text = (ROOT / "sparsroof" / "hwspecs" / "a100-80gb.yaml").read_text()
    for name, warned in (("a100", "a100-80gb"), ("a100-80gb", "a100-80gb"), ("my-a100", None)):
        lines = text.splitlines()
        lines = [f"name: {name}" if line.startswith("name:") else line for line in lines
                 if not line.startswith("aliases:")]
        path = tmp_path / f"{name}.yaml"
        path.write_text("\n".join(lines) + "\n")
        out = sparsroof("hw", "validate", str(path), cwd=ROOT)
        assert out.returncode == 0, out.stderr
        said = f"name: the bundled spec {warned} goes by this name" if warned else "name:"
        assert (said in out.stderr) == bool(warned), out.stderr
    bundled = sparsroof("hw", "validate", "sparsroof/hwspecs/a100-80gb.yaml", cwd=ROOT)
    assert bundled.returncode == 0 and "goes by this name" not in bundled.stderr
