"""Builds skewlab's compiled hot paths (Cython); everything else is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [
            Extension("skewlab.state.value_state", ["skewlab/state/value_state.pyx"]),
            Extension("skewlab.count_loops", ["skewlab/count_loops.pyx"]),
        ],
        compiler_directives={"language_level": "3"},
    )
)
