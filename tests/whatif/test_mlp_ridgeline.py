"""The data-parallel MLP of the Ridgeline paper's case study (*Ridgeline: A 2D Roofline
Model for Distributed Systems*, §III), worked by hand on its Cascade Lake socket:
4.2 TFLOP/s fp32, 105 GB/s memory, 12 GB/s network (hwspecs/clx-ridgeline.yaml)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sparsroof.errors import OptionError
from sparsroof.hardware.library import load_spec
from sparsroof.plot.mlp import mlp_points, mlp_ridgeline
from sparsroof.plot.ridge import balance, ridgeline_figure
from sparsroof.whatif.mlp import MlpLayer, allreduce_bytes, mlp_rank_bound, mlp_study, parse_mlp

from ..conftest import sparsroof
from ..plot.test_plot import by_gid

CLX = {"peak_flops": 4.2e12, "bandwidth": 105e9, "network": 12e9}
N = 4096  # the paper's input and output feature maps


def test_the_clx_spec_is_the_papers_machine() -> None:
    spec = load_spec("clx-ridgeline")
    assert spec.peak("simt", "fp32").value == 4.2e12
    assert spec.dram.bandwidth.value == 105e9 and spec.network is not None
    assert spec.network.value == 12e9
    # the centre of the paper's ridgeline: x = 105/12, y = 4200/105
    assert balance(4.2e12, 105e9, 12e9) == (8.75, 40.0)


def test_one_rank_count_by_hand() -> None:
    # global batch 16384 on 4 ranks: b = 4096 samples each
    rb = mlp_rank_bound(MlpLayer(N, N, 16384), 4, s_v=4, **CLX)
    assert rb.width == 4096
    assert rb.compute_s == pytest.approx(6 * 4096**3 / 4.2e12)  # 3 GEMMs x 2·b·K·M
    # W read and dW written, I, O, dO, dI of 4096 x 4096 each: 6·4096² fp32 values
    assert rb.memory_s == pytest.approx(4 * 6 * 4096**2 / 105e9)
    # ring all-reduce: 2·3/4 of (4096² weights + 4096 biases) fp32 = 100,687,872 bytes
    assert rb.network_s == pytest.approx(100_687_872 / 12e9)
    assert rb.bound == "compute" and rb.sol_s == rb.compute_s
    # totals over the four ranks give the plane's coordinates
    assert rb.bytes_network == pytest.approx(4 * 100_687_872)
    assert rb.arithmetic_intensity == pytest.approx(4 * 6 * 4096**3 / (4 * 4 * 6 * 4096**2))
    assert allreduce_bytes(100.0, 1) == 0.0 and allreduce_bytes(100.0, 8) == 175.0


def test_three_distinct_sizes_by_hand() -> None:
    """K = 1000 inputs, M = 300 outputs, global batch B = 50 on P = 4 ranks, fp32: no two
    sizes equal and a batch that does not split evenly, so a swapped size or a floor in
    place of the ceiling changes some number below."""
    rb = mlp_rank_bound(MlpLayer(1000, 300, 50), 4, s_v=4, **CLX)
    # the busiest rank takes b = ceil(50 / 4) = 13 samples
    assert rb.width == 13
    # F(r) = 3 · 2·b·K·M = 6 · 13 · 1000 · 300 = 23,400,000 FLOP
    assert rb.compute_s == pytest.approx(23_400_000 / 4.2e12)
    # B_M(r) = 4 · (2·1000·300 + 2·13·1000 + 2·13·300) = 4 · (600,000 + 26,000 + 7,800)
    #        = 2,535,200 bytes
    assert rb.memory_s == pytest.approx(2_535_200 / 105e9)
    # B_N(r) = 2·3/4 · 4 · (1000·300 + 300 biases) = 1.5 · 1,201,200 = 1,801,800 bytes
    # (with K and M swapped the biases would be 1000: 1,806,000 bytes)
    assert rb.network_s == pytest.approx(1_801_800 / 12e9)
    # 150 us of network against 24 us of memory and 5.6 us of compute
    assert rb.bound == "network" and rb.sol_s == rb.network_s
    # totals over ranks: F of the whole batch 6 · 50 · 1000 · 300 = 90,000,000; memory
    # 4 · (2·P·K·M + 2·B·(K + M)) = 4 · (2,400,000 + 130,000) = 10,120,000 (every rank
    # holds the weights, the samples are split); network 4 · 1,801,800 = 7,207,200
    assert rb.flops == pytest.approx(90_000_000)
    assert rb.bytes_memory == pytest.approx(10_120_000)
    assert rb.bytes_network == pytest.approx(7_207_200)
    # 13 samples on the busiest rank against 12.5 on average
    assert rb.imbalance == pytest.approx(13 * 4 / 50)


def test_the_papers_case_study_batches() -> None:
    """§III: with batch 512 per node the MLP "is indeed on the ridgeline"; 1024 and more
    are compute bound and less than 512 network bound. Per node the compute time is
    6·b·N²/4.2 T and the all-reduce about 2·4·N²/12 G, equal at b = 467: b = 512 sits
    within 15 % of the compute/network border, on its compute side."""
    layer = MlpLayer(N, N, 64 * 512)
    rows = {rb.width: rb for rb in (mlp_rank_bound(layer, p, s_v=4, **CLX)
                                    for p in (16, 32, 64, 128, 256))}
    assert [rows[b].bound for b in (128, 256, 512, 1024, 2048)] == [
        "network", "network", "compute", "compute", "compute"]
    on_ridge = rows[512]
    assert 0.85 < on_ridge.network_s / on_ridge.compute_s < 1.0
    # the border of the plane is x·y = F/B_N = P_u/β_N = 350 FLOP per network byte
    xy = on_ridge.arithmetic_intensity * on_ridge.memory_intensity
    assert 350 < xy < 350 / 0.85
    # no batch of the study is memory bound: the all-reduce outweighs the memory traffic
    assert all(rb.memory_s < rb.network_s for rb in rows.values())


def test_study_resolves_the_spec_and_refuses_what_it_cannot_model() -> None:
    unit, precision, rows = mlp_study(MlpLayer(N, N, 1024), load_spec("clx"), ["1,2", 4])
    assert (unit, precision, [r.ranks for r in rows]) == ("simt", "fp32", [1, 2, 4])
    assert rows[0].bytes_network == 0.0
    with pytest.raises(OptionError, match="no network bandwidth"):
        mlp_study(MlpLayer(N, N, 8), load_spec("c2050"), [2])
    with pytest.raises(OptionError, match="at least one sample"):
        mlp_study(MlpLayer(N, N, 8), load_spec("clx"), [16])
    with pytest.raises(OptionError, match="IN,OUT,BATCH"):
        parse_mlp("4096,4096")


def test_figure_marks_each_rank_count_where_the_model_puts_it(tmp_path: Path) -> None:
    rows = [mlp_rank_bound(MlpLayer(N, N, 16384), p, s_v=4, **CLX) for p in (1, 8, 64)]
    path = mlp_ridgeline(rows, "t", tmp_path / "r.svg")
    svg = path.read_text()
    # one rank moves nothing over the network and has no place on the plane
    assert "P=8" in svg and "P=64" in svg and "P=1<" not in svg
    fig = ridgeline_figure(mlp_points(rows), 4.2e12, 105e9, 12e9, "t")
    got = by_gid(fig.axes[0], "points").get_offsets().tolist()
    assert [tuple(p) for p in got] == [
        pytest.approx((r.memory_intensity, r.arithmetic_intensity)) for r in rows[1:]]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=cwd)


def test_cli_json_table_and_saved_figure(tmp_path: Path) -> None:
    args = ("whatif", "--mlp", "4096,4096,16384", "--ranks", "1,4,64", "--hw",
            "clx-ridgeline", "--dtype", "fp32")
    out = _cli(*args, "-O", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kind"] == "whatif" and doc["mlp"]["batch"] == 16384
    four = doc["distributed"][1]
    assert four["ranks"] == 4 and four["batch_per_rank"] == 4096
    assert four["network_s"] == pytest.approx(100_687_872 / 12e9)
    assert doc["distributed"][0]["memory_intensity"] is None  # one rank: no network
    assert [r["bound"] for r in doc["distributed"]] == ["compute", "compute", "network"]
    (tmp_path / "mlp.json").write_text(out.stdout)
    fig = _cli("plot", "ridgeline", "mlp.json", "-o", "r.png", cwd=tmp_path)
    assert fig.returncode == 0, fig.stderr
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    table = _cli(*args, cwd=tmp_path)
    assert table.returncode == 0 and "network" in table.stdout and "b/rank" in table.stdout
    assert "(fp32, at the simt fp32 peak)" in " ".join(table.stdout.split())
    # fp32 values on an A100's tensor cores run at their tf32 peak: the title says which
    tensor = _cli("whatif", "--mlp", "4096,4096,16384", "--ranks", "1", "--hw", "a100",
                  "--dtype", "fp32", cwd=tmp_path)
    assert "(fp32, at the tensor tf32 peak)" in " ".join(tensor.stdout.split()), tensor.stdout
    bad = _cli("whatif", "swin_tiny", "--mlp", "4,4,4", "--ranks", "2", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    none = _cli("whatif", cwd=tmp_path)
    assert none.returncode == 2 and "--mlp" in none.stderr


def test_a_step_that_fits_a_cache_is_charged_at_that_cache() -> None:
    """A bound must hold for a real run: a rank whose working set (the bytes its step
    moves, each tensor once) fits the A100's 40 MB L2 is charged at the L2's bandwidth,
    a larger one at HBM's."""
    from sparsroof.whatif.mlp import mlp_study

    a100 = load_spec("a100")
    l2, hbm = (lv.bandwidth.value for lv in a100.memory)
    # 512 x 512, batch 256 over 1 rank, fp32: 4·(2·512·512 + 2·256·512 + 2·256·512) =
    # 4 MiB; 8192 x 8192, batch 8192: 4·(2·8192² + 4·8192²) = 1.5 GiB
    small = mlp_study(MlpLayer(512, 512, 256), a100, [1], "fp32")[2][0]
    large = mlp_study(MlpLayer(8192, 8192, 8192), a100, [1], "fp32")[2][0]
    assert (small.bandwidth, large.bandwidth) == (l2, hbm)
    assert small.memory_s == pytest.approx(4 * (2 * 512 * 512 + 4 * 256 * 512) / l2)
@pytest.mark.parametrize("field,text,says", [
    ("flops", '"abc"', "field 'flops' is the string 'abc', expected a finite number"),
    ("flops", "NaN", "field 'flops' is NaN, expected a finite number"),
    ("bytes_network", "-1", "field 'bytes_network' is -1, below 0"),
    ("ranks", "2.5", "field 'ranks' is 2.5, expected a whole number"),
])
def test_a_bad_rank_bound_in_a_saved_mlp_study_is_one_line(tmp_path: Path, field: str,
                                                           text: str, says: str) -> None:
    out = _cli("whatif", "--mlp", "4096,4096,16384", "--ranks", "1,4,64", "--hw",
               "clx-ridgeline", "--dtype", "fp32", "-O", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    doc["distributed"][1][field] = "@@BAD@@"
    (tmp_path / "bad.json").write_text(json.dumps(doc).replace('"@@BAD@@"', text))
    fig = _cli("plot", "ridgeline", "bad.json", "-o", "r.png", cwd=tmp_path)
    assert fig.returncode == 1
    assert fig.stderr == f"sparsroof: error: bad.json: distributed[1]: {says}\n"
    assert not (tmp_path / "r.png").exists()


def test_a_zero_roof_in_a_saved_mlp_study_names_the_file(tmp_path: Path) -> None:
    out = _cli("whatif", "--mlp", "4096,4096,16384", "--ranks", "1,4", "--hw",
               "clx-ridgeline", "--dtype", "fp32", "-O", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    doc["distributed"][0]["network"] = 0
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    fig = _cli("plot", "ridgeline", "bad.json", "-o", "r.png", cwd=tmp_path)
    assert fig.returncode == 1
    assert fig.stderr == ("sparsroof: error: bad.json: distributed[0]: field 'network' is "
                          "0, expected a positive number\n")


@pytest.mark.parametrize("option", [
    ("--pattern", "2:4"), ("--sparsity", "50"), ("--unit", "simt"), ("--measured", "t.csv"),
    ("--accuracy", "a.csv"), ("--points", "p.csv"), ("--batch", "4"), ("--nm-native",),
    ("--im2col",), ("--cache-roof",), ("--layers",)])
def test_options_of_a_pruned_network_are_refused_with_mlp(tmp_path: Path,
                                                          option: tuple[str, ...]) -> None:
    out = _cli("whatif", "--mlp", "64,64,64", "--ranks", "2", *option, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == ("sparsroof: error: --mlp studies one dense MLP layer: give it "
                          f"without {option[0]}\n")


def test_ranks_without_mlp_is_a_usage_error(tmp_path: Path) -> None:
    out = _cli("whatif", "swin_tiny", "--ranks", "2", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "--ranks splits the batch of --mlp" in out.stderr
