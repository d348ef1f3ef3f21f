"""User files (specs, budgets, manifests, results for plots) that are nested too deeply
or hold enormous numbers end in one line and the file's own exit code; a deeply nested
spec once crashed the YAML parser natively, so the commands run in a child process."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparsroof.userfile import MAX_NESTING, check_shape, read_text

from ..conftest import sparsroof

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("args", "name", "text", "code", "problem"), [
    (["hw", "show"], "deep.yaml", f"name: {DEEP}\n", 1, "nested more than 100 levels"),
    (["check"], "deep.yaml", f"checks: {DEEP}\n", 2, "nested more than 100 levels"),
    (["check"], "digits.yaml", "checks:\n  - name: x\n    matrices: [" + "9" * 5000 + "]\n",
     2, "more than 1,000 digits"),
    (["plot", "roofline"], "deep.json", DEEP, 1, "nested more than 100 levels"),
    (["plot", "sparsity-roofline"], "deep.json", DEEP, 1, "nested more than 100 levels"),
])
def test_hostile_user_files_are_one_line_errors(tmp_path: Path, args: list[str], name: str,
                                                text: str, code: int, problem: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    extra = ["-o", str(tmp_path / "x.png")] if args[0] == "plot" else []
    out = sparsroof(*args, str(path), *extra)
    assert out.returncode == code, out.stderr[-500:]
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"sparsroof: error: {path}: ") and problem in line


def test_deep_indentation_counts_as_nesting() -> None:
    text = "".join(" " * (2 * i) + f"k{i}:\n" for i in range(3 * MAX_NESTING))
    with pytest.raises(ValueError, match="indented past 400 columns"):
        check_shape(text, ValueError)
    check_shape("".join(" " * (2 * i) + f"k{i}:\n" for i in range(20)), ValueError)


def test_ordinary_files_pass(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text('{"a": [[1, 2], {"b": [3]}], "n": 12345678901234567890}')
    assert read_text(path, ValueError).startswith("{")


@pytest.mark.parametrize("args", [["compare", "{f}", "--hw", "a100"],
                                  ["plot", "roofline", "{f}", "-o", "{d}/x.png"],
                                  ["formats", "data/lap2d_64.mtx", "--calibration", "{f}"]])
@pytest.mark.parametrize("text,needle", [("[" * 5000 + "]" * 5000, "nested more than 100"),
                                         ('{"a": 1,}', "line 1: not valid JSON")])
def test_every_json_input_is_read_one_way(tmp_path: Path, args: list[str], text: str,
                                          needle: str) -> None:
    """Results, measured runs and calibrations are read by one reader: deep or broken JSON
    is one line naming the file, whichever command reads it."""
    f = tmp_path / "in.json"
    f.write_text(text)
    argv = [a.format(f=f, d=tmp_path) for a in args]
    out = sparsroof(*argv, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr
    assert needle in out.stderr and str(f) in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1
