"""The pipeline: Matrix -> Structure -> Traffic (per width, format, model) -> Bound."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import OptionError
from .hwspec import HwSpec
from .io import Matrix
from .roofline import Bound, bound
from .structure import Structure, measure
from .traffic import INDEX_BYTES, KERNELS, MODELS, STORAGES, VALUE_BYTES, Traffic, traffic

__all__ = ["Config", "MatrixInfo", "Result", "Analysis", "analyze", "analyze_structure"]


@dataclass(frozen=True)
class Config:
    """What to model: kernel, widths, precision, index type, formats and reuse models."""

    kernel: str = "spmv"
    widths: tuple[int, ...] = (1,)
    dtype: str = "fp64"
    index: str = "int32"
    storages: tuple[str, ...] = ("csr",)
    models: tuple[str, ...] = ("compulsory", "random")
    unit: str = "simt"

    def __post_init__(self) -> None:
        checks = (
            (self.kernel in KERNELS, f"unknown kernel {self.kernel!r}"),
            (self.dtype in VALUE_BYTES, f"unknown dtype {self.dtype!r}"),
            (self.index in INDEX_BYTES, f"unknown index type {self.index!r}"),
            (bool(self.widths) and all(w >= 1 for w in self.widths),
             "widths must be whole numbers of at least 1"),
            (self.kernel != "spmv" or set(self.widths) == {1},
             "spmv multiplies by one vector (d = 1); use --kernel spmm for wider B"),
            (all(s in STORAGES for s in self.storages), f"unknown storage in {self.storages}"),
            (all(m in MODELS for m in self.models), f"unknown model in {self.models}"),
        )
        for ok, message in checks:
            if not ok:
                raise OptionError(message)


@dataclass(frozen=True)
class MatrixInfo:
    """Summary of a matrix for reports (no arrays)."""

    name: str
    path: str
    rows: int
    cols: int
    stored_entries: int
    numeric_nonzeros: int
    density: float
    field: str
    symmetry: str


@dataclass(frozen=True)
class Result:
    traffic: Traffic
    bound: Bound


@dataclass(frozen=True)
class Analysis:
    matrix: MatrixInfo
    spec: str
    device: str
    structure: Structure
    results: tuple[Result, ...]


def analyze_structure(info: MatrixInfo, s: Structure, spec: HwSpec, config: Config) -> Analysis:
    """Model every (width, storage, model) combination of ``config`` for structure ``s``."""
    results = []
    for width in config.widths:
        for storage in config.storages:
            for model in config.models:
                t = traffic(s, kernel=config.kernel, width=width, storage=storage, model=model,
                            dtype=config.dtype, index=config.index)
                b = bound(t, spec, unit=config.unit, precision=config.dtype)
                results.append(Result(t, b))
    return Analysis(info, spec.name, spec.device, s, tuple(results))


def analyze(matrix: Matrix, spec: HwSpec, config: Config | None = None) -> Analysis:
    """Measure ``matrix`` and model it on ``spec``."""
    config = config or Config()
    spec.peak(config.unit, config.dtype)  # fail early on a missing roof
    s = measure(matrix)
    info = MatrixInfo(
        name=matrix.name,
        path=matrix.path,
        rows=matrix.rows,
        cols=matrix.cols,
        stored_entries=s.stored_entries,
        numeric_nonzeros=s.numeric_nonzeros,
        density=s.density,
        field=matrix.header.field,
        symmetry=matrix.header.symmetry,
    )
    return analyze_structure(info, s, spec, config)


def parse_widths(values: Sequence[str]) -> tuple[int, ...]:
    """Parse ``["1,4", "16"]`` into ``(1, 4, 16)``.

    >>> parse_widths(["1,4", "16"])
    (1, 4, 16)
    """
    widths: list[int] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                widths.append(int(part))
            except ValueError:
                raise OptionError(f"width {part!r} is not a whole number") from None
    return tuple(dict.fromkeys(widths))
