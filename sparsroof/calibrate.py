"""Host calibration: measured kernel times fitted per storage format.

The two phases of *A Performance Modeling and Optimization Analysis Tool for SpMV on GPUs*:

* **instrumenting**: benchmark matrices sweep the rows R and the entries per row P (the
  paper's benchmark criteria), in three column patterns (near the diagonal, uniformly
  random, dense 4 x 4 blocks) and as exact diagonals for DIA; each format's kernel is
  timed (:mod:`sparsroof.benchmark`);
* **modelling**: per format, a linear relationship of the kernel time to the traffic
  model's counts is fitted, weighting every sample by 1/time so the fit minimises the
  relative error (non-negative least squares)::

      t = a + c·rows + e·slots + g·misses + b_L·bytes

  with ``misses`` the reads of x beyond the compulsory ones when rows are taken in panels
  whose distinct columns fill the second-largest cache (the cache-aware B model of
  :mod:`sparsroof.reuse`: scattered columns miss, near-diagonal ones do not),
  ``slots`` the entries the kernel executes (padding included), ``bytes`` the SpMV
  traffic (A in its format, x once, y once) and b_L the seconds per byte of the memory
  level L whose capacity holds the working set (the levels come from the spec, their
  bandwidths from :mod:`sparsroof.roofs`). The paper fits time against strips and
  entries per row on a GPU; on a CPU the same quantities enter through rows and slots.

The result is saved as JSON with ``schema_version`` and read back by :func:`load`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .benchmark import KERNEL_FORMATS, bench, kernel_traffic
from .errors import SparsroofError
from .hwspec import HwSpec
from .io import Header, Matrix
from .structure import Structure, measure

__all__ = ["CalibrationError", "FormatFit", "Calibration", "Sample", "sweep_matrices",
           "features", "fit", "calibrate", "save", "load", "SCHEMA_VERSION"]

SCHEMA_VERSION = 2
ROWS = (1_000, 8_000, 64_000, 512_000)
PER_ROW = (2, 8, 32)
PATTERNS = ("band", "random", "blocks", "diagonals")
MAX_ENTRIES = 4_200_000
BASE_FEATURES = ("constant", "rows", "slots")


class CalibrationError(SparsroofError):
    """A calibration file that cannot be used."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class Sample:
    """One timed kernel: the counts the fit uses and the median time."""

    matrix: str
    storage: str
    rows: int
    slots: float
    bytes: float
    level: str
    seconds: float
    misses: dict[str, float] = field(default_factory=dict)  # x reloads per cache level


@dataclass(frozen=True)
class FormatFit:
    """Fitted coefficients of one format (seconds per unit of each feature)."""

    coefficients: dict[str, float]
    samples: int
    median_error: float  # median |predicted - measured| / measured over the samples
    max_error: float

    def predict(self, rows: float, slots: float, bytes_: float, level: str,
                misses: dict[str, float] | None = None) -> float:
        c = self.coefficients
        return (c["constant"] + c["rows"] * rows + c["slots"] * slots
                + sum(c.get(f"misses@{name}", 0.0) * n for name, n in (misses or {}).items())
                + c.get(f"bytes@{level}", 0.0) * bytes_)


@dataclass(frozen=True)
class Calibration:
    """A host's fitted kernel-time model and its measured memory roofs."""

    spec: str
    device: str
    dtype: str
    levels: tuple[tuple[str, float | None], ...]  # (name, capacity in bytes), fastest first
    roofs: dict[str, float]  # measured bandwidth per level, bytes/s
    fits: dict[str, FormatFit]

    def level_of(self, footprint: float) -> str:
        """The fastest level whose capacity holds ``footprint`` bytes (else main memory)."""
        for name, capacity in self.levels[:-1]:
            if capacity is not None and footprint <= capacity:
                return name
        return self.levels[-1][0]

    def misses(self, s: Structure) -> dict[str, float]:
        """x reloads beyond the compulsory ones, for each cache level's capacity (the
        cache-aware model): a gather that misses L1 but hits L2 costs less than one that
        goes to DRAM, so each level gets its own fitted cost."""
        return {name: x_misses(s, capacity) for name, capacity in self.levels[:-1]
                if capacity is not None}

    def predict(self, storage: str, rows: float, slots: float, bytes_: float,
                footprint: float | None = None,
                misses: dict[str, float] | None = None) -> float | None:
        """Predicted kernel seconds, or None when ``storage`` was not calibrated."""
        f = self.fits.get(storage)
        if f is None:
            return None
        level = self.level_of(bytes_ if footprint is None else footprint)
        return f.predict(rows, slots, bytes_, level, misses)

    def predict_structure(self, s: Structure, storage: str) -> float | None:
        """Predicted SpMV seconds of a matrix of structure ``s`` in ``storage``."""
        if storage not in self.fits:
            return None
        t = kernel_traffic(s, storage, "spmv", 1, self.dtype)
        return self.predict(storage, s.rows, t.flops_executed / 2, t.bytes_total,
                            misses=self.misses(s))


def x_misses(s: Structure, cache_bytes: float | None, s_v: int = 8) -> float:
    """Σ over row panels of distinct columns − non-empty columns, panels as tall as fit
    ``cache_bytes`` of x (0 without a cache or panel data).

    A panel of h rows keeps its distinct columns' x entries in the cache; each panel
    reloads them, so the reloads beyond the first read of every column are misses.
    """
    from .reuse import cache_aware_height

    if cache_bytes is None or not s.panel_columns:
        return 0.0
    h = cache_aware_height(s.panel_columns, 1, s_v, cache_bytes)
    return float(max(0, s.panel_columns[h][0] - s.nonempty_cols))


def _matrix(name: str, rows: int, cols: int, row: np.ndarray, col: np.ndarray) -> Matrix:
    header = Header(name, "coordinate", "real", "general", rows, cols, int(row.size))
    values = np.random.default_rng(rows).random(row.size)
    return Matrix(name, name, rows, cols, row.astype(np.int64), col.astype(np.int64),
                  values, header)


def _pattern(pattern: str, rows: int, per_row: int, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates with about ``per_row`` entries in every row (duplicates removed)."""
    if pattern == "diagonals":
        offsets = np.arange(per_row) - per_row // 2
        offsets = offsets * max(1, rows // (4 * per_row))
        row = np.repeat(np.arange(rows), per_row)
        col = row + np.tile(offsets, rows)
    elif pattern == "blocks":
        b = 4
        nb = max(1, per_row // b)
        brow = np.repeat(np.arange(rows // b), nb)
        bcol = rng.integers(0, rows // b, brow.size)
        r, c = np.meshgrid(np.arange(b), np.arange(b), indexing="ij")
        row = (brow[:, None] * b + r.ravel()).ravel()
        col = (bcol[:, None] * b + c.ravel()).ravel()
    else:
        row = np.repeat(np.arange(rows), per_row)
        width = 8 * per_row if pattern == "band" else rows
        col = row + rng.integers(-width // 2, width // 2 + 1, row.size) \
            if pattern == "band" else rng.integers(0, rows, row.size)
    keep = (col >= 0) & (col < rows)
    key = np.unique(row[keep] * rows + col[keep])
    return key // rows, key % rows


def sweep_matrices(rows: Iterable[int] = ROWS, per_row: Iterable[int] = PER_ROW,
                   patterns: Iterable[str] = PATTERNS, max_entries: int = MAX_ENTRIES
                   ) -> list[tuple[str, int, int]]:
    """(pattern, rows, entries per row) of the benchmark matrices, largest skipped."""
    return [(p, r, k) for p in patterns for r in rows for k in per_row
            if r * k <= max_entries and k < r]


def features(rows: float, slots: float, bytes_: float, level: str, levels: Iterable[str],
             misses: dict[str, float] | None = None) -> dict[str, float]:
    """Feature vector of one sample for :func:`fit`: bytes at the level that holds the
    working set, and the x reloads beyond each cache level.

    >>> features(10, 30, 400.0, "L2", ["L2", "DRAM"], misses={"L2": 5})
    {'constant': 1.0, 'rows': 10, 'slots': 30, 'bytes@L2': 400.0, 'bytes@DRAM': 0.0, 'misses@L2': 5}
    """
    names = list(levels)
    out: dict[str, float] = {"constant": 1.0, "rows": rows, "slots": slots}
    for name in names:
        out[f"bytes@{name}"] = bytes_ if name == level else 0.0
    for name in names[:-1]:
        out[f"misses@{name}"] = (misses or {}).get(name, 0.0)
    return out


def fit(samples: list[Sample], levels: Iterable[str]) -> dict[str, FormatFit]:
    """Per-format non-negative least squares of time on the features, relative weights."""
    from scipy.optimize import nnls

    names = list(levels)
    fits = {}
    for storage in sorted({s.storage for s in samples}):
        mine = [s for s in samples if s.storage == storage]
        rows = [features(s.rows, s.slots, s.bytes, s.level, names, s.misses) for s in mine]
        keys = list(rows[0])
        x = np.array([[r[k] for k in keys] for r in rows], dtype=float)
        y = np.array([s.seconds for s in mine])
        scale = np.maximum(x.max(axis=0), 1e-300)  # columns of comparable size for nnls
        coef, _ = nnls((x / scale) / y[:, None], np.ones_like(y))
        coef = coef / scale
        err = np.abs(x @ coef - y) / y
        fits[storage] = FormatFit(dict(zip(keys, coef.tolist(), strict=True)), len(mine),
                                  float(np.median(err)), float(err.max()))
    return fits


def calibrate(spec: HwSpec, roofs: dict[str, float], *, dtype: str = "fp64",
              formats: Sequence[str] = KERNEL_FORMATS,
              matrices: list[tuple[str, int, int]] | None = None,
              progress: Callable[[int, int, str], None] = lambda *_: None,
              **timing: Any) -> tuple[Calibration, list[Sample]]:
    """Run the sweep on this host, fit every format, return the calibration and samples.
    ``spec`` should carry the measured roofs (:func:`sparsroof.roofs.with_roofs`) so that
    the runs are bounded by the right level; each sample's time is its fastest repetition,
    the one least disturbed by other work on the host."""
    levels = tuple((lvl.name, lvl.capacity.value if lvl.capacity else None)
                   for lvl in spec.memory)
    partial = Calibration(spec.name, spec.device, dtype, levels, roofs, {})
    plan = matrices if matrices is not None else sweep_matrices()
    rng = np.random.default_rng(7)
    samples: list[Sample] = []
    for i, (pattern, rows, per_row) in enumerate(plan):
        name = f"{pattern}_{rows}x{per_row}"
        progress(i, len(plan), name)
        m = _matrix(name, rows, rows, *_pattern(pattern, rows, per_row, rng))
        s = measure(m)
        misses = partial.misses(s)
        for r in bench(m, s, spec, formats=formats, dtype=dtype, **timing):
            if r.timing is None:
                continue
            t = kernel_traffic(s, r.storage, "spmv", 1, dtype)
            samples.append(Sample(name, r.storage, rows, t.flops_executed / 2, t.bytes_total,
                                  partial.level_of(t.bytes_total), r.timing.min_s, misses))
    progress(len(plan), len(plan), "fitting")
    fits = fit(samples, [n for n, _ in levels])
    return Calibration(spec.name, spec.device, dtype, levels, roofs, fits), samples


def save(c: Calibration, samples: list[Sample], path: str | Path) -> None:
    """Write ``c`` (and the samples it was fitted on) as JSON."""
    from dataclasses import asdict

    from ._version import __version__

    doc = {"schema_version": SCHEMA_VERSION, "tool": "sparsroof", "version": __version__,
           "kind": "calibration", "spec": c.spec, "device": c.device, "dtype": c.dtype,
           "kernel": "spmv",
           "levels": [{"name": n, "capacity_bytes": cap} for n, cap in c.levels],
           "roofs_bytes_per_s": c.roofs,
           "fits": {k: asdict(f) for k, f in c.fits.items()},
           "samples": [asdict(s) for s in samples]}
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def load(path: str | Path) -> Calibration:
    """Read a calibration file; a clear error when it is missing or malformed."""
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CalibrationError(path, "no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CalibrationError(path, f"cannot read calibration JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "calibration":
        raise CalibrationError(path, "not a sparsroof calibration file")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise CalibrationError(path, f"schema_version {doc.get('schema_version')!r} is not "
                               f"{SCHEMA_VERSION}; run sparsroof calibrate again")
    try:
        fits = {k: FormatFit({n: float(v) for n, v in f["coefficients"].items()},
                             int(f["samples"]), float(f["median_error"]),
                             float(f["max_error"])) for k, f in doc["fits"].items()}
        levels = tuple((str(lv["name"]), lv["capacity_bytes"]) for lv in doc["levels"])
        return Calibration(str(doc["spec"]), str(doc["device"]), str(doc["dtype"]), levels,
                           {str(k): float(v) for k, v in doc["roofs_bytes_per_s"].items()},
                           fits)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise CalibrationError(path, f"malformed calibration ({err!r})") from None
