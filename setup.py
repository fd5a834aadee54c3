"""Builds skewlab's compiled hot paths (Cython); everything else is in pyproject.toml.

The extensions are optional: without a C compiler or Python's headers the build skips them with
a warning and the install succeeds; skewlab then uses its pure-Python cores
(``skewlab.state.value_state.IMPLEMENTATION`` says which are in use).
"""

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# -g0: no debug information (Python's own flags ask for it): the same machine code, compiled
# faster (docs/report.md, the install)
_FLAGS = {"extra_compile_args": ["-g0"]}
EXTENSIONS = [
    Extension(
        "skewlab.state.value_state_compiled", ["skewlab/state/value_state_compiled.pyx"], **_FLAGS
    ),
    Extension(
        "skewlab.operators.count_loops_compiled",
        ["skewlab/operators/count_loops_compiled.pyx"],
        **_FLAGS,
    ),
]


class OptionalBuildExt(build_ext):
    """``build_ext`` that skips an extension it cannot compile instead of failing the install."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: fall back to Python
            self.warn(
                f"could not compile {ext.name} ({exc}); skewlab will use its pure-Python cores"
            )


setup(
    ext_modules=cythonize(EXTENSIONS, compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": OptionalBuildExt},
    # the two extensions compile side by side (the larger takes most of the build's time)
    options={"build_ext": {"parallel": 2}},
)
