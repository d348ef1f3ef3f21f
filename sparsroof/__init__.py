"""sparsroof: speed-of-light and roofline analysis of sparse matrix kernels.

>>> from sparsroof import load_spec, Config
>>> Config(kernel="spmm", widths=(1, 4)).widths
(1, 4)
"""

from ._version import __version__
from .analysis import Analysis, Config, Result, analyze
from .errors import MatrixFileError, OptionError, SparsroofError, SpecError
from .hwspec import HwSpec, load_spec
from .io import Header, Matrix, load, peek
from .roofline import Bound, bound
from .structure import Structure, measure
from .traffic import Traffic, traffic

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
