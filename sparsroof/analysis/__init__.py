"""The pipeline: Matrix -> Structure (+ class) -> Traffic per (width, format, model) -> Bound.

Which B model applies depends on the structure class (the sparsity-aware SpMM paper's
models); the optimistic (compulsory) and pessimistic (random) bounds bracket it, and the
cache-aware model measured from the matrix is shown beside it.
"""

from .config import Config, OptionValue
from .pipeline import (
    CLASS_MODEL,
    analyze,
    analyze_measured,
    analyze_structure,
    classify,
    measure_for,
    needs_pattern,
    with_reorderings,
)
from .results import (
    COMPLEX_CONVENTION,
    FLOPS_CONVENTION,
    Analysis,
    Gain,
    MatrixInfo,
    Reordering,
    Result,
    Skipped,
    document,
    records,
)

__all__ = [
    "CLASS_MODEL",
    "COMPLEX_CONVENTION",
    "FLOPS_CONVENTION",
    "Analysis",
    "Config",
    "Gain",
    "MatrixInfo",
    "OptionValue",
    "Reordering",
    "Result",
    "Skipped",
    "analyze",
    "analyze_measured",
    "analyze_structure",
    "classify",
    "document",
    "measure_for",
    "needs_pattern",
    "records",
    "with_reorderings",
]
