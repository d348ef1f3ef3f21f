"""The C builds of the structure passes and of the format advisor's passes; everything
else is in pyproject.toml.

The extensions are optional: where they cannot be built (no C compiler), the package
installs without them and the same passes run through numba (and numpy).
"""

import sys

from setuptools import Extension, setup

# the advisor's program must round as its numba twin does: no fused multiply-adds
_NO_CONTRACT = [] if sys.platform == "win32" else ["-ffp-contract=off"]

#: what the three C passes share (buffers, the module's creation), in one header
_SHARED = {"include_dirs": ["sparsroof/passes"], "depends": ["sparsroof/passes/native.h"]}

setup(ext_modules=[
    Extension("sparsroof.matrix._native", ["sparsroof/matrix/_native.c"], optional=True,
              **_SHARED),
    Extension("sparsroof.structure._native", ["sparsroof/structure/_native.c"], optional=True,
              **_SHARED),
    Extension("sparsroof.advisor._native", ["sparsroof/advisor/_native.c"], optional=True,
              extra_compile_args=_NO_CONTRACT, **_SHARED),
])
