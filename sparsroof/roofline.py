"""Speed of light (SoL) of a kernel on a device: the roofline bound.

For a compute unit with peak P and a memory level with bandwidth β (the roofline model
of Williams et al., applied to sparse kernels in *The Sparsity Roofline*):

    SoL = max(F_exec / P, bytes / β, launches · t_launch)
    AI = F_useful / bytes,  attainable = F_useful / SoL = min(P·F/F_exec, β·AI)

and the bound is whichever term is largest.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hwspec import HwSpec
from .traffic import Traffic

__all__ = ["Bound", "bound", "sol_seconds"]


@dataclass(frozen=True)
class Bound:
    """Roofline position of one kernel on one device (seconds, FLOP/s, bytes/s)."""

    unit: str
    precision: str
    peak_flops: float
    memory_level: str
    bandwidth: float
    compute_s: float
    memory_s: float
    launch_s: float
    sol_s: float
    bound: str  # "compute", "memory" or "launch"
    attainable_flops: float


def sol_seconds(compute_s: float, memory_s: float, launch_s: float = 0.0) -> tuple[float, str]:
    """The largest of the three terms and its name (ties go to memory, then compute).

    >>> sol_seconds(2e-6, 3e-6)
    (3e-06, 'memory')
    >>> sol_seconds(2e-6, 3e-6, 4.2e-6)
    (4.2e-06, 'launch')
    """
    terms = (("memory", memory_s), ("compute", compute_s), ("launch", launch_s))
    name, value = max(terms, key=lambda t: t[1])
    return value, name


def bound(t: Traffic, spec: HwSpec, *, unit: str, precision: str, launches: int = 0) -> Bound:
    """Bound of traffic ``t`` on ``spec``, memory roof at main memory.

    >>> from sparsroof.hwspec import load_spec
    >>> from sparsroof.traffic import Traffic
    >>> t = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e9, 2e9, 8e9, 0, 0)
    >>> b = bound(t, load_spec("a100"), unit="simt", precision="fp64")
    >>> round(b.memory_s * 1e3, 3), b.bound   # 8 GB at 2039 GB/s
    (3.923, 'memory')
    """
    peak = spec.peak(unit, precision).value
    level = spec.dram
    compute_s = t.flops_executed / peak
    memory_s = t.bytes_total / level.bandwidth.value
    launch_s = launches * spec.launch_overhead.value if spec.launch_overhead else 0.0
    sol, name = sol_seconds(compute_s, memory_s, launch_s)
    return Bound(
        unit=unit,
        precision=precision,
        peak_flops=peak,
        memory_level=level.name,
        bandwidth=level.bandwidth.value,
        compute_s=compute_s,
        memory_s=memory_s,
        launch_s=launch_s,
        sol_s=sol,
        bound=name,
        attainable_flops=t.flops_useful / sol if sol > 0 else 0.0,
    )
