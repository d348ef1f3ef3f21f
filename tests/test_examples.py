"""Every command shown to a reader runs: the ```sh blocks of the README and of docs/*.md,
and the examples of every command's --help.

Each block runs as one bash script (``set -euo pipefail``) in a copy of a work folder that
holds what the examples name: the repository's data/, examples/ and hwspecs/, a spec of
this host from ``hw probe --quick`` (myhost.yaml), a calibration fitted on made-up
samples (calibration.json), and the points and accuracy files a reader writes by hand.
Lines that install, run the test suite or the benchmark scripts, calibrate this host
(minutes; the made-up calibration stands in), need a Dask cluster, a GPU or a corpus of
matrices outside the repository are left out, each for its reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from .conftest import ROOT

#: (pattern, why) for lines the test does not run
LEFT_OUT = (
    (r"^pip install -e", "installs the project"),
    (r"python -m pytest", "runs this test suite"),
    (r"^ruff |^mypy", "lint and type checks run on their own"),
    (r"^python bench/", "benchmark scripts take minutes"),
    (r"sparsroof calibrate ", "calibrating takes minutes; a made-up calibration stands in"),
    (r"--scheduler", "needs a Dask cluster"),
    (r"--backend cusparse|--device cuda|bench/gpu_check", "needs a GPU with CuPy"),
    (r'^pip install "?sparsroof\[gpu\]', "installs the GPU extra"),
    (r"pip download", "downloads wheels"),
    (r"CORPUS", "names a corpus of matrices outside the repository"),
)
#: blocks with these run for seconds to minutes: marked slow
SLOW = re.compile(r"hw probe(?! .*--quick)|sparsroof bench |sparsroof batch |sparsroof whatif ")


def _logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined."""
    return text.replace("\\\n", " ").splitlines()


def _runnable(lines: list[str]) -> str:
    kept = []
    for line in lines:
        line = re.sub(r"^pip install \S+ && ", "", line.strip())  # quick start: the run part
        if line and not any(re.search(p, line) for p, _ in LEFT_OUT):
            kept.append(line)
    return "\n".join(kept)


def doc_blocks() -> list[tuple[str, str]]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, block in enumerate(re.findall(r"```sh\n(.*?)```", path.read_text(), re.S)):
            found.append((f"{path.relative_to(ROOT)}#{n + 1}", block))
    return found


def help_blocks() -> list[tuple[str, str]]:
    from sparsroof.cli import cli

    found = []

    def walk(command: click.Command, ctx: click.Context, name: str) -> None:
        match = re.search(r"Examples?:\n(.*?)(?:\n\s*\n|$)", command.help or "", re.S)
        if match:
            found.append((f"sparsroof {name} --help".replace("  ", " "), match.group(1)))
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                child = command.get_command(ctx, sub)
                assert child is not None
                walk(child, click.Context(child, parent=ctx), f"{name} {sub}".strip())

    walk(cli, click.Context(cli), "")
    return found


def _params() -> list[object]:
    params: list[object] = []
    for where, block in doc_blocks() + help_blocks():
        script = _runnable(_logical_lines(block))
        marks = [pytest.mark.slow] if SLOW.search(script) else []
        params.append(pytest.param(script, id=where, marks=marks))
    return params


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.test_calibrate import _synthetic_calibration

    base = tmp_path_factory.mktemp("examples")
    for folder in ("data", "examples", "hwspecs"):
        shutil.copytree(ROOT / folder, base / folder)
    probe = subprocess.run([sys.executable, "-m", "sparsroof", "hw", "probe", "--quick", "-o",
                            "myhost.yaml"], cwd=base, capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    # the examples apply it to the spec 'hw probe' writes of this host: its L2 roof must
    # sit between this host's probed L1 and L3 (which move with the host's load: 50-250
    # and 25-100 GB/s), or the pair is refused as impossible roofs
    from sparsroof.hardware.library import load_spec

    probed = {lvl.name: lvl.bandwidth.value for lvl in load_spec(base / "myhost.yaml").memory
              if lvl.bandwidth is not None}
    l1 = next(v for name, v in probed.items() if name.startswith("L1"))
    last = probed.get("L3", probed.get("L2", l1))
    _synthetic_calibration(base / "calibration.json", l2_roof=(l1 * last) ** 0.5)
    (base / "points.csv").write_text("pattern,sparsity,speedup,accuracy\n2:4,0.5,1.6,79.9\n"
                                     "unstructured,0.5,1.1,80.1\nunstructured,0.9,2.5,76.0\n")
    (base / "acc.csv").write_text("pattern,sparsity,accuracy\nblock4,50,78\n2:4,50,80.5\n")
    # measured layer times of a network (whatif --measured), made up
    (base / "layer-times.csv").write_text("layer,pattern,sparsity,time_s\nblocks.0.mlp.fc1,"
                                          "dense,,3.2e-6\nblocks.0.mlp.fc1,2:4,,2.1e-6\n")
    # measured times a reader brings to compare: a CSV, a bench run here, Ginkgo's JSON
    (base / "measured.csv").write_text("matrix,time_s\ndata/lap2d_64.mtx,2.5e-5\n")
    bench = subprocess.run([sys.executable, "-m", "sparsroof", "bench", "data/lap2d_64.mtx",
                            "--hw", "myhost.yaml", "--repeat", "3", "-O", "json"], cwd=base,
                           capture_output=True, text=True)
    assert bench.returncode in (0, 3), bench.stderr
    (base / "bench.json").write_text(bench.stdout)
    # GPU runs a reader brings (bench --backend cusparse needs a GPU): the format fixture,
    # made-up times in the shape that command writes, its matrix where the examples have it
    gpu_runs = json.loads((ROOT / "tests" / "data" / "gpu-bench-format-fixture.json")
                          .read_text())
    for run in gpu_runs["results"]:
        run["path"] = "data/lap2d_64.mtx"
    (base / "gpu-runs.json").write_text(json.dumps(gpu_runs))
    (base / "ginkgo-spmv.json").write_text(
        '[{"filename": "/home/bench/ssget/MM/data/lap2d_64.mtx", "spmv": {"csr": {"time": 9000.0, '
        '"completed": true}, "coo": {"time": 11000.0, "completed": true}}}]')
    return base


def test_every_source_has_examples() -> None:
    names = {where.split("#")[0] for where, _ in doc_blocks()}
    assert "README.md" in names and len(names) >= 8
    helps = {where for where, _ in help_blocks()}
    assert {"sparsroof analyze --help", "sparsroof check --help", "sparsroof hw --help"} <= helps


@pytest.mark.parametrize("script", _params())
def test_example_runs(script: str, workdir: Path, tmp_path: Path) -> None:
    if not script:
        pytest.skip("every line of this block is left out (see LEFT_OUT)")
    if "jq " in script and shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    here = tmp_path / "w"
    shutil.copytree(workdir, here)
    if re.search(r"hw probe -o myhost.yaml(?!.*--force)", script):
        (here / "myhost.yaml").unlink()  # the block makes its own, as a reader's first probe
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               COLUMNS="100")
    # bench exits 3 when a run beats its bound; the quick probe measures each level's roof
    # in a few calls, and on a busy host a later run can still outrun one: the example ran
    script = re.sub(r"^(sparsroof bench .*)$", r"\1 || test $? -eq 3", script, flags=re.M)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=here,
                            capture_output=True, text=True, env=env, timeout=540)
    assert result.returncode == 0, f"{script}\n---\n{result.stderr[-2000:]}"
    assert "Traceback" not in result.stderr
