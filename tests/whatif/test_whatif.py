"""Whole-model Sparsity Roofline: one layer per pattern and a model sum, worked by hand.

A100 80GB at fp16 (2-byte values, 4-byte indices): HBM 2039 GB/s, SIMT 78 TFLOP/s,
tensor 312 TFLOP/s, sparse tensor 624 TFLOP/s quoted dense-equivalent, i.e. 312 TFLOP/s
of entries actually multiplied. FLOPs are 2 per stored entry per column.
"""

from __future__ import annotations

import pytest

from sparsroof.errors import AccuracyError
from sparsroof.hardware.library import load_spec
from sparsroof.whatif.manifest import Layer, Manifest
from sparsroof.whatif.patterns import parse_pattern
from sparsroof.whatif.placement import Options
from sparsroof.whatif.study import evaluate_layer, evaluate_model, read_accuracy, study

from ..conftest import sparsroof

BW = 2039e9
SMALL = Layer("fc", m=64, k=128, n=16)  # memory bound in every form
BIG = Layer("big", m=4096, k=4096, n=4096)  # compute bound in every form
DENSE_SMALL = 64 * 128 * 2 + 128 * 16 * 2 + 64 * 16 * 2  # A 16384 + B 4096 + C 2048 = 22528
DENSE_BIG_S = 2 * 4096**3 / 312e12  # 2·m·k·n FLOPs on tensor cores


@pytest.fixture(scope="module")
def a100():
    return load_spec("a100")


def _layer(layer: Layer, pattern: str, sparsity: float, spec, **kw):
    # the paper's launch-free model, unless a test asks for launches
    return evaluate_layer(layer, parse_pattern(pattern), sparsity, spec,
                          Options(**{"launches": 0, **kw}))


def test_dense_layer(a100) -> None:
    r = _layer(SMALL, "unstructured", 0.75, a100)
    assert r.dense_traffic.bytes_total == DENSE_SMALL
    assert r.dense.sol_s == pytest.approx(DENSE_SMALL / BW) and r.dense.bound == "memory"
    assert r.dense.unit == "tensor"
    # input and output features: (4096 + 2048) / 22528
    assert r.feature_share_dense == pytest.approx(6144 / 22528)


def test_unstructured_layer_csr_on_simt(a100) -> None:
    r = _layer(SMALL, "unstructured", 0.75, a100)
    # nnz = 0.25·8192 = 2048; CSR = 2048·(2 + 4) + 65·4 = 12548; + B 4096 + C 2048
    assert (r.placement.storage, r.placement.unit) == ("csr", "simt")
    assert r.sparse_traffic.bytes_total == 12548 + 6144
    assert r.sparse.compute_s == pytest.approx(2 * 2048 * 16 / 78e12)
    assert r.speedup == pytest.approx(22528 / 18692)


def test_unstructured_at_low_sparsity_is_slower_than_dense_when_compute_bound(a100) -> None:
    # 50 %: 2·(4096²/2)·4096 FLOPs on SIMT (78 T) against the dense GEMM on tensor (312 T):
    # memory is 4096²/2·6 + 2·4096²·2 bytes = 117 MB, 57 us, far below 881 us of compute
    r = _layer(BIG, "unstructured", 0.5, a100)
    assert r.sparse.bound == "compute"
    assert r.speedup == pytest.approx(DENSE_BIG_S / (4096**3 / 78e12))  # = 0.5


def test_block_layer_bsr_on_tensor(a100) -> None:
    r = _layer(SMALL, "block4", 0.75, a100)
    # 16·32 = 512 blocks, 128 kept: values 128·16·2 = 4096, indices 128·4 + 17·4 = 580
    assert (r.placement.storage, r.placement.unit) == ("bsr4", "tensor")
    assert r.sparse_traffic.bytes_a == 4676
    assert r.placement.executed_entries == 128 * 16
    assert r.speedup == pytest.approx(22528 / (4676 + 6144))


def test_2to4_layer_on_sparse_tensor_cores(a100) -> None:
    r = _layer(SMALL, "2:4", 0.0, a100)
    # 4096 values · 2 B + 4096 · 2 bits of metadata = 8192 + 1024
    assert (r.placement.unit, r.sparse_traffic.bytes_a) == ("tensor-sparse", 9216)
    assert r.speedup == pytest.approx(22528 / (9216 + 6144))


def test_2to4_compute_bound_is_twice_as_fast_not_four_times(a100) -> None:
    # half the multiplies at the rate of the dense tensor cores: 624 T quoted counts the
    # skipped zeros, so charging the kept entries against it would give 4x
    r = _layer(BIG, "2:4", 0.0, a100)
    assert r.sparse.bound == "compute" and r.sparse.peak_flops == 312e12
    assert r.speedup == pytest.approx(2.0)


def test_nm_patterns_today_and_hypothetical(a100) -> None:
    # 1:4 fits 2:4: today it runs as 2:4 (same time); natively, a quarter of the work
    assert _layer(BIG, "1:4", 0.0, a100).speedup == pytest.approx(2.0)
    assert _layer(BIG, "1:4", 0.0, a100, nm_native=True).speedup == pytest.approx(4.0)
    # 3:8 does not fit 2:4: expanded for dense tensor cores, every entry multiplied
    r = _layer(BIG, "3:8", 0.0, a100)
    assert r.placement.unit == "tensor" and r.speedup == pytest.approx(1.0)
    # natively: 1536 of 4096 entries per row stored: 1536·2 B + 1536·3 bits per row
    native = _layer(SMALL, "3:8", 0.0, a100, nm_native=True)
    assert native.sparse_traffic.bytes_a == 64 * (48 * 2 + 48 * 3 / 8)


def test_unit_override(a100) -> None:
    r = _layer(BIG, "unstructured", 0.5, a100, unit="tensor")
    assert r.placement.unit == "tensor" and r.speedup == pytest.approx(2.0)


def test_model_sums_layers_with_counts(a100) -> None:
    m = Manifest("toy", "toy.yaml", "", "by hand",
                 (Layer("fc", m=64, k=128, n=16, count=3), BIG))
    r = evaluate_model(m, parse_pattern("2:4"), 0.5, a100, Options(launches=0))
    dense = 3 * DENSE_SMALL / BW + DENSE_BIG_S
    sparse = 3 * 15360 / BW + DENSE_BIG_S / 2
    assert r.dense_s == pytest.approx(dense) and r.sparse_s == pytest.approx(sparse)
    assert r.speedup == pytest.approx(dense / sparse)
    assert (r.layer_count, r.memory_bound_layers) == (4, 3)
    # features: 3·6144 + (4096² + 4096²)·2 bytes of B and C, over all bytes
    big_features = 2 * 4096**2 * 2
    total = 3 * DENSE_SMALL + big_features + 4096**2 * 2
    assert r.feature_share_dense == pytest.approx((3 * 6144 + big_features) / total)


def test_launch_bound_layers_are_counted_and_said(a100) -> None:
    """With the A100's 1.3 us launch, the small layer's pruned kernel (0.011 us of
    memory) takes its launch, three times over; the big one stays compute bound. The
    table says pruning cannot speed those up; a launch-free study says nothing."""
    from sparsroof.report.whatif import to_table

    from ..report.test_tables import render

    m = Manifest("toy", "toy.yaml", "", "by hand",
                 (Layer("fc", m=64, k=128, n=16, count=3), BIG))
    with_launch = evaluate_model(m, parse_pattern("2:4"), 0.5, a100, Options(launches=1))
    free = evaluate_model(m, parse_pattern("2:4"), 0.5, a100, Options(launches=0))
    assert (with_launch.launch_bound_layers, free.launch_bound_layers) == (3, 0)
    line = "the launch floor binds the pruned kernels of up to 3 of 4 layers"
    assert line in " ".join(render(to_table([with_launch], "t"), 200).split())
    assert "launch floor binds" not in render(to_table([free], "t"), 200)


def test_batch_scales_n_and_unpruned_layers_stay_dense(a100) -> None:
    r = _layer(SMALL, "unstructured", 0.75, a100, batch=4)
    assert r.dense_traffic.bytes_b == 128 * 64 * 2 and r.dense_traffic.width == 64
    frozen = Layer("stem", m=64, k=128, n=16, prune=False)
    assert _layer(frozen, "2:4", 0.5, a100).speedup == pytest.approx(1.0)


def test_conv_input_read_once_or_as_im2col(a100) -> None:
    conv = Layer("c", m=8, k=27, n=100, kind="conv", input=300)
    assert _layer(conv, "unstructured", 0.5, a100).dense_traffic.bytes_b == 600
    assert _layer(conv, "unstructured", 0.5, a100, im2col=True).dense_traffic.bytes_b == 5400


def test_study_levels_and_accuracy(a100, tmp_path) -> None:
    acc = tmp_path / "acc.csv"
    acc.write_text("pattern,sparsity,accuracy\nblock4x4,50,81.5\n2:4,0.5,83\n")
    table = read_accuracy(acc)
    m = Manifest("toy", "toy.yaml", "", "by hand", (SMALL,))
    results = study(m, a100, [parse_pattern("block4"), parse_pattern("2:4")], (0.5, 0.75),
                    Options(launches=0), table)
    assert [(r.pattern, r.sparsity, r.accuracy) for r in results] == [
        ("block4", 0.5, 81.5), ("block4", 0.75, None), ("2:4", 0.5, 83.0)]


def test_accuracy_file_errors(tmp_path) -> None:
    bad = tmp_path / "acc.csv"
    bad.write_text("pattern,sparsity\nblock4,50\n")
    with pytest.raises(AccuracyError, match="acc.csv: missing column"):
        read_accuracy(bad)
    bad.write_text("pattern,sparsity,accuracy\nblock4,50,high\n")
    with pytest.raises(AccuracyError, match="line 2: accuracy 'high'"):
        read_accuracy(bad)


def _cli(*args: str):

    from ..conftest import ROOT
    return sparsroof("whatif", *args, cwd=ROOT)


def test_cli_json_points_and_model_sum(tmp_path) -> None:
    import csv
    import json

    points = tmp_path / "points.csv"
    out = _cli("swin_tiny", "--hw", "a100", "--pattern", "block4,2:4", "--sparsity", "50,75",
               "--output", "json", "--points", str(points))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema_version"] == 1 and doc["kind"] == "whatif" and doc["version"]
    assert [(p["pattern"], p["sparsity"]) for p in doc["points"]] == [
        ("block4", 0.5), ("block4", 0.75), ("2:4", 0.5)]
    first = doc["points"][0]
    layers = first["layer_results"]
    assert first["sparse_sol_s"] == pytest.approx(sum(x["sparse_sol_s"] for x in layers))
    assert first["speedup"] == pytest.approx(first["dense_sol_s"] / first["sparse_sol_s"])
    rows = list(csv.DictReader(points.read_text().splitlines()))
    assert list(rows[0])[:6] == ["schema_version", "version", "pattern", "sparsity", "speedup",
                                "accuracy"]
    assert float(rows[2]["speedup"]) == pytest.approx(doc["points"][2]["speedup"])


def test_cli_errors_are_one_line(tmp_path) -> None:
    out = _cli("swin_tiny", "--pattern", "block64")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "block pattern 'block64'" in out.stderr
    bad = tmp_path / "m.yaml"
    bad.write_text("name: x\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8}\n")
    out = _cli(str(bad))
    assert out.returncode == 1 and out.stderr.strip() == (
        f"sparsroof: error: {bad}: layers.a: missing 'n'")


def test_cli_plot_needs_accuracy_and_draws_known_points(tmp_path) -> None:
    out = _cli("swin_tiny", "--pattern", "2:4", "--plot", str(tmp_path / "f.png"))
    assert out.returncode == 2 and "--accuracy" in out.stderr
    acc = tmp_path / "acc.csv"
    acc.write_text("pattern,sparsity,accuracy\nblock4,50,78\n2:4,50,80.5\n")
    fig = tmp_path / "f.png"
    out = _cli("swin_tiny", "--pattern", "block4,2:4", "--sparsity", "50,75", "--accuracy",
               str(acc), "--plot", str(fig), "--output", "csv")
    assert out.returncode == 0, out.stderr
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "1 of 3 points have no accuracy" in out.stderr


def test_a_misspelt_model_is_a_usage_error_with_a_hint() -> None:
    from sparsroof.errors import UnknownManifestError
    from sparsroof.whatif.manifest import load_manifest

    with pytest.raises(UnknownManifestError, match=r"did you mean 'resnet50'\?") as err:
        load_manifest("resnet5")
    assert err.value.exit_code == 2
    with pytest.raises(UnknownManifestError, match="bundled: convnext_tiny, deit_small"):
        load_manifest("nothing_like_it")
