"""A partition run on this host, one kernel per block, and runs judged against a spec of
another device."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from sparsroof.cli import cli
from sparsroof.errors import SparsroofError
from sparsroof.hardware.library import load_spec
from sparsroof.host.bench import other_device
from sparsroof.host.partitioned import fill_reason, run_partition

from ..conftest import make_matrix
from .test_advice import _shape, _uniform

FAST = {"warmup": 1, "repeat": 2, "min_time": 0.0}


def _random(rows: int, cols: int, seed: int) -> object:
    rng = np.random.default_rng(seed)
    n = rows * 6
    return make_matrix(rows, cols, rng.integers(0, rows, n), rng.integers(0, cols, n),
                       rng.random(n))


def test_every_block_kernel_writes_its_rows_of_y() -> None:
    # 103 rows (not a whole number of BSR's 4-row blocks), a block in every format
    m = _random(103, 90, 0)
    blocks = [(0, 10, "dia"), (10, 37, "bsr4"), (37, 50, "hyb"), (50, 61, "ell"),
              (61, 80, "coo"), (80, 95, "csc"), (95, 103, "csr")]
    run = run_partition(m, blocks, **FAST)  # type: ignore[arg-type]
    assert run.error <= 1e-12 and len(run.timing.samples) >= 2
    assert run.blocks == tuple(blocks)


def test_a_partition_that_leaves_rows_out_is_caught() -> None:
    m = _random(50, 50, 1)
    with pytest.raises(SparsroofError, match="differs from scipy"):
        run_partition(m, [(0, 20, "csr"), (30, 50, "csr")], **FAST)  # type: ignore[arg-type]


def test_fill_reason_names_a_padded_format() -> None:
    m = make_matrix(1000, 1000, np.r_[np.zeros(500, int), np.arange(1000)],
                    np.r_[np.arange(500), np.arange(1000)])
    assert "ell would store 500,000 slots" in fill_reason(m, "ell")
    assert fill_reason(m, "csr") == ""


def test_formats_run_measures_the_advised_partition(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The OPF_6000 shape of the paper's Table 3 on the C2050: ELL then CSR, run here,
    checked against scipy, beside every single format the advisor priced."""
    import scipy.io
    import scipy.sparse as sp

    lengths, _ = _shape("OPF_6000")
    m = _uniform(lengths, 7)
    path = tmp_path / "opf.mtx"
    scipy.io.mmwrite(path, sp.coo_matrix((np.ones(m.stored_entries), (m.row, m.col)),
                                         shape=m.shape))
    out = CliRunner().invoke(cli, ["formats", str(path), "--hw", "c2050", "--run", "-O",
                                   "json", "--no-cache"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    blocks = doc["partition"]["blocks"]
    assert [b["storage"] for b in blocks] == ["ell", "csr"]
    measured = doc["measured"]
    assert measured["partition"]["blocks"] == [[b["first_row"], b["last_row"], b["storage"]]
                                               for b in blocks]
    assert measured["partition"]["y_error"] <= 1e-10
    assert set(measured) == {"partition", *doc["partition"]["single_s"]}
    assert "skipped" in measured["dia"]  # thousands of diagonals: not run
    assert all(v["min_s"] > 0 for k, v in measured.items() if "min_s" in v)
    assert "spec of another device" in out.stderr
    table = CliRunner().invoke(cli, ["formats", str(path), "--hw", "c2050", "--run",
                                     "--no-cache"], env={"COLUMNS": "80"})
    assert table.exit_code == 0
    assert "measured gain" in table.stdout and "predicted 1.0" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80


def test_a_spec_of_another_device_is_said() -> None:
    from sparsroof.host.probe import host_info

    assert "is a spec of another device (NVIDIA A100" in other_device(load_spec("a100"))
    mine = dataclasses.replace(load_spec("epyc-7763"), device=host_info().model)
    assert other_device(mine) == ""
    assert other_device(load_spec("a100"), "cusparse") == ""
    out = CliRunner().invoke(cli, ["bench", "data/lap2d_64.mtx", "--hw", "a100",
                                   "--storage", "csr", "--repeat", "1"])
    assert out.exit_code in (0, 3), out.output
    notes = [line for line in out.stderr.splitlines() if "another device" in line]
    assert len(notes) == 1 and notes[0].startswith("sparsroof: note: a100-80gb is a spec")


def test_a_partition_of_one_format_is_that_format_timed_once() -> None:
    """On the A100 every format of the small Laplacian sits at the launch floor: the tie
    goes to the format that moves the fewest bytes (DIA), the advice is DIA for the whole
    matrix, and --run times that kernel once: the partition's run is DIA's, with no gain
    to report (two timings of one kernel differ only by noise)."""
    out = CliRunner().invoke(cli, ["formats", "data/lap2d_64.mtx", "--hw", "a100", "--run",
                                   "-O", "json", "--no-cache"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    single = doc["partition"]["single_s"]
    assert [b["storage"] for b in doc["partition"]["blocks"]] == ["dia"]
    assert single["dia"] == min(single.values()) == single["csr"]  # a tie at the floor
    assert doc["measured"]["partition"] == doc["measured"]["dia"]
    assert out.stderr.count("the partition,") == 0 and "dia for the whole matrix" in out.stderr
    table = CliRunner().invoke(cli, ["formats", "data/lap2d_64.mtx", "--hw", "a100", "--run",
                                     "--no-cache"], env={"COLUMNS": "80"})
    assert table.exit_code == 0, table.output
    assert "measured gain" not in table.stdout
    assert "the partition is dia for the whole matrix: one kernel, no gain" in table.stdout
    measured = table.stdout.split("measured here")[1].splitlines()
    assert sum(line.startswith(("partition (dia)", "dia ")) for line in measured) == 1
