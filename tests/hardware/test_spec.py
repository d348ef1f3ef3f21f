from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sparsroof.errors import SpecError
from sparsroof.hardware.library import (
    bundled_names,
    load_spec,
    parse_spec,
    read_spec_file,
    validate_file,
)
from sparsroof.hardware.spec import PRECISIONS, UNITS

from ..conftest import ROOT, fresh_python

GOOD = """\
name: mine
device: test box
kind: cpu
peaks:
  simt:
    fp64: {value: 1 TFLOP/s, source: made up for a test}
memory:
  - name: L3
    capacity: {value: 32 MiB, source: made up}
  - name: DRAM
    bandwidth: {value: 100 GB/s, source: made up}
    capacity: {value: 64 GiB, source: made up}
"""


@pytest.mark.parametrize("name", bundled_names())
def test_bundled_specs_validate_with_sources(name: str) -> None:
    assert validate_file(name) == []
    spec = load_spec(name)
    quantities = [*spec.peaks.values(), *spec.parallelism.values(),
                  *(q for lv in spec.memory for q in (lv.bandwidth, lv.capacity) if q),
                  *(q for q in (spec.launch_overhead, spec.network, spec.clock) if q)]
    assert all(len(q.source) > 10 for q in quantities)
    assert spec.dram.bandwidth.value > 0
    assert spec.default_precision("simt") is not None


def test_bundled_set_is_complete_and_aliases_are_unique() -> None:
    names = set(bundled_names())
    assert {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "v100-sxm2", "v100-measured",
            "c2050", "mi250x", "mi300x", "epyc-7763", "clx-ridgeline"} <= names
    aliases = [a for n in names for a in load_spec(n).aliases]
    assert len(aliases) == len(set(aliases)) and not set(aliases) & names
    assert load_spec("a100").name == "a100-80gb"


def test_paper_figures_are_carried_exactly() -> None:
    v = load_spec("v100-measured")
    assert v.dram.bandwidth.value == 828.8e9
    assert v.peak("simt", "fp32").value == 15.16e12
    assert v.peak("simt", "fp16").value == 29.18e12
    # the paper's 4.2 us launch figure is an average: kept in the notes, not used as a floor
    assert "4.2 us" in v.notes
    # the floor is the smallest published back-to-back V100 kernel time, 1.995 us
    assert v.launch_overhead is not None and v.launch_overhead.value == pytest.approx(1.9e-6)
    assert v.launch_overhead.kind == "minimum"
    # the paper's machine balance: 107479 / 828.8 = 129.68 FLOP/byte
    assert v.ridge_point("tensor", "fp16") == pytest.approx(129.68, abs=0.005)
    assert load_spec("epyc-7763").dram.bandwidth.value == 204.8e9
    clx = load_spec("clx-ridgeline")
    assert clx.network is not None and clx.network.value == 12e9
    # Ridgeline centre: 4200 GFLOP/s / 105 GB/s = 40 FLOP/byte
    assert clx.ridge_point("simt", "fp32") == pytest.approx(40.0)


def test_ridge_point_and_default_precision_worked_by_hand() -> None:
    a100 = load_spec("a100")
    # 19.5 TFLOP/s / 2039 GB/s = 9.5635... FLOP/byte
    assert a100.ridge_point("simt", "fp32") == pytest.approx(19.5e12 / 2039e9)
    assert a100.default_precision("tensor") == "fp16"
    assert load_spec("c2050").default_precision("tensor") is None
    assert load_spec("clx-ridgeline").units == ("simt",)


def test_missing_peak_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match=r"v100-sxm2 has no tensor-sparse peak at fp16 "
                                        r"\(it has: simt/fp32, simt/fp64, tensor/fp16\)"):
        load_spec("v100").peak("tensor-sparse", "fp16")


def test_user_yaml_by_path(tmp_path: Path) -> None:
    good = tmp_path / "mine.yaml"
    good.write_text(GOOD)
    spec = load_spec(str(good))
    assert spec.dram.bandwidth.value == 100e9 and spec.memory[0].bandwidth is None
    assert spec.to_dict()["memory"][1]["capacity"]["value"] == 64 * 2**30
    assert spec.memory[0].capacity_per_instance == 32 * 2**20  # one instance unless told


def test_instances_divide_a_levels_capacity(tmp_path: Path) -> None:
    path = tmp_path / "cores.yaml"
    path.write_text(GOOD.replace("capacity: {value: 32 MiB, source: made up}",
                                 "capacity: {value: 32 MiB, source: made up}\n"
                                 "    instances: {value: 4, source: made up}"))
    spec = load_spec(str(path))
    assert spec.memory[0].capacity_per_instance == 8 * 2**20
    assert spec.to_dict()["memory"][0]["instances"]["value"] == 4


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return [str(p) for p in validate_file(str(path))]


@pytest.mark.parametrize("old,new,expected", [
    ("kind: cpu\n", "", "bad.yaml: kind: missing required key"),
    ("kind: cpu\n", "kind: cpu\nvendor: x\n", "bad.yaml: vendor: unknown key"),
    ("kind: cpu\n", "kind: cpu\nnetwrk: {value: 1 GB/s, source: x}\n",
     "bad.yaml: netwrk: unknown key (did you mean 'network'?)"),
    ("100 GB/s", "0 GB/s", "bad.yaml: memory.DRAM.bandwidth.value: '0 GB/s' must be greater"),
    ("100 GB/s", "-100 GB/s", "memory.DRAM.bandwidth.value: '-100 GB/s' must be greater"),
    ("100 GB/s", "2 TB", "memory.DRAM.bandwidth.value: '2 TB' is not a bandwidth"),
    ("100 GB/s", "100", "memory.DRAM.bandwidth.value: 100 has no unit"),
    ("fp64:", "fp65:", "bad.yaml: peaks.simt.fp65: unknown precision (did you mean 'fp64'?)"),
    ("simt:", "vector:", "bad.yaml: peaks.vector: unknown compute unit"),
    ("source: made up for a test", "source: ''", "peaks.simt.fp64.source: missing"),
    ("    bandwidth: {value: 100 GB/s, source: made up}\n", "",
     "memory.DRAM.bandwidth: missing: main memory"),
    ("32 MiB", "128 GiB", "memory.DRAM.capacity: smaller than L3 before it"),
    ("kind: cpu", "kind: tpu", "bad.yaml: kind: expected 'gpu' or 'cpu'"),
    ("    capacity: {value: 32 MiB, source: made up}\n",
     "    capacity: {value: 32 MiB, source: made up}\n    latency: {value: 4 GB, source: x}\n",
     "memory.L3.latency.value: '4 GB' is not a time"),
    ("kind: cpu\n", "kind: cpu\nparallelism: {cores: {value: 0, source: x}}\n",
     "parallelism.cores.value: expected a positive whole number"),
    ("    capacity: {value: 32 MiB, source: made up}\n",
     "    instances: {value: 2, source: made up}\n", "memory.L3.instances: given without a "
     "capacity"),
    ("    capacity: {value: 32 MiB, source: made up}\n",
     "    capacity: {value: 32 MiB, source: made up}\n    instances: {value: 1.5, source: x}\n",
     "memory.L3.instances.value: expected a positive whole number"),
    ("kind: cpu\n", "kind: cpu\nkind: gpu\n", "bad.yaml: line 4: malformed YAML: key 'kind' "
     "written twice"),
    ("peaks:\n", "peaks: [\n", "bad.yaml: line"),
])
def test_each_problem_is_one_line_naming_file_and_key(tmp_path: Path, old: str, new: str,
                                                      expected: str) -> None:
    assert old in GOOD
    problems = _problems(tmp_path, GOOD.replace(old, new, 1))
    assert any(p.startswith(str(tmp_path)) and expected in p for p in problems), problems
    assert all("\n" not in p for p in problems)


def test_every_problem_is_collected_and_load_reports_the_count(tmp_path: Path) -> None:
    text = GOOD.replace("fp64:", "fp65:").replace("100 GB/s", "2 TB").replace(
        "kind: cpu\n", "kind: cpu\ncolour: red\n")
    problems = _problems(tmp_path, text)
    assert len(problems) == 3
    with pytest.raises(SpecError, match=r"\(and 2 more problems: see 'sparsroof hw validate'\)"):
        load_spec(str(tmp_path / "bad.yaml"))


def test_not_a_mapping_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="must be a YAML mapping"):
        parse_spec(["a", "list"], "list.yaml")
    assert "no such file" in str(validate_file(str(tmp_path / "missing.yaml"))[0])
    with pytest.raises(SpecError, match="did you mean 'h100'"):
        read_spec_file("h10O")


def test_yaml_tags_are_refused(tmp_path: Path) -> None:
    """Safe loading only: a Python object tag is a YAML error, never executed."""
    path = tmp_path / "evil.yaml"
    path.write_text("name: !!python/object/apply:os.system ['true']\n")
    (problem,) = validate_file(str(path))
    assert "malformed YAML" in str(problem)


def test_a_binary_file_given_as_a_spec_says_which_byte(tmp_path: Path) -> None:
    """Bytes that are not text: the reader's reason and the byte, not a bare 'malformed'."""
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\x00\x01\x02")
    (problem,) = validate_file(str(path))
    assert str(problem) == (f"{path}: malformed YAML: control characters are not allowed: "
                            "byte 0x00 at offset 0")


def test_schema_constants_match_the_bundled_specs() -> None:
    used = {(u, p) for n in bundled_names() for (u, p) in load_spec(n).peaks}
    assert {u for u, _ in used} <= set(UNITS) and {p for _, p in used} <= set(PRECISIONS)
    assert yaml.safe_load((ROOT / "hwspecs/a100-80gb.yaml").read_text())["name"] \
        == "a100-80gb"


def _install(target: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    """pip-install a copy of the project (so no build files land in the source tree); without
    build isolation when the local setuptools can build it, else with it (needs PyPI)."""
    import setuptools

    src = workdir / "src"
    # as in a clone: the specs live at the top, and sparsroof/hwspecs links to them
    shutil.copytree(ROOT / "sparsroof", src / "sparsroof", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    shutil.copytree(ROOT / "hwspecs", src / "hwspecs")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    new_enough = int(setuptools.__version__.split(".")[0]) >= 77  # SPDX license string
    isolation = ["--no-build-isolation"] if new_enough else []
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--quiet",
         *isolation, "--target", str(target), str(src)],
        capture_output=True, text=True, cwd=workdir)


def test_bundled_specs_found_from_a_non_editable_install(tmp_path: Path) -> None:
    """Install the package into a temporary directory and load specs from there, with the
    source tree off sys.path (run from another directory)."""
    target = tmp_path / "site"
    build = _install(target, tmp_path)
    # the test extras bring setuptools >= 77, so the build needs nothing from the network
    assert build.returncode == 0, build.stderr.strip()[-600:]
    code = ("import sys, sparsroof.hardware.library as h\n"
            f"assert not any(p.rstrip('/') == {str(ROOT)!r} for p in sys.path)\n"
            f"assert h.__file__.startswith({str(target)!r}), h.__file__\n"
            "names = h.bundled_names()\n"
            "assert all(h.validate_file(n) == [] for n in names)\n"
            "print(len(names), h.load_spec('a100').name)\n")
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    out = fresh_python(code, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(len(bundled_names())), "a100-80gb"]


@pytest.mark.parametrize("line, value, said", [
    ("    bandwidth: {value: 2039 GB/s", "1e-320 GB/s", "is below 1 B/s"),
    ("launch_overhead: {value: 1.3 us", "1e-15 s", "is below 1 ps"),
    ("clock: {value: 1410 MHz", "1e-300 GHz", "is below 1 Hz"),
])
def test_a_figure_too_small_for_any_device_is_refused(tmp_path: Path, line: str, value: str,
                                                       said: str) -> None:
    """A spec figure far below any device's (a slip of units) is refused where it is
    read: a bandwidth of 1e-320 GB/s made every bound infinite, and the JSON of the
    analysis carried Infinity."""
    text = (Path(__file__).resolve().parents[2] / "hwspecs" / "a100-80gb.yaml").read_text(
        encoding="utf-8")
    assert line in text
    spec = tmp_path / "tiny.yaml"
    spec.write_text(text.replace(line, line.split("{value: ")[0] + "{value: " + value, 1),
                    encoding="utf-8")
    problems = [str(p) for p in validate_file(spec)]
    assert len(problems) == 1 and said in problems[0], problems


def test_a_name_that_would_drive_the_terminal_is_refused(tmp_path: Path) -> None:
    """A spec name or a check name is printed in tables and messages: a line break or an
    escape sequence in it (which recolours or clears a terminal) is refused, named."""
    from sparsroof.ci.budget import load_budget
    from sparsroof.errors import BudgetError

    text = (Path(__file__).resolve().parents[2] / "hwspecs" / "a100-80gb.yaml").read_text(
        encoding="utf-8")
    spec = tmp_path / "esc.yaml"
    spec.write_text(text.replace("name: a100-80gb", 'name: "a\\x1b[31mRED"', 1),
                    encoding="utf-8")
    [problem] = validate_file(spec)
    assert "name: holds '\\x1b' (a control character)" in str(problem)
    budget = tmp_path / "b.yaml"
    budget.write_text('version: 1\nchecks:\n  - name: "x\\n\\u001b[2J"\n    matrices: []\n'
                      '    limits: {max_sol_latency: 1 ms}\n', encoding="utf-8")
    with pytest.raises(BudgetError, match=r"checks\[0\]\.name: holds '\\n'"):
        load_budget(str(budget))
