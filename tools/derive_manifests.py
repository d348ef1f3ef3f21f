"""Derive the bundled model manifests (sparsroof/models/*.yaml) from timm's model code.

Instantiates each architecture with random weights (pretrained=False, nothing is
downloaded), runs one 1 x 3 x 224 x 224 input through it with forward hooks on every
Conv2d and Linear module, and writes one manifest layer per module:

* Linear: m = out_features, k = in_features, n = the number of rows it is applied to
  (tokens, or 1 for a classifier head after pooling), input = k·n.
* Conv2d: the im2col GEMM, m = C_out, k = (C_in / groups)·kh·kw, n = H_out·W_out, and
  input = C_in·H_in·W_in (the feature map, read once). A depthwise convolution
  (groups = C_in = C_out) is written with kind "depthwise": each output channel reduces
  over its own kh·kw window, so F = 2·m·k·n holds, but its B is the feature map, not a
  shared k x n matrix.

Not a runtime dependency of sparsroof; needs torch and timm:

    pip install torch timm && python tools/derive_manifests.py
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
import yaml

_register_fake = torch.library.register_fake


def _tolerant_register_fake(*args, **kwargs):
    """A torchvision wheel built for a CUDA torch registers kernels for operators a CPU
    torch does not have; skip those (no torchvision operator is used here)."""
    decorate = _register_fake(*args, **kwargs)

    def apply(fn):
        try:
            return decorate(fn)
        except RuntimeError:
            return fn
    return apply


torch.library.register_fake = _tolerant_register_fake
import timm  # noqa: E402

MODELS = {
    "resnet50": ("resnet50", "ResNet-50"),
    "convnext_tiny": ("convnext_tiny", "ConvNeXt-Tiny"),
    "swin_tiny": ("swin_tiny_patch4_window7_224", "Swin-Tiny (patch 4, window 7)"),
    "deit_small": ("deit_small_patch16_224", "DeiT-Small (patch 16)"),
}
HEADER = """\
# {title}: the weight GEMMs of one 224x224 image (batch 1; sparsroof scales n and input
# with --batch). Written by tools/derive_manifests.py; see 'source' for how.
# m x k is the weight matrix (k = C_in*kh*kw for a convolution), n the columns of the
# features it multiplies (output positions or tokens), input the input feature elements
# read once. kind: depthwise marks a depthwise convolution (one kh*kw filter per channel):
# its weights form an m x kh*kw matrix and are pruned like any other, F = 2*m*k*n.
"""
OUT = Path(__file__).resolve().parent.parent / "sparsroof" / "models"


def layers_of(arch: str) -> list[dict]:
    model = timm.create_model(arch, pretrained=False).eval()
    found: list[dict] = []

    def hook(name: str):
        def record(module, inputs, output):
            x = inputs[0]
            if isinstance(module, torch.nn.Conv2d):
                c_in, h_in, w_in = x.shape[1:]
                kh, kw = module.kernel_size
                groups = module.groups
                layer = {"name": name,
                         "kind": "depthwise" if groups > 1 and groups == c_in else "conv",
                         "m": module.out_channels, "k": c_in // groups * kh * kw,
                         "n": int(output.shape[2] * output.shape[3]),
                         "input": int(c_in * h_in * w_in)}
                if groups > 1 and groups != c_in:
                    raise SystemExit(f"{arch}: grouped convolution {name} not modelled")
            else:
                rows = math.prod(x.shape[:-1])
                layer = {"name": name, "kind": "linear", "m": module.out_features,
                         "k": module.in_features, "n": int(rows)}
            found.append(layer)
        return record

    for name, module in model.named_modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            module.register_forward_hook(hook(name))
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    return found


def main() -> None:
    for key, (arch, title) in MODELS.items():
        layers = layers_of(arch)
        doc = {
            "name": key,
            "description": f"{title}, batch 1, 224x224 input: every convolution and linear "
                           "layer as a weight GEMM (attention score products, norms and "
                           "activations are left out: they hold no prunable weights)",
            "source": f"Derived by tools/derive_manifests.py from timm {timm.__version__} "
                      f"model '{arch}' (torch {torch.__version__.split('+')[0]}): one forward "
                      "pass of a 1x3x224x224 input with hooks on every Conv2d and Linear. "
                      "Convolutions are im2col GEMMs: m = C_out, k = C_in/groups*kh*kw, "
                      "n = H_out*W_out, input = C_in*H_in*W_in (the feature map read once). "
                      "Depthwise convolutions (kind depthwise) have k = kh*kw. Linear "
                      "layers: n = rows (tokens) they are applied to. n and input are per "
                      "image and scale with the batch.",
            "input_size": "3x224x224",
            "layers": layers,
        }
        text = yaml.safe_dump(doc, sort_keys=False, width=100, default_flow_style=None)
        (OUT / f"{key}.yaml").write_text(HEADER.format(title=title) + text)
        print(f"{key}: {len(layers)} layers, "
              f"{sum(2 * x['m'] * x['k'] * x['n'] for x in layers) / 1e9:.3f} GFLOP at batch 1")


if __name__ == "__main__":
    main()
