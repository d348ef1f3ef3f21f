"""The roofline of a pruned network's layers: every layer's sparse kernel beside its dense
GEMM, from the JSON of ``sparsroof whatif --output json``.

After *The Sparsity Roofline: Understanding the Hardware Limits of Sparse Neural
Networks*, Figures 1 and 6: each weight GEMM of a model is one point at (useful FLOPs /
bytes, attainable FLOP/s). Pruning removes FLOPs faster than bytes (the input and output
features stay), so the sparse kernels sit left of their dense GEMMs, at lower intensity,
and lower on the memory roof. The roofs drawn are the ones that bounded the points: one
per compute unit at the peak the study charged it (the sparse tensor cores at half their
quoted dense-equivalent rate), each meeting the memory level's diagonal.

Dense GEMMs are hollow black circles (drawn once: they do not depend on the pattern);
sparse kernels are filled, one colour per pattern and one marker per sparsity level.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..units import si
from ..userfile import finite_numbers, read_json
from .roof import decades, launch_handle, launch_ticks, roofline_axes
from .style import MARKERS, PALETTE, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["LayerPoint", "read_whatif_layers", "whatif_document", "layer_roofline_figure",
           "shift_summary", "plot_whatif_layers"]

#: line style of each compute unit's roof: CUDA cores solid and tensor cores dashed, as
#: the paper draws them
_UNIT_STYLE: dict[str, Any] = {"simt": "-", "tensor": (0, (6, 3)),
                               "tensor-sparse": (0, (2, 2))}


@dataclass(frozen=True)
class LayerPoint:
    """One layer's kernel (dense GEMM or pruned SpMM) on the roofline plane (SI units)."""

    model: str
    pattern: str  # "dense" for the dense GEMM
    sparsity: float  # 0 for the dense GEMM
    layer: str
    unit: str
    precision: str
    flops_useful: float
    bytes_total: float
    attainable_flops: float
    peak_flops: float
    memory_level: str
    bandwidth: float
    launch_s: float = 0.0  # the launch term of its bound (0: none, or an older document)

    @property
    def launch_bound(self) -> bool:
        """Whether the launch sets the point: it attains F / t_launch, under its roof."""
        return self.launch_s > 0 and \
            self.flops_useful / self.launch_s <= self.attainable_flops * (1 + 1e-9)

    @property
    def intensity(self) -> float:
        """Useful FLOP per byte, as the study computed both."""
        return self.flops_useful / self.bytes_total if self.bytes_total else 0.0

    @property
    def dense(self) -> bool:
        return self.pattern == "dense"


def whatif_document(path: str | Path) -> dict[str, Any] | None:
    """The document at ``path`` when it is the JSON of ``sparsroof whatif``, else None."""
    if Path(path).suffix.lower() != ".json":
        return None
    source = str(path)
    doc = read_json(path, lambda problem: FigureError(f"{source}: {problem}"))
    return doc if isinstance(doc, dict) and doc.get("kind") == "whatif" else None


def _kernel(source: str, where: str, raw: Any, key: str) -> tuple[dict[str, Any],
                                                                  dict[str, Any]]:
    part = raw.get(key) if isinstance(raw, dict) else None
    traffic = part.get("traffic") if isinstance(part, dict) else None
    bound = part.get("bound") if isinstance(part, dict) else None
    if not isinstance(traffic, dict) or not isinstance(bound, dict):
        raise FigureError(f"{source}: {where}: no {key} traffic and bound (write the study "
                          "with 'sparsroof whatif --output json')")
    return traffic, bound


def _fail(source: str) -> Callable[[str], FigureError]:
    return lambda problem: FigureError(f"{source}: {problem}")


def _text(source: str, where: str, record: dict[str, Any], key: str) -> str:
    if record.get(key) in (None, ""):
        raise FigureError(f"{source}: {where}: missing field {key!r}")
    return str(record[key])


def _layer_point(source: str, where: str, model: str, pattern: str, sparsity: float,
                 layer: str, raw: Any, key: str) -> LayerPoint:
    """The ``key`` ("dense" or "sparse") kernel of the layer result at ``where``, every
    number checked: finite and not negative, the roof's peak and bandwidth positive."""
    traffic, bound = _kernel(source, where, raw, key)
    t = finite_numbers(traffic, ("flops_useful", "bytes_a", "bytes_b", "bytes_c"),
                       _fail(source), where=f"{where}.{key}.traffic", minimum=0)
    at = f"{where}.{key}.bound"
    b = finite_numbers(bound, ("attainable_flops", "peak_flops", "bandwidth"), _fail(source),
                       where=at, minimum=0)
    for name in ("peak_flops", "bandwidth"):
        if not b[name] > 0:
            raise FigureError(f"{source}: {at}: field {name!r} is 0, expected a positive "
                              "number")
    return LayerPoint(
        model=model, pattern=pattern, sparsity=sparsity, layer=layer,
        unit=_text(source, at, bound, "unit"), precision=_text(source, at, bound, "precision"),
        flops_useful=t["flops_useful"], bytes_total=t["bytes_a"] + t["bytes_b"] + t["bytes_c"],
        attainable_flops=b["attainable_flops"], peak_flops=b["peak_flops"],
        memory_level=_text(source, at, bound, "memory_level"), bandwidth=b["bandwidth"],
        launch_s=finite_numbers(bound, ("launch_s",), _fail(source), where=at,
                                minimum=0)["launch_s"] if "launch_s" in bound else 0.0)


def read_whatif_layers(path: str | Path, doc: dict[str, Any] | None = None
                       ) -> tuple[list[LayerPoint], str | None]:
    """Every layer's dense and sparse kernel of a whatif JSON document, and its spec name.

    Each dense GEMM appears once per (model, layer); each sparse kernel once per (model,
    pattern, sparsity, layer)."""
    source = str(path)
    doc = doc if doc is not None else whatif_document(path)
    rows = doc.get("points") if doc else None
    if not isinstance(rows, list):
        raise FigureError(f"{source}: expected the JSON of 'sparsroof whatif --output json'")
    points: list[LayerPoint] = []
    seen_dense: set[tuple[str, str]] = set()
    specs = set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("layer_results"), list):
            raise FigureError(f"{source}: points[{i}]: no layer_results (write the study "
                              "with 'sparsroof whatif --output json', not --points)")
        model, pattern = str(row.get("model", "")), str(row.get("pattern", ""))
        sparsity = finite_numbers(row, ["sparsity"], _fail(source), where=f"points[{i}]",
                                  minimum=0)["sparsity"]
        if sparsity > 1:
            raise FigureError(f"{source}: points[{i}]: sparsity {sparsity:g} is not a "
                              "fraction in [0, 1]")
        specs.add(str(row.get("spec", "")))
        for j, lr in enumerate(row["layer_results"]):
            where = f"points[{i}].layer_results[{j}]"
            layer = str(lr.get("layer", j)) if isinstance(lr, dict) else str(j)
            if (model, layer) not in seen_dense:
                seen_dense.add((model, layer))
                points.append(_layer_point(source, where, model, "dense", 0.0, layer, lr,
                                           "dense"))
            if lr.get("storage") != "dense":  # a layer kept dense has no sparse kernel
                points.append(_layer_point(source, where, model, pattern, sparsity, layer,
                                           lr, "sparse"))
    if not points:
        raise FigureError(f"{source}: no layers to plot")
    return points, (specs.pop() or None) if len(specs) == 1 else None


def _roofs(points: Sequence[LayerPoint]) -> list[tuple[str, float, str, float]]:
    """(unit, peak, memory level, bandwidth) that bounded the points, lowest peak first."""
    return sorted({(p.unit, p.peak_flops, p.memory_level, p.bandwidth) for p in points},
                  key=lambda r: (r[1], r[3]))


def _draw_roofs(ax: Axes, roofs: list[tuple[str, float, str, float]], precision: str) -> None:
    from .roof import slope_angle

    (xlo, xhi) = ax.get_xlim()
    units_at: dict[float, list[str]] = {}
    for unit, peak, level, bw in roofs:
        ridge = peak / bw
        ax.plot([xlo, ridge, xhi], [bw * xlo, peak, peak], color="black", lw=1.3,
                ls=_UNIT_STYLE.get(unit, "-"), zorder=2, gid=f"roof|{unit}|{level}")
        units_at.setdefault(peak, []).append(unit)
    for peak, units in units_at.items():  # units charged the same peak share one label
        ax.annotate(f"{', '.join(dict.fromkeys(units))} {precision} {si(peak, 'FLOP/s')}",
                    (xhi, peak), xytext=(-4, 2), textcoords="offset points", fontsize=7.5,
                    color="0.25", ha="right", va="bottom")
    angle = slope_angle(ax)
    for level, bw in sorted({(level, bw) for _, _, level, bw in roofs}):
        x = xlo * 1.6
        ax.annotate(f"{level} {si(bw, 'B/s')}", (x, bw * x), xytext=(0, 3),
                    textcoords="offset points", rotation=angle, rotation_mode="anchor",
                    fontsize=7.5, color="0.25", ha="left", va="bottom")


def _limits(points: Sequence[LayerPoint], roofs: list[tuple[str, float, str, float]]
            ) -> tuple[tuple[float, float], tuple[float, float]]:
    xs = [p.intensity for p in points]
    ys = [p.attainable_flops for p in points]
    top = max(r[1] for r in roofs)
    ridges = [r[1] / r[3] for r in roofs]
    xlim = decades(min(xs) / 2, max([*xs, *ridges]) * 3)
    return xlim, decades(min(ys) / 3, top * 2.5)


def layer_roofline_figure(points: Sequence[LayerPoint], *, title: str | None = None,
                          size: tuple[float, float] = (8.0, 5.5), dpi: int = 150) -> Figure:
    """Build the roofline of every layer's dense GEMM and sparse kernel.

    Marker offsets are exactly (``intensity``, ``attainable_flops``) of each point:
    hollow black circles for the dense GEMMs (gid ``dense``), filled markers for the
    sparse kernels of each pattern and level (gid ``sparse|PATTERN|SPARSITY``).
    """
    shown = [p for p in points if p.intensity > 0 and p.attainable_flops > 0]
    if not shown:
        raise FigureError("nothing to plot: no layer with work and bytes")
    precisions = sorted({p.precision for p in shown})
    if len(precisions) != 1:
        raise FigureError(f"the layers mix precisions {', '.join(precisions)}; plot them "
                          "separately")
    roofs = _roofs(shown)
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.1, top=0.91)
    roofline_axes(ax, _limits(shown, roofs), "attainable performance at speed of light")
    _draw_roofs(ax, roofs, precisions[0])
    _draw_layers(ax, shown)
    models = ", ".join(dict.fromkeys(p.model for p in shown))
    ax.set_title(f"{title or f'Layers of {models}, sparse vs dense'}\n{shift_summary(shown)}",
                 fontsize=9.5)
    return fig


def _draw_layers(ax: Axes, points: Sequence[LayerPoint]) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    dense = [p for p in points if p.dense]
    sparse = [p for p in points if not p.dense]
    patterns = list(dict.fromkeys(p.pattern for p in sparse))
    levels = sorted({p.sparsity for p in sparse})
    color_of = {pat: PALETTE[i % len(PALETTE)] for i, pat in enumerate(patterns)}
    # hollow circles mean dense: the sparse levels take the other shapes
    shapes = [m for m in MARKERS if m != "o"]
    marker_of = {s: shapes[i % len(shapes)] for i, s in enumerate(levels)}
    for pattern in patterns:
        for level in levels:
            mine = [p for p in sparse if p.pattern == pattern and p.sparsity == level]
            if mine:
                ax.scatter([p.intensity for p in mine], [p.attainable_flops for p in mine],
                           marker=marker_of[level], s=22, facecolors=color_of[pattern],
                           edgecolors="white", linewidths=0.4, alpha=0.85, zorder=3,
                           gid=f"sparse|{pattern}|{level:g}")
    if dense:
        ax.scatter([p.intensity for p in dense], [p.attainable_flops for p in dense],
                   marker="o", s=30, facecolors="none", edgecolors="black", linewidths=0.9,
                   zorder=4, gid="dense")
    handles: list[Line2D | Patch] = [Line2D([], [], ls="", marker="o", mfc="none", mec="black",
                                            label="dense GEMM")]
    handles += [Patch(color=c, label=f"{pat} (filled)") for pat, c in color_of.items()]
    held = [p for p in points if p.launch_bound]
    launches = sorted({p.launch_s for p in held})
    top = max(p.peak_flops for p in points)
    if launch_ticks(ax, [(f"{p.model}|{p.layer}|{p.pattern}|{p.sparsity:g}",
                          p.flops_useful / p.launch_s, p.intensity, p.intensity,
                          "black" if p.dense else color_of[p.pattern]) for p in held],
                    top * (1 + 1e-9), reach=1.3):
        handles.append(launch_handle(
            f"launch ceiling F / {', '.join(si(t, 's') for t in launches)}: holds "
            f"{len(held)} of {len(points)}"))
    kinds = ax.legend(handles=handles, title="kernel", loc="upper left", fontsize=7.5,
                      title_fontsize=7.5, framealpha=0.9)
    if levels:
        ax.legend(handles=[Line2D([], [], ls="", marker=marker_of[s], color="0.35",
                                  label=f"{100 * s:.4g} %") for s in levels],
                  title="sparsity", loc="lower right", fontsize=7.5, title_fontsize=7.5,
                  framealpha=0.9, ncol=1 if len(levels) <= 6 else 2)
        ax.add_artist(kinds)


def shift_summary(points: Sequence[LayerPoint]) -> str:
    """How far the sparse kernels moved from their dense GEMMs: the median ratio of
    intensity and of attainable FLOP/s, sparse over dense, over every sparse kernel.

    >>> d = LayerPoint("m", "dense", 0, "fc", "tensor", "fp16", 100, 10, 1e12, 1e14, "HBM", 1e11)
    >>> s = LayerPoint("m", "2:4", .5, "fc", "tensor", "fp16", 50, 10, 5e11, 1e14, "HBM", 1e11)
    >>> shift_summary([d, s])
    'sparse vs dense: intensity x0.5, attainable FLOP/s x0.5 (median of 1 kernel)'
    """
    dense = {(p.model, p.layer): p for p in points if p.dense}
    ratios = [(p.intensity / dense[(p.model, p.layer)].intensity,
               p.attainable_flops / dense[(p.model, p.layer)].attainable_flops)
              for p in points if not p.dense and (p.model, p.layer) in dense]
    if not ratios:
        return "no sparse kernel"
    ai = statistics.median(r[0] for r in ratios)
    perf = statistics.median(r[1] for r in ratios)
    n = len(ratios)
    return (f"sparse vs dense: intensity x{ai:.2g}, attainable FLOP/s x{perf:.2g} "
            f"(median of {n} kernel{'s' if n != 1 else ''})")


def plot_whatif_layers(results: str | Path, path: str | Path, *,
                       size: tuple[float, float] | None = None, dpi: int = 150,
                       doc: dict[str, Any] | None = None, spec: str | None = None) -> Path:
    """Draw the layer roofline of a saved whatif JSON document and write ``path``;
    ``spec`` (a spec's name), where given, must be the one the study was bounded on."""
    from .points import other_spec
    from .style import figure_format, save

    figure_format(path)
    points, bounded_on = read_whatif_layers(results, doc)
    if spec and bounded_on and spec != bounded_on:
        raise other_spec(str(results), bounded_on, spec)
    return save(layer_roofline_figure(points, size=size or (8.0, 5.5), dpi=dpi), path)
