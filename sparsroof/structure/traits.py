"""The traits a sparsity pattern can show, each found from the measured features alone.

Every detector looks at one :class:`~sparsroof.structure.features.Structure` and returns a
:class:`Finding` (the trait, how clearly it holds, its parameters, the features that
decided it and a one-line reason with their values) or None. A matrix may show several
traits at once (a band made of dense blocks; a graph with skewed degrees);
:func:`sparsroof.structure.classify.classify` names the first class in its order and
lists every trait found.

Graphs and pruned weights are told apart by what differs between an adjacency pattern and
a weight mask: an adjacency pattern is square, and its links come back ((i, j) with (j, i))
far more often than chance, where a weight mask's pattern symmetry is about its density;
trained weights' values are almost all distinct, where graph weights, counts and
coefficients repeat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .features import NM_PATTERNS, Structure

__all__ = ["Finding", "ramp", "dense", "nm", "banded", "block", "scale_free", "graph",
           "random", "pruned", "skewed", "dense_rows", "regular", "near_expected"]


@dataclass(frozen=True)
class Finding:
    """One trait of a pattern: name, confidence in [0, 1], parameters, evidence, reason."""

    name: str
    confidence: float
    params: dict[str, float | int] = field(default_factory=dict)
    evidence: dict[str, float | str] = field(default_factory=dict)
    reason: str = ""


def ramp(value: float, threshold: float, clear: float) -> float:
    """Confidence 0.5 at the rule's threshold rising to 1.0 at a clear-cut value.

    >>> ramp(0.5, 0.5, 1.0), ramp(0.75, 0.5, 1.0), ramp(2.0, 0.5, 1.0)
    (0.5, 0.75, 1.0)
    """
    if clear == threshold:
        return 1.0
    return round(min(1.0, max(0.5, 0.5 + 0.5 * (value - threshold) / (clear - threshold))), 3)


def dense(s: Structure) -> Finding | None:
    """Density >= 0.9."""
    if s.density < 0.9:
        return None
    return Finding("dense", ramp(s.density, 0.9, 0.99), {}, {"density": s.density},
                   f"{s.density:.0%} of all cells stored (>= 90 %)")


def nm(s: Structure) -> Finding | None:
    """N:M: every non-empty group of M columns holds at most N entries (>= 99 %) and at
    least 90 % of all groups hold exactly N; the sparsest fit, then the narrowest M."""
    fits = [(n / m, m, n) for n, m in NM_PATTERNS
            if s.cols >= 2 * m and s.nm_conformance.get(f"{n}:{m}", 0.0) >= 0.99
            and s.nm_exact.get(f"{n}:{m}", 0.0) >= 0.9]
    if not fits:
        return None
    _, m, n = min(fits)
    key = f"{n}:{m}"
    conf = min(ramp(s.nm_conformance[key], 0.99, 1.0), ramp(s.nm_exact[key], 0.9, 0.99))
    return Finding("nm", conf, {"n": n, "m": m},
                   {f"conformance {key}": s.nm_conformance[key], f"exact {key}": s.nm_exact[key]},
                   f"{s.nm_exact[key]:.0%} of all groups of {m} columns hold exactly {n} entries")


def _cells(a: int, b: int, lo: int, hi: int) -> int:
    """Σ over k in [lo, hi] of max(0, min(a, b - k)), in closed form: a for k <= b - a,
    then b - k down to 1 (an arithmetic series), then nothing.

    >>> _cells(3, 4, 0, 5) == sum(max(0, min(3, 4 - k)) for k in range(6))
    True
    """
    full = max(0, min(hi, b - a) - lo + 1)
    first, last = max(lo, b - a + 1), min(hi, b - 1)
    tail = (last - first + 1) * (2 * b - first - last) // 2 if last >= first else 0
    return full * a + tail


def near_expected(s: Structure) -> float:
    """Share of all cells within the near-diagonal half-width (what uniform placement
    gives): the cells of the diagonals j - i = d for |d| <= w, min(rows, cols - d) on
    and above the main diagonal and min(rows + d, cols) below it.

    >>> from sparsroof.structure.features import Structure
    >>> near_expected(Structure(rows=4, cols=4, stored_entries=0, numeric_nonzeros=0,
    ...     nonempty_rows=0, nonempty_cols=0, max_row_length=0, near_diagonal_halfwidth=1))
    0.625
    """
    w = s.near_diagonal_halfwidth
    cells = _cells(s.rows, s.cols, 0, w) + _cells(s.cols, s.rows, 1, w)
    return float(cells) / (s.rows * s.cols)


def banded(s: Structure) -> Finding | None:
    """Diagonal structure (the occupied diagonals at least half full, at most half of all
    diagonals occupied) or an envelope: at least 75 % of the entries within 5 % of the
    dimension from the diagonal and at least 4 times what uniform placement puts there."""
    params: dict[str, float | int] = {"bandwidth": s.bandwidth, "diagonals": s.n_diagonals}
    occupied = s.n_diagonals / max(1, s.rows + s.cols - 1)
    if s.diagonal_fill >= 0.5 and occupied <= 0.5:
        return Finding("banded", ramp(s.diagonal_fill, 0.5, 0.9), params,
                       {"diagonal fill": s.diagonal_fill, "diagonals": float(s.n_diagonals)},
                       f"every entry on {s.n_diagonals} diagonal{'s' * (s.n_diagonals != 1)}, "
                       f"{s.diagonal_fill:.0%} full")
    near, expected = s.near_diagonal_share, near_expected(s)
    if near >= 0.75 and near >= 4 * expected:
        return Finding("banded", ramp(near, 0.75, 0.97), params,
                       {"near-diagonal share": near, "near-diagonal if uniform": expected,
                        "half-width": float(s.near_diagonal_halfwidth)},
                       f"{near:.0%} of entries within {s.near_diagonal_halfwidth} of the "
                       f"diagonal (uniform placement: {expected:.0%})")
    return None


def _random_fill(density: float, b: int) -> float:
    """Expected fill of the non-empty b x b blocks of a uniformly random pattern."""
    empty = (1.0 - density) ** (b * b)
    return density / (1.0 - empty) if empty < 1.0 else 1.0


def _block_size(s: Structure) -> tuple[int, float, float] | None:
    """(b, fill_b, lift over random) of the largest block size that stays filled."""
    fills, prev, best = s.block_fill, 1.0, None
    for b in sorted(fills):
        if fills[b] < 0.45 * prev:
            break
        lift = fills[b] / _random_fill(s.density, b)
        if (fills[b] >= 0.9 and lift >= 1.5) or (fills[b] >= 0.35 and lift >= 2.5):
            best = (b, fills[b], lift)
        prev = fills[b]
    return best


def block(s: Structure) -> Finding | None:
    """The largest b whose b x b blocks stay filled as b doubles and beat a random pattern
    of the same density; *block* (nodal blocks) when the main diagonal is stored, the
    pattern is symmetric or the density is below 3 %, else *block-pruned*."""
    found = _block_size(s)
    if found is None:
        return None
    b, fill, lift = found
    symmetry = s.pattern_symmetry or 0.0
    nodal = s.main_diagonal_share >= 0.9 or symmetry >= 0.8 or s.density < 0.03
    conf = min(ramp(fill, 0.35, 0.8), ramp(lift, 1.5, 4.0))
    evidence: dict[str, float | str] = {f"block fill {b}": fill, "lift over random": lift,
                                        "main diagonal": s.main_diagonal_share,
                                        "pattern symmetry": symmetry}
    kind = "nodal blocks" if nodal else "weights pruned in whole blocks"
    return Finding("block" if nodal else "block-pruned", conf, {"block": b}, evidence,
                   f"{b}x{b} blocks {fill:.0%} full, {lift:.1f}x a random pattern's ({kind})")


#: the Kolmogorov-Smirnov distance D of a fitted power-law tail of n columns may be at
#: most this over sqrt(n): the 10 % critical value of the Kolmogorov distribution, above
#: which the degrees plausibly come from some other law (as a two-peaked distribution
#: does, though it beats an exponential)
KS_PLAUSIBLE = 1.22


def scale_free(s: Structure) -> Finding | None:
    """Column degrees follow a power law better than an exponential (p < 0.1) and
    plausibly (KS distance D <= :data:`KS_PLAUSIBLE` / sqrt(tail)), alpha in [1.5, 4] over
    a tail of >= 50 columns, the top 1 % of columns holding >= 3 %."""
    a, llr, p, tail = s.col_alpha, s.col_llr_exponential, s.col_llr_p, s.col_tail
    hub = s.hub_share.get("1%", 0.0)
    if a is None or llr is None or p is None or tail is None or s.col_ks is None:
        return None
    if not (1.5 <= a <= 4.0 and llr > 0 and p < 0.1 and tail >= 50 and hub >= 0.03):
        return None
    if s.col_ks * math.sqrt(tail) > KS_PLAUSIBLE:
        return None
    conf = min(ramp(0.1 - p, 0.0, 0.099), ramp(hub, 0.03, 0.1))
    return Finding("scale-free", conf, {"alpha": a, "xmin": s.col_xmin or 1},
                   {"alpha": a, "llr vs exponential": llr, "p": p, "hub share 1%": hub,
                    "KS distance": s.col_ks},
                   f"column degrees fit a power law, alpha {a:.2f} (p {p:.2g} against an "
                   f"exponential tail); top 1 % of columns hold {hub:.0%}")


def graph(s: Structure) -> Finding | None:
    """Adjacency of a network: square, neither banded nor blocked, with links that come
    back far more often than chance: pattern symmetry >= 0.9, or >= 0.05 and >= 5 times
    the density (directed)."""
    sym = s.pattern_symmetry
    if s.rows != s.cols or sym is None or s.rows < 2:
        return None
    if banded(s) is not None or block(s) is not None:  # a mesh or a stencil, not a network
        return None
    chance = max(s.density, 1.0 / s.rows)
    evidence: dict[str, float | str] = {"pattern symmetry": sym, "symmetry by chance": chance,
                                        "main diagonal": s.main_diagonal_share}
    if sym >= 0.9 and sym >= 1.5 * chance:
        return Finding("graph", ramp(sym, 0.9, 0.99), {}, evidence,
                       f"square pattern {sym:.0%} symmetric (undirected links; a weight "
                       f"mask is about {chance:.0%} symmetric by chance)")
    if sym >= 0.05 and sym >= 5 * chance:
        return Finding("graph", ramp(sym / chance, 5.0, 20.0), {}, evidence,
                       f"square pattern: {sym:.0%} of links come back, {sym / chance:.0f}x "
                       f"chance (a directed graph; weight masks: about 1x)")
    return None


def _spread(s: Structure) -> tuple[float, float, float]:
    rd = s.row_stats.dispersion if s.row_stats else 1.0
    cd = s.col_stats.dispersion if s.col_stats else 1.0
    return rd, cd, math.sqrt(rd * cd)


def random(s: Structure) -> Finding | None:
    """Row and column lengths spread like independent uniform placement (geometric mean of
    the dispersion indices in [0.5, 1.75]; 1 is binomial, 0 a pattern with the same count
    in every row and column) and no more entries near the diagonal than twice what
    uniform placement puts there (+ 0.05)."""
    rd, cd, spread = _spread(s)
    near, expected = s.near_diagonal_share, near_expected(s)
    if not 0.5 <= spread <= 1.75 or near > 2.0 * expected + 0.05:
        return None
    conf = min(ramp(1.75 - spread, 0.0, 0.5), ramp(spread, 0.5, 0.75))
    return Finding("random", conf, {"density": s.density},
                   {"row dispersion": rd, "column dispersion": cd, "near-diagonal share": near,
                    "near-diagonal if uniform": expected},
                   f"row and column lengths spread as uniform placement does (dispersion "
                   f"{rd:.2f} and {cd:.2f}; 1 = binomial)")


def _not_a_graph(s: Structure) -> str:
    """Why the pattern is not an adjacency pattern (the feature that decided)."""
    if s.rows != s.cols:
        return f"rectangular {s.rows} x {s.cols}, so not a graph's adjacency"
    sym = s.pattern_symmetry or 0.0
    return f"pattern symmetry {sym:.2f}, about chance ({s.density:.2f}), unlike a graph's"


def pruned(s: Structure) -> Finding | None:
    """Weights pruned without structure: density >= 1 %, uneven rows and columns (mean
    dispersion > 1.75), not a graph, and values (where stored) at least half distinct."""
    rd, cd, spread = _spread(s)
    values = s.value_distinct_share
    if s.density < 0.01 or spread <= 1.75 or graph(s) is not None:
        return None
    if values is not None and values < 0.5:
        return None
    evidence: dict[str, float | str] = {"row dispersion": rd, "column dispersion": cd,
                                        "density": s.density}
    if values is not None:
        evidence["distinct values"] = values
    return Finding("unstructured-pruned", ramp(spread, 1.75, 4.0), {"sparsity": 1.0 - s.density},
                   evidence, f"uneven rows and columns (dispersion {rd:.1f}, {cd:.1f}) at "
                   f"density {s.density:.1%}; {_not_a_graph(s)}")


def skewed(s: Structure) -> Finding | None:
    """Skewed degrees: the row or the column lengths vary at least as much as their mean
    (coefficient of variation >= 1) over at least 16 rows and columns."""
    if s.row_stats is None or s.col_stats is None or min(s.rows, s.cols) < 16:
        return None
    cv = max(s.row_stats.cv, s.col_stats.cv)
    if cv < 1.0:
        return None
    which = "row" if s.row_stats.cv >= s.col_stats.cv else "column"
    stats = s.row_stats if which == "row" else s.col_stats
    return Finding("skewed", ramp(cv, 1.0, 2.0), {f"{which} cv": cv},
                   {"row cv": s.row_stats.cv, "column cv": s.col_stats.cv},
                   f"{which} lengths skewed: cv {cv:.2f}, longest {stats.max} vs mean "
                   f"{stats.mean:.1f}")


def dense_rows(s: Structure) -> Finding | None:
    """A few dense rows or columns (arrowhead): the longest holds at least 10 % of the other
    dimension and at least 20 times the mean length."""
    if s.row_stats is None or s.col_stats is None or min(s.rows, s.cols) < 16:
        return None
    for which, st, other in (("row", s.row_stats, s.cols), ("column", s.col_stats, s.rows)):
        if st.mean and st.max >= 0.1 * other and st.max >= 20 * st.mean:
            return Finding("dense-rows", ramp(st.max / st.mean, 20.0, 100.0),
                           {f"longest {which}": st.max},
                           {f"longest {which}": float(st.max), f"mean {which}": st.mean},
                           f"a {which} of {st.max} entries out of {other} ({st.max / st.mean:.0f}x "
                           f"the mean)")
    return None


def regular(s: Structure) -> Finding | None:
    """Every row and every column holds the same number (>= 2) of entries."""
    if s.row_stats is None or s.col_stats is None or s.density >= 0.9:
        return None
    if s.row_stats.cv > 1e-9 or s.col_stats.cv > 1e-9 or s.row_stats.max < 2 or s.col_stats.max < 2:
        return None
    return Finding("regular", 1.0, {"per row": s.row_stats.max, "per column": s.col_stats.max},
                   {"row cv": 0.0, "column cv": 0.0},
                   f"exactly {s.row_stats.max} entries in every row and {s.col_stats.max} "
                   f"in every column")
