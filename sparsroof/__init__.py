"""sparsroof: speed-of-light and roofline analysis of sparse matrix kernels.

The Python API a notebook uses is the one the command line uses:

>>> import numpy as np, sparsroof
>>> a = sparsroof.analyze(np.eye(100), hw="a100", kernel="spmm", d="1,16")
>>> doc = a.to_dict()
>>> doc["matrices"][0]["results"][0]["bound"]["sol_s"] > 0
True
>>> sparsroof.classify(np.eye(100)).label
'banded'

In a notebook an analysis shows as a table; ``a.to_frame()`` gives its rows as a pandas
DataFrame, ``sparsroof.draw(a)`` its roofline, and ``hw=["a100", "h100-sxm"]`` one analysis
per spec.

Quantities are SI floats: seconds, bytes, FLOP/s and bytes/s.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .analysis import Analysis, Config, MatrixInfo, Result, analyze, classify
    from .errors import (
        AccuracyError,
        BatchError,
        BudgetError,
        CalibrationError,
        ExportError,
        FigureError,
        GpuError,
        ManifestError,
        MatrixFileError,
        MeasuredRunsError,
        OptionError,
        SparsroofError,
        SpecError,
        StoreError,
        UnknownManifestError,
        UnknownSpecError,
    )
    from .hardware.library import bundled_names, load_spec
    from .hardware.spec import HwSpec
    from .matrix.mtx import Header, Matrix, MatrixLike, load, peek
    from .model.bound import Bound, bound
    from .model.traffic import Traffic, traffic
    from .plot import draw
    from .structure.classify import Verdict
    from .structure.features import Structure, measure

#: public name -> the module that defines it; imported on first use, so that the command
#: line (which imports this package first) pays only for what a command needs
_HOMES = {
    **dict.fromkeys(["Analysis", "Config", "MatrixInfo", "Result", "analyze", "classify"],
                    "analysis"),
    **dict.fromkeys(["AccuracyError", "BatchError", "BudgetError", "CalibrationError",
                     "ExportError", "FigureError", "GpuError", "ManifestError", "MatrixFileError",
                     "MeasuredRunsError", "OptionError", "SparsroofError", "SpecError",
                     "StoreError", "UnknownManifestError", "UnknownSpecError"], "errors"),
    "draw": "plot",
    **dict.fromkeys(["bundled_names", "load_spec"], "hardware.library"),
    "HwSpec": "hardware.spec",
    **dict.fromkeys(["Header", "Matrix", "MatrixLike", "load", "peek"], "matrix.mtx"),
    **dict.fromkeys(["Bound", "bound"], "model.bound"),
    **dict.fromkeys(["Traffic", "traffic"], "model.traffic"),
    "Verdict": "structure.classify",
    **dict.fromkeys(["Structure", "measure"], "structure.features"),
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "__version__",
    "AccuracyError",
    "BatchError",
    "BudgetError",
    "CalibrationError",
    "ExportError",
    "FigureError",
    "GpuError",
    "ManifestError",
    "MeasuredRunsError",
    "StoreError",
    "UnknownManifestError",
    "UnknownSpecError",
    "draw",
    "Analysis",
    "Bound",
    "Config",
    "Header",
    "HwSpec",
    "Matrix",
    "MatrixFileError",
    "MatrixInfo",
    "MatrixLike",
    "OptionError",
    "Result",
    "SparsroofError",
    "SpecError",
    "Structure",
    "Traffic",
    "Verdict",
    "analyze",
    "bound",
    "bundled_names",
    "classify",
    "load",
    "load_spec",
    "measure",
    "peek",
    "traffic",
]
