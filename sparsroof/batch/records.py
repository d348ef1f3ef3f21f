"""What one matrix's analysis produced, in the plain types the result store keeps."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FileKey", "SpecResult", "MatrixResult", "json_safe"]


@dataclass(frozen=True)
class FileKey:
    """Identity of one matrix file with the parameters it is analysed under."""

    path: str
    member: str
    size: int
    mtime_ns: int
    params: str

    def as_tuple(self) -> tuple[str, str, int, int, str]:
        return (self.path, self.member, self.size, self.mtime_ns, self.params)


@dataclass(frozen=True)
class SpecResult:
    """The rows one spec produced for one matrix."""

    spec: str
    spec_hash: str
    device: str
    records: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class MatrixResult:
    """Everything the analysis of one matrix produced, ready to store."""

    key: FileKey
    config: dict[str, Any]
    info: dict[str, Any]
    structure: dict[str, Any]
    class_label: str | None
    verdict: dict[str, Any] | None
    specs: tuple[SpecResult, ...]
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def json_safe(value: Any) -> Any:
    """Plain JSON types for numpy scalars and arrays, tuples, sets and non-finite floats.

    >>> import numpy as np
    >>> json_safe({"a": np.int64(3), "b": (np.float32(0.5), float("nan")), "c": {1}})
    {'a': 3, 'b': [0.5, None], 'c': [1]}
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return json_safe(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
