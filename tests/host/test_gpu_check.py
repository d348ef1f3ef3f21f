"""The prepared GPU check (bench/gpu_check.sh and its Python steps) on a simulated device:
its run files are read by ``compare``, a bad matrix is skipped, and the summary judges per
method and band. The script itself is checked for the rules a device run needs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sparsroof.cli import cli
from sparsroof.cli.guard import run_guarded
from sparsroof.host.gpu import cuda as gpu_device
from sparsroof.host.gpu.probe import probe_gpu
from sparsroof.host.gpu.spec_yaml import gpu_spec_yaml

from ..conftest import CORPUS, DATA, ROOT
from ..gpu_fake import FakeDevice

SCRIPT = ROOT / "bench" / "gpu_check.sh"


def _steps() -> Any:
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runs_and_summary_on_a_simulated_device(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gpu_device, "open_device", lambda: FakeDevice(call_s=20e-6))
    probe = tmp_path / "gpu.yaml"
    probe.write_text(gpu_spec_yaml(probe_gpu(FakeDevice()), "gpu"))
    steps = _steps()
    matrices = [str(DATA / "lap2d_64.mtx"), str(CORPUS / "494_bus.mtx"),
                str(CORPUS / "bad_header.mtx")]
    assert steps.main(["runs", str(tmp_path), "h100-sxm", str(probe), *matrices]) == 0
    err = capsys.readouterr().err
    assert "bad_header.mtx: skipped:" in err and "wrote 24 runs of 2 matrices (1 skipped)" in err
    for name, spec in (("runs-h100-sxm.json", "h100-sxm"), ("runs-probe.json", "gpu")):
        doc = json.loads((tmp_path / name).read_text())
        assert doc["device"]["name"] == "Fake H100" and len(doc["results"]) == 24
        judged = tmp_path / f"judged-{spec}.json"
        code = run_guarded(cli, ["compare", str(tmp_path / name), "-O", "json"])
        judged.write_text(capsys.readouterr().out)
        assert code == 0
        assert json.loads(judged.read_text())["summary"]["count"] == 24
    assert steps.main(["summary", "h100-sxm", str(probe), str(tmp_path / "judged-gpu.json"),
                       str(tmp_path / "judged-h100-sxm.json")]) == 0
    out = capsys.readouterr().out
    assert "judged-gpu.json: measured / bound per method and band (24 runs, 0 faster" in \
        " ".join(out.split())
    assert re.search(r"graph\s+launch\s+6\s+0", out)
    assert re.search(r"DRAM bandwidth\s+3000\s+3350\s+GB/s\s+ok", out)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_device_script_keeps_going_logs_and_brings_its_wheels() -> None:
    text = SCRIPT.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -u" in text
    assert "set -e" not in text  # a failing stage must not stop the later ones
    assert "--no-index" in text and ".whl" in text  # installs from carried wheels only
    for stage in ("probe", "runs", "judge", "summary"):
        assert f'stage {stage}' in text
