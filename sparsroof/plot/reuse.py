"""The sparsity-aware roofline of a matrix: where each B-reuse model puts its kernel.

After *Sparsity-Aware Roofline Models for Sparse Matrix-Matrix Multiplication* (Qian et
al.), §III and Fig. 2: only the bandwidth-bound region of the roofline is drawn, and each
reuse model's arithmetic intensity for the matrix is a vertical line that ends at the
roof, at the most the model lets the kernel attain (the bound's attainable FLOP/s,
min(P, β·AI) when one memory level carries all the traffic). One panel per matrix, one
line per (model, width d), each model in its colour; lines that coincide are drawn
striped in the colours of all their models. Measured runs sit on the line of one model
(by default the matrix's class model, where the paper puts them) at the FLOP/s they
reached, one marker per implementation; a run above the top of its line beat that
model's bound and is crossed in red. A line whose bound is the launch overhead ends below
every roof, at F / t_launch; the panel counts such lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import FigureError, OptionError
from ..hardware.spec import HwSpec
from ..model.traffic import MODELS
from ..units import si
from .gaps import VIOLATION_COLOR
from .labels import place_labels
from .measured import MeasuredPoint
from .points import OPTIMISTIC, RoofPoint, common
from .roof import drawable, short
from .style import MARKERS, PALETTE, log_axis, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["reuse_figure", "reuse_storage", "model_colors", "roof_levels", "RunOnLine",
           "runs_on_lines", "CLASS"]

#: ``at`` value that puts each run on its matrix's class model
CLASS = "class"
_SAME = 0.005  # lines closer than this (relative) in x and in y are drawn as one, striped
_DASH = 3.0  # points per stripe


#: each model's palette colour, fixed so that a model keeps it from figure to figure; the
#: yellow, hardest to read, goes to the model closest to another (scale-free)
_MODEL_COLORS = dict(zip(("compulsory", "random", "banded", "blocked", "scale-free",
                          "cache-aware", "scale-free-measured"), PALETTE, strict=True))


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """One palette colour per model (a model without a fixed colour takes a free one).

    >>> model_colors(["random", "compulsory"])
    {'random': '#D55E00', 'compulsory': '#0072B2'}
    """
    free = iter([c for c in PALETTE if c not in {_MODEL_COLORS.get(m) for m in models}])
    return {m: _MODEL_COLORS.get(m) or next(free, "0.4") for m in models}


@dataclass(frozen=True)
class RunOnLine:
    """A measured run placed on the line of one model: x is that model's intensity."""

    run: MeasuredPoint
    line: RoofPoint

    @property
    def flops(self) -> float:
        """The useful FLOP/s the run reached (its y)."""
        return self.run.measured_flops

    @property
    def above(self) -> bool:
        """The run beat the bound of the model it is drawn on."""
        return self.flops > self.line.attainable_flops

    @property
    def label(self) -> str:
        """What tells runs apart: the implementation, else the format."""
        return self.run.implementation or self.run.bound.storage


def _class_model(lines: Sequence[RoofPoint]) -> str:
    roles = {p.role: p.model for p in lines}
    return roles.get(CLASS) or roles.get("optimistic") or OPTIMISTIC


def runs_on_lines(lines: Sequence[RoofPoint], measured: Sequence[MeasuredPoint],
                  at: str = CLASS) -> list[RunOnLine]:
    """Each run on the line of model ``at`` (``class``: its matrix's class model) of its
    matrix, kernel and width. A run the results hold no such line for is an error."""
    by_key = {(p.matrix, p.kernel, p.width, p.model): p for p in lines}
    out = []
    for m in measured:
        mine = [p for p in lines if p.matrix == m.bound.matrix]
        model = _class_model(mine) if at == CLASS else at
        b = m.bound
        line = by_key.get((b.matrix, b.kernel, b.width, model))
        if line is None:
            raise FigureError(f"{m.source}: the results hold no {model} line for "
                              f"{b.matrix} at d={b.width} ({b.kernel}; analyze that matrix "
                              "with that kernel and width and --model all)")
        out.append(RunOnLine(m, line))
    return out


def _close(a: float, b: float) -> bool:
    """Two rates within a factor of 1 + _SAME (zero only of zero: an empty kernel)."""
    if a <= 0 or b <= 0:
        return a == b
    return abs(math.log(a / b)) < _SAME


def _groups(lines: Sequence[RoofPoint]) -> list[list[RoofPoint]]:
    """Lines that would be drawn on top of each other, in model order within a group."""
    order = {m: i for i, m in enumerate(MODELS)}
    groups: list[list[RoofPoint]] = []
    for p in sorted(lines, key=lambda p: (p.intensity, order.get(p.model, 99))):
        g = groups[-1] if groups else None
        if (g and p.intensity <= g[0].intensity * (1 + _SAME)
                and _close(p.attainable_flops, g[0].attainable_flops)):
            g.append(p)
        else:
            groups.append([p])
    return groups


def roof_levels(lines: Sequence[RoofPoint], spec: HwSpec) -> dict[str, tuple[float, bool]]:
    """Memory level -> (bandwidth, bounds a line): every level a line's bytes were charged
    at (a launch- or compute-bound line's too: its level is still the roof above it), and
    main memory in any case."""
    levels: dict[str, tuple[float, bool]] = {}
    for p in lines:
        _, used = levels.get(p.memory_level, (0.0, False))
        levels[p.memory_level] = (p.bandwidth, used or p.bound == "memory")
    if spec.dram.bandwidth and spec.dram.name not in levels:
        levels[spec.dram.name] = (spec.dram.bandwidth.value, False)
    return levels


def _roofs(ax: Axes, lines: Sequence[RoofPoint], spec: HwSpec, used: dict[str, bool]
           ) -> None:
    """Each level of :func:`roof_levels` as min(P, β·AI) over the panel, in one style in
    every panel, as the legend names it: solid where it bounds a line of some panel,
    dashed where it bounds none."""
    xlo, xhi = ax.get_xlim()
    peak = max(p.peak_flops for p in lines)
    for level, (bw, _) in roof_levels(lines, spec).items():
        ridge = peak / bw if peak > 0 else math.inf
        xs = [xlo, ridge, xhi] if xlo < ridge < xhi else [xlo, xhi]
        ys = [min(peak, bw * x) if peak > 0 else bw * x for x in xs]
        ax.plot(xs, ys, zorder=2, gid=f"roof|{level}", **_roof_style(used[level]))


def _roof_style(used: bool) -> dict[str, Any]:
    return ({"color": "black", "lw": 1.6} if used
            else {"color": "0.45", "lw": 0.9, "ls": (0, (5, 3))})


def _lines(ax: Axes, lines: Sequence[RoofPoint], colors: dict[str, str], bottom: float
           ) -> None:
    """One vertical line per (model, width) from the bottom to its top; coinciding lines
    striped so that each model's colour shows, and a dot at each top."""
    for group in _groups(lines):
        k = len(group)
        for i, p in enumerate(group):
            dashes: dict[str, Any] = ({} if k == 1 else
                                      {"ls": (i * _DASH, (_DASH, _DASH * (k - 1)))})
            ax.plot([p.intensity, p.intensity], [bottom, p.attainable_flops],
                    color=colors[p.model], lw=1.6, zorder=2.5, solid_capstyle="butt",
                    gid=f"reuse|{p.matrix}|{p.model}|{p.width}", **dashes)
        top = group[0]
        ax.scatter([top.intensity], [top.attainable_flops], s=14, color=colors[top.model],
                   edgecolors="black", linewidths=0.5, zorder=3.5,
                   gid=f"top|{top.matrix}|{top.width}|{'+'.join(p.model for p in group)}")


def _tag(group: Sequence[RoofPoint], every: int) -> str:
    """The tag of a top: its widths, and "all N models" where every model meets there.

    >>> from dataclasses import replace
    >>> p = RoofPoint("a", "spmm", 4, "csr", "random", "simt", "fp64", 0.1, 1e10, 8.0,
    ...               8.0, 80.0, 0.0, 1e-9, 0.0, 1e-9, "memory", "DRAM", 1e12, 1e11)
    >>> _tag([p, replace(p, model="banded")], 2), _tag([p, replace(p, width=16)], 2)
    ('d=4: all 2 models', 'd=4, 16')
    """
    widths = sorted({p.width for p in group})
    text = "d=" + ", ".join(str(w) for w in widths)
    return text + (f": all {every} models" if len(widths) == 1 and len(group) == every > 1
                   else "")


def _label(ax: Axes, lines: Sequence[RoofPoint], runs: Sequence[RunOnLine]) -> None:
    """Each top tagged with its width d, where there is room (the colour says the model);
    where every model of the panel meets at one top, the tag says so."""
    groups = sorted(_groups(lines), key=lambda g: -g[0].width)
    every = len({p.model for p in lines})
    texts = [_tag(g, every) for g in groups]
    place_labels(ax, [g[0].intensity for g in groups], [g[0].attainable_flops for g in groups],
                 texts, ["0.2"] * len(groups), fontsize=6.5,
                 avoid=[(p.intensity, p.attainable_flops) for p in lines]
                 + [(r.line.intensity, r.flops) for r in runs])


def _runs(ax: Axes, runs: Sequence[RunOnLine], markers: dict[str, str]) -> None:
    for label, marker in markers.items():
        mine = [r for r in runs if r.label == label]
        if mine:
            ax.scatter([r.line.intensity for r in mine], [r.flops for r in mine],
                       marker=marker, s=30, facecolors="white", edgecolors="black",
                       linewidths=1.0, zorder=4, gid=f"measured|{mine[0].line.matrix}|{label}")
    above = [r for r in runs if r.above]
    if above:
        ax.scatter([r.line.intensity for r in above], [r.flops for r in above], marker="x",
                   s=44, color=VIOLATION_COLOR, linewidths=1.4, zorder=4.5,
                   gid=f"above|{above[0].line.matrix}")


def _limits(lines: Sequence[RoofPoint], runs: Sequence[RunOnLine]
            ) -> tuple[tuple[float, float], tuple[float, float]]:
    xs = [p.intensity for p in lines]
    ys = [p.attainable_flops for p in lines] + [r.flops for r in runs]
    return (min(xs) / 1.5, max(xs) * 1.5), (min(ys) / 6, max(ys) * 3)


def _axes(ax: Axes, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    log_axis(ax.yaxis, "FLOP/s")
    # the bandwidth-bound region spans about a decade of intensity: 1-2-5 ticks
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="0.92", lw=0.5, zorder=0)


def _panel(ax: Axes, lines: Sequence[RoofPoint], runs: Sequence[RunOnLine], spec: HwSpec,
           colors: dict[str, str], markers: dict[str, str], used: dict[str, bool]) -> None:
    xlim, ylim = _limits(lines, runs)
    _axes(ax, xlim, ylim)
    _roofs(ax, lines, spec, used)
    _lines(ax, lines, colors, ylim[0])
    _runs(ax, runs, markers)
    _label(ax, lines, runs)
    ax.set_title(f"{short(lines[0].matrix)} (class model: {_class_model(lines)})",
                 fontsize=8.5)
    launched = sum(p.bound == "launch" for p in lines)
    if launched:  # such a top is F / t_launch, below every roof
        ax.text(0.01, 0.99, f"{launched} of {len(lines)} tops: launch overhead", fontsize=6.5,
                color="0.3", ha="left", va="top", transform=ax.transAxes, gid="launch-note")


def _legend(fig: Figure, roofs: dict[str, tuple[float, bool]], colors: dict[str, str],
            markers: dict[str, str], above: bool) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], label=f"roof: {level} {si(bw, 'B/s')}", **_roof_style(used))
               for level, (bw, used) in roofs.items()]
    handles += [Line2D([], [], color=c, lw=1.8, label=m) for m, c in colors.items()]
    handles += [Line2D([], [], ls="", marker=mk, mfc="white", mec="black", label=label)
                for label, mk in markers.items()]
    if above:
        handles.append(Line2D([], [], ls="", marker="x", color=VIOLATION_COLOR,
                              label="above its model's bound"))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(handles), 6), fontsize=7, frameon=False, handlelength=1.6,
               columnspacing=1.2)


def reuse_storage(points: Sequence[RoofPoint], storage: str | None = None) -> str:
    """The storage format the reuse figure of ``points`` draws: ``storage``, else the
    first of the drawable results; an error where the results hold none of it."""
    lines = drawable(points)
    if not lines:
        raise FigureError("nothing to plot: no result with work and bytes")
    storage = storage or lines[0].storage
    if not any(p.storage == storage for p in lines):
        have = ", ".join(sorted({p.storage for p in points}))
        raise FigureError(f"the results hold no {storage} rows (they hold: {have})")
    return storage


#: the least width and height of one panel (its axis labels and tags still apart)
PANEL_SIZE = (3.5, 3.0)


def reuse_figure(points: Sequence[RoofPoint], spec: HwSpec, *,
                 measured: Sequence[MeasuredPoint] = (), at: str = CLASS,
                 storage: str | None = None, title: str | None = None,
                 size: tuple[float, float] | None = None, dpi: int = 150) -> Figure:
    """Build one panel per matrix of ``points``, one vertical line per (model, width);
    ``size`` by default 9x5 inches, taller as the panels need.

    Each line stands at x = the model's ``intensity`` and ends at y = its
    ``attainable_flops``; each run of ``measured`` stands on the line of model ``at`` for
    its matrix and width, at y = its useful FLOPs over its measured time. ``storage``
    picks the format drawn (default: the first of the results).
    """
    storage = reuse_storage(points, storage)
    lines = [p for p in drawable(points) if p.storage == storage]
    precision = common(lines, "precision")
    unit = common(lines, "unit")
    runs = runs_on_lines(lines, [m for m in measured if m.bound.storage == storage
                                 and m.measured_s > 0], at)
    matrices = list(dict.fromkeys(p.matrix for p in lines))
    colors = model_colors(list(dict.fromkeys(p.model for p in lines)))
    labels = list(dict.fromkeys(r.label for r in runs))
    markers = {label: MARKERS[i % len(MARKERS)] for i, label in enumerate(labels)}
    ncols = 1 if len(matrices) == 1 else 2 if len(matrices) <= 4 else 3
    nrows = math.ceil(len(matrices) / ncols)
    need = (PANEL_SIZE[0] * ncols, PANEL_SIZE[1] * nrows + 1.5)  # titles and legend below
    if size is None:  # the default grows to hold every panel
        size = (max(9.0, need[0]), max(5.0, need[1]))
    if size[0] < need[0] or size[1] < need[1]:
        raise OptionError(f"{{opt:size}} {size[0]:g}x{size[1]:g}: {len(matrices)} panels of "
                          f"{ncols} per row need at least {need[0]:g}x{need[1]:g} inches")
    fig = new_figure(size, dpi)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    # room below for the legend; labels are placed in pixels, so the boxes are final first
    fig.subplots_adjust(left=0.1, right=0.98, top=0.86, bottom=0.2, wspace=0.3, hspace=0.45)
    roofs: dict[str, tuple[float, bool]] = {}
    for matrix in matrices:
        for level, (bw, used) in roof_levels([p for p in lines if p.matrix == matrix],
                                             spec).items():
            roofs[level] = (bw, used or roofs.get(level, (bw, False))[1])
    styled = {level: used for level, (_, used) in roofs.items()}
    for ax, matrix in zip(axes, matrices, strict=False):
        _panel(ax, [p for p in lines if p.matrix == matrix],
               [r for r in runs if r.line.matrix == matrix], spec, colors, markers, styled)
    for ax in axes[len(matrices):]:
        ax.set_visible(False)
    for ax in axes[(nrows - 1) * ncols:]:
        ax.set_xlabel("arithmetic intensity (useful FLOP per byte)", fontsize=8)
    for ax in axes[::ncols]:
        ax.set_ylabel("attainable performance", fontsize=8)
    widths = ", ".join(str(w) for w in sorted({p.width for p in lines}))
    fig.suptitle(title or f"Sparsity-aware roofline: {spec.device}\n{storage} {unit} "
                 f"{precision}, d = {widths}", fontsize=10)
    _legend(fig, roofs, colors, markers, any(r.above for r in runs))
    return fig
