"""Public GPU SpMV timings judged against their bound: no run may beat it.

The runs are Ginkgo's published benchmark results on a V100 and an A100 for the corpus
matrices from SuiteSparse (tests/data/README.md says what the times are). Each is judged by
``sparsroof compare``'s own reader and judge, on the bundled spec of its device.
"""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from pathlib import Path

from sparsroof.compare import judge, read_runs
from sparsroof.compare.runs import GINKGO_FORMATS
from sparsroof.matrix.mtx import load

from ..conftest import CORPUS

RUNS = Path(__file__).parents[1] / "data" / "ginkgo_spmv.csv"
SPECS = {"V100": "v100-sxm2", "A100": "a100-40gb"}



def _compare_csv(tmp_path: Path) -> tuple[Path, int]:
    """The runs whose timed matrix is the corpus file, as a ``compare`` CSV; and how many
    were left out because Ginkgo timed a matrix without the file's explicit zeros."""
    rows = list(csv.DictReader(RUNS.read_text(encoding="utf-8").splitlines()))
    entries = {name: load(CORPUS / name).stored_entries
               for name in {r["corpus_file"] for r in rows}}
    kept = [r for r in rows if int(r["nonzeros"]) == entries[r["corpus_file"]]]
    out = tmp_path / "ginkgo.csv"
    with out.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["matrix", "time_s", "format", "hw"])
        for r in kept:
            w.writerow([(CORPUS / r["corpus_file"]).as_posix(), float(r["time_ns"]) * 1e-9,
                        r["format"], SPECS[r["device"]]])
    return out, len(rows) - len(kept)


def _judged(tmp_path: Path, timing: str) -> list:  # type: ignore[type-arg]
    path, dropped = _compare_csv(tmp_path)
    # the Ginkgo names map to storages through the reader's own table
    rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    for r in rows:
        r["format"] = GINKGO_FORMATS[r["format"]]
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, ["matrix", "time_s", "format", "hw"])
        w.writeheader()
        w.writerows(rows)
    runs, errors = read_runs(str(path))
    assert errors == []
    judged, errors = judge(runs, "a100", timing=timing)
    assert errors == []
    assert len(judged) == len(rows) >= 600 and dropped > 0
    return judged


def _ratios(judged: list) -> dict[tuple[str, str], list[float]]:  # type: ignore[type-arg]
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    for j in judged:
        ratios[(j.spec, j.band)].append(j.run.time_s / j.bound.sol_s)
    print()
    for (spec, band), r in sorted(ratios.items()):
        print(f"{spec:10} {band:7} runs {len(r):3}  measured/bound median "
              f"{statistics.median(r):6.1f}  min {min(r):5.2f}  max {max(r):7.1f}")
    return ratios


def test_no_public_gpu_run_beats_its_bound(tmp_path: Path) -> None:
    """The default bound (the smallest launch floor, for runs timed any way) holds for every
    run of every format, SELL-P and ELL on matrices with a dense row included."""
    judged = _judged(tmp_path, "graph")
    assert [j.explanation() for j in judged if j.violation] == []
    assert {j.run.storage for j in judged} == {"csr", "coo", "ell", "hyb", "sell"}
    ratios = _ratios(judged)
    assert all(min(r) > 1.0 for r in ratios.values())


def test_judged_by_their_own_timing_method_no_run_beats_the_stream_floor(
        tmp_path: Path) -> None:
    """The benchmark times each SpMV alone between two device synchronisations: judged with
    --timing sync, each run is held to the floor the spec can promise for it. Ginkgo's
    times are means of ten calls, so neither spec takes them for a sync floor (that would
    judge the runs by themselves): a smaller floor binds (the A100's stream floor, the
    V100's only one), each row says so, none is beaten, and the launch-bound runs sit at
    least twice above it (a host round trip)."""
    judged = _judged(tmp_path, "sync")
    assert [j.explanation() for j in judged if j.violation] == []
    assert {j.bound.timing for j in judged} == {"sync"}
    assert all("gives no sync launch floor: its " in j.bound.note  # the V100's: smallest
               for j in judged if j.bound.bound == "launch")
    ratios = _ratios(judged)
    for spec in SPECS.values():
        assert min(ratios[(spec, "launch")]) > 2, spec
