"""The GPU check's Python steps (run by bench/gpu_check.sh on a machine with a CUDA GPU).

    python bench/gpu_check.py runs OUT SPEC [PROBE_SPEC] MATRIX...
        cuSPARSE CSR, COO and sliced-ELL SpMV (fp64; $GPU_CHECK_CASES, e.g. "spmv:1:fp64
        spmm:8:fp32", names other products, $GPU_CHECK_FORMATS, e.g. "csr sell", other
        formats) of each matrix on the first GPU, each timed by
        the four methods (graph, stream, sync, cold) from one prepared and checked
        product; writes OUT/runs-SPEC.json bounded on SPEC and, when PROBE_SPEC exists,
        OUT/runs-probe.json with the same runs bounded on it. A matrix that cannot be read
        or run is logged and skipped.
    python bench/gpu_check.py summary SPEC PROBE_SPEC JUDGED.json...
        per judged file (the JSON of 'sparsroof compare'): per method and band the runs,
        violations and measured/bound (median, smallest, largest), and the probe's
        figures beside the bundled spec's.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one

METHODS = ("graph", "stream", "sync", "cold")
FORMATS = ("csr", "coo", "sell")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _document(results: list[Any], paths: dict[str, str], spec: str, spec_file: str | None,
              device: dict[str, Any]) -> str:
    from sparsroof._version import envelope
    from sparsroof.report.bench import record

    doc = envelope("bench") | {"spec": spec}
    if spec_file is not None:
        doc["spec_file"] = str(Path(spec_file).resolve())
    doc["device"] = device
    doc["results"] = [record(r, {}) | {"path": paths[r.matrix]} for r in results]
    return json.dumps(doc, indent=1) + "\n"


def cases(text: str) -> list[tuple[str, int, str]]:
    """The products to run, from ``$GPU_CHECK_CASES``: KERNEL:WIDTH:DTYPE, space-separated.

    >>> cases("spmv:1:fp64 spmm:8:fp32")
    [('spmv', 1, 'fp64'), ('spmm', 8, 'fp32')]
    """
    out = []
    for case in text.split():
        kernel, width, dtype = case.split(":")
        out.append((kernel, int(width), dtype))
    return out


def runs(out: Path, spec_name: str, probe: str | None, matrices: list[str],
         cases: list[tuple[str, int, str]] = [("spmv", 1, "fp64")],  # noqa: B006
         formats: tuple[str, ...] = FORMATS) -> int:
    from sparsroof.errors import SparsroofError
    from sparsroof.hardware.library import load_spec
    from sparsroof.host.bench import bench, bound_again
    from sparsroof.host.gpu.cuda import open_device
    from sparsroof.matrix.mtx import load
    from sparsroof.structure.features import measure

    device = open_device()
    log(f"device: {device.info.name}, {device.info.sms} SMs, driver CUDA "
        f"{device.info.driver_version}, runtime {device.info.runtime_version}")
    spec = load_spec(spec_name)
    probed = load_spec(probe) if probe and Path(probe).is_file() else None
    on_spec: list[Any] = []
    on_probe: list[Any] = []
    paths: dict[str, str] = {}
    failed = 0
    for i, path in enumerate(matrices, 1):
        started = time.perf_counter()
        try:
            m = load(path)
            s = measure(m)
            if m.name in paths:
                log(f"{path}: skipped, a matrix named {m.name} was run already")
                continue
        except SparsroofError as err:
            failed += 1
            log(f"{path}: skipped: {err}")
            continue
        found = []
        for kernel, width, dtype in cases:
            try:
                found += bench(m, s, spec, formats=formats, backend="cusparse", device=device,
                               kernel=kernel, width=width, dtype=dtype, methods=METHODS,
                               warmup=3, repeat=7, min_time=0.01)
            except SparsroofError as err:
                failed += 1
                log(f"{path}: {kernel} d={width} {dtype} skipped: {err}")
            finally:
                device.release()
        if not found:
            continue
        paths[m.name] = str(Path(path).resolve())
        on_spec += found
        if probed is not None:
            on_probe += [bound_again(r, s, probed) for r in found]
        worst = min((r.pct_sol for r in found if r.pct_sol is not None), default=0.0)
        beaten = sum(r.violation for r in found)
        log(f"{i}/{len(matrices)} {m.name}: {m.stored_entries:,} entries, "
            f"{len(found)} runs in {time.perf_counter() - started:.1f} s, lowest % SoL "
            f"{worst:.1f}, {beaten} faster than the bound on {spec.name}")
        for note in {r.note for r in found if "graph" in r.note}:
            log(f"  note: {note}")
        # written after every matrix: a run stopped by its time limit keeps what it did
        device_doc = device.info.to_dict()
        (out / f"runs-{spec.name}.json").write_text(
            _document(on_spec, paths, spec.name, None, device_doc))
        if probed is not None and probe is not None:
            (out / "runs-probe.json").write_text(
                _document(on_probe, paths, probed.name, probe, device_doc))
    log(f"wrote {len(on_spec)} runs of {len(paths)} matrices ({failed} skipped)")
    return 0 if on_spec else 1


def _rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for method in METHODS:
        for band in ("launch", "cache", "dram", "compute", "empty"):
            runs = [r for r in doc.get("runs", [])
                    if r["timing"].split(" ")[0] == method and r["band"] == band]
            if not runs:
                continue
            beaten = sum(r["violation"] for r in runs)
            if band == "empty":  # nothing to compute: no kernel need run, no ratio
                rows.append([method, band, str(len(runs)), str(beaten), "-", "-", "-"])
                continue
            ratios = [r["measured_over_bound"] for r in runs]
            rows.append([method, band, str(len(runs)), str(beaten),
                         f"{min(ratios):.2f}", f"{statistics.median(ratios):.2f}",
                         f"{max(ratios):.2f}"])
    return rows


def summary(spec_name: str, probe: str, judged: list[str]) -> int:
    from rich.console import Console

    from sparsroof.hardware.library import load_spec
    from sparsroof.report.tables import fitted_table

    console = Console(width=80, color_system=None)
    for path in judged:
        doc = json.loads(Path(path).read_text())
        s = doc.get("summary", {})
        console.print(fitted_table(
            ("timing", "band", "runs", "beaten", "min", "median", "max"), _rows(doc),
            left=("timing", "band"),
            title=f"{Path(path).name}: measured / bound per method and band "
                  f"({s.get('count', 0)} runs, {s.get('violations', 0)} faster than "
                  f"their bound, {s.get('errors', 0)} errors)"))
        for line in doc.get("violations", [])[:20]:
            console.print(f"VIOLATION: {line}")
    if Path(probe).is_file():
        bundled, probed = load_spec(spec_name), load_spec(probe)
        rows = []
        for level_b, level_p in zip(bundled.memory, probed.memory, strict=False):
            if level_b.bandwidth and level_p.bandwidth:
                rows.append([f"{level_p.name} bandwidth", f"{level_p.bandwidth.value / 1e9:.0f}",
                             f"{level_b.bandwidth.value / 1e9:.0f}", "GB/s",
                             "ok" if level_p.bandwidth.value <= level_b.bandwidth.value
                             else "ABOVE THE SPEC"])
        for method, q in probed.launch_floors.items():
            theirs = bundled.launch_floors.get(method)
            rows.append([f"{method} launch floor", f"{q.value * 1e6:.2f}",
                         f"{theirs.value * 1e6:.2f}" if theirs else "-", "us",
                         "" if theirs is None else
                         "ok" if q.value >= theirs.value else "BELOW THE SPEC"])
        console.print(fitted_table(("figure", "probed", spec_name, "unit", "status"), rows,
                                   left=("figure", "unit", "status"),
                                   title=f"probe {probe} beside {spec_name}"))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "runs":
        out, spec, rest = Path(argv[1]), argv[2], argv[3:]
        probe = rest[0] if rest and rest[0].endswith(".yaml") else None
        return runs(out, spec, probe, rest[1:] if probe else rest,
                    cases(os.environ.get("GPU_CHECK_CASES", "spmv:1:fp64")),
                    tuple(os.environ.get("GPU_CHECK_FORMATS", " ".join(FORMATS)).split()))
    if len(argv) >= 3 and argv[0] == "summary":
        return summary(argv[1], argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
