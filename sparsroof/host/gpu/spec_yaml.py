"""The spec YAML of a probed GPU: every figure with its kind and its source (the method,
the device and the date), loadable wherever a bundled spec name is."""

from __future__ import annotations

from typing import Any

from ..probe import bytes_text
from .probe import PROMISED_FLOORS, GpuProbe, derived_peak, mib_text

__all__ = ["gpu_spec_yaml"]


def _gbs(rate: float) -> str:
    return f"{rate / 1e9:.2f} GB/s"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3f} us"


def _memory(p: GpuProbe, by: str) -> list[dict[str, Any]]:
    info = p.info
    l2_source = (f"measured by {by}: the fastest read of a working set no larger than the "
                 f"L2, many passes per launch with loads that skip the L1; ")
    fastest = max((f.best for _, f in p.in_l2()), default=0.0)
    if fastest < p.memory_rate:
        l2_source += (f"the reads reached {_gbs(fastest)}, below the device memory's rate, "
                      "so that rate; ")
    l2_source += "; ".join(f"{mib_text(ws)} {f.best / 1e9:.0f} GB/s" +
                           (" (FLAGGED: rounds differ)" if f.flagged else "")
                           for ws, f in p.sweep)
    held = p.l2_held_bytes
    l2 = {"name": "L2",
          "bandwidth": {"value": _gbs(p.l2_rate), "kind": "measured", "source": l2_source},
          "capacity": {"value": bytes_text(info.l2_bytes), "kind": "nominal",
                       "source": (f"cudaDevAttrL2CacheSize of {info.name}, read by {by}; the "
                                  f"flat part ({_gbs(p.l2_flat)}, the median up to half the "
                                  f"L2) held to {mib_text(held)} in the sweep")}}
    size = bytes_text(p.array_bytes)
    dram_source = (f"measured by {by}: the faster of a device-to-device copy of {size} "
                   f"({_gbs(p.copy.best)}, 2 bytes moved per byte; "
                   f"{p.copy.rounds_text(_gbs)}) and an fp64 triad over 3 arrays of {size} "
                   f"({_gbs(p.triad.best)}, 24 bytes per element; "
                   f"{p.triad.rounds_text(_gbs)})")
    dram = {"name": "DRAM",
            "bandwidth": {"value": _gbs(p.memory_rate), "kind": "measured",
                          "source": dram_source},
            "capacity": {"value": bytes_text(info.memory_bytes), "kind": "nominal",
                         "source": f"total memory of {info.name} reported by CUDA to {by}"}}
    return [l2, dram]


def _floors(p: GpuProbe, by: str) -> dict[str, Any]:
    how = "an empty kernel replayed back to back through a CUDA graph"
    return {m: {"value": _us(f.best), "kind": "minimum",
                "source": (f"measured by {by}: {how}, fastest region per launch; "
                           f"{f.rounds_text(_us)}")}
            for m, f in p.floors.items() if m in PROMISED_FLOORS}


def _launcher_note(p: GpuProbe) -> str:
    """The Python launcher's own rates, which are not floors."""
    how = {"stream": "launched back to back on one stream",
           "sync": "with a host wait after each launch (host clock)"}
    rates = [f"{_us(f.best)} {how[m]}" for m, f in p.floors.items() if m in how]
    if not rates:
        return ""
    return ("Launched from Python (CuPy), an empty kernel took " + " and ".join(rates) +
            ": that launcher's rates, not floors (a library launching from C goes faster), "
            "so a stream, sync or cold run is bounded by the graph floor.")


def _peaks(p: GpuProbe, by: str) -> dict[str, Any]:
    out = {}
    for precision, f in p.fma.items():
        derived = derived_peak(p.info, precision)
        measured = (f"{precision} FMA chains on every SM measured {f.best / 1e12:.2f} "
                    f"TFLOP/s by {by} ({f.rounds_text(lambda r: f'{r / 1e12:.2f}')})")
        if derived is None or derived < f.best:
            why = ("no FMA lanes known for compute capability "
                   f"{p.info.compute_capability}" if derived is None
                   else "above the derived peak")
            out[precision] = {"value": f"{f.best / 1e12:.2f} TFLOP/s", "kind": "measured",
                              "source": f"{measured}; {why}, so the roof is the measured rate"}
        else:
            assert p.info.clock_hz is not None
            out[precision] = {
                "value": f"{derived / 1e12:.2f} TFLOP/s", "kind": "peak",
                "source": (f"derived: {p.info.sms} SMs x {p.info.clock_hz / 1e9:.3g} GHz x "
                           f"{derived / p.info.sms / p.info.clock_hz:.0f} FLOP per SM per "
                           f"cycle (compute capability {p.info.compute_capability}); "
                           f"{measured}")}
    return out


def gpu_spec_yaml(p: GpuProbe, name: str) -> str:
    """The YAML text of a valid spec holding what :func:`probe_gpu` measured."""
    import yaml

    from ..._version import __version__

    info = p.info
    by = f"sparsroof hw probe --device cuda on {info.name} on {p.date}"
    cuda = f"CUDA device attributes of {info.name}, read by {by}"
    floors = _floors(p, by)
    doc: dict[str, Any] = {"name": name, "device": info.name, "kind": "gpu",
                           "peaks": {"simt": _peaks(p, by)}, "memory": _memory(p, by)}
    if floors:
        smallest = min(floors, key=lambda m: p.floors[m].best)
        doc["launch_overhead"] = dict(floors[smallest], source=(
            f"the smallest of the launch floors below ({smallest}); " +
            floors[smallest]["source"]))
        doc["launch_floors"] = floors
    if info.clock_hz:
        doc["clock"] = {"value": f"{info.clock_hz / 1e9:.3f} GHz", "kind": "nominal",
                        "source": f"the SM clock's maximum (cudaDevAttrClockRate); {cuda}"}
    parallelism = {"sms": {"value": info.sms, "source": cuda}}
    if info.threads_per_sm:
        parallelism["threads_per_sm"] = {"value": info.threads_per_sm, "source": cuda}
        parallelism["warps_per_sm"] = {"value": info.threads_per_sm // 32, "source": cuda}
    doc["parallelism"] = parallelism
    flagged = p.flagged()
    notes = [f"Measured on {info.name} by sparsroof hw probe --device cuda, two rounds."]
    if flagged:
        notes.append("FLAGGED (rounds differ by more than 10 %): " + ", ".join(flagged) + ".")
    notes.extend(p.notes)
    if _launcher_note(p):
        notes.append(_launcher_note(p))
    doc["notes"] = " ".join(notes)
    doc["host"] = {"probed": p.date, "sparsroof": __version__, "library": info.library,
                   "driver_cuda": info.driver_version, "runtime_cuda": info.runtime_version,
                   "compute_capability": info.compute_capability,
                   "memory_clock": f"{(info.memory_clock_hz or 0) / 1e9:.3f} GHz",
                   "memory_bus_bits": str(info.memory_bus_bits or ""),
                   "flagged": ", ".join(flagged) or "none"}
    header = f"# Hardware spec of {info.name}, written by {by}.\n"
    return header + yaml.safe_dump(doc, sort_keys=False, width=100)
