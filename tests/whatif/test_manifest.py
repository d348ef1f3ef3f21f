"""Model manifests: validation with one-line errors, bundled shapes, pruned weight files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparsroof.errors import ManifestError
from sparsroof.hardware.library import load_spec
from sparsroof.whatif.manifest import bundled_models, load_manifest
from sparsroof.whatif.patterns import parse_pattern
from sparsroof.whatif.placement import Options
from sparsroof.whatif.study import evaluate_layer

from ..conftest import write_mtx

GOOD = """\
name: toy
source: written by hand
layers:
  - {name: fc1, m: 4, k: 8, n: 3}
  - {name: conv, kind: conv, m: 4, k: 8, n: 9, input: 18, count: 2}
"""


def _manifest(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return path


def test_good_manifest(tmp_path: Path) -> None:
    m = load_manifest(_manifest(tmp_path, GOOD))
    assert [(x.name, x.kind, x.count, x.input) for x in m.layers] == [
        ("fc1", "linear", 1, None), ("conv", "conv", 2, 18)]


@pytest.mark.parametrize("text, message", [
    ("name: t\nlayers: []\n", "model.yaml: source: missing required key"),
    ("name: t\nsource: s\nlayers: []\n", "model.yaml: layers: expected a non-empty list"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8}\n", "layers.a: missing 'n'"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 0, k: 8, n: 1}\n",
     "layers.a.m: expected a positive whole number, found 0"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8, n: 1, kind: rnn}\n",
     "layers.a.kind: unknown kind 'rnn'"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8, n: 1, bias: 3}\n",
     "layers.a: unknown key 'bias'"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8, n: 1}\n"
     "  - {name: a, m: 4, k: 8, n: 1}\n", "layers.a: layer names must be unique"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8, n: 1,"
     " weights: {block3x4: {50: w.mtx}}}\n", "only square blocks"),
    ("name: t\nsource: s\nlayers:\n  - {name: a, m: 4, k: 8, n: 1,"
     " weights: {unstructured: {50: nowhere.mtx}}}\n",
     "layers.a.weights.unstructured.50: no such weight file"),
    ("name: t\nsource: s\nlayers: [\n", "model.yaml: line"),
])
def test_manifest_errors_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_manifest(_manifest(tmp_path, text))


def test_nm_file_level_must_match_pattern(tmp_path: Path) -> None:
    write_mtx(tmp_path / "w.mtx", "%%MatrixMarket matrix coordinate pattern general\n4 8 1\n1 1\n")
    text = GOOD.replace("{name: fc1, m: 4, k: 8, n: 3}",
                        "{name: fc1, m: 4, k: 8, n: 3, weights: {'2:4': {75: w.mtx}}}")
    with pytest.raises(ManifestError, match=r"fc1.weights.2:4.75: 2:4 is 50 % sparse"):
        load_manifest(_manifest(tmp_path, text))


def test_bundled_models_and_their_shapes() -> None:
    assert bundled_models() == ["convnext_tiny", "deit_small", "resnet50", "swin_tiny"]
    r50 = load_manifest("resnet50")
    conv1 = r50.layers[0]
    # 7x7 stride-2 convolution of 3 channels: k = 3·49, output 112·112
    assert (conv1.m, conv1.k, conv1.n, conv1.input) == (64, 147, 12544, 3 * 224 * 224)
    # ResNet-50 is about 4.1 G multiply-adds per 224x224 image (published figure)
    macs = sum(x.m * x.k * x.n * x.count for x in r50.layers)
    assert macs == pytest.approx(4.09e9, rel=0.01)
    swin = load_manifest("swin-tiny")
    qkv = next(x for x in swin.layers if x.name.endswith("blocks.0.attn.qkv"))
    assert (qkv.m, qkv.k, qkv.n) == (288, 96, 56 * 56)  # 3·C x C over 3136 tokens
    dw = next(x for x in load_manifest("convnext_tiny").layers if x.kind == "depthwise")
    assert (dw.m, dw.k) == (96, 49)
    with pytest.raises(ManifestError, match="no bundled model"):
        load_manifest("vgg16")


def _weights_manifest(tmp_path: Path, pattern: str, level: str, matrix: str) -> Path:
    write_mtx(tmp_path / "w.mtx", matrix)
    return _manifest(tmp_path, f"name: t\nsource: s\nlayers:\n  - {{name: fc, m: 4, k: 8, "
                     f"n: 2, weights: {{'{pattern}': {{{level}: w.mtx}}}}}}\n")


# a 4 x 8 matrix with 8 entries (75 % sparse): rows 0-1 hold columns 0-1 and 4-5
W = ("%%MatrixMarket matrix coordinate pattern general\n4 8 8\n"
     "1 1\n1 2\n2 1\n2 2\n1 5\n1 6\n2 5\n2 6\n")


def test_pruned_files_replace_the_synthetic_pattern(tmp_path: Path) -> None:
    spec = load_spec("a100")
    m = load_manifest(_weights_manifest(tmp_path, "block2", "75", W))
    r = evaluate_layer(m.layers[0], parse_pattern("block2"), 0.75, spec, Options())
    # the entries fill two 2x2 blocks: 2·4 values·2 B + 2·4 + (2 + 1)·4 index bytes
    assert r.placement.source.endswith("w.mtx") and r.sparse_traffic.bytes_a == 16 + 8 + 12
    m = load_manifest(_weights_manifest(tmp_path, "block4", "75", W))
    r = evaluate_layer(m.layers[0], parse_pattern("block4"), 0.75, spec, Options())
    assert r.placement.executed_entries == 2 * 16  # two 4x4 blocks hold them


def test_pruned_file_errors(tmp_path: Path) -> None:
    spec = load_spec("a100")
    # row 0 with columns 0, 1, 2: one of the 8 groups of 4 holds 3 entries
    m = load_manifest(_weights_manifest(tmp_path, "2:4", "50", W.replace("1 5", "1 3")))
    with pytest.raises(ManifestError, match=r"w.mtx: only 87.5% of the groups of 4"):
        evaluate_layer(m.layers[0], parse_pattern("2:4"), 0.5, spec, Options())
    wrong = W.replace("4 8 8", "4 16 8")
    m = load_manifest(_weights_manifest(tmp_path, "unstructured", "75", wrong))
    with pytest.raises(ManifestError, match=r"w.mtx: shape 4x16 does not match layer 'fc'"):
        evaluate_layer(m.layers[0], parse_pattern("unstructured"), 0.75, spec, Options())
    # a file that is no matrix at all names whose weights it was to hold
    m = load_manifest(_weights_manifest(tmp_path, "unstructured", "75", "not a matrix\n"))
    with pytest.raises(ManifestError, match=r"w.mtx: .* \(the unstructured weights of layer "
                                            r"'fc'\)$"):
        evaluate_layer(m.layers[0], parse_pattern("unstructured"), 0.75, spec, Options())
