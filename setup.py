"""The C builds of the structure passes and of the format advisor's dynamic program;
everything else is in pyproject.toml.

The extensions are optional: where they cannot be built (no C compiler), the package
installs without them and the same code runs through numba.
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("sparsroof.structure._native", ["sparsroof/structure/_native.c"], optional=True),
    Extension("sparsroof.advisor._native", ["sparsroof/advisor/_native.c"], optional=True),
])
