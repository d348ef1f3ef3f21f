"""What a reordering buys: the reordered matrix's bounds beside the original's.

A reordering moves no entry in or out of the matrix: the FLOPs, the compulsory and the
random B traffic stay as they are. What it changes is which rows share a panel and so
how many distinct columns - rows of B - each panel touches: the cache-aware model
measures exactly that from the pattern, so it is the model a reordering is judged by.
Formats whose size depends on the pattern's layout (DIA's diagonals, BSR's blocks)
change with it too, and each format is compared with itself.

For each (width, format): gain = SoL(original) / SoL(reordered), saved = SoL(original)
- SoL(reordered) per kernel run, and the break-even number of runs = the reordering's
seconds on this host / saved. An ordering is marked best only when its gain reaches
:data:`NOTABLE_GAIN`: the cache-aware model picks its panel height among powers of two,
so differences of a few per cent lie within its resolution, and reporting them as a
gain would promise more than the model can tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .results import Analysis, Gain, Reordering, Result

__all__ = ["NOTABLE_GAIN", "break_even", "compare"]

#: an ordering is marked best only when it lowers the bound by this factor or more
NOTABLE_GAIN = 1.05
_MODEL = "cache-aware"


def break_even(seconds: float, original_s: float, reordered_s: float) -> float | None:
    """Kernel runs that pay for a reordering of ``seconds``: seconds / (SoL saved per
    run); None when the reordered bound saves nothing.

    >>> break_even(2.0, original_s=5e-3, reordered_s=4e-3)   # 2 s / 1 ms saved per run
    2000.0
    >>> break_even(2.0, original_s=5e-3, reordered_s=5e-3) is None
    True
    """
    saved = original_s - reordered_s
    return seconds / saved if saved > 0 else None


def _by_key(results: Sequence[Result]) -> dict[tuple[int, str], Result]:
    return {(r.traffic.width, r.traffic.storage): r for r in results
            if r.traffic.model == _MODEL}


def _gains(original: Analysis, reordered: Analysis, seconds: float) -> list[Gain]:
    after = _by_key(reordered.results)
    gains = []
    for key, before in _by_key(original.results).items():
        now = after.get(key)
        if now is None:
            continue
        b0, b1 = before.bound.sol_s, now.bound.sol_s
        gains.append(Gain(
            width=key[0], storage=key[1], bandwidth=reordered.structure.bandwidth,
            original_bandwidth=original.structure.bandwidth,
            bytes_b=now.traffic.bytes_b, original_bytes_b=before.traffic.bytes_b,
            sol_s=b1, original_sol_s=b0, gain=b0 / b1 if b1 else 1.0, saved_s=b0 - b1,
            break_even_runs=break_even(seconds, b0, b1)))
    return gains


def compare(original: Analysis, reordered: Sequence[tuple[str, float, Analysis]]
            ) -> tuple[Reordering, ...]:
    """Each (ordering, seconds, analysis of the reordered matrix) beside ``original``,
    the best ordering of each (width, format) marked where its gain is notable."""
    found = [(name, seconds, a, _gains(original, a, seconds)) for name, seconds, a in reordered]
    top: dict[tuple[int, str], float] = {}
    for *_, gains in found:
        for g in gains:
            top[(g.width, g.storage)] = max(top.get((g.width, g.storage), 0.0), g.gain)
    marked: set[tuple[int, str]] = set()
    out = []
    for name, seconds, a, gains in found:
        final = []
        for g in gains:
            key = (g.width, g.storage)
            best = g.gain >= NOTABLE_GAIN and g.gain == top[key] and key not in marked
            if best:
                marked.add(key)
            final.append(replace(g, best=best))
        out.append(Reordering(name, seconds, a, tuple(final)))
    return tuple(out)
