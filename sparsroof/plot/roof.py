"""The roofline figure: attainable FLOP/s against arithmetic intensity, log-log.

Ceilings follow the roofline model (Williams, Waterman and Patterson) as used for sparse
kernels in *The Sparsity Roofline*: one diagonal β·AI per memory level of the spec and one
horizontal P per compute unit at the plotted precision, each labelled with its value. The
roof that bounded the points (their unit and memory level) is drawn solid and bold.

Each matrix gets one colour, each (format, reuse model) one marker; the widths d of one
series are joined as a trajectory, and the band between the optimistic (compulsory) and
pessimistic (random) B-reuse models is shaded, as *Sparsity-Aware Roofline Models for
Sparse Matrix-Matrix Multiplication* brackets real runs between those two models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import FigureError
from ..hardware.spec import HwSpec
from ..units import si
from .gaps import draw_gaps, gap_handles, gap_summary
from .labels import callout_labels, place_labels
from .legends import footnote, place_legend
from .measured import MeasuredPoint
from .points import OPTIMISTIC, PESSIMISTIC, RoofPoint, common
from .spread import Spread, caption, marker_diameter_pt, spread
from .style import MARKERS, PALETTE, fill_of, log_axis, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

__all__ = ["roofline_figure", "drawable", "series", "matrix_colors", "matrix_fills",
           "matrix_handle", "model_markers", "decades", "slope_angle", "roofline_axes",
           "launch_ticks", "launch_handle", "marker_places", "place_key", "LAUNCH_STYLE"]

_ROOF: dict[str, Any] = {"color": "black", "lw": 1.8, "zorder": 2}
_CEILING: dict[str, Any] = {"color": "0.45", "lw": 0.9, "ls": (0, (5, 3)), "zorder": 1}
#: the dotted line of a launch ceiling
LAUNCH_STYLE: Any = (0, (1, 1.5))
_INSIDE_LEGEND_MAX = 8  # more matrices than this: legend outside, numbers on the points


def decades(lo: float, hi: float) -> tuple[float, float]:
    """Widen ``[lo, hi]`` to whole powers of ten.

    >>> decades(0.13, 9.7e12)
    (0.1, 10000000000000.0)
    """
    return 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi))


def drawable(points: Sequence[RoofPoint]) -> list[RoofPoint]:
    """Points a log-log roofline can show: positive intensity and performance."""
    return [p for p in points if p.intensity > 0 and p.attainable_flops > 0]


def series(points: Sequence[RoofPoint]) -> dict[tuple[str, str, str], list[RoofPoint]]:
    """Points grouped by (matrix, storage, model), each group sorted by width d."""
    groups: dict[tuple[str, str, str], list[RoofPoint]] = {}
    for p in points:
        groups.setdefault((p.matrix, p.storage, p.model), []).append(p)
    return {k: sorted(v, key=lambda p: p.width) for k, v in groups.items()}


def matrix_colors(points: Sequence[RoofPoint]) -> dict[str, str]:
    """One palette colour per matrix, in order of first appearance (cycling)."""
    names = list(dict.fromkeys(p.matrix for p in points))
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def matrix_fills(points: Sequence[RoofPoint]) -> dict[str, tuple[str, str]]:
    """(face, edge) colours per matrix: the colour cycles with the palette and the fill
    with each cycle (:func:`~sparsroof.plot.style.fill_of`), so that twenty matrices never
    share both."""
    return {name: fill_of(i, color) for i, (name, color) in
            enumerate(matrix_colors(points).items())}


def matrix_handle(face: str, edge: str, label: str) -> Any:
    """A legend entry for one matrix: a circle in its colour and fill."""
    from matplotlib.lines import Line2D

    return Line2D([], [], ls="", marker="o", ms=7, mfc=face, mec=edge, mew=1.2, label=label)


def model_markers(points: Sequence[RoofPoint]) -> dict[tuple[str, str], str]:
    """One marker per (storage, model): up/down triangles for the two bracketing models of
    the first storage, other shapes for the rest (two formats never share a shape)."""
    keys = list(dict.fromkeys((p.storage, p.model) for p in points))
    fixed = {OPTIMISTIC: "^", PESSIMISTIC: "v"}
    first = keys[0][0] if keys else ""
    # hollow circles and crosses mark measured runs (plot.gaps); eleven shapes more, then
    # they repeat (a bench of every format needs seven)
    shapes = [m for m in (*MARKERS, "p", "<", ">", "d", "H", "8")
              if m not in {*fixed.values(), "o", "X"}]
    found: dict[tuple[str, str], str] = {}
    for k in keys:
        fixed_shape = fixed.get(k[1]) if k[0] == first else None
        found[k] = fixed_shape or shapes[sum(1 for v in found.values()
                                             if v not in fixed.values()) % len(shapes)]
    return found


def short(name: str, limit: int = 30) -> str:
    """A long matrix name cut in the middle so legends stay narrow.

    >>> short("layers.0.blocks.0.attn.proj_swin_tiny_unstructured_50")
    'layers.0.blocks…nstructured_50'
    """
    if len(name) <= limit:
        return name
    tail = limit // 2 - 1
    return f"{name[:limit - tail - 1]}…{name[-tail:]}"


def _widths(widths: Sequence[int]) -> str:
    """The widths drawn, as a legend says them (the middle elided past six).

    >>> _widths([1, 4, 16, 64]), _widths([1, 2, 4, 8, 16, 32, 64, 128])
    ('1, 4, 16, 64', '1, 2, 4, …, 64, 128')
    """
    shown = [str(w) for w in widths]
    return ", ".join(shown if len(shown) <= 6 else [*shown[:3], "…", *shown[-2:]])


def _ceilings(spec: HwSpec, precision: str) -> tuple[list[tuple[str, float]],
                                                     list[tuple[str, float]]]:
    peaks = sorted(((unit, q.value) for (unit, prec), q in spec.peaks.items()
                    if prec == precision), key=lambda t: t[1])
    # a cache whose bandwidth is unpublished has no ceiling to draw
    levels = [(level.name, level.bandwidth.value) for level in spec.memory if level.bandwidth]
    return peaks, levels


def _limits(points: Sequence[RoofPoint], peaks: list[tuple[str, float]],
            levels: list[tuple[str, float]], more_perf: Sequence[float] = ()
            ) -> tuple[tuple[float, float], tuple[float, float]]:
    ai = [p.intensity for p in points if p.intensity > 0]
    perf = [f for f in [*(p.attainable_flops for p in points), *more_perf] if f > 0]
    top_peak = peaks[-1][1] if peaks else max(perf)
    bws = [bw for _, bw in levels]
    ridge_hi = top_peak / min(bws)
    xlo, xhi = decades(min([*ai, top_peak / max(bws)]) / 2, max([*ai, ridge_hi]) * 4)
    ylo, yhi = decades(min([*perf, min(bws) * xlo * 3]) / 2, top_peak * 2.5)
    return (xlo, xhi), (ylo, yhi)


def slope_angle(ax: Axes) -> float:
    """Screen angle (degrees) of a slope-1 line in log-log axes of final size and limits."""
    fig = ax.get_figure(root=True)
    assert fig is not None
    box = ax.get_position()
    width_in, height_in = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    per_decade_x = width_in / math.log10(x1 / x0)
    per_decade_y = height_in / math.log10(y1 / y0)
    return math.degrees(math.atan2(per_decade_y, per_decade_x))


def _draw_ceilings(ax: Axes, peaks: list[tuple[str, float]], levels: list[tuple[str, float]],
                   roof: tuple[str, float, str, float], precision: str) -> None:
    (xlo, xhi), (ylo, _) = ax.get_xlim(), ax.get_ylim()
    top = peaks[-1][1]
    angle = slope_angle(ax)
    sharing: dict[float, list[str]] = {}  # levels of one bandwidth share a line and a label
    for name, bw in levels:
        sharing.setdefault(bw, []).append(name)
    for name, bw in levels:
        ax.plot([xlo, top / bw], [bw * xlo, top], gid=f"ceiling|memory|{name}", **_CEILING)
        if name != sharing[bw][0]:
            continue  # written once, by the first level of this bandwidth
        x = max(xlo * 1.6, ylo * 2.0 / bw)
        ax.annotate(f"{', '.join(sharing[bw])} {si(bw, 'B/s')}", (x, bw * x), xytext=(0, 3),
                    textcoords="offset points", rotation=angle, rotation_mode="anchor",
                    fontsize=7.5, color="0.25", ha="left", va="bottom")
    fastest = max(bw for _, bw in levels)
    for unit, peak in peaks:
        ax.plot([peak / fastest, xhi], [peak, peak], gid=f"ceiling|compute|{unit}", **_CEILING)
        ax.annotate(f"{unit} {precision} {si(peak, 'FLOP/s')}", (xhi, peak), xytext=(-4, 2),
                    textcoords="offset points", fontsize=7.5, color="0.25", ha="right",
                    va="bottom")
    unit, peak, level, bw = roof
    ridge = peak / bw
    ax.plot([xlo, ridge, xhi], [bw * xlo, peak, peak], gid="roof", **_ROOF)
    # on a white ground: the dashed roofs of slower levels often cross it
    ax.annotate(f"ridge {ridge:.3g} FLOP/B ({unit} {precision}, {level})", (ridge, peak),
                xytext=(4, -4), textcoords="offset points", fontsize=7, color="0.25",
                ha="left", va="top", zorder=4,
                bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none",
                      "alpha": 0.85})


def _draw_band(ax: Axes, group: dict[str, list[RoofPoint]], color: str, gid: str,
               lw: float, at: Place) -> None:
    """Shade from the optimistic to the pessimistic trajectory (a stroke for one width)."""
    from matplotlib.patches import Polygon

    opt = {p.width: p for p in group.get(OPTIMISTIC, [])}
    pes = {p.width: p for p in group.get(PESSIMISTIC, [])}
    widths = sorted(set(opt) & set(pes))
    if not widths:
        return
    corners = [at[place_key(opt[w])] for w in widths]
    corners += [at[place_key(pes[w])] for w in reversed(widths)]
    ax.add_patch(Polygon(corners, closed=True, facecolor=color, edgecolor=color, alpha=0.2,
                         lw=lw, joinstyle="round", capstyle="round", zorder=1.5, gid=gid))


#: where each marker is drawn, by :func:`place_key`
Place = dict[tuple[Any, ...], tuple[float, float]]
_POINT_SIZE = 28.0  # marker area (points²) of a modelled kernel
_RUN_SIZE = 30.0  # and of a measured run (plot.gaps)


def place_key(p: RoofPoint) -> tuple[Any, ...]:
    """What makes a marker: its series (matrix, format, model), width and place. Two
    points with one key are one marker (a bound read twice, e.g. with its measured run)."""
    return (p.matrix, p.storage, p.model, p.width, p.intensity, p.attainable_flops)


def marker_places(ax: Axes, points: Sequence[RoofPoint],
                  runs: Sequence[MeasuredPoint] = ()) -> tuple[Place, list[tuple[float, float]],
                                                               Spread]:
    """Where to draw each marker: the points' (by :func:`place_key`) and the runs' (in
    order), set apart where they would hide one another (:func:`~.spread.spread`)."""
    keys = list(dict.fromkeys(place_key(p) for p in points))
    xy = [(k[4], k[5]) for k in keys] + [(m.bound.intensity, m.measured_flops) for m in runs]
    sizes = ([marker_diameter_pt(_POINT_SIZE)] * len(keys)
             + [marker_diameter_pt(_RUN_SIZE)] * len(runs))
    s = spread(ax, xy, sizes)
    return dict(zip(keys, s.xy[:len(keys)], strict=True)), s.xy[len(keys):], s


def _draw_points(ax: Axes, points: Sequence[RoofPoint], at: Place
                 ) -> list[tuple[str, RoofPoint]]:
    """Markers (drawn where ``at`` puts them), trajectories and bands; returns (matrix,
    anchor point) for labels."""
    colors, markers = matrix_colors(points), model_markers(points)
    fills = matrix_fills(points)
    groups = series(points)
    bands: dict[tuple[str, str], dict[str, list[RoofPoint]]] = {}
    for (matrix, storage, model), group in groups.items():
        bands.setdefault((matrix, storage), {})[model] = group
        shown = list(dict.fromkeys(at[place_key(p)] for p in group))
        xs, ys = [x for x, _ in shown], [y for _, y in shown]
        color = colors[matrix]
        if len(shown) > 1:
            ax.plot(xs, ys, color=color, lw=0.9, alpha=0.8, zorder=2.5,
                    gid=f"trajectory|{matrix}|{storage}|{model}")
        face, edge = fills[matrix]
        ax.scatter(xs, ys, marker=markers[(storage, model)], s=_POINT_SIZE, facecolors=face,
                   edgecolors=edge, linewidths=0.5 if edge == "white" else 0.9, zorder=3,
                   gid=f"points|{matrix}|{storage}|{model}")
    for (matrix, storage), by_model in bands.items():
        _draw_band(ax, by_model, colors[matrix], f"band|{matrix}|{storage}",
                   lw=7 if len(colors) <= 4 else 3, at=at)
    anchors = []
    for matrix in colors:
        mine = [p for p in points if p.matrix == matrix]
        best = max(mine, key=lambda p: (p.model == OPTIMISTIC, p.width, p.intensity))
        anchors.append((matrix, best))
    return anchors


#: one launch ceiling: (gid suffix, F / t_launch, lowest and highest intensity, colour)
Tick = tuple[str, float, float, float, str]


def launch_ticks(ax: Axes, ticks: Sequence[Tick], top: float, reach: float = 1.6) -> int:
    """The launch-overhead ceiling of each kernel on the classic roofline, after
    *Time-Based Roofline for Deep Learning Performance Analysis*: no kernel runs faster
    than its launch, so it attains at most F / t_launch. That rate depends on the work F,
    not on the intensity, so each kernel gets a short horizontal dotted tick in its colour
    across its points and ``reach`` times further each way (gid ``launch|`` and the
    tick's name), drawn where it is below ``top``, the highest compute peak (where it can
    bind). Returns how many were drawn."""
    drawn = 0
    for name, ceiling, lo, hi, color in ticks:
        if not 0 < ceiling < top:
            continue
        ax.plot([lo / reach, hi * reach], [ceiling, ceiling], color=color, lw=1.0, alpha=0.8,
                ls=LAUNCH_STYLE, zorder=2.2, gid=f"launch|{name}")
        drawn += 1
    return drawn


def launch_handle(label: str) -> Line2D:
    """The legend entry of :func:`launch_ticks`."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color="0.35", lw=1.0, ls=LAUNCH_STYLE, label=label)


def _draw_launch(ax: Axes, points: Sequence[RoofPoint], launch: float, top: float) -> int:
    """A launch ceiling per (matrix, width), F / ``launch``: :func:`launch_ticks`."""
    colors = matrix_colors(points)
    kernels: dict[tuple[str, int], list[RoofPoint]] = {}
    for p in points:
        kernels.setdefault((p.matrix, p.width), []).append(p)
    return launch_ticks(ax, [(f"{matrix}|{width}", mine[0].flops_useful / launch,
                              min(p.intensity for p in mine), max(p.intensity for p in mine),
                              colors[matrix]) for (matrix, width), mine in kernels.items()],
                        top)


def _legends(ax: Axes, points: Sequence[RoofPoint], numbered: bool,
             extra: Sequence[Line2D] = ()) -> None:
    """The matrix legend (upper left, or outside with numbers) and the format legend
    (lower right), each moved where it covers nothing drawn (:mod:`.placement`)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    markers = model_markers(points)
    handles: list[Line2D | Patch] = [
        Line2D([], [], ls="", marker=m, color="0.35", label=f"{storage} · {model}")
        for (storage, model), m in markers.items()]
    models = {p.model for p in points}
    if {OPTIMISTIC, PESSIMISTIC} <= models:
        handles.append(Patch(color="0.35", alpha=0.25, label=f"{OPTIMISTIC}–{PESSIMISTIC} band"))
    widths = sorted({p.width for p in points})
    if len(widths) > 1:
        handles.append(Line2D([], [], color="0.35", lw=0.9, label=f"d = {_widths(widths)} joined"))
    handles += extra
    entries = [matrix_handle(face, edge, f"{i}  {short(name)}" if numbered else short(name))
               for i, (name, (face, edge)) in enumerate(matrix_fills(points).items(), 1)]
    if numbered:
        ncol = math.ceil(len(entries) / 26)
        ax.legend(handles=entries, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  ncol=ncol, frameon=False, handlelength=1.0, columnspacing=1.0,
                  title="matrix", title_fontsize=7.5, borderaxespad=0.0)
    else:
        place_legend(ax, entries, main=True, fontsize=7.5, framealpha=0.9, title="matrix",
                     title_fontsize=7.5,
                     where=("upper left", "lower right", "upper right", "lower left"))
    place_legend(ax, handles, fontsize=7.5, framealpha=0.9, title="format · B reuse",
                 title_fontsize=7.5,
                 where=("lower right", "lower left", "upper right", "upper left", "center right"))


def roofline_figure(points: Sequence[RoofPoint], spec: HwSpec, *, title: str | None = None,
                    size: tuple[float, float] = (8.0, 5.5), dpi: int = 150,
                    measured: Sequence[MeasuredPoint] = ()) -> Figure:
    """Build the roofline of ``points`` against every ceiling of ``spec``.

    Each marker sits at (``intensity``, ``attainable_flops``) of its point, except where
    markers would hide one another: those are set a few points apart (at most 1.5 marker
    diameters, more for a pile of many) and a footnote says how far
    (:mod:`~sparsroof.plot.spread`). The roof drawn bold is min(P, β·AI) for the points'
    unit and memory level. ``measured`` runs are drawn at (intensity, useful FLOPs /
    measured time), below their bound (drawn with the points), joined to it by a dotted
    line.
    """
    shown_runs = [m for m in measured if m.bound.intensity > 0 and m.bound.flops_useful > 0]
    points = [*points, *(m.bound for m in shown_runs)]
    if not points:
        raise FigureError("nothing to plot: no results and no measured runs")
    precision = common(points, "precision")
    peaks, levels = _ceilings(spec, precision)
    shown = drawable(points)
    if not shown:
        raise FigureError("nothing to plot: every result has zero work or zero bytes")
    hidden, points = len(points) - len(shown), shown
    first = points[0]
    roof = (first.unit, first.peak_flops, first.memory_level, first.bandwidth)
    if not peaks:
        if first.peak_flops <= 0:
            have = sorted({prec for _, prec in spec.peaks})
            raise FigureError(f"{spec.name} has no {precision} peak, so a roofline has no "
                              f"compute roof to draw; plot a precision it has "
                              f"({', '.join(have)}), e.g. {{opt:dtype={have[0]}}}")
        peaks = [(first.unit, first.peak_flops)]
    n_matrices = len({p.matrix for p in points})
    numbered = n_matrices > _INSIDE_LEGEND_MAX
    fig = new_figure(size, dpi)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.1, top=0.88 if shown_runs else 0.91)
    roofline_axes(ax, _limits(points, peaks, levels, [m.measured_flops for m in shown_runs]),
                  "attainable performance")
    kernel = "/".join(sorted({p.kernel for p in points}))
    ax.set_title(title or f"Roofline: {spec.device}, {precision} ({kernel})", fontsize=10)
    _draw_ceilings(ax, peaks, levels, roof, precision)
    at, runs_at, moved = marker_places(ax, points, shown_runs)
    anchors = _draw_points(ax, points, at)
    launch = spec.launch_overhead.value if spec.launch_overhead else None
    extra = list(gap_handles(shown_runs)) if shown_runs else []
    if launch and _draw_launch(ax, points, launch, peaks[-1][1]):
        extra.append(launch_handle(f"launch ceiling F / {si(launch, 's')}"))
    if shown_runs:
        run_place = dict(zip(map(id, shown_runs), runs_at, strict=True))
        draw_gaps(ax, shown_runs, matrix_colors(points), lambda m: at[place_key(m.bound)],
                  lambda m: run_place[id(m)], "roofline")
        ax.set_title(f"{ax.get_title()}\n{gap_summary(shown_runs)}", fontsize=9.5)
    _label(ax, points, anchors, numbered, at)
    _legends(ax, points, numbered, extra)
    if hidden:
        ax.text(0.01, 0.01, f"{hidden} result(s) with no work not shown", fontsize=7,
                color="0.3", transform=ax.transAxes)
    footnote(ax, caption(moved))
    return fig


def _label(ax: Axes, points: Sequence[RoofPoint], anchors: list[tuple[str, RoofPoint]],
           numbered: bool, at: Place) -> None:
    """Numbers beside each matrix when the legend is outside; widths d for one matrix."""
    colors = matrix_colors(points)
    avoid = list(at.values())
    if numbered:
        spots = [at[place_key(a)] for _, a in anchors]
        callout_labels(ax, [x for x, _ in spots], [y for _, y in spots],
                       [str(i) for i in range(1, len(anchors) + 1)],
                       [colors[m] for m, _ in anchors], angle=slope_angle(ax))
    elif len(colors) == 1 and len({p.width for p in points}) > 1:
        top = list({place_key(p): p for p in points
                    if p.model == anchors[0][1].model}.values())
        spots = [at[place_key(p)] for p in top]
        place_labels(ax, [x for x, _ in spots], [y for _, y in spots],
                     [f"d={p.width}" for p in top], ["0.3"] * len(top), fontsize=6.5,
                     avoid=avoid)


def roofline_axes(ax: Any, limits: tuple[tuple[float, float], tuple[float, float]],
                  ylabel: str) -> None:
    """Log-log roofline axes: intensity against FLOP/s within ``limits`` (x, y), grid and
    labels, as every roofline figure draws them."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*limits[0])
    ax.set_ylim(*limits[1])
    log_axis(ax.xaxis, "")
    log_axis(ax.yaxis, "FLOP/s")
    ax.grid(True, which="major", color="0.9", lw=0.6, zorder=0)
    ax.set_xlabel("arithmetic intensity (useful FLOP per byte)")
    ax.set_ylabel(ylabel)
