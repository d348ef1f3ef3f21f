"""sparsroof: speed-of-light and roofline analysis of sparse matrix kernels.

>>> from sparsroof import load_spec, Config
>>> Config(kernel="spmm", widths=(1, 4)).widths
(1, 4)
"""

from ._version import __version__
from .analysis import Analysis, Config, Result, analyze
from .errors import MatrixFileError, OptionError, SparsroofError, SpecError
from .hardware.library import load_spec
from .hardware.spec import HwSpec
from .matrix.mtx import Header, Matrix, load, peek
from .model.bound import Bound, bound
from .model.traffic import Traffic, traffic
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
    "OptionError",
    "Result",
    "SparsroofError",
    "SpecError",
    "Structure",
    "Traffic",
    "analyze",
    "bound",
    "load",
    "load_spec",
    "measure",
    "peek",
    "traffic",
]
