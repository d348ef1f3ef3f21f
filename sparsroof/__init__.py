"""sparsroof: speed-of-light and roofline analysis of sparse matrix kernels.

The Python API a notebook uses is the one the command line uses:

>>> import numpy as np, sparsroof
>>> a = sparsroof.analyze(np.eye(100), hw="a100", kernel="spmm", d="1,16")
>>> doc = a.to_dict()
>>> doc["matrices"][0]["results"][0]["bound"]["sol_s"] > 0
True
>>> sparsroof.classify(np.eye(100)).label
'banded'

Quantities are SI floats: seconds, bytes, FLOP/s and bytes/s.
"""

from ._version import __version__
from .analysis import Analysis, Config, MatrixInfo, Result, analyze, classify
from .errors import MatrixFileError, OptionError, SparsroofError, SpecError
from .hardware.library import bundled_names, load_spec
from .hardware.spec import HwSpec
from .matrix.mtx import Header, Matrix, MatrixLike, load, peek
from .model.bound import Bound, bound
from .model.traffic import Traffic, traffic
from .structure.classify import Verdict
from .structure.features import Structure, measure

__all__ = [
    "__version__",
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
