"""Model manifests: the weight GEMMs of a network, for whole-model Sparsity Roofline studies.

A manifest is a YAML file::

    name: resnet50
    description: ResNet-50, 224x224 input
    source: how the shapes were derived (required)
    layers:
      - name: conv1            # unique
        kind: conv             # linear, conv or depthwise (informational, and for messages)
        m: 64                  # output features (C_out)
        k: 147                 # reduction length (C_in·kh·kw for a convolution)
        n: 12544               # dense width at batch 1: output positions or tokens
        input: 150528          # optional: input feature elements at batch 1, read once
        count: 1               # optional: identical layers this entry stands for
        prune: true            # optional: false keeps the layer dense in pruned models
        weights:               # optional: pruned weight files, relative to this file
          unstructured: {50: conv1_u50.mtx, 87.5: conv1_u875.smtx}
          "2:4": conv1_24.mtx

Convolutions are their im2col GEMMs (m = C_out, k = C_in·kh·kw, n = H_out·W_out); n and
input scale with the batch. Without ``input`` the input features are the k x n im2col
matrix, as equation (1) of *The Sparsity Roofline* writes them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ManifestError, OptionError, UnknownManifestError, closest
from ..userfile import MAX_CONFIG_BYTES, load_yaml, read_text, shown
from .patterns import parse_pattern, parse_sparsity

__all__ = ["KINDS", "Layer", "Manifest", "bundled_models", "load_manifest",
           "parse_manifest"]

#: layer kinds a manifest may name
KINDS = ("linear", "conv", "depthwise")
_LAYER_KEYS = {"name", "kind", "m", "k", "n", "input", "count", "prune", "weights"}
_TOP_KEYS = {"name", "description", "source", "input_size", "layers"}



@dataclass(frozen=True)
class Layer:
    """One weight GEMM: A (m x k weights) times B (k x n features) at batch 1."""

    name: str
    m: int
    k: int
    n: int
    kind: str = "linear"
    input: int | None = None
    count: int = 1
    prune: bool = True
    #: (pattern label, sparsity fraction) -> pruned weight file
    weights: dict[tuple[str, float], Path] = field(default_factory=dict)

    def width(self, batch: int) -> int:
        """Dense width n at ``batch``: n scales linearly with the batch."""
        return self.n * batch

    def input_elements(self, batch: int, im2col: bool = False) -> int:
        """Input feature elements read once at ``batch`` (the k x n matrix with ``im2col``
        or when the manifest gives no ``input``).

        >>> Layer("c", m=8, k=27, n=100, kind="conv", input=300).input_elements(2)
        600
        """
        if im2col or self.input is None:
            return self.k * self.n * batch
        return self.input * batch


@dataclass(frozen=True)
class Manifest:
    name: str
    origin: str
    description: str
    source: str
    layers: tuple[Layer, ...]


#: largest layer dimension or count: a GEMM dimension past 2^31 - 1 is no network's
MAX_DIMENSION = 2**31 - 1


def _positive(origin: str, key: str, raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
        raise ManifestError(origin, f"expected a positive whole number, found {shown(raw)}", key)
    if raw > MAX_DIMENSION:
        raise ManifestError(origin, f"{shown(raw)} is above {MAX_DIMENSION:,}, the largest "
                            "dimension or count a layer may have", key)
    return raw


def _weight_file(origin: str, key: str, base: Path, raw: Any) -> Path:
    if not isinstance(raw, str) or not raw.strip():
        raise ManifestError(origin, "expected the path of a .mtx, .mtx.gz or .smtx file", key)
    path = (base / raw).resolve() if not Path(raw).is_absolute() else Path(raw)
    if not os.path.isfile(path):
        raise ManifestError(origin, f"no such weight file {str(path)!r}", key)
    return path


def _weights(origin: str, key: str, base: Path, raw: Any) -> dict[tuple[str, float], Path]:
    if not isinstance(raw, dict):
        raise ManifestError(origin, "expected a mapping of pattern -> sparsity -> file", key)
    table: dict[tuple[str, float], Path] = {}
    for name, files in raw.items():
        where = f"{key}.{name}"
        try:
            pattern = parse_pattern(str(name))
        except OptionError as err:
            raise ManifestError(origin, str(err), where) from None
        if isinstance(files, str) and pattern.fixed_sparsity is not None:
            files = {100 * pattern.fixed_sparsity: files}
        if not isinstance(files, dict):
            raise ManifestError(origin, "expected a mapping of sparsity % -> file", where)
        for level, path in files.items():
            try:
                sparsity = parse_sparsity(level)
            except OptionError as err:
                raise ManifestError(origin, str(err), f"{where}.{level}") from None
            fixed = pattern.fixed_sparsity
            if fixed is not None and abs(fixed - sparsity) > 1e-9:
                raise ManifestError(origin, f"{pattern.label} is {100 * fixed:g} % sparse, "
                                    f"not {100 * sparsity:g} %", f"{where}.{level}")
            table[(pattern.label, sparsity)] = _weight_file(origin, f"{where}.{level}", base,
                                                            path)
    return table


def _layer(origin: str, base: Path, i: int, raw: Any) -> Layer:
    key = f"layers[{i}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ManifestError(origin, "expected a mapping with a 'name'", key)
    key = f"layers.{raw['name']}"
    unknown = set(raw) - _LAYER_KEYS
    if unknown:
        raise ManifestError(origin, f"unknown key {shown(sorted(unknown, key=str)[0])} "
                            f"(expected: "
                            f"{', '.join(sorted(_LAYER_KEYS))})", key)
    for dim in ("m", "k", "n"):
        if dim not in raw:
            raise ManifestError(origin, f"missing '{dim}'", key)
    kind = raw.get("kind", "linear")
    if kind not in KINDS:
        raise ManifestError(origin, f"unknown kind {shown(kind)} (expected one of "
                            f"{', '.join(KINDS)})", f"{key}.kind")
    prune = raw.get("prune", True)
    if not isinstance(prune, bool):
        raise ManifestError(origin, "expected true or false", f"{key}.prune")
    return Layer(
        name=raw["name"], kind=kind, prune=prune,
        m=_positive(origin, f"{key}.m", raw["m"]), k=_positive(origin, f"{key}.k", raw["k"]),
        n=_positive(origin, f"{key}.n", raw["n"]),
        input=None if raw.get("input") is None else _positive(origin, f"{key}.input",
                                                               raw["input"]),
        count=_positive(origin, f"{key}.count", raw.get("count", 1)),
        weights=_weights(origin, f"{key}.weights", base, raw.get("weights") or {}),
    )


def parse_manifest(data: Any, origin: str, base: Path | None = None) -> Manifest:
    """Validate a manifest already read from YAML; weight paths are relative to ``base``."""
    if not isinstance(data, dict):
        raise ManifestError(origin, "a manifest must be a YAML mapping")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ManifestError(origin, f"unknown key (expected: {', '.join(sorted(_TOP_KEYS))})",
                            str(sorted(unknown, key=str)[0]))
    for key in ("name", "source", "layers"):
        if key not in data:
            raise ManifestError(origin, "missing required key", key)
    if not isinstance(data["source"], str) or not data["source"].strip():
        raise ManifestError(origin, "say how the layer shapes were derived", "source")
    raw_layers = data["layers"]
    if not isinstance(raw_layers, list) or not raw_layers:
        raise ManifestError(origin, "expected a non-empty list of layers", "layers")
    layers = tuple(_layer(origin, base or Path("."), i, raw) for i, raw in enumerate(raw_layers))
    names = [layer.name for layer in layers]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ManifestError(origin, "layer names must be unique", f"layers.{duplicate}")
    return Manifest(str(data["name"]), origin, str(data.get("description", "")),
                    data["source"], layers)


def _bundled() -> dict[str, Any]:
    folder = resources.files("sparsroof.whatif") / "networks"
    return {p.name[: -len(".yaml")]: p for p in folder.iterdir() if p.name.endswith(".yaml")}


def bundled_models() -> list[str]:
    """Names of the bundled manifests."""
    return sorted(_bundled())


def _read(text: str, origin: str) -> Any:
    return load_yaml(text, lambda problem: ManifestError(origin, problem))[0]


def load_manifest(name_or_path: str | Path) -> Manifest:
    """A bundled manifest by name ("resnet50", "swin-tiny" or "swin_tiny"), or a YAML file."""
    text = str(name_or_path)
    if not text.strip():  # the current folder, as a path: never what was meant
        raise UnknownManifestError(repr(text), "no model of that name: give a bundled name "
                                               f"({', '.join(sorted(_bundled()))}) or a "
                                               "manifest .yaml path")
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or os.path.exists(path):  # never raises
        content = read_text(path, lambda problem: ManifestError(text, problem),
                            limit=MAX_CONFIG_BYTES)
        return parse_manifest(_read(content, text), text, path.resolve().parent)
    files = _bundled()
    key = text.lower().replace("-", "_")
    if key not in files:
        close = closest(key, sorted(files))
        hint = (f"did you mean {close!r}?" if close else
                f"bundled: {', '.join(sorted(files))}; or give a manifest .yaml path")
        raise UnknownManifestError(text, f"no bundled model of that name ({hint})")
    origin = f"{key}.yaml (bundled)"
    return parse_manifest(_read(files[key].read_text(encoding="utf-8"), origin), origin)
