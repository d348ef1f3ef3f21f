"""Mutation fuzzing of every input file other than matrices: measured runs (CSV, Ginkgo
JSON, bench JSON), hardware specs, budgets, network manifests and layer times.

Each case is a small valid file after one to three mutations (:mod:`tests.mutate_files`),
read by the public reader and passed on to the code that uses it (runs are judged, a
budget's checks run, a manifest studied, layer times bounded). It must end, within
:data:`LIMIT_S` seconds, in a result or a :class:`SparsroofError` of one line that names
the file; every row error must be one line too. Any other exception, a hang or a
multi-line message fails the case, with the seed that rebuilds it.

Cases are drawn from ``random.Random(seed)``, so a run is repeatable; a few hundred per
surface run here, and ``python bench/fuzz_inputs.py`` runs 10,000 of each (minutes).
"""

from __future__ import annotations

import random
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sparsroof.analysis import Config, analyze
from sparsroof.ci.budget import load_budget
from sparsroof.ci.check import run_checks
from sparsroof.compare import judge, read_runs
from sparsroof.errors import SparsroofError
from sparsroof.hardware.library import load_spec
from sparsroof.matrix.mtx import load
from sparsroof.whatif.layertimes import measured_layers, read_layer_times
from sparsroof.whatif.manifest import load_manifest
from sparsroof.whatif.patterns import parse_pattern
from sparsroof.whatif.placement import Options
from sparsroof.whatif.study import study

from ..conftest import ROOT
from ..mutate_files import mutate_file

#: seconds one case may take (the slowest valid case takes a few hundredths)
LIMIT_S = 10
#: cases per surface in the test run
QUICK = 300

MATRIX = b"%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2\n2 2 1\n3 1 -1\n3 3 4\n"
RUNS_CSV = b"""matrix,time_s,kernel,format,d,dtype,hw,implementation,timing
m.mtx,2e-6,spmv,csr,1,fp64,,cusparse,graph
m.mtx,3e-6,spmm,coo,4,fp32,a100,,sync
m.mtx,9e-7,spmv,ell,,fp64,,ginkgo,
"""
GINKGO = b"""[{"filename": "m.mtx", "spmv": {
  "csr": {"storage": 100, "time": 2000.0, "repetitions": 10, "completed": true},
  "coo": {"time": 3000, "completed": true}, "sellp": {"time": 1, "completed": false},
  "csr_mixed_fp16": {"time": 5, "completed": true}}},
 {"filename": "m.mtx", "spmv": {"hybrid": {"time": 2500.5, "completed": true}}}]
"""
BENCH = b"""{"kind": "bench", "schema_version": 1, "spec": "a100", "results": [
  {"matrix": "m", "path": "m.mtx", "storage": "csr", "kernel": "spmv", "width": 1,
   "dtype": "fp64", "min_s": 3e-6, "median_s": 4e-6, "backend": "scipy", "timing": "sync"},
  {"matrix": "m", "path": "m.mtx", "storage": "dia", "kernel": "spmv", "width": 1,
   "dtype": "fp64", "min_s": null},
  {"matrix": "m", "storage": "coo", "kernel": "spmm", "width": 8, "dtype": "fp32",
   "min_s": 5e-6}]}
"""
BUDGET = b"""version: 1
defaults: {hw: a100, kernel: spmv, dtype: fp64, storage: csr, model: compulsory}
checks:
  - name: tiny
    matrices: ["*.mtx"]
    limits:
      max_sol_latency: 1 ms
      min_attainable: 1 GFLOP/s
      min_speedup_over_dense: 2
      max_bytes_moved: 1 MB
      expected_bound: launch
  - name: wide
    matrices: m.mtx
    kernel: spmm
    widths: [4, 8]
    timing: sync
    calls_per_sync: 10
    limits: {max_sol_latency: 1 ms}
"""
MANIFEST = b"""name: toy
description: two layers
source: made up for the fuzz test
input_size: 3x8x8
layers:
  - {name: fc, m: 64, k: 128, n: 16, count: 2}
  - {name: conv, kind: conv, m: 8, k: 27, n: 64, input: 192}
  - {name: head, m: 8, k: 16, n: 1, prune: false}
"""
LAYER_TIMES = b"""layer,pattern,sparsity,time_s,model
fc,dense,,2e-6,toy
fc,unstructured,75,1e-6,toy
fc,2:4,,1e-6,
conv,block4,0.5,3e-7,toy
head,dense,,1e-7,toy
"""


class TookTooLong(BaseException):
    """Raised in a case that ran past its time (a BaseException: no reader catches it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: Any) -> None:
        raise TookTooLong(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _runs(path: Path, **options: Any) -> list[str]:
    runs, errors = read_runs(str(path), **options)
    judged, more = judge(runs, "a100")
    assert len(judged) + len(more) == len(runs)
    return [str(e) for e in [*errors, *more]]


def _budget(path: Path) -> list[str]:
    report = run_checks(load_budget(path))
    return list(report.notes)


def _spec(path: Path) -> list[str]:
    spec = load_spec(path)
    analyze(load(path.parent / "m.mtx"), spec, Config(kernel="spmm", widths=(1, 8)))
    return []


def _manifest(path: Path) -> list[str]:
    manifest = load_manifest(path)
    spec = load_spec("a100")
    study(manifest, spec, [parse_pattern("unstructured"), parse_pattern("2:4")], (0.5,),
          Options())
    return []


def _layer_times(path: Path) -> list[str]:
    times, errors = read_layer_times(path)
    manifest = load_manifest(path.parent / "toy.yaml")
    found, more = measured_layers(times, manifest, load_spec("a100"), Options())
    assert len(found) + len(more) == len(times)
    return [f"{source}: {problem}" for source, problem in [*errors, *more]]


#: surface -> (file name, kind of mutation, seed file, what reads and uses it)
SURFACES: dict[str, tuple[str, str, bytes, Callable[[Path], list[str]]]] = {
    "runs-csv": ("runs.csv", "csv", RUNS_CSV, _runs),
    "ginkgo-json": ("ginkgo.json", "json", GINKGO, lambda p: _runs(p, time_unit="ns")),
    "bench-json": ("bench.json", "json", BENCH, _runs),
    "spec-yaml": ("spec.yaml", "yaml", (ROOT / "hwspecs" / "a100-80gb.yaml").read_bytes(),
                  _spec),
    "budget-yaml": ("budget.yaml", "yaml", BUDGET, _budget),
    "manifest-yaml": ("net.yaml", "yaml", MANIFEST, _manifest),
    "layer-times-csv": ("times.csv", "csv", LAYER_TIMES, _layer_times),
}


def one_case(folder: Path, surface: str, seed: int) -> str:
    """Build case ``seed`` of ``surface`` in ``folder`` and read it; the outcome in a word
    (ok or error). A failure raises AssertionError naming the seed."""
    name, kind, data, use = SURFACES[surface]
    path = folder / name
    path.write_bytes(mutate_file(random.Random(seed), data, kind))
    try:
        with time_limit(LIMIT_S):
            try:
                messages = use(path)
            except SparsroofError as err:
                message = str(err)
                assert "\n" not in message and len(message) < 2000, (surface, seed, message)
                assert name in message, (surface, seed, message)
                return "error"
    except TookTooLong as err:
        raise AssertionError(f"{surface} case {seed}: {err}") from None
    except Exception as err:
        raise AssertionError(f"{surface} case {seed}: {type(err).__name__}: {err}") from err
    for message in messages:
        assert "\n" not in message and len(message) < 2000, (surface, seed, message)
    return "ok"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with the tiny matrix and manifest the seed files name."""
    (tmp_path / "m.mtx").write_bytes(MATRIX)
    (tmp_path / "toy.yaml").write_bytes(MANIFEST)
    return tmp_path


def _fuzz(folder: Path, surface: str, cases: int) -> None:
    outcomes = [one_case(folder, surface, seed) for seed in range(cases)]
    # a fuzz that never gets past the reader, or never fails it, is hollow
    assert outcomes.count("ok") and outcomes.count("error"), outcomes


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_mutated_input_files_give_a_result_or_one_line(folder: Path, surface: str) -> None:
    _fuzz(folder, surface, QUICK)


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_the_seed_files_are_valid(folder: Path, surface: str) -> None:
    name, _, data, use = SURFACES[surface]
    (folder / name).write_bytes(data)
    assert not [m for m in use(folder / name) if "skipped" not in m]
