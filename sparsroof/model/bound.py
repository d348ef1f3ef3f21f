"""Speed of light (SoL) of a kernel on a device: the roofline bound.

For a compute unit with peak P and a memory level with bandwidth β (the roofline model,
applied to sparse kernels in *The Sparsity Roofline*, with the launch-overhead ceiling of
*Time-Based Roofline for Deep Learning Performance Analysis*):

    SoL = max(F_exec / P, bytes / β, launches · t_launch)
    AI = F_useful / bytes,  attainable = F_useful / SoL

and the bound is whichever term is largest. The memory term is taken over the whole
hierarchy, for a warm repeated run (the way kernels are timed): level j can only be asked for
the bytes its faster levels cannot already hold,

    bytes_j = 0 if W <= C_<j else max(0, bytes - C_<j),   memory_s = max_j bytes_j / β_j

with W the working set, C_<j the summed capacity of the levels above j and β_j the level's
bandwidth. A working set that fits a cache is charged at that cache's speed (a warm run never
reaches DRAM; *Sparsity-Aware Roofline Models* saw runs "beat" a DRAM bound so), and one a
little larger than the caches is charged for the part that cannot stay resident, never for
all of it: a lower bound must allow the best placement. No level is free: a level without a
known bandwidth (a user's spec may leave one out) holds nothing in this sum, so the bytes it
would hold are charged at the next level that has one, with a note.

The launch term is one floor per kernel for the way the run is timed
(:mod:`sparsroof.model.timing`); a ``cold`` run (caches flushed between calls) gets no
cache credit: every byte is charged at main memory, and one call timed alone is done no
sooner than its first operand arrives: its memory term is at least the largest latency
the spec's levels give (a CPU's L1 load-to-use time; a load from main memory takes longer
than a hit in any cache). Back-to-back warm calls get no such term, since one call's loads
may overlap the next call's. A product with nothing to compute (no
entries) has no launch term: its output is zeros, which a library writes with a memory set
or not at all (cuSPARSE's SpMV of a matrix without entries was measured on an H100 in
0.93 us per call through a graph, below the device's 0.97 us empty kernel, and in 1.25 us
between two events when the matrix has no rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import OptionError
from ..hardware.spec import PRECISIONS, UNITS, HwSpec, MemoryLevel
from ..units import si
from .timing import DEFAULT_TIMING, check_timing, describe, launch_floor
from .traffic import Traffic

__all__ = ["Bound", "WORKING_SET", "bound", "launches_for", "entry_peak", "sol_seconds",
           "memory_level", "memory_terms", "memory_time", "credited", "resolve_unit",
           "auto_unit"]

#: :func:`bound`'s ``footprint`` by default: the traffic's own bytes, the working set of a
#: compulsory traffic (an analysis credits every model of a format with its compulsory
#: traffic's bytes: give those for the others)
WORKING_SET = "traffic"


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
    in_cache: bool = False  # the binding memory level is a cache
    note: str = ""  # what the bound leaves out (a peak the spec does not have)
    timing: str = DEFAULT_TIMING  # how the runs it bounds are timed
    calls_per_sync: int = 1  # calls per host synchronisation (timing "sync")

    @property
    def method(self) -> str:
        """The timing method in words: 'graph', 'sync (8 calls per synchronisation)'."""
        return describe(self.timing, self.calls_per_sync)


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


def memory_level(spec: HwSpec, footprint: float | None) -> tuple[MemoryLevel, bool]:
    """The fastest level whose capacity holds ``footprint`` bytes and whose bandwidth is
    known (main memory when none does, or when ``footprint`` is None); True when that
    level is a cache.

    >>> from sparsroof.hardware.library import load_spec
    >>> a100 = load_spec("a100")
    >>> [(lvl.name, cached) for lvl, cached in (memory_level(a100, 1e6), memory_level(a100, 1e9))]
    [('L2', True), ('HBM2e', False)]
    """
    if footprint is not None:
        for level in spec.memory[:-1]:
            if (level.capacity is not None and level.bandwidth is not None
                    and footprint <= level.capacity.value):
                return level, True
    return spec.dram, False


def memory_terms(spec: HwSpec, nbytes: float, footprint: float | None
                 ) -> list[tuple[MemoryLevel, float]]:
    """(level, seconds) for every level with a known bandwidth: the bytes that level must
    supply in a warm run over its bandwidth (see the module docstring). ``footprint`` None
    charges every byte to main memory (no cache roof).

    >>> from sparsroof.hardware.library import load_spec
    >>> a100 = load_spec("a100")   # L2: 40 MiB at 5.5 TB/s; HBM2e 2039 GB/s
    >>> [(lv.name, round(t * 1e6, 2)) for lv, t in memory_terms(a100, 1e6, 1e6)]
    [('L2', 0.18), ('HBM2e', 0.0)]
    >>> w = 50 * 2**20   # 50 MiB: all of it through L2, 10 MiB of it from HBM
    >>> [(lv.name, round(t * 1e6, 2)) for lv, t in memory_terms(a100, w, w)]
    [('L2', 9.53), ('HBM2e', 5.14)]
    >>> [(lv.name, round(t * 1e6, 2)) for lv, t in memory_terms(a100, 1e6, 0.0)]
    [('L2', 0.18), ('HBM2e', 0.0)]
    """
    if footprint is None:
        return [(spec.dram, nbytes / spec.dram.bandwidth.value)]
    terms: list[tuple[MemoryLevel, float]] = []
    above = 0.0
    for level in spec.memory:
        if level.bandwidth is None:  # no speed known: it holds nothing for free
            continue
        # the fastest level with a speed supplies every byte (nothing holds them above
        # it, even for a working set given as 0 B); a slower one, what the faster miss
        share = 0.0 if terms and footprint <= above else max(0.0, nbytes - above)
        terms.append((level, share / level.bandwidth.value))
        if level.capacity is not None and level is not spec.memory[-1]:
            above += level.capacity.value
    return terms


def memory_time(spec: HwSpec, nbytes: float, footprint: float | None, timing: str
                ) -> tuple[MemoryLevel, float, MemoryLevel | None]:
    """(the binding level, the memory term in seconds, the level whose latency binds or
    None) of ``nbytes`` with working set ``footprint`` (None: no cache credit) for a run
    timed by ``timing``: the largest of :func:`memory_terms` (the slower level on a tie,
    main memory for 0 B), and for a call timed alone (``cold``) no less than the largest
    latency the spec gives (a load from main memory is slower than a hit in any cache).

    >>> from sparsroof.hardware.library import load_spec
    >>> level, seconds, waited = memory_time(load_spec("epyc-7763"), 28.0, None, "cold")
    >>> level.name, seconds, waited.name     # 28 B from DDR4 is 0.14 ns: the L1 binds
    ('DDR4', 1.14e-09, 'L1d')
    """
    footprint = credited(footprint, timing)
    level, seconds = max(reversed(memory_terms(spec, nbytes, footprint)), key=lambda lt: lt[1])
    given = [lv for lv in spec.memory if lv.latency is not None] if timing == "cold" else []
    first = max(given, key=lambda lv: lv.latency.value) if given else None  # type: ignore[union-attr]
    if first is not None and first.latency is not None and nbytes > 0 \
            and first.latency.value > seconds:
        return level, first.latency.value, first
    return level, seconds, None


def credited(footprint: float | None, timing: str) -> float | None:
    """The working set the caches are credited with: none for a call timed alone
    (``cold``: caches flushed before it), else ``footprint``.

    >>> credited(1e6, "cold"), credited(1e6, "graph")
    (None, 1000000.0)
    """
    return None if timing == "cold" else footprint


def auto_unit(storage: str, nm_group: tuple[int, int] | None = None) -> str:
    """The compute unit a pattern can use (*The Sparsity Roofline*, section 5):
    unstructured formats run on SIMT cores; dense and block formats on tensor cores;
    2:4 on sparse tensor cores, other N:M patterns on dense tensor cores.

    >>> auto_unit("csr"), auto_unit("bsr16"), auto_unit("nm", (2, 4)), auto_unit("nm", (1, 4))
    ('simt', 'tensor', 'tensor-sparse', 'tensor')
    """
    if storage == "nm":
        return "tensor-sparse" if nm_group == (2, 4) else "tensor"
    if storage == "dense" or storage.startswith("bsr"):
        return "tensor"
    return "simt"


def resolve_unit(spec: HwSpec, unit: str, dtype: str, precision: str | None,
                 explicit: bool) -> tuple[str, str]:
    """(unit, precision) with a peak in ``spec``.

    The precision is ``precision`` or the value type; tensor units compute fp32 data as
    tf32. An explicitly chosen unit that lacks the precision is an error; an automatic
    choice falls back from sparse tensor to tensor to SIMT units.
    """
    wanted = precision or dtype
    order = [unit] if explicit else list(UNITS[: UNITS.index(unit) + 1])[::-1]
    for candidate in order:
        for p in (wanted, "tf32") if (wanted == "fp32" and candidate != "simt"
                                       and precision is None) else (wanted,):
            if (candidate, p) in spec.peaks:
                return candidate, p
    have = ", ".join(sorted(f"{u}/{p}" for u, p in spec.peaks))
    raise OptionError(f"{spec.name} has no {' or '.join(order)} peak at {wanted}"
                      f"{_peak_hint(spec, order, wanted, precision is not None)} "
                      f"(it has: {have})")


def _peak_hint(spec: HwSpec, units: list[str], wanted: str, by_precision: bool) -> str:
    """'; try {opt:dtype=fp32} or {opt:unit=tensor}': the options that would find a peak
    (shown as parameters by the API and as flags by the command line).

    >>> from sparsroof.hardware.library import load_spec
    >>> _peak_hint(load_spec("a100"), ["simt"], "int8", False)
    '; try {opt:dtype=fp32} or {opt:unit=tensor}'
    """
    options = []
    held = [p for p in ("fp32", "fp64", "fp16", "bf16", "int8")
            if any((u, p) in spec.peaks for u in units)]
    if held:
        options.append(f"{{opt:{'precision' if by_precision else 'dtype'}={held[0]}}}")
    others = [u for u in UNITS if u not in units and (u, wanted) in spec.peaks]
    if others:
        options.append(f"{{opt:unit={others[0]}}}")
    return f"; try {' or '.join(options)}" if options else ""


def entry_peak(spec: HwSpec, unit: str, precision: str) -> float:
    """Peak rate at which ``unit`` multiplies stored entries, in FLOP/s.

    Sparse tensor-core peaks are quoted dense-equivalent: a 2:4 GEMM is credited with the
    FLOPs of the zeros it skips. Against the entries actually stored that rate is halved
    (so a compute-bound 2:4 layer runs 2x faster than dense, not 4x).

    >>> from sparsroof.hardware.library import load_spec
    >>> a100 = load_spec("a100")
    >>> entry_peak(a100, "tensor-sparse", "fp16") / 1e12, entry_peak(a100, "tensor", "fp16") / 1e12
    (312.0, 312.0)
    """
    peak = spec.peak(unit, precision).value
    return peak / 2 if unit == "tensor-sparse" else peak


def _faster_unit(spec: HwSpec, unit: str, precision: str, peak: float) -> str | None:
    """The unit of ``spec`` that multiplies entries fastest at ``precision``, where it is
    faster than ``unit``'s ``peak``: the model gives a format the unit its kernels use
    (*The Sparsity Roofline*, section 5), but a kernel may compute an unstructured
    product on tensor units too, so a compute-bound bound holds only for kernels on
    ``unit``.

    >>> from sparsroof.hardware.library import load_spec
    >>> a100 = load_spec("a100")
    >>> _faster_unit(a100, "simt", "fp16", 78e12), _faster_unit(a100, "tensor", "fp16", 312e12)
    ('tensor', None)
    """
    rates = {u: entry_peak(spec, u, p) for u, p in spec.peaks if p == precision}
    best = max(rates, key=lambda u: rates[u], default=None)
    return best if best is not None and best != unit and rates[best] > peak else None


def one_call(spec: HwSpec, t: Traffic) -> float:
    """The least time one call of ``t`` takes on a CPU spec, however it spreads its work:
    on one core its reads pass that core's load ports (the first level's roof over its
    copies, one per core); on several, the calling core learns that the others are done
    only by a load from another core's cache, no sooner than the first level's latency.
    Whichever is less; 0 for a GPU, a call with no entries, or a spec without the figures.

    >>> from sparsroof.hardware.library import load_spec
    >>> from sparsroof.model.traffic import Traffic
    >>> t = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e3, 2e3, 1.2e4, 800, 800)
    >>> epyc = load_spec("epyc-7763")  # L1d 14.3 TB/s over 64 cores, 1.14 ns
    >>> round(one_call(epyc, t) * 1e9, 2), one_call(load_spec("a100"), t)
    (1.14, 0.0)
    """
    return call_floor(spec, t.bytes_a + t.bytes_b) if t.flops_executed else 0.0


def call_floor(spec: HwSpec, read_bytes: float) -> float:
    """:func:`one_call` of a call that reads ``read_bytes``."""
    first, cores = spec.memory[0], spec.parallelism.get("cores")
    copies = first.instances or cores
    if spec.kind != "cpu" or first.bandwidth is None or first.latency is None or not copies:
        return 0.0
    return min(read_bytes / (first.bandwidth.value / copies.value), first.latency.value)


def _unmeasured_home(spec: HwSpec, footprint: float | None) -> str | None:
    """The name of the fastest level that holds ``footprint`` bytes when that level has no
    known bandwidth (its bytes are then charged at the next level, :func:`memory_terms`),
    else None.

    >>> from dataclasses import replace
    >>> from sparsroof.hardware.library import load_spec
    >>> from sparsroof.hardware.spec import MemoryLevel
    >>> a100 = load_spec("a100")
    >>> l2 = a100.memory[0]
    >>> blind = replace(a100, memory=(MemoryLevel(l2.name, None, l2.capacity), a100.dram))
    >>> _unmeasured_home(blind, 3e5), _unmeasured_home(blind, 3e9), _unmeasured_home(blind, None)
    ('L2', None, None)
    """
    if footprint is None:
        return None
    held = 0.0
    for level in spec.memory[:-1]:
        held += level.capacity.value if level.capacity is not None else 0.0
        if level.capacity is not None and footprint <= held:
            return level.name if level.bandwidth is None else None
    return None


def _given(t: Traffic, spec: HwSpec | str, unit: str, precision: str, launches: int | None,
           footprint: float | str | None, timing: str, calls_per_sync: int
           ) -> tuple[HwSpec, int, float | None]:
    """:func:`bound`'s spec, launches and footprint from what it was given, checked: a
    unit, precision or timing no spec can name is a usage error (a known one the spec
    lacks leaves the compute term out, with a note)."""
    if unit not in UNITS:
        raise OptionError(f"unknown compute unit {unit!r} (choose from {', '.join(UNITS)})")
    if precision not in PRECISIONS:
        raise OptionError(f"unknown precision {precision!r} (choose from "
                          f"{', '.join(PRECISIONS)})")
    from ..userfile.fields import FieldError, number, whole_number

    try:
        calls_per_sync = whole_number(calls_per_sync, "calls_per_sync")
        launches = None if launches is None else whole_number(launches, "launches", minimum=0)
        if not isinstance(footprint, str) and footprint is not None:
            footprint = number(footprint, "footprint", minimum=0)
    except FieldError as err:
        raise OptionError(str(err)) from None
    check_timing(timing, calls_per_sync)
    if isinstance(spec, str):
        from ..hardware.library import load_spec

        spec = load_spec(spec)
    elif not isinstance(spec, HwSpec):
        raise OptionError(f"spec: one spec, by name, path or HwSpec, not {type(spec).__name__}")
    if isinstance(footprint, str):
        if footprint != WORKING_SET:
            raise OptionError(f"footprint={footprint!r}: give bytes, None (main memory) or "
                              f"{WORKING_SET!r} (the traffic's bytes)")
        footprint = t.bytes_total
    return spec, launches_for(spec) if launches is None else launches, footprint


def launches_for(spec: HwSpec) -> int:
    """Kernel launches an analysis charges one call of a kernel: one on a GPU whose spec
    gives a launch floor, none elsewhere (a CPU call has its own floor, :func:`one_call`).

    >>> from sparsroof.hardware.library import load_spec
    >>> launches_for(load_spec("a100")), launches_for(load_spec("epyc-7763"))
    (1, 0)
    """
    return 1 if spec.kind == "gpu" and spec.launch_overhead is not None else 0


def bound(t: Traffic, spec: HwSpec | str, *, unit: str, precision: str,
          launches: int | None = None, footprint: float | str | None = WORKING_SET,
          timing: str = DEFAULT_TIMING, calls_per_sync: int = 1) -> Bound:
    """Bound of traffic ``t`` on ``spec`` (a spec or its name) for a run timed by
    ``timing``: by default one launch on a GPU spec with a launch floor
    (:func:`launches_for`), and the traffic's bytes (``footprint``, the working set)
    held by the fastest level they fit, so a cache may be the memory roof. That is how an
    analysis bounds a compulsory traffic; for another model of the same format it gives
    ``footprint`` the compulsory traffic's bytes (the rows of B a model reads again are
    the same rows). A ``footprint`` of None keeps main memory, and so does a ``cold`` run.

    >>> from sparsroof.hardware.library import load_spec
    >>> from sparsroof.model.traffic import Traffic
    >>> t = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e9, 2e9, 8e9, 0, 0)
    >>> b = bound(t, "a100", unit="simt", precision="fp64")
    >>> round(b.memory_s * 1e3, 3), b.bound   # 8 GB less the 40 MiB L2 holds, at 2039 GB/s
    (3.903, 'memory')
    >>> small = Traffic("spmv", 1, "csr", "compulsory", "fp64", "int32", 2e6, 2e6, 8e6, 0, 0)
    >>> b = bound(small, "a100", unit="simt", precision="fp64")
    >>> b.memory_level, round(b.memory_s * 1e6, 2), round(b.launch_s * 1e6, 2)
    ('L2', 1.45, 1.3)
    >>> bound(small, "a100", unit="gpu", precision="fp64")
    Traceback (most recent call last):
    ...
    sparsroof.errors.OptionError: unknown compute unit 'gpu' (choose from simt, tensor, ...)
    """
    spec, launches, footprint = _given(t, spec, unit, precision, launches, footprint,
                                       timing, calls_per_sync)
    note = ""
    if (unit, precision) in spec.peaks:
        peak = entry_peak(spec, unit, precision)
    else:  # no peak: the compute term is left out, which keeps the bound a lower bound
        peak, note = 0.0, f"{spec.name} has no {unit} {precision} peak: compute term left out"
    footprint = credited(footprint, timing)
    terms = memory_terms(spec, t.bytes_total, footprint)
    unknown = _unmeasured_home(spec, footprint)
    floor, floor_note = launch_floor(spec, timing, calls_per_sync)
    if unknown is not None:
        charged = next(lv.name for lv, s in terms if s > 0 or lv is spec.dram)
        said = (f"the working set fits {unknown}, whose bandwidth {spec.name} does not give: "
                f"its bytes are charged at {charged} (give the level a bandwidth)")
        note = f"{note}; {said}" if note else said
    floorless = spec.kind == "gpu" and spec.launch_overhead is None and t.flops_executed
    if floorless:  # a GPU kernel always pays a launch, but this spec cannot say how long
        floor_note = (f"{spec.name} gives no launch floor: the bound leaves out the launch "
                      "every run pays, so a small matrix's bound lies far below any run")
    if floor_note and (launches or floorless):
        note = f"{note}; {floor_note}" if note else floor_note
    if launches and not t.flops_executed:  # no entries: y = 0 needs a memory set, no kernel
        launches, note = 0, "nothing to compute: no kernel need run"
    level, memory_s, waited = memory_time(spec, t.bytes_total, footprint, timing)
    cached = level is not spec.dram
    compute_s = t.flops_executed / peak if peak else 0.0
    bandwidth = level.bandwidth.value if level.bandwidth else spec.dram.bandwidth.value
    if waited is not None and waited.latency is not None:
        said = (f"a call timed alone waits for its first load: {waited.name}'s latency "
                f"{waited.latency.text} binds")
        note = f"{note}; {said}" if note else said
    launch_s = launches * floor
    call_s = one_call(spec, t)
    if call_s > max(launch_s, memory_s, compute_s):  # a CPU call of few bytes
        launch_s = call_s
        first = spec.memory[0]
        said = (f"one call takes at least {si(call_s, 's')}: on one core its reads pass "
                f"that core's {first.name} ports, spread over several the cores wait for "
                f"each other at least one load ({first.name} latency)")
        note = f"{note}; {said}" if note else said
    sol, name = sol_seconds(compute_s, memory_s, launch_s)
    if name == "compute":
        faster = _faster_unit(spec, unit, precision, peak)
        if faster:
            said = (f"compute-bound on {unit} units at {precision}: a kernel that runs the "
                    f"product on {faster} units (densified tiles, as the dense GEMM does) "
                    f"can be faster, and only the bound on {faster} units holds for it")
            note = f"{note}; {said}" if note else said
    return Bound(
        unit=unit,
        precision=precision,
        peak_flops=peak,
        memory_level=level.name,
        bandwidth=bandwidth,
        compute_s=compute_s,
        memory_s=memory_s,
        launch_s=launch_s,
        sol_s=sol,
        bound=name,
        attainable_flops=t.flops_useful / sol if sol > 0 else 0.0,
        in_cache=cached,
        note=note,
        timing=timing,
        calls_per_sync=calls_per_sync,
    )
