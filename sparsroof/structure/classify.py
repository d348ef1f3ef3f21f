"""Classify a sparsity pattern from its measured features (never from file comments).

The class picks the B-reuse model of *Sparsity-Aware Roofline Models for Sparse
Matrix-Matrix Multiplication* (Qian et al.): banded -> diagonal model, block and
block-pruned -> blocked, scale-free -> scale-free, random and unstructured-pruned ->
random. The rules run in order; the first that holds decides:

1. dense: density >= 0.9.
2. N:M: a pattern (N, M) with every non-empty group of M columns holding at most N
   entries (conformance >= 0.99) and at least 90 % of *all* groups holding exactly N; of
   several, the sparsest, then the narrowest M (only for M <= cols / 2).
3. banded (diagonal structure): the occupied diagonals are at least half full
   (diagonal fill >= 0.5) and at most half of all diagonals are occupied.
4. banded (envelope): at least 90 % of entries within 5 % of the dimension from the
   diagonal (a uniformly random pattern has about 10 % there).
5. block: the largest b in 2..32 whose b x b blocks stay filled as b doubles (each
   fill_b >= 0.45·fill_(b/2), fill_1 = 1) and are fuller than a uniformly random
   pattern of the same density would give, rho / (1 - (1 - rho)^(b²)): at least 2.5
   times that with fill_b >= 0.35, or 1.5 times with nearly full blocks (fill_b >= 0.9).
   It is *block* (finite-element nodal blocks) when the main
   diagonal is stored (>= 90 %), the pattern is symmetric (>= 0.8) or the density is
   below 3 %; otherwise *block-pruned* (weights pruned in whole blocks).
6. scale-free: the column degrees follow a power law better than an exponential (log
   likelihood ratio > 0, p < 0.1) with 1.5 <= alpha <= 4 over a tail of >= 50 columns,
   and the top 1 % of columns hold at least 3 % of the entries.
7. random: row and column lengths spread like independent uniform placement (geometric
   mean of the row and column dispersion indices <= 1.75; 1 is binomial) and no more
   entries near the diagonal than twice what uniform placement puts there (+ 0.05).
8. unstructured-pruned: density >= 1 % with uneven rows and columns (that mean > 1.75)
   and a pattern that is not symmetric (< 0.9; weight masks are not, graphs are).
9. mixed: anything else.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .features import NM_PATTERNS, Structure

__all__ = ["CLASSES", "Verdict", "classify"]

CLASSES = ("banded", "block", "scale-free", "random", "nm", "block-pruned",
           "unstructured-pruned", "dense", "mixed")


@dataclass(frozen=True)
class Verdict:
    """A structure class, how sure the rules are, its parameters and deciding features."""

    label: str
    confidence: float
    params: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, float | str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ramp(value: float, threshold: float, clear: float) -> float:
    """Confidence 0.5 at the rule's threshold rising to 1.0 at a clear-cut value.

    >>> _ramp(0.5, 0.5, 1.0), _ramp(0.75, 0.5, 1.0), _ramp(2.0, 0.5, 1.0)
    (0.5, 0.75, 1.0)
    """
    if clear == threshold:
        return 1.0
    return round(min(1.0, max(0.5, 0.5 + 0.5 * (value - threshold) / (clear - threshold))), 3)


def _nm(s: Structure) -> Verdict | None:
    fits = [(n / m, m, n) for n, m in NM_PATTERNS
            if s.cols >= 2 * m and s.nm_conformance.get(f"{n}:{m}", 0.0) >= 0.99
            and s.nm_exact.get(f"{n}:{m}", 0.0) >= 0.9]
    if not fits:
        return None
    _, m, n = min(fits)
    key = f"{n}:{m}"
    conf = min(_ramp(s.nm_conformance[key], 0.99, 1.0), _ramp(s.nm_exact[key], 0.9, 0.99))
    return Verdict("nm", conf, {"n": n, "m": m},
                   {f"conformance {key}": s.nm_conformance[key], f"exact {key}": s.nm_exact[key]})


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


def _block(s: Structure) -> Verdict | None:
    found = _block_size(s)
    if found is None:
        return None
    b, fill, lift = found
    symmetry = s.pattern_symmetry or 0.0
    nodal = s.main_diagonal_share >= 0.9 or symmetry >= 0.8 or s.density < 0.03
    conf = min(_ramp(fill, 0.35, 0.8), _ramp(lift, 1.5, 4.0))
    evidence: dict[str, float | str] = {f"block fill {b}": fill, "lift over random": lift,
                                        "main diagonal": s.main_diagonal_share,
                                        "pattern symmetry": symmetry, "density": s.density}
    return Verdict("block" if nodal else "block-pruned", conf, {"block": b}, evidence)


def _banded(s: Structure) -> Verdict | None:
    occupied = s.n_diagonals / max(1, s.rows + s.cols - 1)
    evidence: dict[str, float | str] = {"diagonal fill": s.diagonal_fill,
                                        "diagonals": float(s.n_diagonals),
                                        "near-diagonal share": s.near_diagonal_share}
    params = {"bandwidth": s.bandwidth, "diagonals": s.n_diagonals}
    if s.diagonal_fill >= 0.5 and occupied <= 0.5:
        return Verdict("banded", _ramp(s.diagonal_fill, 0.5, 0.9), params, evidence)
    return None


def _envelope(s: Structure) -> Verdict | None:
    if s.near_diagonal_share >= 0.9:
        params = {"bandwidth": s.bandwidth, "diagonals": s.n_diagonals}
        return Verdict("banded", _ramp(s.near_diagonal_share, 0.9, 0.99), params,
                       {"near-diagonal share": s.near_diagonal_share,
                        "half-width": float(s.near_diagonal_halfwidth)})
    return None


def _scale_free(s: Structure) -> Verdict | None:
    a, llr, p, tail = s.col_alpha, s.col_llr_exponential, s.col_llr_p, s.col_tail
    hub = s.hub_share.get("1%", 0.0)
    if a is None or llr is None or p is None or tail is None:
        return None
    if not (1.5 <= a <= 4.0 and llr > 0 and p < 0.1 and tail >= 50 and hub >= 0.03):
        return None
    conf = min(_ramp(0.1 - p, 0.0, 0.099), _ramp(hub, 0.03, 0.1))
    return Verdict("scale-free", conf, {"alpha": a, "xmin": s.col_xmin},
                   {"alpha": a, "llr vs exponential": llr, "p": p, "hub share 1%": hub,
                    "ks": s.col_ks or 0.0})


def _near_expected(s: Structure) -> float:
    """Share of all cells within the near-diagonal half-width (what uniform placement gives)."""
    w = s.near_diagonal_halfwidth
    d = np.arange(-w, w + 1)
    lengths = np.where(d >= 0, np.minimum(s.rows, s.cols - d), np.minimum(s.rows + d, s.cols))
    return float(np.clip(lengths, 0, None).sum()) / (s.rows * s.cols)


def _spread(s: Structure) -> Verdict:
    rows, cols = s.row_stats, s.col_stats
    rd = rows.dispersion if rows else 1.0
    cd = cols.dispersion if cols else 1.0
    spread = math.sqrt(rd * cd)
    near, expected = s.near_diagonal_share, _near_expected(s)
    evidence: dict[str, float | str] = {"row dispersion": rd, "column dispersion": cd,
                                        "near-diagonal share": near,
                                        "near-diagonal if uniform": expected,
                                        "density": s.density}
    if spread <= 1.75 and near <= 2.0 * expected + 0.05:
        return Verdict("random", _ramp(1.75 - spread, 0.0, 0.5), {"density": s.density},
                       evidence)
    symmetric = s.pattern_symmetry is not None and s.pattern_symmetry >= 0.9
    if s.density >= 0.01 and spread > 1.75 and not symmetric:
        return Verdict("unstructured-pruned", _ramp(spread, 1.75, 4.0),
                       {"sparsity": 1.0 - s.density}, evidence)
    return Verdict("mixed", 0.5, {}, evidence)


def classify(s: Structure) -> Verdict:
    """The structure class of ``s`` by the rules in the module docstring.

    >>> from sparsroof.matrix.generate import stencil_2d
    >>> from sparsroof.matrix.mtx import Header, Matrix
    >>> from sparsroof.structure.features import measure
    >>> g = stencil_2d(20)
    >>> h = Header("lap", "coordinate", "real", "general", g.rows, g.cols, g.nnz)
    >>> classify(measure(Matrix("lap", "", g.rows, g.cols, g.row, g.col, g.values, h))).label
    'banded'
    """
    if s.stored_entries == 0:
        return Verdict("mixed", 0.0, {}, {"stored entries": 0.0})
    if s.density >= 0.9:
        return Verdict("dense", _ramp(s.density, 0.9, 0.99), {}, {"density": s.density})
    for rule in (_nm, _banded, _envelope, _block, _scale_free):
        verdict = rule(s)
        if verdict is not None:
            return verdict
    return _spread(s)
