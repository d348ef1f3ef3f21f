"""The C build of the structure passes; everything else is in pyproject.toml.

The extension is optional: where it cannot be built (no C compiler), the package
installs without it and the same passes run through numba.
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("sparsroof.structure._native", ["sparsroof/structure/_native.c"], optional=True),
])
