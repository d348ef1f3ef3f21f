"""Classify a sparsity pattern from its measured features (never from file comments).

The class picks the B-reuse model of *Sparsity-Aware Roofline Models for Sparse
Matrix-Matrix Multiplication* (Qian et al.): banded -> diagonal model, block and
block-pruned -> blocked, scale-free -> scale-free, random and unstructured-pruned ->
random; a graph without a power law gets the scale-free model with the hub share measured
from the matrix. Every detector of :mod:`sparsroof.structure.traits` runs; the class is
the first trait found in this order, and every trait found is listed:

1. dense (density >= 0.9); 2. nm; 3. banded (diagonal structure or an envelope);
4. block / block-pruned; 5. scale-free; 6. random; 7. graph; 8. unstructured-pruned;
9. mixed: none of these. Besides the classes, the traits *skewed* (row or column
lengths with cv >= 1), *dense-rows* (an arrowhead's dense row or column) and *regular*
(the same count in every row and column) are reported.

The confidence is the deciding rule's, scaled down for a matrix too small to tell: by
log(entries) / log(2000) below 2000 entries, and at most 0.5 below 200 entries or
16 rows or columns. The ``reason`` is one line a user can check: the class, the feature
that decided it with its value, and the size caveat where it applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..units import counted
from . import traits as t
from .features import Structure

__all__ = ["CLASSES", "TRAITS", "Verdict", "classify"]

CLASSES = ("banded", "block", "scale-free", "graph", "random", "nm", "block-pruned",
           "unstructured-pruned", "dense", "mixed")
#: traits that are not classes of their own
TRAITS = ("skewed", "dense-rows", "regular")

_ORDER: tuple[Callable[[Structure], t.Finding | None], ...] = (
    t.dense, t.nm, t.banded, t.block, t.scale_free, t.random, t.graph, t.pruned)
_EXTRA: tuple[Callable[[Structure], t.Finding | None], ...] = (
    t.skewed, t.dense_rows, t.regular)
_SURE_ENTRIES = 2000
_SMALL_ENTRIES = 200
_SMALL_SIDE = 16


@dataclass(frozen=True)
class Verdict:
    """A structure class, how sure the rules are, its parameters and deciding features,
    every trait found (the class first) and a one-line reason."""

    label: str
    confidence: float
    params: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, float | str] = field(default_factory=dict)
    traits: tuple[str, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["traits"] = list(self.traits)
        return out


def _size_factor(s: Structure) -> tuple[float, str]:
    """(confidence factor, caveat) for a matrix too small to tell.

    >>> from sparsroof.structure.features import Structure
    >>> _size_factor(Structure(rows=34, cols=34, stored_entries=156, numeric_nonzeros=156,
    ...     nonempty_rows=34, nonempty_cols=34, max_row_length=17))
    (0.5, 'only 156 entries: too small to tell for sure')
    """
    n = s.stored_entries
    factor = min(1.0, math.log(max(n, 2)) / math.log(_SURE_ENTRIES))
    if n < _SMALL_ENTRIES or min(s.rows, s.cols) < _SMALL_SIDE:
        return min(factor, 0.5), (f"only {counted(n, 'entry', 'entries')}: too small to "
                                  "tell for sure")
    if n < _SURE_ENTRIES:
        return factor, f"{n} entries: small, less sure"
    return 1.0, ""


def _mixed(s: Structure) -> t.Finding:
    """Why no class fits: the features the other rules looked at."""
    near, expected = s.near_diagonal_share, t.near_expected(s)
    sym = s.pattern_symmetry
    parts = [f"near-diagonal {near:.0%} (uniform {expected:.0%})"]
    if s.rows == s.cols and sym is not None:
        parts.append(f"pattern symmetry {sym:.2f}")
    else:
        parts.append(f"rectangular {s.rows} x {s.cols}")
    if s.value_distinct_share is not None:
        parts.append(f"distinct values {s.value_distinct_share:.2f}")
    rd = s.row_stats.dispersion if s.row_stats else 1.0
    cd = s.col_stats.dispersion if s.col_stats else 1.0
    parts.append(f"dispersion {rd:.1f}/{cd:.1f}")
    evidence: dict[str, float | str] = {"near-diagonal share": near, "row dispersion": rd,
                                        "column dispersion": cd, "density": s.density}
    return t.Finding("mixed", 0.5, {}, evidence,
                     "no band, blocks, power law, graph symmetry or weight mask: "
                     + ", ".join(parts))


def classify(s: Structure) -> Verdict:
    """The structure class of ``s`` by the rules in the module docstring.

    >>> from sparsroof.matrix.generate import stencil_2d
    >>> from sparsroof.matrix.mtx import Header, Matrix
    >>> from sparsroof.structure.features import measure
    >>> g = stencil_2d(30)
    >>> h = Header("lap", "coordinate", "real", "general", g.rows, g.cols, g.nnz)
    >>> v = classify(measure(Matrix("lap", "", g.rows, g.cols, g.row, g.col, g.values, h)))
    >>> v.label, v.traits, v.reason
    ('banded', ('banded',), 'banded: every entry on 5 diagonals, 99% full')
    """
    if s.stored_entries == 0:
        return Verdict("mixed", 0.0, {}, {"stored entries": 0.0}, ("mixed",),
                       "mixed: no stored entries, nothing to classify")
    found = [f for f in (rule(s) for rule in _ORDER) if f is not None]
    first = found[0] if found else _mixed(s)
    found += [f for f in (rule(s) for rule in _EXTRA) if f is not None]
    names = dict.fromkeys([first.name, *(f.name for f in found)])
    params = dict(first.params)
    for f in found:
        for key, value in f.params.items():
            params.setdefault(key, value)
    factor, caveat = _size_factor(s)
    reason = f"{first.name}: {first.reason}"
    extra = [f.reason for f in found if f.name not in (first.name,)]
    if extra:
        reason += "; also " + "; ".join(extra)
    if caveat:
        reason += f" ({caveat})"
    return Verdict(first.name, round(first.confidence * factor, 3), params, first.evidence,
                   tuple(names), reason)
