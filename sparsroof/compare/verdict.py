"""The one judge of a measured time against its bound, and its vocabulary.

``compare`` (measured runs of any source), ``whatif --measured`` (layer times of a network)
and ``bench`` (runs timed on this host) all judge through these functions, so a run's share
of the speed of light and the word for a run faster than its bound are the same everywhere:

- **% of SoL** = 100 x bound / measured (100 = at the speed of light);
- **measured / bound**, the same figure inverted, for tightness tables;
- a **violation**: a run faster than its bound, which is a promise no real run breaks; it
  is a bug in the traffic model or in the spec, never clipped;
- the **band**: the term that binds (launch, cache, dram, compute), or ``empty`` for a
  product with nothing to compute (no entries), whose bound is its output's bytes alone:
  no kernel need run, so its measured / bound says nothing of a kernel.
"""

from __future__ import annotations

from ..model.bound import Bound
from ..units import si

__all__ = ["BANDS", "VIOLATION", "pct_sol", "ratio", "is_violation", "band", "status",
           "explain"]

#: size bands, by the term that binds: launch floor, a cache roof, main memory, compute;
#: and the products with nothing to compute
BANDS = ("launch", "cache", "dram", "compute", "empty")
#: the status word of a run faster than its bound
VIOLATION = "VIOLATION"


def pct_sol(measured_s: float, sol_s: float) -> float:
    """The bound as a share of the measured time, in %.

    >>> pct_sol(4e-6, 1e-6)
    25.0
    """
    return 100.0 * sol_s / measured_s


def ratio(measured_s: float, sol_s: float) -> float | None:
    """Measured time over the bound (1 = at the speed of light, < 1 = a violation); None
    for a bound of zero (a product with nothing to do).

    >>> ratio(4e-6, 1e-6), ratio(1e-6, 0.0)
    (4.0, None)
    """
    return measured_s / sol_s if sol_s > 0 else None


def is_violation(measured_s: float, sol_s: float) -> bool:
    """True when the run was faster than its bound.

    >>> is_violation(0.9e-6, 1e-6), is_violation(1e-6, 1e-6)
    (True, False)
    """
    return measured_s < sol_s


def band(b: Bound, flops_executed: float) -> str:
    """The binding term, with memory split into a cache level and main memory; ``empty``
    for a product without arithmetic."""
    if not flops_executed:
        return "empty"
    if b.bound == "memory":
        return "cache" if b.in_cache else "dram"
    return b.bound


def status(measured_s: float, sol_s: float) -> str:
    """'ok' or :data:`VIOLATION`, the status column of every judged table.

    >>> status(2e-6, 1e-6), status(0.5e-6, 1e-6)
    ('ok', 'VIOLATION')
    """
    return VIOLATION if is_violation(measured_s, sol_s) else "ok"


def explain(what: str, measured_s: float, sol_s: float, spec: str, term: str) -> str:
    """Why a violation is one, in the words every command uses.

    >>> explain("lap2d_64 csr", 1e-6, 1.3e-6, "a100", "launch floor")
    'lap2d_64 csr ran in 1 us, faster than its bound 1.3 us on a100 (launch floor); the \
spec or the traffic model is wrong for this run'
    """
    return (f"{what} ran in {si(measured_s, 's')}, faster than its bound {si(sol_s, 's')} "
            f"on {spec} ({term}); the spec or the traffic model is wrong for this run")
